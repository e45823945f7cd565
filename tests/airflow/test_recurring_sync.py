"""The daily DAG ``seatunnel_recurring_sync`` under real Airflow (``dag.test()``) and real ``spark-submit``:
one date partition per logical date, and a new run of a date replaces its partition, never duplicates it."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..conftest import ROOT
from .conftest import dags_folder

DAG_FILE = ROOT / "dags" / "seatunnel_recurring_sync.py"
CONFIG = ROOT / "dags" / "configs" / "recurring_sync.conf"
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


def _sync(run_dag, airflow_env, output_root: Path, day: datetime, run_after: datetime) -> dict:
    dag_dir = dags_folder(airflow_env, "seatunnel_recurring_sync")
    (dag_dir / "configs").mkdir(parents=True, exist_ok=True)
    shutil.copy(CONFIG, dag_dir / "configs" / CONFIG.name)
    result = run_dag(DAG_FILE.read_text(), "seatunnel_recurring_sync", logical_date=day, run_after=run_after,
                     run_conf={"output_root": str(output_root)})
    assert result["state"] == "success", result["log"][-6000:]
    (metrics,) = [v for k, v in result["xcom"].items() if k not in ("sync.prepare", "sync.summary")]
    assert metrics["status"] == "FINISHED" and metrics["read_count"] == ROWS
    assert metrics["per_sink"] == {"sink[0] LocalFile": ROWS, "sink[1] Assert": ROWS}
    return result


def test_each_day_writes_its_own_partition_and_reruns_do_not_duplicate(run_dag, airflow_env, tmp_path):
    root = tmp_path / "warehouse"  # from the run's conf (DAG param output_root), not the DAG's default
    # run_after = the logical date: the run id is manual__<logical date>, as a re-run of that day would have
    first = _sync(run_dag, airflow_env, root, DAY1, run_after=DAY1)
    _sync(run_dag, airflow_env, root, DAY2, run_after=DAY2)

    assert sorted(p.name for p in (root / "orders").iterdir()) == ["dt=2024-05-06", "dt=2024-05-07"]
    for day in (DAY1, DAY2):
        rows = _rows(_partition(root, day))
        assert len(rows) == ROWS  # every row of the run, once
        assert {r["order_date"] for r in rows} == {f"{day:%Y-%m-%d}"}  # and no other day's
        assert {r["channel"] for r in rows} <= {"WEB", "STORE", "APP"}
    day1_files = _files(_partition(root, DAY1))
    day2_files = _files(_partition(root, DAY2))
    safe_run_id = first["run_id"].replace(":", "_").replace("+", "_")
    assert all(safe_run_id in name for name in day1_files), (first["run_id"], sorted(day1_files))

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
