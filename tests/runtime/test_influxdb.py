"""The InfluxDB source and sink against a private influxd (tests/influxdb_server.py, authentication on):
points written as SeaTunnel types them, a split query read at the plan's parallelism, a restore that rolls
a killed publish forward without duplicates, an overtaken attempt superseded, credentials from an Airflow
connection, and the compile-time checks."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.influxdb import CONNECTOR as INFLUX
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import Superseded

SINK = twophase.driver(INFLUX)
FIELDS = ("label = string, c_string = string, c_double = double, c_bigint = bigint, c_float = float, "
          "c_int = int, c_smallint = smallint, c_boolean = boolean, time = bigint")
ROWS = [(f"label_{i % 2}", f"s {i}, \"q\"", i + 0.5, 200 + i, 2.5, i, 5, i % 2 == 0, 1627529632356 + i)
        for i in range(8)]


@pytest.fixture(scope="module")
def influx():
    from tests import influxdb_server

    with influxdb_server.running() as server:
        yield server


@pytest.fixture
def db(influx):
    influx.reset("test")
    influx.execute('DROP DATABASE "_seatunnel"')
    from airflow_provider_seatunnel.connectors.influxdb import staging

    staging._READY.clear()
    return influx


def fake(rows=ROWS, fields=FIELDS) -> str:
    listed = ", ".join(f"{{ kind = INSERT, fields = {json.dumps(list(v))} }}" for v in rows)
    return f'FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {fields} }} }}, rows = [{listed}] }}'


def sink_job(server, *sinks: str) -> str:
    blocks = "\n".join(f'InfluxDB {{ plugin_input = "fake", {server.options()}, database = "test", {s} }}'
                       for s in sinks)
    return f'env {{ job.mode = "BATCH", parallelism = 1 }}\nsource {{ {fake()} }}\nsink {{ {blocks} }}'


def test_points_are_written_as_seatunnel_types_them_and_read_back_split(run_job, plan_of, spark, db):
    metrics = run_job(sink_job(db, 'measurement = "sink", key_time = "time", key_tags = ["label"], batch_size = 3, '
                                   'parallelism = 2',
                               'measurement = "proc", key_tags = ["label"], batch_size = 2'))
    assert metrics[0]["status"] == "FINISHED"
    points = sorted(db.query("SELECT * FROM sink", "test"), key=lambda p: p["time"])
    assert [(p["label"], p["c_string"], p["c_double"], p["c_bigint"], p["c_int"], p["c_boolean"], p["time"])
            for p in points] == [(r[0], r[1], r[2], r[3], r[5], r[7], r[8]) for r in ROWS]
    types = {row["fieldKey"]: row["fieldType"] for row in db.query("SHOW FIELD KEYS FROM sink", "test")}
    assert types == {"c_string": "string", "c_double": "float", "c_bigint": "integer", "c_float": "float",
                     "c_int": "integer", "c_smallint": "integer", "c_boolean": "boolean"}  # time is no field
    # without key_time: the staging time plus the row's number, so no two rows of one series collide
    proc = db.query("SELECT * FROM proc", "test")
    assert len(proc) == 8 and len({(p["label"], p["time"]) for p in proc}) == 8
    assert sorted(p["c_int"] for p in proc) == list(range(8)) and all(p["time"] > 1.7e18 for p in proc)
    assert db.query('SELECT * FROM "commits"', "_seatunnel") and not db.query('SELECT * FROM "staging"."stage"',
                                                                              "_seatunnel")

    # the source: 3 split queries on c_int over 2 readers; the declared fields in order, time included
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ InfluxDB {{ plugin_output = "i", {db.options()}, database = "test",
            sql = "select label, c_string, c_double, c_int, c_boolean from sink where c_bigint >= 201",
            split_column = "c_int", lower_bound = 0, upper_bound = 7, partition_num = 3,
            schema = {{ fields {{ time = bigint, label = string, c_int = int, c_double = double,
                                 c_boolean = boolean, c_string = string }} }} }} }}
        sink {{ Console {{ plugin_input = "i" }} }}
    """)
    vertex = plan.pipelines[0].vertices[0]
    df = INFLUX.read(RunContext(spark, plan, plan.pipelines[0], "read"), vertex)["default"]
    assert df.rdd.getNumPartitions() == vertex.parallelism == 2
    rows = sorted(tuple(r)[:6] for r in df.collect())
    assert rows == [(r[8], r[0], r[5], r[2], r[7], r[1]) for r in ROWS[1:]]
    assert db.password not in df._jdf.queryExecution().toString()


def sink_ctx(plan_of, spark, server, options: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(sink_job(server, options + ", parallelism = 2"))
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12):
    from airflow_provider_seatunnel.spi.rows import with_kind

    rows = [(f"l{i % 3}", f"s{i}", float(i), i, 1.0, i, 1, True, 1000 + i) for i in range(n)]
    df = spark.createDataFrame(rows, "label string, c_string string, c_double double, c_bigint bigint, c_float float, "
                                     "c_int int, c_smallint smallint, c_boolean boolean, time bigint")
    return {"default": with_kind(df.repartition(2))}


