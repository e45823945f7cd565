"""Iceberg on real Spark (the tests' shared session carries Iceberg's runtime and SQL extensions, as a pipeline's
session does), hadoop catalogs in the test's directory and a JDBC catalog on a private PostgreSQL: tables
written and read back, restores and injected faults that publish each run once (the table's rows and the
snapshots on main say so), two attempts of one run that both wrote their staging branches of which exactly
one publishes, upserts of a change log, DROP_DATA once per run across a split pipeline, time travel and
incremental reads, and streaming: an Iceberg table's new snapshots synced on each run, a replayed
micro-batch skipped.

Iceberg's Spark runtime exists for Spark 4.1, not 4.2: on a PySpark without one, every test here but the
last skips (``make test`` runs this module in the lowest-versions venv, PySpark 4.1) and the last one checks
that a pipeline refuses to run.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.iceberg import CONNECTOR as ICEBERG
from airflow_provider_seatunnel.connectors.iceberg.checks import ICEBERG_RELEASES, spark_minor
from airflow_provider_seatunnel.connectors.iceberg.options import Catalog, TableRef
from airflow_provider_seatunnel.connectors.iceberg.sink import ConcurrentCommit
from airflow_provider_seatunnel.connectors.iceberg.tables import identifier, register, table_state
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError, RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import with_kind

ICEBERG_2PC = twophase.driver(ICEBERG)  # the engine's two phases over the sink's storage verbs

RUNTIME = spark_minor() in ICEBERG_RELEASES
needs_runtime = pytest.mark.skipif(not RUNTIME, reason=f"no Iceberg runtime is built for PySpark {spark_minor()}: "
                                                        "these tests run in the lowest-versions venv (PySpark 4.1), "
                                                        "as `make test` runs them")
FIELDS = "schema = { fields { id = bigint, name = string, grp = string } }"
ROWS = [(1, "a", "x"), (2, "b", "y"), (3, "c", "x")]


def fake(rows: list[tuple], output: str = "f") -> str:
    """A FakeSource emitting ``rows`` (id, name, grp[, kind]) in order (one reader)."""
    items = ", ".join(f'{{ kind = {r[3] if len(r) > 3 else "INSERT"}, fields = [{r[0]}, {json.dumps(r[1])}, '
                      f'"{r[2]}"] }}' for r in rows)
    return f'FakeSource {{ plugin_output = "{output}", parallelism = 1, {FIELDS}, rows = [{items}] }}'


def job(source: str, sink: str, mode: str = "BATCH", env: str = "") -> str:
    return f"env {{ job.mode = {mode}, parallelism = 2 {env} }}\nsource {{ {source} }}\nsink {{ {sink} }}\n"


def config(warehouse: Path) -> str:
    return f'iceberg.catalog.config = {{ type = "hadoop", warehouse = "file://{warehouse}" }}'


def ice(warehouse: Path, table: str = "t", extra: str = "", inputs: str = '"f"', role: str = "plugin_input") -> str:
    return f'Iceberg {{ {role} = {inputs}, catalog_name = "lake", namespace = "db", table = "{table}", ' \
           f'{config(warehouse)} {extra} }}'


def run(spark, plan_of, text: str, run_id: str, attempt: int = 1, fault: str | None = None) -> list[dict]:
    plan = plan_of(text)
    options = faults.from_environment({faults.ENV: fault}) if fault else {}
    return [run_pipeline(RunContext(spark, plan, p, run_id, attempt, options)) for p in plan.pipelines]


def _catalog(spark, warehouse: Path) -> str:
    return register(spark, Catalog("lake", {"type": "hadoop", "warehouse": f"file://{warehouse}"}))


def rows(spark, warehouse: Path, table: str = "t") -> list[tuple]:
    name = identifier(_catalog(spark, warehouse), TableRef("db", table))
    return sorted(tuple(r) for r in spark.table(name).select("id", "name", "grp").collect())


def runs_of(spark, warehouse: Path, table: str = "t") -> list[str]:
    """The run id of each snapshot on main's history written by a sink, oldest first."""
    catalog, ref = _catalog(spark, warehouse), TableRef("db", table)
    head = table_state(spark, catalog, ref).head
    found = {r["snapshot_id"]: r for r in spark.sql(
        f"SELECT snapshot_id, parent_id, summary['seatunnel.run'] AS run FROM {identifier(catalog, ref, 'snapshots')}")
        .collect()}
    out = []
    while head is not None:
        if found[head]["run"]:
            out.append(json.loads(found[head]["run"])["seatunnel_run_id"])
        head = found[head]["parent_id"]
    return out[::-1]


