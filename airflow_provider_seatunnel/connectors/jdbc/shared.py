"""Several tables of the Jdbc sink staged with ONE Spark JDBC write (:class:`...spi.twophase.StagesTogether`,
:class:`...spi.together.StagesShared`).

Tables into one database and schema with one row type, keys and batch size (:func:`stage_key`) share a
staging table: each row carries its table's number in :data:`.statements.TAG_COLUMN`, the commit moves
each table's part (:func:`.statements.staged_source`), and each table's rows are counted in the staging
table with one ``GROUP BY`` (:func:`_write_tagged`). A keyed target keeps the last change per key and
number, unless the source says each table's rows are distinct by columns among the keys
(:func:`_merges_rows`): then every row is staged as given, unshuffled, and the staging's counts are the
tables' own (:func:`stages_every_row`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.rows import added_columns, data_columns, quote
from ...spi.schema import CATALOG_KEYS_METADATA, table_keys
from ...spi.together import TableGroup
from ...spi.twophase import CommitId, Staged
from ..sqlclient.connection import connect, execute, query
from ..sqlclient.errors import reraise, statement_errors
from .options import mask, sink_options
from .savemodes import at_once, save_modes_once_many
from .schemachange import follow_changes
from .sink import (
    SHARED_STAGING,
    _before_write,
    _keyed,
    _last_per_key,
    _raise_if_superseded,
    _staged_rows_of,
    _write_staging,
    add_columns,
    staging_name,
)
from .statements import TAG_COLUMN
from .target import Target, resolve_keys, target_of

log = logging.getLogger("seatunnel.jdbc")


def stage_key(ctx: RunContext, vertex: Vertex, commit: CommitId, df: Any) -> tuple | None:
    """Which tables may share one staging write (:func:`stage_tables`): those into one database and
    schema (URL, login, where the staging lives), with the same row type (names, types and the metadata a
    write may use), keys and batch size. None (the
    table stages alone): a sink ``query``, or columns a schema change adds."""
    if added_columns(df):
        return None
    keys = table_keys(vertex, commit.table, df)
    config, target = target_of(vertex.config, commit.table, data_columns(df), keys)
    if target.table is None or target.query is not None or target.dialect.family not in SHARED_STAGING:
        return None
    conn = target.conn
    return (conn.url, conn.user, tuple(sorted(conn.connection_properties().items())), target.home,
            tuple(target.primary_keys), sink_options(config)["batch_size"],
            tuple((f.name, f.dataType.simpleString(), _kept_metadata(f)) for f in df.schema.fields))


def _kept_metadata(field: Any) -> str:
    """A column's metadata as the staging write may use it (a declared ``varchar(n)``), the table's own
    catalog keys left out."""
    return json.dumps({k: v for k, v in (field.metadata or {}).items() if k != CATALOG_KEYS_METADATA},
                      sort_keys=True, default=str)


def _parts(ctx: RunContext, vertex: Vertex, items: Sequence[tuple[CommitId, int, Any]]) -> list[tuple]:
    """Each table's (commit, token, columns, keys, target), its save modes and added columns applied."""
    parts, prepared = [], []
    for commit, token, df in items:
        columns = data_columns(df)
        keys = table_keys(vertex, commit.table, df)
        config, target = target_of(vertex.config, commit.table, columns, keys)
        prepared.append((target, config, df))
        parts.append((commit, token, columns, keys, target))
    _before_writes(ctx, vertex, prepared)
    return parts


def _before_writes(ctx: RunContext, vertex: Vertex, items: Sequence[tuple[Target, Mapping[str, Any], Any]]) -> None:
    """:func:`_before_write` of several tables: their save modes at once on one connection where
    :func:`.savemodes.at_once` says so, else table by table."""
    batch = [(target, config, df.schema) for target, config, df in items]
    if at_once(batch):
        conn = batch[0][0].conn
        try:
            with connect(ctx.spark, conn) as connection:
                applied = save_modes_once_many(ctx, vertex, connection, batch)
                for target, _, schema in batch if applied else ():
                    follow_changes(vertex, connection, target, schema)
                    add_columns(vertex, connection, target, schema)
        except Exception as e:
            raise reraise(e, f"cannot prepare {len(batch)} tables on {conn.safe_url}", conn) from None
        if applied:
            return
    for target, config, df in items:
        _before_write(ctx, vertex, target, config, df)


