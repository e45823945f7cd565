"""Airflow across machines, on one: the CeleryExecutor with several workers, Redis (Debian's redis-server)
as its broker and a private PostgreSQL as the metadata database and Celery's result backend.

:func:`celery_airflow` starts them with Airflow's API server, scheduler and DAG processor
(:func:`.conftest.airflow_running`), each worker an ``airflow celery worker`` of concurrency 1 in its own
process group. :func:`kill_worker` kills one as a machine dies (with the task processes and Spark drivers
it started); :func:`worker_of` tells which worker a process descends from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from .. import pg, redis_server
from .conftest import BIN, AirflowServices, airflow_running
from .services import Service, wait_for

#: seconds without a heartbeat after which the scheduler fails a task whose worker died (Airflow's default: 300)
HEARTBEAT_TIMEOUT = 20


@contextmanager
def celery_airflow(home: Path, dag_id: str, workers: int = 2, **settings: str) -> Iterator[AirflowServices]:
    """Airflow on the CeleryExecutor with ``workers`` workers (``services.services[-workers:]``, named
    ``worker1``...), the metadata database on a private PostgreSQL, the broker a private Redis."""
    database = pg.start(database="airflow", user="airflow")
    broker = None
    try:
        broker = redis_server.start()
        db = f"{database.user}:{database.password}@127.0.0.1:{database.port}/{database.database}"
        with airflow_running(home, dag_id, **{
            "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"postgresql+psycopg://{db}",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": f"postgresql+psycopg_async://{db}",  # psycopg 3, not asyncpg
            "AIRFLOW__CELERY__BROKER_URL": f"redis://:{broker.password}@127.0.0.1:{broker.port}/0",
            "AIRFLOW__CELERY__RESULT_BACKEND": f"db+postgresql+psycopg://{db}",
            "AIRFLOW__CELERY__WORKER_CONCURRENCY": "1",
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT),
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "5",
            # a task's calls to the API server wait longer than Airflow's default (5 s) on a loaded machine
            "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "60",
            **settings,
        }) as services:
            for n in range(1, workers + 1):
                start_worker(services, f"worker{n}", wait=False)
            for worker in services.services[-workers:]:
                _ready(services, worker)
            yield services
    finally:
        if broker is not None:
            broker.stop()
        database.stop()


def start_worker(services: AirflowServices, name: str, wait: bool = True) -> Service:
    """Start (or start again, after :func:`kill_worker`) the Celery worker ``name``, each start with a log
    of its own; ready once it says so."""
    for old in [s for s in services.services if s.name == f"airflow celery {name}"]:
        services.services.remove(old)
    starts = len(list(services.home.glob(f"{name}.*.log")))
    worker = Service(f"airflow celery {name}", [str(BIN / "airflow"), "celery", "worker", "--concurrency", "1",
                                                "--celery-hostname", f"{name}@%h", "--skip-serve-logs",
                                                "--without-gossip", "--without-mingle"],
                     services.env, services.home / f"{name}.{starts + 1}.log", cwd=services.home)
    services.services.append(worker)
    if wait:
        _ready(services, worker)
    return worker


def _ready(services: AirflowServices, worker: Service) -> None:
    wait_for(f"{worker.name} to be ready", lambda: " ready." in worker.tail(200_000), 180, services.services, 1.0)


def workers(services: AirflowServices) -> list[Service]:
    """The Celery workers of :func:`celery_airflow`, in order."""
    return [s for s in services.services if s.name.startswith("airflow celery ")]


def worker_of(pid: int, services: AirflowServices) -> str | None:
    """The worker (``worker1``...) that ``pid`` descends from (the task process Airflow's supervisor
    forks runs in a process group of its own), or None."""
    import psutil

    by_pid = {s.proc.pid: s.name.rsplit(" ", 1)[1] for s in workers(services)}
    try:
        chain = [psutil.Process(pid), *psutil.Process(pid).parents()]
    except psutil.NoSuchProcess:
        return None
    return next((by_pid[p.pid] for p in chain if p.pid in by_pid), None)


def kill_worker(services: AirflowServices, worker: Service) -> int:
    """SIGKILL a worker and every process it started, at once, as when its machine dies; how many. The
    worker leaves ``services.services`` (waits no longer fail on its exit) until :func:`start_worker`."""
    import psutil

    services.services.remove(worker)
    root = psutil.Process(worker.proc.pid)
    victims = [root, *root.children(recursive=True)]
    for proc in victims:
        with suppress(psutil.NoSuchProcess):
            proc.kill()
    worker.proc.wait(10)
    return len(victims)


def drivers(services: AirflowServices, marker: str) -> Mapping[int, str]:
    """The running Spark drivers (``spark-submit`` JVMs whose command line holds ``marker``), by pid, with
    the worker that started them."""
    import psutil

    found = {}
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or ())
        if "org.apache.spark.deploy.SparkSubmit" in cmd and marker in cmd:
            worker = worker_of(proc.info["pid"], services)
            if worker:
                found[proc.info["pid"]] = worker
    return found