def branches(spark, warehouse: Path, table: str = "t") -> list[str]:
    return list(table_state(spark, _catalog(spark, warehouse), TableRef("db", table)).branches)


@needs_runtime
def test_a_table_written_and_read_back_at_the_plans_parallelism(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    extra = ', iceberg.table.partition-keys = "grp", iceberg.table.auto-create-props = { "write.format.default" = "orc" }'
    [metrics] = run(spark, plan_of, job(fake(ROWS), ice(wh, extra=extra)), "w1")
    assert metrics["write_count"] == 3 and rows(spark, wh) == ROWS
    catalog = _catalog(spark, wh)
    partitions = spark.sql(f"SELECT partition.grp FROM {identifier(catalog, TableRef('db', 't'), 'partitions')}")
    assert sorted(r[0] for r in partitions.collect()) == ["x", "y"]
    properties = dict(spark.sql(f"SHOW TBLPROPERTIES {identifier(catalog, TableRef('db', 't'))}").collect())
    assert properties["write.format.default"] == "orc"
    assert runs_of(spark, wh) == ["w1"] and branches(spark, wh) == ["main"]  # the staging branch is gone

    source = ice(wh, extra=', read_columns = ["NAME", "id"], parallelism = 3', inputs='"d"', role="plugin_output")
    out = tmp_path / "out"
    plan = plan_of(job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = "json" }}'))
    p = plan.pipelines[0]
    [read] = ICEBERG.read(RunContext(spark, plan, p, "r1"), p.sources[0]).values()
    assert read.rdd.getNumPartitions() == 3 and read.columns[:2] == ["name", "id"]
    assert run_pipeline(RunContext(spark, plan, p, "r1"))["write_count"] == 3
    assert sorted((r["id"], r["name"]) for r in spark.read.json(str(out)).collect()) == [(1, "a"), (2, "b"), (3, "c")]


