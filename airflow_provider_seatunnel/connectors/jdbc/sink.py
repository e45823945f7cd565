"""The Jdbc sink's storage verbs (:class:`.verbs.JdbcSinkVerbs`); the engine (``runtime/twophase.py``) runs
the two phases over them, per upstream table:

* the commit log (:class:`JdbcCommitLog`) is ``seatunnel_fences`` and ``seatunnel_commits`` next to
  the target (:mod:`.commit`), created when missing (with the schema or database a creating save
  mode makes; a PostgreSQL database too);
* ``stage``: the save modes once per run (:mod:`.savemodes`), the columns a source's schema change
  added, then ONE Spark JDBC write (``batch_size`` rows per batch) into the attempt's staging table
  ``st_stage_<table>_<hash of run, pipeline, sink, table>_<token>`` next to the target; tables of one
  database, row type and keys share one write and one staging table (:mod:`.shared`);
* ``publish_all``: one database transaction per database for all its tables
  (:func:`.commit.publish_tables`); ``discard``: the staging
  table dropped; a table this run committed already only passes its rows through Spark's ``noop``
  sink (the row counters count them). The write runs at the
vertex's parallelism: the engine hands the sink its rows in that many partitions, and with
``primary_keys`` the rows are grouped by key into that many partitions, where only the last change
per key is kept (UPDATE_BEFORE rows dropped, as SeaTunnel's buffered executor does), ordered as
the rows arrived; rows a source says are distinct by the keys are staged as they come
(:func:`.shared._merges_rows`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from ...spi import RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.fencing import Superseded
from ...spi.rows import ADDED_COLUMN, ROW_KIND, arrival_order, data_columns, quote
from ...spi.schema import table_keys
from ...spi.twophase import CommitId, Staged
from ..sqlclient.connection import connect, ensure_driver, execute, pool_of
from ..sqlclient.dialects import Dialect, flat
from ..sqlclient.errors import reraise
from .bulk import batched
from .bulk import newest_tokens as bulk_newest_tokens
from .bulk import take_tokens as bulk_take_tokens
from .commit import (
    FENCES_TABLE,
    drop_quietly,
    ensure_bookkeeping,
    is_committed,
    newest_token,
    take_token,
)
from .options import sink_options
from .savemodes import (
    container_ready,
    create_container,
    create_database,
    save_mode_once,
)
from .schemachange import follow_changes
from .statements import TAG_COLUMN
from .target import KIND_COLUMN, Target, resolve_keys, table_exists, target_of

log = logging.getLogger("seatunnel.jdbc")
T = TypeVar("T")

STAGING_PREFIX = "st_stage_"
SEQ_COLUMN = "__st_seq"
RANK_COLUMN = "__st_rank"
#: the families whose tables share staging writes (tested against real databases); others stage alone
SHARED_STAGING = ("postgresql", "mysql", "sqlite")


def staging_name(commit: CommitId, token: int) -> str:
    """The staging table of (run, pipeline, sink, table) for the attempt holding ``token``: attempts
    never write into each other's staging; lower case, at most 62 characters."""
    readable = re.sub(r"[^a-z0-9]+", "_", commit.table.split(".")[-1].lower()).strip("_")[:24]
    return f"{STAGING_PREFIX}{readable + '_' if readable else ''}{commit.key[:16]}_{int(token)}"


#: how many older tokens' staging tables an attempt drops (those of attempts that died)
_OLDER_STAGING = 16


