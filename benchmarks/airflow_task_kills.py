"""Connect mode under real Airflow: the task process of a pipeline SIGKILLed in the middle of the pipeline,
and Airflow's own retry restoring it exactly once.

Airflow's API server, scheduler (LocalExecutor) and DAG processor run on a fresh home (the cluster tests'
set-up, ``tests/cluster/conftest.airflow_running``), beside a Spark Connect server (``local[2]``, a token,
``connect_targets.Server``). The DAG is one ``SeaTunnelJobGroup`` with a ``spark_connect`` connection and
``retries=1``, writing the restore trials' targets (restore_faults.py: two LocalFile sinks, or two Jdbc
sinks into a private PostgreSQL). Each trial seeds the targets with an earlier row, triggers a run through
the REST API, waits until the pipeline's task process holds a connection to the Connect server (the
process Airflow's supervisor forked for the task: the pipeline runs in it), waits a random moment within
the first 80 % of the pipeline's measured length, and SIGKILLs that process alone. Airflow's supervisor reports the task
failed, the scheduler retries it, and attempt 2 restores; then every target must hold its earlier row
and every input row exactly once.

    python benchmarks/airflow_task_kills.py --target LocalFile --trials 20 --seed 7
    python benchmarks/airflow_task_kills.py --target Jdbc --trials 20 --record

``--executor celery``: Airflow on the CeleryExecutor with two workers instead (``tests/cluster/celery.py``:
Redis as the broker, a private PostgreSQL as the metadata database), the pipeline an application of a
Spark standalone cluster (client mode; its driver runs on the worker that took the task). Each trial
waits until a worker runs the pipeline's Spark driver, waits a random moment within the first 80 % of
the driver's measured life, and SIGKILLs that worker with everything it started (its task process and
the driver), as when its machine dies; the scheduler fails the task once its heartbeat stops (20 s
here), and the retry, on the other worker, restores. The killed worker starts again for the next trial.

``--record`` writes benchmarks/results/airflow_task_kills.{json,md} (one section per target and executor).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import connect_targets  # noqa: E402
import restore_faults as rf  # noqa: E402

from tests.cluster.conftest import airflow_running  # noqa: E402
from tests.cluster.services import wait_for  # noqa: E402

RESULTS = HERE / "results" / "airflow_task_kills"
DAG_ID = "connect_task_kills"
DAG = """
from datetime import datetime, timedelta
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         default_args={{"retries": 1, "retry_delay": timedelta(seconds=1)}}) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r}, spark_conn_id="spark_connect")
"""
CELERY_DAG = """
from datetime import datetime, timedelta
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

SMALL_EXECUTORS = {{"executor_cores": 1, "executor_memory": "512m", "total_executor_cores": 1}}

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         default_args={{"retries": 1, "retry_delay": timedelta(seconds=1)}}) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r},
                      operator_kwargs={{"spark_conn_id": "spark_cluster", "spark_submit_kwargs": SMALL_EXECUTORS}})
"""
TARGETS = {"LocalFile": rf.localfile_sinks, "Jdbc": rf.jdbc_sinks}
#: kill moments are drawn from the first part of the baseline's connected time (later runs vary around it)
KILL_WINDOW = 0.8


@dataclass
class Trial:
    n: int
    run_id: str
    delay: float  # seconds after the task process connected
    killed: bool = False  # the process was still running when the kill came
    state: str = ""  # the DAG run's final state
    tries: int = 0  # the pipeline task's try number at the end
    lost: int = 0
    duplicated: int = 0
    seconds: float = 0.0
    details: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.state == "success" and self.lost == 0 and self.duplicated == 0


def task_process(port: int) -> int | None:
    """The process holding a client connection to the Connect server's ``port`` (the running task)."""
    import psutil

    for conn in psutil.net_connections(kind="tcp"):
        if conn.raddr and conn.raddr.port == port and conn.pid and conn.status == psutil.CONN_ESTABLISHED:
            return int(conn.pid)
    return None