@needs_runtime
def test_each_run_appends_once_and_a_restore_writes_nothing_more(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    text = job(fake(ROWS), ice(wh))
    run(spark, plan_of, text, "a1")
    run(spark, plan_of, text, "a2")
    assert rows(spark, wh) == sorted(ROWS + ROWS)
    [restore] = run(spark, plan_of, text, "a2", attempt=2)  # an Airflow retry of a run that committed
    assert restore["write_count"] == 3  # the rows passed once, counted, and were not written again
    assert rows(spark, wh) == sorted(ROWS + ROWS) and runs_of(spark, wh) == ["a1", "a2"]


@needs_runtime
@pytest.mark.parametrize("point", ["sink.commit", "sink.move"])
def test_an_injected_fault_then_the_restore_commits_the_run_once(spark, plan_of, tmp_path, point):
    """``sink.move`` fails with the staging branch written, before the fast-forward (nothing published),
    ``sink.commit`` after it (published, the pipeline failed): the restore writes the run once either way
    and leaves no staging branch."""
    wh = tmp_path / "wh"
    text = job(fake(ROWS), ice(wh, extra=", data_save_mode = DROP_DATA"))
    run(spark, plan_of, text, "old")
    with pytest.raises(faults.InjectedFault):
        run(spark, plan_of, text, "f1", fault=point)
    assert runs_of(spark, wh) == (["old", "f1"] if point == "sink.commit" else ["old"])
    assert len(branches(spark, wh)) == 2  # main and the dead attempt's staging branch
    run(spark, plan_of, text, "f1", attempt=2)
    assert rows(spark, wh) == ROWS  # DROP_DATA replaced the old rows once, in the run's one commit
    assert runs_of(spark, wh) == ["old", "f1"] and branches(spark, wh) == ["main"]


class _Meeting(RunContext):
    """A context whose ``sink.move`` fault point waits until every attempt reached it: both attempts have
    checked main and written their staging branches before either publishes."""

    barrier: threading.Barrier | None = None

    def fault_point(self, point, vertex=None):
        if point == "sink.move" and self.barrier is not None:
            self.barrier.wait(timeout=120)
        super().fault_point(point, vertex)


@needs_runtime
def test_of_two_attempts_that_both_wrote_their_staging_branch_exactly_one_publishes(spark, plan_of, tmp_path):
    """Both attempts pass the sink's own check and write their snapshot before either publishes; the
    fast-forward of the second finds main moved and refuses: the run's rows are in the table once."""
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake(ROWS[:1]), ice(wh)), "seed")
    plan = plan_of(job(fake(ROWS), ice(wh)))
    p = plan.pipelines[0]
    barrier = threading.Barrier(2)
    contexts = [_Meeting(spark, plan, p, "o1", attempt=n) for n in (1, 2)]
    for ctx in contexts:
        ctx.barrier = barrier
    data = with_kind(spark.createDataFrame(ROWS, "id bigint, name string, grp string"))
    infos = [ICEBERG_2PC.prepare(ctx, p.sinks[0], {"f": data}) for ctx in contexts]
    outcome: list[str] = []

    def attempt(n: int) -> None:
        try:
            ICEBERG_2PC.commit(contexts[n], p.sinks[0], infos[n])
            outcome.append("published")
        except ConcurrentCommit:
            outcome.append("refused")

    threads = [threading.Thread(target=attempt, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcome) == ["published", "refused"]
    assert rows(spark, wh) == sorted(ROWS[:1] + ROWS) and runs_of(spark, wh) == ["seed", "o1"]
    assert branches(spark, wh) == ["main"]  # the refused attempt dropped its staging branch
    [restore] = run(spark, plan_of, job(fake(ROWS), ice(wh)), "o1", attempt=3)  # the retry of the refused one
    assert restore["write_count"] == 3 and runs_of(spark, wh) == ["seed", "o1"]


@needs_runtime
def test_a_commit_branch_receives_the_commits_and_main_stays(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake(ROWS[:1]), ice(wh)), "m1")
    # a hyphen, as SeaTunnel's own e2e config names its branch ("commit-branch"): quoted wherever it goes
    text = job(fake(ROWS[1:]), ice(wh, extra=', iceberg.table.commit-branch = "audit-1"'))
    run(spark, plan_of, text, "b1")
    run(spark, plan_of, text, "b1", attempt=2)  # a restore finds the commit on the branch
    name = identifier(_catalog(spark, wh), TableRef("db", "t"))
    on_branch = sorted(tuple(r) for r in spark.table(f"{name}.`branch_audit-1`").select("id", "name", "grp").collect())
    assert rows(spark, wh) == ROWS[:1] and on_branch == ROWS and branches(spark, wh) == ["audit-1", "main"]


