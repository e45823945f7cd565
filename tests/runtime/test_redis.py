"""The Redis source and sink against a private redis-server (tests/redis_server.py, with a password):
each data type written and read, key patterns, expire, parallelism, exactly-once restores and the
fencing of an overlapping older attempt, credentials from an Airflow connection."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.redis import CONNECTOR as REDIS
from airflow_provider_seatunnel.connectors.redis.staging import PREFIX
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext

SINK = twophase.driver(REDIS)  # the engine's two phases over the sink's storage verbs

ROWS = [(1, "ann", 30, True), (2, "bob", 41, False), (3, "cy", 25, True)]


@pytest.fixture(scope="session")
def redis_server():
    from tests import redis_server

    with redis_server.running() as server:
        yield server


@pytest.fixture
def r(redis_server):
    client = redis_server.client()
    client.flushall()
    yield client
    client.close()


def fake(rows=ROWS, fields="id = bigint, name = string, age = int, ok = boolean", parallelism: int | None = None):
    listed = ", ".join(f"{{ kind = INSERT, fields = {json.dumps(list(v))} }}" for v in rows)
    par = f", parallelism = {parallelism}" if parallelism else ""
    return (f'FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {fields} }} }}, rows = [{listed}]{par} }}')


def sink_job(server, *sinks: str, source: str | None = None, env: str = "") -> str:
    blocks = "\n".join(f'Redis {{ plugin_input = "fake", {server.options()}, {s} }}' for s in sinks)
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 {env} }}
        source {{ {source or fake()} }}
        sink {{ {blocks} }}
    """


def visible(r) -> list[str]:
    """Keys a reader sees (the sink's bookkeeping keys left out)."""
    return sorted(k for k in r.keys("*") if not k.startswith(PREFIX))


def staging(r) -> list[str]:
    return sorted(k for k in r.keys(f"{PREFIX}stage:*"))


# ------------------------------------------------------------------------------------------------
# sink: each data type
# ------------------------------------------------------------------------------------------------

def test_each_data_type_is_written_as_seatunnel_writes_it(run_job, redis_server, r):
    r.set("other", "kept")
    metrics = run_job(sink_job(
        redis_server,
        'key = "name", data_type = key',                      # a field's value is the key: one key per row
        'key = "people_list", data_type = list',               # a literal key: LPUSH each row's JSON
        'key = "people_set", data_type = set, format = text',  # text: the fields joined by ','
        'key = "people_zset", data_type = zset, expire = 100',  # ZADD with score 1
        'key = "id", data_type = hash',                         # one hash per row, a field per column
    ))
    assert metrics[0]["status"] == "FINISHED"
    assert r.get("ann") == '{"id":1,"name":"ann","age":30,"ok":true}'
    assert json.loads(r.get("bob")) == {"id": 2, "name": "bob", "age": 41, "ok": False}
    assert sorted(json.loads(v)["id"] for v in r.lrange("people_list", 0, -1)) == [1, 2, 3]
    assert r.smembers("people_set") == {"1,ann,30,true", "2,bob,41,false", "3,cy,25,true"}
    assert [(json.loads(m)["id"], s) for m, s in sorted(r.zrange("people_zset", 0, -1, withscores=True))] == \
        [(1, 1.0), (2, 1.0), (3, 1.0)]
    assert r.hgetall("2") == {"id": "2", "name": "bob", "age": "41", "ok": "false"}
    assert 0 < r.ttl("people_zset") <= 100 and r.ttl("ann") == -1  # expire only where set
    assert r.get("other") == "kept" and staging(r) == []
    assert sorted(visible(r)) == sorted(["1", "2", "3", "ann", "bob", "cy", "other", "people_list", "people_set",
                                         "people_zset"])


def test_a_key_of_another_type_fails_the_commit_and_writes_nothing(run_job, redis_server, r):
    r.set("people_list", "a string")
    with pytest.raises(Exception, match="holds a string, not a list"):
        run_job(sink_job(redis_server, 'key = "people_list", data_type = list'))
    assert r.get("people_list") == "a string" and staging(r) == []


