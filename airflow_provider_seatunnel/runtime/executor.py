"""Run one BATCH pipeline on a SparkSession: sources → transform chain → sinks, then commit.

The vertices are built by the one walk (:mod:`.walk`). Sinks write in two phases: every sink
prepares (writes staged, invisible data) and only when all have prepared does each commit; a
failure before then aborts every prepared sink. Counts come from counting points in the pass that
writes the data (:func:`.counting.count_rows`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..plan.model import PlanVertex
from ..spi import AcknowledgesRead
from ..spi.errors import PipelineError
from ..spi.sessions import end_run
from . import faults, twophase
from .context import RunContext, now
from .counting import Counter, count_rows, rows_per_table
from .metrics import finished_metrics
from .progress import Progress, interval_of
from .walk import Walk, walk

log = logging.getLogger("seatunnel.runtime")

__all__ = ["RunContext", "run_pipeline"]

#: sink id -> (table, counts) per table
SinkCounts = dict[str, list[tuple[str, dict[str, int]]]]


def run_pipeline(ctx: RunContext, on_event: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run ``ctx.pipeline`` to its commit; return its metrics. Raises :class:`PipelineError`."""
    say = on_event or log.info
    started, t0 = now(), time.monotonic()
    w = walk(ctx, say)
    prepared: list[tuple[PlanVertex, Any]] = []
    progress = Progress(ctx, say, interval_of(ctx.plan.env),
                        {ctx.label(w.by_id[k]): cs for k, cs in w.source_counters.items()}).start()
    try:
        sink_counts = _prepare_sinks(w, say, prepared, progress)
        _commit(w, say, prepared)
        _acknowledge(w, say)
    finally:
        progress.stop()
        w.unpersist()
        end_run(ctx.spark)  # job-wide resources of the connectors (connection pools)
    try:
        ctx.fault_point("pipeline.committed")
    except PipelineError as e:
        raise e.located(None, ctx.pipeline_key) from None

    per_table_read = {ctx.label(w.by_id[k]): rows_per_table(cs) for k, cs in w.source_counters.items()}
    per_source = {label: sum(tables.values()) for label, tables in per_table_read.items()}
    per_table = {ctx.label(w.by_id[k]): {table: n.get("rows", 0) for table, n in counts}
                 for k, counts in sink_counts.items()}
    for k, counts in sink_counts.items():
        deletes = sum(n.get("deletes", 0) for _, n in counts)
        if deletes and not w.connectors[k].capabilities.deletes:
            say(f"{ctx.label(w.by_id[k])}: cannot store deletes: {deletes} DELETE/UPDATE_BEFORE "
                "rows were written as plain rows")
    return finished_metrics(ctx, started, t0, per_source, per_table, per_table_read=per_table_read)


def _acknowledge(w: Walk, say: Callable[[str], None]) -> None:
    """Every sink committed: the sources that record what a run read (:class:`..spi.AcknowledgesRead`) do."""
    ctx = w.ctx
    for v in ctx.pipeline.vertices:
        connector = w.connectors.get(v.id)
        if v.kind == "source" and isinstance(connector, AcknowledgesRead):
            try:
                connector.acknowledge(ctx, v)
            except Exception as e:  # the data is committed: a failure here only costs a re-read
                say(f"{ctx.label(v)}: could not record what this run read: {e}")


def _prepare_sinks(w: Walk, say: Callable[[str], None], prepared: list[tuple[PlanVertex, Any]],
                   progress: Progress | None = None) -> SinkCounts:
    """Phase one: each sink writes its data staged (``prepare``); aborts them all on a failure."""
    ctx = w.ctx
    sink_counts: SinkCounts = {}
    try:
        for v in w.sinks():
            connector = w.connectors[v.id]
            deletes = not connector.capabilities.deletes and w.inputs_change(v.id)
            counted: dict[str, Any] = {}
            counters: list[tuple[str, Counter]] = []
            paired = next((w.together[u] for u in w.up[v.id] if u in w.together), None)
            for table, df in w.sink_input(v.id).items():
                counter: Counter
                if paired is not None and paired.grouped(table):  # counted by its group's write (.together)
                    counted[table], counter = df, paired.counter(ctx.spark, f"write:{v.id}:{table}")
                else:
                    counted[table], counter = count_rows(df, f"write:{v.id}:{table}", deletes=deletes)
                counters.append((table, counter))
            if paired is not None:
                counted = paired.with_tables(counted)
            if progress is not None:
                progress.watch_sink(ctx.label(v), [c for _, c in counters])
            say(f"{ctx.label(v)}: writing")
            try:
                info = twophase.driver(connector).prepare(ctx, v, counted)
            except Exception as e:
                raise ctx.fail(v, e) from e
            prepared.append((v, info))
            ctx.fault_point("sink.write", v)  # a write fault no task fired fires here
            # the sink's write was the one action over its counting points: their counts are final
            sink_counts[v.id] = [(table, counter.get()) for table, counter in counters]
            written = sum(n.get("rows", 0) for _, n in sink_counts[v.id])
            say(f"{ctx.label(v)}: prepared {written} rows")
            ctx.fault_point("sink.prepared", v)
    except BaseException:
        _abort(w, prepared, committed=set())
        raise
    return sink_counts


def _commit(w: Walk, say: Callable[[str], None], prepared: list[tuple[PlanVertex, Any]]) -> None:
    """Phase two: every sink publishes what it staged; the ones not yet committed abort on a failure."""
    ctx = w.ctx
    committed: set[str] = set()
    try:
        for v, info in prepared:
            connector = w.connectors[v.id]
            try:
                if twophase.is_two_phase(connector):
                    twophase.driver(connector).commit(ctx, v, info)
                if not faults.reached(ctx, "sink.commit", v):  # the sink's commit has no fault point of its own
                    ctx.fault_point("sink.commit", v)
            except Exception as e:
                raise ctx.fail(v, e) from e
            committed.add(v.id)
            say(f"{ctx.label(v)}: committed")
    except BaseException:
        _abort(w, prepared, committed)
        raise


def _abort(w: Walk, prepared: list[tuple[PlanVertex, Any]], committed: set[str]) -> None:
    """Discard what the sinks staged and did not commit (best effort: the first error wins)."""
    for v, info in prepared:
        connector = w.connectors[v.id]
        if twophase.is_two_phase(connector) and v.id not in committed:
            try:
                twophase.driver(connector).abort(w.ctx, v, info)
            except Exception as e:
                log.warning("%s: abort failed: %s", w.ctx.label(v), e)
