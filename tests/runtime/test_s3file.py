"""S3File on real Spark (Hadoop's S3A) against a real S3 endpoint on loopback (moto's server, see
tests/s3_server.py): formats round-trip, and the fenced commit on an object store (no rename,
no lock: conditional writes) under failures, kills and overlapping attempts."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from airflow_provider_seatunnel.connectors import s3file
from airflow_provider_seatunnel.connectors.files import s3options as options
from airflow_provider_seatunnel.connectors.files import storecommits as commits
from airflow_provider_seatunnel.connectors.files import storesink as sink
from airflow_provider_seatunnel.connectors.files import storesource as source
from airflow_provider_seatunnel.connectors.files.bucket import Bucket
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import StagingMismatch, Superseded
from airflow_provider_seatunnel.spi.rows import with_kind
from tests import s3_server

FIELDS = "id = int, name = string, day = date"
SINK = twophase.driver(s3file.CONNECTOR)  # the engine's two phases over the sink's storage verbs


@pytest.fixture(scope="module")
def s3():
    with s3_server.running() as server:
        yield server


def frame(spark, start: int, n: int, parts: int = 2):
    rows = [(i, f"n{i}", dt.date(2024, 1, 1 + i % 28)) for i in range(start, start + n)]
    df = spark.createDataFrame(rows, "id int, name string, day date").repartition(parts)
    return {"t": with_kind(df)}


def sink_ctx(plan_of, spark, block: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{ S3File {{ {block} }} }}
""")
    p = plan.pipelines[0]
    opts = faults.from_environment({faults.ENV: fault}) if fault else None
    return RunContext(spark, plan, p, run_id, attempt=attempt, options=opts), p.sinks[0]


def read_ids(plan_of, spark, block: str) -> list[int]:
    plan = plan_of(f"source {{ S3File {{ plugin_output = \"r\", {block} }} }}\nsink {{ Console {{ }} }}")
    p = plan.pipelines[0]
    tables = s3file.CONNECTOR.read(RunContext(spark, plan, p, "reader"), p.sources[0])
    return sorted(r.id for df in tables.values() for r in df.select("id").collect())


def slot(bucket: str, staged) -> dict[str, str]:
    """The keys of the slot ``staged`` (a table's :class:`Staged`) wrote under ``/out``."""
    c = staged.commit
    s = options.settings({"bucket": f"s3a://{bucket}", "path": "/out"})
    return commits.slot_keys(s, c.run_id, str(c.pipeline), c.sink, c.table, c.run_id)


def visible(s3, bucket: str) -> list[str]:
    """The keys a reader may see: everything but the sink's bookkeeping."""
    return [k for k in s3.keys(bucket) if ".seatunnel-" not in k]


def staging(s3, bucket: str) -> list[str]:
    return [k for k in s3.keys(bucket) if ".seatunnel-staging" in k]


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "excel"])
def test_each_format_round_trips_through_s3a(spark, plan_of, s3, fmt):
    bucket = s3.new_bucket()
    block = f'{s3.options(bucket, "/out")}, file_format_type = "{fmt}"'
    ctx, vertex = sink_ctx(plan_of, spark, block, "run-1")
    info = SINK.prepare(ctx, vertex, frame(spark, 0, 20))
    assert visible(s3, bucket) == []  # staged only
    SINK.commit(ctx, vertex, info)
    suffix = {"csv": ".csv", "json": ".json", "parquet": ".parquet", "excel": ".xlsx"}[fmt]
    published = visible(s3, bucket)
    assert len(published) == 2 and all(re.fullmatch(rf"out/T_\w+_run-1_0_1_{i}{re.escape(suffix)}", k)
                                        for i, k in enumerate(published)), published
    assert staging(s3, bucket) == []
    if fmt in ("csv", "json"):  # the row delimiter goes between rows, not after the last (SeaTunnel's files)
        bodies = [s3.client().get_object(Bucket=bucket, Key=k)["Body"].read() for k in published]
        assert sum(b.count(b"\n") for b in bodies) == 20 - len(bodies), bodies  # 20 rows
        assert not any(b.endswith(b"\n") for b in bodies), bodies
    schema = f", schema = {{ fields {{ {FIELDS} }} }}" if fmt != "parquet" else ""
    schema += ", skip_header_row_number = 1" if fmt == "excel" else ""  # the sink wrote a header row
    plan = plan_of(f"source {{ S3File {{ plugin_output = \"r\", {block}{schema} }} }}\nsink {{ Console {{ }} }}")
    p = plan.pipelines[0]
    (df,) = s3file.CONNECTOR.read(RunContext(spark, plan, p, "reader"), p.sources[0]).values()
    rows = sorted((r.id, r.name, r.day) for r in df.collect())
    assert rows == [(i, f"n{i}", dt.date(2024, 1, 1 + i % 28)) for i in range(20)]
    fence = json.loads(s3.client().get_object(Bucket=bucket, Key=slot(bucket, info.tables[0])["fence"])["Body"].read())
    fence = fence["body"]  # sealed: {"v", "body", "mac"}
    assert fence["token"] == 1 and fence["commit"]["done"] is True and len(fence["commit"]["moves"]) == 2