# ------------------------------------------------------------------------------------------------
# source: each data type, patterns, formats
# ------------------------------------------------------------------------------------------------

def read_rows(plan_of, spark, text: str) -> tuple[list[tuple], int, int]:
    """The rows the job's Redis source reads, its partitions and the vertex's parallelism."""
    plan = plan_of(text)
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.plugin == "Redis")
    df = REDIS.read(RunContext(spark, plan, pipeline, "read"), vertex)["default"]
    rows = [tuple(r)[:-1] for r in df.collect()]  # the row-kind column left out
    return sorted(rows, key=repr), df.rdd.getNumPartitions(), vertex.parallelism


def source_job(server, options: str, parallelism: int = 3) -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ Redis {{ plugin_output = "r", {server.options()}, parallelism = {parallelism}, {options} }} }}
        sink {{ Console {{ plugin_input = "r" }} }}
    """


def test_each_data_type_is_read_with_patterns_and_formats(plan_of, spark, redis_server, r):
    for i in range(5):
        r.set(f"user:{i}", json.dumps({"id": i, "name": f"u{i}", "tags": ["a", str(i)]}))
    r.set("other:1", json.dumps({"id": 99}))
    r.rpush("user:list", "x")  # of another type: the TYPE filter skips it
    r.rpush("q:1", "b", "a")
    r.rpush("q:2", "c")
    r.sadd("s:1", "m1", "m2")
    r.zadd("z:1", {"low": 1, "high": 5})
    r.hset("h:1", mapping={"name": "ann", "age": "26"})
    r.hset("h:2", mapping={"name": "bob", "age": "41"})
    r.hset("nested", mapping={"001": json.dumps({"name": "ann", "age": 26}),
                              "002": json.dumps({"name": "bob", "age": "41"})})
    r.set(f"{PREFIX}commit:abc", "bookkeeping")  # never read

    rows, parts, par = read_rows(plan_of, spark, source_job(
        redis_server, 'keys = "user:*", data_type = key, format = json, '
                      'schema = { fields { id = int, name = string, tags = "array<string>" } }'))
    assert rows == [(i, f"u{i}", ["a", str(i)]) for i in range(5)] and parts == par == 3
    rows, parts, _ = read_rows(plan_of, spark, source_job(redis_server, 'keys = "*", data_type = string', 2))
    assert len(rows) == 6 and all(len(r) == 1 for r in rows) and parts == 2  # content only, no bookkeeping
    rows, _, _ = read_rows(plan_of, spark, source_job(redis_server, 'keys = "q:*", data_type = list'))
    assert rows == [("a",), ("b",), ("c",)]
    rows, _, _ = read_rows(plan_of, spark, source_job(redis_server, 'keys = "s:*", data_type = set'))
    assert rows == [("m1",), ("m2",)]
    rows, _, _ = read_rows(plan_of, spark, source_job(redis_server, 'keys = "z:*", data_type = zset'))
    assert rows == [("high",), ("low",)]
    rows, _, _ = read_rows(plan_of, spark, source_job(redis_server, 'keys = "h:*", data_type = hash'))
    assert sorted((json.loads(c) for (c,) in rows), key=repr) == [{"name": "ann", "age": "26", "hash_key": "h:1"},
                                                                  {"name": "bob", "age": "41", "hash_key": "h:2"}]
    rows, _, _ = read_rows(plan_of, spark, source_job(
        redis_server, 'keys = "h:*", data_type = hash, format = json, '
                      'schema = { fields { hash_key = string, name = string, age = int } }'))
    assert rows == [("h:1", "ann", 26), ("h:2", "bob", 41)]
    rows, _, _ = read_rows(plan_of, spark, source_job(
        redis_server, 'keys = "nested", data_type = hash, format = json, hash_key_parse_mode = kv, '
                      'schema = { fields { hash_key = string, name = string, age = int } }'))
    assert rows == [("001", "ann", 26), ("002", "bob", 41)]
    rows, _, _ = read_rows(plan_of, spark, source_job(
        redis_server, 'keys = "nested", data_type = hash, format = json, hash_key_parse_mode = all, '
                      'schema = { fields { "001" = { name = string, age = int }, "002" = { name = string } } }'))
    assert [tuple(tuple(c) for c in row) for row in rows] == [(("ann", 26), ("bob",))]


def test_a_value_that_is_not_json_fails_the_read(plan_of, spark, redis_server, r):
    r.set("bad:1", "not json")
    with pytest.raises(Exception, match="is not JSON"):
        read_rows(plan_of, spark, source_job(redis_server, 'keys = "bad:*", data_type = key, format = json, '
                                                           'schema = { fields { id = int } }', 1))


def test_a_wrong_password_is_a_configuration_error_that_never_shows_it(plan_of, spark, redis_server, r):
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    text = source_job(redis_server, 'keys = "*", data_type = key').replace(redis_server.password, "wrong-secret")
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, text)
    assert "WRONGPASS" in str(info.value) or "invalid username-password" in str(info.value)
    assert "wrong-secret" not in str(info.value)
    plan = plan_of(source_job(redis_server, 'keys = "*", data_type = key'))
    vertex = plan.pipelines[0].vertices[0]
    df = REDIS.read(RunContext(spark, plan, plan.pipelines[0], "read"), vertex)["default"]
    shown = df._jdf.queryExecution().toString()
    assert redis_server.password not in shown and redis_server.password not in json.dumps(plan.to_dict())
    with pytest.raises(RuntimeConfigError, match="invalid username-password"):
        from airflow_provider_seatunnel.connectors.redis.client import connected
        from airflow_provider_seatunnel.connectors.redis.options import Endpoint

        with connected(Endpoint(redis_server.host, redis_server.port, 0, None, "wrong-secret"), "ping") as c:
            c.ping()


# ------------------------------------------------------------------------------------------------
# parallelism, exactly-once, fencing
# ------------------------------------------------------------------------------------------------

def sink_ctx(plan_of, spark, server, options: str, run_id: str, attempt: int = 1, fault: str | None = None,
             sink_parallelism: int = 3):
    text = sink_job(server, f'{options}, parallelism = {sink_parallelism}',
                    source=fake([(i, f"n{i}", i, True) for i in range(12)]))
    plan = plan_of(text)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    vertex = next(v for v in pipeline.vertices if v.kind == "sink")
    return ctx, vertex


def frame(spark, n: int = 12, partitions: int = 3):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i, f"n{i}", i, True) for i in range(n)], "id bigint, name string, age int, ok boolean")
    return {"default": with_kind(df.repartition(partitions))}


def test_a_failed_attempt_leaves_nothing_and_the_restore_writes_once(plan_of, spark, redis_server, r):
    r.rpush("l", "old")
    options = 'key = "l", data_type = list, expire = 500'
    # attempt 1: a write task fails after 2 rows; the engine aborts the sink
    ctx, vertex = sink_ctx(plan_of, spark, redis_server, options, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert r.lrange("l", 0, -1) == ["old"] and staging(r) == [] and r.ttl("l") == -1
    # attempt 2 stages, then dies in the commit before the script (no abort: a killed driver)
    ctx2, _ = sink_ctx(plan_of, spark, redis_server, options, "R1", attempt=2, fault="sink.move@2")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info2)
    assert r.lrange("l", 0, -1) == ["old"] and len(staging(r)) == 3  # staged, invisible
    # attempt 3 (the restore): deletes attempt 2's staging, writes every row once
    ctx3, _ = sink_ctx(plan_of, spark, redis_server, options, "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark, partitions=vertex.parallelism))
    entry = info3.tables[0]  # the plan's parallelism: one writer, one staging list, per partition
    assert vertex.parallelism == 3 and len(entry.parts) == 3 and sorted(entry.detail["partitions"]) == [0, 1, 2]
    assert entry.rows == 12 and r.lrange("l", 0, -1) == ["old"]
    SINK.commit(ctx3, vertex, info3)
    values = r.lrange("l", 0, -1)
    assert len(values) == 13 and sorted(json.loads(v)["id"] for v in values[:-1]) == list(range(12))
    assert 0 < r.ttl("l") <= 500 and staging(r) == []
    # a commit repeated after a crash, and a later attempt of the same run, write nothing more
    SINK.commit(ctx3, vertex, info3)
    ctx4, _ = sink_ctx(plan_of, spark, redis_server, options, "R1", attempt=4)
    info4 = SINK.prepare(ctx4, vertex, frame(spark))
    assert info4.tables[0].committed
    SINK.commit(ctx4, vertex, info4)
    assert r.llen("l") == 13 and staging(r) == []
    # another run id is another commit
    ctx5, _ = sink_ctx(plan_of, spark, redis_server, options, "R2")
    SINK.commit(ctx5, vertex, SINK.prepare(ctx5, vertex, frame(spark, n=2)))
    assert r.llen("l") == 15


# ------------------------------------------------------------------------------------------------
# credentials from an Airflow connection
# ------------------------------------------------------------------------------------------------

def test_redis_conn_id_gives_host_port_and_credentials(plan_of, redis_server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    monkeypatch.setenv("AIRFLOW_CONN_CACHE", json.dumps({
        "conn_type": "redis", "host": redis_server.host, "port": redis_server.port, "password": redis_server.password,
        "extra": {"db": 3}}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { Redis { plugin_output = "r", redis_conn_id = "cache", keys = "*", data_type = key } }
        sink { Redis { plugin_input = "r", redis_conn_id = "cache", db_num = 4, key = "k", data_type = list } }
    """)
    assert redis_server.password not in json.dumps(plan.to_dict())
    source, sink = (v.config for v in with_connections(plan).pipelines[0].vertices)
    assert (source["host"], source["port"], source["auth"], source["db_num"]) == \
        (redis_server.host, redis_server.port, redis_server.password, 3)
    assert sink["db_num"] == 4  # what the block sets wins