def run_once(services: Any, run_id: str, port: int, delay: float | None) -> tuple[str, bool, float, int]:
    """Trigger a run; with ``delay``, SIGKILL its task process ``delay`` s after it connected. Returns
    (state, killed, seconds the first task process was connected, the pipeline task's try number)."""
    services.api(f"dags/{DAG_ID}/dagRuns", "POST", {"dag_run_id": run_id, "logical_date": None})
    pid = wait_for("the pipeline's task process to connect", lambda: task_process(port), 300, services.services, 0.05)
    connected = time.monotonic()
    killed = False
    if delay is not None:
        time.sleep(delay)
        if task_process(port) == pid:
            os.kill(pid, signal.SIGKILL)
            killed = True
    else:
        while task_process(port) == pid:
            time.sleep(0.05)
    length = time.monotonic() - connected
    state, tries = finish(services, run_id)
    return state, killed, length, tries


def celery_once(services: Any, run_id: str, delay: float | None) -> tuple[str, bool, float, int]:
    """:func:`run_once` on the CeleryExecutor: with ``delay``, SIGKILL the worker running the pipeline's
    Spark driver ``delay`` s after the driver started (then start that worker again)."""
    from tests.cluster.celery import drivers, kill_worker, start_worker, workers

    services.api(f"dags/{DAG_ID}/dagRuns", "POST", {"dag_run_id": run_id, "logical_date": None})
    found = wait_for("the pipeline's Spark driver", lambda: dict(drivers(services, "restore_faults")), 300,
                     services.services, 0.05)
    pid, worker = next(iter(found.items()))
    started = time.monotonic()
    killed = False
    if delay is not None:
        time.sleep(delay)
        if pid in drivers(services, "restore_faults"):
            kill_worker(services, next(w for w in workers(services) if w.name.endswith(worker)))
            killed = True
    else:
        while pid in drivers(services, "restore_faults"):
            time.sleep(0.05)
    length = time.monotonic() - started
    state, tries = finish(services, run_id)
    if killed:
        start_worker(services, worker)
    return state, killed, length, tries


def finish(services: Any, run_id: str) -> tuple[str, int]:
    """Wait for the run to end: its state and its pipeline task's last try number."""
    def finished() -> str | None:
        state = services.api(f"dags/{DAG_ID}/dagRuns/{run_id}")["state"]
        return state if state in ("success", "failed") else None

    state = wait_for(f"run {run_id} to finish", finished, 600, services.services, 1.0)
    tasks = services.api(f"dags/{DAG_ID}/dagRuns/{run_id}/taskInstances")["task_instances"]
    return state, max((t["try_number"] for t in tasks if t["task_id"] not in ("job.prepare", "job.summary")),
                      default=0)


