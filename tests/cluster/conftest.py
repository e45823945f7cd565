"""Fixtures for "outgrowing one machine": a Spark standalone cluster, and Airflow's real services.

* ``spark_cluster`` (once per module): a master and a worker (2 cores, 2 GiB) from the installed
  PySpark, on free loopback ports, with their work and log directories under the test's temp dir.
* ``airflow_services`` (once per module): ``airflow api-server``, ``scheduler`` (LocalExecutor,
  parallelism 4) and ``dag-processor`` on a fresh home (SQLite) whose DAGs folder is a copy of the
  project's ``dags/``; a test user ``tester`` (admin) of the simple auth manager.

Servers always stop (fixture finalizers, failures included), by their own process groups.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..airflow_db import migrate, shared_dir
from ..conftest import ROOT
from ..servers import free_port, on_a_free_port
from .services import Service, http_json, stop_all, wait_for

BIN = Path(sys.executable).parent
#: Screenshots and other artifacts worth keeping after the run (``.cache/`` is ignored by git).
ARTIFACTS = Path(os.environ.get("SEATUNNEL_TEST_ARTIFACTS", ROOT / ".cache" / "test-artifacts"))


def report_artifact(node: Any, line: str) -> None:
    """Name an artifact in pytest's closing summary (tests/conftest.py prints it, also from xdist workers)."""
    node.user_properties.append(("artifact", line))




def base_environ(**settings: str) -> dict[str, str]:
    """This environment without Airflow settings of its own, with the venv first on PATH and this tree importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({
        "PATH": str(BIN) + os.pathsep + env.get("PATH", ""),
        "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        "PYSPARK_PYTHON": sys.executable,
    })
    env.update(settings)
    return env


# -- Spark standalone ---------------------------------------------------------------------------------


@dataclass
class SparkCluster:
    port: int
    ui_port: int
    work_dir: Path
    services: list[Service] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.ui_port}"

    def status(self) -> dict[str, Any]:
        """The master's JSON status (workers, active and completed applications)."""
        return http_json(f"{self.ui_url}/json/")

    def connection(self) -> str:
        """An Airflow ``spark`` connection (JSON) to this master in client deploy mode."""
        return json.dumps({"conn_type": "spark", "host": "spark://127.0.0.1", "port": self.port,
                           "extra": {"deploy-mode": "client", "master_ui_port": self.ui_port}})


def spark_home() -> str:
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None and spec.origin, "PySpark is not installed"
    return str(Path(spec.origin).parent)


def _bound_ports(log: Path) -> tuple[int, int] | None:
    """The master's RPC and web UI ports, once its log names both."""
    text = log.read_text(errors="replace") if log.exists() else ""
    rpc = re.search(r"Starting Spark master at spark://[^\s:]+:(\d+)", text)
    ui = re.search(r"Bound MasterWebUI to \S+ and started at http://[^\s:]+:(\d+)", text.replace(",", ""))
    return (int(rpc.group(1)), int(ui.group(1))) if rpc and ui else None


