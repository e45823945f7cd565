"""The Iceberg sink's storage verbs (:class:`IcebergSinkVerbs`; the engine runs the two phases): ``stage``
computes each table's rows once into Spark's cache, ``publish`` publishes them as ONE snapshot on the target
branch (``main`` unless ``iceberg.table.commit-branch``), by write-audit-publish on a branch of its own, so
that a run's commit lands once even when two attempts of the run overlap.

**The identity.** Every snapshot the sink publishes carries the summary property ``seatunnel.commit`` =
``seatunnel-<scope>-<pipeline and table>-<micro-batch>``, where the scope digests (run, sink, target) and
the micro-batch is 0 in BATCH (every micro-batch of a stream shares the scope: the stream is the run).

**The commit** of one table:

1. the target branch's history (its head and the head's ancestors) holds the identity: committed
   already (a restore), nothing is written;
2. a missing table is created (``CREATE_SCHEMA_WHEN_NOT_EXIST``: with the partition keys and the
   auto-create properties; ``RECREATE_SCHEMA``: dropped and created in the scope's first commit);
3. a staging branch ``seatunnel_<digest of the identity>_<attempt>_<token>`` is created at the head read in
   step 1, and the rows are written to it as one snapshot carrying the identity: an append, the scope's
   first commit as an overwrite of every row for ``DROP_DATA``, a ``MERGE`` for primary keys;
4. the target branch is fast-forwarded to the staging branch (Iceberg's ``fast_forward`` procedure).
   Iceberg moves a branch forward only when the branch's head is an ancestor of the new head, checked in
   its metadata commit (a retried commit checks again against the refreshed metadata): when anything
   (another attempt of the run, any writer) committed to the target meanwhile, the fast-forward fails,
   nothing is published, and the attempt fails with :class:`ConcurrentCommit` (transient: the retry
   finds the other attempt's commit by its identity, or commits on the new head). This is a
   compare-and-swap of the branch, so two attempts never both publish;
5. the staging branches of the identity are dropped (a restore drops the ones a dead attempt left).

Save modes apply once per scope: the scope's first commit is the first one whose base (the staging
branch's history) holds no identity of the scope. ``ERROR_WHEN_DATA_EXISTS``/``ERROR_WHEN_SCHEMA_NOT_EXIST``
refuse before that commit.

**Upserts** (primary keys): the last change per key (UPDATE_BEFORE rows dropped), then one SQL ``MERGE``:
DELETE rows delete the key's row, INSERT and UPDATE_AFTER rows replace it or are inserted. A SQL statement
takes the snapshot property from a session setting, set for that statement only; the writes of one process
hold a lock so that no other write of the session picks it up. A commit that overwrites the table writes
the changes' rows (DELETE rows left out) instead.

Fault points: ``sink.move`` after the staging branch is written, before the fast-forward, ``sink.commit``
after it (the snapshot is published, the pipeline does not know yet: the restore must find it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import PipelineError, RuntimeConfigError, root_cause
from ...spi.options import run_time_options
from ...spi.rows import ROW_KIND, data_columns, data_only
from ...spi.rows import quote as column
from ...spi.schemachange import changes_of
from ...spi.twophase import CommitId, Outcome, Published, Staged, StoreFenced, digest
from ..files.placeholders import expand_table_placeholders
from ..lakehouse import DELETE, changes, merge_sql, resolve
from . import evolve
from .options import SinkOptions, TableRef, parse
from .tables import (
    COMMIT_PROPERTY,
    TableState,
    ensure_iceberg,
    has_rows,
    identifier,
    procedure_name,
    quote,
    register,
    table_state,
)

log = logging.getLogger("seatunnel.iceberg")

#: the session setting prefix a SQL statement takes snapshot properties from (Iceberg 1.12)
SQL_SNAPSHOT_PROPERTY = "spark.sql.iceberg.snapshot-property."
WRITE_SNAPSHOT_PROPERTY = "snapshot-property."
#: what Iceberg says when a metadata commit lost to another one (the statement may be tried again)
STALE_METADATA = ("CommitFailedException", "refresh is required", "stale table metadata")
RETRIES = 5
#: the writes of this process: a session setting a MERGE takes its identity from must reach no other write
_WRITES = threading.Lock()


class ConcurrentCommit(PipelineError):
    """Something was committed to the target branch while this attempt wrote (another attempt of the same
    run, or another writer): the fast-forward refused and nothing of this attempt was published.
    Transient: a retry finds the other commit, or commits on the new head."""

    kind = "superseded"


@dataclass(frozen=True)
class Identity:
    """A commit's identity (``seatunnel.commit``), the scope its save modes go by, and the prefix of its
    staging branches."""

    value: str
    scope: str
    staging: str


def identity_of(ctx: RunContext, vertex: Vertex, target: str, table: str) -> Identity:
    """The run (a stream: every micro-batch), the sink and the target make the scope; the pipeline, the
    upstream table and the micro-batch (0 in BATCH) the rest."""
    scope = f"seatunnel-{digest(ctx.save_mode_run_id, vertex.ref, target, length=20)}-"
    value = f"{scope}{digest(ctx.pipeline_key, table, length=12)}-{int(ctx.batch_id or 0)}"
    return Identity(value, scope, f"seatunnel_{digest(value, length=16)}_")


def options_of(vertex: Vertex) -> SinkOptions:
    return run_time_options(parse, vertex, SinkOptions)


def run_properties(ctx: RunContext, vertex: Vertex, table: str, identity: Identity) -> dict[str, str]:
    """The snapshot summary properties of a commit: its identity and which run wrote it."""
    return {COMMIT_PROPERTY: identity.value, "seatunnel.run": json.dumps(
        {"seatunnel_run_id": ctx.run_id, "pipeline": ctx.pipeline_key, "sink": vertex.ref, "table": table,
         "attempt": ctx.attempt}, sort_keys=True)}


def target_of(opts: SinkOptions, upstream: str, columns: list[str]) -> TableRef:
    """The table for the upstream table ``upstream`` (placeholders expanded)."""
    return TableRef(expand_table_placeholders(opts.table.namespace, upstream, columns),
                    expand_table_placeholders(opts.table.table, upstream, columns))


def target_name(opts: SinkOptions, ref: TableRef) -> str:
    """The target as the identity's scope names it: the catalog by what locates it (never its credentials,
    which may change between a run and its restore), the table and the branch."""
    where = [opts.catalog.config.get(k, "") for k in ("type", "catalog-impl", "uri", "warehouse")]
    return f"{opts.catalog.name}|{'|'.join(where)}|{ref.namespace}.{ref.table}@{opts.branch}"


# ---------------------------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------------------------

def _check_save_modes(opts: SinkOptions, state: TableState, scope: str, spark: Any, catalog: str,
                      ref: TableRef) -> None:
    """Before the scope's first commit: the save modes that refuse a target."""
    if state.scope_started(scope):
        return
    if not state.exists and opts.schema_save_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST":
        raise RuntimeConfigError(f"schema_save_mode ERROR_WHEN_SCHEMA_NOT_EXIST: {state.name} does not exist")
    if state.exists and state.head is not None and opts.data_save_mode == "ERROR_WHEN_DATA_EXISTS" \
            and has_rows(spark, catalog, ref, opts.branch):
        raise RuntimeConfigError(f"data_save_mode ERROR_WHEN_DATA_EXISTS: the Iceberg table {state.name} holds rows")


