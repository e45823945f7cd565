"""Which tests are integration tests, and the guard that keeps `make unit` free of JVMs and servers.

A test is marked by what it needs, automatically (tests/conftest.py calls :func:`mark` at collection):

* by the fixtures it uses (:data:`FIXTURE_MARKS`: the shared SparkSession, the servers' fixtures);
* by the helper modules its test module imports (:data:`HELPER_MARKS`: ``from tests import pg`` marks the
  module's tests ``postgres``), so a new test of a server is marked without effort;
* by module for the rest (:data:`MODULE_MARKS`: tests that start Spark through ``spark-submit``, a DAG run
  or a subprocess, which no fixture shows).

Every marker but ``slow`` implies ``integration``; ``make unit`` runs ``-m "not integration"`` with
``SEATUNNEL_UNIT=1``, under which :func:`install_guard` makes any JVM (in this process or a child: ``java``
on PATH and ``JAVA_HOME`` are a stub that records the call) or server process a test starts fail that test,
naming what it started: mark the test (one of the tables here) rather than let the unit run grow slow.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest

#: marker -> what it needs (pyproject.toml registers them)
MARKERS = {
    "integration": "needs a JVM, a server or a real Airflow (everything `make unit` leaves out)",
    "spark": "starts Spark (a SparkSession, spark-submit, a Spark Connect server or a standalone cluster): Java 17",
    "postgres": "a private PostgreSQL server (make test-deps)",
    "mariadb": "a private MariaDB server (make test-deps)",
    "redis": "a private Redis server (make test-deps)",
    "influxdb": "a private InfluxDB 1.x server (Debian's influxdb, make test-deps)",
    "clickhouse": "the ClickHouse stand-in: chDB (PyPI) behind a loopback HTTP server",
    "rabbitmq": "a private RabbitMQ node (make test-deps)",
    "cassandra": "a private Cassandra node (jars from make test-deps)",
    "activemq": "a private ActiveMQ Classic broker (jars from make test-deps)",
    "rocketmq": "a private RocketMQ broker with a test name server (jars from make test-deps)",
    "pulsar": "a private Pulsar standalone (jars from make test-deps)",
    "opensearch": "a private OpenSearch node (jars from make test-deps)",
    "hbase": "a private standalone HBase with its Thrift gateway (jars from make test-deps)",
    "hdfs": "a private HDFS, one NameNode and one DataNode (HBase's Hadoop jars from make test-deps)",
    "ferretdb": "a private FerretDB server, MongoDB's wire protocol (make test-deps builds it with Go)",
    "sftp": "a private OpenSSH server (make test-deps)",
    "ftp": "an FTP server (pyftpdlib)",
    "s3": "a moto S3 server",
    "kafka": "a single-node Kafka broker (jars from make test-deps)",
    "hive": "a Hive metastore",
    "airflow": "a real Airflow: a migrated metadata database, DAG runs in subprocesses",
    "airflow_services": "Airflow's api-server, scheduler and dag-processor",
    "browser": "Chromium driven by Playwright (make test-deps)",
    "zeta": "SeaTunnel's own engine (Zeta, a JVM) from the shared zeta folder: the parity subset",
}

#: fixture name -> markers (the fixtures shared by many modules, and the servers' fixtures)
FIXTURE_MARKS: dict[str, tuple[str, ...]] = {
    "spark": ("spark",), "run_job": ("spark",), "jvm": ("spark",), "spark41": ("spark",),
    "spark_cluster": ("spark",), "kafka": ("kafka",), "metastore": ("hive", "spark"), "hive": ("hive", "spark"),
    "airflow_env": ("airflow", "spark"), "run_dag": ("airflow", "spark"),
    "airflow_services": ("airflow_services", "airflow", "spark"), "example_run": ("airflow_services", "browser"),
    "redis_server": ("redis",), "rabbitmq_server": ("rabbitmq",), "s3": ("s3",), "es": ("opensearch",),
    "ferretdb_server": ("ferretdb",), "influxdb_server": ("influxdb",), "cassandra_server": ("cassandra",),
    "hbase_server": ("hbase",), "hdfs_server": ("hdfs",), "rocketmq_server": ("rocketmq",),
}

#: a helper module the test module imports (or imports from) -> markers
HELPER_MARKS: dict[str, tuple[str, ...]] = {
    "tests.pg": ("postgres",), "tests.mysql": ("mariadb",), "tests.redis_server": ("redis",),
    "tests.rabbitmq_server": ("rabbitmq",), "tests.cassandra_server": ("cassandra",),
    "tests.activemq_server": ("activemq",), "tests.rocketmq_server": ("rocketmq",),
    "tests.pulsar_server": ("pulsar",),
    "tests.ferretdb": ("ferretdb",), "tests.influxdb_server": ("influxdb",),
    "tests.clickhouse_server": ("clickhouse",), "tests.streamload_server": ("mariadb",),
    "tests.file_servers": ("sftp", "ftp"), "tests.s3_server": ("s3",), "tests.kafka_server": ("kafka",),
    "tests.opensearch_server": ("opensearch",), "tests.hbase_server": ("hbase",),
    "tests.hdfs_server": ("hdfs",), "tests.hive_metastore": ("hive", "spark"), "tests.spark_connect": ("spark",),
    "tests.cluster.services": ("airflow_services", "spark"), "playwright": ("browser",),
    "tests.cluster.celery": ("airflow_services", "airflow", "postgres", "redis", "spark"),
    "playwright.sync_api": ("browser",),
}

#: a test module's path, or a prefix of test ids -> markers, for what neither fixtures nor imports show (Spark
#: started by a subprocess)
MODULE_MARKS: dict[str, tuple[str, ...]] = {
    "tests/test_cli.py": ("spark",),
    "tests/test_third_party_connector.py": ("spark",),
    "tests/runtime/test_launcher.py": ("spark",),
    "tests/runtime/test_console_memory.py": ("spark",),
    "tests/runtime/test_faults.py": ("spark",),
    "tests/runtime/test_end_to_end.py": ("spark",),
    "tests/runtime/test_streaming.py": ("spark",),
    "tests/runtime/test_driver_pyspark.py": ("spark",),
    "tests/runtime/test_pyspark_internals.py": ("spark",),
    "tests/runtime/test_jdbc_sqlite.py": ("spark",),
    "tests/runtime/test_count_retention.py": ("spark",),
    "tests/runtime/test_jvm_startup.py::test_a_job_runs_with_the_class_archive": ("spark",),
    "tests/runtime/test_jvm_startup.py::test_this_java_accepts_the_late_compiler_options": ("spark",),
    # a stand-in spark-submit (a shell script), refused by the unit guard by name like the real one
    "tests/runtime/test_planted_links.py::test_the_server_pid_file_replaces_a_planted_link": ("spark",),
    "tests/airflow/test_ui_view.py": ("browser", "airflow"),
    # the parity subset: each case runs on SeaTunnel's Zeta (a JVM) and on the project (spark-submit)
    "tests/parity/test_zeta.py": ("zeta", "spark"),
    "tests/airflow/test_stream_kill.py": ("spark",),
    "tests/airflow/test_deferrable.py::test_a_killed_triggerer_leaves_the_pipeline_running_and_the_next_one_resumes_it_once":
        ("spark",),
    "tests/airflow/test_durable.py::test_retry_after_a_failed_application": ("spark",),
    "tests/airflow/test_hook.py::test_submit_job_runs_every_pipeline": ("spark",),
    "tests/runtime/test_error_causes.py::test_a_read_only_target_is_deterministic": ("spark",),
    "tests/runtime/test_error_causes.py::test_spark_submit_exit_52": ("spark",),
    # a real Airflow parsing DAGs or reading its config in subprocesses (about ten seconds each)
    "tests/test_packaging.py::test_seatunnel_settings_come_from_airflow_config": ("airflow",),
    "tests/airflow/test_job_group.py::test_rendering_is_deterministic_across_parses": ("airflow",),
    "tests/airflow/test_job_group.py::test_parsing_context_builds_only_the_task_being_run": ("airflow",),
    "tests/airflow/test_authoring.py::test_dag_processor_view": ("airflow",),
    "tests/airflow/test_task_face.py::test_an_option_typo_is_a_parse_warning": ("airflow",),
    # builds the wheel and installs it into a fresh environment, then loads Airflow's entry points from there
    "tests/test_dist.py": ("airflow",),
}


def _helpers(module: types.ModuleType) -> set[str]:
    names = set()
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str) and name in HELPER_MARKS:
            names.add(name)
    return names


def _imported_by(code: types.CodeType) -> set[str]:
    """The helper modules a function imports in its body (``from tests import pg``, ``import tests.pg``)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _imported_by(const)
    return {h for h in HELPER_MARKS if h in names or (h.startswith("tests.") and "tests" in names
                                                      and h.rsplit(".", 1)[1] in names)}


