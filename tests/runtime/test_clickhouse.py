"""The Clickhouse source and sink against the ClickHouse stand-in (tests/clickhouse_server.py: ClickHouse's
engine, chDB, behind a loopback HTTP server with authentication): types read as SeaTunnel maps them and
written back unchanged, the source's one reader among the plan's partitions, a restore that finishes a
killed publish exactly once, an overtaken attempt superseded, rows applied by primary_key (upsert and
delete), change rows refused without one, and credentials from an Airflow connection."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from airflow_provider_seatunnel.connectors.clickhouse import CONNECTOR as CH
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError
from airflow_provider_seatunnel.spi.fencing import Superseded

SINK = twophase.driver(CH)
TYPES = ("id Int64, i8 Int8, u8 UInt8, i16 Int16, u16 UInt16, i32 Int32, u32 UInt32, u64 UInt64, f32 Float32, "
         "f64 Float64, dec Decimal(20, 4), b Bool, d Date, d32 Date32, ts DateTime, ts64 DateTime64(6), s String, "
         "fs FixedString(3), u UUID, e Enum8('a' = 1, 'b' = 2), ns Nullable(String), lc LowCardinality(String), "
         "ai Array(Int32), astr Array(Nullable(String)), m Map(String, Int64), big Int128")
VALUES = ("(1, -8, 200, -16000, 65000, -2000000000, 4000000000, 9000000000000000000, 1.5, 2.25, "
          "'1234567890123456.7891', true, '2024-02-29', '1900-01-01', '2024-01-02 03:04:05', "
          "'2024-01-02 03:04:05.123456', 'héllo\\t\"x\"', 'abc', '00000000-0000-0000-0000-000000000001', 'b', NULL, "
          "'low', [1, 2, 3], ['x', NULL], {'k': 7}, -170141183460469231731687303715884105728), "
          "(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, '1970-01-01', '2299-12-31', '1970-01-01 00:00:00', "
          "'2000-01-01 00:00:00', '', '', '00000000-0000-0000-0000-000000000000', 'a', 'n', '', [], [], {}, 0)")


@pytest.fixture(scope="module")
def ch():
    from tests import clickhouse_server

    with clickhouse_server.running() as server:
        yield server


def options(server) -> str:
    return f'host = "{server.host}:{server.port}", username = "{server.user}", password = "{server.password}"'


def test_types_read_as_seatunnel_maps_them_and_written_back_unchanged(ch, run_job, plan_of, spark):
    ch.query("CREATE DATABASE IF NOT EXISTS src")
    ch.query(f"CREATE TABLE src.types ({TYPES}) ENGINE = MergeTree ORDER BY id")
    ch.query(f"INSERT INTO src.types VALUES {VALUES}")
    ch.query("CREATE TABLE src.copy AS src.types")
    source = f'Clickhouse {{ plugin_output = "c", {options(ch)}, database = "src", sql = "select * from types" }}'
    plan = plan_of(f'env {{ job.mode = "BATCH", parallelism = 3 }}\nsource {{ {source} }}\n'
                   'sink { Console { plugin_input = "c" } }')
    vertex = plan.pipelines[0].vertices[0]
    df = CH.read(RunContext(spark, plan, plan.pipelines[0], "read"), vertex)["default"]
    assert df.rdd.getNumPartitions() == vertex.parallelism == 3  # one reader runs the query, as SeaTunnel's split
    assert ch.password not in df._jdf.queryExecution().toString()
    kinds = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert [kinds[c] for c in ("i8", "u8", "i16", "u16", "i32", "u32", "u64", "f32", "f64", "dec", "b", "d", "ts64",
                               "fs", "u", "e", "ai", "astr", "m", "big")] == [
        "tinyint", "smallint", "smallint", "int", "int", "bigint", "bigint", "float", "double", "decimal(20,4)",
        "boolean", "date", "timestamp_ntz", "string", "string", "string", "array<int>", "array<string>",
        "map<string,bigint>", "string"]
    first = df.orderBy("id").first().asDict()
    assert (first["u64"], first["dec"], first["d32"], first["ts64"], first["s"], first["ns"], first["astr"],
            first["m"], first["big"]) == (
        9000000000000000000, decimal.Decimal("1234567890123456.7891"), dt.date(1900, 1, 1),
        dt.datetime(2024, 1, 2, 3, 4, 5, 123456), 'héllo\t"x"', None, ["x", None], {"k": 7},
        "-170141183460469231731687303715884105728")
    # the same rows through the sink (bulk_size 1: a request per row) land unchanged
    sink = f'Clickhouse {{ plugin_input = "c", {options(ch)}, database = "src", table = "copy", bulk_size = 1 }}'
    metrics = run_job(f'env {{ job.mode = "BATCH", parallelism = 2 }}\nsource {{ {source} }}\nsink {{ {sink} }}')
    assert metrics[0]["status"] == "FINISHED"
    assert ch.rows("SELECT * FROM src.copy ORDER BY id") == ch.rows("SELECT * FROM src.types ORDER BY id")
    assert not ch.rows("SELECT name FROM system.tables WHERE database = '_seatunnel' AND name NOT LIKE 'done_%'")
    with pytest.raises(Exception, match="UInt64 value"):  # SeaTunnel would wrap it negative
        ch.query("INSERT INTO src.types (id, u64) VALUES (3, 18446744073709551615)")
        CH.read(RunContext(spark, plan, plan.pipelines[0], "read2"), vertex)["default"].collect()


def sink_ctx(plan_of, spark, server, extra: str, run_id: str, attempt: int = 1, fault: str | None = None,
             table: str = "t"):
    plan = plan_of('env { job.mode = "BATCH", parallelism = 2 }\nsource { FakeSource { plugin_output = "f", '
                   'schema = { fields { id = bigint, p = int, s = string } } } }\n'
                   f'sink {{ Clickhouse {{ plugin_input = "f", {options(server)}, database = "w", table = "{table}", '
                   f'parallelism = 2, {extra} }} }}')
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, rows, shuffled: bool = True):
    """rows: (kind, id, p, s); ``shuffled``: dealt round-robin over 2 partitions (else in order, contiguous)."""
    from pyspark.sql import functions as F

    from airflow_provider_seatunnel.spi.rows import ROW_KIND

    df = spark.createDataFrame([(i, p, s, k) for k, i, p, s in rows], "id bigint, p int, s string, k tinyint")
    df = df.withColumnRenamed("k", ROW_KIND).withColumn(ROW_KIND, F.col(ROW_KIND).cast("tinyint"))
    return {"default": df.repartition(2) if shuffled else df.coalesce(2)}


def test_a_killed_publish_is_finished_once_and_an_overtaken_attempt_is_superseded(ch, plan_of, spark):
    ch.query("CREATE DATABASE IF NOT EXISTS w")
    ch.query("CREATE TABLE w.t (id Int64, p Int32, s String) ENGINE = MergeTree PARTITION BY p ORDER BY id")
    ch.query("INSERT INTO w.t VALUES (-1, 0, 'earlier')")
    rows = [(0, i, i % 3, f"r{i}") for i in range(30)]
    ctx, vertex = sink_ctx(plan_of, spark, ch, "bulk_size = 4", "R1", fault="sink.write=raise+3")
    with pytest.raises(Exception, match="injected fault"):  # a write task fails: nothing visible, staging gone
        SINK.prepare(ctx, vertex, frame(spark, rows))
    assert ch.rows("SELECT count() AS n FROM w.t") == [{"n": 1}]
    ctx2, _ = sink_ctx(plan_of, spark, ch, "bulk_size = 4", "R1", attempt=2, fault="sink.move@2+2")
    info2 = SINK.prepare(ctx2, vertex, frame(spark, rows))
    assert info2.tables[0].rows == 30 and info2.tables[0].token == 2
    with pytest.raises(faults.InjectedFault):  # the driver dies after two of the staged partitions moved
        SINK.commit(ctx2, vertex, info2)
    assert 1 < ch.rows("SELECT count() AS n FROM w.t")[0]["n"] < 31
    ctx3, _ = sink_ctx(plan_of, spark, ch, "bulk_size = 4", "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark, rows))  # the restore finishes attempt 2's claimed publish
    assert info3.tables[0].committed
    SINK.commit(ctx3, vertex, info3)
    assert sorted(r["id"] for r in ch.rows("SELECT id FROM w.t")) == list(range(-1, 30))
    # overlapping attempts of another run: the newer commits, the older is superseded and writes nothing
    old, _ = sink_ctx(plan_of, spark, ch, "bulk_size = 4", "R2")
    info_old = SINK.prepare(old, vertex, frame(spark, [(0, 100 + i, 1, "n") for i in range(5)]))
    new, _ = sink_ctx(plan_of, spark, ch, "bulk_size = 4", "R2", attempt=2)
    SINK.commit(new, vertex, SINK.prepare(new, vertex, frame(spark, [(0, 100 + i, 1, "n") for i in range(5)])))
    with pytest.raises(Superseded):
        SINK.commit(old, vertex, info_old)
    assert ch.rows("SELECT count() AS n FROM w.t WHERE id >= 100") == [{"n": 5}]
    assert not ch.rows("SELECT name FROM system.tables WHERE database = '_seatunnel' AND name NOT LIKE 'done_%'")


def test_a_buffer_target_gets_its_rows_once_and_only_at_the_commit(ch, plan_of, spark):
    """A target whose engine passes rows on (Buffer here, Distributed alike) is staged into plain MergeTree
    tables: a staging table ``AS`` the target would send the staged rows on to its real table at once, and
    the publish's INSERT a second time."""
    ch.query("CREATE DATABASE IF NOT EXISTS w")
    ch.query("CREATE TABLE w.dest (id Int64, p Int32, s String) ENGINE = MergeTree ORDER BY id")
    ch.query("CREATE TABLE w.buf AS w.dest ENGINE = Buffer(w, dest, 1, 0, 0, 1, 1, 1, 1)")
    ctx, vertex = sink_ctx(plan_of, spark, ch, "bulk_size = 4", "B1", table="buf")
    info = SINK.prepare(ctx, vertex, frame(spark, [(0, i, 1, "b") for i in range(10)]))
    assert ch.rows("SELECT count() AS n FROM w.dest") == [{"n": 0}]  # nothing before the commit
    SINK.commit(ctx, vertex, info)
    ch.query("OPTIMIZE TABLE w.buf")  # flush what the Buffer holds
    assert sorted(r["id"] for r in ch.rows("SELECT id FROM w.dest")) == list(range(10))


