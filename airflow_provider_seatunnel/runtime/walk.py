"""The one walk over a pipeline's vertices, for BATCH and STREAMING alike: sources read, the
transform chain applied, in topological order, up to the sinks (which the caller writes).

Each vertex becomes DataFrame operations (Catalyst fuses a chain); a transform whose parallelism
differs from its input's repartitions (the fusion boundary); in BATCH a vertex feeding several
consumers is persisted once. Sources are counted in the pass that reads them: by counting points
in BATCH (:mod:`.counting`), by named observations in STREAMING (Spark reports them per micro-batch);
on Spark Connect a source a Sql query reads by name is counted by a pass of its own (:func:`_read_by_name`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..plan import graph
from ..plan.model import PlanVertex
from ..spi import SINK, SOURCE, Connector, get_connector
from ..spi.errors import DataError, PipelineError
from ..spi.rows import ARRIVAL, ROW_KIND
from ..spi.sessions import is_connect
from ..spi.sharedstream import SharedStream
from . import together
from .context import RunContext
from .counting import Counter, count_rows


@dataclass
class Walk:
    """What the walk built: each vertex's output, and how its sources are counted."""

    ctx: RunContext
    streaming: bool
    by_id: dict[str, PlanVertex] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    up: dict[str, list[str]] = field(default_factory=dict)
    down: dict[str, list[str]] = field(default_factory=dict)
    connectors: dict[str, Connector] = field(default_factory=dict)
    outputs: dict[str, dict] = field(default_factory=dict)
    changes: dict[str, bool] = field(default_factory=dict)  # whether rows other than INSERT can come out
    source_counters: dict[str, list[Counter]] = field(default_factory=dict)  # BATCH
    observed: list[str] = field(default_factory=list)  # STREAMING: observation names ``read:<vertex>:<table>``
    persisted: list[Any] = field(default_factory=list)
    schema_only: bool = False  # built for the row types only: no counting, nothing persisted
    given: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # source id -> its tables, not read
    shared: dict[str, SharedStream] = field(default_factory=dict)  # sources whose tables share one capture
    together: dict[str, together.Paired] = field(default_factory=dict)  # sources read together (BATCH)

    def sinks(self) -> list[PlanVertex]:
        return [self.by_id[vid] for vid in self.order if self.by_id[vid].kind == SINK]

    def sink_input(self, vid: str) -> dict:
        """The data a sink receives: its inputs' tables, unioned table by table (a multi-input sink
        in an unsplit pipeline), repartitioned to the sink's parallelism where it differs from its
        first input's: a sink writes with as many writers as the plan gives it."""
        out: dict = {}
        first: dict[str, str] = {}
        for u in self.up[vid]:
            for table, df in self.outputs[u].items():
                if table in out:
                    self._same_row_type(vid, table, first[table], out[table], u, df)
                    out[table] = out[table].unionByName(df)
                else:
                    out[table], first[table] = df, u
        parallelism = self.by_id[vid].parallelism
        if self.up[vid] and parallelism != self.by_id[self.up[vid][0]].parallelism:
            if self.inputs_change(vid):  # the shuffle keeps no order: number the changes first
                out = {table: _with_arrival(df) for table, df in out.items()}
            out = {table: df.repartition(parallelism) for table, df in out.items()}
        return out

    def _same_row_type(self, vid: str, table: str, a: str, a_df: Any, b: str, b_df: Any) -> None:
        """Inputs a sink unions must have one row type, checked before the first write."""
        different_row_types(self.ctx, self.by_id[vid], table, {self.ctx.label(self.by_id[a]): a_df,
                                                               self.ctx.label(self.by_id[b]): b_df})

    def inputs_change(self, vid: str) -> bool:
        return any(self.changes[u] for u in self.up[vid])

    def unpersist(self) -> None:
        for df in self.persisted:
            df.unpersist()
        self.persisted.clear()

    def _count_source(self, vid: str, table: str, df: Any) -> Any:
        name = f"read:{vid}:{table}"
        if self.streaming:
            from pyspark.sql import functions as F

            self.observed.append(name)
            return df.observe(name, F.count(F.lit(1)).alias("rows"))
        counted, counter = count_rows(df, name)
        self.source_counters.setdefault(vid, []).append(counter)
        return counted