def _target(ctx: RunContext, vertex: Vertex, opts: SinkOptions, upstream: str,
            columns: list[str] | None) -> tuple[TableRef, str, Identity]:
    ref = target_of(opts, upstream, columns or [])
    catalog = register(ctx.spark, opts.catalog)
    return ref, catalog, identity_of(ctx, vertex, target_name(opts, ref), upstream)


def is_committed(ctx: RunContext, vertex: Vertex, commit: CommitId) -> bool:
    """Whether the target branch holds a snapshot of the commit's identity; a dead attempt's staging
    branches are dropped then (after publishing, nothing needs them)."""
    ensure_iceberg(ctx.spark)
    opts = options_of(vertex)
    ref, catalog, identity = _target(ctx, vertex, opts, commit.table, None)
    state = table_state(ctx.spark, catalog, ref, opts.branch)
    if not state.committed(identity.value):
        return False
    _drop_staging(ctx.spark, state.name, state.branches, identity.staging)
    return True


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """The save modes that refuse a target, the schema changes the rows carry, then the rows (the last
    change per key with primary keys) computed once into Spark's cache: the rows are not visible yet."""
    opts = options_of(vertex)
    columns = data_columns(df)
    ref, catalog, identity = _target(ctx, vertex, opts, commit.table, columns)
    spark = df.sparkSession
    register(spark, opts.catalog)  # a micro-batch's rows may come with a session of their own
    state = table_state(spark, catalog, ref, opts.branch)
    _check_save_modes(opts, state, identity.scope, spark, catalog, ref)
    if state.exists:  # a CDC source's schema changes, applied once before the rows meet the table (:mod:`.evolve`)
        evolve.follow(spark, state.name, changes_of(df.schema), ctx.label(vertex))
    if opts.primary_keys:
        rows = changes(df, resolve(opts.primary_keys, columns, opts.case_sensitive, "iceberg.table.primary-keys"),
                       int(vertex.parallelism))
    else:
        rows = data_only(df)
    resolve(opts.partition_keys, columns, opts.case_sensitive, "iceberg.table.partition-keys")
    staged = ctx.materialize(rows)
    log.info("Iceberg %s: table %s computed for %s; committed by the sink's commit", vertex.ref, commit.table,
             state.name)
    detail = {"namespace": ref.namespace, "name": ref.table, "identity": [identity.value, identity.scope,
                                                                           identity.staging]}
    return Staged(commit, token, state.name, -1, (), detail, cached=staged)


