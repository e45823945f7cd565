"""The RabbitMQ source and sink against a private RabbitMQ node (tests/rabbitmq_server.py: Debian's
rabbitmq-server, a random user): JSON rows read and published, acknowledgement only after the commit (a
failed run returns the messages), the plan's parallelism, the commit record of a restore, the fence of an
overlapping attempt, credentials from an Airflow connection."""

from __future__ import annotations

import base64
import json

import pytest

from airflow_provider_seatunnel.connectors.rabbitmq import CONNECTOR as RABBIT
from airflow_provider_seatunnel.connectors.rabbitmq import sink as rsink
from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext

FIELDS = ('id = bigint, name = string, tags = "array<string>", attrs = "map<string, int>", price = "decimal(5, 2)", '
          'day = date, at = timestamp, raw = bytes, ok = boolean')


@pytest.fixture(scope="module")
def rabbitmq_server():
    from tests import rabbitmq_server

    with rabbitmq_server.running() as server:
        yield server


def message(i: int) -> str:
    return json.dumps({"id": i, "name": f"n{i}", "tags": ["a", str(i)], "attrs": {"k": i}, "price": f"{i}.25",
                       "day": "2024-05-0" + str(1 + i % 9), "at": f"2024-05-01T10:00:0{i % 10}",
                       "raw": base64.b64encode(bytes([i])).decode(), "ok": i % 2 == 0})


