"""The Pulsar source and sink against a private Pulsar standalone (tests/pulsar_server.py: Pulsar 4.0's jars from
Maven Central, one module-scoped server): JSON rows read from a partitioned topic over the plan's parallelism and
sent keyed, the subscription acknowledged only after the commit (a failed run's restore reads the same messages),
start and stop cursors by timestamp, the text format, the sink's commit record and its fence against an
overlapping attempt, a STREAMING read resumed from its checkpoint."""

from __future__ import annotations

import base64
import json

import pytest

from airflow_provider_seatunnel.connectors.pulsar import CONNECTOR as PULSAR
from airflow_provider_seatunnel.connectors.pulsar import sink as psink
from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.spi.twophase import digest

FIELDS = ('id = bigint, name = string, tags = "array<string>", price = "decimal(5, 2)", day = date, '
          'at = timestamp, raw = bytes, ok = boolean')


@pytest.fixture(scope="module")
def pulsar_server():
    from tests import pulsar_server

    with pulsar_server.running() as server:
        yield server


def message(i: int) -> str:
    return json.dumps({"id": i, "name": f"n{i}", "tags": ["a", str(i)], "price": f"{i}.25",
                       "day": "2024-05-0" + str(1 + i % 9), "at": f"2024-05-01T10:00:0{i % 10}",
                       "raw": base64.b64encode(bytes([i])).decode(), "ok": i % 2 == 0})


def job(server, topic: str, out: str, start: str = "EARLIEST", sink_extra: str = "") -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ Pulsar {{ plugin_output = "m", {server.options()}, topic = "{topic}", subscription.name = "sub",
                           cursor.startup.mode = {start}, cursor.stop.mode = LATEST, parallelism = 2,
                           schema = {{ fields {{ {FIELDS} }} }} }} }}
        sink {{ Pulsar {{ plugin_input = "m", {server.options()}, topic = "{out}" {sink_extra} }} }}
    """


def ids(server, topic: str) -> list[int]:
    return sorted(json.loads(b)["id"] for b in server.read_all(topic))


def test_rows_are_read_sent_and_the_subscription_acknowledged_after_the_commit(run_job, plan_of, spark,
                                                                                pulsar_server):
    server = pulsar_server
    source_topic = server.create_topic("in1", partitions=3)
    server.send(source_topic, [message(i) for i in range(9)])
    # the plan's parallelism: three topic partitions dealt over two readers
    plan = plan_of(job(server, "in1", "out1"))
    source = plan.pipelines[0].vertices[0]
    df = PULSAR.read(RunContext(spark, plan, plan.pipelines[0], "peek"), source)["default"]
    assert df.rdd.getNumPartitions() == source.parallelism == 2

    assert run_job(job(server, "in1", "out1", sink_extra=", partition_key_fields = [id, name]"),
                   run_id="R1")[0]["status"] == "FINISHED"
    assert ids(server, "out1") == list(range(9))
    out = {json.loads(b)["id"]: json.loads(b) for b in server.read_all("out1")}
    assert out[3] == {"id": 3, "name": "n3", "tags": ["a", "3"], "price": 3.25, "day": "2024-05-04",
                      "at": "2024-05-01T10:00:03", "raw": base64.b64encode(bytes([3])).decode(), "ok": False}
    client = server.client()
    import pulsar

    reader = client.create_reader("out1", pulsar.MessageId.earliest)
    keys = {json.loads(m.data())["id"]: m.partition_key() for m in [reader.read_next(10_000) for _ in range(9)]}
    client.close()
    assert keys[3] == '{"id":3,"name":"n3"}'

    # the subscription was acknowledged at the stops once the sink committed: SUBSCRIPTION reads only what came since
    server.send(source_topic, [message(i) for i in range(10, 13)])
    run_job(job(server, "in1", "out2", start="SUBSCRIPTION"), run_id="R2")
    assert ids(server, "out2") == [10, 11, 12]

    # a run failing after its sink sent, before the commit, acknowledges nothing: its restore reads the same
    # messages again and sends them again (at least once), then acknowledges
    server.send(source_topic, [message(20), message(21)])
    failing = plan_of(job(server, "in1", "out3", start="SUBSCRIPTION"))
    ctx = RunContext(spark, failing, failing.pipelines[0], "R3",
                     options=faults.from_environment({faults.ENV: "sink.commit=raise"}))
    with pytest.raises(faults.InjectedFault):
        run_pipeline(ctx)
    assert ids(server, "out3") == [20, 21]
    run_job(job(server, "in1", "out3", start="SUBSCRIPTION"), run_id="R3")
    assert ids(server, "out3") == [20, 20, 21, 21]
    run_job(job(server, "in1", "out4", start="SUBSCRIPTION"), run_id="R4")
    assert server.read_all("out4") == []


def test_timestamp_cursors_and_the_text_format(run_job, pulsar_server):
    import pulsar

    server = pulsar_server
    topic = server.create_topic("ts")
    server.send(topic, [json.dumps({"id": i, "name": f"n{i}"}) for i in range(6)])
    client = server.client()
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    times = [reader.read_next(10_000).publish_timestamp() for _ in range(6)]
    client.close()
    start, stop = times[1], times[4]
    first = next(i for i, t in enumerate(times) if t >= start)
    last = next(i for i, t in enumerate(times) if t >= stop)  # the first message at or after the stop is read
    run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ Pulsar {{ plugin_output = "m", {server.options()}, topic = "ts", subscription.name = "s",
                           cursor.startup.mode = TIMESTAMP, cursor.startup.timestamp = {start},
                           cursor.stop.mode = TIMESTAMP, cursor.stop.timestamp = {stop},
                           schema = {{ fields {{ id = int, name = string }} }} }} }}
        sink {{ Pulsar {{ plugin_input = "m", {server.options()}, topic = "ts-out", format = text,
                         field_delimiter = "|", semantics = NON }} }}
    """, run_id="T1")
    assert sorted(server.read_all("ts-out")) == sorted(f"{i}|n{i}".encode() for i in range(first, last + 1))


