"""The Doris sink against the Stream Load stand-in (tests/streamload_server.py: Doris's load protocol in front
of a private MariaDB; no Doris server installs here): rows loaded as SeaTunnel sends them (json by line,
csv) through the frontend's redirect at the plan's parallelism (one prepared transaction per writer), a rerun
of a run id writing nothing, the save modes, and the exactly-once protocol: a failed write (its
transactions aborted), a driver killed after the claim (the restore commits the claimed transactions once)
and an overtaken older attempt."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.doris import CONNECTOR as DORIS
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import Superseded

SINK = twophase.driver(DORIS)  # the engine's two phases over the sink's storage verbs
DB = "sr"


@pytest.fixture(scope="module")
def doris():
    from tests import mysql
    from tests.streamload_server import StreamLoadServer

    with mysql.running() as my:
        my.sql(f"CREATE DATABASE {DB}")
        for table in ("keyed", "plain", "eo", "fenced", "full", "cdc", "proto"):
            key = ", PRIMARY KEY (id)" if table in ("keyed", "eo", "fenced", "cdc") else ""
            my.sql(f"CREATE TABLE {DB}.{table} (id BIGINT NOT NULL, name VARCHAR(64), ts DATETIME(6), "
                   f"price DECIMAL(10, 2), ok BOOLEAN{key})")
        server = StreamLoadServer(my, my.user, my.password)
        try:
            yield server
        finally:
            server.stop()


def block(doris, options: str) -> str:
    my = doris.db
    return (f'fenodes = "{doris.fenodes}", query-port = {my.port}, username = "{my.user}", '
            f'password = "{my.password}", sink.label-prefix = "st", {options}')


def rows(doris, table: str) -> list[list[str | None]]:
    return doris.db.sql(f"SELECT * FROM {table} ORDER BY id", database=DB)


FIELDS = "id = bigint, name = string, ts = timestamp, price = \"decimal(10, 2)\", ok = boolean"
ROWS = ", ".join(f"{{ kind = INSERT, fields = [{i}, \"n{i}\", \"2024-01-0{1 + i % 3}T10:00:0{i % 2}\", \"{i}.25\", "
                 f"{str(i % 2 == 0).lower()}] }}" for i in range(7))


def test_rows_load_through_the_redirect_at_the_plans_parallelism_once(run_job, doris):
    """Two sinks: json by line into a keyed table (3 writers), csv into a plain one (at its upstream's 1); a rerun of the
    same run id loads nothing."""
    doris.db.sql("INSERT INTO keyed (id, name) VALUES (100, 'old')", database=DB)
    job = f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {FIELDS} }} }}, rows = [{ROWS}],
                                parallelism = 1 }} }}
        sink {{
          Doris {{ plugin_input = "fake", {block(doris, 'table.identifier = "sr.keyed"')}, parallelism = 3,
                   doris.config = {{ format = "json", read_json_by_line = "true" }} }}
          Doris {{ plugin_input = "fake", {block(doris, 'database = "sr", table = "plain"')},
                   doris.config = {{ format = "csv", column_separator = "," }} }}
        }}
    """
    before = dict(doris.requests)
    assert run_job(job, run_id="A")[0]["status"] == "FINISHED"
    loads = doris.requests["load"] - before.get("load", 0)
    # one transaction per writer: 3 for the keyed sink, 1 for the plain one (the plan: its upstream's parallelism)
    assert doris.transactions("keyed") == 3 and doris.transactions("plain") == 1
    assert loads == 4 and doris.requests["redirect"] - before.get("redirect", 0) >= loads
    keyed = rows(doris, "keyed")
    assert [r[0] for r in keyed] == [str(i) for i in range(7)] + ["100"]
    assert keyed[1] == ["1", "n1", "2024-01-02 10:00:01.000000", "1.25", "0"]
    assert keyed[0][4] == "1" and len(rows(doris, "plain")) == 7
    assert run_job(job, run_id="A")[0]["status"] == "FINISHED"  # the same run id: committed already
    assert len(rows(doris, "plain")) == 7 and doris.requests["load"] - before.get("load", 0) == 4
    assert doris.prepared() == []


def sink_ctx(plan_of, spark, doris, options: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ id = bigint, name = string }} }} }} }}
        sink {{ Doris {{ plugin_input = "fake", {block(doris, options)}, parallelism = 3,
                         doris.config = {{ format = "json", read_json_by_line = "true" }} }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, start: int = 0):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i, f"n{i}") for i in range(start, start + n)], "id bigint, name string")
    return {"default": with_kind(df.repartition(3))}