CHANGES_1 = [(1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", "y")]
# CHANGES_1 into a new table, with key 8 inserted, then deleted after other keys (the last change wins)
LOG_1 = [CHANGES_1[0], (8, "h", "x"), *CHANGES_1[1:], (8, "h", "x", "DELETE")]
CHANGES_2 = [(2, "b", "x", "UPDATE_BEFORE"), (2, "B", "x", "UPDATE_AFTER"), (3, "c", "y", "DELETE"),
             (5, "e", "z", "INSERT"), (6, "f", "z", "INSERT"), (6, "f", "z", "DELETE"), (7, "g", "z", "INSERT"),
             (7, "g", "z", "UPDATE_BEFORE"), (7, "G", "z", "UPDATE_AFTER"), (9, "gone", "z", "DELETE")]


@needs_runtime
def test_upserts_of_a_change_log_end_equal_to_the_expected_table(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    sink = ice(wh, extra=', iceberg.table.primary-keys = "id", iceberg.table.upsert-mode-enabled = true')
    run(spark, plan_of, job(fake(LOG_1), sink), "u1")
    [metrics] = run(spark, plan_of, job(fake(CHANGES_2), sink), "u2")
    expected = [(1, "a", "x"), (2, "B", "x"), (4, "d", "y"), (5, "e", "z"), (7, "G", "z")]
    assert rows(spark, wh) == expected and metrics["write_count"] == len(CHANGES_2)
    run(spark, plan_of, job(fake(CHANGES_2), sink), "u2", attempt=2)  # the MERGE of a committed run: skipped
    assert rows(spark, wh) == expected and runs_of(spark, wh) == ["u1", "u2"]
    # the session setting carrying the MERGE's identity is gone: a later plain write does not carry it
    assert spark.conf.get("spark.sql.iceberg.snapshot-property.seatunnel.commit", None) is None
    run(spark, plan_of, job(fake([(8, "h", "z")]), sink), "u3")
    assert (8, "h", "z") in rows(spark, wh) and runs_of(spark, wh) == ["u1", "u2", "u3"]


@needs_runtime
def test_drop_data_replaces_the_table_once_per_run_across_a_split_pipeline(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake([(-1, "old", "g")]), ice(wh)), "seed")
    a, b = [(10, "a", "x"), (11, "a", "x")], [(20, "b", "y")]
    text = job(fake(a, "a") + "\n" + fake(b, "b"), ice(wh, extra=", data_save_mode = DROP_DATA", inputs='["a", "b"]'))
    assert len(plan_of(text).pipelines) == 2  # one sink fed by two sources: one pipeline per path
    run(spark, plan_of, text, "d1")
    assert rows(spark, wh) == sorted(a + b)  # the old row dropped once, neither clone's rows by the other
    assert runs_of(spark, wh) == ["seed", "d1", "d1"]  # one commit per clone
    run(spark, plan_of, text, "d1", attempt=2)
    assert rows(spark, wh) == sorted(a + b) and runs_of(spark, wh) == ["seed", "d1", "d1"]
    run(spark, plan_of, text, "d2")  # a new run replaces again
    assert rows(spark, wh) == sorted(a + b)


@needs_runtime
def test_save_modes_that_refuse_a_target(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    with pytest.raises(RuntimeConfigError, match="ERROR_WHEN_SCHEMA_NOT_EXIST"):
        run(spark, plan_of, job(fake(ROWS), ice(wh, extra=", schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST")), "e1")
    run(spark, plan_of, job(fake(ROWS), ice(wh)), "seed")
    with pytest.raises(RuntimeConfigError, match="holds rows"):
        run(spark, plan_of, job(fake(ROWS), ice(wh, extra=", data_save_mode = ERROR_WHEN_DATA_EXISTS")), "e2")
    run(spark, plan_of, job(fake([(1, "one", "x")]), ice(wh, extra=", schema_save_mode = RECREATE_SCHEMA")), "e3")
    assert rows(spark, wh) == [(1, "one", "x")]


@needs_runtime
def test_time_travel_and_incremental_reads(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake(ROWS[:1]), ice(wh)), "v0")
    run(spark, plan_of, job(fake(ROWS[1:]), ice(wh)), "v1")
    catalog = _catalog(spark, wh)
    # when each published snapshot became main's (a fast-forward publishes it after it was written)
    snaps = spark.sql(f"SELECT s.snapshot_id, unix_millis(h.made_current_at) AS ms FROM "
                      f"{identifier(catalog, TableRef('db', 't'), 'snapshots')} s JOIN "
                      f"{identifier(catalog, TableRef('db', 't'), 'history')} h ON s.snapshot_id = h.snapshot_id "
                      "WHERE s.summary['seatunnel.run'] IS NOT NULL ORDER BY h.made_current_at").collect()
    first, second = snaps[0], snaps[1]
    for option, expected in ((f"use_snapshot_id = {first['snapshot_id']}", [1]),
                             (f"use_snapshot_timestamp = {first['ms']}", [1]),
                             (f"start_snapshot_id = {first['snapshot_id']}", [2, 3]),
                             (f"start_snapshot_id = {first['snapshot_id']}, end_snapshot_id = {second['snapshot_id']}",
                              [2, 3])):
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        source = ice(wh, extra=", " + option, inputs='"d"', role="plugin_output")
        run(spark, plan_of, job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = json }}'),
            "r")
        assert sorted(r["id"] for r in spark.read.json(str(out)).collect()) == expected, option
    with pytest.raises(RuntimeConfigError, match="use_snapshot_id 7"):  # deterministic: no retry
        run(spark, plan_of, job(ice(wh, extra=", use_snapshot_id = 7", inputs='"d"', role="plugin_output"),
                                'Console { plugin_input = "d" }'), "r")


