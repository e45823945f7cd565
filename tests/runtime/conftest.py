"""Spark fixtures: one local SparkSession for the whole test session, and in-process job runs."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.plan import compile_job


@pytest.fixture(scope="session")
def spark():
    from airflow_provider_seatunnel.connectors.delta import CONNECTOR as DELTA
    from airflow_provider_seatunnel.connectors.iceberg import CONNECTOR as ICEBERG
    from airflow_provider_seatunnel.connectors.kafka import CONNECTOR as KAFKA
    from airflow_provider_seatunnel.runtime.session import get_session

    # the jars a run of a Kafka job (format avro), of a Delta job and of an Iceberg job is given through
    # spark.jars, as spark-submit gives them, and the settings a Delta job's session starts with (its SQL
    # extension and catalog) with Iceberg's SQL extensions beside Delta's (none on a Spark Iceberg is not built for)
    delta_jars = DELTA.jars({}, {})  # none: Delta's catalog would not load (the Delta tests say what is missing)
    jars = KAFKA.jars({"format": "avro"}, {}) + delta_jars + ICEBERG.jars({}, {})
    settings = dict(DELTA.session_conf({}, {})) if delta_jars else {}
    extensions = ICEBERG.session_conf({}, settings).get("spark.sql.extensions")
    if extensions:
        settings["spark.sql.extensions"] = extensions
    session = get_session("seatunnel-tests", {"spark.ui.enabled": False, "spark.sql.shuffle.partitions": 4},
                          "local[2]", jars=jars, session=settings)
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
