"""Delta on real Spark (the tests' shared session carries Delta's jars, SQL extension and catalog, as a
pipeline's session does): tables written and read back, restores and injected faults that commit each run
once (the table's rows and its history say so), two overlapping commits of one run of which one lands,
upserts of a change log, DROP_DATA once per run across a split pipeline, time travel, and streaming: a
Delta table's new commits synced on each run, a replayed micro-batch skipped by Delta, a change data feed
replicated into a keyed table."""

from __future__ import annotations

import calendar
import json
import threading
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.delta import CONNECTOR as DELTA
from airflow_provider_seatunnel.connectors.delta.sink import ConcurrentCommit
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError, RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import with_kind

DELTA_2PC = twophase.driver(DELTA)  # the engine's two phases over the sink's storage verbs

FIELDS = "schema = { fields { id = bigint, name = string, grp = string } }"


def fake(rows: list[tuple], output: str = "f") -> str:
    """A FakeSource emitting ``rows`` (id, name, grp[, kind]) in order (one reader)."""
    items = ", ".join(f'{{ kind = {r[3] if len(r) > 3 else "INSERT"}, fields = [{r[0]}, {json.dumps(r[1])}, '
                      f'"{r[2]}"] }}' for r in rows)
    return f'FakeSource {{ plugin_output = "{output}", parallelism = 1, {FIELDS}, rows = [{items}] }}'


def job(source: str, sink: str, mode: str = "BATCH", env: str = "") -> str:
    return f"env {{ job.mode = {mode}, parallelism = 2 {env} }}\nsource {{ {source} }}\nsink {{ {sink} }}\n"


def delta_sink(path: Path, extra: str = "", inputs: str = '"f"') -> str:
    return f'Delta {{ plugin_input = {inputs}, path = "{path}" {extra} }}'


def run(spark, plan_of, text: str, run_id: str, attempt: int = 1, fault: str | None = None) -> list[dict]:
    plan = plan_of(text)
    options = faults.from_environment({faults.ENV: fault}) if fault else {}
    return [run_pipeline(RunContext(spark, plan, p, run_id, attempt, options)) for p in plan.pipelines]


def rows(spark, path: Path) -> list[tuple]:
    return sorted(tuple(r) for r in spark.read.format("delta").load(str(path)).collect())


def history(spark, path: Path, tokens: bool = False) -> list[tuple[int, str, dict | None]]:
    """(version, operation, userMetadata as JSON) of each commit, oldest first; the commits that only take an
    attempt token (no files) left out unless ``tokens``."""
    found = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").select("version", "operation", "userMetadata").collect()
    return sorted((r[0], r[1], meta) for r in found for meta in [json.loads(r[2]) if r[2] else None]
                  if tokens or (meta or {}).get("kind") != "token")


def runs_of(spark, path: Path) -> list[str]:
    return [meta["seatunnel_run_id"] for _, _, meta in history(spark, path) if meta]


ROWS = [(1, "a", "x"), (2, "b", "y"), (3, "c", "x")]


def test_a_table_written_and_read_back_at_the_plans_parallelism(spark, plan_of, tmp_path):
    table = tmp_path / "t"
    [metrics] = run(spark, plan_of, job(fake(ROWS), delta_sink(table, ', partition_keys = ["grp"], '
                                        'delta.table.write-props = { "delta.appendOnly" = "true" }')), "w1")
    assert metrics["write_count"] == 3 and rows(spark, table) == ROWS
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]
    assert detail["partitionColumns"] == ["grp"] and detail["properties"]["delta.appendOnly"] == "true"
    assert runs_of(spark, table) == ["w1"]

    source = f'Delta {{ plugin_output = "d", path = "{table}", parallelism = 3, read_columns = ["NAME", "id"] }}'
    out = tmp_path / "out"
    plan = plan_of(job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = "json" }}'))
    p = plan.pipelines[0]
    [read] = DELTA.read(RunContext(spark, plan, p, "r1"), p.sources[0]).values()
    assert read.rdd.getNumPartitions() == 3 and read.columns[:2] == ["name", "id"]
    assert run_pipeline(RunContext(spark, plan, p, "r1"))["write_count"] == 3
    assert sorted((r["id"], r["name"]) for r in spark.read.json(str(out)).collect()) == [(1, "a"), (2, "b"), (3, "c")]