def stream(spark, plan, run_id: str, fault: str | None = None) -> dict:
    options = faults.from_environment({faults.ENV: fault}) if fault else {}
    return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id, options=options))


@needs_runtime
def test_a_streaming_sync_picks_only_the_new_snapshots_on_each_run(spark, plan_of, tmp_path):
    """Iceberg's streaming source into an Iceberg sink: each run reads the snapshots committed since the last;
    a run that dies after its sink published a micro-batch Spark had not recorded replays it, and the
    sink finds the micro-batch's commit and skips it."""
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake(ROWS), ice(wh)), "c1")
    source = ice(wh, extra=", stream_scan_strategy = FROM_EARLIEST_SNAPSHOT", inputs='"d"', role="plugin_output")
    plan = plan_of(job(source, ice(wh, "replica", inputs='"d"'), "STREAMING", f', checkpoint.root = "{tmp_path / "ck"}"'))
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        stream(spark, plan, "s1", fault="batch.committed")
    assert rows(spark, wh, "replica") == ROWS
    stream(spark, plan, "s1")  # replays micro-batch 0: its commit is found, nothing written twice
    assert rows(spark, wh, "replica") == ROWS and len(runs_of(spark, wh, "replica")) == 1  # micro-batch 0's
    run(spark, plan_of, job(fake([(4, "d", "z"), (5, "e", "z")]), ice(wh)), "c2")
    second = stream(spark, plan, "s2")
    assert rows(spark, wh, "replica") == sorted([*ROWS, (4, "d", "z"), (5, "e", "z")])
    assert sum(b["written"] for b in second["streaming"]["batches"]) == 2
    stream(spark, plan, "s3")  # nothing new
    assert len(rows(spark, wh, "replica")) == 5


@needs_runtime
def test_a_jdbc_catalog_on_postgresql(spark, plan_of, tmp_path, db):
    """The catalog's table pointers in PostgreSQL (credentials in the block here; from an Airflow
    connection in a DAG); a restore finds the run's commit there too."""
    catalog = (f'iceberg.catalog.config = {{ type = "jdbc", uri = "{db.url}", "jdbc.user" = "{db.user}", '
               f'"jdbc.password" = "{db.password}", "jdbc.schema-version" = "V1", warehouse = "file://{tmp_path}/jw" }}')
    sink = f'Iceberg {{ plugin_input = "f", catalog_name = "pg", namespace = "sales", table = "orders", {catalog} }}'
    text = job(fake(ROWS), sink)
    assert any(j.endswith("postgresql.jar") for j in ICEBERG.jars(plan_of(text).pipelines[0].sinks[0].config, {}))
    run(spark, plan_of, text, "j1")
    run(spark, plan_of, text, "j1", attempt=2)
    [[count]] = db.sql("SELECT count(*) FROM iceberg_tables WHERE table_namespace = 'sales' AND table_name = 'orders'")
    assert int(count) == 1
    source = f'Iceberg {{ plugin_output = "d", catalog_name = "pg", namespace = "sales", table = "orders", {catalog} }}'
    out = tmp_path / "out"
    run(spark, plan_of, job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = json }}'), "r")
    assert sorted(r["id"] for r in spark.read.json(str(out)).collect()) == [1, 2, 3]