def _staged_column(name: str, dtype: Any, dialect: Dialect) -> tuple[Any, str | None]:
    """A data column as staged (JSON text for maps and rows, text for time; MySQL: text for
    timestamps; SQLite: ISO text for dates, times and timestamps) and the cast the move applies to
    turn it back into the target's type (None: none needed)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    column = F.col(quote(name))
    is_array = isinstance(dtype, T.ArrayType)
    if isinstance(dtype, (T.MapType, T.StructType)) or (
            is_array and not (dialect.name == "postgresql" and flat(dtype.elementType))):
        # MySQL converts JSON text on insert (MariaDB has no CAST … AS JSON); PostgreSQL needs the cast
        return F.to_json(column).alias(name), dialect.json_type if dialect.family == "postgresql" else None
    if dialect.family == "sqlite":  # no cast back: SQLite's types are affinities, CAST would make numbers
        if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):  # ISO text, as SQLite's date functions
            return F.date_format(column, "yyyy-MM-dd HH:mm:ss.SSSSSS").alias(name), None
        if isinstance(dtype, T.DateType) or type(dtype).__name__ == "TimeType":
            return column.cast("string").alias(name), None
    if dialect.family == "mysql" and isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        # as text: MySQL Connector/J drops the fraction of a second when MariaDB reports its version
        # with the 5.5.5- prefix; the move casts it back (a TIMESTAMP target reads it in the session's zone)
        return F.date_format(column, "yyyy-MM-dd HH:mm:ss.SSSSSS").alias(name), "DATETIME(6)"
    if type(dtype).__name__ == "TimeType":
        return column.cast("string").alias(name), dialect.time_type  # None: no TIME type (Oracle): text
    if isinstance(dtype, T.NullType):
        return column.cast("string").alias(name), None
    if isinstance(dtype, T.ByteType):
        return column.cast("short").alias(name), None
    if is_array and isinstance(dtype.elementType, T.ByteType):
        return column.cast("array<short>").alias(name), None
    return column, None


def staging_columns(staged: Any, dialect: Dialect) -> list[str] | None:
    """The staging table's column definitions where the sink creates it itself (None: Spark's
    writer creates it), with the types a created target gets. MySQL: Spark's own column types
    would cut data (its ``TEXT`` and ``BLOB`` hold 64 KiB). SQLite: Spark's writer takes the
    driver's error for a table that does not exist yet (no SQLSTATE) for a failure. Oracle and
    Teradata: Spark's types for them hold 255 characters of a string."""
    if dialect.family not in ("mysql", "sqlite") and not dialect.own_staging:
        return None
    return [f"{dialect.column(f.name)} {dialect.sql_type(f.dataType)}" for f in staged.schema.fields]


def staging_frame(df: Any, target: Target, parallelism: int) -> tuple[Any, dict[str, str]]:
    """The rows to stage: data columns as :func:`_staged_column` writes them and the row kind;
    with primary keys only the last change per key, in ``parallelism`` partitions (grouped by
    key). Also the casts the move applies to turn staged text back into the target's types."""
    out, casts = _staged_rows_of(df, target)
    return _last_per_key(out, target, data_columns(df), parallelism), casts


def _keyed(target: Target) -> bool:
    return bool(target.primary_keys) and target.query is None


def _staged_rows_of(df: Any, target: Target, tag: int | str | None = None,
                    merged: bool = True) -> tuple[Any, dict[str, str]]:
    """:func:`staging_frame`'s columns before the rows move (the arrival order numbered where keys
    keep the last change, unless not ``merged``: rows distinct by key); ``tag``: the table's number in
    a shared staging table (:data:`TAG_COLUMN`), or the column of ``df`` holding each row's number."""
    from pyspark.sql import functions as F

    names = [c for c in data_columns(df) if not isinstance(tag, str) or c != tag]
    types = {f.name: f.dataType for f in df.schema.fields}
    exprs, casts = [], {}
    for name in names:
        expr, cast = _staged_column(name, types[name], target.dialect)
        exprs.append(expr)
        if cast:
            casts[name] = cast
    kind = F.col(ROW_KIND) if ROW_KIND in df.columns else F.lit(0)
    # the arrival order is numbered before the rows move: the shuffle by key keeps no order
    order = [arrival_order(df).alias(SEQ_COLUMN)] if merged and _keyed(target) else []
    tagged = [] if tag is None else [(F.col(tag) if isinstance(tag, str) else F.lit(tag)).cast("int").alias(TAG_COLUMN)]
    return df.select(*exprs, kind.cast("short").alias(KIND_COLUMN), *order, *tagged), casts


