"""OssFile, CosFile and ObsFile on real Spark (Hadoop's S3A) against a real S3 endpoint on loopback
(moto's server, tests/s3_server.py) standing in for each store's S3 API: each plugin's own
options write (through the engine's two-phase commit) and read back; a killed commit is rolled
forward through S3File's fence; a store that refuses or ignores conditional writes fails the sink
before anything is written. The live OSS, COS and OBS services are not reached here."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_provider_seatunnel.connectors.files import bucket as store
from airflow_provider_seatunnel.connectors.objectstores import cosfile, obsfile, ossfile
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import with_kind
from tests import s3_server
from tests.s3_server import ACCESS_KEY, SECRET_KEY

FIELDS = "id = int, name = string, day = date"
CONNECTORS = {"OssFile": ossfile.CONNECTOR, "CosFile": cosfile.CONNECTOR, "ObsFile": obsfile.CONNECTOR}


@pytest.fixture(scope="module")
def s3():
    with s3_server.running() as server:
        yield server


def options(plugin: str, s3, bucket: str, path: str) -> str:
    """The plugin's own options (SeaTunnel's names) for ``path`` in ``bucket`` at the stand-in
    endpoint; CosFile's ``endpoint`` overrides the one its ``region`` implies."""
    return {
        "OssFile": f'bucket = "oss://{bucket}", endpoint = "{s3.endpoint}", access_key = "{ACCESS_KEY}", '
                   f'access_secret = "{SECRET_KEY}"',
        "CosFile": f'bucket = "cosn://{bucket}", region = "ap-chengdu", endpoint = "{s3.endpoint}", '
                   f'secret_id = "{ACCESS_KEY}", secret_key = "{SECRET_KEY}"',
        "ObsFile": f'bucket = "obs://{bucket}", endpoint = "{s3.endpoint}", access_key = "{ACCESS_KEY}", '
                   f'access_secret = "{SECRET_KEY}"',
    }[plugin] + f', path = "{path}"'


def read_rows(plan_of, spark, plugin: str, block: str) -> list[tuple]:
    plan = plan_of(f'source {{ {plugin} {{ plugin_output = "r", {block} }} }}\nsink {{ Console {{ }} }}')
    p = plan.pipelines[0]
    tables = CONNECTORS[plugin].read(RunContext(spark, plan, p, "reader"), p.sources[0])
    return sorted((r.id, r.name, r.day) for df in tables.values() for r in df.select("id", "name", "day").collect())


def visible(s3, bucket: str) -> list[str]:
    return [k for k in s3.keys(bucket) if ".seatunnel-" not in k]


@pytest.mark.parametrize("plugin, fmt", [("OssFile", "parquet"), ("CosFile", "json"), ("ObsFile", "csv")])
def test_each_plugin_writes_and_reads_back_with_its_own_options(run_job, plan_of, spark, s3, plugin, fmt):
    bucket = s3.new_bucket()
    block = f'{options(plugin, s3, bucket, "/out")}, file_format_type = "{fmt}"'
    rows = ", ".join(f'{{ kind = INSERT, fields = [{i}, "n{i}", "2024-01-{i + 1:02d}"] }}' for i in range(6))
    metrics = run_job(f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ FakeSource {{ plugin_output = "f", rows = [{rows}], schema = {{ fields {{ {FIELDS} }} }} }} }}
        sink {{ {plugin} {{ plugin_input = "f", {block} }} }}
    """)
    assert metrics[0]["status"] == "FINISHED"
    published = visible(s3, bucket)
    assert published and all(k.startswith("out/T_") and k.endswith("." + fmt) for k in published), published
    assert not [k for k in s3.keys(bucket) if ".seatunnel-staging" in k or "/.probe-" in k]  # staging, probe gone
    schema = f", schema = {{ fields {{ {FIELDS} }} }}" if fmt != "parquet" else ""
    assert read_rows(plan_of, spark, plugin, block + schema) == [(i, f"n{i}", dt.date(2024, 1, i + 1))
                                                                  for i in range(6)]


def sink_ctx(plan_of, spark, block: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{ ObsFile {{ {block} }} }}
""")
    p = plan.pipelines[0]
    opts = faults.from_environment({faults.ENV: fault}) if fault else None
    return RunContext(spark, plan, p, run_id, attempt=attempt, options=opts), p.sinks[0]


