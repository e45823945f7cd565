"""A multi-pipeline job through SeaTunnelJobGroup on a Spark standalone cluster (client deploy mode).

The DAG runs with ``dag.test()`` against a ``spark://`` connection; each pipeline becomes its own
application on the master, with small executors (1 core, 512 MiB) so that two pipelines fit on the
2-core worker side by side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ..airflow_db import migrate, shared_dir
from .conftest import airflow_environ

JOB = """
env { job.name = "standalone", job.retry.times = 0 }
source {
  FakeSource { plugin_output = "clicks", parallelism = 2, row.num = 50, schema = { fields { id = bigint, page = string } } }
  FakeSource { plugin_output = "orders", row.num = 30, schema = { fields { id = bigint, amount = int } } }
}
transform {
  Sql { plugin_input = "orders", plugin_output = "paid", query = "SELECT id, CAST(amount AS bigint) * 2 AS doubled FROM orders" }
}
sink {
  LocalFile { plugin_input = "clicks", path = "__OUT__/clicks", file_format_type = "json" }
  LocalFile { plugin_input = "paid", path = "__OUT__/paid", file_format_type = "json" }
}
"""

DAG_SOURCE = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

SMALL_EXECUTORS = {{"executor_cores": 1, "executor_memory": "512m", "total_executor_cores": 1}}

with DAG("st_standalone", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r},
                      operator_kwargs={{"spark_conn_id": "spark_cluster", "spark_submit_kwargs": SMALL_EXECUTORS}})
"""

RUNNER = """
import json, sys
from datetime import datetime, timezone
sys.path.insert(0, {dag_dir!r})
from st_standalone import dag
from sqlalchemy import select
from airflow.models.xcom import XComModel
from airflow.utils.session import create_session

dr = dag.test(logical_date=datetime(2024, 5, 6, tzinfo=timezone.utc))
xcoms = {{}}
with create_session() as session:
    for row in session.scalars(XComModel.get_many(run_id=dr.run_id, dag_ids=dag.dag_id)):
        xcoms.setdefault(row.task_id, {{}})[row.key] = XComModel.deserialize_value(row)
tis = {{ti.task_id: str(ti.state) for ti in dr.get_task_instances()}}
with open({result!r}, "w") as f:
    json.dump({{"state": str(dr.state), "tis": tis, "xcoms": xcoms}}, f)
"""


def _rows(directory: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(directory.glob("*.json")) for line in f.read_text().splitlines() if line]


