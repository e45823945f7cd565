"""The Rocketmq source and sink against a private RocketMQ 5.3 broker (tests/rocketmq_server.py: Maven Central's
broker jars, a test name server in its JVM): the start modes (group offsets, earliest, latest, specific offsets,
timestamp), json and text bodies, tags, the plan's parallelism, group offsets committed only after the
pipeline committed, a restore reading the recorded ranges; the sink's keys and queues (SeaTunnel's hash), the
commit record of a restore and the fence of an overlapping attempt; the name servers from an Airflow
connection. One broker for the module, few Spark jobs (the start modes' reads are collected in one)."""

from __future__ import annotations

import json
import time

import pytest

from airflow_provider_seatunnel.connectors.rocketmq import CONNECTOR as RMQ
from airflow_provider_seatunnel.connectors.rocketmq import sink as rsink
from airflow_provider_seatunnel.connectors.rocketmq.client import Queue, queue_for_key
from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext

FIELDS = 'id = bigint, name = string, price = "decimal(5, 2)", day = date, at = timestamp, ok = boolean'


@pytest.fixture(scope="module")
def rocketmq_server():
    from tests import rocketmq_server

    with rocketmq_server.running() as server:
        yield server


def message(i: int) -> str:
    return json.dumps({"id": i, "name": f"n{i}", "price": f"{i}.25", "day": f"2024-05-0{1 + i % 9}",
                       "at": f"2024-05-01T10:00:0{i % 10}", "ok": i % 2 == 0})


def source(server, topic: str, extra: str = "", parallelism: int = 3, fields: str = FIELDS) -> str:
    return (f'Rocketmq {{ plugin_output = "m", name.srv.addr = "{server.name_srv_addr}", topics = "{topic}", '
            f'parallelism = {parallelism}, schema = {{ fields {{ {fields} }} }} {extra} }}')


