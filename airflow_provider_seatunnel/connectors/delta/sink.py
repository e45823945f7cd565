"""The Delta sink's storage verbs (:class:`DeltaSinkVerbs`; the engine, ``runtime/twophase.py``, runs the two
phases): ``stage`` computes each table's rows once into Spark's cache, ``publish`` makes them ONE Delta commit
that carries the run's identity and the attempt's token, so that Delta itself keeps a run from committing
twice and an overtaken attempt from committing at all (its commit log is :class:`DeltaFence`, the tokens
kept in the table's own log: :mod:`.fence`).

**The identity.** Each commit is an idempotent Delta write: ``txnAppId`` names the (run, pipeline, sink,
target, upstream table), ``txnVersion`` is the micro-batch in STREAMING (every micro-batch of a stream
shares the app id: the stream is the run) and twice the attempt's token in BATCH (:mod:`.fence`). Delta
records the pair in the commit itself and skips a write whose version is not above the one recorded for
its app id, inside its optimistic commit: a restore of a run whose commit landed writes nothing, an
attempt overtaken by a newer token writes nothing (Superseded), and of two overlapping writes one lands,
the other fails (transient) before committing anything. ``userMetadata`` (JSON: run id, pipeline, sink,
table, attempt, and the kind, app id, token and a nonce) makes ``DESCRIBE HISTORY`` show which run and
attempt wrote each version, and whether it holds data or only a token.

App ids are ``seatunnel-<scope>-<pipeline and table>``, where the scope digests (run, sink, target):
**save modes apply once per scope**, in the scope's first commit, found as the table's first commit whose
app id starts with the scope. ``DROP_DATA`` is that commit written as an overwrite (the old rows go in
the same commit as the new ones; a restore finds the commit and never drops what it wrote),
``RECREATE_SCHEMA`` an overwrite that replaces the schema and partitioning too; later commits of the
scope (the other pipelines of a split, the other tables, a stream's later micro-batches) append.
``CREATE_SCHEMA_WHEN_NOT_EXIST`` (and ``IGNORE``): a missing table is created by the commit, with
``partition_keys`` and ``delta.table.write-props``.

**Upserts** (``primary_keys``): the last change per key (UPDATE_BEFORE rows dropped), then one SQL
``MERGE``: DELETE rows delete the key's row, INSERT and UPDATE_AFTER rows replace it or are inserted.
SQL statements take Delta's transaction identity from session settings, set for that statement only
(left set, every later write of the session would be skipped). A commit that creates or overwrites the
table writes the changes' rows (DELETE rows left out) instead.

Fault points: ``sink.move`` before the Delta commit, ``sink.commit`` after it (the commit has landed,
the pipeline does not know yet: the restore must find it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import PipelineError, RuntimeConfigError, root_cause
from ...spi.options import run_time_options
from ...spi.rows import ROW_KIND, data_columns, data_only
from ...spi.schemachange import changes_of, pipeline_follows
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from ..files.placeholders import expand_table_placeholders
from ..lakehouse import DELETE, changes, merge_sql, resolve
from . import evolve, fence
from .options import SinkOptions, Table, parse
from .tables import TableState, ensure_delta, has_rows, sql_path, table_state

log = logging.getLogger("seatunnel.delta")

#: the session settings a SQL statement takes Delta's transaction identity and commit text from
SQL_TXN_APP, SQL_TXN_VERSION = "spark.databricks.delta.write.txnAppId", "spark.databricks.delta.write.txnVersion"
SQL_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


class ConcurrentCommit(PipelineError):
    """Another writer committed to the table while this attempt wrote, in a way Delta cannot reconcile
    (another attempt of the same run, or a concurrent overwrite): nothing of this attempt was committed.
    Transient: a retry finds the other commit."""

    kind = "superseded"


@dataclass(frozen=True)
class Txn:
    """A commit's identity: Delta's ``txnAppId`` and ``txnVersion``, and the scope its save modes go by."""

    app_id: str
    version: int
    scope: str


def txn_of(ctx: RunContext, vertex: Vertex, path: str, table: str, token: int = 0) -> Txn:
    """The run (a stream: every micro-batch), the sink and the target make the scope; the pipeline and the
    upstream table the rest of the app id; the micro-batch (twice the attempt's token in BATCH) the version."""
    scope = f"seatunnel-{digest(ctx.save_mode_run_id, vertex.ref, path, length=20)}-"
    version = fence.data_version(token) if ctx.batch_id is None else int(ctx.batch_id)
    return Txn(scope + digest(ctx.pipeline_key, table, length=12), version, scope)


def streaming(ctx: RunContext) -> bool:
    return ctx.batch_id is not None


def note(ctx: RunContext, vertex: Vertex, table: str) -> dict[str, Any]:
    """What every commit's ``userMetadata`` says of the run that wrote it."""
    return {"seatunnel_run_id": ctx.run_id, "pipeline": ctx.pipeline_key, "sink": vertex.ref, "table": table,
            "attempt": ctx.attempt}


def target_path(table: Table, upstream: str, columns: list[str]) -> str:
    """The table's directory for the upstream table ``upstream`` (placeholders expanded)."""
    return expand_table_placeholders(table.location(), upstream, columns)


# ---------------------------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------------------------

def scope_started(spark: Any, state: TableState, ctx: RunContext, scope: str) -> bool:
    """Whether a data commit of the scope is in the table: any recorded version in STREAMING; an even one
    in BATCH (odd ones are tokens), or, when only tokens show, a data commit in the history (a take that
    raced past a data commit recorded its odd version over it: :mod:`.fence`)."""
    if streaming(ctx) or any(v % 2 == 0 for v in state.scope_versions):
        return state.scope_started
    return bool(state.scope_versions) and fence.scope_has_data(spark, state.path, scope)


def _check_save_modes(opts: SinkOptions, state: TableState, spark: Any, started: bool) -> None:
    """Before the scope's first commit: the save modes that refuse a target."""
    if started:
        return
    if not state.exists and opts.schema_save_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST":
        raise RuntimeConfigError(f"schema_save_mode ERROR_WHEN_SCHEMA_NOT_EXIST: {state.path} is not a Delta table")
    if state.exists and opts.data_save_mode == "ERROR_WHEN_DATA_EXISTS" and has_rows(spark, state.path):
        raise RuntimeConfigError(f"data_save_mode ERROR_WHEN_DATA_EXISTS: the Delta table {state.path} holds rows")


def _target(ctx: RunContext, vertex: Vertex, commit: CommitId, columns: list[str] | None,
            token: int = 0) -> tuple[str, Txn]:
    path = target_path(options_of(vertex).table, commit.table, columns or [])
    return path, txn_of(ctx, vertex, path, commit.table, token)


def options_of(vertex: Vertex) -> SinkOptions:
    return run_time_options(parse, vertex, SinkOptions)


@dataclass(frozen=True)
class DeltaFence:
    """The Delta sink's commit log: tokens and commit records in the table's own log (:mod:`.fence`).
    STREAMING takes no token (every attempt holds 0): a micro-batch is committed when its app id's
    version is at the micro-batch or later."""

    ctx: Any
    vertex: Any

    def _state(self, commit: CommitId) -> tuple[str, Txn, TableState]:
        ensure_delta(self.ctx.spark, self.ctx.plan.env)
        path, txn = _target(self.ctx, self.vertex, commit, None)
        return path, txn, table_state(self.ctx.spark, path, txn.app_id)

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        path, txn, state = self._state(commit)
        if streaming(self.ctx):
            return 0, state.committed is not None and state.committed >= txn.version
        if not state.exists:  # no log to take a token in: the first attempt to create the table wins
            return 0, False
        taken = fence.take(self.ctx.spark, path, txn.app_id, note(self.ctx, self.vertex, commit.table))
        return taken.token, taken.committed

    def newest_token(self, commit: CommitId) -> int:
        if streaming(self.ctx):
            return 0
        return fence.token_of(self._state(commit)[2].committed)


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """The save modes that refuse a target, the schema changes the rows carry (applied: :mod:`.evolve`), then
    the table's rows (the last change per key with ``primary_keys``) computed once into Spark's cache: the
    rows are not visible yet."""
    opts = options_of(vertex)
    columns = data_columns(df)
    path, txn = _target(ctx, vertex, commit, columns, token)
    spark = df.sparkSession
    state = table_state(spark, path, txn.app_id, txn.scope)
    _check_save_modes(opts, state, spark, scope_started(spark, state, ctx, txn.scope))
    # a CDC source's schema changes, each applied once before the rows meet the table (:mod:`.evolve`)
    evolve.follow(spark, state, changes_of(df.schema), ctx.label(vertex), note(ctx, vertex, commit.table))
    if opts.primary_keys:
        keys = resolve(opts.primary_keys, columns, opts.case_sensitive, "primary_keys")
        rows = changes(df, keys, int(vertex.parallelism))
    else:
        rows = data_only(df)
    resolve(opts.partition_keys, columns, opts.case_sensitive, "partition_keys")
    staged = ctx.materialize(rows)
    log.info("Delta %s: table %s computed for %s; committed by the sink's commit", vertex.ref, commit.table, path)
    return Staged(commit, token, path, -1, (), {"path": path, "app_id": txn.app_id, "version": txn.version,
                                                "scope": txn.scope}, cached=staged)


# ---------------------------------------------------------------------------------------------
# commit
# ---------------------------------------------------------------------------------------------

def action_of(opts: SinkOptions, state: TableState, started: bool) -> str:
    """How the commit writes: ``create`` a missing table, ``recreate``/``overwrite`` it in the scope's
    first commit (RECREATE_SCHEMA / DROP_DATA; ``started``: the scope has a data commit), else ``merge``
    (primary keys) or ``append``."""
    if not state.exists:
        return "create"
    if not started and opts.schema_save_mode == "RECREATE_SCHEMA":
        return "recreate"
    if not started and opts.data_save_mode == "DROP_DATA":
        return "overwrite"
    return "merge" if opts.primary_keys else "append"


def _check_columns(opts: SinkOptions, state: TableState, columns: list[str]) -> None:
    """``case_sensitive``: a column the table spells in another case is refused (Delta would match it)."""
    if not opts.case_sensitive or not state.exists:
        return
    exact = set(state.columns)
    lowered = {c.lower(): c for c in state.columns}
    clash = [f"{c} (the table has {lowered[c.lower()]})" for c in columns if c not in exact and c.lower() in lowered]
    if clash:
        raise RuntimeConfigError("case_sensitive: the rows' columns differ in case from the table's: "
                                 + ", ".join(clash))


def _write(df: Any, path: str, action: str, opts: SinkOptions, txn: Txn, meta: str, evolving: bool = False) -> None:
    """One DataFrame write to the table: one Delta commit carrying ``txn``; ``evolving`` (the pipeline
    follows schema changes): a table it creates has column mapping and type widening (:mod:`.evolve`)."""
    from pyspark.sql import functions as F

    if ROW_KIND in df.columns:  # an upsert's rows into a new or emptied table: no DELETE rows to apply
        df = data_only(df.where(F.col(ROW_KIND) != DELETE))
    writer = (df.write.format("delta").mode("overwrite" if action in ("recreate", "overwrite") else "append")
              .option("txnAppId", txn.app_id).option("txnVersion", str(txn.version)).option("userMetadata", meta))
    if action in ("create", "recreate"):
        if opts.partition_keys:
            writer = writer.partitionBy(*resolve(opts.partition_keys, df.columns, opts.case_sensitive,
                                                 "partition_keys"))
        created = {**(evolve.CREATE_PROPERTIES if evolving else {}), **opts.properties}
        for key, value in created.items():  # table properties of the table this commit creates
            writer = writer.option(key, value)
    if action == "recreate":
        writer = writer.option("overwriteSchema", "true")
    writer.save(path)


@contextlib.contextmanager
def _session_txn(spark: Any, settings: Mapping[str, str]) -> Any:
    """``settings`` in the session for one statement, then put back as they were."""
    before = {k: spark.conf.get(k, None) for k in settings}
    try:
        for key, value in settings.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _merge(df: Any, path: str, opts: SinkOptions, txn: Txn, meta: str) -> None:
    spark = df.sparkSession
    columns = data_columns(df)
    keys = resolve(opts.primary_keys, columns, opts.case_sensitive, "primary_keys")
    view = f"st_delta_{txn.app_id.replace('-', '_')}_{txn.version}"
    df.createOrReplaceTempView(view)
    try:
        with _session_txn(spark, {SQL_TXN_APP: txn.app_id, SQL_TXN_VERSION: str(txn.version),
                                  SQL_USER_METADATA: meta}):
            spark.sql(merge_sql(sql_path(path), view, columns, keys)).collect()
    finally:
        spark.catalog.dropTempView(view)


def publish_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """One Delta commit of the cached rows, unless the table has the commit's identity already; the
    cached rows are dropped after it."""
    try:
        return _publish(ctx, vertex, options_of(vertex), staged)
    finally:
        discard_table(ctx, vertex, staged)


def _fenced(ctx: RunContext, recorded: int | None, txn: Txn) -> Published | None:
    """What the recorded version of the app id leaves to this attempt: None (write), ALREADY (the run's
    data landed) or SUPERSEDED (BATCH: a newer token, odd, was taken)."""
    if recorded is None or recorded < txn.version:
        return None
    if not streaming(ctx) and recorded % 2:
        return Published(Outcome.SUPERSEDED, newest=fence.token_of(recorded))
    return Published(Outcome.ALREADY)


def _publish(ctx: RunContext, vertex: Vertex, opts: SinkOptions, staged: Staged) -> Published:
    df, path, table = staged.cached, staged.detail["path"], staged.commit.table
    txn = Txn(staged.detail["app_id"], staged.detail["version"], staged.detail["scope"])
    spark = df.sparkSession
    state = table_state(spark, path, txn.app_id, txn.scope)
    answer = _fenced(ctx, state.committed, txn)
    if answer is not None:
        log.info("Delta %s: table %s of run %s: %s in %s meanwhile, nothing to write", vertex.ref, table,
                 ctx.run_id, "committed" if answer.outcome is Outcome.ALREADY else "a newer attempt's token", path)
        return answer
    _check_columns(opts, state, data_columns(df))
    action = action_of(opts, state, scope_started(spark, state, ctx, txn.scope))
    nonce = uuid.uuid4().hex
    meta = json.dumps({**note(ctx, vertex, table), "kind": "data", "app_id": txn.app_id, "token": staged.token,
                       "nonce": nonce}, sort_keys=True)
    try:
        if action == "merge":
            _merge(df, path, opts, txn, meta)
        else:
            _write(df, path, action, opts, txn, meta, pipeline_follows(ctx.pipeline.vertices))
    except Exception as e:
        cause = root_cause(e)
        if "Concurrent" in cause or "DELTA_CONCURRENT" in cause:
            raise ConcurrentCommit(f"another writer committed to the Delta table {path} meanwhile: nothing of this "
                                   f"attempt was committed ({cause})") from e
        raise
    if not streaming(ctx):  # Delta skips a fenced write without an error: did this one land?
        after = table_state(spark, path, txn.app_id).committed
        if after != txn.version and not fence.landed(spark, path, txn.app_id, nonce):
            return _fenced(ctx, after, Txn(txn.app_id, 0, txn.scope)) or Published(Outcome.ALREADY)
    ctx.fault_point("sink.commit", vertex)
    log.info("Delta %s: committed table %s to %s (%s, txn %s/%d)", vertex.ref, table, path, action,
             txn.app_id, txn.version)
    return Published(Outcome.PUBLISHED, rows=-1)


def discard_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    """Drop the cached rows (quietly: the session may be gone)."""
    if staged.cached is not None:
        with contextlib.suppress(Exception):
            staged.cached.unpersist()


class DeltaSinkVerbs:
    """The Delta sink as storage verbs (see the module's docstring)."""

    stage = staticmethod(stage_table)
    publish = staticmethod(publish_table)
    discard = staticmethod(discard_table)

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> DeltaFence:
        return DeltaFence(ctx, vertex)