@needs_runtime
def test_schema_changes_of_a_postgres_cdc_stream_follow_into_the_table_once_across_a_restore(spark, plan_of,
                                                                                             tmp_path, db):
    """A rename, a drop, a widened type, a longer string and an added column issued between two runs of a
    Postgres-CDC stream (``schema-changes.enabled``): one Iceberg transaction applies them with their record,
    the driver dies after it and before the rows' commit, and the restore applies nothing again."""
    name = f"src_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE TABLE {name} (id int primary key, name varchar(10), score int, junk text); "
           f"ALTER TABLE {name} REPLICA IDENTITY FULL; INSERT INTO {name} VALUES (1, 'a', 1, 'x')")
    source = (f'Postgres-CDC {{ plugin_output = "f", base-url = "{db.url}", username = "{db.user}", password = '
              f'"{db.password}", table-names = ["{db.database}.public.{name}"], schema-changes.enabled = true }}')
    wh = tmp_path / "wh"
    plan = plan_of(job(source, ice(wh), "STREAMING", f', checkpoint.root = "{tmp_path / "ck"}"'))
    stream(spark, plan, "s1")
    db.sql(f"INSERT INTO {name} VALUES (2, 'b', 2, 'y'); ALTER TABLE {name} RENAME COLUMN name TO title; "
           f"ALTER TABLE {name} DROP COLUMN junk; ALTER TABLE {name} ALTER COLUMN score TYPE bigint; "
           f"ALTER TABLE {name} ALTER COLUMN title TYPE varchar(40); ALTER TABLE {name} ADD COLUMN note text; "
           f"INSERT INTO {name} VALUES (3, 'a title longer than ten', 5000000000, 'n')")
    with pytest.raises(PipelineError, match=r"injected fault at sink\.prepared"):
        stream(spark, plan, "s2", "sink.prepared")
    stream(spark, plan, "s3")
    table_name = identifier(_catalog(spark, wh), TableRef("db", "t"))
    df = spark.table(table_name)
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("id", "int"), ("title", "string"), ("score", "bigint"), ("note", "string")]
    assert sorted(tuple(r) for r in df.collect()) == [(1, "a", 1, None), (2, "b", 2, None),
                                                      (3, "a title longer than ten", 5000000000, "n")]
    table = spark.sparkContext._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession,
                                                                                         table_name)
    # the first schema and one per applied change (the longer string changes nothing): none applied twice
    assert table.schemas().size() == 5
    assert len(table.properties().get("seatunnel.schema_changes").split(",")) == 5


@pytest.mark.skipif(RUNTIME, reason="this PySpark has an Iceberg runtime")
def test_on_a_spark_without_an_iceberg_runtime_the_pipeline_fails_deterministically(spark, plan_of, tmp_path):
    """PySpark 4.2 (no Iceberg runtime is built for it): the sink refuses before touching any Iceberg class,
    naming the versions that work, as a configuration error (never retried)."""
    plan = plan_of(job(fake(ROWS), ice(tmp_path / "wh")))
    assert ICEBERG.jars(plan.pipelines[0].sinks[0].config, {}) == []
    assert ICEBERG.session_conf({}, {}) == {}
    with pytest.raises(RuntimeConfigError) as refused:
        run(spark, plan_of, job(fake(ROWS), ice(tmp_path / "wh")), "n1")
    assert refused.value.deterministic
    assert f"Iceberg has no Spark runtime for Spark {spark.version}" in str(refused.value)
    assert "Spark 4.1 (Iceberg 1.12.0)" in str(refused.value) and "docs/install.md" in str(refused.value)
