"""What a pipeline task tells Airflow while and after it runs: its counts through Airflow's Stats, and
its live progress as an XCom.

**Metrics.** When the pipeline ends (finished, failed, or refused before Spark started) the task
sends, through Airflow's own Stats (StatsD, Datadog or OpenTelemetry, as Airflow's ``[metrics]``
section configures them; nothing where none is on), per pipeline: the counters ``rows_read``,
``rows_written``, ``rows_failed`` and ``finished``/``failed`` (1) and the timer ``duration``; per sink
``sink.rows_written``; per source ``source.rows_read``. As Airflow names its own metrics, each goes
out under a name without variables (``seatunnel.rows_written``) tagged ``dag_id``, ``task_id``,
``job``, ``pipeline`` (and ``sink``/``source``; in a value, what a stat name cannot hold becomes
``_``), and, while ``[metrics] legacy_names_on`` is true
(Airflow's default), also under a name holding them for plain StatsD, which drops tags:
``seatunnel.<dag_id>.<task_id>.rows_written``, ``seatunnel.<dag_id>.<task_id>.<sink>.rows_written``.
In those names a dot of an id becomes ``__`` (a task in a group, ``grp.task``, is ``grp__task``), as
in Airflow's own, and every other character a stat name cannot hold becomes ``_``. Sending never
fails the task.

**Progress.** A running pipeline's progress reports (:func:`..runtime.progress.snapshot`; a
STREAMING pipeline's per micro-batch) are pushed as the task's ``seatunnel_progress`` XCom
(:class:`ProgressRelay`), which the SeaTunnel view shows while the task runs: from the progress
file the driver writes beside its metrics file (the driver on this machine), or straight from the
run (a Spark Connect session). A driver on the cluster publishes none.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..runtime.progress import read_progress

log = logging.getLogger(__name__)

#: the XCom key of a running pipeline task's last progress report
PROGRESS_XCOM_KEY = "seatunnel_progress"
#: the first part of every metric's name
PREFIX = "seatunnel"
#: seconds between two looks at the progress file
POLL_SECONDS = 2.0
INCR, TIMING = "incr", "timing"
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]+")
_NOT_IN_TAG = re.compile(r"[^a-zA-Z0-9_.-]+")


@dataclass(frozen=True)
class StatPoint:
    """One metric to send: a counter (``incr``, by ``value``) or a timer (``timing``, ``value`` seconds)."""

    kind: str
    name: str
    value: float
    tags: Mapping[str, str] = field(default_factory=dict)


def name_part(text: Any) -> str:
    """``text`` as one part of a stat name: ``.`` becomes ``__``, any other run of characters a name
    cannot hold one ``_``."""
    return _NOT_IN_NAME.sub("_", str(text).replace(".", "__")).strip("_") or "_"


def tag_value(text: Any) -> str:
    """``text`` as a tag's value: any run of characters a stat name cannot hold becomes one ``_`` (a
    value joins the name where tags are written InfluxDB's way)."""
    return _NOT_IN_TAG.sub("_", str(text)).strip("_") or "_"


def stat_points(dag_id: str, task_id: str, metrics: Mapping[str, Any], *, job: str = "",
                legacy: bool = True) -> list[StatPoint]:
    """The metrics a pipeline's metrics (:meth:`..runtime.metrics.PipelineMetrics.to_dict`) send: see the
    module's docstring. ``job``: the job's name; ``legacy``: also under the names holding the DAG and task ids."""
    status = str(metrics.get("status") or "")
    tags = {"dag_id": tag_value(dag_id), "task_id": tag_value(task_id), "job": tag_value(job),
            "pipeline": tag_value(metrics.get("pipeline") or "")}
    legacy_base = f"{PREFIX}.{name_part(dag_id)}.{name_part(task_id)}"
    found: list[tuple[str, str, str, float, Mapping[str, str]]] = [
        (INCR, "rows_read", "rows_read", metrics.get("read_count") or 0, tags),
        (INCR, "rows_written", "rows_written", metrics.get("write_count") or 0, tags),
        (INCR, "rows_failed", "rows_failed", metrics.get("failed_count") or 0, tags),
    ]
    if status in ("FINISHED", "FAILED"):
        found.append((INCR, status.lower(), status.lower(), 1, tags))
    if metrics.get("seconds") is not None:
        found.append((TIMING, "duration", "duration", float(metrics["seconds"]), tags))
    for kind, key, count in (("sink", "per_sink", "rows_written"), ("source", "per_source", "rows_read")):
        for label, rows in (metrics.get(key) or {}).items():
            found.append((INCR, f"{kind}.{count}", f"{name_part(label)}.{count}", rows or 0,
                          {**tags, kind: tag_value(label)}))
    points = [StatPoint(kind, f"{PREFIX}.{name}", float(value), dict(t)) for kind, name, _, value, t in found]
    if legacy:
        points += [StatPoint(kind, f"{legacy_base}.{name}", float(value), dict(t)) for kind, _, name, value, t in found]
    return points


