"""Run one pipeline on a SparkSession: sources → transform chain → sinks, then commit.

Each vertex becomes DataFrame operations (Catalyst fuses a chain); a vertex whose
parallelism differs from its input's repartitions (the fusion boundary); a vertex
feeding several consumers is persisted once. Counts come from counting points in the pass
that writes the data (:func:`count_rows`). Sinks write in two phases: every sink prepares (writes
staged, invisible data) and only when all have prepared does each commit.
"""

from __future__ import annotations

import itertools
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..connectors import get_connector
from ..plan import graph
from ..plan.model import JobPlan, PipelinePlan, PlanVertex
from . import faults
from .errors import DataError, PipelineError
from .rows import ROW_KIND

log = logging.getLogger("seatunnel.runtime")


@dataclass
class RunContext:
    """What a connector sees of the run."""

    spark: Any  # SparkSession
    plan: JobPlan
    pipeline: PipelinePlan
    run_id: str
    attempt: int = 1
    options: Mapping[str, Any] = field(default_factory=dict)  # runtime switches (fault injection…)

    @property
    def pipeline_key(self) -> str:
        return self.pipeline.task_id

    def label(self, vertex: PlanVertex) -> str:
        return f"{vertex.ref} {vertex.plugin}"


#: A counting point is a filter that keeps every row (partition ids are never negative); its key
#: makes it findable in Spark's SQL plan graphs, whose "number of output rows" metric is the count.
_MARKER = re.compile(r"SPARK_PARTITION_ID\(\) > -(\d+)\b", re.IGNORECASE)
_MARKER_BASE = 1_000_000_000
_keys = itertools.count(1)
#: (application id, execution id) -> {marker key: rows} of finished SQL executions (parsed once)
_finished: dict[tuple[str, int], dict[int, int]] = {}


def _digits(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text) or 0)


def _status_store(spark: Any) -> Any:
    return spark._jsparkSession.sharedState().statusStore()


def _newest_execution(store: Any) -> int:
    """The id of the newest SQL execution the status store holds (-1 for none)."""
    count = int(store.executionsCount())
    return int(store.executionsList(count - 1, 1).apply(0).executionId()) if count else -1


def _marker_rows(spark: Any, since: int, wait: float) -> dict[int, int]:
    """Rows through every counting point of the SQL executions from id ``since`` on (the largest
    value when several executions ran one: a persisted or recomputed plan runs a point again).

    Reads Spark's SQL status store, after the listener bus has delivered every event posted so
    far (the end of the action that ran the points is posted before the action returns)."""
    try:
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(int(wait * 1000))
    except Exception as e:  # a bus still busy after ``wait``: read what has arrived
        log.debug("listener bus not drained: %s", e)
    store = _status_store(spark)
    app = spark.sparkContext.applicationId
    rows: dict[int, int] = {}
    for execution_id in range(max(since, 0), _newest_execution(store) + 1):
        found = _finished.get((app, execution_id))
        if found is None:
            stored = store.execution(execution_id)
            if not stored.isDefined():
                continue
            execution = stored.get()
            found = {}
            if _MARKER.search(execution.physicalPlanDescription() or ""):
                values = store.executionMetrics(execution_id)
                nodes = store.planGraph(execution_id).allNodes()
                for j in range(nodes.size()):
                    node = nodes.apply(j)
                    marker = _MARKER.search(node.desc()) if node.name() == "Filter" else None
                    if marker is None:
                        continue
                    metrics = node.metrics()
                    for m in range(metrics.size()):
                        metric = metrics.apply(m)
                        if metric.name() == "number of output rows":
                            value = values.get(metric.accumulatorId())
                            found[int(marker.group(1))] = _digits(value.get()) if value.isDefined() else 0
            if execution.completionTime().isDefined():
                _finished[(app, execution_id)] = found
        for marker_key, value in found.items():
            rows[marker_key] = max(rows.get(marker_key, 0), value)
    return rows


@dataclass
class _Counter:
    """The rows through one counting point (and, when asked, an Observation of their DELETE and
    UPDATE_BEFORE rows)."""

    spark: Any
    key: int
    since: int  # the first SQL execution that can run it
    deletes: Any = None  # Observation

    def get(self, wait: float = 10.0) -> dict[str, int]:
        """The counts, or ``{}`` when no action ran over the DataFrame (a sink that skipped a
        table, e.g. a retry whose commit had already happened)."""
        rows = _marker_rows(self.spark, self.since, wait).get(self.key + _MARKER_BASE)
        if rows is None:
            return {}
        out = {"rows": rows}
        jo = getattr(self.deletes, "_jo", None)
        if jo is not None:
            deadline = time.monotonic() + wait
            while not jo.future().isCompleted() and time.monotonic() < deadline:
                time.sleep(0.02)
            if jo.future().isCompleted():
                out["deletes"] = int((self.deletes.get or {}).get("deletes") or 0)
        return out