# ---------------------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------------------

def _ddl(df: Any) -> str:
    return ", ".join(f"{column(f.name)} {f.dataType.simpleString()}" for f in df.schema.fields)


def _properties(props: Mapping[str, str]) -> str:
    def text(value: str) -> str:
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

    return ", ".join(f"{text(k)} = {text(v)}" for k, v in props.items())


def _create_table(spark: Any, catalog: str, ref: TableRef, df: Any, opts: SinkOptions, recreate: bool) -> None:
    """The table, created from the rows' schema (idempotent: another attempt may create it first)."""
    name, df = identifier(catalog, ref), data_only(df)
    if recreate:
        spark.sql(f"DROP TABLE IF EXISTS {name}").collect()
    namespace = ".".join(quote(p) for p in [catalog, *ref.namespace.split(".")])
    with contextlib.suppress(Exception):  # a catalog that creates namespaces with their tables may refuse this
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}").collect()
    sql = f"CREATE TABLE IF NOT EXISTS {name} ({_ddl(df)}) USING iceberg"
    if opts.partition_keys:
        keys = resolve(opts.partition_keys, df.columns, opts.case_sensitive, "iceberg.table.partition-keys")
        sql += " PARTITIONED BY (" + ", ".join(column(k) for k in keys) + ")"
    props = {**opts.create_props, **opts.write_props}
    if props:
        sql += f" TBLPROPERTIES ({_properties(props)})"
    try:
        spark.sql(sql).collect()
    except Exception as e:
        if "already exists" not in root_cause(e).lower():
            raise
    log.info("Iceberg: %s table %s", "recreated" if recreate else "created", name)


def _evolve(spark: Any, catalog: str, ref: TableRef, df: Any, opts: SinkOptions) -> None:
    """``schema-evolution-enabled``: the rows' columns the table lacks are added to it; ``write-props`` set."""
    name, df = identifier(catalog, ref), data_only(df)
    if opts.schema_evolution:
        have = {c.lower() for c in spark.table(name).columns}
        new = [f for f in df.schema.fields if f.name.lower() not in have]
        if new:
            spark.sql(f"ALTER TABLE {name} ADD COLUMNS (" + ", ".join(
                f"{column(f.name)} {f.dataType.simpleString()}" for f in new) + ")").collect()
            log.info("Iceberg: added columns %s to %s", ", ".join(f.name for f in new), name)
    if opts.write_props:
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ({_properties(opts.write_props)})").collect()


def _check_columns(opts: SinkOptions, spark: Any, name: str, columns: list[str]) -> None:
    """``case_sensitive``: a column the table spells in another case is refused (Spark would match it)."""
    if not opts.case_sensitive:
        return
    have = spark.table(name).columns
    lowered = {c.lower(): c for c in have}
    clash = [f"{c} (the table has {lowered[c.lower()]})" for c in columns if c not in have and c.lower() in lowered]
    if clash:
        raise RuntimeConfigError("case_sensitive: the rows' columns differ in case from the table's: "
                                 + ", ".join(clash))