def test_a_killed_committer_is_rolled_forward_once_and_readers_never_see_it_half_done(spark, plan_of, s3):
    bucket = s3.new_bucket()
    block = f'{s3.options(bucket, "/out")}, file_format_type = "json"'
    read_block = f"{block}, schema = {{ fields {{ {FIELDS} }} }}"
    first, vertex = sink_ctx(plan_of, spark, block, "run-0")
    SINK.commit(first, vertex, SINK.prepare(first, vertex, frame(spark, 0, 10)))
    dying, _ = sink_ctx(plan_of, spark, block, "run-1", fault="sink.move+1")  # dies after one of two copies
    info = SINK.prepare(dying, vertex, frame(spark, 100, 10))
    with pytest.raises(faults.InjectedFault, match=r"sink\.move"):
        SINK.commit(dying, vertex, info)
    SINK.abort(dying, vertex, info)  # as the engine does: the recorded commit stays
    published = [k for k in visible(s3, bucket) if "run-1" in k]
    assert len(published) == 1  # half published...
    assert read_ids(plan_of, spark, read_block) == list(range(10))  # ...and invisible to readers
    retry, _ = sink_ctx(plan_of, spark, block, "run-1", attempt=2)
    again = SINK.prepare(retry, vertex, frame(spark, 100, 10))
    assert [t.committed for t in again.tables] == [True]  # the killed commit was rolled forward...
    assert read_ids(plan_of, spark, read_block) == [*range(10), *range(100, 110)]  # ...by the token's taker
    SINK.commit(retry, vertex, again)
    assert read_ids(plan_of, spark, read_block) == [*range(10), *range(100, 110)]
    assert staging(s3, bucket) == [] and not [k for k in s3.keys(bucket) if "/.pending/" in k]
    third, _ = sink_ctx(plan_of, spark, block, "run-1", attempt=3)  # a restore: committed, writes nothing
    assert [t.committed for t in SINK.prepare(third, vertex, frame(spark, 100, 10)).tables] == [True]
    assert read_ids(plan_of, spark, read_block) == [*range(10), *range(100, 110)]


def test_a_commit_checks_the_staging_and_drop_data_takes_effect_at_commit(spark, plan_of, s3):
    bucket = s3.new_bucket()
    block = f'{s3.options(bucket, "/out")}, file_format_type = "json"'
    read_block = f"{block}, schema = {{ fields {{ {FIELDS} }} }}"
    first, vertex = sink_ctx(plan_of, spark, block, "run-0")
    SINK.commit(first, vertex, SINK.prepare(first, vertex, frame(spark, 0, 10)))
    dropping = f'{block}, data_save_mode = "DROP_DATA"'
    ctx, vertex = sink_ctx(plan_of, spark, dropping, "run-1")
    info = SINK.prepare(ctx, vertex, frame(spark, 50, 10))
    assert read_ids(plan_of, spark, read_block) == list(range(10))  # nothing dropped before the commit
    staged = info.tables[0].parts[0][0]
    s3.client().put_object(Bucket=bucket, Key=staged, Body=b"{}")  # the staging changed under the attempt
    with pytest.raises(StagingMismatch):
        SINK.commit(ctx, vertex, info)
    SINK.abort(ctx, vertex, info)
    assert read_ids(plan_of, spark, read_block) == list(range(10))
    retry, _ = sink_ctx(plan_of, spark, dropping, "run-1", attempt=2)
    SINK.commit(retry, vertex, SINK.prepare(retry, vertex, frame(spark, 50, 10)))
    assert read_ids(plan_of, spark, read_block) == list(range(50, 60))


def test_partitions_and_hidden_objects(spark, plan_of, s3):
    bucket = s3.new_bucket()
    block = f'{s3.options(bucket, "/p")}, file_format_type = "csv", partition_by = ["name"]'
    ctx, vertex = sink_ctx(plan_of, spark, block, "run-p")
    SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, frame(spark, 0, 3, parts=1)))
    assert [re.sub(r"/T_.*", "", k) for k in visible(s3, bucket)] == [f"p/name=n{i}" for i in range(3)]
    s3.client().put_object(Bucket=bucket, Key="p/_SUCCESS", Body=b"x")
    s3.client().put_object(Bucket=bucket, Key="p/.hidden/x.csv", Body=b"9,2024-01-01")
    plan = plan_of(f"source {{ S3File {{ plugin_output = \"r\", {block}, "
                   "schema = { fields { id = int, day = date } } } }\nsink { Console { } }")
    p = plan.pipelines[0]
    (df,) = s3file.CONNECTOR.read(RunContext(spark, plan, p, "reader"), p.sources[0]).values()
    assert sorted((r.id, r.name) for r in df.collect()) == [(i, f"n{i}") for i in range(3)]