def stage_shared(ctx: RunContext, vertex: Vertex, items: Sequence[tuple[CommitId, int, Any]], group: TableGroup,
                 numbers: Sequence[int]) -> list[Staged]:
    """Tables of one :func:`stage_key` staged with ONE Spark JDBC write of their group's DataFrame
    (:class:`...spi.together.StagesShared`): as :func:`stage_tables`, each table's rows numbered in
    :data:`TAG_COLUMN` by its number in the group (the last change per key kept per number)."""
    from pyspark.sql import functions as F

    parts = _parts(ctx, vertex, items)
    first_commit, first_token, columns0, keys0, target0 = parts[0]
    config0, _ = target_of(vertex.config, first_commit.table, columns0, keys0)
    staging = staging_name(first_commit, first_token)
    frame = group.frame
    if len(numbers) < len(group.tables):
        frame = frame.where(F.col(group.tag).isin(*numbers))
    staged, casts = _tagged_staging(frame, group.tag, target0, columns0, vertex.parallelism,
                                    _merges_rows(target0, columns0, group, numbers))
    found = _write_tagged(ctx, vertex, first_commit, first_token, target0, config0, staged, staging, numbers)
    out = []
    for n, (commit, token, columns, keys, target) in zip(numbers, parts, strict=True):
        count = found[n]
        out.append(Staged(commit, token, target.label, count, ((staging, count),),
                          {"staging": staging, "tag": int(n), "columns": columns, "casts": casts,
                           "keys": keys.to_json()}))
    return out


def _merges_rows(target: Target, columns: list[str], group: TableGroup, numbers: Sequence[int]) -> bool:
    """Whether staging the tables ``numbers`` of ``group`` into ``target`` keeps only the last change
    per key: a keyed target, unless each table's rows are distinct by columns among the target's keys
    (:attr:`...spi.together.TableGroup.distinct`), so no two rows share a key and none is merged."""
    if not _keyed(target):
        return False
    by_lower = {c.lower(): c for c in columns}
    keys = set(resolve_keys(target.primary_keys, columns))
    for n in numbers:
        distinct = group.distinct_by(n)
        if not distinct or not all(by_lower.get(c.lower(), c) in keys for c in distinct):
            return True
    return False


def stages_every_row(ctx: RunContext, vertex: Vertex, items: Sequence[tuple[CommitId, int, Any]],
                     group: TableGroup, numbers: Sequence[int]) -> bool:
    """Whether :func:`stage_shared` of these tables stages every row it is given
    (:class:`...spi.together.StagesEveryRow`): no merge by key (:func:`_merges_rows`)."""
    commit, _, df = items[0]
    columns = data_columns(df)
    _, target = target_of(vertex.config, commit.table, columns, table_keys(vertex, commit.table, df))
    return not _merges_rows(target, columns, group, numbers)


def stage_tables(ctx: RunContext, vertex: Vertex, items: Sequence[tuple[CommitId, int, Any]]) -> list[Staged]:
    """Several tables of one :func:`stage_key` staged with ONE Spark JDBC write: each table's save modes
    and added columns first, then their rows, each numbered in :data:`TAG_COLUMN` (the last change per
    key kept per table), into one staging table named after the first table's commit and token (a later
    attempt of that table drops it with its older staging). Each table's rows are counted on their own;
    the commit moves each table's rows from its part (:func:`.statements.staged_source`).

    In BATCH each table's rows are prepared on their own (a source spread by the sink's key needs no
    shuffle); a STREAMING micro-batch's tables (filters of one micro-batch) are numbered first and
    prepared as one DataFrame: one projection and one grouping by number and key, not a plan of each
    per table."""

    parts = _parts(ctx, vertex, items)
    first_commit, first_token, columns0, _, target0 = parts[0]
    config0, _ = target_of(vertex.config, first_commit.table, columns0, parts[0][3])
    staging = staging_name(first_commit, first_token)
    if ctx.batch_id is not None:
        staged, casts0 = _numbered_together(items, target0, columns0, vertex.parallelism)
        casts = [casts0] * len(parts)
    else:
        frames = []
        for tag, ((_, _, columns, _, target), (_, _, df)) in enumerate(zip(parts, items, strict=True)):
            rows, table_casts = _staged_rows_of(df, target, tag)
            # each table's last change per key where its rows are (a source spread by the same key: no shuffle)
            frames.append((_last_per_key(rows, target, columns, vertex.parallelism), table_casts))
        staged = _union([frame for frame, _ in frames]).coalesce(vertex.parallelism)  # the sink's writers
        casts = [table_casts for _, table_casts in frames]
    found = _write_tagged(ctx, vertex, first_commit, first_token, target0, config0, staged, staging,
                          range(len(parts)))
    out = []
    for tag, ((commit, token, columns, keys, target), table_casts) in enumerate(zip(parts, casts, strict=True)):
        rows = found[tag]
        out.append(Staged(commit, token, target.label, rows, ((staging, rows),),
                          {"staging": staging, "tag": tag, "columns": columns, "casts": table_casts,
                           "keys": keys.to_json()}))
    return out


