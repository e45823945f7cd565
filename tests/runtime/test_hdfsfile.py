"""HdfsFile on real Spark through Hadoop's FileSystem API, on Hadoop's local file system
(``fs.defaultFS = "file:///"``; one round trip on a real HDFS is in tests/runtime/test_paimon_hdfs.py, which
starts one for the Paimon tests, tests/hdfs_server.py): the same code path, the same FileContext rename the
fence's compare-and-swap uses (atomic on HDFS's NameNode; checked, then done, locally). Formats
round-trip, a killed committer is rolled forward once, an overlapping attempt is fenced, and the
compile-time checks locate their errors."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.fencing import Superseded
from airflow_provider_seatunnel.spi.rows import with_kind

HDFS = get_connector("HdfsFile")
SINK = twophase.driver(HDFS)  # the engine's two phases over the sink's storage verbs
FIELDS = "id = int, name = string, day = date"


@pytest.fixture(autouse=True)
def journal_key(monkeypatch):
    """HDFS (here a file: URI) has no secret credential of its own: the commit records are sealed
    with the ``[seatunnel] journal_key`` setting, as a deployment sets it (docs/security.md)."""
    monkeypatch.setenv("SEATUNNEL_JOURNAL_KEY", "hdfs-tests-journal-key")


def frame(spark, start: int, n: int):
    rows = [(i, f"n{i}", dt.date(2024, 1, 1 + i % 3)) for i in range(start, start + n)]
    return {"t": with_kind(spark.createDataFrame(rows, "id int, name string, day date").repartition(2))}


def options(path, **extra) -> str:
    more = "".join(f', {k} = "{v}"' for k, v in extra.items())
    return f'fs.defaultFS = "file:///", path = "{path}"{more}'


def sink_ctx(plan_of, spark, block: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{ HdfsFile {{ {block} }} }}
""")
    p = plan.pipelines[0]
    opts = faults.from_environment({faults.ENV: fault}) if fault else None
    return RunContext(spark, plan, p, run_id, attempt=attempt, options=opts), p.sinks[0]


def read_ids(plan_of, spark, block: str) -> list[int]:
    plan = plan_of(f'source {{ HdfsFile {{ plugin_output = "r", {block} }} }}\nsink {{ Console {{ }} }}')
    p = plan.pipelines[0]
    tables = HDFS.read(RunContext(spark, plan, p, "reader"), p.sources[0])
    return sorted(r.id for df in tables.values() for r in df.select("id").collect())


def published(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and ".seatunnel-" not in str(p) and not p.name.startswith("."))


@pytest.mark.parametrize("fmt", ["json", "orc"])
def test_each_format_round_trips(spark, plan_of, tmp_path, fmt):
    block = options(tmp_path / "out", file_format_type=fmt)
    ctx, vertex = sink_ctx(plan_of, spark, block, "run-1")
    info = SINK.prepare(ctx, vertex, frame(spark, 0, 20))
    assert published(tmp_path / "out") == []
    SINK.commit(ctx, vertex, info)
    files = published(tmp_path / "out")
    assert len(files) == 2
    if fmt == "json":  # the row delimiter goes between rows, not after the last (SeaTunnel's files)
        bodies = [(tmp_path / "out" / f).read_bytes() for f in files]
        assert sum(b.count(b"\n") for b in bodies) == 20 - len(bodies), bodies  # 20 rows
        assert not any(b.endswith(b"\n") for b in bodies), bodies
    schema = f", schema = {{ fields {{ {FIELDS} }} }}" if fmt == "json" else ""
    assert read_ids(plan_of, spark, block + schema) == list(range(20))


def test_a_killed_committer_is_rolled_forward_and_an_older_attempt_is_fenced(spark, plan_of, tmp_path):
    block = options(tmp_path / "out", file_format_type="json")
    read_block = f"{block}, schema = {{ fields {{ {FIELDS} }} }}"
    dying, vertex = sink_ctx(plan_of, spark, block, "run-1", fault="sink.move+1")
    info = SINK.prepare(dying, vertex, frame(spark, 100, 10))
    with pytest.raises(faults.InjectedFault, match=r"sink\.move"):
        SINK.commit(dying, vertex, info)
    SINK.abort(dying, vertex, info)
    assert len(published(tmp_path / "out")) == 1  # half published, hidden from readers:
    assert read_ids(plan_of, spark, read_block) == []
    retry, _ = sink_ctx(plan_of, spark, block, "run-1", attempt=2)
    again = SINK.prepare(retry, vertex, frame(spark, 100, 10))
    assert [t.committed for t in again.tables] == [True]  # the killed commit was rolled forward...
    assert read_ids(plan_of, spark, read_block) == list(range(100, 110))  # ...by the retry
    SINK.commit(retry, vertex, again)
    assert read_ids(plan_of, spark, read_block) == list(range(100, 110))

    old, _ = sink_ctx(plan_of, spark, block, "run-2")
    new, _ = sink_ctx(plan_of, spark, block, "run-2")
    stale, fresh = SINK.prepare(old, vertex, frame(spark, 0, 5)), SINK.prepare(new, vertex, frame(spark, 0, 5))
    with pytest.raises(Superseded):
        SINK.commit(old, vertex, stale)
    SINK.commit(new, vertex, fresh)
    assert read_ids(plan_of, spark, read_block) == [*range(5), *range(100, 110)]


def test_compile_time_checks(plan_of, config_error):
    error = config_error('source { FakeSource { plugin_output = "f", schema = { fields { a = int } } } }\n'
                         'sink { HdfsFile { plugin_input = "f", path = "/o", file_format_type = "csv" } }')
    assert [p.key for p in error.problems] == ["fs.defaultFS"] and error.problems[0].line == 2
    plan = plan_of('source { FakeSource { plugin_output = "f", schema = { fields { a = int } } } }\n'
                   'sink { HdfsFile { plugin_input = "f", fs.defaultFS = "hdfs://nn:8020", path = "/o", '
                   'file_format_type = "csv", kerberos_principal = "etl@REALM", remote_user = "etl" } }')
    codes = {(w["key"], w.get("code")) for w in plan.warnings}
    assert ("kerberos_principal", "not-runnable") in codes and ("remote_user", None) in codes


def test_a_fence_record_version_is_written_once(spark, tmp_path):
    """The compare-and-swap through Hadoop's FileContext: two writers naming one version, one wins."""
    from airflow_provider_seatunnel.connectors.files.bucket import Conflict
    from airflow_provider_seatunnel.connectors.hdfsfile.store import HadoopStore, settings

    s = settings({"fs.defaultFS": "file:///", "path": str(tmp_path / "cas")})
    one, two = HadoopStore(spark, s), HadoopStore(spark, s)
    key = s.key("fence.json")
    first = one.write_json(key, {"token": 1}, None)
    with pytest.raises(Conflict):
        two.write_json(key, {"token": 9}, None)
    assert one.write_json(key, {"token": 2}, first) != first
    with pytest.raises(Conflict):
        two.write_json(key, {"token": 3}, first)
    got = two.read_json(key)
    assert got is not None and got.value == {"token": 2}
    assert [k for k, _ in one.objects(s.prefix + "/")] == [key]


def test_save_modes_wait_for_the_pipeline():
    """The group's prepare task has no JVM to reach Hadoop with: the sink's prepare applies them."""
    assert HDFS.save_mode("run-1", None) is None
