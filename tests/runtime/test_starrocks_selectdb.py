"""The StarRocks and SelectDBCloud sinks against the Stream Load stand-in (tests/streamload_server.py: StarRocks's transaction
interface in front of a private MariaDB; no StarRocks server installs here): rows loaded as SeaTunnel sends
them (a json array, csv rows with the columns header) at the plan's parallelism (one transaction per writer:
begin, load, prepare), SeaTunnel's change-log job with enable_upsert_delete (``__op``), the save modes, and the exactly-once protocol: a failed write (its transactions rolled
back), a driver killed after the claim (the restore commits the claimed transactions once) and an overtaken
older attempt. SelectDBCloud (the stand-in's internal stage and COPY INTO): rows staged and copied in the same
job, a driver killed after the claim and an overtaken attempt, a repeated COPY INTO filtered."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.selectdb import CONNECTOR as SELECTDB
from airflow_provider_seatunnel.connectors.starrocks import CONNECTOR as STARROCKS
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import Superseded

SINK = twophase.driver(STARROCKS)  # the engine's two phases over the sink's storage verbs
SELECT = twophase.driver(SELECTDB)
DB = "srk"


@pytest.fixture(scope="module")
def starrocks():
    from tests import mysql
    from tests.streamload_server import StreamLoadServer

    with mysql.running() as my:
        my.sql(f"CREATE DATABASE {DB}")
        for table in ("keyed", "plain", "eo", "fenced", "full", "proto", "sd_csv", "sd_json", "sd_eo"):
            key = ", PRIMARY KEY (id)" if table in ("keyed", "eo", "fenced", "sd_json", "sd_eo") else ""
            my.sql(f"CREATE TABLE {DB}.{table} (id BIGINT NOT NULL, name VARCHAR(64), ts DATETIME(6), "
                   f"price DECIMAL(10, 2), ok BOOLEAN{key})")
        my.sql(f"CREATE TABLE {DB}.e2e_table_sink (pk_id BIGINT PRIMARY KEY, name VARCHAR(16), score INT)")
        server = StreamLoadServer(my, my.user, my.password)
        try:
            yield server
        finally:
            server.stop()


def block(starrocks, options: str) -> str:
    my = starrocks.db
    return (f'nodeUrls = ["{starrocks.fenodes}"], base-url = "jdbc:mysql://127.0.0.1:{my.port}/{DB}", '
            f'username = "{my.user}", password = "{my.password}", database = "{DB}", labelPrefix = "st", {options}')


def selectdb_block(starrocks, options: str) -> str:
    my = starrocks.db
    return (f'load-url = "{starrocks.fenodes}", jdbc-url = "127.0.0.1:{my.port}", cluster-name = "c1", '
            f'username = "{my.user}", password = "{my.password}", sink.label-prefix = "sd", {options}')


def rows(starrocks, table: str, order: str = "id") -> list[list[str | None]]:
    return starrocks.db.sql(f"SELECT * FROM {table} ORDER BY {order}", database=DB)


FIELDS = "id = bigint, name = string, ts = timestamp, price = \"decimal(10, 2)\", ok = boolean"
ROWS = ", ".join(f"{{ kind = INSERT, fields = [{i}, \"n{i}\", \"2024-01-0{1 + i % 3}T10:00:0{i % 2}\", \"{i}.25\", "
                 f"{str(i % 2 == 0).lower()}] }}" for i in range(7))
CHANGES = ('{ kind = INSERT, fields = [1, "A", 100] }, { kind = INSERT, fields = [2, "B", 100] }, '
           '{ kind = INSERT, fields = [3, "C", 100] }, { kind = UPDATE_BEFORE, fields = [1, "A", 100] }, '
           '{ kind = UPDATE_AFTER, fields = [1, "A_1", 100] }, { kind = DELETE, fields = [2, "B", 100] }')


def test_rows_and_changes_load_at_the_plans_parallelism_once(run_job, starrocks):
    """One job, five sinks: StarRocks json into a keyed table (3 writers), csv into a plain one (at its upstream's
    1), SeaTunnel's change-log job (csv, enable_upsert_delete: UPDATE_BEFORE and DELETE rows delete), and
    SelectDBCloud csv (2 staged files) and json files copied at the commit."""
    starrocks.db.sql("INSERT INTO keyed (id, name) VALUES (100, 'old')", database=DB)
    job = f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{
          FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {FIELDS} }} }}, rows = [{ROWS}], parallelism = 1 }}
          FakeSource {{ plugin_output = "cdc", schema = {{ fields {{ pk_id = bigint, name = string, score = int }} }},
                        rows = [{CHANGES}], parallelism = 1 }}
        }}
        sink {{
          StarRocks {{ plugin_input = "fake", {block(starrocks, 'table = "keyed"')}, parallelism = 3,
                       batch_max_rows = 10, starrocks.config = {{ format = "JSON", strip_outer_array = true }} }}
          StarRocks {{ plugin_input = "fake", {block(starrocks, 'table = "plain"')},
                       starrocks.config = {{ format = "CSV", column_separator = "," }} }}
          StarRocks {{ plugin_input = "cdc", {block(starrocks, 'table = "e2e_table_sink"')}, max_retries = 3,
                       starrocks.config = {{ format = "CSV" }}, enable_upsert_delete = true }}
          SelectDBCloud {{ plugin_input = "fake", {selectdb_block(starrocks, 'table.identifier = "srk.sd_csv"')},
                           parallelism = 2, selectdb.config = {{ file.type = "csv", file.column_separator = "," }} }}
          SelectDBCloud {{ plugin_input = "fake", {selectdb_block(starrocks, 'table.identifier = "srk.sd_json"')},
                           selectdb.config = {{ file.type = "json" }} }}
        }}
    """
    before = dict(starrocks.requests)
    assert run_job(job, run_id="A")[0]["status"] == "FINISHED"
    loads = starrocks.requests["txn_load"] - before.get("txn_load", 0)
    # one transaction per writer: 3 for the keyed sink, 1 each for the others (their upstream's parallelism)
    assert starrocks.transactions("keyed") == 3 and starrocks.transactions("plain") == 1
    assert loads == 5 and starrocks.requests["redirect"] - before.get("redirect", 0) >= loads
    keyed = rows(starrocks, "keyed")
    assert [r[0] for r in keyed] == [str(i) for i in range(7)] + ["100"]
    assert keyed[1] == ["1", "n1", "2024-01-02 10:00:01.000000", "1.25", "0"] and keyed[0][4] == "1"
    assert len(rows(starrocks, "plain")) == 7
    assert rows(starrocks, "e2e_table_sink", "pk_id") == [["1", "A_1", "100"], ["3", "C", "100"]]
    assert starrocks.requests["stage_put"] - before.get("stage_put", 0) == 3  # 2 + 1 staged files, one COPY each
    assert rows(starrocks, "sd_csv") == rows(starrocks, "plain") and rows(starrocks, "sd_json") == keyed[:7]
    assert starrocks.prepared() == []
    # a rerun of a committed run id writing nothing is the shared family's path, run by test_doris.py