def job(server, topic: str, out: str, source_extra: str = "", sink_extra: str = "") -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ {source(server, topic, source_extra)} }}
        sink {{ Rocketmq {{ plugin_input = "m", name.srv.addr = "{server.name_srv_addr}", topic = "{out}",
                           parallelism = 2 {sink_extra} }} }}
    """


def group_offsets(server, topic: str, group: str) -> list[int | None]:
    with server.client() as c:
        return [c.group_offset(Queue(topic, "broker-a", i), server.broker_addr, group) for i in range(4)]


def test_a_job_reads_from_group_offsets_and_commits_them_after_the_sink(run_job, rocketmq_server):
    server = rocketmq_server
    server.create_topic("in1")
    server.send("in1", [message(i) for i in range(8)])  # two a queue
    conf = job(server, "in1", "out1", sink_extra=', partition.key.fields = ["id"]')
    assert run_job(conf, run_id="R1")[0]["status"] == "FINISHED"
    out = server.messages("out1")
    assert sorted(json.loads(m.body)["id"] for m in out) == list(range(8))
    first = next(json.loads(m.body) for m in out if json.loads(m.body)["id"] == 3)
    assert first == {"id": 3, "name": "n3", "price": 3.25, "day": "2024-05-04", "at": "2024-05-01T10:00:03",
                     "ok": False}
    # the key is the JSON of the key fields; it picks the queue as SeaTunnel's select-by-hash does
    for m in out:
        assert m.keys == json.dumps({"id": json.loads(m.body)["id"]}, separators=(",", ":"))
        assert m.queue_id == queue_for_key(m.keys, 4)
    assert group_offsets(server, "in1", "SeaTunnel-Consumer-Group") == [2, 2, 2, 2]
    # another run starts from the group's offsets: only what was sent since
    server.send("in1", [message(8), message(9)])
    run_job(conf, run_id="R2")
    assert sorted(json.loads(m.body)["id"] for m in server.messages("out1")) == list(range(10))
    # a run whose sink fails commits no offset: the next run reads the same messages
    server.send("in1", [message(10)])
    with pytest.raises(Exception, match=r"max\.message\.size"):
        run_job(job(server, "in1", "out1", sink_extra=", max.message.size = 10"), run_id="R3")
    assert sum(o or 0 for o in group_offsets(server, "in1", "SeaTunnel-Consumer-Group")) == 10


def test_start_modes_formats_tags_and_a_restore_read_the_expected_messages(plan_of, spark, rocketmq_server):
    from pyspark.sql import functions as F

    server = rocketmq_server
    server.create_topic("in2")
    server.send("in2", [message(i) for i in range(4)], tags=["a", "b", "a", "b"], queue=0)
    time.sleep(0.05)
    middle = int(time.time() * 1000)
    time.sleep(0.05)
    server.send("in2", [message(i) for i in range(4, 6)], queue=0)
    server.create_topic("text2")
    server.send("text2", ["1|x|2.50|2024-05-02|2024-05-01 10:00:00|true", "2||bad-is-blank| | |", "3|z"], queue=1)

    cases = {
        "earliest": source(server, "in2", ', start.mode = "CONSUME_FROM_FIRST_OFFSET"'),
        "latest": source(server, "in2", ', start.mode = "CONSUME_FROM_LAST_OFFSET"'),
        "offsets": source(server, "in2", ', start.mode = "CONSUME_FROM_SPECIFIC_OFFSETS", '
                                         'start.mode.offsets = { in2-0 = 4 }'),
        "timestamp": source(server, "in2", f', start.mode = "CONSUME_FROM_TIMESTAMP", start.mode.timestamp = {middle}'),
        "tags": source(server, "in2", ', start.mode = "CONSUME_FROM_FIRST_OFFSET", tags = "a"'),
        "groupless": source(server, "in2", ', consumer.group = "fresh-group"'),
        "text": source(server, "text2", ', format = text, field.delimiter = "|"', fields=FIELDS.replace(
            'price = "decimal(5, 2)"', 'price = string')),
    }
    frames = []
    for name, block in cases.items():
        plan = plan_of(f'env {{ job.mode = "BATCH" }}\nsource {{ {block} }}\nsink {{ Console {{ plugin_input = "m" }} }}')
        pipeline = plan.pipelines[0]
        vertex = next(v for v in pipeline.vertices if v.kind == "source")
        df = RMQ.read(RunContext(spark, plan, pipeline, f"run-{name}"), vertex)["default"]
        assert df.rdd.getNumPartitions() == 3  # the plan's parallelism
        frames.append(df.select(F.lit(name).alias("case"), "id", "name", F.col("price").cast("string").alias("price"),
                                "day", "at", "ok"))
    union = frames[0]
    for f in frames[1:]:
        union = union.unionByName(f)
    got: dict[str, list] = {}
    for row in union.collect():  # one Spark job for every case
        got.setdefault(row["case"], []).append(row)

    def ids(case: str) -> list[int]:
        return sorted(r["id"] for r in got.get(case, []))

    assert ids("earliest") == list(range(6)) and ids("groupless") == list(range(6))
    assert ids("latest") == []
    assert ids("offsets") == [4, 5]
    assert ids("timestamp") == [4, 5]
    assert ids("tags") == [0, 2]
    text = {r["id"]: r for r in got["text"]}
    assert str(text[1]["day"]) == "2024-05-02" and text[1]["ok"] is True and text[1]["name"] == "x"
    assert text[2]["name"] is None and text[2]["day"] is None and text[3]["name"] == "z" and text[3]["ok"] is None
    # nothing is committed before the pipeline's commit (these reads were never acknowledged)
    assert group_offsets(server, "in2", "fresh-group")[0] in (0, None)

    # a restore of a run reads the ranges its first attempt recorded, not what arrived since
    plan = plan_of(f'env {{ job.mode = "BATCH" }}\nsource {{ {cases["earliest"]} }}\n'
                   'sink { Console { plugin_input = "m" } }')
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.kind == "source")
    server.send("in2", [message(6)], queue=0)
    again = RMQ.read(RunContext(spark, plan, pipeline, "run-earliest"), vertex)["default"]
    fresh = RMQ.read(RunContext(spark, plan, pipeline, "run-other"), vertex)["default"]
    assert again.count() == 6 and fresh.count() == 7


def sink_ctx(plan_of, spark, server, topic: str, run_id: str, fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ FakeSource {{ plugin_output = "f", row.num = 4, schema = {{ fields {{ id = bigint }} }} }} }}
        sink {{ Rocketmq {{ plugin_input = "f", name.srv.addr = "{server.name_srv_addr}", topic = "{topic}",
                           format = text }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, partitions: int = 3):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i,) for i in range(n)], "id bigint")
    return {"default": with_kind(df.repartition(partitions))}


def test_the_sink_is_fenced_recorded_and_at_least_once(plan_of, spark, rocketmq_server, monkeypatch):
    server = rocketmq_server
    monkeypatch.setattr(rsink, "FENCE_WAIT_S", 0.5)  # a live holder renews: waiting longer changes nothing
    # a new topic is created (the broker auto-creates topics); a run killed after sending, before its record:
    # the restore sends again (at least once)
    ctx, vertex = sink_ctx(plan_of, spark, server, "out3", "S1", fault="sink.commit=raise")
    with pytest.raises(faults.InjectedFault):
        RMQ.prepare(ctx, vertex, frame(spark))
    assert len(server.messages("out3")) == 12
    ctx, _ = sink_ctx(plan_of, spark, server, "out3", "S1")
    # an overlapping attempt of the run holds the fence: this one is refused, transiently, and sends nothing
    key = rsink.commit_id(ctx, vertex, "default")
    fenced = Queue("out3", "broker-a", 0)
    with server.client("zombie") as zombie:
        assert zombie.lock(server.broker_addr, rsink.FENCE_PREFIX + key, [fenced]) == {fenced}
        with pytest.raises(Exception, match="another attempt of this run is sending") as refused:
            RMQ.prepare(ctx, vertex, frame(spark))
        assert getattr(refused.value, "deterministic", True) is False
        assert len(server.messages("out3")) == 12
        zombie.unlock(server.broker_addr, rsink.FENCE_PREFIX + key, [fenced])
    RMQ.prepare(ctx, vertex, frame(spark))  # the zombie gone: the restore sends and records
    assert len(server.messages("out3")) == 24
    RMQ.prepare(ctx, vertex, frame(spark))  # recorded: nothing again
    bodies = [m.body.decode() for m in server.messages("out3")]
    assert sorted(bodies, key=int) == sorted([str(i) for i in range(12)] * 2, key=int)
    # no key: the messages go to the queues in turn
    assert {m.queue_id for m in server.messages("out3")} == {0, 1, 2, 3}


def test_rocketmq_conn_id_gives_the_name_servers(plan_of, rocketmq_server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    server = rocketmq_server
    monkeypatch.setenv("AIRFLOW_CONN_MQ", json.dumps({"conn_type": "generic", "host": server.host,
                                                      "port": server.namesrv_port}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { FakeSource { plugin_output = "f", row.num = 1, schema = { fields { id = bigint } } } }
        sink { Rocketmq { plugin_input = "f", rocketmq_conn_id = "mq", topic = "q" } }
    """)
    sink = with_connections(plan).pipelines[0].vertices[-1].config
    assert sink["name.srv.addr"] == server.name_srv_addr


def test_a_keys_changes_reach_its_queue_in_arrival_order_across_a_shuffle(run_job, rocketmq_server):
    """partition.key.fields: a key's messages are sent by one writer, in the order its changes arrived,
    though the sink has more writers than its source."""
    from tests import change_rows

    server = rocketmq_server
    server.create_topic("keyed")
    run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ {change_rows.fake_source()} }}
        sink {{ Rocketmq {{ plugin_input = "f", name.srv.addr = "{server.name_srv_addr}", topic = "keyed",
                           parallelism = 3, partition.key.fields = ["id"] }} }}""")
    bodies = [json.loads(m.body) for m in server.messages("keyed")]  # queue by queue, in offset order
    assert change_rows.in_order(change_rows.steps_per_key((b["id"], b["name"]) for b in bodies))
