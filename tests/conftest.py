"""Shared fixtures: compile configs written to a temp dir, with a private plan cache."""

from __future__ import annotations

import logging
import os
import sys
import textwrap
from pathlib import Path

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.plan import compile_job

ROOT = Path(__file__).resolve().parents[1]

# py4j says goodbye from __del__ at interpreter exit, after pytest closed the log streams
logging.getLogger("py4j").setLevel(logging.WARNING)

#: Every JVM the tests start lives for seconds on kilobytes of data: the client compiler alone (no C2)
#: and the serial collector halve their CPU time on a 2-core machine, semantics unchanged. Set before
#: any JVM starts, so the shared SparkSession, spark-submit and the cluster's servers all inherit it.
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
if SHORT_LIVED_JVM not in os.environ.get("JAVA_TOOL_OPTIONS", ""):
    os.environ["JAVA_TOOL_OPTIONS"] = (os.environ.get("JAVA_TOOL_OPTIONS", "") + " " + SHORT_LIVED_JVM).strip()

#: Spark's Python workers (the Python data sources of Redis and Http) run this interpreter, with its
#: packages (pyarrow), as spark-submit's launcher arranges for a real run; not the first python3 on PATH.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(autouse=True)
def _private_plan_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(tmp_path_factory.mktemp("plan-cache")))


@pytest.fixture
def write_conf(tmp_path):
    def write(text: str, name: str = "job.conf") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def plan_of(write_conf):
    """Compile config text (no cache) and return the plan."""

    def compile_(text: str, variables=None, name: str = "job.conf", environ=None):
        return compile_job(write_conf(text, name), variables, use_cache=False, environ=environ)

    return compile_


@pytest.fixture
def config_error(plan_of):
    """Compile text that must fail; return the ConfigError."""

    def fail(text: str, variables=None, name: str = "job.conf"):
        with pytest.raises(ConfigError) as info:
            plan_of(text, variables, name=name)
        return info.value

    return fail


@pytest.fixture(scope="session")
def kafka():
    """A single-node Kafka broker in KRaft mode (tests/kafka_server.py), started once per session on first use."""
    from tests import kafka_server

    with kafka_server.running() as server:
        yield server