def test_of_two_overlapping_commits_of_one_run_the_newest_attempt_lands(spark, plan_of, tmp_path):
    """Both attempts staged before either commits, then both commit at once: only the attempt that took the
    newer token lands (the older one is superseded, whether it finds the newer token before its write or
    Delta finds it in its commit); each attempt's token is a commit of the table's log, and the data
    commit carries its token."""
    table = tmp_path / "t"
    plan = plan_of(job(fake(ROWS), delta_sink(table)))
    p = plan.pipelines[0]
    run(spark, plan_of, job(fake(ROWS[:1]), delta_sink(table)), "seed")
    contexts = [RunContext(spark, plan, p, "o1", attempt=n) for n in (1, 2)]
    infos = [DELTA_2PC.prepare(ctx, p.sinks[0], {"f": with_kind(spark.createDataFrame(ROWS, "id bigint, name string, "
                                                                                 "grp string"))})
             for ctx in contexts]
    outcome: dict[int, str] = {}

    def attempt(n: int) -> None:
        try:
            DELTA_2PC.commit(contexts[n], p.sinks[0], infos[n])
            outcome[n] = "ok"
        except (ConcurrentCommit, PipelineError) as e:
            outcome[n] = e.kind

    threads = [threading.Thread(target=attempt, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rows(spark, table) == sorted(ROWS[:1] + ROWS)
    assert runs_of(spark, table) == ["seed", "o1"] and outcome == {0: "superseded", 1: "ok"}
    notes = [(meta["kind"], meta["token"], meta["attempt"]) for _, _, meta in history(spark, table, tokens=True)
             if meta and meta["seatunnel_run_id"] == "o1"]
    assert notes == [("token", 1, 1), ("token", 2, 2), ("data", 2, 2)]


CHANGES_1 = [(1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", "y")]
# CHANGES_1 into a new table, with key 8 inserted, then deleted after other keys (the last change wins)
LOG_1 = [CHANGES_1[0], (8, "h", "x"), *CHANGES_1[1:], (8, "h", "x", "DELETE")]
CHANGES_2 = [(2, "b", "x", "UPDATE_BEFORE"), (2, "B", "x", "UPDATE_AFTER"), (3, "c", "y", "DELETE"),
             (5, "e", "z", "INSERT"), (6, "f", "z", "INSERT"), (6, "f", "z", "DELETE"), (7, "g", "z", "INSERT"),
             (7, "g", "z", "UPDATE_BEFORE"), (7, "G", "z", "UPDATE_AFTER"), (9, "gone", "z", "DELETE")]


def test_upserts_of_a_change_log_end_equal_to_the_expected_table(spark, plan_of, tmp_path):
    table = tmp_path / "t"
    sink = delta_sink(table, ', primary_keys = ["id"]')
    run(spark, plan_of, job(fake(LOG_1), sink), "u1")
    [metrics] = run(spark, plan_of, job(fake(CHANGES_2), sink), "u2")
    expected = [(1, "a", "x"), (2, "B", "x"), (4, "d", "y"), (5, "e", "z"), (7, "G", "z")]
    assert rows(spark, table) == expected and metrics["write_count"] == len(CHANGES_2)
    assert [op for _, op, _ in history(spark, table)] == ["WRITE", "MERGE"]
    run(spark, plan_of, job(fake(CHANGES_2), sink), "u2", attempt=2)  # the MERGE of a committed run: skipped
    assert rows(spark, table) == expected and len(history(spark, table)) == 2
    # the session settings carrying the MERGE's identity are gone: a later plain write is not skipped
    assert spark.conf.get("spark.databricks.delta.write.txnAppId", None) is None
    run(spark, plan_of, job(fake([(8, "h", "z")]), sink), "u3")
    assert (8, "h", "z") in rows(spark, table)


def test_drop_data_replaces_the_table_once_per_run_across_a_split_pipeline(spark, plan_of, tmp_path):
    table = tmp_path / "t"
    run(spark, plan_of, job(fake([(-1, "old", "g")]), delta_sink(table)), "seed")
    a, b = [(10, "a", "x"), (11, "a", "x")], [(20, "b", "y")]
    text = job(fake(a, "a") + "\n" + fake(b, "b"), delta_sink(table, ", data_save_mode = DROP_DATA", '["a", "b"]'))
    plan = plan_of(text)
    assert len(plan.pipelines) == 2  # one sink fed by two sources: one pipeline per path, each a clone of the sink
    run(spark, plan_of, text, "d1")
    assert rows(spark, table) == sorted(a + b)  # the old row dropped once, neither clone's rows by the other
    assert runs_of(spark, table) == ["seed", "d1", "d1"]  # one commit per clone
    run(spark, plan_of, text, "d1", attempt=2)
    assert rows(spark, table) == sorted(a + b) and runs_of(spark, table) == ["seed", "d1", "d1"]
    run(spark, plan_of, text, "d2")  # a new run replaces again
    assert rows(spark, table) == sorted(a + b)


def test_save_modes_that_refuse_a_target(spark, plan_of, tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(RuntimeConfigError, match="ERROR_WHEN_SCHEMA_NOT_EXIST"):
        run(spark, plan_of, job(fake(ROWS), delta_sink(missing, ", schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST")),
            "e1")
    table = tmp_path / "t"
    run(spark, plan_of, job(fake(ROWS), delta_sink(table)), "seed")
    text = job(fake(ROWS), delta_sink(table, ", data_save_mode = ERROR_WHEN_DATA_EXISTS"))
    with pytest.raises(RuntimeConfigError, match="holds rows"):
        run(spark, plan_of, text, "e2")
    recreate = job(fake([(1, "one", "x")]), delta_sink(table, ', schema_save_mode = RECREATE_SCHEMA, '
                                                              'partition_keys = ["grp"]'))
    run(spark, plan_of, recreate, "e3")
    assert rows(spark, table) == [(1, "one", "x")]
    assert spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]["partitionColumns"] == ["grp"]


def test_time_travel_reads_a_version_or_the_version_at_a_time(spark, plan_of, tmp_path):
    table = tmp_path / "t"
    run(spark, plan_of, job(fake(ROWS[:1]), delta_sink(table)), "v0")
    run(spark, plan_of, job(fake(ROWS[1:]), delta_sink(table)), "v1")
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table}`")
    first = history.where("version = 0").collect()[0]["timestamp"]
    millis = calendar.timegm(first.timetuple()) * 1000 + first.microsecond // 1000  # the session's zone: UTC
    # the second run's data commit is the newest version (an attempt token, an empty commit, comes before it)
    latest = max(r["version"] for r in history.collect())
    for option in ("use_version = 0", f"use_timestamp = {millis}", f"use_version = {latest}"):
        out = tmp_path / f"out-{option.split()[0]}-{option[-1]}"
        source = f'Delta {{ plugin_output = "d", path = "{table}", {option} }}'
        run(spark, plan_of, job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = json }}'),
            "r")
        got = sorted(r["id"] for r in spark.read.json(str(out)).collect())
        assert got == ([1, 2, 3] if option == f"use_version = {latest}" else [1]), option
    source = f'Delta {{ plugin_output = "d", path = "{table}", use_version = {latest + 5} }}'
    with pytest.raises(RuntimeConfigError, match=rf"use_version {latest + 5}: .*version"):  # deterministic: no retry
        run(spark, plan_of, job(source, 'Console { plugin_input = "d" }'), "r")


def stream(spark, plan, run_id: str, fault: str | None = None) -> dict:
    options = faults.from_environment({faults.ENV: fault}) if fault else {}
    return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id, options=options))


def test_a_streaming_sync_picks_only_the_new_commits_on_each_run(spark, plan_of, tmp_path):
    table, out = tmp_path / "t", tmp_path / "out"
    run(spark, plan_of, job(fake(ROWS), delta_sink(table)), "c1")
    source = f'Delta {{ plugin_output = "d", path = "{table}" }}'
    plan = plan_of(job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = "json" }}',
                       "STREAMING", f', checkpoint.root = "{tmp_path / "ck"}"'))
    stream(spark, plan, "s1")
    assert sorted(r["id"] for r in spark.read.json(str(out)).collect()) == [1, 2, 3]
    run(spark, plan_of, job(fake([(4, "d", "z"), (5, "e", "z")]), delta_sink(table)), "c2")
    second = stream(spark, plan, "s2")
    assert sorted(r["id"] for r in spark.read.json(str(out)).collect()) == [1, 2, 3, 4, 5]
    assert sum(b["written"] for b in second["streaming"]["batches"]) == 2
    stream(spark, plan, "s3")  # nothing new
    assert len(spark.read.json(str(out)).collect()) == 5


def test_a_replayed_micro_batch_is_skipped_by_delta_and_a_change_feed_replicates_upserts(spark, plan_of, tmp_path):
    """A stream of the source table's change data feed into a keyed table. Its first run dies after the sink
    committed a micro-batch that Spark had not recorded (``batch.committed``): the rerun replays that
    micro-batch under the same transaction version, which Delta skips. The replica ends equal to the source."""
    source_table, replica = tmp_path / "src", tmp_path / "replica"
    cdf = ', primary_keys = ["id"], delta.table.write-props = { "delta.enableChangeDataFeed" = "true" }'
    run(spark, plan_of, job(fake(CHANGES_1), delta_sink(source_table, cdf)), "c1")
    source = f'Delta {{ plugin_output = "d", path = "{source_table}", change_data_feed = true }}'
    plan = plan_of(job(source, delta_sink(replica, ', primary_keys = ["id"]', '"d"'), "STREAMING",
                       f', checkpoint.root = "{tmp_path / "ck"}"'))
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        stream(spark, plan, "s1", fault="batch.committed")
    assert rows(spark, replica) == CHANGES_1
    stream(spark, plan, "s1")  # replays micro-batch 0: skipped
    assert rows(spark, replica) == CHANGES_1 and len(history(spark, replica)) == 1
    run(spark, plan_of, job(fake(CHANGES_2), delta_sink(source_table, cdf)), "c2")
    stream(spark, plan, "s2")
    assert rows(spark, replica) == rows(spark, source_table)
    assert [op for _, op, _ in history(spark, replica)] == ["WRITE", "MERGE"]
