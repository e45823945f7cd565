"""Real Airflow for the operator tests: an isolated AIRFLOW_HOME with SQLite (a copy of the session's migrated
template, tests/airflow_db.py).

DAGs run with ``dag.test()`` in a subprocess, so Airflow's settings come from the environment set here;
``spark_default`` comes from ``AIRFLOW_CONN_SPARK_DEFAULT`` (JSON: ``host`` ``local[1]`` is the master as is).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ..airflow_db import migrate, shared_dir
from ..conftest import ROOT

BIN = Path(sys.executable).parent
DEFAULT_LOGICAL_DATE = datetime(2024, 5, 6, tzinfo=UTC)


@pytest.fixture(scope="session")
def airflow_env(tmp_path_factory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("airflow-home")
    env = dict(os.environ)
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[1]"}),
        "SEATUNNEL_PLAN_CACHE": str(home / "plan-cache"),
        "PATH": str(BIN) + os.pathsep + env.get("PATH", ""),
        "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    })
    migrate(env, shared_dir(tmp_path_factory))
    return env


def dags_folder(airflow_env: dict[str, str], module: str) -> Path:
    """The DAGs folder of ``module``'s runs, a subfolder of the session's, passed to the run as its
    ``AIRFLOW__CORE__DAGS_FOLDER``: ``dag.test()`` parses and syncs its whole folder, so each module gets
    its own (not every DAG the worker's tests wrote before); the same module gets the same folder, so a
    rerun of a run id finds its DAG where it was."""
    folder = Path(airflow_env["AIRFLOW__CORE__DAGS_FOLDER"]) / module
    folder.mkdir(parents=True, exist_ok=True)
    return folder


RUNNER = """
import json, sys
from datetime import datetime, timezone
sys.path.insert(0, {dag_dir!r})
from {module} import dag
from airflow.models.xcom import XComModel
from airflow.utils.session import create_session
run_after = datetime.fromisoformat({run_after!r}) if {run_after!r} else None
dr = dag.test(logical_date=datetime.fromisoformat({logical_date!r}), run_after=run_after, run_conf={run_conf!r})
tis = {{ti.task_id: {{"state": str(ti.state), "try_number": ti.try_number}} for ti in dr.get_task_instances()}}
ops = {{t.task_id: {{"retries": t.retries, "retry_delay": t.retry_delay.total_seconds()}} for t in dag.tasks}}
with create_session() as session:
    xcom = {{x.task_id: XComModel.deserialize_value(x) for x in session.scalars(
        XComModel.get_many(run_id=dr.run_id, dag_ids=dag.dag_id, key="return_value"))}}
    xcoms = {{}}
    for x in session.scalars(XComModel.get_many(run_id=dr.run_id, dag_ids=dag.dag_id, key=None)):
        xcoms.setdefault(x.key, {{}})[x.task_id] = XComModel.deserialize_value(x)
with open({result!r}, "w") as f:
    json.dump({{"state": str(dr.state), "run_id": dr.run_id, "tis": tis, "ops": ops, "xcom": xcom, "xcoms": xcoms}},
              f, default=str)
"""


@pytest.fixture
def run_dag(airflow_env, tmp_path):
    """Write ``source`` (defining ``dag``) into ``module``'s DAGs folder (:func:`dags_folder`) as ``module``,
    run ``dag.test()`` in a subprocess.

    ``dag.test()`` syncs the DAGs folder (the bundle) to the database, so the file must live there; each test
    uses its own ``module`` and dag id. ``logical_date`` defaults to 2024-05-06 (UTC); ``run_after`` (default:
    now) names the run (``manual__<run_after>``): the same ``run_after`` twice reruns the same run id;
    ``run_conf`` is the run's ``conf`` (DAG params); ``env`` adds environment variables (``SEATUNNEL_FAULTS``).
    The result holds the run's state, run id, task
    instances, operators, XCom return values (``xcom``) and every XCom by key and task (``xcoms``).
    """

    def run(source: str, module: str, *, logical_date: datetime | None = None, run_after: datetime | None = None,
            run_conf: dict | None = None, env: dict[str, str] | None = None) -> dict:
        dag_dir = dags_folder(airflow_env, module)
        (dag_dir / f"{module}.py").write_text(textwrap.dedent(source))
        result = tmp_path / "result.json"
        result.unlink(missing_ok=True)
        runner = RUNNER.format(dag_dir=str(dag_dir), module=module, result=str(result),
                               logical_date=(logical_date or DEFAULT_LOGICAL_DATE).isoformat(),
                               run_after=run_after.isoformat() if run_after else "", run_conf=run_conf)
        proc = subprocess.run([sys.executable, "-c", runner],
                              env={**airflow_env, "AIRFLOW__CORE__DAGS_FOLDER": str(dag_dir), **(env or {})}, cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert result.exists(), proc.stdout[-5000:] + proc.stderr[-5000:]
        out = json.loads(result.read_text())
        out["log"] = proc.stdout + proc.stderr
        return out

    return run