def test_a_failed_attempt_leaves_nothing_and_the_restore_commits_the_claim_once(plan_of, spark, doris):
    """A failed write aborts what it prepared; a driver killed after the claim (``sink.move``) leaves the
    target as it was, and the restore's token commits the claimed transactions; a later attempt adds nothing."""
    doris.db.sql("INSERT INTO eo (id, name) VALUES (-1, 'earlier')", database=DB)
    options = 'table.identifier = "sr.eo", data_save_mode = "DROP_DATA"'
    ctx, vertex = sink_ctx(plan_of, spark, doris, options, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert doris.prepared() == []
    ctx2, _ = sink_ctx(plan_of, spark, doris, options, "R1", attempt=2, fault="sink.move@2+1")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    assert info2.tables[0].rows == 12 and len(doris.prepared()) == 3
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info2)  # claimed, not committed: nothing visible yet
    assert [r[0] for r in rows(doris, "eo")] == []  # DROP_DATA ran before the first load (as SeaTunnel)
    ctx3, _ = sink_ctx(plan_of, spark, doris, options, "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark))
    assert info3.tables[0].committed  # the token rolled the claimed commit forward
    SINK.commit(ctx3, vertex, info3)
    assert [int(r[0]) for r in rows(doris, "eo")] == list(range(12)) and doris.prepared() == []
    ctx4, _ = sink_ctx(plan_of, spark, doris, options, "R1", attempt=4)
    SINK.commit(ctx4, vertex, SINK.prepare(ctx4, vertex, frame(spark)))
    assert len(rows(doris, "eo")) == 12
    states = doris.db.sql("SELECT state FROM seatunnel_commit_log WHERE detail LIKE '%\"run_id\": \"R1\"%'",
                          database=DB)
    assert states == [["committed"]]


def test_an_older_attempt_overtaken_by_a_newer_one_is_superseded(plan_of, spark, doris):
    options = 'table.identifier = "sr.fenced"'
    old_ctx, vertex = sink_ctx(plan_of, spark, doris, options, "R9")
    old = SINK.prepare(old_ctx, vertex, frame(spark, 5, start=100))
    new_ctx, _ = sink_ctx(plan_of, spark, doris, options, "R9", attempt=2)
    new = SINK.prepare(new_ctx, vertex, frame(spark, 4))  # a newer token: the older transactions aborted
    with pytest.raises(Superseded):
        SINK.commit(old_ctx, vertex, old)
    SINK.commit(new_ctx, vertex, new)
    assert [r[0] for r in rows(doris, "fenced")] == ["0", "1", "2", "3"] and doris.prepared() == []


def test_save_modes(plan_of, spark, doris):
    """ERROR_WHEN_DATA_EXISTS and ERROR_WHEN_SCHEMA_NOT_EXIST fail before loading; a create template makes the
    table (the stand-in's MariaDB takes no Doris DDL: the default template's text is checked by
    tests/plan/test_doris_options.py); custom_sql runs first."""
    doris.db.sql("INSERT INTO full (id) VALUES (1)", database=DB)
    ctx, vertex = sink_ctx(plan_of, spark, doris, 'table.identifier = "sr.full", '
                           'data_save_mode = "ERROR_WHEN_DATA_EXISTS"', "S1")
    with pytest.raises(Exception, match="holds rows"):
        SINK.prepare(ctx, vertex, frame(spark, 2))
    ctx, vertex = sink_ctx(plan_of, spark, doris, 'table.identifier = "sr.absent", '
                           'schema_save_mode = "ERROR_WHEN_SCHEMA_NOT_EXIST"', "S2")
    with pytest.raises(Exception, match="does not exist"):
        SINK.prepare(ctx, vertex, frame(spark, 2))
    template = "CREATE TABLE `${database}`.`${table}` (id BIGINT, name VARCHAR(20)) ENGINE=InnoDB"
    ctx, vertex = sink_ctx(plan_of, spark, doris, f'table.identifier = "sr.made", save_mode_create_template = '
                           f'"{template}", data_save_mode = "CUSTOM_PROCESSING", custom_sql = '
                           '"INSERT INTO sr.full (id) VALUES (2)"', "S3")
    SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, frame(spark, 3)))
    assert rows(doris, "made") == [["0", "n0"], ["1", "n1"], ["2", "n2"]]
    assert rows(doris, "full") == [["1", None, None, None, None], ["2", None, None, None, None]]


