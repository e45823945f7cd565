"""Fault injection for restore tests: OFF unless the environment variable ``SEATUNNEL_FAULTS`` is set.

Nothing in a job config can switch faults on, and plans and task ids never change:
``runtime/app.py`` reads the variable into ``RunContext.options["faults"]`` (in-process
tests may pass ``options=from_environment({...})`` themselves). With the variable unset,
:func:`checkpoint` and :func:`inject_into_write` do nothing and return at once.

Spec: entries separated by ``;``, each ``point[:pipeline][@attempts][=action][+count]``::

    SEATUNNEL_FAULTS="sink.commit"                     # raise in every pipeline's first sink commit, attempt 1
    SEATUNNEL_FAULTS="sink.write:2=kill+500"           # pipeline 2: SIGKILL once a write task passed 500 rows
    SEATUNNEL_FAULTS="sink.move:fake_to_localfile_ab12cd34@2=kill+3;pipeline.committed:1"

``point``
    ``sink.write`` (inside a Spark task of a sink's write), ``sink.prepared`` (driver: a sink
    has staged its data, before the next sink writes or the commit phase starts),
    ``sink.move`` (driver: inside a commit, before each staged file is moved into place),
    ``sink.commit`` (driver: inside a commit, the data is in place but the commit is not
    recorded yet), ``pipeline.committed`` (driver: every sink committed, the metrics file
    is not written yet), ``batch.committed`` (STREAMING, driver: a sink committed a
    micro-batch that Spark has not recorded as done: a rerun replays it; an occurrence is a
    micro-batch). See :data:`POINTS`.
``pipeline``
    a pipeline number, a pipeline task id, or ``*`` (default: every pipeline).
``attempts``
    fire only while the run's attempt is ``<= K`` (default 1), so that the retry succeeds.
``action``
    ``raise`` (default): an :class:`InjectedFault`, a transient :class:`PipelineError`
    (``deterministic`` false): the pipeline aborts its sinks, exits 1 and its metrics say
    that a retry can help. ``kill``: SIGKILL of the driver process itself, a killed worker:
    nothing after it runs (no abort, no metrics file), spark-submit exits 137.
``count``
    let ``N`` occurrences of the point pass first (default 0). For ``sink.write`` an
    occurrence is a row of one write task (each Spark task counts its own rows): the task
    fails on its row number ``N`` (0-based), i.e. after writing ``N`` rows. For ``sink.move``
    it is a file (the fault fires after ``N`` files were moved), for the other points a sink
    (or a table, for sinks committing several tables).

An entry fires at most once per process. A ``sink.write`` fault whose row was never reached
(no task had more than ``N`` rows, or the sink does not call :func:`inject_into_write`)
fires on the driver right after that sink's write, before it counts as prepared; a
``sink.commit`` fault of a sink whose commit does not call :func:`checkpoint` fires right
after its commit. A bad spec raises :class:`FaultSpecError` naming the entry and the cause.

How ``sink.write`` fires: :func:`inject_into_write` adds one filter with native expressions
(``F.when`` over the row's position in its partition): ``raise`` evaluates ``F.raise_error``
on row ``N``, so the task itself fails. ``kill`` on a ``local`` master: row ``N`` sets a JVM
system property (``java_method('java.lang.System', 'setProperty', ...)``) and holds the task
(``java_method('java.lang.Thread', 'sleep', ...)``) while a driver thread, polling that
property, SIGKILLs the driver: the kill lands while the write is running, after ``N`` rows
of a task. On other masters the executors' JVMs are not the driver's, so the thread kills
the driver as soon as a Spark stage of the write is running (the row offset is ignored). On a
Spark Connect session (no JVM in this process) ``kill`` fires on the driver right after the write.

For connector authors (the stable API): call ``df = inject_into_write(ctx, vertex, df)``
on each DataFrame just before the write action of ``prepare``; in ``commit`` call
``checkpoint(ctx, "sink.move", vertex)`` before each step that publishes part of the data,
and ``checkpoint(ctx, "sink.commit", vertex)`` once the data is in place, just before the
commit is recorded. The executor fires ``sink.write`` (the driver fallback),
``sink.prepared`` and ``pipeline.committed`` itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..spi.errors import PipelineError
from ..spi.sessions import is_connect

log = logging.getLogger("seatunnel.runtime")

ENV = "SEATUNNEL_FAULTS"
#: ``RunContext.options`` key of the parsed :class:`FaultPlan`
OPTION = "faults"
#: every injected error message ends with this tag (how a Spark task's error is recognised)
TAG = "[SEATUNNEL_FAULTS]"

POINTS: dict[str, str] = {
    "sink.write": "inside a Spark task while a sink writes (after N rows of the task)",
    "sink.prepared": "on the driver after a sink staged its data, before the next sink or the commit phase",
    "sink.move": "inside a sink's commit, before each staged file is moved into place (after N files)",
    "sink.commit": "inside a sink's commit: data in place, commit not recorded yet",
    "pipeline.committed": "after every sink committed, before the metrics file is written",
    "batch.committed": "STREAMING: a sink committed a micro-batch, Spark has not recorded it yet (a rerun replays it)",
}
ACTIONS = ("raise", "kill")
#: how long a task holds at the fault row (local masters) while the driver thread kills
_HOLD_MS = 60_000

_ENTRY = re.compile(r"(?P<point>[A-Za-z_.]+)(?::(?P<pipeline>[^:@=+;\s]+))?(?:@(?P<attempts>[^=+]*))?"
                    r"(?:=(?P<action>[^+]*))?(?:\+(?P<count>.*))?")


class FaultSpecError(ValueError):
    """``SEATUNNEL_FAULTS`` cannot be parsed, or names a pipeline the job does not have."""


class InjectedFault(PipelineError):
    """A fault injected by ``SEATUNNEL_FAULTS`` (action ``raise``): transient, a retry can succeed."""

    deterministic = False
    kind = "fault"


@dataclass(frozen=True)
class Fault:
    """One entry of the spec."""

    point: str
    pipeline: str = "*"
    attempts: int = 1
    action: str = "raise"
    count: int = 0
    text: str = ""

    def applies(self, ctx: Any) -> bool:
        """Armed for this run context (pipeline filter and attempt)?"""
        if int(ctx.attempt) > self.attempts:
            return False
        p = ctx.pipeline
        return self.pipeline == "*" or self.pipeline == str(p.id) or self.pipeline == p.task_id


@dataclass
class FaultPlan:
    """The parsed spec plus what has happened in this process (occurrences seen, faults fired)."""

    faults: tuple[Fault, ...]
    seen: dict[int, int] = field(default_factory=dict)
    fired: set[int] = field(default_factory=set)
    reached: set[tuple[str, str | None]] = field(default_factory=set)
    watching: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a STREAMING writer on a Spark Connect server gets the plan): the state, not the lock."""
        with self.lock:
            return {k: v for k, v in self.__dict__.items() if k != "lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.lock = threading.Lock()


def parse(spec: str | None) -> tuple[Fault, ...]:
    """The faults of a ``SEATUNNEL_FAULTS`` value (``None`` or blank: none). Raises :class:`FaultSpecError`."""
    if spec is None or not spec.strip():
        return ()
    faults = []
    for n, raw in enumerate(spec.split(";"), 1):
        text = raw.strip()
        where = f"{ENV} entry {n} {text!r}"
        if not text:
            raise FaultSpecError(f"{ENV} entry {n} is empty (entries are separated by ';', no trailing ';')")
        m = _ENTRY.fullmatch(text)
        if m is None:
            raise FaultSpecError(f"{where}: expected point[:pipeline][@attempts][=action][+count], "
                                 "e.g. sink.commit:1@1=kill")
        point = m["point"]
        if point not in POINTS:
            raise FaultSpecError(f"{where}: unknown point {point!r}; points: {', '.join(POINTS)}")
        attempts = _number(m["attempts"], 1, 1, where, "attempts (after '@')")
        action = (m["action"] if m["action"] is not None else "raise").strip()
        if action not in ACTIONS:
            raise FaultSpecError(f"{where}: unknown action {action!r} (after '='); use raise or kill")
        count = _number(m["count"], 0, 0, where, "count (after '+')")
        faults.append(Fault(point, m["pipeline"] or "*", attempts, action, count, text))
    return tuple(faults)


def _number(value: str | None, default: int, minimum: int, where: str, what: str) -> int:
    if value is None:
        return default
    if not re.fullmatch(r"\d+", value) or int(value) < minimum:
        raise FaultSpecError(f"{where}: {what} must be an integer >= {minimum}, found {value!r}")
    return int(value)


def check_plan(faults: tuple[Fault, ...], plan: Any) -> None:
    """Raise :class:`FaultSpecError` when an entry names a pipeline ``plan`` does not have."""
    names = {str(p.id) for p in plan.pipelines} | {p.task_id for p in plan.pipelines}
    for f in faults:
        if f.pipeline != "*" and f.pipeline not in names:
            ids = ", ".join(f"{p.id} ({p.task_id})" for p in plan.pipelines)
            raise FaultSpecError(f"{ENV} entry {f.text!r}: no pipeline {f.pipeline!r} in this job; pipelines: {ids}")


def from_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``RunContext.options`` for ``environ`` (default ``os.environ``): ``{}`` without ``SEATUNNEL_FAULTS``."""
    faults = parse((os.environ if environ is None else environ).get(ENV))
    return {OPTION: FaultPlan(faults)} if faults else {}


def _plan(ctx: Any) -> FaultPlan | None:
    options = getattr(ctx, "options", None) or {}
    plan = options.get(OPTION)
    return plan if isinstance(plan, FaultPlan) and plan.faults else None


def _armed(plan: FaultPlan, ctx: Any, point: str) -> list[tuple[int, Fault]]:
    return [(i, f) for i, f in enumerate(plan.faults)
            if f.point == point and i not in plan.fired and f.applies(ctx)]


def _message(ctx: Any, fault: Fault, detail: str) -> str:
    return (f"injected fault at {fault.point} ({fault.action}, attempt {ctx.attempt}){detail}; "
            f"{ENV}='{fault.text}' {TAG}")


def _fire(ctx: Any, fault: Fault, vertex: Any, detail: str = "") -> None:
    message = _message(ctx, fault, detail)
    plugin = ctx.label(vertex) if vertex is not None else None
    if fault.action == "kill":
        kill(f"pipeline {ctx.pipeline_key}{' ' + plugin if plugin else ''}: {message}")
    raise InjectedFault(message, plugin, ctx.pipeline_key)


def kill(message: str) -> None:
    """Log ``message`` (it reaches the launcher as a progress line) and SIGKILL this process."""
    log.error("killing the driver (SIGKILL): %s", message)
    for handler in logging.getLogger().handlers + log.handlers:
        with contextlib.suppress(Exception):  # the process dies next; a flush failure changes nothing
            handler.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)  # never reached: SIGKILL cannot be handled


def checkpoint(ctx: Any, point: str, vertex: Any = None) -> None:
    """Fire the faults armed at ``point`` (driver side). A no-op unless ``SEATUNNEL_FAULTS`` set faults.

    ``sink.write`` here is the driver-side fallback after a sink's write: it fires a fault for
    this write that no task fired. Raises :class:`InjectedFault` (``raise``) or never returns (``kill``).
    """
    plan = _plan(ctx)
    if plan is None:
        return
    if point not in POINTS:
        raise ValueError(f"unknown fault point {point!r}")
    with plan.lock:
        plan.reached.add((point, getattr(vertex, "id", None)))
        due = None
        for i, f in _armed(plan, ctx, point):
            if point != "sink.write":
                seen = plan.seen.get(i, 0)
                plan.seen[i] = seen + 1
                if seen < f.count:
                    continue
            plan.fired.add(i)
            due = f
            break
    if due is not None:
        detail = (f": on the driver after the write (no task reached row {due.count})"
                  if point == "sink.write" else f": after {due.count} earlier occurrence(s)" if due.count else "")
        _fire(ctx, due, vertex, detail)


def reached(ctx: Any, point: str, vertex: Any = None) -> bool:
    """Whether :func:`checkpoint` ran for ``point`` (and ``vertex``) in this process (always False without faults)."""
    plan = _plan(ctx)
    return plan is not None and (point, getattr(vertex, "id", None)) in plan.reached


def inject_into_write(ctx: Any, vertex: Any, df: Any) -> Any:
    """``df`` with the armed ``sink.write`` fault built in (native expressions); ``df`` itself without one.

    Call it on the DataFrame a sink is about to write, just before the write action.
    """
    plan = _plan(ctx)
    if plan is None:
        return df
    armed = _armed(plan, ctx, "sink.write")
    if not armed:
        return df
    from pyspark.sql import functions as F

    index, fault = armed[0]
    position = F.monotonically_increasing_id() - F.shiftleft(F.spark_partition_id().cast("bigint"), 33)
    at_row = position == F.lit(fault.count)
    if fault.action == "raise":
        message = _message(ctx, fault, f": a write task failed after {fault.count} rows")
        return df.where(F.when(at_row, F.raise_error(F.lit(message))).otherwise(F.lit(True)))
    if is_connect(ctx.spark):  # no JVM here a task could signal: the driver fallback fires after the write
        return df
    master = str(ctx.spark.sparkContext.master)
    key = f"seatunnel.fault.{uuid.uuid4().hex}"
    with plan.lock:
        if index not in plan.watching:
            plan.watching.add(index)
            threading.Thread(target=_watch, args=(ctx, fault, vertex, key, master.startswith("local")),
                             name="seatunnel-fault-watcher", daemon=True).start()
    if not master.startswith("local"):
        return df
    signal_row = F.expr(f"java_method('java.lang.System', 'setProperty', '{key}', 'fired')")
    hold = F.expr(f"java_method('java.lang.Thread', 'sleep', cast({_HOLD_MS} as bigint))")
    return df.where(F.when(at_row, signal_row.isNotNull() & hold.isNotNull()).otherwise(F.lit(True)))


def _watch(ctx: Any, fault: Fault, vertex: Any, key: str, local: bool) -> None:
    """Driver thread of a ``kill`` at ``sink.write``: SIGKILL once the write reached its row (local
    masters) or once a stage of it runs (other masters)."""
    try:
        system = ctx.spark.sparkContext._jvm.java.lang.System
        tracker = ctx.spark.sparkContext.statusTracker()
        while True:
            if local and system.getProperty(key) is not None:
                detail = f": a write task passed {fault.count} rows"
                break
            if not local and tracker.getActiveStageIds():
                detail = ": the write is running"
                break
            time.sleep(0.02)
    except Exception as e:  # the session went away: the driver fallback after the write fires instead
        log.warning("fault watcher stopped: %s", e)
        return
    plan = _plan(ctx)
    if plan is not None:
        with plan.lock:
            plan.fired.update(i for i, f in enumerate(plan.faults) if f is fault)
    kill(f"pipeline {ctx.pipeline_key} {ctx.label(vertex)}: {_message(ctx, fault, detail)}")


_IN_TEXT = re.compile(r"(injected fault at .*?" + re.escape(TAG) + ")")


def injected(error: BaseException) -> InjectedFault | None:
    """The :class:`InjectedFault` behind ``error`` (e.g. a Spark task's ``raise_error``), else None."""
    if isinstance(error, InjectedFault):
        return error
    m = _IN_TEXT.search(str(error))
    return InjectedFault(m.group(1)) if m else None
