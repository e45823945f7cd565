"""The job summary SeaTunnel users know ("Job Statistic Information"), per pipeline and job, and
below a pipeline of several tables the rows each table read and wrote (failed tables first)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .context import TIME_FORMAT
from .metrics import table_counts, table_order

if TYPE_CHECKING:
    from .metrics import PipelineMetrics

_STARS = "*" * 47


def format_table(title: str, pairs: Iterable[tuple[str, Any]]) -> str:
    """SeaTunnel's table: a title centred in 47 stars, then ``%-26s: %19s`` rows."""
    lines = ["", _STARS, " " * ((47 - len(title)) // 2) + title, _STARS]
    lines += [f"{key:<26}: {value!s:>19}" for key, value in pairs]
    lines.append(_STARS)
    return "\n".join(lines) + "\n"


def _parse(stamp: Any) -> datetime | None:
    """A metrics time: ISO 8601 with an offset, or the naive local form older metrics hold."""
    try:
        parsed = datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.astimezone()  # naive: local time


def _seconds(start: Any, end: Any) -> int:
    began, ended = _parse(start), _parse(end)
    return int((ended - began).total_seconds()) if began is not None and ended is not None else 0


def _shown(stamp: Any) -> str:
    """A metrics time as SeaTunnel's summary prints it: local, ``yyyy-MM-dd HH:mm:ss``."""
    parsed = _parse(stamp)
    return parsed.astimezone().strftime(TIME_FORMAT) if parsed is not None else str(stamp or "")


def statistic_pairs(m: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("Start Time", _shown(m.get("start"))),
        ("End Time", _shown(m.get("end"))),
        ("Total Time(s)", _seconds(m.get("start", ""), m.get("end", ""))),
        ("Total Read Count", m.get("read_count", 0)),
        ("Total Write Count", m.get("write_count", 0)),
        ("Total Failed Count", m.get("failed_count", 0)),
    ]


def job_metrics(job_name: str, pipelines: Iterable[PipelineMetrics | Mapping[str, Any]], start: str,
                end: str) -> dict[str, Any]:
    """The job's totals over its pipelines (every pipeline counted, failed ones included); its
    ``pipelines`` are their metrics as dicts. The job's ``failed_count`` is the sum of its
    pipelines' (each never negative: :attr:`..runtime.metrics.PipelineMetrics.failed_count`), not
    its reads minus its writes, which a pipeline writing to several sinks makes negative. Its
    ``tables`` are every pipeline's tables (:func:`..runtime.metrics.table_counts`), failed first."""
    rows = [dict(p) if isinstance(p, Mapping) else p.to_dict() for p in pipelines]
    read = sum(p.get("read_count", 0) or 0 for p in rows)
    written = sum(p.get("write_count", 0) or 0 for p in rows)
    failed_rows = sum(max(0, p.get("failed_count", 0) or 0) for p in rows)
    failed = [p for p in rows if p.get("status") != "FINISHED"]
    return {
        "job": job_name, "status": "FAILED" if failed else "FINISHED", "start": start, "end": end,
        "read_count": read, "write_count": written, "failed_count": failed_rows,
        "pipelines": rows,
        "tables": [t.to_dict() for t in table_order(t for p in rows for t in table_counts(p))],
    }


def _rows(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def table_pairs(p: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A pipeline's tables as ``(table, "read / written")`` pairs, failed first; none for one table."""
    rows = table_counts(p)
    if len(rows) < 2:
        return []
    return [(r.table + ("" if r.status == "FINISHED" else f" ({r.status})"), f"{_rows(r.read)} / {_rows(r.written)}")
            for r in rows]


def render_summary(job: Mapping[str, Any]) -> str:
    """Per-pipeline tables (and, for a pipeline of several tables, the rows read / written per
    table), then the job's "Job Statistic Information"."""
    out = []
    for p in job.get("pipelines", []):
        title = f"Pipeline {p.get('pipeline')} {p.get('status', '')}".strip()
        out.append(format_table(title, [("Task Id", p.get("task_id", "")), *statistic_pairs(p)]))
        tables = table_pairs(p)
        if tables:
            out.append(format_table(f"Pipeline {p.get('pipeline')} Tables (read / written)", tables))
    out.append(format_table("Job Statistic Information", statistic_pairs(job)))
    return "".join(out)