def _fixture_markers(item: pytest.Item) -> set[str]:
    found: set[str] = set()
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        found.update(FIXTURE_MARKS.get(name, ()))
        for fixturedef in (info.name2fixturedefs.get(name, ()) if info is not None else ()):
            code = getattr(fixturedef.func, "__code__", None)
            for helper in _imported_by(code) if code is not None else ():
                found.update(HELPER_MARKS[helper])
    return found


def markers_of(item: pytest.Item) -> set[str]:
    """The markers ``item`` gets from its fixtures (by name, and the helpers they import), its module's helper
    imports and :data:`MODULE_MARKS` (a test module's path, or a prefix of a test's node id)."""
    found = _fixture_markers(item)
    module = getattr(item, "module", None)
    if module is not None:
        for helper in _helpers(module):
            found.update(HELPER_MARKS[helper])
    for prefix, names in MODULE_MARKS.items():
        if item.nodeid == prefix or item.nodeid.startswith(prefix + ("::" if prefix.endswith(".py") else "")):
            found.update(names)
    return found


def mark(items: list[pytest.Item]) -> None:
    """Add the markers :func:`markers_of` finds, and ``integration`` to every test with one of them."""
    for item in items:
        found = markers_of(item) | {m.name for m in item.iter_markers() if m.name in MARKERS}
        if found:
            found.add("integration")
        for name in sorted(found):
            item.add_marker(name)


