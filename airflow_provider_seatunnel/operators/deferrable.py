"""Deferrable mode of :class:`.seatunnel.SeaTunnelOperator` (``deferrable=True``): the worker slot is free
while Spark runs.

What runs where. The task compiles the job and starts the pipeline's driver as a detached process on the
worker's machine, in a session of its own, its output in a log file of the task's private work directory,
then defers. The driver is, for a ``spark`` connection, spark-submit in client deploy mode (``local[*]``, a
standalone master, YARN client); for a ``spark_connect`` connection, this Python running the pipeline as a
session of the Connect server (``runtime/app.py --remote``: the thin client that holds the session, the
server's token only in its environment). Either way the driver runs the whole pipeline as it does without
deferral, both phases of its sinks' commits included, fenced by the attempt's token (docs/restores.md), and
writes the same metrics file: nothing about exactly-once depends on the trigger. One trigger,
:class:`PipelineDriverTrigger`, in Airflow's triggerer, polls the driver (its metrics file, its process) and
fires once the driver has reported or is gone. The task resumes in
:meth:`..SeaTunnelOperator.execute_complete`: it reads the metrics the driver wrote, copies the driver's log
tail into the task log, reports (XCom, Stats, assets) and removes the work directory (the plan file holds
secrets).

A triggerer killed meanwhile changes nothing: the driver does not depend on it, and Airflow hands the
trigger to a triggerer again, which polls the same driver. A driver killed meanwhile leaves no metrics:
the trigger fires ``exited``, the task fails (retried) and the retry restores as any retry does (on Spark
Connect it first releases the dead attempt's session, interrupting what it left on the server).

Not supported, refused with a message saying why (:func:`refused_at_parse`, :func:`refused_at_run`): the
driver on the cluster (cluster deploy mode) and a STREAMING job (it reports only when stopped). The
triggerer must run on the worker's machine (it reads the work directory and the driver's process): one
elsewhere fires ``elsewhere`` and the task fails, naming both hosts.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk.exceptions import AirflowException, AirflowFailException
from airflow.triggers.base import BaseTrigger, TriggerEvent

from ..runtime.context import now
from ..runtime.launcher import APP_FILE
from ..runtime.metrics import PipelineMetrics
from ..spi.safe_files import open_write

if TYPE_CHECKING:
    from ..plan.model import PipelinePlan

#: The private work directories of :class:`..hooks.seatunnel.SeaTunnelHook` start so (``tempfile.mkdtemp``).
WORK_DIR_PREFIX = "seatunnel-airflow-"
RUNNING, REPORTED, EXITED, ELSEWHERE = "running", "reported", "exited", "elsewhere"


#: Why the driver cannot run on the cluster in deferrable mode (``deploy_mode="cluster"``): which masters
#: could, and what is missing for them.
CLUSTER_MODE_WHY = (
    "deferrable=True needs the pipeline's driver on the worker's machine (client deploy mode, or a spark_connect "
    "connection), where the trigger watches its process and reads the metrics file it writes. Cluster deploy "
    "mode cannot do that: a standalone master refuses Python applications in cluster mode (Spark: 'Cluster deploy "
    "mode is currently not supported for python applications on standalone clusters'); YARN and Kubernetes do "
    "run Python drivers on the cluster, but this provider has no trigger polling their application state (the "
    "ResourceManager's REST API, the driver pod) and no way to bring the driver's metrics back, so there use "
    "durable=True (the Spark provider reconnects a retry to the running application), or drop deferrable")


def refused_at_parse(deploy_mode: str | None, mode: str | None) -> str | None:
    """Why ``deferrable=True`` cannot work for a task with this ``deploy_mode`` argument and job ``mode``
    (None: it can, as far as parse time tells)."""
    if deploy_mode == "cluster":
        return f"deploy_mode='cluster': {CLUSTER_MODE_WHY}"
    if (mode or "").upper() == "STREAMING":
        return ("deferrable=True is for BATCH jobs: a STREAMING pipeline reports only when it is stopped, so the "
                "task keeps its slot to stop it (drop deferrable)")
    return None


def refused_at_run(on_cluster: bool) -> str | None:
    """Why ``deferrable=True`` cannot work with the task's Spark connection (None: it can)."""
    if on_cluster:
        return f"the Spark connection's deploy-mode is cluster: {CLUSTER_MODE_WHY}"
    return None


