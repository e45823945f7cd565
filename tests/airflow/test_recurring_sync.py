"""The daily DAG ``seatunnel_recurring_sync`` under real Airflow (``dag.test()``) and real ``spark-submit``:
one date partition per logical date, and a new run of a date replaces its partition, never duplicates it.
Its DAGs folder also holds the asset-triggered example (dags/seatunnel_asset_triggered.py), and the first
run queues a run of it through the alias the sync's pipeline declares."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..conftest import ROOT
from .conftest import dags_folder

DAG_FILE = ROOT / "dags" / "seatunnel_recurring_sync.py"
CONFIG = ROOT / "dags" / "configs" / "recurring_sync.conf"
REPORT_DAG = ROOT / "dags" / "seatunnel_asset_triggered.py"
ROWS = 200  # row.num 100 × parallelism 2, also pinned by the job's own Assert (MIN_ROW = MAX_ROW = 200)
DAY1 = datetime(2024, 5, 6, tzinfo=UTC)
DAY2 = datetime(2024, 5, 7, tzinfo=UTC)


def _partition(root: Path, day: datetime) -> Path:
    return root / "orders" / f"dt={day:%Y-%m-%d}"


def _files(partition: Path) -> dict[str, tuple[int, int]]:
    """The partition's visible data files: name -> (inode, mtime_ns)."""
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in partition.iterdir()
            if f.is_file() and not f.name.startswith((".", "_"))}


def _rows(partition: Path) -> list[dict]:
    return [json.loads(line) for name in _files(partition) for line in (partition / name).read_text().splitlines()
            if line]


QUEUED = """
import json
from sqlalchemy import select
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=%r)
from airflow.models.asset import AssetDagRunQueue, AssetEvent, AssetModel
from airflow.utils.session import create_session
with create_session() as session:
    queued = [dag_id for dag_id, in session.execute(select(AssetDagRunQueue.target_dag_id))]
    events = [uri for uri, in session.execute(select(AssetModel.uri).join(AssetEvent, AssetEvent.asset_id == AssetModel.id)
              .where(AssetEvent.source_dag_id == "seatunnel_recurring_sync"))]
print(json.dumps({"queued": queued, "events": events, "errors": {str(k): v for k, v in bag.import_errors.items()},
                  "dags": sorted(bag.dag_ids)}))
"""


def _sync(run_dag, airflow_env, output_root: Path, day: datetime, run_after: datetime) -> dict:
    dag_dir = dags_folder(airflow_env, "seatunnel_recurring_sync")
    (dag_dir / "configs").mkdir(parents=True, exist_ok=True)
    shutil.copy(CONFIG, dag_dir / "configs" / CONFIG.name)
    shutil.copy(REPORT_DAG, dag_dir)  # scheduled on the sync's alias
    result = run_dag(DAG_FILE.read_text(), "seatunnel_recurring_sync", logical_date=day, run_after=run_after,
                     run_conf={"output_root": str(output_root)},
                     env={"AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False"})  # a paused DAG is not queued
    assert result["state"] == "success", result["log"][-6000:]
    (metrics,) = [v for k, v in result["xcom"].items() if k not in ("sync.prepare", "sync.summary")]
    assert metrics["status"] == "FINISHED" and metrics["read_count"] == ROWS
    assert metrics["per_sink"] == {"sink[0] LocalFile": ROWS, "sink[1] Assert": ROWS}
    return result


def _assert_the_report_is_queued(airflow_env, output_root: Path, day: datetime) -> None:
    """The run recorded an asset event of the day's partition through the alias the asset-triggered example
    is scheduled on, which queued a run of that example (the scheduler's next loop creates it)."""
    dag_dir = dags_folder(airflow_env, "seatunnel_recurring_sync")
    proc = subprocess.run([sys.executable, "-c", QUEUED % str(dag_dir)], env=airflow_env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["errors"] == {} and {"seatunnel_recurring_sync", "seatunnel_asset_triggered"} <= set(found["dags"])
    assert f"file://{_partition(output_root, day)}" in found["events"]  # through the alias the report is scheduled on
    assert "seatunnel_asset_triggered" in found["queued"]


def _seed_other_day(root: Path) -> dict[str, tuple[int, int]]:
    """Day 2's partition as an earlier run left it (one data file): no run of day 1 may touch it."""
    partition = _partition(root, DAY2)
    partition.mkdir(parents=True)
    rows = [{"order_id": i, "channel": "WEB", "amount": "1.00", "order_date": f"{DAY2:%Y-%m-%d}"} for i in range(3)]
    (partition / "part-earlier.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return _files(partition)


def test_each_day_writes_its_own_partition_and_reruns_do_not_duplicate(run_dag, airflow_env, tmp_path):
    root = tmp_path / "warehouse"  # from the run's conf (DAG param output_root), not the DAG's default
    # Another day's partition, seeded rather than written by a third DAG run (a minute of the suite): the
    # day comes from the logical date, which the rerun below also shows (a run_after 30 days later still
    # writes 2024-05-06), and what is asserted of the other day is that day 1's runs leave it as it was.
    day2_files = _seed_other_day(root)
    # run_after = the logical date: the run id is manual__<logical date>, as a re-run of that day would have
    first = _sync(run_dag, airflow_env, root, DAY1, run_after=DAY1)

    assert sorted(p.name for p in (root / "orders").iterdir()) == ["dt=2024-05-06", "dt=2024-05-07"]
    rows = _rows(_partition(root, DAY1))
    assert len(rows) == ROWS  # every row of the run, once
    assert {r["order_date"] for r in rows} == {f"{DAY1:%Y-%m-%d}"}  # and no other day's
    assert {r["channel"] for r in rows} <= {"WEB", "STORE", "APP"}
    assert _files(_partition(root, DAY2)) == day2_files  # DROP_DATA dropped the run's own day only
    day1_files = _files(_partition(root, DAY1))
    safe_run_id = first["run_id"].replace(":", "_").replace("+", "_")
    assert all(safe_run_id in name for name in day1_files), (first["run_id"], sorted(day1_files))
    _assert_the_report_is_queued(airflow_env, root, DAY1)

    # The same run again (same run id, as Airflow's clear or retry runs it) is a restore that writes nothing and
    # does not drop again: asserted through Airflow by tests/airflow/test_job_group_run.py (a retry of a run
    # restores it exactly once) and, with DROP_DATA, by tests/runtime/test_localfile.py
    # (test_split_job_pipelines_share_a_target: the same run id again leaves the very same files).

    # A new run of the same day (another run id, e.g. triggered again by hand): DROP_DATA empties the
    # day's partition first, so the day holds exactly the new run's rows, and the other day is untouched.
    rerun = _sync(run_dag, airflow_env, root, DAY1, run_after=DAY1 + timedelta(days=30))
    assert rerun["run_id"] != first["run_id"]
    files = _files(_partition(root, DAY1))
    new_run_id = rerun["run_id"].replace(":", "_").replace("+", "_")
    assert files and all(new_run_id in name for name in files), sorted(files)
    rows = _rows(_partition(root, DAY1))
    assert len(rows) == ROWS and {r["order_date"] for r in rows} == {"2024-05-06"}
    assert _files(_partition(root, DAY2)) == day2_files