# ---------------------------------------------------------------------------------------------
# commit
# ---------------------------------------------------------------------------------------------

def action_of(opts: SinkOptions, base: TableState, scope: str) -> str:
    """How the staging branch is written: ``overwrite`` (every row replaced) in the scope's first commit
    for DROP_DATA, else ``merge`` (primary keys) or ``append``."""
    if not base.scope_started(scope) and opts.data_save_mode == "DROP_DATA":
        return "overwrite"
    return "merge" if opts.primary_keys else "append"


def _write(df: Any, target: str, action: str, opts: SinkOptions, properties: Mapping[str, str]) -> None:
    """One write to the staging branch: one snapshot carrying ``properties``."""
    from pyspark.sql import functions as F

    spark = df.sparkSession
    if action == "merge":
        columns = data_columns(df)
        keys = resolve(opts.primary_keys, columns, opts.case_sensitive, "iceberg.table.primary-keys")
        view = f"st_iceberg_{uuid.uuid4().hex}"
        # the changes as stored rows: Iceberg's MERGE reads its source twice (to find the files it rewrites),
        # which Spark allows for a deterministic plan only (the changes' arrival order is not)
        df.localCheckpoint(eager=True).createOrReplaceTempView(view)
        settings = {SQL_SNAPSHOT_PROPERTY + k: v for k, v in properties.items()}
        try:
            for key, value in settings.items():
                spark.conf.set(key, value)
            spark.sql(merge_sql(target, view, columns, keys)).collect()
        finally:
            for key in settings:
                spark.conf.unset(key)
            spark.catalog.dropTempView(view)
        return
    if ROW_KIND in df.columns:  # an upsert's rows into an emptied table: no DELETE rows to apply
        df = data_only(df.where(F.col(ROW_KIND) != DELETE))
    writer = df.writeTo(target)
    for key, value in properties.items():
        writer = writer.option(WRITE_SNAPSHOT_PROPERTY + key, value)
    if action == "overwrite":
        writer.overwrite(F.lit(True))
    else:
        writer.append()


def _branch_sql(name: str, branch: str, head: int | None, drop: bool = False) -> str:
    if drop:
        return f"ALTER TABLE {name} DROP BRANCH IF EXISTS {quote(branch)}"
    return f"ALTER TABLE {name} CREATE BRANCH {quote(branch)}" + (f" AS OF VERSION {head}" if head is not None else "")


def _sql(spark: Any, statement: str) -> None:
    """A statement that commits table metadata, tried again while Iceberg refuses it only because the
    table's metadata changed under it (another attempt created or dropped a branch: a retry re-reads it
    and checks its own conditions again)."""
    for attempt in range(RETRIES):
        try:
            spark.sql(statement).collect()
            return
        except Exception as e:
            cause = root_cause(e)
            if attempt == RETRIES - 1 or not any(m in cause for m in STALE_METADATA):
                raise
            time.sleep(0.2 * (attempt + 1))


def _drop_staging(spark: Any, name: str, branches: tuple[str, ...], prefix: str, keep: str | None = None) -> None:
    for branch in branches:
        if branch.startswith(prefix) and branch != keep:
            with contextlib.suppress(Exception):  # another attempt may drop it first
                _sql(spark, _branch_sql(name, branch, None, drop=True))
                log.info("Iceberg: dropped the staging branch %s of %s", branch, name)


def _fast_forward(spark: Any, catalog: str, ref: TableRef, target: str, staging: str) -> None:
    """The compare-and-swap: ``target`` moves to ``staging``'s head only if its head is an ancestor of it."""
    try:
        _sql(spark, f"CALL {quote(catalog)}.system.fast_forward('{procedure_name(ref)}', '{target}', '{staging}')")
    except Exception as e:
        cause = root_cause(e)
        name = identifier(catalog, ref)
        with contextlib.suppress(Exception):
            spark.sql(_branch_sql(name, staging, None, drop=True)).collect()
        raise ConcurrentCommit(f"something was committed to branch {target} of the Iceberg table {name} while this "
                               f"attempt wrote: nothing of this attempt was published ({cause})") from e