def sink_ctx(plan_of, spark, server, topic: str, run_id: str, fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ FakeSource {{ plugin_output = "f", row.num = 4, schema = {{ fields {{ id = bigint }} }} }} }}
        sink {{ Pulsar {{ plugin_input = "f", {server.options()}, topic = "{topic}" }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, partitions: int = 3):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i,) for i in range(n)], "id bigint")
    return {"default": with_kind(df.repartition(partitions))}


def test_the_sink_is_fenced_recorded_and_at_least_once(plan_of, spark, pulsar_server):
    import pulsar

    server = pulsar_server
    # a run killed after sending, before its record: the restore sends again (at least once)
    ctx, vertex = sink_ctx(plan_of, spark, server, "out5", "S1", fault="sink.commit=raise")
    with pytest.raises(faults.InjectedFault):
        PULSAR.prepare(ctx, vertex, frame(spark))
    assert len(server.read_all("out5")) == 12
    ctx, _ = sink_ctx(plan_of, spark, server, "out5", "S1")
    # an overlapping attempt of the run holds the fence: this one is refused, transiently, and sends nothing
    record = psink.record_topic("persistent://public/default/out5",
                                digest(ctx.run_id, ctx.pipeline_key, vertex.ref, "default"))
    client = server.client()
    zombie = client.create_producer(record, access_mode=pulsar.ProducerAccessMode.Exclusive)
    with pytest.raises(Exception, match="another attempt of this run is sending") as refused:
        PULSAR.prepare(ctx, vertex, frame(spark))
    assert getattr(refused.value, "deterministic", True) is False
    assert len(server.read_all("out5")) == 12
    zombie.close()
    client.close()
    PULSAR.prepare(ctx, vertex, frame(spark))  # the zombie gone: the restore sends and records
    assert len(server.read_all("out5")) == 24
    PULSAR.prepare(ctx, vertex, frame(spark))  # recorded: nothing again
    assert ids(server, "out5") == sorted(list(range(12)) * 2)



def test_a_streaming_read_resumes_from_its_checkpoint(plan_of, spark, pulsar_server, tmp_path):
    from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

    server = pulsar_server
    topic = server.create_topic("sin", partitions=2)
    server.send(topic, [message(i) for i in range(5)])
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", parallelism = 2, checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ Pulsar {{ plugin_output = "m", {server.options()}, topic = "sin", subscription.name = "st",
                           cursor.startup.mode = EARLIEST, schema = {{ fields {{ {FIELDS} }} }} }} }}
        sink {{ Pulsar {{ plugin_input = "m", {server.options()}, topic = "sout" }} }}
    """)

    def sync(run_id: str) -> dict:
        return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id))

    first = sync("r1")
    server.send(topic, [message(i) for i in range(5, 8)])
    second = sync("r2")
    # the second run resumes after the first one's offsets: every message once
    assert ids(server, "sout") == list(range(8))
    assert sum(b["written"] for b in first["streaming"]["batches"]) == 5
    assert sum(b["written"] for b in second["streaming"]["batches"]) == 3


def test_a_keys_changes_reach_its_partition_in_arrival_order_across_a_shuffle(run_job, pulsar_server):
    """partition_key_fields: a key's messages are sent by one writer in the order its changes arrived,
    though the sink has more writers than its source."""
    from tests import change_rows

    server = pulsar_server
    topic = server.create_topic("keyed", partitions=2)
    run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ {change_rows.fake_source()} }}
        sink {{ Pulsar {{ plugin_input = "f", {server.options()}, topic = "keyed", parallelism = 3,
                         partition_key_fields = ["id"] }} }}""")
    bodies = [json.loads(b) for b in server.read_all(topic)]  # oldest first per partition
    assert change_rows.in_order(change_rows.steps_per_key((b["id"], b["name"]) for b in bodies))