def _row_type(df: Any) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields if f.name not in (ARRIVAL, ROW_KIND)]


def different_row_types(ctx: RunContext, sink: PlanVertex, table: str, inputs: dict[str, Any]) -> None:
    """Raise a DataError, before anything is written, when the DataFrames ``inputs`` (by the label
    of their producer) bound for one sink's ``table`` differ in row type (field names, types and
    order): two structures must never land in one target."""
    types = {label: _row_type(df) for label, df in inputs.items()}
    if len({tuple(t) for t in types.values()}) > 1:
        shown = "; ".join(f"{label} gives ({', '.join(f'{n} {t}' for n, t in row)})" for label, row in types.items())
        raise DataError(f"the inputs of this sink have different row types (table {table}): {shown}; SeaTunnel "
                        "refuses data of two structures in one sink, and nothing was written",
                        ctx.label(sink), ctx.pipeline_key)


def check_split_row_types(w: Walk) -> None:
    """A sink split into one clone per input (one pipeline each) compares the row type of its
    own input with its siblings' before the first write: their DataFrames are built in this
    session (sources and transforms only, nothing runs but what a schema needs)."""
    for v in w.sinks():
        for check in v.runtime_checks:
            if check.get("check") != "equal_row_types":
                continue
            mine = dict(zip(v.inputs, w.up[v.id], strict=False))
            others = [name for name in check.get("datasets", ()) if name not in mine]
            if not mine or not others:
                continue
            name, producer = next(iter(mine.items()))
            frames = {f"{w.ctx.label(w.by_id[producer])} ({name})": w.outputs[producer]}
            for other in others:
                found = _sibling_output(w.ctx, other)
                if found is not None:
                    frames[found[0]] = found[1]
            for table in w.outputs[producer]:
                different_row_types(w.ctx, v, table, {label: out[table] for label, out in frames.items()
                                                      if table in out})


def _sibling_output(ctx: RunContext, dataset: str) -> tuple[str, dict] | None:
    """The output of the vertex producing ``dataset`` in another pipeline of the plan, built
    schema-only (no counting, no persisting); None when no pipeline produces it."""
    for pipeline in ctx.plan.pipelines:
        producer = next((v for v in pipeline.vertices if v.output == dataset and v.kind != SINK), None)
        if producer is None or pipeline.id == ctx.pipeline.id:
            continue
        sibling = walk(replace(ctx, pipeline=pipeline), lambda _: None, schema_only=True, until=producer.id)
        return f"{sibling.ctx.label(producer)} ({dataset})", sibling.outputs[producer.id]
    return None


def _with_arrival(df: Any) -> Any:
    from pyspark.sql import functions as F

    return df if ARRIVAL in df.columns else df.withColumn(ARRIVAL, F.monotonically_increasing_id())


def runnable(ctx: RunContext, vertex: PlanVertex, streaming: bool) -> Connector:
    """The connector that runs ``vertex``; a PipelineError when this package cannot run it."""
    connector = get_connector(vertex.plugin)
    if connector is None or not (connector.can_stream(vertex.kind) if streaming else connector.can_run(vertex.kind)):
        where = " in a STREAMING job" if streaming else ""
        raise PipelineError(f"this package cannot run the {vertex.kind} plugin '{vertex.plugin}'{where}",
                            ctx.label(vertex), ctx.pipeline_key)
    return connector