def test_job_group_runs_each_pipeline_as_an_application_on_the_standalone_master(spark_cluster, tmp_path,
                                                                                 tmp_path_factory):
    out = tmp_path / "out"
    conf = tmp_path / "standalone.conf"
    conf.write_text(JOB.replace("__OUT__", str(out)))
    home = tmp_path / "airflow"
    env = airflow_environ(home, AIRFLOW_CONN_SPARK_CLUSTER=spark_cluster.connection())
    migrate(env, shared_dir(tmp_path_factory))
    (home / "dags").mkdir(parents=True, exist_ok=True)
    (home / "dags" / "st_standalone.py").write_text(textwrap.dedent(DAG_SOURCE.format(config=str(conf))))
    result_file = tmp_path / "result.json"
    runner = RUNNER.format(dag_dir=str(home / "dags"), result=str(result_file))
    proc = subprocess.run([sys.executable, "-c", runner], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    log = proc.stdout + proc.stderr
    (tmp_path / "dag-test.log").write_text(log)
    assert result_file.exists(), log[-6000:]
    result = json.loads(result_file.read_text())
    assert result["state"] == "success", (result["tis"], log[-6000:])
    assert set(result["tis"].values()) == {"success"} and len(result["tis"]) == 4, result["tis"]

    # the data: every row once, through the cluster's executors
    clicks, paid = _rows(out / "clicks"), _rows(out / "paid")
    assert len(clicks) == 100 and len({r["id"] for r in clicks}) <= 100
    assert len(paid) == 30 and all(set(r) == {"id", "doubled"} and r["doubled"] % 2 == 0 for r in paid)

    # each pipeline task's metrics name its application on the master
    pipelines = {t: x for t, x in result["xcoms"].items() if t not in ("job.prepare", "job.summary")}
    assert len(pipelines) == 2, result["xcoms"].keys()
    apps = {}
    for task_id, xcom in pipelines.items():
        metrics = xcom["return_value"]
        assert metrics["status"] == "FINISHED" and metrics["read_count"] == metrics["write_count"] > 0, metrics
        assert metrics["application_id"].startswith("app-"), metrics
        assert xcom["_link_SparkApplicationLink"] == f"{spark_cluster.ui_url}/app/?appId={metrics['application_id']}"
        apps[task_id.split(".", 1)[1]] = metrics["application_id"]
    assert sorted(m["return_value"]["write_count"] for m in pipelines.values()) == [30, 100]
    assert result["xcoms"]["job.summary"]["return_value"]["write_count"] == 130

    # the master lists both applications as completed, named after the pipeline tasks, with small executors
    status = spark_cluster.status()
    completed = {a["id"]: a for a in status["completedapps"]}
    assert not status["activeapps"], status["activeapps"]
    for local_id, app_id in apps.items():
        app = completed[app_id]
        assert local_id in app["name"] and app["name"] == f"standalone:{local_id}", app
        assert app["state"] == "FINISHED", app
        assert app["memoryperexecutor"] == 512 and app["cores"] <= 1, app


def test_make_connect_server_runs_on_the_standalone_master(spark_cluster, tmp_path):
    """``make connect-server CONNECT_MASTER=spark://...``: the Connect server is an application of the
    cluster, a job's pipelines run as its sessions on the cluster's executors, ``make connect-server-stop``
    ends it."""
    from ..conftest import ROOT
    from ..servers import free_port, on_a_free_port

    out = tmp_path / "out"
    conf = tmp_path / "standalone.conf"
    conf.write_text(JOB.replace("__OUT__", str(out)))
    directory = tmp_path / "connect"
    venv = Path(sys.executable).parent.parent
    # the suite's venv as it is (-o: never rebuilt by this test, whatever make thinks of its stamp)
    make = ["make", "-C", str(ROOT), f"VENV={venv}", "-o", f"{venv}/.installed", f"CONNECT_DIR={directory}"]

    def start_once() -> int:
        port = free_port()
        started = subprocess.run([*make, "connect-server", f"SPARK_CONNECT_PORT={port}",
                                  f"CONNECT_MASTER={spark_cluster.master_url}"], capture_output=True, text=True,
                                 timeout=300)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        return port

    port = on_a_free_port(start_once, AssertionError)  # a port taken before the server binds it: another
    try:
        running = list(spark_cluster.status()["activeapps"])
        assert len(running) == 1 and "Connect" in running[0]["name"], running
        env = {**{k: v for k, v in os.environ.items() if k != "SEATUNNEL_FAULTS"},
               "SPARK_CONNECT_AUTHENTICATE_TOKEN": (directory / "token").read_text().strip()}
        metrics = tmp_path / "metrics.json"
        run = subprocess.run([sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf), "--remote",
                              f"sc://localhost:{port}", "--metrics-file", str(metrics)], env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        job = json.loads(metrics.read_text())
        assert {p["application_id"] for p in job["pipelines"]} == {running[0]["id"]}  # sessions of the one app
        assert len(_rows(out / "clicks")) == 100 and len(_rows(out / "paid")) == 30
    finally:
        stopped = subprocess.run([*make, "connect-server-stop"], capture_output=True, text=True, timeout=120)
    assert stopped.returncode == 0, stopped.stdout[-2000:] + stopped.stderr[-2000:]
    assert not spark_cluster.status()["activeapps"]