# -- the unit-mode guard ---------------------------------------------------------------------------------

#: programs a unit test must not start (by base name): a JVM, Spark's launchers, the servers, a browser
FORBIDDEN = frozenset({
    "java", "spark-submit", "spark-class", "pyspark", "pg_ctl", "initdb", "postgres", "mariadbd",
    "mariadb-install-db", "redis-server", "sshd", "chromium", "mvn", "javac", "moto_server", "airflow",
    "run-zeta.sh", "ferretdb-v1.24.2", "influxd", "rabbitmq-server", "epmd",
})

#: what unit tests started that they should not have (this process), and the stub's log (child processes)
STARTED: list[str] = []
JVM_LOG = Path(tempfile.gettempdir()) / f"seatunnel-unit-jvm-{os.getpid()}.log"


def unit_mode() -> bool:
    return os.environ.get("SEATUNNEL_UNIT", "") not in ("", "0")


def examples(count: int) -> int:
    """A property test's number of examples: ``count``, a quarter of it in `make unit` (its quick check; `make
    test` runs them all)."""
    return max(count // 4, 20) if unit_mode() else count


def _program(args: Any) -> str:
    first = args if isinstance(args, (str, bytes, os.PathLike)) else next(iter(args), "")
    text = os.fsdecode(first)
    return os.path.basename(text.split()[0]) if text.strip() else ""


def install_guard() -> None:
    """Under ``SEATUNNEL_UNIT=1``: a ``java`` stub first on PATH and as ``JAVA_HOME`` (inherited by every child
    process: it records the call and exits 1), and a refusal of the :data:`FORBIDDEN` programs here."""
    stub = Path(tempfile.mkdtemp(prefix="seatunnel-unit-java-")) / "bin"
    stub.mkdir()
    java = stub / "java"
    java.write_text(f'#!/bin/sh\necho "java $*" >> "{JVM_LOG}"\n'
                    'echo "a unit test started a JVM (java $*): mark it (tests/markers.py)" >&2\nexit 1\n')
    java.chmod(0o755)
    os.environ["JAVA_HOME"] = str(stub.parent)
    os.environ["PATH"] = f"{stub}{os.pathsep}{os.environ.get('PATH', '')}"
    JVM_LOG.unlink(missing_ok=True)
    original = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
        program = _program(args)
        if program in FORBIDDEN or (program.startswith("python") and _runs_airflow(args)):
            STARTED.append(program)
            raise RuntimeError(f"a unit test started {program}: mark it (tests/markers.py)")
        original(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = guarded  # type: ignore[method-assign]


def _runs_airflow(args: Any) -> bool:
    """``python -m airflow ...``: a real Airflow in a subprocess (seconds each)."""
    if isinstance(args, (str, bytes)):
        return False
    words = [os.fsdecode(a) for a in args]
    return any(a == "-m" and b == "airflow" for a, b in itertools.pairwise(words))


def check_guard(item: pytest.Item, before: int) -> None:
    """Fail ``item`` if it started a forbidden program or a JVM (whatever it did with the error)."""
    jvm = JVM_LOG.read_text().splitlines() if JVM_LOG.exists() else []
    started = STARTED[:] + jvm[before:]
    STARTED.clear()
    if started:
        pytest.fail(f"{item.nodeid} is a unit test (SEATUNNEL_UNIT=1) but started {', '.join(sorted(set(started)))}: "
                    "mark it in tests/markers.py, or run it with `pytest -m integration`", pytrace=False)


def jvm_calls() -> int:
    return len(JVM_LOG.read_text().splitlines()) if JVM_LOG.exists() else 0


__all__ = ["MARKERS", "check_guard", "examples", "install_guard", "jvm_calls", "mark", "unit_mode"]
