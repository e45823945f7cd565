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
from tests import markers

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


#: The longest test modules (a minute or more each on 2 cores), collected first: `make test` deals whole modules
#: to its two xdist workers in collection order (``--no-loadscope-reorder``: xdist would otherwise deal the modules
#: with the most tests first), so these start early and the workers end together, instead of one worker running a
#: long module alone at the end. Order only; every module runs.
LONG_FIRST = (
    "tests/cluster/test_airflow_services.py", "tests/test_dist.py", "tests/conformance/test_sinks.py",
    "tests/airflow/test_recurring_sync.py", "tests/runtime/test_faults.py",
    "tests/airflow/test_job_group_run.py", "tests/runtime/test_delta.py", "tests/airflow/test_incremental_sync.py",
    "tests/airflow/test_lineage_run.py", "tests/test_third_party_connector.py", "tests/cluster/test_standalone.py",
    "tests/runtime/test_streaming.py", "tests/runtime/test_end_to_end.py", "tests/runtime/test_kafka.py",
    "tests/runtime/test_mysql_cdc.py", "tests/runtime/test_jdbc_sink.py", "tests/runtime/test_paimon.py",
    "tests/runtime/test_paimon_hdfs.py", "tests/runtime/test_hive.py", "tests/airflow/test_connect_mode.py", "tests/airflow/test_operator.py",
    "tests/airflow/test_connect_jdbc.py", "tests/airflow/test_connect_streaming.py",
    "tests/airflow/test_task_face.py", "tests/airflow/test_spark_link.py", "tests/plan/test_properties.py",
    "tests/runtime/test_cassandra.py", "tests/runtime/test_hbase.py", "tests/runtime/test_postgres_cdc.py",
    "tests/runtime/test_starrocks_selectdb.py", "tests/runtime/test_activemq.py", "tests/runtime/test_pulsar.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if markers.unit_mode():
        markers.install_guard()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks each test by what it needs (tests/markers.py: `integration` and one marker per server), then
    orders the modules (LONG_FIRST)."""
    markers.mark(items)
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONG_FIRST)))


#: Lines naming artifacts worth keeping (screenshots), from the reports of the tests that made them: a
#: report carries its test's user properties from an xdist worker to the controller, which prints them.
_ARTIFACTS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, line in report.user_properties:
        if name == "artifact" and line not in _ARTIFACTS:
            _ARTIFACTS.append(str(line))


def pytest_terminal_summary(terminalreporter) -> None:
    if _ARTIFACTS:
        terminalreporter.section("test artifacts")
        for line in _ARTIFACTS:
            terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _unit_guard(request):
    """Under SEATUNNEL_UNIT=1 (`make unit`), a test that started a JVM or a server fails (tests/markers.py)."""
    if not markers.unit_mode():
        yield
        return
    before = markers.jvm_calls()
    yield
    markers.check_guard(request.node, before)


@pytest.fixture(autouse=True)
def _private_plan_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(tmp_path_factory.mktemp("plan-cache")))


@pytest.fixture(autouse=True)
def _private_class_archives(tmp_path_factory, monkeypatch):
    """The driver JVM's class archives (runtime/jvm_startup.py) of this session: one per worker, made by its
    first spark-submit, mapped by the others; and the lean Spark home (runtime/lean_home.py) they start from."""
    monkeypatch.setenv("SEATUNNEL_JVM_ARCHIVE_DIR", str(tmp_path_factory.getbasetemp() / "jvm-archives"))
    monkeypatch.setenv("SEATUNNEL_LEAN_SPARK_HOME", str(tmp_path_factory.getbasetemp() / "spark-home"))


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