def job(server, source_queue: str, sink_queue: str, sink_extra: str = "", source_parallelism: int = 3,
        sink_parallelism: int = 2) -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ RabbitMQ {{ plugin_output = "m", {server.options()}, queue_name = "{source_queue}",
                             parallelism = {source_parallelism}, schema = {{ fields {{ {FIELDS} }} }} }} }}
        sink {{ RabbitMQ {{ plugin_input = "m", {server.options()}, queue_name = "{sink_queue}",
                           parallelism = {sink_parallelism} {sink_extra} }} }}
    """


def test_rows_are_read_published_and_acknowledged_after_the_commit(run_job, plan_of, spark, rabbitmq_server):
    server = rabbitmq_server
    server.publish("in1", [message(i) for i in range(9)])
    # the plan's parallelism: three partitions read (one driver consumer's rows dealt over them)
    plan = plan_of(job(server, "in1", "out1"))
    pipeline = plan.pipelines[0]
    source = next(v for v in pipeline.vertices if v.kind == "source")
    ctx = RunContext(spark, plan, pipeline, "peek")
    df = RABBIT.read(ctx, source)["default"]
    assert df.rdd.getNumPartitions() == source.parallelism == 3
    assert server.count("in1") == 0  # taken, unacknowledged: not ready for another consumer
    from airflow_provider_seatunnel.connectors.rabbitmq.source import _release

    _release(spark)  # a run that ends without its commit returns them
    assert server.count("in1") == 9

    metrics = run_job(job(server, "in1", "out1"), run_id="R1")
    assert metrics[0]["status"] == "FINISHED"
    assert server.count("in1") == 0  # acknowledged once the sink committed
    out = [json.loads(b) for b in server.drain("out1")]
    assert sorted(o["id"] for o in out) == list(range(9))
    first = next(o for o in out if o["id"] == 3)
    assert first == {"id": 3, "name": "n3", "tags": ["a", "3"], "attrs": {"k": 3}, "price": 3.25, "day": "2024-05-04",
                     "at": "2024-05-01T10:00:03", "raw": base64.b64encode(bytes([3])).decode(), "ok": False}

    # a rerun of the finished run reads nothing (its read was acknowledged) and publishes nothing (its commit
    # record): a message published since waits for the next run
    server.publish("in1", [message(20)])
    run_job(job(server, "in1", "out1"), run_id="R1")
    assert server.count("out1") == 0 and server.count("in1") == 1
    server.drain("in1")
    # a failed run (its sink fails) acknowledges nothing: the messages are back in the queue
    server.publish("in1", [message(30), message(31)])
    with pytest.raises(Exception, match=r"PRECONDITION_FAILED|inequivalent arg"):
        run_job(job(server, "in1", "out1", sink_extra=", durable = false"), run_id="R2")
    assert server.count("in1") == 2 and server.count("out1") == 0
    server.delete("in1", "out1")


def test_a_malformed_message_fails_the_run_and_is_kept(run_job, rabbitmq_server):
    server = rabbitmq_server
    server.publish("in2", [message(1), "not json"])
    with pytest.raises(Exception, match=r"(?i)malformed|json"):
        run_job(job(server, "in2", "out2"), run_id="bad")
    assert server.count("in2") == 2 and server.count("out2") == 0
    server.delete("in2", "out2")


def sink_ctx(plan_of, spark, server, queue: str, run_id: str, fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ FakeSource {{ plugin_output = "f", row.num = 4, schema = {{ fields {{ id = bigint }} }} }} }}
        sink {{ RabbitMQ {{ plugin_input = "f", {server.options()}, queue_name = "{queue}" }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, partitions: int = 3):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i,) for i in range(n)], "id bigint")
    return {"default": with_kind(df.repartition(partitions))}


def test_the_sink_is_fenced_recorded_and_at_least_once(plan_of, spark, rabbitmq_server):
    server = rabbitmq_server
    # a run killed after publishing, before its record: the restore publishes again (at least once)
    ctx, vertex = sink_ctx(plan_of, spark, server, "out3", "S1", fault="sink.commit=raise")
    with pytest.raises(faults.InjectedFault):
        RABBIT.prepare(ctx, vertex, frame(spark))
    assert server.count("out3") == 12
    ctx, _ = sink_ctx(plan_of, spark, server, "out3", "S1")
    # an overlapping attempt of the run holds the fence: this one is refused, transiently, and publishes nothing
    key = rsink.commit_id(ctx, vertex, "default")
    with server.channel() as zombie:
        zombie.queue_declare(rsink.FENCE_PREFIX + key, exclusive=True, auto_delete=True)
        with pytest.raises(Exception, match="another attempt of this run is publishing") as refused:
            RABBIT.prepare(ctx, vertex, frame(spark))
        assert getattr(refused.value, "deterministic", True) is False
    assert server.count("out3") == 12
    RABBIT.prepare(ctx, vertex, frame(spark))  # the zombie gone: the restore publishes and records
    assert server.count("out3") == 24
    RABBIT.prepare(ctx, vertex, frame(spark))  # recorded: nothing again
    assert server.count("out3") == 24
    assert sorted(json.loads(b)["id"] for b in server.drain("out3")) == sorted(list(range(12)) * 2)
    server.delete("out3")


def test_rabbitmq_conn_id_gives_the_address_and_credentials(plan_of, rabbitmq_server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    server = rabbitmq_server
    monkeypatch.setenv("AIRFLOW_CONN_MQ", json.dumps({
        "conn_type": "amqp", "host": server.host, "port": server.port, "login": server.user,
        "password": server.password, "schema": "/"}))
    plan = plan_of("""
        env { job.mode = "STREAMING" }
        source { FakeSource { plugin_output = "f", row.num = 1, schema = { fields { id = bigint } } } }
        sink { RabbitMQ { plugin_input = "f", rabbitmq_conn_id = "mq", queue_name = "q" } }
    """)
    assert server.password not in json.dumps(plan.to_dict())
    sink = with_connections(plan).pipelines[0].vertices[-1].config
    assert (sink["host"], sink["port"], sink["virtual_host"], sink["username"], sink["password"]) == \
        (server.host, server.port, "/", server.user, server.password)


def test_a_streaming_read_loses_nothing_and_acknowledges_after_the_commit(plan_of, spark, rabbitmq_server,
                                                                                   tmp_path):
    from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

    server = rabbitmq_server
    server.publish("sin", [message(i) for i in range(5)])
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", parallelism = 2, checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ RabbitMQ {{ plugin_output = "m", {server.options()}, queue_name = "sin", for_e2e_testing = true,
                             schema = {{ fields {{ {FIELDS} }} }} }} }}
        sink {{ RabbitMQ {{ plugin_input = "m", {server.options()}, queue_name = "sout" }} }}
    """)

    def sync(run_id: str) -> dict:
        return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id))

    first = sync("r1")
    server.publish("sin", [message(i) for i in range(5, 8)])
    second = sync("r2")
    ids = [json.loads(b)["id"] for b in server.drain("sout")]
    # nothing lost; at least once: a micro-batch acknowledged only after its commit, the last one of a run by the
    # reader's watcher of the commit log, which a worker ending at once may not reach (then read again)
    assert set(ids) == set(range(8)) and len(ids) <= 8 + 5
    assert sum(b["written"] for b in first["streaming"]["batches"]) == 5
    assert sum(b["written"] for b in second["streaming"]["batches"]) in (3, 8)
    server.delete("sin", "sout")