def test_rows_are_applied_by_primary_key_and_change_rows_need_one(ch, plan_of, spark):
    ch.query("CREATE DATABASE IF NOT EXISTS w")
    ch.query("CREATE TABLE w.k (id Int64, p Int32, s String) ENGINE = MergeTree ORDER BY id")
    ch.query("CREATE TABLE w.r (id Int64, p Int32, s String) ENGINE = ReplacingMergeTree ORDER BY id")
    ch.query("INSERT INTO w.k VALUES (1, 0, 'old1'), (2, 0, 'old2'), (9, 0, 'kept')")
    ch.query("INSERT INTO w.r VALUES (1, 0, 'old1'), (2, 0, 'old2'), (9, 0, 'kept')")
    # SeaTunnel's own changelog case: duplicates of 3, an update of 1, a delete of 2 (kinds 0 +I, 1 -U, 2 +U, 3 -D)
    changes = [(0, 3, 0, "C"), (0, 3, 0, "C"), (0, 4, 0, "D"), (1, 1, 0, "old1"), (2, 1, 0, "A_1"),
               (3, 2, 0, "old2"), (0, 5, 0, "E"), (3, 5, 0, "E")]
    for table, extra in (("k", "primary_key = \"id\", support_upsert = true"),
                         ("r", "primary_key = \"id\", allow_experimental_lightweight_delete = true")):
        ctx, vertex = sink_ctx(plan_of, spark, ch, extra, f"K-{table}", table=table)
        SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, frame(spark, changes, shuffled=False)))
        final = " FINAL" if table == "r" else ""
        assert ch.rows(f"SELECT id, s FROM w.{table}{final} ORDER BY id") == [
            {"id": 1, "s": "A_1"}, {"id": 3, "s": "C"}, {"id": 4, "s": "D"}, {"id": 9, "s": "kept"}]
    ctx, vertex = sink_ctx(plan_of, spark, ch, "bulk_size = 10", "K-none", table="k")
    with pytest.raises(Exception, match="without primary_key"):
        SINK.prepare(ctx, vertex, frame(spark, changes))
    assert ch.rows("SELECT count() AS n FROM w.k") == [{"n": 4}]


