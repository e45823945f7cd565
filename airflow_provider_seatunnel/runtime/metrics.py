"""A pipeline's metrics: what it read and wrote, per source, sink and table, and how it ended.

:class:`PipelineMetrics` is their one shape. Its :meth:`~PipelineMetrics.to_dict` is a public
contract: the metrics file a pipeline's driver writes, each pipeline of the command line's
``--metrics-file``, the Airflow task's XCom value and its ``seatunnel_metrics`` XCom are that dict.
:func:`table_counts` turns one into a row per table (rows read and written, failed first), the shape
the summary, the metrics file's ``tables`` and the Airflow view show.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from ..spi.contract import PipelineInfo
from ..spi.errors import PipelineError
from ..spi.safe_files import read_regular, write_atomic
from ..spi.secrets import scrub
from .context import now

if TYPE_CHECKING:
    from .context import RunContext

FINISHED, FAILED, NOT_RUN = "FINISHED", "FAILED", "NOT_RUN"


#: The largest metrics file :meth:`PipelineMetrics.read` reads (a per-table count of thousands of tables fits).
METRICS_LIMIT = 64 * 1024 * 1024

#: The keys of a pipeline's metrics, in the order they are written; ``extra`` keys follow.
_KEYS = ("pipeline", "task_id", "name", "status", "attempt", "run_id", "start", "end", "seconds", "read_count",
         "write_count", "failed_count", "filtered_count", "per_source", "per_sink", "per_table", "per_table_read",
         "committed", "error", "application_id")


@dataclass(frozen=True)
class PipelineMetrics:
    """How one pipeline ended (``status``: FINISHED, FAILED, or NOT_RUN for a task that reported
    nothing), its counts and where it ran. ``start`` and ``end`` are UTC times in ISO 8601 with
    their offset (``2024-05-06T10:11:12+00:00``); counts are never negative.

    :meth:`to_dict` writes a key when it holds a value. Two rules keep a null on purpose: a failed
    pipeline always has ``error`` and ``application_id`` (null: no Spark application started), and
    one with per-sink counts always has ``filtered_count`` (null: several sinks, no one number).
    ``extra`` holds further keys as they are (``mode``, ``streaming``, ``ui_url``, ``log``,
    ``counts_in_driver_log``, ``airflow_task_id``...).
    """

    task_id: str
    status: str
    pipeline: int | None = None
    name: str | None = None
    attempt: int | None = None
    run_id: str | None = None
    start: str | None = None
    end: str | None = None
    seconds: float | None = None
    read_count: int = 0
    write_count: int = 0
    failed_count: int = 0
    filtered_count: int | None = None
    per_source: Mapping[str, int] | None = None
    per_sink: Mapping[str, int] | None = None
    per_table: Mapping[str, Mapping[str, int]] | None = None
    per_table_read: Mapping[str, Mapping[str, int]] | None = None
    committed: bool | None = None
    error: Mapping[str, Any] | None = None
    application_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def finished(cls, pipeline: PipelineInfo, run_id: str, attempt: int, started: str, t0: float,
                 per_source: Mapping[str, int], per_table: Mapping[str, Mapping[str, int]],
                 per_table_read: Mapping[str, Mapping[str, int]] | None = None, **extra: Any) -> PipelineMetrics:
        """A pipeline that committed: rows read per source (``{label: rows}``) and written per sink
        and table (``{label: {table: rows}}``), their totals, and its times (``t0``: its
        ``time.monotonic()`` start). ``per_table_read``: rows read per source and table
        (``{label: {table: rows}}``), where the run counted them.

        ``failed_count`` is the most rows any one sink did not get of what was read (read minus
        that sink's writes), never below zero: ``write_count`` sums every sink, so a pipeline
        branching to two sinks writes each row twice and read minus the sum would be negative; a
        transform that makes rows (a join, an explode) can write more than it read. With one sink,
        ``filtered_count`` is the same figure."""
        per_sink = {label: sum(tables.values()) for label, tables in per_table.items()}
        read, written = sum(per_source.values()), sum(per_sink.values())
        missed = max((read - n for n in per_sink.values()), default=0)
        return cls(pipeline=pipeline.id, task_id=pipeline.task_id, name=pipeline.name, status=FINISHED,
                   attempt=attempt, run_id=run_id, start=started, end=now(), seconds=round(time.monotonic() - t0, 3),
                   read_count=read, write_count=written, failed_count=max(0, missed),
                   filtered_count=max(0, missed) if len(per_sink) == 1 else None, per_source=dict(per_source),
                   per_sink=per_sink, per_table={k: dict(v) for k, v in per_table.items()},
                   per_table_read={k: dict(v) for k, v in (per_table_read or {}).items()}, committed=True,
                   extra=extra)

    @classmethod
    def failed(cls, pipeline: PipelineInfo, run_id: str, attempt: int, started: str,
               error: PipelineError | Mapping[str, Any], *, application_id: str | None = None,
               **extra: Any) -> PipelineMetrics:
        """A pipeline that did not commit, ending now: no rows counted, ``error`` says why (a
        :class:`..spi.errors.PipelineError` or its ``to_dict()``) and whether a retry can help."""
        return cls(pipeline=pipeline.id, task_id=pipeline.task_id, name=pipeline.name, status=FAILED,
                   attempt=attempt, run_id=run_id, start=started, end=now(), committed=False,
                   error=error.to_dict() if isinstance(error, PipelineError) else dict(error),
                   application_id=application_id, extra=extra)

    @classmethod
    def not_run(cls, task_id: str, **extra: Any) -> PipelineMetrics:
        """A pipeline that reported nothing (its task never ran, or died before it pushed metrics)."""
        return cls(task_id=task_id, status=NOT_RUN, extra=extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineMetrics:
        """The metrics :meth:`to_dict` wrote (keys it does not know go to ``extra``)."""
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in data.items() if k in known}
        return cls(**{"task_id": "", "status": FAILED, **values},
                   extra={k: v for k, v in data.items() if k not in known})

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> PipelineMetrics | None:
        """The metrics file a pipeline's driver wrote, or None when there is none (or it is unreadable,
        over :data:`METRICS_LIMIT` bytes, or not a regular file: a symlink or FIFO at its name is not read)."""
        try:
            data = json.loads(read_regular(os.fspath(path), METRICS_LIMIT))
        except (OSError, ValueError):
            return None
        return cls.from_dict(data) if isinstance(data, Mapping) else None

    # -- output ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The metrics as plain data (the public contract; see the class docstring for its keys)."""
        kept = {"error", "application_id"} if self.status == FAILED else set()
        if self.per_sink is not None:
            kept.add("filtered_count")
        out: dict[str, Any] = {}
        for key in _KEYS:
            value = getattr(self, key)
            if value is not None or key in kept:
                out[key] = dict(value) if isinstance(value, Mapping) else value
        out.update(self.extra)
        return out

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_dict` to ``path`` atomically (a reader never sees half a file): a fresh 0600
        temporary file renamed over ``path``, so a symlink planted at either name never redirects it."""
        write_atomic(os.fspath(path), json.dumps(self.to_dict(), indent=2, default=str), 0o600, "the metrics file")

    # -- changes and questions -------------------------------------------------------------------

    def with_extra(self, **extra: Any) -> PipelineMetrics:
        """These metrics with further ``extra`` keys (replacing ones of the same name)."""
        return replace(self, extra={**self.extra, **extra})

    def redacted(self, secrets: Iterable[Any]) -> PipelineMetrics:
        """These metrics with the ``secrets`` (values) and the credentials of URLs masked in the
        texts they carry: the error's and the ``extra`` strings (:func:`..spi.secrets.scrub`)."""
        values = list(secrets)
        error = {k: _scrubbed(v, values) for k, v in self.error.items()} if self.error else self.error
        return replace(self, error=error, extra={k: _scrubbed(v, values) for k, v in self.extra.items()})

    def failing(self, error: PipelineError | Mapping[str, Any]) -> PipelineMetrics:
        """These metrics as a failure (the application failed after the pipeline reported): the
        status becomes FAILED; an error the pipeline reported itself stays, else ``error`` is it.
        One exception: when the application's exit says the JVM ran out of memory, a transient
        error the pipeline reported (its lost connection to that JVM) gives way to the memory error,
        which is deterministic and names the setting to raise; the pipeline's plugin stays."""
        given = error.to_dict() if isinstance(error, PipelineError) else dict(error)
        if self.error and given.get("kind") == "memory" and not self.error.get("deterministic"):
            plugin = self.error.get("plugin") or given.get("plugin")
            return replace(self, status=FAILED, error={**given, "plugin": plugin})
        if self.status == FAILED and self.error:
            return self
        return replace(self, status=FAILED, error=self.error or given)

    @property
    def ok(self) -> bool:
        """Whether the pipeline finished (committed)."""
        return self.status == FINISHED

    @property
    def deterministic(self) -> bool:
        """Whether the failure is one a retry meets again (a broken Assert rule, bad data...)."""
        return bool((self.error or {}).get("deterministic"))

    @property
    def message(self) -> str:
        """What failed, as the pipeline reported it."""
        return str((self.error or {}).get("message", "unknown error"))

    @property
    def where(self) -> str:
        """`` in <plugin>`` when the failure names its plugin, else empty."""
        plugin = (self.error or {}).get("plugin")
        return f" in {plugin}" if plugin else ""


def _scrubbed(value: Any, secrets: list[Any]) -> Any:
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, Mapping):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    return value


def finished_metrics(ctx: RunContext, started: str, t0: float, per_source: Mapping[str, int],
                     per_table: Mapping[str, Mapping[str, int]],
                     per_table_read: Mapping[str, Mapping[str, int]] | None = None, **extra: Any) -> dict[str, Any]:
    """:meth:`PipelineMetrics.finished` of the context's pipeline, as its dict."""
    return PipelineMetrics.finished(ctx.pipeline, ctx.run_id, ctx.attempt, started, t0, per_source, per_table,
                                    per_table_read, **extra).to_dict()


# ---------------------------------------------------------------------------------------------
# Per table
# ---------------------------------------------------------------------------------------------

#: a table's status: its pipeline failed and the error names it; its pipeline failed (naming another
#: table, so this one's staged rows were discarded); its pipeline runs; its pipeline reported nothing;
#: it committed
TABLE_FAILED, TABLE_ABORTED, TABLE_RUNNING = "FAILED", "ABORTED", "RUNNING"
TABLE_NOT_RUN, TABLE_FINISHED = "NOT_RUN", "FINISHED"
_TABLE_RANK = {TABLE_FAILED: 0, TABLE_ABORTED: 1, TABLE_RUNNING: 2, TABLE_NOT_RUN: 3, TABLE_FINISHED: 4}


@dataclass(frozen=True)
class TableCounts:
    """One table of a pipeline: rows read (summed over the sources reading a table of that name) and
    written (summed over its sinks), None where not counted (a failed pipeline counts nothing)."""

    table: str
    status: str
    read: int | None = None
    written: int | None = None
    pipeline: int | None = None
    task_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "status": self.status, "read": self.read, "written": self.written,
                "pipeline": self.pipeline, "task_id": self.task_id}


def _summed(by_label: Mapping[str, Mapping[str, int]] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for tables in (by_label or {}).values():
        for table, rows in tables.items():
            out[str(table)] = out.get(str(table), 0) + int(rows or 0)
    return out


def _named(table: str, message: str) -> bool:
    """Whether an error message names ``table`` as a whole word (``public.t1`` is not ``public.t10``)."""
    at = message.find(table)
    while at >= 0:
        before = message[at - 1] if at else " "
        after = message[at + len(table)] if at + len(table) < len(message) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        at = message.find(table, at + 1)
    return False


def table_counts(metrics: Mapping[str, Any], tables: Iterable[str] = ()) -> list[TableCounts]:
    """A pipeline's metrics (:meth:`PipelineMetrics.to_dict`) as one row per table, in
    :func:`table_order`: the tables it counted, and ``tables`` (those its plan names, so that a
    pipeline that failed, and counted nothing, still lists them). A FINISHED pipeline's tables are
    FINISHED; a FAILED one's are FAILED when its error names them (or names none of them), else
    ABORTED; a RUNNING one's (``status`` RUNNING: a view of a task still running) are RUNNING; a
    pipeline that reported nothing has NOT_RUN tables."""
    read, written = _summed(metrics.get("per_table_read")), _summed(metrics.get("per_table"))
    names = list(dict.fromkeys([*read, *written, *map(str, tables)]))
    status = str(metrics.get("status") or NOT_RUN)
    message = str((metrics.get("error") or {}).get("message") or "")
    named = {t for t in names if _named(t, message)} if status == FAILED else set()
    rows = []
    for t in names:
        if status == FINISHED:
            state = TABLE_FINISHED
        elif status == FAILED:
            state = TABLE_FAILED if t in named or not named else TABLE_ABORTED
        elif status == TABLE_RUNNING:
            state = TABLE_RUNNING
        else:
            state = TABLE_NOT_RUN
        rows.append(TableCounts(t, state, read.get(t), written.get(t), metrics.get("pipeline"),
                                str(metrics.get("task_id") or "")))
    return table_order(rows)


def table_order(rows: Iterable[TableCounts]) -> list[TableCounts]:
    """Failed tables first, then aborted, running, not run and finished ones; by name, then pipeline,
    within each."""
    return sorted(rows, key=lambda r: (_TABLE_RANK.get(r.status, 2), r.table, r.pipeline or 0))
