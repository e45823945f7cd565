"""The ActiveMQ sink against a private ActiveMQ Classic broker (tests/activemq_server.py: Maven Central's broker,
the auto transport, a random user): rows as SeaTunnel's JSON text messages, the plan's parallelism (one staging
transaction per write task), nothing visible before the commit, a failed write task or a killed commit leaving
nothing, the restore's commit record, the fence of an overlapping attempt, credentials from an Airflow
connection. One broker for the module, one Spark job per staging."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.activemq import CONNECTOR as AMQ
from airflow_provider_seatunnel.connectors.activemq import sink as asink
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext

SINK = twophase.driver(AMQ)


@pytest.fixture(scope="module")
def broker():
    from tests import activemq_server

    with activemq_server.running() as server:
        yield server


def sink_ctx(plan_of, spark, server, queue: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ FakeSource {{ plugin_output = "f", row.num = 4, schema = {{ fields {{ id = bigint }} }} }} }}
        sink {{ ActiveMQ {{ plugin_input = "f", {server.options()}, queue_name = "{queue}" }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, partitions: int = 3):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i, f"n{i}", None if i == 1 else i / 2) for i in range(n)],
                               "id bigint, name string, score double")
    return {"default": with_kind(df.repartition(partitions))}


def ids(server, queue: str) -> list[int]:
    return sorted(json.loads(b)["id"] for b in server.browse(queue))


def test_a_job_sends_json_text_messages_once_per_run(run_job, broker):
    conf = f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = bigint, name = string, day = date }} }},
                               rows = [{{ kind = INSERT, fields = [1, "a", "2024-05-01"] }},
                                       {{ kind = INSERT, fields = [2, null, "2024-05-02"] }}] }} }}
        sink {{ ActiveMQ {{ plugin_input = "f", {broker.options()}, queue_name = "job1" }} }}
    """
    metrics = run_job(conf, run_id="J1")
    assert metrics[0]["status"] == "FINISHED"
    bodies = sorted(json.loads(b)["id"] for b in broker.browse("job1"))
    assert bodies == [1, 1, 2, 2]  # FakeSource's rows per reader, at parallelism 2
    assert {"id": 2, "name": None, "day": "2024-05-02"} in [json.loads(b) for b in broker.browse("job1")]
    run_job(conf, run_id="J1")  # a rerun of the committed run sends nothing (its commit record)
    assert len(broker.browse("job1")) == 4


def test_staging_is_invisible_until_one_commit_and_a_restore_sends_nothing_twice(plan_of, spark, broker):
    # a write task fails: nothing reaches the queue
    ctx, vertex = sink_ctx(plan_of, spark, broker, "out1", "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert broker.browse("out1") == []
    # staged by three write tasks (the plan's parallelism), invisible; the commit is killed before its step
    ctx2, _ = sink_ctx(plan_of, spark, broker, "out1", "R1", attempt=2, fault="sink.move@2=raise")
    info = SINK.prepare(ctx2, vertex, frame(spark))
    staged = info.tables[0]
    assert staged.rows == 12 and len(staged.parts) == 3 and broker.browse("out1") == []
    assert len(broker.browse(staged.detail["staging"])) == 12
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info)
    assert broker.browse("out1") == []
    # the restore stages again and commits once; a restore of the committed run sends nothing more
    ctx3, _ = sink_ctx(plan_of, spark, broker, "out1", "R1", attempt=3)
    SINK.commit(ctx3, vertex, SINK.prepare(ctx3, vertex, frame(spark)))
    assert ids(broker, "out1") == list(range(12))
    assert broker.browse(asink.COMMIT_PREFIX + staged.commit.key) != []
    ctx4, _ = sink_ctx(plan_of, spark, broker, "out1", "R1", attempt=4)
    info4 = SINK.prepare(ctx4, vertex, frame(spark))
    assert info4.tables[0].committed
    SINK.commit(ctx4, vertex, info4)
    assert ids(broker, "out1") == list(range(12))
    SINK.abort(ctx2, vertex, info)  # the killed attempt's staging is drained
    assert broker.browse(staged.detail["staging"]) == []


def test_an_overlapping_attempt_is_refused_while_another_commits(plan_of, spark, broker):
    ctx, vertex = sink_ctx(plan_of, spark, broker, "out2", "R2")
    info = SINK.prepare(ctx, vertex, frame(spark, n=4, partitions=2))
    key = info.tables[0].commit.key
    with broker.stomp(client_id=asink.FENCE_PREFIX + key):  # another attempt holds the fence
        with pytest.raises(Exception, match="another attempt of this run is committing") as refused:
            SINK.commit(ctx, vertex, info)
        assert getattr(refused.value, "deterministic", True) is False
    assert broker.browse("out2") == []
    SINK.commit(ctx, vertex, info)  # the other gone: this attempt commits
    assert ids(broker, "out2") == [0, 1, 2, 3]


def test_credentials_come_from_a_connection_and_a_wrong_password_never_shows(plan_of, broker, monkeypatch):
    from airflow_provider_seatunnel.connectors.activemq.client import connected
    from airflow_provider_seatunnel.connectors.activemq.options import Endpoint
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    monkeypatch.setenv("AIRFLOW_CONN_MQ", json.dumps({
        "conn_type": "generic", "host": broker.host, "port": broker.port, "login": broker.user,
        "password": broker.password}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { FakeSource { plugin_output = "f", row.num = 1, schema = { fields { id = bigint } } } }
        sink { ActiveMQ { plugin_input = "f", activemq_conn_id = "mq", queue_name = "q" } }
    """)
    assert broker.password not in json.dumps(plan.to_dict())
    sink = with_connections(plan).pipelines[0].vertices[-1].config
    assert (sink["uri"], sink["username"], sink["password"]) == (broker.uri, broker.user, broker.password)
    with pytest.raises(RuntimeConfigError) as info, connected(
            Endpoint(broker.host, broker.port, broker.user, "wrong-secret"), "cannot connect"):
        pass
    assert "wrong-secret" not in str(info.value) and "password" in str(info.value)
