"""Live progress of a running BATCH pipeline, as SeaTunnel's periodic job progress: every
``progress.interval`` seconds (``env``; default 10, 0 switches it off) one line in the run's log
(the task log under Airflow) with the rows read and written so far, per source and sink, their
average rates, and Spark's stage and task progress; a pipeline of several tables adds a line with
the rows read and written per table (:func:`table_line`: the tables that moved since the last line
first, at most :data:`MAX_TABLES_SHOWN` of them).

Nothing reads the data again for it. Rows come from the counting points the run counts with
(:meth:`.counting.Counter.live`: the live SQL metrics of the running write); where a run counts
with observations instead (Spark Connect, or a PySpark the counting points do not apply to), only
the end knows the rows and the line says ``n/a`` until a sink's write finished. Stages and tasks come
from Spark's status tracker, or on a Spark Connect session from the progress the server reports
with each operation (``SparkSession.registerProgressHandler``). A STREAMING pipeline reports each
micro-batch instead (:mod:`.streaming`).

Each line is also published as plain data (:func:`snapshot`) to the run context's ``on_progress``:
the driver of a spark-submit run writes it to the progress file beside its metrics file
(:func:`progress_file_of`, :func:`file_publisher`), which the Airflow task relays as an XCom.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config.hocon import MISSING
from ..config.options import lookup
from ..spi.safe_files import read_regular, write_atomic
from ..spi.sessions import is_connect
from .context import now
from .counting import one_reading

log = logging.getLogger("seatunnel.runtime")

OPTION = "progress.interval"
DEFAULT_INTERVAL_S = 10
#: the most tables one per-table progress line names
MAX_TABLES_SHOWN = 20


def interval_of(env: Mapping[str, Any]) -> float:
    """Seconds between two progress lines (``progress.interval``; checked at compile time)."""
    raw = lookup(env, OPTION)
    if raw is MISSING or raw is None:
        return float(DEFAULT_INTERVAL_S)
    try:
        return max(0.0, float(str(raw).strip()))
    except ValueError:
        return float(DEFAULT_INTERVAL_S)


@dataclass
class Stages:
    """Spark's stages as last seen: id -> (tasks done, tasks, tasks running)."""

    seen: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def text(self) -> str:
        with self.lock:
            active = {s: v for s, v in self.seen.items() if s not in self.done}
            finished = len(self.done)
        if not active:
            return f"{finished} stage(s) done" if finished else "no stage started yet"
        parts = [f"stage {s}: {d}/{n} tasks" + (f" ({r} running)" if r else "")
                 for s, (d, n, r) in sorted(active.items())]
        return "; ".join(parts) + (f"; {finished} stage(s) done" if finished else "")


class _ConnectHandler:
    """A Spark Connect progress handler filling :class:`Stages` (called by the client's threads)."""

    def __init__(self, stages: Stages) -> None:
        self.stages = stages

    def __call__(self, stages: Iterable[Any] | None, inflight_tasks: int, operation_id: str | None,
                 done: bool) -> None:
        with self.stages.lock:
            for s in stages or ():
                self.stages.seen[int(s.stage_id)] = (int(s.num_completed_tasks), int(s.num_tasks), 0)
                if s.done:
                    self.stages.done.add(int(s.stage_id))


def _tracker_stages(spark: Any, stages: Stages, before: set[int]) -> None:
    """The stages of the Spark jobs started since the pipeline began (jobs ``before`` excluded), from
    the status tracker (classic sessions); a stage no longer active counts as done."""
    tracker = spark.sparkContext.statusTracker()
    active = {int(s) for s in tracker.getActiveStageIds()}
    for job in tracker.getJobIdsForGroup():
        info = tracker.getJobInfo(job) if job not in before else None
        for sid in info.stageIds if info is not None else ():
            stage = tracker.getStageInfo(sid)
            if stage is None:
                continue
            with stages.lock:
                stages.seen[int(sid)] = (int(stage.numCompletedTasks), int(stage.numTasks), int(stage.numActiveTasks))
                if int(sid) not in active and stage.numCompletedTasks + stage.numFailedTasks >= stage.numTasks:
                    stages.done.add(int(sid))