def _last_per_key(out: Any, target: Target, names: list[str], parallelism: int, tagged: bool = False) -> Any:
    """With primary keys: only the last change per key (per table number too when ``tagged``: several
    tables' rows), UPDATE_BEFORE rows dropped, in ``parallelism`` partitions grouped by key."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not _keyed(target):
        return out
    keys = [F.col(TAG_COLUMN)] if tagged else []
    keys += [F.col(quote(k)) for k in resolve_keys(target.primary_keys, names)]
    window = Window.partitionBy(*keys).orderBy(F.col(SEQ_COLUMN).desc())
    return (out.where(F.col(KIND_COLUMN) != 1)
            .repartition(parallelism, *keys)
            .withColumn(RANK_COLUMN, F.row_number().over(window))
            .where(F.col(RANK_COLUMN) == 1).drop(RANK_COLUMN, SEQ_COLUMN))


def _create_container(connection: Any, target: Target, config: Mapping[str, Any]) -> None:
    """The schema (PostgreSQL) or database (MySQL) a creating schema save mode makes comes first: the
    bookkeeping tables live there."""
    if target.table is not None and sink_options(config)["schema_save_mode"] in _CREATING:
        create_container(connection, target)


_CREATING = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST")


class JdbcCommitLog:
    """The attempt tokens and commit records of one sink's tables, next to each table's target."""

    def __init__(self, ctx: RunContext, vertex: Vertex) -> None:
        self.ctx, self.vertex = ctx, vertex

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        """The next token of ``commit`` and whether the log has its record; the bookkeeping tables
        are created first (a PostgreSQL database a creating save mode names, too)."""
        config, target = target_of(self.vertex.config, commit.table, None)
        return self._guarded(target, config, lambda connection: (
            take_token(connection, target, self.ctx, self.vertex, commit.long_key),
            is_committed(connection, target, commit.long_key)))

    def take_tokens(self, commits: Sequence[CommitId]) -> list[tuple[int, bool]]:
        """:meth:`take_token` of each commit; the commits next to one bookkeeping location of the
        families :func:`.bulk.batched` keeps all in one transaction (:func:`.bulk.take_tokens`)."""
        alone, homes = self._by_home(commits)
        out = {commit: self.take_token(commit) for commit in alone}
        for members in homes.values():
            _, home_config, home = members[0]
            labels = {c.long_key: t.label for c, _, t in members}
            found = self._guarded(home, home_config, partial(bulk_take_tokens, target=home, ctx=self.ctx,
                                                             vertex=self.vertex, labels=labels))
            out.update((c, found[c.long_key]) for c, _, _ in members)
        return [out[c] for c in commits]

    def _guarded(self, target: Target, config: Mapping[str, Any], take: Callable[[Any], T]) -> T:
        """``take`` on a connection to the target's database once its bookkeeping tables are there (its
        PostgreSQL database created first when a creating save mode names one that is missing)."""
        ensure_driver(self.ctx.spark, target.conn, self.ctx.plan.env, config)
        try:
            try:
                return self._take(target, config, take)
            except RuntimeConfigError as e:
                if getattr(e, "sql_state", None) != "3D000" or target.base_conn is None or \
                        sink_options(config)["schema_save_mode"] not in _CREATING:
                    raise
                create_database(self.ctx.spark, target)
                return self._take(target, config, take)
        except Exception as e:
            raise reraise(e, f"cannot prepare {target.label} on {target.conn.safe_url}", target.conn) from None

    def _take(self, target: Target, config: Mapping[str, Any], take: Callable[[Any], T]) -> T:
        pool = pool_of(self.ctx.spark, target.conn)  # the job's facts about this database
        ready = container_ready(target) if sink_options(config)["schema_save_mode"] in _CREATING \
            else ("bookkeeping", target.home, False)
        with connect(self.ctx.spark, target.conn) as connection:
            def prepare() -> None:
                _create_container(connection, target, config)
                ensure_bookkeeping(connection, target)

            pool.once(ready, prepare)  # once per job and schema, not per table; its other tables wait
            return take(connection)

    def newest_token(self, commit: CommitId) -> int:
        _, target = target_of(self.vertex.config, commit.table, None)
        with connect(self.ctx.spark, target.conn) as connection:
            return newest_token(connection, target, commit.long_key)

    def newest_tokens(self, commits: Sequence[CommitId]) -> list[int]:
        """:meth:`newest_token` of each commit, with one query per bookkeeping location where
        :func:`.bulk.batched`."""
        alone, homes = self._by_home(commits)
        out = {commit: self.newest_token(commit) for commit in alone}
        for members in homes.values():
            target = members[0][2]
            with connect(self.ctx.spark, target.conn) as connection:
                found = bulk_newest_tokens(connection, target, [c.long_key for c, _, _ in members])
            out.update((c, found[c.long_key]) for c, _, _ in members)
        return [out[c] for c in commits]

    def _by_home(self, commits: Sequence[CommitId]) -> tuple[list[CommitId], dict[tuple, list[_Member]]]:
        """The commits asked one by one (their target's family is not :func:`.bulk.batched`), and the
        others by where their bookkeeping lives (:func:`_home_key`), each with its sink options and target."""
        alone: list[CommitId] = []
        homes: dict[tuple, list[_Member]] = {}
        for commit in commits:
            config, target = target_of(self.vertex.config, commit.table, None)
            if batched(target):
                homes.setdefault(_home_key(target), []).append((commit, config, target))
            else:
                alone.append(commit)
        return alone, homes


#: a commit of :meth:`JdbcCommitLog._by_home`: the commit, its table's sink options, its target
_Member = tuple[CommitId, Mapping[str, Any], Target]


def _home_key(target: Target) -> tuple:
    """Where a target's bookkeeping lives: its database (URL, login) and its fence table."""
    conn = target.conn
    return (conn.url, conn.user, tuple(sorted(conn.connection_properties().items())), target.qualified(FENCES_TABLE))


def add_columns(vertex: Vertex, connection: Any, target: Target, schema: Any) -> list[str]:
    """Follow a source's schema change: columns marked :data:`...spi.rows.ADDED_COLUMN` that the target
    table lacks are added to it (``ALTER TABLE ... ADD``, nullable, the dialect's type). Unmarked
    columns the table lacks still fail the write: a typo must not grow a table."""
    from ..sqlclient.connection import columns_of

    marked = [f for f in schema.fields if (f.metadata or {}).get(ADDED_COLUMN)]
    if not marked or not table_exists(connection, target, target.ide(target.table or "")):
        return []
    present = {name.lower() for name, _t, _s in columns_of(connection, f"SELECT * FROM {target.ident}")}
    added = []
    for f in marked:
        if target.ide(f.name).lower() in present:
            continue
        sql_type = target.dialect.field_type(f)
        if sql_type is None:
            raise RuntimeConfigError(f"cannot add the column {f.name} to {target.label}: no {target.dialect.family} "
                                     f"type for {f.dataType.simpleString()}")
        execute(connection, f"ALTER TABLE {target.ident} ADD {target.dialect.column(target.ide(f.name))} {sql_type}")
        added.append(f.name)
    if added:
        log.info("Jdbc %s: added the column(s) %s to %s (a schema change of the source)", vertex.ref,
                 ", ".join(added), target.label)
    return added


def _raise_if_superseded(ctx: RunContext, vertex: Vertex, target: Target, commit: CommitId, token: int) -> None:
    """Superseded when a newer attempt took ``commit`` over (and dropped this attempt's staging): asked only
    to explain a failure, so an unanswered question raises nothing."""
    try:
        with connect(ctx.spark, target.conn) as connection:
            newest = newest_token(connection, target, commit.long_key)
    except Exception:
        return
    if newest > token:
        raise Superseded(target.label, token, newest, vertex.ref) from None  # the failure it explains: its cause


def _before_write(ctx: RunContext, vertex: Vertex, target: Target, config: Mapping[str, Any], df: Any) -> None:
    """The save modes (once per run) and the columns a source's schema change added."""
    conn = target.conn
    if target.table is None:
        return
    try:
        with connect(ctx.spark, conn) as connection:
            save_mode_once(ctx, vertex, connection, target, config, df.schema)
            follow_changes(vertex, connection, target, df.schema)
            add_columns(vertex, connection, target, df.schema)
    except Exception as e:
        raise reraise(e, f"cannot prepare {target.label} on {conn.safe_url}", conn) from None


def _write_staging(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, target: Target,
                   config: Mapping[str, Any], staged: Any, staging: str) -> int:
    """ONE Spark JDBC write of ``staged`` into the staging table ``staging`` (created by the sink where
    :func:`staging_columns` says so); the rows it wrote (observed by the write). A newer attempt that took
    over ``commit`` meanwhile makes it Superseded."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    conn = target.conn
    written = Observation(f"staged_{commit.key[:12]}_{token}")
    batch = sink_options(config)["batch_size"]
    columns_sql = staging_columns(staged, target.dialect)
    try:
        if columns_sql is not None:
            with connect(ctx.spark, conn) as connection:
                drop_quietly(connection, target.qualified(staging))
                execute(connection, f"CREATE TABLE {target.qualified(staging)} ({', '.join(columns_sql)})")
        (staged.observe(written, F.count(F.lit(1)).alias("rows")).write.format("jdbc")
         .options(**conn.spark_options(dbtable=target.qualified(staging), batchsize=batch))
         .mode("overwrite" if columns_sql is None else "append").save())
        return int(written.get["rows"])
    except Exception as e:
        _raise_if_superseded(ctx, vertex, target, commit, token)  # its staging dropped mid-write
        raise reraise(e, f"cannot write the staging table of {target.label}", conn) from None


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """One table: the save modes (once per run) and added columns, then one Spark JDBC write into
    the attempt's staging table at ``vertex.parallelism`` (the action that also counts the rows)."""

    columns = data_columns(df)
    keys = table_keys(vertex, commit.table, df)  # ${primary_key}: kept with the staging for the commit
    config, target = target_of(vertex.config, commit.table, columns, keys)
    _before_write(ctx, vertex, target, config, df)
    staging = staging_name(commit, token)
    staged, casts = staging_frame(df, target, vertex.parallelism)
    rows = _write_staging(ctx, vertex, commit, token, target, config, staged, staging)
    return Staged(commit, token, target.label, rows, ((staging, rows),),
                  {"staging": staging, "columns": columns, "casts": casts, "keys": keys.to_json()})
