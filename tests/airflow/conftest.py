"""Real Airflow for the operator tests: an isolated AIRFLOW_HOME with SQLite, migrated once per session.

DAGs run with ``dag.test()`` in a subprocess, so Airflow's settings come from the environment set here;
``spark_default`` comes from ``AIRFLOW_CONN_SPARK_DEFAULT`` (JSON: ``host`` ``local[1]`` is the master as is).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..conftest import ROOT

BIN = Path(sys.executable).parent


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
    proc = subprocess.run([str(BIN / "airflow"), "db", "migrate"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return env


RUNNER = """
import json, sys
from datetime import datetime, timezone
sys.path.insert(0, {dag_dir!r})
from {module} import dag
dr = dag.test(logical_date=datetime(2024, 5, 6, tzinfo=timezone.utc))
tis = {{ti.task_id: {{"state": str(ti.state), "try_number": ti.try_number}} for ti in dr.get_task_instances()}}
ops = {{t.task_id: {{"retries": t.retries, "retry_delay": t.retry_delay.total_seconds()}} for t in dag.tasks}}
with open({result!r}, "w") as f:
    json.dump({{"state": str(dr.state), "tis": tis, "ops": ops}}, f)
"""


@pytest.fixture
def run_dag(airflow_env, tmp_path):
    """Write ``source`` (defining ``dag``) into the DAGs folder as ``module``, run ``dag.test()`` in a subprocess.

    ``dag.test()`` syncs the DAGs folder (the bundle) to the database, so the file must live there; each test
    uses its own ``module`` and dag id.
    """

    def run(source: str, module: str) -> dict:
        dag_dir = Path(airflow_env["AIRFLOW__CORE__DAGS_FOLDER"])
        dag_dir.mkdir(exist_ok=True)
        (dag_dir / f"{module}.py").write_text(textwrap.dedent(source))
        result = tmp_path / "result.json"
        runner = RUNNER.format(dag_dir=str(dag_dir), module=module, result=str(result))
        proc = subprocess.run([sys.executable, "-c", runner],
                              env=airflow_env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert result.exists(), proc.stdout[-5000:] + proc.stderr[-5000:]
        out = json.loads(result.read_text())
        out["log"] = proc.stdout + proc.stderr
        return out

    return run
