"""Spark fixtures: one local SparkSession for the whole test session, and in-process job runs."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.plan import compile_job


@pytest.fixture(scope="session")
def spark():
    from airflow_provider_seatunnel.connectors.delta import CONNECTOR as DELTA
    from airflow_provider_seatunnel.connectors.kafka import CONNECTOR as KAFKA
    from airflow_provider_seatunnel.runtime.session import get_session

    # the jars a run of a Kafka job (format avro) and of a Delta job is given through spark.jars, as
    # spark-submit gives them, and the settings a Delta job's session starts with (its SQL extension and catalog)
    jars = KAFKA.jars({"format": "avro"}, {}) + DELTA.jars({}, {})
    session = get_session("seatunnel-tests", {"spark.ui.enabled": False, "spark.sql.shuffle.partitions": 4},
                          "local[2]", jars=jars, session=DELTA.session_conf({}, {}))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def run_job(spark, write_conf):
    """Compile config text and run its pipelines in this process; return their metrics."""
    from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline

    def run(text: str, variables=None, run_id: str = "test-run", name: str = "job.conf", events=None):
        plan = compile_job(write_conf(text, name), variables, use_cache=False)
        return [run_pipeline(RunContext(spark, plan, p, run_id),
                             on_event=(events.append if events is not None else None))
                for p in plan.pipelines]

    return run


@pytest.fixture(scope="module")
def db():
    """A private PostgreSQL server for the module (Debian's binaries; fails, never skips, without them)."""
    from tests import pg

    with pg.running() as server:
        yield server
