"""Run one pipeline of a STREAMING job as Spark Structured Streaming queries (docs/streaming.md).

Sources give streaming DataFrames (``StreamingSource.read_stream``), the transforms are the batch
ones applied to them, and every (sink, table) becomes one query whose ``foreachBatch`` writes
each micro-batch through the sink's own two-phase commit: ``prepare`` then ``commit``, given a
micro-batch context (``RunContext.for_batch``) whose ``run_id`` is ``<query id>:batch-<batch id>``. The query id is
Spark's, kept in the query's checkpoint, so a micro-batch Spark replays after a crash (it
committed in the sink, Spark had not yet recorded it) carries the run id of its first attempt
and the sink finds it committed: every row is written once. Save modes run once per stream
(the first micro-batch of a new checkpoint), not per batch.
On a Spark Connect session the ``foreachBatch`` function runs in the server's Python process:
:mod:`.streaming_connect` says what changes (the same :func:`write_micro_batch` runs there).

Checkpoints: ``<root>/<job name>/<pipeline task id>/queries/<sink key>/<table>`` (Spark's
offsets and commit log) and ``.../sources/<source key>/`` (a source's own state, e.g.
FakeSource's splits); how the keys are made: :mod:`.context`.

Triggers (``streaming.trigger``): ``available_now`` processes what is new and stops;
``processing_time`` runs a micro-batch every ``checkpoint.interval`` ms until stopped (the
``stop`` event: SIGTERM in ``runtime/app.py``): the queries finish their running micro-batch
and stop. ``checkpoint.timeout`` bounds a micro-batch. Each micro-batch logs a progress line
(rows read and written, duration); the pipeline's metrics sum them.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..plan.model import PlanVertex
from ..plan.streaming import AVAILABLE_NOW
from ..spi import RetiresCommits, StreamFinish, StreamInfo
from ..spi.errors import PipelineError
from ..spi.schemachange import changes_of, follows, refuse_unfollowed
from ..spi.sessions import is_connect
from . import faults, twophase
from .context import RunContext, now, slug, stream_of, vertex_key
from .counting import count_rows
from .metrics import finished_metrics
from .streaming_connect import RemoteBatchWriter, observe_writes, observed_row, observed_writes
from .walk import Walk, walk

log = logging.getLogger("seatunnel.runtime")

#: at most this many micro-batches are listed in the metrics (all are summed)
MAX_LISTED_BATCHES = 100
_POLL = 0.2


class _StopRequested(Exception):
    """A micro-batch refused because the stream is stopping: it starts no write, and Spark, which has
    planned it but not recorded it, replays it on the next run."""


def write_micro_batch(ctx: RunContext, v: PlanVertex, sv: PlanVertex, connector: Any, table: str, stream_id: str,
                      df: Any, batch_id: int, before_commit: Callable[[], None] | None = None,
                      counted: Callable[[], None] | None = None, data: Mapping[str, Any] | None = None) -> None:
    """One micro-batch through the sink's two phases, keyed by its run id (``<stream id>:batch-<id>``):
    ``prepare``, the fault points, ``commit`` (``before_commit`` may refuse it), ``abort`` on any
    failure; then ``counted`` and the retirement of earlier micro-batches' commit records. ``sv`` is
    the vertex the sink sees (its ref stable across config edits: it keys staging, markers, save modes).
    ``data``: several tables written as one run of the sink (a shared capture's micro-batch), instead
    of ``table``'s ``df``."""
    bctx = ctx.for_batch(stream_id, batch_id)
    sink, two_phase = twophase.driver(connector), twophase.is_two_phase(connector)
    try:
        info = sink.prepare(bctx, sv, dict(data) if data is not None else {table: df})
    except Exception as e:
        raise ctx.fail(v, e) from e
    try:
        bctx.fault_point("sink.write", sv)
        bctx.fault_point("sink.prepared", sv)
        if before_commit is not None:
            before_commit()
        try:
            if two_phase:
                sink.commit(bctx, sv, info)
            if not faults.reached(bctx, "sink.commit", sv):
                bctx.fault_point("sink.commit", sv)
        except Exception as e:
            raise ctx.fail(v, e) from e
    except BaseException:
        if two_phase:
            try:
                sink.abort(bctx, sv, info)
            except Exception as e:  # best effort, the first error wins
                log.warning("%s: abort of micro-batch %s failed: %s", ctx.label(v), batch_id, e)
        raise
    if counted is not None:
        counted()
    bctx.fault_point("batch.committed", sv)
    if isinstance(connector, RetiresCommits) and batch_id > 0:
        try:  # Spark recorded every earlier micro-batch before starting this one: none will be replayed
            connector.retire(bctx, sv, info)
        except Exception as e:  # bookkeeping only
            log.warning("%s: could not drop the commit records of micro-batches before %s: %s", ctx.label(v),
                        batch_id, e)


# ---------------------------------------------------------------------------------------------
# One query per (sink, table)
# ---------------------------------------------------------------------------------------------

@dataclass
class _Query:
    """A (sink, table) query: its foreachBatch writer, progress and outcome."""

    ctx: RunContext
    vertex: PlanVertex
    connector: Any
    table: str
    df: Any
    checkpoint: str
    say: Callable[[str], None]
    timeout_ms: int | None
    stable: PlanVertex | None = None  # the vertex the sink sees: its ref is position-free (see vertex_key)
    handle: Any = None
    stream_id: str = ""
    ready: threading.Event = field(default_factory=threading.Event)
    written: dict[int, int] = field(default_factory=dict)  # batch id -> rows written
    deletes: int = 0
    progress: dict[int, dict] = field(default_factory=dict)  # batch id -> Spark's progress
    logged: set[int] = field(default_factory=set)
    error: BaseException | None = None
    last_report: str | None = None  # the timestamp of the last progress report taken in
    trigger_since: float | None = None
    running: int | None = None  # the micro-batch foreachBatch is writing
    expired: bool = False
    stopping: bool = False  # a stop was requested: later micro-batches are refused, not started
    remote: bool = False  # on a Spark Connect session: the writer runs on the server (.streaming_connect)

    @property
    def label(self) -> str:
        return f"{self.ctx.label(self.vertex)}" + (f" table {self.table}" if self.table != "default" else "")

    def process(self, batch_df: Any, batch_id: int) -> None:
        """foreachBatch: the sink's two-phase commit of one micro-batch, keyed by its run id; refused
        once the stream is stopping (:class:`_StopRequested`)."""
        if self.stopping:
            raise _StopRequested(f"micro-batch {batch_id} not started: the stream is stopping")
        self.running = int(batch_id)
        try:
            self._process(batch_df, int(batch_id))
        except BaseException as e:
            self.error = self.error or (e if isinstance(e, PipelineError) else self.ctx.fail(self.vertex, e))
            raise
        finally:
            self.running = None

    def _process(self, batch_df: Any, batch_id: int) -> None:
        self.ready.wait(60)
        df, counter = count_rows(batch_df, f"write:{self.vertex.id}:{self.table}:{batch_id}",
                                 deletes=not self.connector.capabilities.deletes)

        def expired() -> None:
            if self.expired:
                raise PipelineError(self._timeout_message(batch_id), self.ctx.label(self.vertex), self.ctx.pipeline_key)

        write_micro_batch(self.ctx, self.vertex, self.stable or self.vertex, self.connector, self.table,
                          self.stream_id, df, batch_id, before_commit=expired, counted=lambda: self._counted(
                              batch_id, counter.get()))

    def _counted(self, batch_id: int, counts: Mapping[str, int]) -> None:
        self.written[batch_id] = counts.get("rows", 0)
        self.deletes += counts.get("deletes", 0)

    def _timeout_message(self, batch_id: int | None) -> str:
        which = f"micro-batch {batch_id}" if batch_id is not None else "a micro-batch"
        return (f"{which} ran longer than checkpoint.timeout = {self.timeout_ms} ms; the query was stopped "
                "(a rerun resumes from the last committed micro-batch)")

    def poll(self) -> None:
        """Take in Spark's progress reports (one progress line per finished micro-batch) and watch the timeout."""
        q = self.handle
        last = q.lastProgress
        if last is None or last["timestamp"] == self.last_report:
            reports = []
        elif int(last["batchId"]) > max(self.progress, default=-1) + 1:
            reports = q.recentProgress  # more than one report since the last poll (or a resumed stream)
        else:
            reports = [last]
        if last is not None:
            self.last_report = last["timestamp"]
        for p in reports:
            batch = int(p["batchId"])
            if "addBatch" not in (p["durationMs"] or {}):
                continue  # an idle report: no micro-batch ran
            self.progress[batch] = p
            if self.remote and batch not in self.written:
                counts = observed_writes(p, self.vertex, self.table)
                if counts is not None:
                    self._counted(batch, counts)
            if batch not in self.logged and batch in self.written:
                self.logged.add(batch)
                self.say(f"{self.label}: micro-batch {batch}: read {_rows_read(p)} rows, wrote "
                         f"{self.written[batch]} rows in {int(p['durationMs'].get('triggerExecution', 0))} ms "
                         f"({len(self.written)} micro-batch(es), {sum(self.written.values()):,} rows written so far; "
                         f"{_per_second(p):,.0f} rows/s)")
                self._publish()
        if self.timeout_ms is None or not q.isActive:
            return
        try:
            active = bool(q.status["isTriggerActive"])
        except Exception:  # the query ended meanwhile
            return
        now = time.monotonic()
        if not active:
            self.trigger_since = None
        elif self.trigger_since is None:
            self.trigger_since = now
        elif (now - self.trigger_since) * 1000 > self.timeout_ms and not self.expired:
            self.expired = True
            stuck = self.running if self.running is not None else (max(self.progress) + 1 if self.progress else None)
            self.error = PipelineError(self._timeout_message(stuck), self.ctx.label(self.vertex), self.ctx.pipeline_key)

    def _publish(self) -> None:
        """This query's micro-batches so far as plain data, to the run context's ``on_progress``."""
        if self.ctx.on_progress is not None:
            self.ctx.on_progress({"status": "RUNNING", "micro_batches": len(self.written), "read_count": None,
                                  "write_count": sum(self.written.values()), "updated": now()})

    def targets(self) -> list[tuple[PlanVertex, str, int]]:
        """(sink, table, rows written) of what this query wrote."""
        return [(self.vertex, self.table, sum(self.written.values()))]

    def read_rows(self, name: str) -> int:
        """Rows a source observation (``read:<source>:<table>``) counted over this query's micro-batches."""
        total = 0
        for p in self.progress.values():
            row = (p["observedMetrics"] or {}).get(name)
            if row is not None:
                total += observed_row(row).get("rows", 0)
        return total


def _per_second(progress: Any) -> float:
    """Spark's processed rows per second of a micro-batch (0 where it reports none or NaN)."""
    try:
        value = float(progress["processedRowsPerSecond"] or 0)
    except (KeyError, TypeError, ValueError):
        return 0.0
    return value if math.isfinite(value) else 0.0


def _rows_read(progress: Any) -> int:
    """Rows the sources gave a micro-batch: their observations (``read:...``), else Spark's input rows."""
    observed = [row for name, row in (progress["observedMetrics"] or {}).items() if name.startswith("read:")]
    if observed:
        return sum(observed_row(row).get("rows", 0) for row in observed)
    return int(progress["numInputRows"])


def _stop_gracefully(queries: list[_Query], wait_s: float = 60.0) -> None:
    """Stop each query between micro-batches: its running micro-batch, if any, finishes first; one that
    would start meanwhile is refused before it writes (stopping a query interrupts its thread, and a
    sink interrupted half way, e.g. while connecting, would fail the run)."""
    for q in queries:
        q.stopping = True
    deadline = time.monotonic() + wait_s
    for q in queries:
        handle = q.handle
        if handle is None or not handle.isActive:
            continue
        while time.monotonic() < deadline:
            try:
                if not handle.status["isTriggerActive"]:
                    break
            except Exception:
                break
            time.sleep(0.05)
        handle.stop()


def _stop_all(queries: list[_Query]) -> None:
    for q in queries:
        if q.handle is not None and q.handle.isActive:
            try:
                q.handle.stop()
            except Exception as e:  # stopping is best effort while failing
                log.warning("%s: could not stop its query: %s", q.label, e)


def _one_query_per_exclusive_source(ctx: RunContext, w: Any) -> None:
    """A source whose position lives outside the checkpoint (``Capabilities.exclusive_stream``) feeds one
    sink: two queries would advance its position independently, and the slower one lose changes."""
    sinks = list(w.sinks())
    for v in ctx.pipeline.vertices:
        exclusive = v.id in w.connectors and w.connectors[v.id].capabilities.exclusive_stream
        if v.kind == "source" and exclusive and len(sinks) > 1:
            from ..spi.errors import RuntimeConfigError

            raise RuntimeConfigError(f"{ctx.label(v)} feeds {len(sinks)} sinks ({', '.join(s.ref for s in sinks)}); "
                                     "its replication position is shared, so a STREAMING pipeline may write it to "
                                     "one sink: write to one sink and copy from there, or capture twice (two "
                                     "sources, two slots)").located(ctx.label(v), ctx.pipeline_key)


def _unfinished_batch(checkpoint: str) -> bool:
    """Whether a query's checkpoint holds a micro-batch Spark planned (``offsets/<n>``) but did not record
    done (``commits/<n>``). Spark re-runs it first, and an ``available_now`` query then ends after it,
    without reading what arrived since: such a run starts its query a second time. A checkpoint this
    process cannot list (not on a local file system) counts as unfinished (a second start that finds
    nothing new ends at once)."""
    import os

    path = checkpoint[len("file://"):] if checkpoint.startswith("file://") else \
        checkpoint[len("file:"):] if checkpoint.startswith("file:") else checkpoint
    if "://" in path:
        return True

    def ids(folder: str) -> list[int]:
        full = os.path.join(path, folder)
        return [int(n) for n in os.listdir(full) if n.isdigit()] if os.path.isdir(full) else []

    planned = ids("offsets")
    return bool(planned) and max(planned) > max(ids("commits"), default=-1)


def _run_queries(ctx: RunContext, queries: list[_Query], info: StreamInfo, stop: threading.Event,
                 say: Callable[[str], None]) -> str | None:
    """Start ``queries`` and wait until they end, fail (raised) or ``stop`` is set (then stopped
    gracefully: returns why)."""
    p = ctx.pipeline
    if stop.is_set():  # stopped while Spark started or the sources were prepared: no query starts
        say("stopping: stop requested before the queries started; none is started")
        return "stop requested"
    for q in queries:  # a schema change the sink cannot follow: nothing is written
        try:
            refuse_unfollowed(changes_of(q.df.schema), follows(q.connector), ctx.label(q.vertex))
        except PipelineError as e:
            raise e.located(ctx.label(q.vertex), ctx.pipeline_key) from None
    for q in queries:
        if q.remote:  # the writer runs in the server's Python process: plain data, counted by an observation
            writer = observe_writes(q.df, q.vertex, q.table, deletes=not q.connector.capabilities.deletes).writeStream
            writer = writer.foreachBatch(RemoteBatchWriter(
                ctx.plan, ctx.pipeline, ctx.run_id, ctx.attempt, info, q.vertex, q.stable or q.vertex, q.table,
                q.checkpoint, dict(ctx.options)))
        else:
            writer = q.df.writeStream.foreachBatch(q.process)
        writer = writer.option("checkpointLocation", q.checkpoint)
        writer = writer.queryName(f"{p.task_id}:{q.vertex.ref}:{q.table}:{time.time_ns()}")
        writer = (writer.trigger(availableNow=True) if info.trigger == AVAILABLE_NOW
                  else writer.trigger(processingTime=f"{info.interval_ms} milliseconds"))
        try:
            q.handle = writer.start()
        except Exception as e:
            raise ctx.fail(q.vertex, e) from e
        q.stream_id = str(q.handle.id)
        q.ready.set()
        say(f"{q.label}: query started (stream {q.stream_id})")
    while True:
        for q in queries:
            q.poll()
        # each query's state is read once per round: a query ending between two reads (as it failed)
        # must not count as ended without its exception having been looked at
        ended = [q for q in queries if q.handle is not None and not q.handle.isActive]
        error = next((q.error for q in queries if q.error is not None), None)
        if error is not None:
            raise error
        for q in ended:
            cause = q.handle.exception()
            if cause is not None:
                raise ctx.fail(q.vertex, cause)
        if len(ended) == len(queries):
            for q in queries:  # a query may have ended after its poll above: take in its last reports
                q.poll()
            return None
        if stop.wait(_POLL):
            say("stopping: stop requested; running micro-batches finish first")
            _stop_gracefully(queries)
            for q in queries:
                q.poll()
            error = next((q.error for q in queries if q.error is not None), None)
            if error is not None:
                raise error
            return "stop requested"


#: how often a query whose Python streaming reader did not connect back in time is started again
PYTHON_WORKER_RESTARTS = 3
_WORKER_LATE = "Python worker failed to connect back"


def _run_restarting(ctx: RunContext, queries: list[_Query], info: StreamInfo, stop: threading.Event,
                    say: Callable[[str], None]) -> str | None:
    """:func:`_run_queries`, started again (from their checkpoints: nothing is written twice) when a query
    failed because Spark's Python streaming reader did not connect back within Spark's fixed wait (a
    loaded machine), up to :data:`PYTHON_WORKER_RESTARTS` times, a little later each time."""
    for attempt in range(1, PYTHON_WORKER_RESTARTS + 2):
        try:
            return _run_queries(ctx, queries, info, stop, say)
        except PipelineError as e:
            if _WORKER_LATE not in str(e) or attempt > PYTHON_WORKER_RESTARTS:
                raise
            _stop_all(queries)
            pause = 2.0 * attempt  # give a loaded machine room before the next start
            say(f"a Python streaming reader did not connect back in time (a loaded machine); restarting the "
                f"queries from their checkpoints in {pause:.0f} s ({attempt} of {PYTHON_WORKER_RESTARTS})")
            if stop.wait(pause):
                return "stop requested"
            for q in queries:
                q.error, q.handle, q.expired, q.trigger_since, q.last_report = None, None, False, None, None
                q.ready.clear()
    return None


def run_streaming_pipeline(ctx: RunContext, on_event: Callable[[str], None] | None = None,
                           stop: threading.Event | None = None) -> dict[str, Any]:
    """Run ``ctx.pipeline`` as streaming queries until they end (``available_now``) or ``stop`` is set;
    return its metrics (rows summed over the micro-batches). Raises :class:`PipelineError`."""
    say = on_event or log.info
    stop = stop or threading.Event()
    p = ctx.pipeline
    started, t0 = now(), time.monotonic()
    info = ctx.stream or stream_of(ctx.plan, p)
    ctx = replace(ctx, stream=info)
    trigger = ("available_now" if info.trigger == AVAILABLE_NOW
               else f"processing_time, every {info.interval_ms} ms")
    say(f"streaming ({trigger}); checkpoint {info.checkpoint}")
    w = walk(ctx, say, streaming=True)
    try:
        return _run_walk(ctx, w, info, stop, say, started, t0)
    finally:  # whatever a shared capture's source held while it streamed (its slot's lock) is let go
        for shared in w.shared.values():
            shared.release()


def _run_walk(ctx: RunContext, w: Walk, info: StreamInfo, stop: threading.Event, say: Callable[[str], None],
              started: str, t0: float) -> dict[str, Any]:
    """The queries of the walked pipeline, run until they end or ``stop`` is set; its metrics."""
    p = ctx.pipeline
    _one_query_per_exclusive_source(ctx, w)

    queries: list[_Query] = []
    if w.shared:  # a source reading one capture for all its tables: one query writes every sink
        from .streaming_shared import shared_query

        queries.append(shared_query(ctx, w, info, say))
    for v in ([] if w.shared else w.sinks()):
        key = vertex_key(p, v)
        for table, df in w.sink_input(v.id).items():
            checkpoint = f"{info.checkpoint}/queries/{key}/{slug(table)}"
            queries.append(_Query(ctx, v, w.connectors[v.id], table, df, checkpoint, say, info.timeout_ms,
                                  stable=replace(v, ref=f"sink[{key}]"), remote=is_connect(ctx.spark)))
    stopped = None
    try:
        replays = [q for q in queries if info.trigger == AVAILABLE_NOW and _unfinished_batch(q.checkpoint)]
        stopped = _run_restarting(ctx, queries, info, stop, say)
        if replays and stopped is None:
            say(f"{len(replays)} query(ies) re-ran a micro-batch an earlier attempt had planned; reading on to "
                "what is available now")
            stopped = _run_restarting(ctx, replays, info, stop, say)
    except BaseException:
        _stop_all(queries)
        raise
    for q in queries:
        q.poll()

    written_by_sink: dict[str, dict[str, int]] = {}
    for q in queries:
        for sink, table, rows in q.targets():
            written_by_sink.setdefault(sink.id, {})[table] = rows
    for v in w.sinks():
        connector = w.connectors[v.id]
        if isinstance(connector, StreamFinish):
            try:
                connector.finish_stream(ctx, v, written_by_sink.get(v.id, {}))
            except Exception as e:
                raise ctx.fail(v, e) from e
    return _metrics(ctx, queries, w.observed, w.by_id, started, t0, stopped, info)


def _metrics(ctx: RunContext, queries: list[_Query], observed: list[str], by_id: Mapping[str, PlanVertex],
             started: str, t0: float, stopped: str | None, info: StreamInfo) -> dict[str, Any]:
    """The batch executor's metrics, summed over the micro-batches, plus the streaming details."""
    per_source: dict[str, int] = {}
    per_table_read: dict[str, dict[str, int]] = {}
    for name in observed:
        _, vid, table = name.split(":", 2)
        label = f"{by_id[vid].ref} {by_id[vid].plugin}"
        # every query reading a source reads all of it: count the source once (the query that read most)
        rows = max((q.read_rows(name) for q in queries), default=0)
        per_source[label] = per_source.get(label, 0) + rows
        tables = per_table_read.setdefault(label, {})
        tables[table] = tables.get(table, 0) + rows
    per_table: dict[str, dict[str, int]] = {}
    batches = []
    for q in queries:
        for sink, table, rows in q.targets():
            per_table.setdefault(f"{sink.ref} {sink.plugin}", {})[table] = rows
        label = f"{q.vertex.ref} {q.vertex.plugin}"
        for batch in sorted(q.written):
            progress = q.progress.get(batch)
            batches.append({"sink": label, "table": q.table, "batch": batch,
                            "read": _rows_read(progress) if progress else None,
                            "written": q.written[batch],
                            "ms": int(progress["durationMs"].get("triggerExecution", 0)) if progress else None})
        if q.deletes and not q.connector.capabilities.deletes:
            ctx_label = ctx.label(q.vertex)
            log.info("%s: cannot store deletes: %s DELETE/UPDATE_BEFORE rows were written as plain rows", ctx_label,
                     q.deletes)
    return finished_metrics(
        ctx, started, t0, per_source, per_table, per_table_read=per_table_read,
        mode="STREAMING",
        streaming={
            "trigger": info.trigger, "interval_ms": info.interval_ms, "timeout_ms": info.timeout_ms,
            "checkpoint": info.checkpoint, "stopped": stopped,
            "micro_batches": len(batches), "batches": batches[-MAX_LISTED_BATCHES:],
            "queries": [{"sink": f"{q.vertex.ref} {q.vertex.plugin}", "table": q.table, "stream_id": q.stream_id,
                         "checkpoint": q.checkpoint} for q in queries],
        },
    )