def _union(frames: Sequence[Any]) -> Any:
    union = frames[0]
    for frame in frames[1:]:
        union = union.union(frame)
    return union


def _numbered_together(items: Sequence[tuple[CommitId, int, Any]], target: Target, columns: list[str],
                       parallelism: int) -> tuple[Any, dict[str, str]]:
    """The tables' rows (one row type) numbered by their position in :data:`TAG_COLUMN` (one call into
    Spark's JVM a table), then prepared for the staging as one DataFrame (:func:`_tagged_staging`)."""
    numbered = _union([df.selectExpr("*", f"CAST({n} AS INT) AS {quote(TAG_COLUMN)}")
                       for n, (_, _, df) in enumerate(items)])
    return _tagged_staging(numbered, TAG_COLUMN, target, columns, parallelism, _keyed(target))


def _tagged_staging(frame: Any, tag: str, target: Target, columns: list[str], parallelism: int,
                    merged: bool) -> tuple[Any, dict[str, str]]:
    """Several tables' rows (each row's number in the column ``tag``) as the staging write takes them, in
    ``parallelism`` partitions: with ``merged`` only the last change per number and key; the casts the
    move applies."""
    rows, casts = _staged_rows_of(frame, target, tag, merged)
    if merged:
        return _last_per_key(rows, target, columns, parallelism, tagged=True), casts
    return rows.coalesce(parallelism), casts


def _write_tagged(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, target: Target,
                  config: Mapping[str, Any], staged: Any, staging: str, numbers: Iterable[int]) -> dict[int, int]:
    """ONE staging write of several tables' rows (numbered in :data:`TAG_COLUMN`), then each number's rows
    counted in the staging table (one ``GROUP BY`` over the indexed column), which must add up to the rows
    the write observed. One observed count, not one per table: Spark pays an aggregate per table for
    every row it writes (a group of 50 tables: a tenth of the write's CPU). A newer attempt that took over
    ``commit`` meanwhile makes it Superseded."""

    written = _write_staging(ctx, vertex, commit, token, target, config, staged, staging)
    _index_tags(ctx, target, staging)
    column = target.dialect.column(TAG_COLUMN)
    try:
        with connect(ctx.spark, target.conn) as connection:
            rows = query(connection, f"SELECT {column}, COUNT(*) FROM {target.qualified(staging)} GROUP BY {column}")
    except Exception as e:
        _raise_if_superseded(ctx, vertex, target, commit, token)
        raise reraise(e, f"cannot count the staging table of {target.label}", target.conn) from None
    counted = {int(n if n is not None else -1): int(c or 0) for n, c in rows}  # no number: a mismatch
    wanted = {int(n) for n in numbers}
    if sum(counted.values()) != written or not counted.keys() <= wanted:
        _raise_if_superseded(ctx, vertex, target, commit, token)
        raise RuntimeError(f"{vertex.ref}: the staging table {staging} of {target.label} holds "
                           f"{sum(counted.values())} rows of tables {sorted(counted)}, the write wrote {written} "
                           f"of tables {sorted(wanted)}")
    return {n: counted.get(n, 0) for n in wanted}


def _index_tags(ctx: RunContext, target: Target, staging: str) -> None:
    """An index on the shared staging table's :data:`TAG_COLUMN`: each table's move reads its own part."""
    name = target.dialect.part(f"{staging[:50]}_tag")
    try:
        with connect(ctx.spark, target.conn) as connection:
            execute(connection, f"CREATE INDEX {name} ON {target.qualified(staging)} "
                                f"({target.dialect.column(TAG_COLUMN)})")
    except statement_errors() as e:  # only a faster move is lost
        log.info("Jdbc: no index on the staging table %s: %s", staging, mask(str(e), target.conn.password))
