"""A job group on the CeleryExecutor with two workers (tests/cluster/celery.py: Redis as the broker, PostgreSQL
as the metadata database), its pipelines as applications of the Spark standalone cluster (client mode).

Both tests are `slow` (`make test-slow`): starting Airflow's services, two Celery workers and their
servers takes minutes on 2 cores, more than `make test`'s time budget allows for one executor's
check. The two pipelines run side by side, one on each worker (each takes one task at a time), and every row
lands once. A worker killed mid-pipeline (with the task process and Spark driver it started, as when
its machine dies) is the second test here and the trials of ``benchmarks/airflow_task_kills.py --executor
celery``: the scheduler fails the task once its heartbeat stops, and the retry, on the other worker,
restores the pipeline exactly once.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from .celery import celery_airflow, drivers, kill_worker, workers

DAG_ID = "st_celery"
JOB = """
env { job.name = "celery_job", job.retry.times = 1, job.retry.interval.seconds = 1 }
source {
  FakeSource { plugin_output = "clicks", parallelism = 2, row.num = __ROWS__, schema = { fields { id = bigint, page = string } } }
  FakeSource { plugin_output = "orders", row.num = __ROWS__, schema = { fields { id = bigint, amount = int } } }
}
sink {
  LocalFile { plugin_input = "clicks", path = "__OUT__/clicks", file_format_type = "json" }
  LocalFile { plugin_input = "orders", path = "__OUT__/orders", file_format_type = "json" }
}
"""
DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

SMALL_EXECUTORS = {{"executor_cores": 1, "executor_memory": "512m", "total_executor_cores": 1}}

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1), catchup=False) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r},
                      operator_kwargs={{"spark_conn_id": "spark_cluster", "spark_submit_kwargs": SMALL_EXECUTORS}})
"""
ROWS = 2_000


def rows(directory: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(directory.glob("*.json")) for line in f.read_text().splitlines() if line]


def job_files(root: Path, rows_per_source: int) -> Path:
    """The job's config under ``root`` (targets ``root/out/clicks`` and ``root/out/orders``)."""
    conf = root / "celery.conf"
    conf.write_text(JOB.replace("__OUT__", str(root / "out")).replace("__ROWS__", str(rows_per_source)))
    return conf


def run(services, run_id: str, kill: str | None = None, timeout: float = 600) -> tuple[str, dict[str, set[int]],
                                                                                     list[dict]]:
    """Trigger a run and follow it: (its state, the Spark drivers of the job seen, by the worker that
    started them, the pipeline task instances). With ``kill``, that worker is killed as soon as it runs
    a driver of the job."""
    services.api(f"dags/{DAG_ID}/dagRuns", "POST", {"dag_run_id": run_id, "logical_date": None})
    seen: dict[int, str] = {}
    killed = False
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        seen.update(drivers(services, "celery_job"))
        if kill and not killed and kill in seen.values():
            kill_worker(services, next(w for w in workers(services) if w.name.endswith(kill)))
            killed = True
        try:
            state = services.api(f"dags/{DAG_ID}/dagRuns/{run_id}")["state"]
        except OSError:  # the API server is slow to answer on a loaded machine: ask again
            continue
        if state in ("success", "failed"):
            break
        time.sleep(0.5)
    tasks = [t for t in services.api(f"dags/{DAG_ID}/dagRuns/{run_id}/taskInstances")["task_instances"]
             if t["task_id"] not in ("job.prepare", "job.summary")]
    by_worker: dict[str, set[int]] = {}
    for pid, worker in seen.items():
        by_worker.setdefault(worker, set()).add(pid)
    return state, by_worker, tasks


@pytest.fixture(scope="module")
def celery(spark_cluster, tmp_path_factory):
    root = tmp_path_factory.mktemp("celery")
    home = root / "airflow"
    (home / "dags").mkdir(parents=True)
    conf = job_files(root, ROWS)
    (home / "dags" / f"{DAG_ID}.py").write_text(textwrap.dedent(DAG.format(dag_id=DAG_ID, config=str(conf))))
    with celery_airflow(home, DAG_ID, AIRFLOW_CONN_SPARK_CLUSTER=spark_cluster.connection()) as services:
        yield services, root / "out"


@pytest.mark.slow
def test_a_job_groups_pipelines_run_on_both_celery_workers_against_the_cluster(celery):
    services, out = celery
    state, by_worker, tasks = run(services, "both_workers")
    assert state == "success", (tasks, [w.tail(3000) for w in workers(services)])
    assert set(by_worker) == {"worker1", "worker2"}, by_worker  # one pipeline on each worker
    for name in ("clicks", "orders"):
        found = rows(out / name)
        assert len(found) == (2 * ROWS if name == "clicks" else ROWS), name  # parallelism 2: two partitions
    assert {t["try_number"] for t in tasks} == {1}


@pytest.mark.slow
def test_a_worker_killed_mid_pipeline_is_restored_once_by_the_retry_on_the_other(celery):
    services, out = celery
    for name in ("clicks", "orders"):
        for f in (out / name).glob("*.json"):
            f.unlink()
    state, by_worker, tasks = run(services, "worker_killed", kill="worker1")
    assert state == "success", (tasks, [w.tail(3000) for w in workers(services)])
    assert "worker1" in by_worker and max(t["try_number"] for t in tasks) == 2, (by_worker, tasks)
    # every row once: the killed attempt's staged files were never published, the retry's were, once
    assert len(rows(out / "clicks")) == 2 * ROWS and len(rows(out / "orders")) == ROWS