def test_a_killed_publish_is_rolled_forward_by_the_restore_without_duplicates(plan_of, spark, db):
    """Without key_time each attempt's points carry its staging time: a restore that staged again would
    duplicate the points a killed publish wrote; it rolls the claimed attempt's staging forward instead."""
    db.write("test", ["proc,label=old c_int=-1i 5"])
    options = 'measurement = "proc", key_tags = ["label"], batch_size = 5'
    ctx, vertex = sink_ctx(plan_of, spark, db, options, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):  # a write task fails: nothing visible, staging gone
        SINK.prepare(ctx, vertex, frame(spark))
    assert len(db.query("SELECT * FROM proc", "test")) == 1
    assert not db.query('SELECT * FROM "staging"."stage"', "_seatunnel")
    ctx2, _ = sink_ctx(plan_of, spark, db, options, "R1", attempt=2, fault="sink.move@2+1")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    assert info2.tables[0].rows == 12 and len(info2.tables[0].parts) == 2
    with pytest.raises(faults.InjectedFault):  # the driver dies after the first request of 5 points
        SINK.commit(ctx2, vertex, info2)
    assert len(db.query("SELECT * FROM proc", "test")) == 1 + 5
    ctx3, _ = sink_ctx(plan_of, spark, db, options, "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark))  # the restore settles attempt 2's claimed publish
    assert info3.tables[0].committed
    SINK.commit(ctx3, vertex, info3)
    points = db.query("SELECT * FROM proc WHERE label != 'old'", "test")
    assert sorted(p["c_int"] for p in points) == list(range(12))
    assert not db.query('SELECT * FROM "staging"."stage"', "_seatunnel")
    ctx4, _ = sink_ctx(plan_of, spark, db, options, "R2")  # another run id is another commit
    SINK.commit(ctx4, vertex, SINK.prepare(ctx4, vertex, frame(spark, n=2)))
    assert len(db.query("SELECT * FROM proc", "test")) == 1 + 12 + 2


def test_an_overtaken_attempt_is_superseded_and_a_type_conflict_writes_nothing(plan_of, spark, db):
    options = 'measurement = "m", key_time = "time", key_tags = ["label"]'
    old, vertex = sink_ctx(plan_of, spark, db, options, "R1")
    info_old = SINK.prepare(old, vertex, frame(spark))
    new, _ = sink_ctx(plan_of, spark, db, options, "R1", attempt=2)
    SINK.commit(new, vertex, SINK.prepare(new, vertex, frame(spark)))
    with pytest.raises(Superseded):
        SINK.commit(old, vertex, info_old)
    assert sorted(p["c_int"] for p in db.query("SELECT * FROM m", "test")) == list(range(12))
    # a claim whose staging is gone (expired) never blocks the commit: the next attempt stages again
    stale, _ = sink_ctx(plan_of, spark, db, options, "R2")
    key = SINK.prepare(stale, vertex, frame(spark, n=2)).tables[0].commit.key
    db.write("_seatunnel", [f"commits,commit={key},kind=claim token=9i,rows=99i 0"])
    retry, _ = sink_ctx(plan_of, spark, db, options, "R2", attempt=2)
    info = SINK.prepare(retry, vertex, frame(spark, n=2))
    assert info.tables[0].token == 10 and not info.tables[0].committed
    SINK.commit(retry, vertex, info)
    assert len(db.query("SELECT * FROM m", "test")) == 12  # the same two points again: replaced, not added
    db.write("test", ["clash c_int=\"text\" 1"])
    from airflow_provider_seatunnel.spi.errors import DataError

    ctx, vertex = sink_ctx(plan_of, spark, db, 'measurement = "clash", key_time = "time"', "R3")
    with pytest.raises(DataError, match="c_int"):
        SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, frame(spark)))
    assert len(db.query("SELECT * FROM clash", "test")) == 1


def test_credentials_come_from_a_connection_and_a_wrong_password_never_shows(plan_of, db, monkeypatch):
    from airflow_provider_seatunnel.connectors.influxdb import client
    from airflow_provider_seatunnel.connectors.influxdb.options import Endpoint
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    monkeypatch.setenv("AIRFLOW_CONN_TSDB", json.dumps({
        "conn_type": "influxdb", "host": db.host, "port": db.port, "login": db.user, "password": db.password}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { InfluxDB { plugin_output = "i", influxdb_conn_id = "tsdb", database = "test", sql = "select * from m",
                              schema = { fields { a = int } } } }
        sink { InfluxDB { plugin_input = "i", influxdb_conn_id = "tsdb", database = "test" } }
    """)
    assert db.password not in json.dumps(plan.to_dict())
    source, _ = (v.config for v in with_connections(plan).pipelines[0].vertices)
    assert (source["url"], source["username"], source["password"]) == (db.url, db.user, db.password)
    with pytest.raises(RuntimeConfigError) as info:
        list(client.query(Endpoint(db.url, db.user, "wrong-secret"), "test", "SHOW MEASUREMENTS"))
    assert "401" in str(info.value) and "wrong-secret" not in str(info.value)


def test_a_points_last_change_wins_across_a_shuffle(run_job, db):
    """With key_time, a point's rows (its time and tags) dealt over more writers than the source go through
    one writer in arrival order: each point holds its last change."""
    from tests import change_rows

    run_job(f"""env {{ job.mode = "BATCH" }}
        source {{ {change_rows.fake_source("fake")} }}
        sink {{ InfluxDB {{ plugin_input = "fake", {db.options()}, database = "test", measurement = "keyed",
                           key_time = "id", parallelism = 3 }} }}""")
    points = db.query("SELECT * FROM keyed", "test")
    assert len(points) == change_rows.KEYS and {p["name"] for p in points} == {change_rows.LAST}