@contextlib.contextmanager
def airflow_for(executor: str, resources: Any, home: Path, conf: Path) -> Iterator[tuple[Any, Any]]:
    """Airflow with ``executor`` and its DAG over ``conf``: (its services, run_once(services, run_id, delay))."""
    if executor == "celery":
        from tests.cluster.celery import celery_airflow
        from tests.cluster.conftest import standalone_cluster

        (home / "dags" / f"{DAG_ID}.py").write_text(CELERY_DAG.format(dag_id=DAG_ID, config=str(conf)))
        with standalone_cluster(home.parent / "spark") as cluster, \
                celery_airflow(home, DAG_ID, AIRFLOW_CONN_SPARK_CLUSTER=cluster.connection()) as services:
            yield services, celery_once
        return
    server = connect_targets.server(resources)
    (home / "dags" / f"{DAG_ID}.py").write_text(DAG.format(dag_id=DAG_ID, config=str(conf)))
    connection = json.dumps({"conn_type": "spark_connect", "host": "localhost", "port": server.port,
                             "password": server.token})
    with airflow_running(home, DAG_ID, AIRFLOW_CONN_SPARK_CONNECT=connection) as services:
        yield services, lambda svc, run_id, delay: run_once(svc, run_id, server.port, delay)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="LocalFile")
    parser.add_argument("--executor", choices=("local", "celery"), default="local",
                        help="local: LocalExecutor, the pipeline on a Spark Connect server, its task process killed; "
                             "celery: two Celery workers, the pipeline on a standalone cluster, a worker killed")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--rows", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="airflow-task-kills-"))
    trials: list[Trial] = []
    with rf.Resources() as resources:
        sinks = TARGETS[args.target](work, args.rows, resources)
        expected = rf.make_input(work / "input", args.rows)
        conf = work / "job.conf"
        conf.write_text(rf.job_text(work / "input", sinks))
        home = work / "airflow"
        (home / "dags").mkdir(parents=True)
        with airflow_for(args.executor, resources, home, conf) as (services, once):
            lengths = []
            for i in range(2):  # warm-up, then the baseline the kill moments are drawn from
                for s in sinks:
                    s.seed()
                state, _, length, _ = once(services, f"baseline_{i}", None)
                assert state == "success", f"the baseline run failed: {services.services[1].tail()}"
                lengths.append(length)
            span = lengths[-1]
            print(f"baseline: the pipeline runs for {span:.1f} s", flush=True)
            for n in range(1, args.trials + 1):
                for s in sinks:
                    s.seed()
                t = Trial(n, f"kill_{n}", round(rng.uniform(0.0, KILL_WINDOW * span), 2))
                t0 = time.monotonic()
                t.state, t.killed, _, t.tries = once(services, t.run_id, t.delay)
                t.seconds = round(time.monotonic() - t0, 1)
                lost_dup = rf.Trial(n, "kill", "")
                rf.score(lost_dup, sinks, expected)
                t.lost, t.duplicated, t.details = lost_dup.lost, lost_dup.duplicated, lost_dup.details
                trials.append(t)
                print(f"trial {n}: kill at {t.delay:.2f} s ({'killed' if t.killed else 'already finished'}), "
                      f"run {t.state}, tries {t.tries}, lost {t.lost}, duplicated {t.duplicated} "
                      f"({t.seconds} s){' FAILED' if not t.ok else ''}", flush=True)
    ok = sum(t.ok for t in trials)
    print(f"{args.target}: {ok} of {len(trials)} exactly-once; {sum(t.killed for t in trials)} killed mid-pipeline")
    if args.record:
        record(args, trials, span)
    return 0 if ok == len(trials) else 1


def record(args: argparse.Namespace, trials: list[Trial], span: float) -> None:
    path = RESULTS.with_suffix(".json")
    recorded = json.loads(path.read_text()) if path.exists() else {}
    key = args.target if args.executor == "local" else f"{args.target}, CeleryExecutor: a worker killed"
    recorded[key] = {"rows": args.rows, "seed": args.seed, "baseline_s": round(span, 2),
                     "recorded": time.strftime("%Y-%m-%d"), "trials": [asdict(t) for t in trials]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(recorded, indent=1) + "\n")
    lines = ["# Airflow task processes (Connect mode) and Celery workers killed (benchmarks/airflow_task_kills.py)", "",
             __doc__.split("\n\n")[1].replace("\n", " "), ""]
    for target, data in recorded.items():
        ts = [Trial(**t) for t in data["trials"]]
        lines += [f"## {target} ({data['rows']:,} rows, seed {data['seed']}, recorded {data['recorded']})", "",
                  f"{sum(t.ok for t in ts)} of {len(ts)} exactly-once; {sum(t.killed for t in ts)} task processes "
                  f"SIGKILLed mid-pipeline (the others had finished first: the kill moment is drawn from 0 to "
                  f"{KILL_WINDOW:.0%} of the baseline's {data['baseline_s']} s connected); "
                  f"lost {sum(t.lost for t in ts)}, duplicated {sum(t.duplicated for t in ts)}.", "",
                  "| trial | kill after connect | killed | run | tries | lost | duplicated | seconds |",
                  "|---:|---:|---|---|---:|---:|---:|---:|"]
        lines += [f"| {t.n} | {t.delay:.2f} s | {'yes' if t.killed else 'no (finished)'} | {t.state} | {t.tries} | "
                  f"{t.lost} | {t.duplicated} | {t.seconds} |" for t in ts]
        lines.append("")
    RESULTS.with_suffix(".md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
