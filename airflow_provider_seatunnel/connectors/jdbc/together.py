"""The Jdbc source's tables read together (:class:`...spi.together.ReadsTogether`).

Tables of one row type (the same column names, types, precisions and scales, in order) are read as
ONE DataFrame per group of at most :data:`MAX_GROUP`: one Spark JDBC read of a ``UNION ALL`` of the
tables' queries, each branch numbering its rows in :data:`...spi.together.TAG_COLUMN`
(:func:`union_sql`), whose partitions are predicates (:func:`group_predicates`): each split of a
table that splits (the splitters' conditions, as the table's own read has them) is one predicate of
its number, the tables that read in one split share predicates (``<tag> IN (...)``), several per
task. Spark resolves the group's schema once, and a group of many small tables is a few tasks.

The database must skip the branches a predicate excludes, else each task would scan every table:
PostgreSQL does (a branch whose constant number fails the condition is a dummy relation) and
MariaDB from 10.3 (condition pushdown into the derived table's UNION: "Impossible WHERE"), both
checked with EXPLAIN against the real servers; every other database (MySQL included: its pushdown
into a UNION could not be checked here) reads each table on its own (:func:`pruning_verified`), as
does a table whose row type no other table shares.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.rows import with_kind
from ...spi.schema import TableKeys, schema_with_catalog_keys, with_catalog_keys
from ...spi.together import TAG_COLUMN, TableGroup, TablesTogether, TableView
from ..sqlclient.connection import Conn, connect, connection_of, ensure_driver, pool_of, query
from ..sqlclient.dialects import Dialect
from ..sqlclient.errors import reraise
from .catalog import catalog_keys
from .columns import signature as column_signature
from .options import source_options
from .source import (
    SourceTable,
    _base_query,
    _splits,
    as_read,
    bounds_sql,
    needs_bounds,
    over_readers,
    path_parts,
    primary_key_columns,
    read_table,
    source_tables,
    split_key,
)

log = logging.getLogger("seatunnel.jdbc")

#: at most this many tables in one group (one DataFrame, one UNION ALL query)
MAX_GROUP = 64
#: tables that read in one split: at most this many share one predicate (one task)
TABLES_PER_TASK = 16
#: at most this many tables' split bounds asked with one query
BOUNDS_BATCH = 100


def pruning_verified(family: str, product: str, version: str) -> bool:
    """Whether the database skips the ``UNION ALL`` branches a predicate excludes (checked with EXPLAIN):
    PostgreSQL itself, and MariaDB from 10.3 (its version string says ``-MariaDB``, behind MySQL
    Connector/J's ``5.5.5-`` prefix too)."""
    if family == "postgresql":
        return product.strip().lower() == "postgresql"
    if family == "mysql":
        found = re.search(r"(\d+)\.(\d+)(?:\.\d+)*-MariaDB", version)
        return found is not None and (int(found.group(1)), int(found.group(2))) >= (10, 3)
    return False


def row_groups(signatures: Sequence[Hashable], parts: int = 1, most: int = MAX_GROUP) -> list[list[int]]:
    """The positions of the tables sharing one row type (``signatures``), in groups of even sizes, in
    table order: at most ``most`` tables a group, at least ``parts`` groups of a row type while each
    keeps two tables; a table whose row type no other table shares is in no group."""
    by_type: dict[Hashable, list[int]] = {}
    for i, signature in enumerate(signatures):
        by_type.setdefault(signature, []).append(i)
    out = []
    for members in by_type.values():
        if len(members) < 2:
            continue
        count = max(math.ceil(len(members) / most), min(max(1, parts), math.ceil(len(members) / 2)))
        size = math.ceil(len(members) / count)
        out += [members[i:i + size] for i in range(0, len(members), size)]
    return sorted(out)


def union_sql(bases: Sequence[str], tag: str) -> str:
    """One query of every table's ``bases`` (their SELECTs), each row numbered in the column ``tag``
    by its table's position."""
    return " UNION ALL ".join(f"SELECT st_b.*, {i} AS {tag} FROM ({base}) st_b" for i, base in enumerate(bases))


def group_predicates(tag: str, splits: Sequence[Sequence[str] | None], readers: int,
                     per_task: int = TABLES_PER_TASK) -> list[str]:
    """The predicates (one per task) reading a group whose table ``i`` splits by the conditions
    ``splits[i]`` (None or one: it reads in one split): each split of a splitting table is one
    predicate of its number; the other tables share predicates, at most ``per_task`` each and as many
    predicates as ``readers`` when there are tables enough."""
    out = []
    whole = []
    for number, conditions in enumerate(splits):
        if conditions and len(conditions) > 1:
            out += [f"{tag} = {number} AND ({condition})" for condition in conditions]
        elif conditions:
            out.append(f"{tag} = {number} AND ({conditions[0]})")
        else:
            whole.append(number)
    if whole:
        tasks = min(len(whole), max(readers, math.ceil(len(whole) / per_task)))
        size = math.ceil(len(whole) / tasks)
        for i in range(0, len(whole), size):
            numbers = whole[i:i + size]
            out.append(f"{tag} = {numbers[0]}" if len(numbers) == 1 else
                       f"{tag} IN ({', '.join(str(n) for n in numbers)})")
    return out


def _describe(connection: Any, sql: str) -> list[tuple[str, int, int, str, int]]:
    """(name, java.sql.Types code, scale, type name, precision) of each column ``sql`` returns."""
    statement = connection.prepareStatement(f"SELECT * FROM ({sql}) st_jdbc_meta WHERE 1 = 0")
    try:
        meta = statement.executeQuery().getMetaData()
        return [(str(meta.getColumnLabel(i)), int(meta.getColumnType(i)), int(meta.getScale(i)),
                 str(meta.getColumnTypeName(i)).lower(), int(meta.getPrecision(i)))
                for i in range(1, meta.getColumnCount() + 1)]
    finally:
        statement.close()


class _Table:
    """What one table's read needs, learnt on the driver."""

    def __init__(self, spec: SourceTable, base: str, described: list[tuple[str, int, int, str, int]],
                 splits: list[str] | None, keys: Any):
        self.spec, self.base, self.described, self.splits, self.keys = spec, base, described, splits, keys

    @property
    def columns(self) -> list[tuple[str, int, int]]:
        return [(name, code, scale) for name, code, scale, _t, _p in self.described]


def _described(connection: Any, conn: Conn, specs: list[SourceTable], config: Mapping[str, Any],
               memo: Any) -> list[tuple[str, list[tuple[str, int, int, str, int]], tuple[str, int, int] | None]]:
    """Each table's base query, columns and split key (:func:`.source.split_key`); the columns asked
    once per signature (:mod:`.columns`), a table of no known signature on its own."""
    out = []
    seen: dict[Any, list[tuple[str, int, int, str, int]]] = {}
    for spec in specs:
        base = _base_query(spec, config, conn.dialect)
        try:
            shape = column_signature(connection, path_parts(spec.table_path), conn.dialect, memo) \
                if spec.table_path and not spec.query else None
            described = seen.get(shape) if shape is not None else None
            if described is None:
                described = _describe(connection, base)
                if shape is not None:
                    seen[shape] = described
            key = split_key(connection, conn, spec, [(n, c, s) for n, c, s, _t, _p in described], memo)
        except Exception as e:
            raise reraise(e, f"cannot read {spec.table_path or 'the query'} from {conn.safe_url}", conn) from None
        out.append((base, described, key))
    return out


def _bounds(connection: Any, conn: Conn, specs: list[SourceTable], learnt: list[tuple]) -> dict[int, list[str | None]]:
    """The rows, MIN and MAX of the split key of every table the dynamic splitter splits
    (:func:`.source.needs_bounds`), by its position: one query (:func:`.source.bounds_sql`) per
    :data:`BOUNDS_BATCH` tables whose keys are of one type, not one per table."""
    by_type: dict[tuple, list[int]] = {}
    for i, (spec, (_base, described, key)) in enumerate(zip(specs, learnt, strict=True)):
        if needs_bounds(spec, key):
            assert key is not None
            by_type.setdefault(next(d[1:] for d in described if d[0] == key[0]), []).append(i)
    out: dict[int, list[str | None]] = {}
    for positions in by_type.values():
        for start in range(0, len(positions), BOUNDS_BATCH):
            batch = positions[start:start + BOUNDS_BATCH]
            sql = bounds_sql([(learnt[i][0], conn.dialect.column(learnt[i][2][0])) for i in batch])
            try:
                rows = query(connection, sql)
            except Exception as e:
                names = ", ".join(str(specs[i].table_path or specs[i].table_id) for i in batch[:4])
                raise reraise(e, f"cannot read the key bounds of {names}… from {conn.safe_url}", conn) from None
            for row in rows:
                out[batch[int(str(row[0]))]] = row[1:]
    return out


def _learn(spark: Any, conn: Conn, specs: list[SourceTable], config: Mapping[str, Any]) -> tuple[bool, list[_Table]]:
    """Whether the database prunes branches, and each table's columns, splits and catalog keys (one
    borrowed connection for all of them; the catalog keys one listing per schema, the split bounds one
    query per batch of tables: :func:`_bounds`)."""
    memo = pool_of(spark, conn).memo
    out = []
    with connect(spark, conn) as connection:
        meta = connection.getMetaData()
        prunes = pruning_verified(conn.dialect.family, str(meta.getDatabaseProductName()),
                                  str(meta.getDatabaseProductVersion()))
        learnt = _described(connection, conn, specs, config, memo)
        bounds = _bounds(connection, conn, specs, learnt)
        for i, (spec, (base, described, _key)) in enumerate(zip(specs, learnt, strict=True)):
            try:
                columns = [(n, c, s) for n, c, s, _t, _p in described]
                splits = _splits(connection, conn, spec, base, config, columns, memo, bounds.get(i))
                keys = catalog_keys(connection, path_parts(spec.table_path), conn.dialect, memo) \
                    if spec.table_path and not spec.query else None
            except Exception as e:
                raise reraise(e, f"cannot read {spec.table_path or 'the query'} from {conn.safe_url}", conn) from None
            out.append(_Table(spec, base, described, splits, keys))
    return prunes, out


def _group_frame(spark: Any, conn: Conn, tables: list[_Table], config: Mapping[str, Any], readers: int) -> Any:
    """ONE DataFrame of ``tables`` (same row type), numbered in :data:`TAG_COLUMN`, over ``readers``."""
    dialect: Dialect = conn.dialect
    tag = dialect.column(TAG_COLUMN)
    fetch = source_options(config)["fetch_size"]
    options = conn.spark_options(preferTimestampNTZ="true", **({"fetchsize": fetch} if fetch else {}))
    predicates = group_predicates(tag, [t.splits for t in tables], readers)
    props = {k: v for k, v in options.items() if k != "url"}
    source = f"({union_sql([t.base for t in tables], tag)}) st_jdbc_src"
    try:
        df = spark.read.jdbc(conn.spark_url, source, predicates=predicates, properties=props)
    except Exception as e:
        names = ", ".join(str(t.spec.table_path) for t in tables[:4])
        raise reraise(e, f"cannot read the tables {names}… from {conn.safe_url}", conn) from None
    log.info("Jdbc: reading %d tables of one row type from %s with one query in %d task(s)", len(tables),
             conn.safe_url, len(predicates))
    return over_readers(with_kind(as_read(df, dialect, tables[0].columns)), len(predicates), readers)


def _rows(frame: Any, number: int, table: _Table) -> Any:
    """One table's own DataFrame: its rows of the group's, without the number, with its catalog keys."""
    from pyspark.sql import functions as F

    view = frame.where(F.col(TAG_COLUMN) == F.lit(number)).drop(TAG_COLUMN)
    return with_catalog_keys(view, table.keys) if table.keys is not None and not table.keys.empty else view


def _view(frame: Any, schema: Any, number: int, table: _Table) -> TableView:
    """One table of a group: its row type (the group's, with its own catalog keys: built in Python),
    its rows when asked (:func:`_rows`)."""
    keys = table.keys if table.keys is not None else TableKeys()
    return TableView(schema_with_catalog_keys(schema, keys, (TAG_COLUMN,)), partial(_rows, frame, number, table))


def _distinct(table: _Table) -> tuple[str, ...] | None:
    """The columns no two rows of ``table``'s read share: its primary key (the database enforces it)
    when one statement reads the whole table (one snapshot). A table read in splits is a query each:
    a row whose split column changes meanwhile can be read twice (None)."""
    keys = table.keys
    if keys is None or keys.primary_key is None or (table.splits is not None and len(table.splits) > 1):
        return None
    return tuple(keys.primary_key[1])


def read_together(ctx: RunContext, vertex: Vertex, groups: int = 1) -> TablesTogether:
    """The source's tables, those of one row type read together (see the module) in at least ``groups``
    groups (:func:`row_groups`), each of them a :class:`...spi.together.TableView` (its rows a view of
    its group's); the others as :meth:`Jdbc.read` reads them; in the source's order."""
    config = vertex.config
    conn = connection_of(config)
    ensure_driver(ctx.spark, conn, ctx.plan.env, config)
    readers = max(1, int(vertex.parallelism))
    specs = source_tables(config, vertex.output, conn)
    prunes, learnt = _learn(ctx.spark, conn, specs, config) if len(specs) > 1 else (False, [])
    positions = row_groups([tuple(t.described) for t in learnt], groups) if prunes else []
    frames: dict[str, Any] = {}
    found = []
    for members in positions:
        tables = [learnt[i] for i in members]
        frame = _group_frame(ctx.spark, conn, tables, config, readers)
        found.append(TableGroup(frame, tuple(t.spec.table_id for t in tables), distinct=tuple(map(_distinct, tables))))
        schema = frame.schema  # the group's row type, asked once
        for number, table in enumerate(tables):
            frames[table.spec.table_id] = _view(frame, schema, number, table)
    out = {}
    for spec in specs:
        if spec.table_id not in frames:
            df, splits = read_table(ctx.spark, conn, spec, config)
            key = primary_key_columns(df) if splits < readers else ()
            frames[spec.table_id] = over_readers(df, splits, readers, key)
        out[spec.table_id] = frames[spec.table_id]
    return TablesTogether(out, found)