def test_change_rows_apply_as_deletes_with_enable_delete(plan_of, spark, doris):
    """``sink.enable-delete``: DELETE and UPDATE_BEFORE rows carry ``__DORIS_DELETE_SIGN__`` = 1 (a Unique Key
    table deletes them); without it such a row fails the write and nothing is committed."""
    from pyspark.sql import functions as F

    from airflow_provider_seatunnel.spi.rows import ROW_KIND

    doris.db.sql("INSERT INTO cdc (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')", database=DB)
    changes = [(4, "d", 0), (2, "b", 3), (3, "c", 1), (3, "c2", 2)]  # INSERT, DELETE, UPDATE_BEFORE/AFTER
    df = spark.createDataFrame(changes, "id bigint, name string, k int").repartition(1).select(
        "id", "name", F.col("k").cast("tinyint").alias(ROW_KIND))
    ctx, vertex = sink_ctx(plan_of, spark, doris, 'table.identifier = "sr.cdc"', "C1")
    with pytest.raises(Exception, match=r"sink\.enable-delete"):
        SINK.prepare(ctx, vertex, {"default": df})
    assert doris.prepared() == []
    ctx, vertex = sink_ctx(plan_of, spark, doris, 'table.identifier = "sr.cdc", sink.enable-delete = true', "C2")
    SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, {"default": df}))
    assert [r[:2] for r in rows(doris, "cdc")] == [["1", "a"], ["3", "c2"], ["4", "d"]]


def test_a_keys_changes_apply_in_order_when_the_engine_spreads_them_over_more_writers(run_job, doris):
    """A change log from a source of parallelism 1 into sinks of 3 writers (the engine shuffles the rows, and
    the writers' transactions commit one after another): keys inserted, then deleted after other keys' rows,
    some inserted again, end as the log says, with the source's primary key (grouped by key) and without
    (one writer)."""
    log = [("INSERT", k, f"n{k}") for k in range(12)] + [("DELETE", k, f"n{k}") for k in range(0, 12, 2)]
    log += [("INSERT", k, f"m{k}") for k in range(0, 12, 4)]
    listed = ", ".join(f'{{ kind = {kind}, fields = [{k}, "{n}"] }}' for kind, k, n in log)
    sources, sinks = [], []
    for name, key in (("ordered_k", ", primaryKey { name = pk, columnNames = [id] }"), ("ordered_n", "")):
        doris.db.sql(f"CREATE TABLE {DB}.{name} (id BIGINT NOT NULL, name VARCHAR(64), PRIMARY KEY (id))")
        sources.append(f'FakeSource {{ plugin_output = "{name}", parallelism = 1, '
                       f'schema = {{ fields {{ id = bigint, name = string }}{key} }}, rows = [{listed}] }}')
        sinks.append(f'Doris {{ plugin_input = "{name}", {block(doris, f"table.identifier = {DB}.{name}")}, '
                     'sink.enable-delete = true, parallelism = 3, doris.config = { format = "json", '
                     'read_json_by_line = "true" } }')
    job = f"env {{ job.mode = BATCH }}\nsource {{ {' '.join(sources)} }}\nsink {{ {' '.join(sinks)} }}\n"
    assert all(m["status"] == "FINISHED" for m in run_job(job, run_id="O1"))
    want = sorted([[str(k), f"n{k}"] for k in range(1, 12, 2)] + [[str(k), f"m{k}"] for k in range(0, 12, 4)],
                  key=lambda r: int(r[0]))
    assert rows(doris, "ordered_k") == want and rows(doris, "ordered_n") == want
    assert doris.transactions("ordered_k") == 3 and doris.transactions("ordered_n") == 1  # keyless: one writer


def test_the_protocol_answers_classified(doris):
    """The client against the stand-in, without Spark: wrong credentials are AccessDenied (not retried), a body
    that does not parse a deterministic refusal, a reused label of a committed load refused, a prepared label's
    retry aborts the open transaction first, and a decision on a transaction decided before is told apart."""
    from airflow_provider_seatunnel.connectors.doris.streamload import Client, StreamLoadRefused
    from airflow_provider_seatunnel.spi.errors import AccessDenied

    my = doris.db
    with pytest.raises(AccessDenied, match="credentials"):
        Client((doris.fenodes,), my.user, "wrong", 0).load(DB, "proto", "x_1", {"format": "csv"}, b"1")
    client = Client((doris.fenodes,), my.user, my.password, 0)
    with pytest.raises(StreamLoadRefused, match="filtered"):
        client.load(DB, "proto", "bad_1", {"format": "csv", "column_separator": ","}, b"1,2")
    first = int(client.load(DB, "proto", "lbl_1", {"format": "csv", "column_separator": ","},
                            b"900,a,\\N,\\N,\\N")["TxnId"])
    second = int(client.load(DB, "proto", "lbl_1", {"format": "csv", "column_separator": ","},
                             b"901,b,\\N,\\N,\\N")["TxnId"])  # a retried task: the open transaction is aborted
    assert second != first and client.decide(DB, first, "commit") == "aborted"
    assert client.decide(DB, second, "commit") == "done" and client.decide(DB, second, "commit") == "already"
    with pytest.raises(StreamLoadRefused, match="Label Already Exists"):
        client.load(DB, "proto", "lbl_1", {"format": "csv", "column_separator": ","}, b"902,c,\\N,\\N,\\N")
    assert doris.db.sql("SELECT id FROM proto", database=DB) == [["901"]]