class Progress:
    """Reports a pipeline's progress every ``interval`` seconds from a daemon thread until stopped.
    Sources are watched from the start, each sink from its write on (:meth:`watch_sink`)."""

    def __init__(self, ctx: Any, say: Callable[[str], None], interval: float,
                 sources: Mapping[str, list[Any]]) -> None:
        self.ctx, self.say, self.interval = ctx, say, interval
        self.sources = {label: list(counters) for label, counters in sources.items()}
        self.sinks: dict[str, list[Any]] = {}
        self.stages = Stages()
        self.connect = is_connect(ctx.spark)
        self._handler: _ConnectHandler | None = None
        self._before: set[int] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()
        self.lines = 0
        self._last_tables: dict[str, tuple[int | None, int | None]] = {}

    def watch_sink(self, label: str, counters: Iterable[Any]) -> None:
        self.sinks[label] = list(counters)

    def start(self) -> Progress:
        if self.interval <= 0:
            return self
        if self.connect:
            self._handler = _ConnectHandler(self.stages)
            self.ctx.spark.registerProgressHandler(self._handler)
        else:
            self._before = _jobs(self.ctx.spark)
        self._thread = threading.Thread(target=self._loop, name="seatunnel-progress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._handler is not None:
            try:
                self.ctx.spark.removeProgressHandler(self._handler)
            except Exception as e:  # the session is going away
                log.debug("could not remove the progress handler: %s", e)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.report()
            except Exception as e:  # progress is informative: never fail the run for it
                log.debug("progress report failed: %s", e)

    @staticmethod
    def _live(by_label: Mapping[str, list[Any]]) -> dict[str, list[tuple[str, int | None]]]:
        """Each counter's rows so far (asked once per line, one reading of the counting points for all), with
        its table, by label."""
        with one_reading():
            return {label: [(c.table, c.live()) for c in cs] for label, cs in by_label.items()}

    def report(self) -> str:
        """Say one progress line (and return it), and the per-table line of a pipeline of several tables."""
        if not self.connect:
            _tracker_stages(self.ctx.spark, self.stages, self._before)
        at = time.monotonic()
        with one_reading():  # sources and sinks often count from the same execution on
            sources, sinks = self._live(self.sources), self._live(self.sinks)
        span = max(at - self._t0, 1e-6)
        snap = snapshot(span, sources, sinks, self.stages.text())
        read, written = snap["per_source"], snap["per_sink"]
        total_read, total_written = snap["read_count"], snap["write_count"]
        line = (f"progress after {span:.0f} s: read {_count(total_read)} rows{_rate(total_read, span)}"
                f"{_detail(read)}, wrote {_count(total_written)} rows{_rate(total_written, span)}{_detail(written)}; "
                f"Spark: {snap['stages']}")
        self.lines += 1
        self.say(line)
        table_read = rows_per_table(n for counts in sources.values() for n in counts)
        table_written = rows_per_table(n for counts in sinks.values() for n in counts)
        tables = {t: (table_read.get(t), table_written.get(t)) for t in dict.fromkeys([*table_read, *table_written])}
        if len(tables) > 1:
            self.say(table_line(tables, self._last_tables))
            self._last_tables = tables
        publish = getattr(self.ctx, "on_progress", None)
        if publish is not None:
            publish(snap)
        return line


def snapshot(seconds: float, sources: Mapping[str, list[tuple[str, int | None]]],
             sinks: Mapping[str, list[tuple[str, int | None]]], stages: str = "") -> dict[str, Any]:
    """A progress line as plain data (what the Airflow task publishes as its ``seatunnel_progress``
    XCom): ``status`` RUNNING, the seconds since the pipeline started, rows read and written so far
    (None: not known until a write ends), per source and sink label, per label and table
    (``per_table_read``/``per_table``, as the metrics hold them), Spark's stages and the time (UTC)."""
    read = {label: _total(n for _, n in counts) for label, counts in sources.items()}
    written = {label: _total(n for _, n in counts) for label, counts in sinks.items()}
    return {"status": "RUNNING", "seconds": int(seconds), "read_count": _total(read.values()),
            "write_count": _total(written.values()) if written else 0, "per_source": read, "per_sink": written,
            "per_table_read": {label: rows_per_table(counts) for label, counts in sources.items()},
            "per_table": {label: rows_per_table(counts) for label, counts in sinks.items()},
            "stages": stages, "updated": now()}


#: what the progress file's name adds to the metrics file's
PROGRESS_SUFFIX = ".progress"
#: the largest progress file :func:`read_progress` reads
PROGRESS_LIMIT = 16 * 1024 * 1024


def progress_file_of(metrics_file: str | os.PathLike[str]) -> str:
    """Where a pipeline's driver publishes its progress: beside its metrics file, the same name plus
    :data:`PROGRESS_SUFFIX`."""
    return os.fspath(metrics_file) + PROGRESS_SUFFIX


def file_publisher(path: str) -> Callable[[Mapping[str, Any]], None]:
    """An ``on_progress`` that replaces ``path`` by each snapshot (atomically, 0600; never failing the run)."""
    def publish(data: Mapping[str, Any]) -> None:
        try:
            write_atomic(path, json.dumps(data, default=str), 0o600, "the progress file")
        except OSError as e:
            log.debug("could not write the progress file %s: %s", path, e)
    return publish


def read_progress(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The last snapshot published to ``path`` (None: none yet, unreadable, or not a regular file)."""
    try:
        data = json.loads(read_regular(os.fspath(path), PROGRESS_LIMIT))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def rows_per_table(counts: Iterable[tuple[str, int | None]]) -> dict[str, int | None]:
    """``(table, rows so far)`` pairs summed per table (None: a count not known yet)."""
    out: dict[str, int | None] = {}
    for table, rows in counts:
        before = out.get(table, 0)
        out[table] = None if rows is None or before is None else before + rows
    return out


def table_line(tables: Mapping[str, tuple[int | None, int | None]],
               last: Mapping[str, tuple[int | None, int | None]] | None = None, limit: int = MAX_TABLES_SHOWN) -> str:
    """The per-table progress line: how many tables have rows written, then ``table read r wrote w``
    for the tables whose counts moved since ``last`` (the previous line's), then the others, by
    name, at most ``limit`` of them (the rest are counted)."""
    last = last or {}
    moved = sorted(t for t, rows in tables.items() if last.get(t) != rows)
    ordered = moved + sorted(t for t in tables if t not in set(moved))
    shown = [f"{t} read {_count(tables[t][0])} wrote {_count(tables[t][1])}" for t in ordered[:limit]]
    more = f", and {len(ordered) - limit} more" if len(ordered) > limit else ""
    writing = sum(1 for r, w in tables.values() if w)
    return f"progress per table: {writing} of {len(tables)} tables have rows written; {', '.join(shown)}{more}"


def _jobs(spark: Any) -> set[int]:
    try:
        return {int(j) for j in spark.sparkContext.statusTracker().getJobIdsForGroup()}
    except Exception:  # informative only
        return set()


def _total(values: Iterable[int | None]) -> int | None:
    found = list(values)
    return None if any(v is None for v in found) else sum(v or 0 for v in found)


def _count(n: int | None) -> str:
    return "n/a" if n is None else f"{n:,}"


def _rate(rows: int | None, seconds: float) -> str:
    """The average since the pipeline started (Spark's live figures move in steps: a task's end, an
    executor's heartbeat)."""
    return "" if not rows else f" ({rows / seconds:,.0f} rows/s)"


def _detail(by_label: Mapping[str, int | None]) -> str:
    if len(by_label) < 2:
        return ""
    return " [" + ", ".join(f"{label} {_count(n)}" for label, n in by_label.items()) + "]"
