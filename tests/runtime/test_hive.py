"""Hive against a real metastore service on loopback (tests/hive_metastore.py): ORC, Parquet and text
tables written and read back, partitioned and not; ``overwrite``; a commit killed half way finished
by the restore exactly once; an overtaken attempt fenced out; and one run through spark-submit,
whose session the runtime builds from the plan's session settings.

In process, the pipelines run in a second root SparkSession on the tests' shared SparkContext,
built with the settings the plan asks for (Hive support, the metastore URI): Spark fixes a
session's catalog when it starts, and the shared session has none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.hive import CONNECTOR as HIVE
from airflow_provider_seatunnel.connectors.hive import records as hive_records
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.runtime.session import session_settings
from airflow_provider_seatunnel.spi.journals import TamperedRecord
from airflow_provider_seatunnel.spi.rows import with_kind
from tests import hive_metastore

HIVE_2PC = twophase.driver(HIVE)  # the engine's two phases over the sink's storage verbs

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")


@pytest.fixture(scope="module")
def metastore():
    with hive_metastore.running() as server:
        yield server


@pytest.fixture(scope="module")
def hive(spark, metastore):
    """A session with Hive support on the shared SparkContext, as the runtime configures one."""
    from pyspark.sql import SparkSession

    jvm = spark.sparkContext._jvm
    classic = jvm.org.apache.spark.sql.classic.SparkSession
    settings = {"spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": metastore.uri}
    builder = classic.builder().sparkContext(spark.sparkContext._jsc.sc())
    for key, value in settings.items():  # a second session takes Hadoop settings without their prefix
        builder = builder.config(key, value).config(key.removeprefix("spark.hadoop."), value)
    classic.clearActiveSession()
    classic.clearDefaultSession()
    try:
        session = SparkSession(spark.sparkContext, builder.getOrCreate())
    finally:
        classic.setDefaultSession(spark._jsparkSession)
        classic.setActiveSession(spark._jsparkSession)
    session.sql(f"CREATE DATABASE IF NOT EXISTS d LOCATION 'file:{metastore.warehouse}/d.db'")
    return session


def fake(rows: list[tuple[int, str, str]], parallelism: int = 1) -> str:  # each reader emits every row
    fields = ", ".join(f'{{ kind = INSERT, fields = [{i}, {json.dumps(n)}, "{p}"] }}' for i, n, p in rows)
    return (f'FakeSource {{ plugin_output = "f", parallelism = {parallelism}, '
            f'schema = {{ fields {{ id = bigint, name = string, p = string }} }}, rows = [{fields}] }}')


def job(source: str, sinks: str, uri: str) -> str:
    return f'env {{ job.mode = BATCH, parallelism = 2 }}\nsource {{ {source} }}\nsink {{ {sinks.replace("URI", uri)} }}\n'


def sink(table: str, extra: str = "") -> str:
    return f'Hive {{ plugin_input = "f", table_name = "{table}", metastore_uri = "URI" {extra} }}'


def run(hive, plan_of, text: str, run_id: str, attempt: int = 1) -> list[dict]:
    plan = plan_of(text)
    return [run_pipeline(RunContext(hive, plan, p, run_id, attempt=attempt)) for p in plan.pipelines]


def rows(hive, table: str) -> list[tuple]:
    hive.catalog.refreshTable(table)
    return srt(tuple(r) for r in hive.table(table).collect())


def srt(items) -> list[tuple]:
    return sorted(items, key=repr)


def data_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not any(
        part.startswith((".", "_")) for part in p.relative_to(root).parts))


ROWS = [(1, "ann", "a"), (2, "bob", "a"), (3, "cid", "b"), (4, None, "b")]


def test_orc_parquet_and_text_tables_round_trip(hive, plan_of, metastore):
    hive.sql("CREATE TABLE d.t_orc (id bigint, name string) PARTITIONED BY (p string) STORED AS ORC")
    hive.sql("CREATE TABLE d.t_text (id bigint, name string, p string) ROW FORMAT DELIMITED "
             "FIELDS TERMINATED BY ',' STORED AS TEXTFILE")
    hive.sql("CREATE TABLE d.t_pq (name string, id bigint) PARTITIONED BY (p string) STORED AS PARQUET")
    plan = plan_of(job(fake(ROWS), sink("d.t_orc") + sink("d.t_text"), metastore.uri))
    assert session_settings(plan, plan.pipelines[0])["spark.hadoop.hive.metastore.uris"] == metastore.uri
    [metrics] = [run_pipeline(RunContext(hive, plan, p, "w1")) for p in plan.pipelines]
    assert metrics["write_count"] == 8
    assert rows(hive, "d.t_orc") == srt(ROWS) and rows(hive, "d.t_text") == srt(ROWS)
    assert sorted(r[0] for r in hive.sql("SHOW PARTITIONS d.t_orc").collect()) == ["p=a", "p=b"]
    text_file = data_files(metastore.warehouse / "d.db" / "t_text")[0]
    assert text_file.name.startswith("st-") and b"," in text_file.read_bytes()  # Hive's SerDe, its delimiter
    assert not [t for t in hive.catalog.listTables("d") if t.name.startswith("st_staging")]

    # the ORC table read back (a partition, two columns) into the Parquet table; columns matched by name
    source = 'Hive { plugin_output = "f", table_name = "d.t_orc", metastore_uri = "URI", parallelism = 3, ' \
             'read_partitions = ["p=b"], read_columns = ["p", "name", "id"] }'.replace("URI", metastore.uri)
    plan = plan_of(job(source, sink("d.t_pq"), metastore.uri))
    p = plan.pipelines[0]
    [read] = HIVE.read(RunContext(hive, plan, p, "r1"), p.sources[0]).values()
    assert read.rdd.getNumPartitions() == 3 and read.columns[:3] == ["p", "name", "id"]
    assert run_pipeline(RunContext(hive, plan, p, "r1"))["write_count"] == 2
    assert rows(hive, "d.t_pq") == srt([("cid", 3, "b"), (None, 4, "b")])
    assert run_pipeline(RunContext(hive, plan, p, "r1"))["write_count"] == 2  # the same run again: nothing twice
    assert rows(hive, "d.t_pq") == srt([("cid", 3, "b"), (None, 4, "b")])


def test_overwrite_replaces_the_written_partitions_once_per_run(hive, plan_of, metastore):
    hive.sql("CREATE TABLE d.t_ow (id bigint, name string) PARTITIONED BY (p string) STORED AS PARQUET")
    run(hive, plan_of, job(fake(ROWS), sink("d.t_ow"), metastore.uri), "o1")
    # two sinks of one run overwrite the same table: each keeps what the other wrote in this run
    overwrite = sink("d.t_ow", ", overwrite = true")
    text = job(fake([(7, "new", "a"), (8, "new", "c")]), overwrite + overwrite, metastore.uri)
    run(hive, plan_of, text, "o2")
    new = [(7, "new", "a"), (8, "new", "c")]
    expected = srt([(3, "cid", "b"), (4, None, "b"), *new, *new])  # a replaced, b kept, c added
    assert rows(hive, "d.t_ow") == expected
    run(hive, plan_of, text, "o2", attempt=2)  # a restore of the same run: no second replacement, no duplicate
    assert rows(hive, "d.t_ow") == expected
    assert not list((metastore.warehouse / "d.db" / "t_ow").rglob("trash"))


def test_a_commit_killed_half_way_is_finished_by_the_restore_exactly_once(hive, plan_of, metastore):
    hive.sql("CREATE TABLE d.t_kill (id bigint, name string) PARTITIONED BY (p string) STORED AS ORC")
    plan = plan_of(job(fake(ROWS), sink("d.t_kill"), metastore.uri))
    p = plan.pipelines[0]
    vertex = p.sinks[0]
    df = with_kind(hive.createDataFrame(ROWS, "id bigint, name string, p string").repartition(2))
    dying = RunContext(hive, plan, p, "k1", options=faults.from_environment({faults.ENV: "sink.move+1"}))
    info = HIVE_2PC.prepare(dying, vertex, {"f": df})
    assert len(info.tables[0].parts) >= 3
    with pytest.raises(faults.InjectedFault):
        HIVE_2PC.commit(dying, vertex, info)  # one file moved, then the driver "died": no abort follows
    journal = Path(info.tables[0].detail["commits"].removeprefix("file:")) / "journal.json"
    assert journal.exists() and hive.sql("SHOW PARTITIONS d.t_kill").collect() == []  # no partition added yet
    restore = run_pipeline(RunContext(hive, plan, p, "k1", attempt=2))
    assert restore["write_count"] == 4
    assert rows(hive, "d.t_kill") == srt(ROWS)
    HIVE_2PC.commit(dying, vertex, info)  # the killed attempt's commit called again: recorded, nothing moves
    assert rows(hive, "d.t_kill") == srt(ROWS) and not journal.exists()
    marker = json.loads((journal.parent / "committed.json").read_text())["body"]  # sealed (hive/records.py)
    assert marker["token"] == 1 and len(marker["moves"]) == len(info.tables[0].parts)


def test_a_planted_edited_or_escaping_journal_is_refused_and_never_acted_on(hive, plan_of, metastore, tmp_path):
    """A killed commit leaves a sealed journal; a planted, edited or escaping one in its place stops
    the restore with TamperedRecord and nothing in it happens (the file outside stays put)."""
    hive.sql("CREATE TABLE d.t_forged (id bigint, name string) STORED AS ORC")
    plan = plan_of(job(fake(ROWS), sink("d.t_forged"), metastore.uri))
    p, outside = plan.pipelines[0], tmp_path / "private.txt"
    outside.write_text("secret")
    df = with_kind(hive.createDataFrame(ROWS, "id bigint, name string, p string").repartition(2))
    dying = RunContext(hive, plan, p, "f1", options=faults.from_environment({faults.ENV: "sink.move+1"}))
    info = HIVE_2PC.prepare(dying, p.sinks[0], {"f": df})
    with pytest.raises(faults.InjectedFault):
        HIVE_2PC.commit(dying, p.sinks[0], info)
    entry = info.tables[0].detail
    journal = Path(entry["commits"].removeprefix("file:")) / "journal.json"
    sealed = json.loads(journal.read_text())
    location = entry["location"]
    body = sealed.get("body", sealed)
    escaping = {**body, "moves": [[f"file:{outside}", str(body["moves"][0][1])]]}
    forgeries = {
        "planted": escaping,  # not sealed at all
        "edited": {**sealed, "body": escaping},  # the seal no longer matches
        "escaping": hive_records.seal(location, entry["commits"] + "/journal.json", escaping),  # sealed, outside
    }
    for name, forged in forgeries.items():
        journal.write_text(json.dumps(forged))
        with pytest.raises(TamperedRecord, match="refusing the commit record"):
            HIVE_2PC.prepare(RunContext(hive, plan, p, "f1", attempt=2), p.sinks[0], {"f": df})
        assert outside.read_text() == "secret", name
    journal.write_text(json.dumps(sealed))  # the real journal back: the restore finishes it exactly once
    assert run_pipeline(RunContext(hive, plan, p, "f1", attempt=3))["write_count"] == 4
    assert rows(hive, "d.t_forged") == srt((i, n) for i, n, _ in ROWS)
    token = Path(entry["commits"].removeprefix("file:").replace("/f1/", "/f2/")) / "token-99"
    token.parent.mkdir(parents=True)
    token.write_text(json.dumps({"token": 99}))  # a planted token would fence out every attempt
    with pytest.raises(TamperedRecord):
        HIVE_2PC.prepare(RunContext(hive, plan, p, "f2"), p.sinks[0], {"f": df})


def test_a_missing_table_is_a_configuration_error(hive, plan_of, metastore):
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    with pytest.raises(RuntimeConfigError, match=r"d\.nope does not exist in the metastore"):
        run(hive, plan_of, job(fake(ROWS), sink("d.nope"), metastore.uri), "m1")


def test_spark_submit_builds_the_hive_session_from_the_plan(hive, metastore, tmp_path):
    hive.sql("CREATE TABLE d.t_cli (id bigint, name string) PARTITIONED BY (p string) STORED AS PARQUET")
    conf = tmp_path / "job.conf"
    conf.write_text(job(fake(ROWS), sink("d.t_cli"), metastore.uri).replace(
        "job.mode = BATCH", 'job.mode = BATCH, job.name = "hive_cli", spark.ui.enabled = false'))
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([CLI, "run", str(conf), "--run-id", "c1", "--master", "local[1]", "--work-dir",
                           str(tmp_path / "work")], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert rows(hive, "d.t_cli") == srt(ROWS)