def _stats() -> Any:
    """Airflow's Stats, set up from Airflow's ``[metrics]`` settings where this process has not done it
    (a task run in-process, as ``dag.test()`` runs them, skips the task runner's set-up)."""
    try:
        from airflow.sdk.observability import stats
    except ImportError:  # Airflow before 3.3: the same Stats, at its older place
        from airflow.stats import Stats as stats  # type: ignore[no-redef]
    try:
        from airflow.sdk._shared.observability.metrics import stats as state
        from airflow.sdk.configuration import conf
        from airflow.sdk.observability.metrics import stats_utils

        if getattr(state, "_factory", True) is None:
            stats.initialize(factory=stats_utils.get_stats_factory(),
                             export_legacy_names=conf.getboolean("metrics", "legacy_names_on", fallback=True))
    except (ImportError, TypeError):  # another Airflow's layout: its Stats as it is
        pass
    return stats


def legacy_names_on() -> bool:
    """Airflow's ``[metrics] legacy_names_on`` (true by default)."""
    from airflow.sdk.configuration import conf

    return conf.getboolean("metrics", "legacy_names_on", fallback=True)


def send(points: list[StatPoint]) -> None:
    """Send ``points`` through Airflow's Stats; a failure is logged, never raised."""
    try:
        stats = _stats()
        for p in points:
            if p.kind == TIMING:
                stats.timing(p.name, timedelta(seconds=p.value), tags=dict(p.tags))
            else:
                stats.incr(p.name, count=int(p.value), tags=dict(p.tags))
    except Exception as e:  # metrics are informative: never fail the task for them
        log.warning("could not send the pipeline's metrics to Airflow's Stats: %s", e)


def send_pipeline_metrics(dag_id: str, task_id: str, metrics: Mapping[str, Any], job: str = "") -> None:
    """:func:`stat_points` of a pipeline's metrics, sent."""
    try:
        legacy = legacy_names_on()
    except Exception:  # no Airflow configuration to read: Airflow's default
        legacy = True
    send(stat_points(dag_id, task_id, metrics, job=job, legacy=legacy))


class ProgressRelay:
    """Pushes a running pipeline's progress reports as the task's :data:`PROGRESS_XCOM_KEY` XCom: those
    given to :meth:`publish`, and, with a ``path``, those the driver writes there (polled every
    ``interval`` seconds from a daemon thread between :meth:`start` and :meth:`stop`). A report
    equal to the last one pushed is not pushed again; a push that fails is logged, never raised. The last
    report stays after the task (Airflow clears a task's XComs when its next try starts)."""

    def __init__(self, push: Callable[[str, Any], None], path: str | None = None,
                 interval: float = POLL_SECONDS) -> None:
        self.push, self.path, self.interval = push, path, interval
        self.pushed = 0
        self._last: Mapping[str, Any] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def publish(self, report: Mapping[str, Any]) -> None:
        with self._lock:
            if report == self._last:
                return
            try:
                self.push(PROGRESS_XCOM_KEY, dict(report))
            except Exception as e:  # progress is informative
                log.debug("could not push the progress XCom: %s", e)
                return
            self._last = dict(report)
            self.pushed += 1

    def poll(self) -> None:
        """Push the progress file's report, if there is one."""
        report = read_progress(self.path) if self.path else None
        if report is not None:
            self.publish(report)

    def start(self) -> ProgressRelay:
        if self.path:
            self._thread = threading.Thread(target=self._loop, name="seatunnel-progress-relay", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop polling, after pushing the report the driver wrote last (the task's last progress stays)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self.poll()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()