def launch_detached(cmd: list[str], env: Mapping[str, str], work_dir: Path, metrics_file: Path,
                    label: str) -> dict[str, Any]:
    """Start a pipeline's driver (``cmd`` in ``env``: spark-submit, or the Spark Connect client) in a
    session of its own, outliving this process, its output into ``<label>.driver.log`` (0600) in
    ``work_dir``; the trigger's arguments."""
    import psutil

    log_file = work_dir / f"{label}.driver.log"
    with open_write(str(log_file), exclusive=True, what="the driver's log") as log:
        proc = subprocess.Popen(cmd, env=dict(env), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=str(work_dir), start_new_session=True)
    try:
        started = psutil.Process(proc.pid).create_time()
    except psutil.Error:
        started = 0.0  # gone already: the trigger finds its metrics file, or fires exited
    return {"work_dir": str(work_dir), "metrics_file": str(metrics_file), "log_file": str(log_file),
            "pid": proc.pid, "started": started, "host": socket.gethostname()}


def submit_command(spark_hook: Any, application: str) -> tuple[list[str], dict[str, str]]:
    """``spark_hook``'s spark-submit command and environment, as its ``submit`` would run them."""
    cmd = spark_hook._build_spark_submit_command(application)  # sets the hook's environment (_env) too
    return cmd, {**os.environ, **{str(k): str(v) for k, v in (spark_hook._env or {}).items()}}


def driver_state(metrics_file: str, pid: int, started: float) -> str:
    """``reported`` (the driver wrote its metrics), ``running`` (its process, the one started at
    ``started``, still runs) or ``exited`` (gone without metrics)."""
    import psutil

    if PipelineMetrics.read(metrics_file) is not None:
        return REPORTED
    try:
        proc = psutil.Process(pid)
        alive = abs(proc.create_time() - started) < 0.5 and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        alive = False
    if alive:
        return RUNNING
    return REPORTED if PipelineMetrics.read(metrics_file) is not None else EXITED


class PipelineDriverTrigger(BaseTrigger):
    """Fires when a deferred pipeline's driver has reported (its metrics file) or is gone: polls every
    ``poll_seconds`` on the worker's machine (``host``), where the driver and its work directory are."""

    def __init__(self, work_dir: str, metrics_file: str, log_file: str, pid: int, started: float, host: str,
                 poll_seconds: float = 2.0) -> None:
        super().__init__()
        self.work_dir, self.metrics_file, self.log_file = work_dir, metrics_file, log_file
        self.pid, self.started, self.host, self.poll_seconds = int(pid), float(started), host, float(poll_seconds)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"work_dir": self.work_dir, "metrics_file": self.metrics_file, "log_file": self.log_file,
                 "pid": self.pid, "started": self.started, "host": self.host, "poll_seconds": self.poll_seconds})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        event = {"work_dir": self.work_dir, "log_file": self.log_file, "pid": self.pid, "host": self.host}
        here = socket.gethostname()
        if here != self.host:
            yield TriggerEvent({**event, "status": ELSEWHERE, "triggerer_host": here})
            return
        self.log.info("watching the pipeline driver (pid %s, log %s)", self.pid, self.log_file)
        while (state := driver_state(self.metrics_file, self.pid, self.started)) == RUNNING:
            await asyncio.sleep(self.poll_seconds)
        yield TriggerEvent({**event, "status": state})


def checked_work_dir(given: Any) -> Path:
    """The work directory an event names, if it is one of this user's private work directories (a directory,
    no link, mode 0700, directly in the temporary directory, named so): nothing else is read or removed.
    ``FileNotFoundError`` where there is none (the task resumed on another machine), ``ValueError`` for
    anything else."""
    path = Path(str(given))
    root = Path(tempfile.gettempdir()).resolve()
    try:
        st = os.lstat(path)
    except OSError as e:
        raise FileNotFoundError(f"the deferred pipeline's work directory {str(path)!r} is not on this machine "
                                f"({e.strerror})") from None
    if (path.parent.resolve() != root or not path.name.startswith(WORK_DIR_PREFIX) or not stat.S_ISDIR(st.st_mode)
            or st.st_uid != os.getuid() or st.st_mode & 0o077):
        raise ValueError(f"{str(path)!r} is no private work directory of this provider: not read")
    return path


