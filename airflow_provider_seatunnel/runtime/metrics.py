"""A pipeline's metrics: what it read and wrote, per source, sink and table, and how it ended."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .context import RunContext, now


def finished_metrics(ctx: RunContext, started: str, t0: float, per_source: Mapping[str, int],
                     per_table: Mapping[str, Mapping[str, int]], **extra: Any) -> dict[str, Any]:
    """The metrics of a pipeline that committed: rows read per source (``{label: rows}``) and written
    per sink and table (``{label: {table: rows}}``), totals and times; ``extra`` keys join them."""
    p = ctx.pipeline
    per_sink = {label: sum(tables.values()) for label, tables in per_table.items()}
    read, written = sum(per_source.values()), sum(per_sink.values())
    return {
        "pipeline": p.id, "task_id": p.task_id, "name": p.name, "status": "FINISHED",
        "attempt": ctx.attempt, "run_id": ctx.run_id, "start": started, "end": now(),
        "seconds": round(time.monotonic() - t0, 3),
        "read_count": read, "write_count": written, "failed_count": read - written,
        "filtered_count": (read - written) if len(per_sink) == 1 else None,
        "per_source": dict(per_source), "per_sink": per_sink, "per_table": {k: dict(v) for k, v in per_table.items()},
        "committed": True, **extra,
    }