@contextmanager
def standalone_cluster(root: Path) -> Iterator[SparkCluster]:
    """A Spark standalone master and one worker (2 cores, 2 GiB) on free loopback ports, under ``root``."""
    assert shutil.which("java"), "Java 17 is required (apt-get install openjdk-17-jre-headless)"
    cluster = SparkCluster(port=0, ui_port=0, work_dir=root / "work")
    env = base_environ(SPARK_HOME=spark_home(), SPARK_WORKER_DIR=str(cluster.work_dir),
                       SPARK_LOCAL_DIRS=str(root / "local"), SPARK_LOG_DIR=str(root / "logs"))
    spark_class = str(BIN / "spark-class")
    try:
        # port 0: the master binds free ports itself (a port picked before could be taken by then) and logs them
        cluster.services.append(Service(
            "spark master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                             "--port", "0", "--webui-port", "0"],
            env, root / "master.log", cwd=root))
        cluster.port, cluster.ui_port = wait_for("the Spark master to bind its ports",
                                                 lambda: _bound_ports(root / "master.log"), 120, cluster.services)
        cluster.services.append(Service(
            "spark worker", [spark_class, "org.apache.spark.deploy.worker.Worker", cluster.master_url,
                             "--host", "127.0.0.1", "--cores", "2", "--memory", "2g",
                             "--webui-port", "0", "--work-dir", str(cluster.work_dir)],
            env, root / "worker.log", cwd=root))
        wait_for("the Spark worker to register with the master",
                 lambda: cluster.status().get("aliveworkers", 0) >= 1, 120, cluster.services)
        yield cluster
    finally:
        stop_all(cluster.services)


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory) -> Iterator[SparkCluster]:
    """:func:`standalone_cluster` for a test module."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone")) as cluster:
        yield cluster


# -- Airflow ------------------------------------------------------------------------------------------


def airflow_environ(home: Path, **settings: str) -> dict[str, str]:
    """An isolated Airflow (``home``, SQLite, no examples) whose DAGs folder is ``home/dags``."""
    return base_environ(**{
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "SEATUNNEL_PLAN_CACHE": str(home / "plan-cache"),
        **settings,
    })


@dataclass
class AirflowServices:
    url: str
    home: Path
    env: dict[str, str]
    user: str
    password: str
    services: list[Service] = field(default_factory=list)
    _token: str | None = None

    @property
    def token(self) -> str:
        """A JWT for the public REST API (``POST /auth/token`` with the test user's password)."""
        if self._token is None:
            answer = http_json(f"{self.url}/auth/token", "POST", {"username": self.user, "password": self.password})
            self._token = answer["access_token"]
        return self._token

    def api(self, path: str, method: str = "GET", body: Any = None) -> Any:
        """Call the public API v2 (``path`` relative to ``/api/v2/``) as the test user."""
        return http_json(f"{self.url}/api/v2/{path.lstrip('/')}", method, body, token=self.token)


@contextmanager
def airflow_running(home: Path, dag_id: str, shared: Path, **settings: str) -> Iterator[AirflowServices]:
    """Airflow's API server, scheduler (LocalExecutor, parallelism 4) and DAG processor on ``home``
    (its ``dags`` folder already written), a user ``tester`` (admin); ready once ``dag_id`` is parsed
    without import errors, and unpaused. Every other DAG stays paused: a scheduled DAG of the folder would
    otherwise start runs of its own beside the test's (spark-submit JVMs, retries, another DAG's default
    output directory). ``shared``: the folder of the session's migrated database (tests/airflow_db.py);
    ``settings`` add environment variables. Stopped at exit, always, side by side: a
    server's own graceful shutdown is not under test, so what is left after 5 s is killed."""
    user, password = "tester", "tester-password"
    (home / "passwords.json").write_text(json.dumps({user: password}))
    secret = os.urandom(24).hex()  # every process must sign and check the same tokens (the API's and the tasks')

    def environ(port: int) -> dict[str, str]:
        url = f"http://127.0.0.1:{port}"
        return airflow_environ(home, **{
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{user}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{url}/execution/",
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__BASE_URL": url,
            "AIRFLOW__API__WORKERS": "1",
            "AIRFLOW__API_AUTH__JWT_SECRET": secret,
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[1]"}),
            **settings,
        })

    migrate(environ(0), shared)  # the database does not depend on the port
    airflow = str(BIN / "airflow")

    def start_services() -> AirflowServices:
        """The three services, the API server on a port picked now, once it answers (AssertionError, with
        the logs, when it does not)."""
        env = environ(free_port())
        started = AirflowServices(url=env["AIRFLOW__API__BASE_URL"], home=home, env=env, user=user, password=password)
        for command in ("api-server", "scheduler", "dag-processor"):
            started.services.append(Service(f"airflow {command}", [airflow, command], env,
                                             home / f"{command}.log", cwd=home))
        try:
            wait_for("Airflow's API server", lambda: http_json(f"{started.url}/api/v2/monitor/health"), 180,
                     started.services, 1.0)
        except AssertionError:
            stop_all(started.services, timeout=5.0)
            raise
        return started

    services = on_a_free_port(start_services, AssertionError)  # the API server's port may be taken before its bind
    url = services.url
    try:
        def ready() -> bool:
            health = http_json(f"{url}/api/v2/monitor/health")
            return (health["scheduler"]["status"] == "healthy" and health["dag_processor"]["status"] == "healthy"
                    and dag_id in {d["dag_id"] for d in services.api("dags")["dags"]})

        wait_for(f"Airflow's services and the parsed {dag_id} DAG", ready, 180, services.services, 1.0)
        errors = services.api("importErrors")["import_errors"]
        assert not errors, errors
        assert services.api(f"dags/{dag_id}", "PATCH", {"is_paused": False})["is_paused"] is False
        yield services
    finally:
        stop_all(services.services, timeout=5.0)


@pytest.fixture(scope="module")
def airflow_services(tmp_path_factory) -> Iterator[AirflowServices]:
    """:func:`airflow_running` on a fresh home whose DAGs folder is a copy of the project's ``dags/``.

    Pipelines run with ``spark_default`` = ``local[1]``: one small JVM per pipeline task.
    """
    home = tmp_path_factory.mktemp("airflow-services")
    shutil.copytree(ROOT / "dags", home / "dags", ignore=shutil.ignore_patterns("__pycache__"))
    with airflow_running(home, "seatunnel_example", shared_dir(tmp_path_factory)) as services:
        yield services