def walk(ctx: RunContext, say: Callable[[str], None], streaming: bool = False, schema_only: bool = False,
         until: str | None = None, given: Mapping[str, Mapping[str, Any]] | None = None) -> Walk:
    """Build every source's and transform's DataFrames of ``ctx.pipeline`` (nothing runs yet, but
    the persisting of shared outputs in BATCH), then check the row types a split sink's inputs
    must share. ``schema_only``: for a row type only, up to the vertex ``until`` (no counting
    points, nothing persisted, no checks). ``given``: the tables of some sources (by vertex id),
    taken as they are instead of read (a micro-batch of a shared capture, split by table)."""
    p = ctx.pipeline
    ids = [v.id for v in p.vertices]
    w = Walk(ctx, streaming, by_id={v.id: v for v in p.vertices}, order=graph.topological_order(ids, p.edges),
             schema_only=schema_only, given=dict(given or {}))
    w.down, w.up = graph.adjacency(ids, p.edges)
    for vid in w.order:
        if schema_only and until in w.outputs:
            break
        v = w.by_id[vid]
        connector = w.connectors[vid] = runnable(ctx, v, streaming)
        w.changes[vid] = connector.may_emit_changes(v, any(w.changes.get(u, True) for u in w.up[vid]))
        if v.kind == SINK:
            continue
        try:
            w.outputs[vid] = _vertex_output(w, v, connector)
        except Exception as e:  # every failure is reported with its plugin
            raise ctx.fail(v, e) from e
        what = "streaming, " if streaming else ""
        say(f"{ctx.label(v)}: planned ({what}{v.parallelism} partition{'s' if v.parallelism != 1 else ''})")
    if not schema_only:
        check_split_row_types(w)
    return w


def _read_by_name(w: Walk, vid: str) -> bool:
    """Whether a consumer of ``vid`` reads it by name through the session's catalog (a Sql query of
    temporary views). A Spark Connect client learns an observation's counts only from the plans it
    sends, and a query naming a view hides the view's plan: such a source is counted by its own pass
    (persisted once, read from there)."""
    return any((c := get_connector(w.by_id[d].plugin)) is not None and c.capabilities.reads_tables_by_name
               for d in w.down[vid])


def _read_together(w: Walk, v: PlanVertex, connector: Any) -> dict:
    """A source's tables read together (:mod:`.together`): a grouped table is counted by its group's
    write, the others as any source's."""
    data = w.together[v.id] = together.read(w, v, connector)
    out = {}
    for table, df in data.items():
        if data.grouped(table):
            w.source_counters.setdefault(v.id, []).append(data.counter(w.ctx.spark, f"read:{v.id}:{table}"))
            out[table] = df
        else:
            out[table] = w._count_source(v.id, table, df)
    return out


def _vertex_output(w: Walk, v: PlanVertex, connector: Any) -> dict:
    ctx = w.ctx
    if v.kind == SOURCE:
        if v.id in w.given:
            return dict(w.given[v.id])
        if together.pairs(w, v, connector):
            return _read_together(w, v, connector)
        data = connector.read_stream(ctx, v) if w.streaming else connector.read(ctx, v)
        if isinstance(data, SharedStream):
            w.shared[v.id] = data
        if w.schema_only:
            return dict(data)
        counted = {table: w._count_source(v.id, table, df) for table, df in data.items()}
        if not w.streaming and is_connect(ctx.spark) and _read_by_name(w, v.id):
            counted = {t: ctx.materialize(df) for t, df in counted.items()}
            w.persisted.extend(counted.values())
        return counted
    inputs = {name: w.outputs[u] for u, name in zip(w.up[v.id], v.inputs, strict=False)}
    data = connector.apply(ctx, v, inputs)
    if v.parallelism != w.by_id[w.up[v.id][0]].parallelism:
        data = {t: df.repartition(v.parallelism) for t, df in data.items()}
    if not w.streaming and not w.schema_only and len(w.down[v.id]) > 1:
        data = {t: ctx.materialize(df) for t, df in data.items()}
        w.persisted.extend(data.values())
    return data
