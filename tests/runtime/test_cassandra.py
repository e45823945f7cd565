"""The Cassandra source and sink against a private Cassandra 5.0 node (tests/cassandra_server.py: embedded
CassandraDaemon from Maven Central's jars, passwords required): SeaTunnel's type mapping read and written back,
the source split by token range over the plan's readers, the sink's writers at the plan's parallelism, the
commit record of a restore, the fence of an overlapping attempt, async and batched writes with fields, and
credentials from an Airflow connection. One node for the module; two Spark jobs, the rest direct sink calls."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import pytest

from airflow_provider_seatunnel.connectors.cassandra import CONNECTOR as CASSANDRA
from airflow_provider_seatunnel.connectors.cassandra import runtime as cruntime
from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext

COLUMNS = ("id int PRIMARY KEY, name text, big bigint, huge varint, uid uuid, price decimal, ratio double, "
           "f float, ok boolean, at timestamp, day date, t time, raw blob, nums list<int>, tags set<text>, "
           "attrs map<text, int>, ip inet, tiny tinyint, small smallint")
KS = "st"


@pytest.fixture(scope="module")
def cassandra_server():
    from tests import cassandra_server

    server = cassandra_server.start()
    print(f"Cassandra started in {server.started_in:.1f} s")
    try:
        server.keyspace(KS)
        yield server
    finally:
        server.stop()


def seed(server, n: int = 40) -> None:
    server.execute(f"CREATE TABLE {KS}.src ({COLUMNS})", f"CREATE TABLE {KS}.dst ({COLUMNS})")
    insert = (f"INSERT INTO {KS}.src (id, name, big, huge, uid, price, ratio, f, ok, at, day, t, raw, nums, tags, "
              "attrs, ip, tiny, small) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
              "%s, %s)")
    rows = [(i, f"n{i}", 10 ** 12 + i, 10 ** 30 + i, uuid.UUID(int=i), decimal.Decimal(f"{i}.25"), i / 4, 1.5,
             i % 2 == 0, dt.datetime(2024, 5, 1, 10, 0, i % 60), dt.date(2024, 5, 1 + i % 28), dt.time(1, 2, 3, 4000),
             bytes([i]), [i, i + 1], {"a", f"t{i}"}, {"k": i}, "10.0.0.1", i % 100, i) for i in range(n)]
    rows.append((n, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None,
                 None, None))
    server.execute(*[insert] * len(rows), params=rows)


def job(server, cql: str, sink: str = "", run_parallel: int = 3) -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ Cassandra {{ plugin_output = "c", {server.options(KS)}, cql = "{cql}",
                              parallelism = {run_parallel} }} }}
        sink {{ Cassandra {{ plugin_input = "c", {server.options(KS)}, table = "dst", parallelism = 2 {sink} }} }}
    """


def test_rows_are_read_by_token_range_and_written_back_with_seatunnels_types(run_job, plan_of, spark,
                                                                             cassandra_server):
    server = cassandra_server
    seed(server)
    plan = plan_of(job(server, "select * from src"))
    pipeline = plan.pipelines[0]
    source = next(v for v in pipeline.vertices if v.kind == "source")
    df = CASSANDRA.read(RunContext(spark, plan, pipeline, "peek"), source)["default"]
    assert df.rdd.getNumPartitions() == 3
    counts = df.rdd.glom().map(len).collect()
    assert sum(counts) == 41 and sum(1 for c in counts if c) >= 2  # the rows spread over the token ranges
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert (types["huge"], types["uid"], types["price"], types["ip"], types["tags"], types["attrs"], types["at"]) == \
        ("string", "string", "double", "string", "array<string>", "map<string,int>", "timestamp_ntz")

    metrics = run_job(job(server, "select * from src"), run_id="R1")
    assert metrics[0]["status"] == "FINISHED"
    assert server.rows(f"{KS}.dst") == server.rows(f"{KS}.src")


def sink_ctx(plan_of, spark, server, run_id: str, sink: str = "", fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ FakeSource {{ plugin_output = "f", row.num = 4, schema = {{ fields {{ k = bigint, v = string }} }} }} }}
        sink {{ Cassandra {{ plugin_input = "f", {server.options(KS)}, table = "kv" {sink} }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 30, partitions: int = 3, tag: str = "v"):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i, f"{tag}{i}", "extra") for i in range(n)], "k bigint, v string, x string")
    return {"default": with_kind(df.repartition(partitions))}