def sink_ctx(plan_of, spark, starrocks, options: str, run_id: str, attempt: int = 1, fault: str | None = None,
             plugin: str = "StarRocks"):
    sink = block(starrocks, options) if plugin == "StarRocks" else selectdb_block(starrocks, options)
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ id = bigint, name = string }} }} }} }}
        sink {{ {plugin} {{ plugin_input = "fake", {sink}, parallelism = 3 }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, start: int = 0):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i, f"n{i}") for i in range(start, start + n)], "id bigint, name string")
    return {"default": with_kind(df.repartition(3))}


def test_a_failed_attempt_leaves_nothing_and_the_restore_commits_the_claim_once(plan_of, spark, starrocks):
    """A failed write rolls back what it prepared; a driver killed after the claim (``sink.move``) leaves the
    target as it was, and the restore's token commits the claimed transactions; a later attempt adds nothing."""
    starrocks.db.sql("INSERT INTO eo (id, name) VALUES (-1, 'earlier')", database=DB)
    options = 'table = "eo", data_save_mode = "DROP_DATA"'
    ctx, vertex = sink_ctx(plan_of, spark, starrocks, options, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert starrocks.prepared() == []
    ctx2, _ = sink_ctx(plan_of, spark, starrocks, options, "R1", attempt=2, fault="sink.move@2+1")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    assert info2.tables[0].rows == 12 and len(starrocks.prepared()) == 3
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info2)  # claimed, not committed: nothing visible yet
    assert rows(starrocks, "eo") == []  # DROP_DATA ran before the first load (as SeaTunnel)
    ctx3, _ = sink_ctx(plan_of, spark, starrocks, options, "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark))
    assert info3.tables[0].committed  # the token rolled the claimed commit forward
    SINK.commit(ctx3, vertex, info3)
    assert [int(r[0]) for r in rows(starrocks, "eo")] == list(range(12)) and starrocks.prepared() == []
    ctx4, _ = sink_ctx(plan_of, spark, starrocks, options, "R1", attempt=4)
    SINK.commit(ctx4, vertex, SINK.prepare(ctx4, vertex, frame(spark)))
    assert len(rows(starrocks, "eo")) == 12
    states = starrocks.db.sql("SELECT state FROM seatunnel_commit_log WHERE detail LIKE '%\"run_id\": \"R1\"%'",
                              database=DB)
    assert states == [["committed"]]


def test_an_older_attempt_overtaken_by_a_newer_one_is_superseded(plan_of, spark, starrocks):
    old_ctx, vertex = sink_ctx(plan_of, spark, starrocks, 'table = "fenced"', "R9")
    old = SINK.prepare(old_ctx, vertex, frame(spark, 5, start=100))
    new_ctx, _ = sink_ctx(plan_of, spark, starrocks, 'table = "fenced"', "R9", attempt=2)
    new = SINK.prepare(new_ctx, vertex, frame(spark, 4))  # a newer token: the older transactions rolled back
    with pytest.raises(Superseded):
        SINK.commit(old_ctx, vertex, old)
    SINK.commit(new_ctx, vertex, new)
    assert [r[0] for r in rows(starrocks, "fenced")] == ["0", "1", "2", "3"] and starrocks.prepared() == []


def test_save_modes(plan_of, spark, starrocks):
    """ERROR_WHEN_DATA_EXISTS and ERROR_WHEN_SCHEMA_NOT_EXIST fail before loading; a create template makes the
    table (the stand-in's MariaDB takes no StarRocks DDL: the default template's text is checked by
    tests/plan/test_starrocks_options.py); custom_sql runs first."""
    starrocks.db.sql("INSERT INTO full (id) VALUES (1)", database=DB)
    ctx, vertex = sink_ctx(plan_of, spark, starrocks, 'table = "full", data_save_mode = "ERROR_WHEN_DATA_EXISTS"',
                           "S1")
    with pytest.raises(Exception, match="holds rows"):
        SINK.prepare(ctx, vertex, frame(spark, 2))
    ctx, vertex = sink_ctx(plan_of, spark, starrocks, 'table = "absent", schema_save_mode = '
                           '"ERROR_WHEN_SCHEMA_NOT_EXIST"', "S2")
    with pytest.raises(Exception, match="does not exist"):
        SINK.prepare(ctx, vertex, frame(spark, 2))
    template = "CREATE TABLE `${database}`.`${table}` (id BIGINT, name VARCHAR(20)) ENGINE=InnoDB"
    ctx, vertex = sink_ctx(plan_of, spark, starrocks, f'table = "made", save_mode_create_template = "{template}", '
                           f'data_save_mode = "CUSTOM_PROCESSING", custom_sql = "INSERT INTO {DB}.full (id) VALUES (2)"',
                           "S3")
    SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, frame(spark, 3)))
    assert rows(starrocks, "made") == [["0", "n0"], ["1", "n1"], ["2", "n2"]]
    assert rows(starrocks, "full") == [["1", None, None, None, None], ["2", None, None, None, None]]


