"""The column definitions of a schema's tables from ONE catalog query, so that a ``table_list`` of many
tables of few shapes asks the driver for the result columns (``java.sql.ResultSetMetaData``: names,
type codes, scales, type names, precisions) once per shape, not once per table.

A table's signature is what decides its result columns: each column's name and full type as the
catalog stores it, in order: on MySQL and MariaDB ``information_schema.COLUMNS`` (``COLUMN_TYPE``,
which holds the length, precision, scale, ``unsigned`` and ``zerofill``, with the character set and
collation, and ``EXTRA``: an ``INVISIBLE`` column is not in ``SELECT *``), on PostgreSQL
``pg_attribute`` (the type's oid and its modifier). Two tables of one signature give the same
result columns, so the columns learnt of one serve the other. A table the listing does not hold (an
unqualified PostgreSQL name, a view of another schema, a name in another case), a ``query``, and
every other database: asked on their own.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable, MutableMapping, Sequence
from typing import Any

from ..sqlclient.connection import query, query_json
from ..sqlclient.dialects import Dialect
from ..sqlclient.errors import statement_errors
from .catalog import table_where

log = logging.getLogger("seatunnel.jdbc")

#: a table's signature: its columns' definitions in order
Signature = tuple[Hashable, ...]


def signatures(rows: Iterable[Sequence[Any]]) -> dict[str, Signature]:
    """The signature of each table of catalog ``rows`` ``(table, position, *definition)``: its
    columns' definitions ordered by position."""
    by_table: dict[str, list[tuple[int, tuple]]] = {}
    for table, position, *definition in rows:
        by_table.setdefault(str(table), []).append((int(str(position)), tuple(definition)))
    return {table: tuple(d for _, d in sorted(columns)) for table, columns in by_table.items()}


def _listing(connection: Any, packed: str, rows: str, params: tuple) -> dict[str, Signature]:
    """The signatures of a listing: ``packed`` answers it as one JSON cell (:func:`query_json`: one
    round trip for every column of the schema); ``rows`` is the same listing row by row, asked where
    ``packed`` fails (a database without the JSON aggregate, or one that cut the JSON short). Values
    as text either way, NULL as None."""
    failures: tuple[type[BaseException], ...] = (ValueError, *statement_errors())
    try:
        found = query_json(connection, packed, params)
    except failures as e:
        log.info("Jdbc: the column listing row by row (%s)", type(e).__name__)
        return signatures(query(connection, rows, params))
    return signatures([[None if v is None else str(v) for v in row] for row in found])


_MY_COLUMNS = "TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, EXTRA"


def _my_columns(connection: Any, catalog: str | None, schema: str | None) -> dict[str, Signature] | None:
    if catalog is None or schema is not None:
        return None
    where = "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?"
    return _listing(connection, f"SELECT JSON_ARRAYAGG(JSON_ARRAY({_MY_COLUMNS})) {where}",
                    f"SELECT {_MY_COLUMNS} {where}", (catalog,))


_PG_COLUMNS = "c.relname, a.attnum, a.attname, a.atttypid, a.atttypmod"
_PG_WHERE = """FROM pg_catalog.pg_attribute a
        JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ? AND a.attnum > 0 AND NOT a.attisdropped"""


def _pg_columns(connection: Any, catalog: str | None, schema: str | None) -> dict[str, Signature] | None:
    if schema is None:
        return None
    return _listing(connection, f"SELECT json_agg(json_build_array({_PG_COLUMNS})) {_PG_WHERE}",
                    f"SELECT {_PG_COLUMNS} {_PG_WHERE}", (schema,))


#: family -> every table's signature of one schema (catalog, schema) in one query
SCHEMA_COLUMNS = {"mysql": _my_columns, "postgresql": _pg_columns}


def signature(connection: Any, parts: list[str], dialect: Dialect, memo: MutableMapping[Any, Any]) -> Signature | None:
    """The signature of the table of ``parts`` (canonical), from its schema's listing in ``memo`` (made
    on first use); None when unknown (see the module)."""
    lister = SCHEMA_COLUMNS.get(dialect.family)
    if lister is None:
        return None
    catalog, schema, table = table_where(connection, parts, dialect)
    slot = ("columns", catalog, schema)
    if slot not in memo:
        try:
            memo[slot] = lister(connection, *(dialect.lookups(p)[0] for p in (catalog, schema)))
        except Exception:  # a database of the family without that catalog, or not allowed to read it
            memo[slot] = None
    listing: dict[str, Signature] | None = memo[slot]
    if not listing:
        return None
    found = [listing[name] for name in dialect.lookups(table) if name in listing]
    return found[0] if len(found) == 1 else None


__all__ = ["SCHEMA_COLUMNS", "Signature", "signature", "signatures"]