def test_a_data_error_inside_a_spark_task_stays_deterministic(plan_of, spark, redis_server, r):
    """A value that breaks the job, found by a Python worker, is a DataError (not retried), not a
    transient failure."""
    from airflow_provider_seatunnel.spi.errors import DataError, error_from

    r.set("worse:1", "not json")
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, source_job(redis_server, 'keys = "worse:*", data_type = key, format = json, '
                                                           'schema = { fields { id = int } }', 1))
    classified = error_from(info.value, "source[0] Redis", "p")
    assert isinstance(classified, DataError) and classified.deterministic
    assert "is not JSON" in classified.cause


def test_a_streaming_pipeline_writes_each_micro_batch(spark, redis_server, r, write_conf, tmp_path):
    """A micro-batch's rows belong to a session of their own (cloned when the query started): the sink's
    Python data source is registered with that session, not only with the pipeline's."""
    from airflow_provider_seatunnel.plan import compile_job
    from airflow_provider_seatunnel.runtime.executor import RunContext
    from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

    text = f"""
        env {{ job.mode = "STREAMING", parallelism = 1, checkpoint.root = "{tmp_path}/cp",
               streaming.trigger = "available_now" }}
        source {{ {fake()} }}
        sink {{ Redis {{ plugin_input = "fake", {redis_server.options()}, key = "streamed", data_type = list }} }}
    """
    plan = compile_job(write_conf(text, "stream.conf"), None, use_cache=False)
    metrics = run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], "stream-1"))
    assert metrics["write_count"] == len(ROWS) == r.llen("streamed")


def test_a_keys_last_change_wins_across_a_shuffle(run_job, redis_server, r):
    """A key field's rows dealt over more writers than the source go through one writer in arrival order:
    each key holds the value of its last change."""
    from tests import change_rows

    run_job(sink_job(redis_server, 'key = "id", data_type = key, parallelism = 3',
                     source=change_rows.fake_source("fake")))
    assert {k: json.loads(r.get(str(k)))["name"] for k in range(change_rows.KEYS)} == \
        {k: change_rows.LAST for k in range(change_rows.KEYS)}