def test_the_transaction_interface_answers_classified(starrocks):
    """The client against the stand-in, without Spark: wrong credentials are AccessDenied (not retried), a body
    that does not parse a deterministic refusal, a retried task's label rolls its open transaction back
    before beginning again, a committed label never begins again, and decisions made before are told apart."""
    from airflow_provider_seatunnel.connectors.starrocks.txn import TxnClient
    from airflow_provider_seatunnel.connectors.streamload.http import StreamLoadRefused
    from airflow_provider_seatunnel.spi.errors import AccessDenied

    my = starrocks.db
    csv = {"format": "CSV", "column_separator": ","}
    with pytest.raises(AccessDenied, match="credentials"):
        TxnClient((starrocks.fenodes,), my.user, "wrong", 0).begin(DB, "proto", "x_1")
    client = TxnClient((starrocks.fenodes,), my.user, my.password, 0)
    client.begin(DB, "proto", "bad_1")
    with pytest.raises(StreamLoadRefused, match="filtered"):
        client.load(DB, "proto", "bad_1", csv, b"1,2\n")
    first = client.begin(DB, "proto", "lbl_1")
    client.load(DB, "proto", "lbl_1", csv, b"900,a,\\N,\\N,\\N\n")
    client.prepare(DB, "lbl_1")
    second = client.begin(DB, "proto", "lbl_1")  # a retried task: the prepared transaction is rolled back first
    assert second != first
    client.load(DB, "proto", "lbl_1", csv, b"901,b,\\N,\\N,\\N\n")
    client.prepare(DB, "lbl_1")
    assert client.decide(DB, "lbl_1", "commit") == "done" and client.decide(DB, "lbl_1", "commit") == "already"
    assert client.decide(DB, "nope_1", "commit") == "aborted" and client.decide(DB, "nope_1", "abort") == "already"
    with pytest.raises(StreamLoadRefused, match="LABEL_ALREADY_EXISTS"):
        client.begin(DB, "proto", "lbl_1")
    assert starrocks.db.sql("SELECT id FROM proto", database=DB) == [["901"]]