def _base(ctx: RunContext, vertex: Vertex, opts: SinkOptions, staged: Staged,
          identity: Identity) -> tuple[TableState, str] | None:
    """Steps 1-3 up to the staging branch: (its state, its name), or None when the commit landed already."""
    df = staged.cached
    spark, ref = df.sparkSession, TableRef(staged.detail["namespace"], staged.detail["name"])
    catalog = register(spark, opts.catalog)
    state = table_state(spark, catalog, ref, opts.branch)
    if state.committed(identity.value):
        _drop_staging(spark, state.name, state.branches, identity.staging)
        return None
    recreate = not state.scope_started(identity.scope) and opts.schema_save_mode == "RECREATE_SCHEMA"
    if not state.exists or recreate:
        _create_table(spark, catalog, ref, df, opts, recreate)
        state = table_state(spark, catalog, ref, opts.branch)
    _evolve(spark, catalog, ref, df, opts)
    _check_columns(opts, spark, state.name, data_columns(df))
    _drop_staging(spark, state.name, state.branches, identity.staging)
    if opts.branch != "main" and opts.branch not in state.branches:
        with contextlib.suppress(Exception):  # another attempt may create it first
            _sql(spark, _branch_sql(state.name, opts.branch, table_state(spark, catalog, ref).head))
        state = table_state(spark, catalog, ref, opts.branch)
    staging = f"{identity.staging}{int(ctx.attempt)}_{uuid.uuid4().hex[:8]}"
    _sql(spark, _branch_sql(state.name, staging, state.head))
    base = table_state(spark, catalog, ref, staging)
    if base.committed(identity.value):  # published between the check and the branch (an empty table's branch)
        _sql(spark, _branch_sql(state.name, staging, None, drop=True))
        return None
    return base, staging


def publish_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """Write the cached rows to a staging branch and fast-forward the target branch to it (``sink.move``
    before the fast-forward); the cached rows are dropped after."""
    try:
        return _publish(ctx, vertex, options_of(vertex), staged)
    finally:
        discard_table(ctx, vertex, staged)


def _publish(ctx: RunContext, vertex: Vertex, opts: SinkOptions, staged: Staged) -> Published:
    identity = Identity(*staged.detail["identity"])
    df, table = staged.cached, staged.commit.table
    spark, ref = df.sparkSession, TableRef(staged.detail["namespace"], staged.detail["name"])
    found = _base(ctx, vertex, opts, staged, identity)
    if found is None:
        log.info("Iceberg %s: table %s of run %s was committed meanwhile: nothing to write", vertex.ref,
                 table, ctx.run_id)
        return Published(Outcome.ALREADY)
    base, staging = found
    catalog = register(spark, opts.catalog)
    action = action_of(opts, base, identity.scope)
    with _WRITES:
        _write(df, identifier(catalog, ref, f"branch_{staging}"), action, opts,
               run_properties(ctx, vertex, table, identity))
    ctx.fault_point("sink.move", vertex)
    _fast_forward(spark, catalog, ref, opts.branch, staging)
    ctx.fault_point("sink.commit", vertex)
    _drop_staging(spark, base.name, (staging,), identity.staging)
    log.info("Iceberg %s: committed table %s to %s (%s, %s)", vertex.ref, table, base.name, action,
             identity.value)
    return Published(Outcome.PUBLISHED, rows=-1)


def discard_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    """Drop the cached rows: nothing was published by an attempt that stops before its fast-forward (a
    staging branch it left is dropped by the next commit of its identity)."""
    if staged.cached is not None:
        with contextlib.suppress(Exception):
            staged.cached.unpersist()


class IcebergSinkVerbs:
    """The Iceberg sink as storage verbs: Iceberg fences (:class:`~...spi.twophase.StoreFenced`); its
    publish writes a branch, then fast-forwards, firing ``sink.move`` between the two itself."""

    moves_in_steps = True
    stage = staticmethod(stage_table)
    publish = staticmethod(publish_table)
    discard = staticmethod(discard_table)

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> StoreFenced:
        return StoreFenced(lambda commit: is_committed(ctx, vertex, commit))