def test_credentials_come_from_a_connection_and_a_wrong_password_never_shows(ch, plan_of, monkeypatch):
    from airflow_provider_seatunnel.connectors.clickhouse import client
    from airflow_provider_seatunnel.connectors.clickhouse.options import Endpoint
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    monkeypatch.setenv("AIRFLOW_CONN_CH", json.dumps({
        "conn_type": "clickhouse", "host": ch.host, "port": ch.port, "login": ch.user, "password": ch.password,
        "schema": "w"}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { Clickhouse { plugin_output = "c", clickhouse_conn_id = "ch", database = "w", sql = "select 1" } }
        sink { Clickhouse { plugin_input = "c", clickhouse_conn_id = "ch", database = "w", table = "t" } }
    """)
    assert ch.password not in json.dumps(plan.to_dict())
    source, _ = (v.config for v in with_connections(plan).pipelines[0].vertices)
    assert (source["host"], source["username"], source["password"]) == (f"{ch.host}:{ch.port}", ch.user, ch.password)
    with pytest.raises(RuntimeConfigError) as info:
        client.execute(Endpoint((f"{ch.host}:{ch.port}",), ch.user, "wrong-secret"), "SELECT 1")
    assert "516" in str(info.value) and "wrong-secret" not in str(info.value)
    with pytest.raises(DataError, match="Code: 62"):  # a syntax error is deterministic
        client.execute(Endpoint((f"{ch.host}:{ch.port}",), ch.user, ch.password), "SELEC 1")


def test_a_sink_keeps_to_its_first_host_and_a_source_moves_on(ch, plan_of, spark):
    """The sink's staging, tokens and commit record stay on the first host: with it down, the commit fails
    (transient, for Airflow to retry) and writes nothing to the next host; a source moves on to it."""
    from airflow_provider_seatunnel.connectors.clickhouse.client import ClickhouseError
    from tests.servers import free_port

    ch.query("CREATE DATABASE IF NOT EXISTS w")
    ch.query("CREATE TABLE w.pin (id Int64, p Int32, s String) ENGINE = MergeTree ORDER BY id")
    down = f"127.0.0.1:{free_port()}"
    two_hosts = f'host = "{down},{ch.host}:{ch.port}", username = "{ch.user}", password = "{ch.password}"'
    plan = plan_of('env { job.mode = "BATCH" }\n'
                   f'source {{ Clickhouse {{ plugin_output = "c", {two_hosts}, database = "w", sql = "select 7 AS n" }} }}\n'
                   f'sink {{ Clickhouse {{ plugin_input = "c", {two_hosts}, database = "w", table = "pin" }} }}')
    source, sink = plan.pipelines[0].vertices
    ctx = RunContext(spark, plan, plan.pipelines[0], "PIN")
    bookkeeping = "SELECT name FROM system.tables WHERE database = '_seatunnel' ORDER BY name"
    before = ch.rows(bookkeeping)
    assert [r["n"] for r in CH.read(ctx, source)["default"].collect()] == [7]
    with pytest.raises(ClickhouseError, match=down):
        SINK.prepare(ctx, sink, frame(spark, [(0, 1, 1, "a")]))
    assert ch.rows("SELECT count() AS n FROM w.pin") == [{"n": 0}]
    assert ch.rows(bookkeeping) == before