def test_selectdb_restores_copy_the_claimed_files_once_and_overtaken_attempts_never(plan_of, spark, starrocks):
    """SelectDBCloud: a driver killed after the claim leaves nothing visible; the restore's token copies the
    claimed files (each once: a COPY INTO repeated is filtered); an overtaken attempt's files are never copied."""
    from airflow_provider_seatunnel.connectors.selectdb.copy import CopyClient, ref_of

    options = 'table.identifier = "srk.sd_eo", selectdb.config = { file.type = "json" }'
    old_ctx, vertex = sink_ctx(plan_of, spark, starrocks, options, "D1", plugin="SelectDBCloud")
    old = SELECT.prepare(old_ctx, vertex, frame(spark, 5, start=100))
    ctx2, _ = sink_ctx(plan_of, spark, starrocks, options, "D1", attempt=2, fault="sink.move@2+1",
                       plugin="SelectDBCloud")
    info2 = SELECT.prepare(ctx2, vertex, frame(spark))
    with pytest.raises(Superseded):
        SELECT.commit(old_ctx, vertex, old)
    with pytest.raises(faults.InjectedFault):
        SELECT.commit(ctx2, vertex, info2)  # claimed, not copied
    assert rows(starrocks, "sd_eo") == []
    ctx3, _ = sink_ctx(plan_of, spark, starrocks, options, "D1", attempt=3, plugin="SelectDBCloud")
    info3 = SELECT.prepare(ctx3, vertex, frame(spark))
    assert info3.tables[0].committed
    SELECT.commit(ctx3, vertex, info3)
    assert [int(r[0]) for r in rows(starrocks, "sd_eo")] == list(range(12))
    my = starrocks.db
    client = CopyClient((starrocks.fenodes,), my.user, my.password, 0)
    claimed = starrocks.db.sql("SELECT detail FROM seatunnel_commit_log WHERE detail LIKE '%\"run_id\": \"D1\"%'",
                               database=DB)
    import json

    files = json.loads(claimed[0][0])["txns"]
    assert len(files) == 3 and all(client.decide(DB, f, "commit") == "already" for f in files)
    assert client.decide(DB, ref_of("sd_eo", "gone.json", "c1", {"file.type": "json"}), "commit") == "aborted"
    assert len(rows(starrocks, "sd_eo")) == 12
