"""The asset-triggered example (dags/seatunnel_asset_triggered.py): it parses with the other example DAGs,
is scheduled on the very alias the sync's pipeline declares, and a run of the sync queues a run of it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from ..conftest import ROOT
from .conftest import dags_folder

DAGS = ROOT / "dags"

QUEUED = """
import json
from sqlalchemy import select
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=%r)
from airflow.models.asset import AssetAliasModel, AssetDagRunQueue, AssetEvent, AssetModel
from airflow.utils.session import create_session
with create_session() as session:
    queued = [dag_id for dag_id, in session.execute(select(AssetDagRunQueue.target_dag_id))]
    events = [uri for uri, in session.execute(select(AssetModel.uri).join(AssetEvent, AssetEvent.asset_id == AssetModel.id)
              .where(AssetEvent.source_dag_id == "seatunnel_recurring_sync"))]
print(json.dumps({"queued": queued, "events": events, "errors": {str(k): v for k, v in bag.import_errors.items()},
                  "dags": sorted(bag.dag_ids)}))
"""


def test_the_example_is_scheduled_on_the_syncs_alias():
    from airflow.sdk import AssetAlias

    from .test_dags import _load_dag

    sync, report = _load_dag("seatunnel_recurring_sync"), _load_dag("seatunnel_asset_triggered")
    (pipeline,) = [t for t in sync.tasks if t.task_id not in ("sync.prepare", "sync.summary")]
    aliases = [o for o in pipeline.outlets if isinstance(o, AssetAlias)]
    assert aliases and list(report.timetable.asset_condition.objects) == aliases


def test_a_sync_run_queues_a_run_of_the_report(run_dag, airflow_env, tmp_path):
    dag_dir = dags_folder(airflow_env, "seatunnel_recurring_sync")
    (dag_dir / "configs").mkdir(parents=True, exist_ok=True)
    shutil.copy(DAGS / "configs" / "recurring_sync.conf", dag_dir / "configs")
    shutil.copy(DAGS / "seatunnel_asset_triggered.py", dag_dir)
    out = tmp_path / "synced"
    result = run_dag((DAGS / "seatunnel_recurring_sync.py").read_text(), "seatunnel_recurring_sync",
                     run_conf={"output_root": str(out)},
                     env={"AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False"})  # a paused DAG is not queued
    assert result["state"] == "success", result["log"][-6000:]
    proc = subprocess.run([sys.executable, "-c", QUEUED % str(dag_dir)], env=airflow_env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["errors"] == {} and {"seatunnel_recurring_sync", "seatunnel_asset_triggered"} <= set(found["dags"])
    partition = f"file://{out}/orders/dt=2024-05-06"
    assert partition in found["events"]  # recorded through the alias the report is scheduled on
    assert "seatunnel_asset_triggered" in found["queued"]  # the scheduler's next loop creates its run