def failure_of(event: Mapping[str, Any]) -> str | None:
    """What went wrong, from the trigger's event (None: the driver reported, its metrics say how it went)."""
    status = event.get("status")
    if status == REPORTED:
        return None
    if status == ELSEWHERE:
        return (f"the triggerer runs on {event.get('triggerer_host')!r}, the pipeline's driver on "
                f"{event.get('host')!r}: deferrable mode needs a triggerer on the worker's machine")
    return f"the pipeline's driver (pid {event.get('pid')}) exited without reporting"


class DeferrablePipeline:
    """The deferrable half of :class:`.seatunnel.SeaTunnelOperator` (which provides ``hook``, ``_compiled``,
    ``_for_task``, ``_report``, ``job_run_id``, ``_get_hook`` and Airflow's ``defer`` and ``log``)."""

    hook: Any
    log: Any
    _compiled: Any
    _for_task: Any
    _report: Any
    job_run_id: Any
    _get_hook: Any
    defer: Any

    def _defer(self, pipeline: PipelinePlan, run_id: str, attempt: int) -> None:
        """Start the pipeline's driver detached (spark-submit, or a Spark Connect client for a ``spark_connect``
        connection) and defer to a trigger watching it (:mod:`.deferrable`); where that cannot work (cluster
        deploy mode), fail without a retry, naming why."""
        hook = self.hook
        connect = hook.spark_connect() is not None
        refused = None if connect else refused_at_run(hook.driver_on_cluster())
        if refused:
            hook.cleanup()
            raise AirflowFailException(f"pipeline {pipeline.task_id}: {refused}")
        started = now()
        try:
            if connect:
                cmd, env, metrics_file = hook.connect_driver(pipeline.id, run_id, attempt)
            else:
                hook.spark_submit_hook(pipeline.id, run_id=run_id, attempt=attempt, detached=True)
                metrics_file = hook.metrics_file(pipeline, attempt)
                cmd, env = submit_command(self._get_hook(), str(APP_FILE))
            launched = launch_detached(cmd, env, hook.work_dir, metrics_file,
                                       metrics_file.name.removesuffix(".metrics.json"))
        except BaseException:
            hook.cleanup()
            raise
        self.log.info("pipeline %s runs in a detached driver (%s, pid %s, log %s); the task defers until it "
                      "reports", pipeline.task_id, "a Spark Connect session" if connect else "spark-submit",
                      launched["pid"], launched["log_file"])
        self.defer(trigger=PipelineDriverTrigger(**launched), method_name="execute_complete",
                   kwargs={"started": started})

    def execute_complete(self, context: Any, event: Mapping[str, Any] | None = None,
                         started: str | None = None) -> dict[str, Any]:
        """Resume a deferred pipeline once its trigger fired: its driver's log tail into the task log, its
        metrics (a failure when the driver exited without reporting), then as :meth:`execute` ends. The
        work directory (the plan file holds secrets) is removed."""
        from ..runtime.launcher import log_tail

        event = dict(event or {})
        try:
            work_dir = checked_work_dir(event.get("work_dir"))
        except FileNotFoundError as e:  # resumed on another worker: the retry restores (its commit is not redone)
            raise AirflowException(f"cannot resume the deferred pipeline here: {e}") from None
        except ValueError as e:
            raise AirflowFailException(f"cannot resume the deferred pipeline: {e}") from None
        hook = self.hook
        hook.adopt_work_dir(work_dir)
        try:
            plan, pipeline = self._compiled()
            ti = context.get("ti")
            attempt = int(getattr(ti, "try_number", None) or 1)
            self.log.info("the pipeline's driver log (tail):\n%s", log_tail(work_dir / Path(str(event.get(
                "log_file", ""))).name, 32 * 1024))
            failure = failure_of(event)
            metrics = self._for_task(hook.pipeline_metrics(pipeline.id, self.job_run_id(context), attempt,
                                                           started or now(), AirflowException(failure)
                                                           if failure else None))
        finally:
            hook.cleanup()
        return self._report(context, plan, metrics)