def test_a_restore_rewrites_idempotently_and_an_older_attempt_is_fenced(plan_of, spark, cassandra_server,
                                                                        monkeypatch):
    server = cassandra_server
    server.execute(f"CREATE TABLE {KS}.kv (k bigint PRIMARY KEY, v text, n int)")
    # batched writes of batch_type LOGGED, 7 rows a batch, fields naming a subset of the columns in another order
    sink = ', async_write = false, batch_type = "LOGGED", batch_size = 7, fields = ["v", "k"]'
    ctx, vertex = sink_ctx(plan_of, spark, server, "S1", sink, fault="sink.commit=raise")
    with pytest.raises(faults.InjectedFault):
        CASSANDRA.prepare(ctx, vertex, frame(spark))  # written, killed before its record
    assert len(server.rows(f"{KS}.kv")) == 30
    key = cruntime.commit_id(ctx, vertex, "default")
    commits = f"{KS}.{cruntime.COMMITS}"
    assert server.execute(f"SELECT attempt, committed FROM {commits} WHERE id = %s", params=[[key]])[0] == [(1, False)]

    # an older attempt whose token a newer one took stops at its first group: it writes and records nothing
    real = cruntime.take_token
    monkeypatch.setattr(cruntime, "take_token", lambda session, table, k: real(session, table, k) - 1)
    ctx, vertex = sink_ctx(plan_of, spark, server, "S1", sink)
    with pytest.raises(Exception, match="superseded"):
        CASSANDRA.prepare(ctx, vertex, frame(spark, tag="stale"))
    monkeypatch.setattr(cruntime, "take_token", real)
    assert not any(r[2] and r[2].startswith("stale") for r in server.rows(f"{KS}.kv"))

    # the restore writes every row again: each key once, the run recorded; then nothing more
    CASSANDRA.prepare(ctx, vertex, frame(spark, tag="w"))
    assert server.rows(f"{KS}.kv") == sorted([(i, None, f"w{i}") for i in range(30)], key=repr)
    assert server.execute(f"SELECT attempt, committed FROM {commits} WHERE id = %s", params=[[key]])[0] == [(3, True)]
    CASSANDRA.prepare(ctx, vertex, frame(spark, tag="again"))
    assert server.rows(f"{KS}.kv")[0][2] == "w0"

    # asynchronous single-row writes (the default) of another run: every row awaited
    ctx, vertex = sink_ctx(plan_of, spark, server, "S2", ', fields = ["k", "v"], batch_size = 5')
    CASSANDRA.prepare(ctx, vertex, frame(spark, n=60, tag="a"))
    assert sorted(r[2] for r in server.rows(f"{KS}.kv")) == sorted(f"a{i}" for i in range(60))


def test_config_errors_at_run_time_are_deterministic(plan_of, spark, cassandra_server):
    server = cassandra_server
    server.execute(f"CREATE TABLE IF NOT EXISTS {KS}.kv (k bigint PRIMARY KEY, v text, n int)")  # alone too
    ctx, vertex = sink_ctx(plan_of, spark, server, "E1", ', fields = ["v"]')
    with pytest.raises(Exception, match="primary key column") as info:
        CASSANDRA.prepare(ctx, vertex, frame(spark))
    assert getattr(info.value, "deterministic", False) is True
    ctx, vertex = sink_ctx(plan_of, spark, server, "E2", ', fields = ["k", "nope"]')
    with pytest.raises(Exception, match="'nope' is not a column"):
        CASSANDRA.prepare(ctx, vertex, frame(spark))
    plan = plan_of(job(server, "select * from src").replace('password = "cassandra"', 'password = "wrong-pw"'))
    source = plan.pipelines[0].vertices[0]
    with pytest.raises(Exception, match="check username and password") as info:
        CASSANDRA.read(RunContext(spark, plan, plan.pipelines[0], "x"), source)
    assert "wrong-pw" not in str(info.value) and getattr(info.value, "deterministic", False) is True


def test_cassandra_conn_id_gives_the_address_and_credentials(plan_of, cassandra_server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    server = cassandra_server
    monkeypatch.setenv("AIRFLOW_CONN_CASS", json.dumps({
        "conn_type": "cassandra", "host": "127.0.0.1", "port": server.port, "login": "cassandra",
        "password": "cassandra", "schema": KS}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { FakeSource { plugin_output = "f", row.num = 1, schema = { fields { id = bigint } } } }
        sink { Cassandra { plugin_input = "f", cassandra_conn_id = "cass", table = "t" } }
    """)
    sink = with_connections(plan).pipelines[0].vertices[-1].config
    assert (sink["host"], sink["keyspace"], sink["username"], sink["password"]) == \
        (server.host, KS, "cassandra", "cassandra")


def test_a_keys_last_change_wins_across_a_shuffle(run_job, cassandra_server):
    """Changes dealt over more writers than the source: each key's last change is written (an INSERT writes
    the row whole), never an earlier one that a concurrent writer or a shared batch timestamp let win."""
    from tests import change_rows

    cassandra_server.execute(f"CREATE TABLE {KS}.keyed (id bigint PRIMARY KEY, name text)")
    run_job(f"""env {{ job.mode = "BATCH" }}
        source {{ {change_rows.fake_source()} }}
        sink {{ Cassandra {{ plugin_input = "f", {cassandra_server.options(KS)}, table = "keyed", parallelism = 3 }} }}""")
    assert sorted(cassandra_server.rows(f"{KS}.keyed")) == [(k, change_rows.LAST) for k in range(change_rows.KEYS)]
