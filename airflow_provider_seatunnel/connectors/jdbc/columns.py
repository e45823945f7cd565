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

from collections.abc import Hashable, Iterable, MutableMapping, Sequence
from typing import Any

from ..sqlclient.connection import query
from ..sqlclient.dialects import Dialect
from .catalog import table_where

#: a table's signature: its columns' definitions in order
Signature = tuple[Hashable, ...]


def signatures(rows: Iterable[Sequence[Any]]) -> dict[str, Signature]:
    """The signature of each table of catalog ``rows`` ``(table, position, *definition)``: its
    columns' definitions ordered by position."""
    by_table: dict[str, list[tuple[int, tuple]]] = {}
    for table, position, *definition in rows:
        by_table.setdefault(str(table), []).append((int(str(position)), tuple(definition)))
    return {table: tuple(d for _, d in sorted(columns)) for table, columns in by_table.items()}


def _my_columns(connection: Any, catalog: str | None, schema: str | None) -> dict[str, Signature] | None:
    if catalog is None or schema is not None:
        return None
    return signatures(query(connection, "SELECT TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, "
                                        "CHARACTER_SET_NAME, COLLATION_NAME, EXTRA FROM information_schema.COLUMNS "
                                        "WHERE TABLE_SCHEMA = ?", (catalog,)))


def _pg_columns(connection: Any, catalog: str | None, schema: str | None) -> dict[str, Signature] | None:
    if schema is None:
        return None
    return signatures(query(connection, """
        SELECT c.relname, a.attnum, a.attname, a.atttypid, a.atttypmod
        FROM pg_catalog.pg_attribute a
        JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ? AND a.attnum > 0 AND NOT a.attisdropped""", (schema,)))


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
