"""One streaming query for a source that captures all its tables at once (:class:`..spi.sharedstream.SharedStream`:
a CDC source's one replication slot or binlog reader).

The query reads the source's one stream (every table's rows, a column naming the table), so the
source's position is one offset in one checkpoint (``<checkpoint>/queries/source-<source key>``),
recorded by Spark once per micro-batch. Its ``foreachBatch`` persists the micro-batch, counts the
rows of each table (one job), splits it by table (:attr:`SharedStream.split`), applies the
pipeline's transforms to the tables (the walk, given the split tables as the source's output) and
writes each sink's tables as one run of the sink: its two-phase commit keyed by the micro-batch's
run id (``<query id>:batch-<n>``), with a commit record per table. A micro-batch Spark replays
after a crash carries the same run id: tables a sink committed are found committed, the others
are written, so every table lands once.

The first micro-batch of a checkpoint (the snapshot) goes to every table, so that each sink's save
mode runs for every table once; later ones to the tables that have rows in them.

Such a pipeline reads that one source only, and its transforms keep no state across micro-batches
(a ``Sql`` with a ``watermark``): a micro-batch is split into static tables, so state would not
carry over. Both are refused before anything runs, as is a Spark Connect session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..plan.model import PlanVertex
from ..spi import SOURCE, StreamInfo
from ..spi.errors import PipelineError, RuntimeConfigError
from ..spi.schemachange import changes_of, follows, refuse_unfollowed
from ..spi.sessions import is_connect
from ..spi.sharedstream import SharedStream
from .context import RunContext, vertex_key
from .counting import count_rows
from .streaming import _Query, write_micro_batch
from .walk import Walk, walk


@dataclass
class SharedQuery(_Query):
    """The one query of a shared capture: the source's stream in, every (sink, table) out."""

    shared: SharedStream | None = None
    sinks: list[PlanVertex] = field(default_factory=list)
    connectors: dict[str, Any] = field(default_factory=dict)
    rows_by_target: dict[tuple[str, str], int] = field(default_factory=dict)  # (sink id, table) -> rows
    read_by_table: dict[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.ctx.label(self.vertex)} ({len(self.shared or {})} table(s), one capture)"

    def _process(self, batch_df: Any, batch_id: int) -> None:
        self.ready.wait(60)
        assert self.shared is not None
        batch = batch_df.persist()
        try:
            present = self.shared.present(batch)
            tables = list(self.shared) if batch_id == 0 else [t for t in self.shared if t in present]
            counts: list[tuple[str, str, Any]] = []
            if tables:
                w = walk(self.ctx, lambda _: None, streaming=True,
                         given={self.vertex.id: self.shared.split(batch, tables)})
                for sink in self.sinks:
                    counts.extend(self._write_sink(w, sink, batch_id))
            for table in tables:
                self.read_by_table[table] = self.read_by_table.get(table, 0) + present.get(table, 0)
            total = 0
            for sink_id, table, counter in counts:
                rows = counter.get().get("rows", 0)
                key = (sink_id, table)
                self.rows_by_target[key] = self.rows_by_target.get(key, 0) + rows
                total += rows
            self.written[batch_id] = total
        finally:
            batch.unpersist()

    def _write_sink(self, w: Walk, sink: PlanVertex, batch_id: int) -> list[tuple[str, str, Any]]:
        """One sink's tables of the micro-batch, as one run of the sink; their row counters."""
        frames = w.sink_input(sink.id)
        if not frames:
            return []
        connector = self.connectors[sink.id]
        data, counters = {}, []
        for table, df in frames.items():
            data[table], counter = count_rows(df, f"write:{sink.id}:{table}:{batch_id}",
                                              deletes=not connector.capabilities.deletes)
            counters.append((sink.id, table, counter))

        def expired() -> None:
            if self.expired:
                raise PipelineError(self._timeout_message(batch_id), self.ctx.label(sink), self.ctx.pipeline_key)

        stable = replace(sink, ref=f"sink[{vertex_key(self.ctx.pipeline, sink)}]")
        write_micro_batch(self.ctx, sink, stable, connector, "", self.stream_id, None, batch_id,
                          before_commit=expired, data=data)
        return counters

    def targets(self) -> list[tuple[PlanVertex, str, int]]:
        by_id = {s.id: s for s in self.sinks}
        return [(by_id[sid], table, rows) for (sid, table), rows in sorted(self.rows_by_target.items())]

    def read_rows(self, name: str) -> int:
        _, vid, table = name.split(":", 2)
        return self.read_by_table.get(table, 0) if vid == self.vertex.id else 0


def _refuse(ctx: RunContext, source: PlanVertex, why: str) -> PipelineError:
    return RuntimeConfigError(f"{ctx.label(source)} captures its tables once for the whole pipeline; {why}"
                              ).located(ctx.label(source), ctx.pipeline_key)


def _check(ctx: RunContext, w: Walk, source: PlanVertex) -> None:
    """What a shared capture's query cannot run: another source, a stateful transform, Spark Connect,
    a schema change a sink cannot follow."""
    others = [w.by_id[v] for v in w.order if w.by_id[v].kind == SOURCE and v != source.id]
    if others:
        raise _refuse(ctx, source, f"a STREAMING pipeline with it reads no other source (found "
                                   f"{', '.join(ctx.label(o) for o in others)}): split the job")
    stateful = [w.by_id[v] for v in w.order if w.by_id[v].kind == "transform" and "watermark" in w.by_id[v].config]
    if stateful:
        raise _refuse(ctx, source, f"its micro-batches are split by table, so a transform keeping state across "
                                   f"them ({ctx.label(stateful[0])}, watermark) cannot follow it: write the "
                                   "changes to a table or topic and run the stateful query from there")
    if is_connect(ctx.spark):
        raise _refuse(ctx, source, "it runs on a classic Spark session, not on Spark Connect")
    for sink in w.sinks():
        for df in w.sink_input(sink.id).values():
            try:
                refuse_unfollowed(changes_of(df.schema), follows(w.connectors[sink.id]), ctx.label(sink))
            except PipelineError as e:
                raise e.located(ctx.label(sink), ctx.pipeline_key) from None


def shared_query(ctx: RunContext, w: Walk, info: StreamInfo, say: Callable[[str], None]) -> SharedQuery:
    """The query of the walk's shared capture (its one source); refused when the pipeline cannot run so."""
    (source_id, shared), *more = w.shared.items()
    source = w.by_id[source_id]
    if more:
        raise _refuse(ctx, source, "a STREAMING pipeline reads one such source: split the job")
    _check(ctx, w, source)
    checkpoint = f"{info.checkpoint}/queries/source-{vertex_key(ctx.pipeline, source)}"
    sinks = w.sinks()
    return SharedQuery(ctx, source, w.connectors[source_id], "default", shared.raw, checkpoint, say, info.timeout_ms,
                       shared=shared, sinks=sinks, connectors={s.id: w.connectors[s.id] for s in sinks})