def test_archives_in_a_bucket_are_read_entry_by_entry(spark, plan_of, s3):
    """archive_compress_codec on an object store: Hadoop copies each archive to the driver's spool, where
    its entries are unpacked (tests/runtime/test_archives.py has the rules and the hostile archives)."""
    import io
    import zipfile

    bucket = s3.new_bucket()
    for day, entries in (("1", {"a/x.txt": "id,name\n1,ann\n", "y.txt": "id,name\n2,bob\n"}),
                         ("2", {"z.txt": "id,name\n3,cy\n"})):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            for name, text in entries.items():
                z.writestr(name, text)
        s3.client().put_object(Bucket=bucket, Key=f"zips/day={day}/in.zip", Body=buffer.getvalue())
    block = (f'{s3.options(bucket, "/zips")}, file_format_type = "text", archive_compress_codec = zip, '
             'field_delimiter = ",", skip_header_row_number = 1, schema = { fields { id = int, name = string } }')
    plan = plan_of(f"source {{ S3File {{ plugin_output = \"r\", {block} }} }}\nsink {{ Console {{ }} }}")
    p = plan.pipelines[0]
    (df,) = s3file.CONNECTOR.read(RunContext(spark, plan, p, "reader"), p.sources[0]).values()
    assert sorted(tuple(r) for r in df.select("id", "name", "day").collect()) == [(1, "ann", "1"), (2, "bob", "1"),
                                                                                  (3, "cy", "2")]


def test_the_connector_names_the_s3a_jars_and_keeps_settings_per_bucket():
    jars = s3file.CONNECTOR.jars({}, {})
    assert jars and all(j.endswith(".jar") for j in jars)
    assert any("/hadoop-aws-3.5.0.jar" in j for j in jars) and not any("bundle" in j for j in jars)
    assert s3file.CONNECTOR.jars({}, {"spark.jars": "/opt/jars/hadoop-aws-3.4.1.jar"}) == []
    s = options.settings({"bucket": "s3a://b1", "path": "/x/y/", "fs.s3a.endpoint": "http://127.0.0.1:9",
                          "access_key": "k", "secret_key": "sekrit-v",
                          "hadoop_s3_properties": {"fs.s3a.connection.maximum": "7", "fs.s3a.bucket.b1.x": "1"}})
    assert (s.bucket, s.prefix, s.path_style, s.provider) == ("b1", "x/y", True, options.SIMPLE_PROVIDER)
    conf = options.hadoop_settings(s)
    assert conf["fs.s3a.bucket.b1.secret.key"] == "sekrit-v" and conf["fs.s3a.bucket.b1.connection.maximum"] == "7"
    assert conf["fs.s3a.bucket.b1.x"] == "1" and not [k for k in conf if not k.startswith("fs.s3a.bucket.b1.")]
    assert "sekrit" not in repr(s)
    keys = commits.slot_keys(s, "r", "p", "sink[0]", "t", "r")
    assert keys["fence"] == "x/y/.seatunnel-commits/r/p/sink-0/t.json"
    assert keys["staging"] == "x/y/.seatunnel-staging/r/p/sink-0/t/"
    assert sink.save_mode and source.read


def test_an_attempt_overtaken_between_its_check_and_its_commit_record_loses_the_compare_and_swap(
        spark, plan_of, s3, monkeypatch):
    bucket = s3.new_bucket()
    block = f'{s3.options(bucket, "/out")}, file_format_type = "json"'
    old, vertex = sink_ctx(plan_of, spark, block, "race")
    stale = SINK.prepare(old, vertex, frame(spark, 0, 10))
    keys = slot(bucket, stale.tables[0])
    store = Bucket(s3.client(), bucket, journal_secret=s3_server.SECRET_KEY)
    real_claim = commits.claim_drop

    def overtaken(b, k):  # runs after the old attempt read the fence, before its compare-and-swap
        assert commits.take_token(store, keys) == (None, 2)
        return real_claim(b, k)

    monkeypatch.setattr(commits, "claim_drop", overtaken)
    with pytest.raises(Superseded, match=r"token 1 .* superseded by token 2"):
        SINK.commit(old, vertex, stale)
    fence = commits.read_record(store, keys["root"], keys["fence"])
    assert fence.value == {"token": 2, "commit": None}
    assert visible(s3, bucket) == [] and staging(s3, bucket) == []
    assert not [k for k in s3.keys(bucket) if "/.pending/" in k]