def frame(spark, start: int, n: int):
    rows = [(i, f"n{i}", dt.date(2024, 1, 1 + i % 28)) for i in range(start, start + n)]
    return {"t": with_kind(spark.createDataFrame(rows, "id int, name string, day date").repartition(2))}


def test_a_killed_obsfile_commit_is_rolled_forward_by_the_next_attempt(plan_of, spark, s3):
    obs = twophase.driver(obsfile.CONNECTOR)  # the engine's two phases over the sink's storage verbs
    bucket = s3.new_bucket()
    block = f'{options("ObsFile", s3, bucket, "/out")}, file_format_type = "json"'
    read_block = f"{block}, schema = {{ fields {{ {FIELDS} }} }}"
    dying, vertex = sink_ctx(plan_of, spark, block, "run-1", fault="sink.move+1")  # dies after one of two copies
    info = obs.prepare(dying, vertex, frame(spark, 100, 10))
    with pytest.raises(faults.InjectedFault, match=r"sink\.move"):
        obs.commit(dying, vertex, info)
    obs.abort(dying, vertex, info)  # as the engine does: the recorded commit stays
    assert len(visible(s3, bucket)) == 1  # half published, and invisible to the plugin's readers
    assert read_rows(plan_of, spark, "ObsFile", read_block) == []
    retry, _ = sink_ctx(plan_of, spark, block, "run-1", attempt=2)
    again = obs.prepare(retry, vertex, frame(spark, 100, 10))
    assert [t.committed for t in again.tables] == [True]  # the killed commit was rolled forward...
    assert [r[0] for r in read_rows(plan_of, spark, "ObsFile", read_block)] == list(range(100, 110))  # ...by the retry
    obs.commit(retry, vertex, again)
    assert [r[0] for r in read_rows(plan_of, spark, "ObsFile", read_block)] == list(range(100, 110))
    assert len(visible(s3, bucket)) == 2 and not [k for k in s3.keys(bucket) if "/.pending/" in k]


class IgnoresConditions:
    """A store whose S3 API drops If-None-Match/If-Match (the real endpoint underneath)."""

    def __init__(self, client):
        self.client = client

    def put_object(self, **kwargs):
        kwargs.pop("IfMatch", None), kwargs.pop("IfNoneMatch", None)
        return self.client.put_object(**kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


class RefusesConditions(IgnoresConditions):
    """A store answering a conditional PutObject with 501 NotImplemented, as OSS documents."""

    def put_object(self, **kwargs):
        from botocore.exceptions import ClientError

        if "IfMatch" in kwargs or "IfNoneMatch" in kwargs:
            raise ClientError({"Error": {"Code": "NotImplemented", "Message": "not implemented"}}, "PutObject")
        return self.client.put_object(**kwargs)


@pytest.mark.parametrize("store_kind, why", [(IgnoresConditions, "a write it should have refused succeeded"),
                                             (RefusesConditions, "it answered NotImplemented")])
def test_a_store_without_conditional_writes_fails_the_sink_before_it_writes(plan_of, spark, s3, monkeypatch,
                                                                            store_kind, why):
    bucket = s3.new_bucket()
    real_client = store.client
    monkeypatch.setattr(store, "client", lambda s: store_kind(real_client(s)))
    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{ OssFile {{ {options("OssFile", s3, bucket, "/out")}, file_format_type = "json" }} }}
""")
    p = plan.pipelines[0]
    with pytest.raises(RuntimeConfigError, match=rf"^OssFile: the store behind oss://{bucket}/ does not honour "
                                                 rf"conditional writes .*{why}"):
        twophase.driver(ossfile.CONNECTOR).prepare(RunContext(spark, plan, p, "r"), p.sinks[0], frame(spark, 0, 4))
    assert s3.keys(bucket) == []  # no staging, no fence, no probe left