def count_rows(df: Any, name: str, deletes: bool = False) -> tuple[Any, _Counter]:
    """``df`` with a counting point: whatever action runs it counts its rows in the same pass,
    through the SQL metric of a filter that keeps every row (it costs a row almost nothing,
    unlike an aggregating ``DataFrame.observe``, and Spark pushes no filter below it, so a
    source counts every row it read). With ``deletes`` its DELETE/UPDATE_BEFORE rows are
    also counted, by an observation (callers ask only where such rows can occur)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    key = next(_keys)
    counted = df.where(F.spark_partition_id() > F.lit(-(_MARKER_BASE + key)))
    counter = _Counter(df.sparkSession, key, _newest_execution(_status_store(df.sparkSession)) + 1)
    if deletes and ROW_KIND in df.columns:
        counter.deletes = Observation(f"{name}:deletes")
        counted = counted.observe(counter.deletes, F.count_if(F.col(ROW_KIND).isin(1, 3)).alias("deletes"))
    return counted, counter


def materialize(df: Any) -> Any:
    """Persist ``df`` and compute it once now, so the counting points below it run exactly once
    and every consumer reads the cached rows."""
    df = df.persist()
    df.write.format("noop").mode("overwrite").save()
    return df


def _now() -> str:
    return datetime.now(timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M:%S")


#: Spark error classes that fail the same way on every attempt (retrying cannot help).
DETERMINISTIC_SPARK_ERRORS = ("USER_RAISED_EXCEPTION", "UNRESOLVED_COLUMN", "UNRESOLVED_ROUTINE",
                              "DATATYPE_MISMATCH", "PARSE_SYNTAX_ERROR", "CAST_INVALID_INPUT",
                              "MALFORMED_RECORD_IN_PARSING", "TABLE_OR_VIEW_NOT_FOUND", "PATH_NOT_FOUND",
                              "ARITHMETIC_OVERFLOW", "DIVIDE_BY_ZERO", "NUMERIC_VALUE_OUT_OF_RANGE",
                              "INVALID_ARRAY_INDEX", "CAST_OVERFLOW")


def _fail(ctx: RunContext, vertex: PlanVertex, error: BaseException) -> PipelineError:
    """A located PipelineError; Spark errors a retry would repeat become deterministic (an injected
    fault raised inside a Spark task stays transient)."""
    if isinstance(error, PipelineError):
        return error.located(ctx.label(vertex), ctx.pipeline_key)
    fault = faults.injected(error)
    if fault is not None:
        return fault.located(ctx.label(vertex), ctx.pipeline_key)
    text = str(error).strip()
    message = text.splitlines()[0] if text else type(error).__name__
    cls = DataError if any(code in text for code in DETERMINISTIC_SPARK_ERRORS) else PipelineError
    return cls(f"{type(error).__name__}: {message}", ctx.label(vertex), ctx.pipeline_key)


def _merge(datasets: list[dict]) -> dict:
    """Union datasets table by table (a multi-input sink in an unsplit pipeline)."""
    out: dict = {}
    for ds in datasets:
        for table, df in ds.items():
            out[table] = out[table].unionByName(df) if table in out else df
    return out


def run_pipeline(ctx: RunContext, on_event: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run ``ctx.pipeline`` to its commit; return its metrics. Raises :class:`PipelineError`."""
    say = on_event or log.info
    p = ctx.pipeline
    started, t0 = _now(), time.monotonic()
    by_id = {v.id: v for v in p.vertices}
    order = graph.topological_order([v.id for v in p.vertices], p.edges)
    down, up = graph.adjacency([v.id for v in p.vertices], p.edges)
    outputs: dict[str, dict] = {}
    changes: dict[str, bool] = {}  # vertex id -> whether rows other than INSERT can come out of it
    source_counters: dict[str, list[_Counter]] = {}
    persisted: list[Any] = []

    for vid in order:
        v = by_id[vid]
        connector = get_connector(v.plugin)
        if connector is None or not connector.can_run(v.kind):
            raise PipelineError(f"this package cannot run the {v.kind} plugin '{v.plugin}'", ctx.label(v),
                                ctx.pipeline_key)
        changes[vid] = connector.may_emit_changes(v, any(changes.get(u, True) for u in up[vid]))
        if v.kind == "sink":
            continue
        try:
            if v.kind == "source":
                data = connector.read(ctx, v)
                counted = {}
                for table, df in data.items():
                    df, counter = count_rows(df, f"read:{vid}:{table}")
                    counted[table] = df
                    source_counters.setdefault(vid, []).append(counter)
                data = counted
            else:
                inputs = {name: outputs[u] for u, name in zip(up[vid], v.inputs, strict=False)}
                data = connector.apply(ctx, v, inputs)
                first = by_id[up[vid][0]]
                if v.parallelism != first.parallelism:
                    data = {t: df.repartition(v.parallelism) for t, df in data.items()}
            if len(down[vid]) > 1:
                data = {t: materialize(df) for t, df in data.items()}
                persisted.extend(data.values())
        except Exception as e:  # every failure is reported with its plugin
            raise _fail(ctx, v, e) from e
        outputs[vid] = data
        say(f"{ctx.label(v)}: planned ({v.parallelism} partition{'s' if v.parallelism != 1 else ''})")

    prepared: list[tuple[PlanVertex, Any, Any]] = []
    committed: set[str] = set()
    sink_counts: dict[str, list[tuple[str, dict[str, int]]]] = {}  # sink id -> (table, counts) per table
    try:
        for vid in order:
            v = by_id[vid]
            if v.kind != "sink":
                continue
            connector = get_connector(v.plugin)
            data = _merge([outputs[u] for u in up[vid]])
            counted, counters = {}, []
            deletes = not connector.stores_deletes and any(changes[u] for u in up[vid])
            for table, df in data.items():
                counted[table], counter = count_rows(df, f"write:{vid}:{table}", deletes=deletes)
                counters.append((table, counter))
            say(f"{ctx.label(v)}: writing")
            try:
                info = connector.prepare(ctx, v, counted)
            except Exception as e:
                raise _fail(ctx, v, e) from e
            prepared.append((v, connector, info))
            faults.checkpoint(ctx, "sink.write", v)  # a write fault no task fired fires here
            # the sink's write was the one action over its counting points: their counts are final
            sink_counts[vid] = [(table, counter.get()) for table, counter in counters]
            written = sum(n.get("rows", 0) for _, n in sink_counts[vid])
            say(f"{ctx.label(v)}: prepared {written} rows")
            faults.checkpoint(ctx, "sink.prepared", v)
        for v, connector, info in prepared:
            try:
                if connector.commit is not None:
                    connector.commit(ctx, v, info)
                if not faults.reached(ctx, "sink.commit", v):  # the sink's commit has no checkpoint of its own
                    faults.checkpoint(ctx, "sink.commit", v)
            except Exception as e:
                raise _fail(ctx, v, e) from e
            committed.add(v.id)
            say(f"{ctx.label(v)}: committed")
    except BaseException:
        for v, connector, info in prepared:
            if connector.abort is not None and v.id not in committed:
                try:
                    connector.abort(ctx, v, info)
                except Exception as e:  # abort is best effort; the first error wins
                    log.warning("%s: abort failed: %s", ctx.label(v), e)
        raise
    finally:
        for df in persisted:
            df.unpersist()
    try:
        faults.checkpoint(ctx, "pipeline.committed")
    except PipelineError as e:
        raise e.located(None, ctx.pipeline_key) from None

    per_source = {ctx.label(by_id[k]): sum(c.get().get("rows", 0) for c in cs) for k, cs in source_counters.items()}
    per_table = {ctx.label(by_id[k]): {table: n.get("rows", 0) for table, n in counts}
                 for k, counts in sink_counts.items()}
    for k, counts in sink_counts.items():
        deletes = sum(n.get("deletes", 0) for _, n in counts)
        connector = get_connector(by_id[k].plugin)
        if deletes and connector is not None and not connector.stores_deletes:
            say(f"{ctx.label(by_id[k])}: cannot store deletes: {deletes} DELETE/UPDATE_BEFORE "
                "rows were written as plain rows")
    return finished_metrics(ctx, started, t0, per_source, per_table)


def finished_metrics(ctx: RunContext, started: str, t0: float, per_source: Mapping[str, int],
                     per_table: Mapping[str, Mapping[str, int]], **extra: Any) -> dict[str, Any]:
    """The metrics of a pipeline that committed: rows read per source (``{label: rows}``) and written
    per sink and table (``{label: {table: rows}}``), totals and times; ``extra`` keys join them."""
    p = ctx.pipeline
    per_sink = {label: sum(tables.values()) for label, tables in per_table.items()}
    read, written = sum(per_source.values()), sum(per_sink.values())
    return {
        "pipeline": p.id, "task_id": p.task_id, "name": p.name, "status": "FINISHED",
        "attempt": ctx.attempt, "run_id": ctx.run_id, "start": started, "end": _now(),
        "seconds": round(time.monotonic() - t0, 3),
        "read_count": read, "write_count": written, "failed_count": read - written,
        "filtered_count": (read - written) if len(per_sink) == 1 else None,
        "per_source": dict(per_source), "per_sink": per_sink, "per_table": {k: dict(v) for k, v in per_table.items()},
        "committed": True, **extra,
    }
