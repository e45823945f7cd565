"""A Jdbc source table's keys from the database's catalog: its primary key (a dynamic split key) and its
catalog keys (the primary key and the other indexes, as SeaTunnel's Jdbc catalog reads them).

Batched: with the job's memo of the connection's pool (:attr:`..sqlclient.pool.Pool.memo`), the keys of
every table of a schema are read at once and kept for the job: the primary keys by one
``getPrimaryKeys`` of the driver's catalog without a table name, the indexes (on PostgreSQL) by one
query over ``pg_catalog`` giving the rows pgJDBC's ``getIndexInfo`` gives per table; on MySQL and
MariaDB both by one query over ``information_schema.STATISTICS`` (Connector/J wants a table name for
either). A ``table_list`` of a hundred tables of one PostgreSQL schema asks twice, of one MySQL
database once, not three hundred times. Elsewhere the indexes are asked per table (drivers'
``getIndexInfo`` needs a table name: some refuse, some answer nothing). A driver that refuses
``getPrimaryKeys`` without a table name (the Python drivers' catalog; Connector/J where that view
cannot be read), an unqualified PostgreSQL table looked up in every schema, or no memo: the table is
asked on its own, as before.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ...spi.schema import ConstraintKey, TableKeys
from ..sqlclient.dialects import Dialect, as_part
from ..sqlclient.errors import access_errors

#: a column of an index: (name, "ASC" | "DESC")
IndexColumn = tuple[str, str]


@dataclass
class Keys:
    """One table's keys as the catalog lists them."""

    primary: dict[int, str] = field(default_factory=dict)  # key sequence -> column
    primary_name: str | None = None
    #: index name -> (unique, position -> column); the primary key's own index included
    indexes: dict[str, tuple[bool, dict[int, IndexColumn]]] = field(default_factory=dict)

    def table_keys(self) -> TableKeys | None:
        """The catalog keys (None: the table has neither a primary key nor an index)."""
        others = {n: i for n, i in self.indexes.items() if n != self.primary_name}
        if not self.primary and not others:
            return None
        primary = (self.primary_name or "", tuple(self.primary[k] for k in sorted(self.primary))) \
            if self.primary else None
        constraints = tuple(ConstraintKey(index, "UNIQUE_KEY" if unique else "INDEX_KEY",
                                          tuple(cols[k] for k in sorted(cols)))
                            for index, (unique, cols) in sorted(others.items()))
        return TableKeys(primary, constraints)


def _read_primary(result: Any, into: dict[str, Keys], table: str | None) -> None:
    """The rows of a ``getPrimaryKeys`` result set (closes it), by their table (``table`` when one was asked)."""
    try:
        while result.next():
            keys = into.setdefault(table if table is not None else result.getString("TABLE_NAME"), Keys())
            keys.primary[result.getInt("KEY_SEQ")] = result.getString("COLUMN_NAME")
            keys.primary_name = result.getString("PK_NAME")
    finally:
        result.close()


#: an index column as the catalog lists it: (table, index, unique, position, column, "A" | "D" | None)
IndexRow = tuple[str, str | None, bool, int, str | None, str | None]


def _index_rows(result: Any, table: str) -> list[IndexRow]:
    """The rows of one table's ``getIndexInfo`` result set (closes it)."""
    try:
        rows = []
        while result.next():
            rows.append((table, result.getString("INDEX_NAME"),
                         not result.getBoolean("NON_UNIQUE"), result.getInt("ORDINAL_POSITION"),
                         result.getString("COLUMN_NAME"), result.getString("ASC_OR_DESC")))
        return rows
    finally:
        result.close()


def _add_indexes(rows: list[IndexRow], into: dict[str, Keys]) -> None:
    for table, index, unique, position, column, sort in rows:
        if index is None or column is None:
            continue
        order = "DESC" if (sort or "A") == "D" else "ASC"
        into.setdefault(table, Keys()).indexes.setdefault(index, (unique, {}))[1][position] = (column, order)


def _pg_schema_indexes(connection: Any, schema: str) -> list[IndexRow]:
    """Every index column of a PostgreSQL schema's tables, as pgJDBC's ``getIndexInfo`` lists them per
    table (which needs a table name): the column, or the expression of an expression column, without
    surrounding double quotes; the sort only for btree indexes."""
    from ..sqlclient.connection import query

    rows = query(connection, """
        SELECT t.relname, x.relname, ix.indisunique, k.pos + 1,
               trim(both '"' from pg_catalog.pg_get_indexdef(x.oid, k.pos + 1, false)),
               CASE WHEN am.amname = 'btree' THEN
                 CASE WHEN (ix.indoption[k.pos] & 1) = 1 THEN 'D' ELSE 'A' END END
        FROM pg_catalog.pg_index ix
        JOIN pg_catalog.pg_class t ON t.oid = ix.indrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
        JOIN pg_catalog.pg_class x ON x.oid = ix.indexrelid
        JOIN pg_catalog.pg_am am ON am.oid = x.relam
        CROSS JOIN LATERAL pg_catalog.generate_subscripts(ix.indkey, 1) AS k(pos)
        WHERE n.nspname = ?""", (schema,))
    return [(str(t), i, str(u).lower() in ("t", "true"), int(str(p)), c, o) for t, i, u, p, c, o in rows]


#: family -> the index columns of every table of one schema in one query, where the driver's
#: ``getIndexInfo`` needs a table name
SCHEMA_INDEXES = {"postgresql": _pg_schema_indexes}


def _my_schema_keys(connection: Any, catalog: str | None, schema: str | None) -> dict[str, Keys] | None:
    """Every key of a MySQL (MariaDB) database's tables from ONE ``information_schema.STATISTICS``
    query, as Connector/J's ``getPrimaryKeys`` and ``getIndexInfo`` list them per table (both read
    ``SHOW KEYS``, whose rows that view holds): the primary key is the index ``PRIMARY``; None where
    the database has no such view or no database is named (asked per table then)."""
    from ..sqlclient.connection import query

    if catalog is None or schema is not None:
        return None
    try:
        rows = query(connection, "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, COLLATION "
                                 "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?", (catalog,))
    except Exception:  # a MySQL-family database without the view (or not allowed to read it)
        return None
    found: dict[str, Keys] = {}
    indexes: list[IndexRow] = []
    for table, index, non_unique, position, column, sort in rows:
        if table is None or position is None:
            continue
        if index == "PRIMARY" and column is not None:
            keys = found.setdefault(table, Keys())
            keys.primary[int(position)] = column
            keys.primary_name = index
        indexes.append((table, index, str(non_unique).strip() == "0", int(position), column, sort))
    _add_indexes(indexes, found)
    return found


#: family -> every key (primary and indexes) of one schema's tables in one query, where the driver's
#: ``getPrimaryKeys`` needs a table name (MySQL's Connector/J refuses a whole database)
SCHEMA_KEYS = {"mysql": _my_schema_keys}


def _listed(connection: Any, dialect: Dialect, catalog: str | None, schema: str | None, table: str | None,
            indexes: bool) -> tuple[dict[str, Keys], bool]:
    """The keys the catalog lists for ``table`` (None: every table of the schema), by table name, and
    whether the indexes are in: for a whole schema only where :data:`SCHEMA_INDEXES` has a query (the
    drivers' ``getIndexInfo`` needs a table: some refuse, some answer with nothing)."""
    if table is None and indexes and dialect.family in SCHEMA_KEYS:
        whole = SCHEMA_KEYS[dialect.family](connection, catalog, schema)
        if whole is not None:
            return whole, True
    meta = connection.getMetaData()
    found: dict[str, Keys] = {}
    _read_primary(meta.getPrimaryKeys(catalog, schema, table), found, table)
    if not indexes:
        return found, False
    if table is not None:
        _add_indexes(_index_rows(meta.getIndexInfo(catalog, schema, table, False, False), table), found)
        return found, True
    batched = SCHEMA_INDEXES.get(dialect.family)
    if batched is None or schema is None:
        return found, False
    _add_indexes(batched(connection, schema), found)
    return found, True


def _keys_at(connection: Any, dialect: Dialect, catalog: str | None, schema: str | None, table: str,
             indexes: bool, memo: MutableMapping[Any, Any] | None) -> Keys:
    """One table's keys: from its schema's listing in ``memo`` (made on first use; the indexes asked
    per table where the listing has none), else its own calls."""
    if memo is not None and (schema is not None or catalog is not None):
        slot = ("catalog keys", catalog, schema)
        if slot not in memo:
            try:
                memo[slot] = _listed(connection, dialect, catalog, schema, None, True)
            except access_errors():
                memo[slot] = None  # the driver wants a table name: ask per table
        listing: tuple[dict[str, Keys], bool] | None = memo[slot]
        if listing is not None:
            keys = listing[0].get(table) or Keys()
            if indexes and not listing[1]:
                rows = _index_rows(connection.getMetaData().getIndexInfo(catalog, schema, table, False, False), table)
                keys = Keys(dict(keys.primary), keys.primary_name)
                _add_indexes(rows, {table: keys})
            return keys
    return _listed(connection, dialect, catalog, schema, table, indexes)[0].get(table) or Keys()


def _schemas(connection: Any, schema: str | None, dialect: Dialect) -> list[str | None]:
    """The schemas to look a table up in: the path's; for an unqualified PostgreSQL name the current
    schema first (a namesake in another schema would mix its keys in), then any."""
    if schema is not None or dialect.family != "postgresql":
        return dialect.lookups(schema)
    current = connection.getSchema()
    return [current, None] if current else [None]


def _where(connection: Any, parts: list[str], dialect: Dialect, generic_catalog: bool) -> tuple[str | None, ...]:
    """(catalog, schema, table) parts of a path as the catalog calls take them (canonical parts)."""
    mysql = dialect.family == "mysql"
    schema = parts[-2] if len(parts) >= 2 and not mysql else None
    catalog = parts[0] if (mysql and len(parts) >= 2) or (
        generic_catalog and dialect.family == "generic" and dialect.catalogs and len(parts) == 3) else None
    if mysql and catalog is None:  # the URL's database, not a namesake elsewhere
        catalog = as_part(connection.getCatalog()) if connection.getCatalog() else None
    return catalog, schema, parts[-1]


def table_where(connection: Any, parts: list[str], dialect: Dialect) -> tuple[str | None, ...]:
    """(catalog, schema, table) of a table's canonical ``parts`` as the catalog lists them (a MySQL
    table without a database: the URL's)."""
    return _where(connection, parts, dialect, False)


def primary_key(connection: Any, parts: list[str], dialect: Dialect,
                memo: MutableMapping[Any, Any] | None = None) -> str | None:
    """The table's primary key column when it has exactly one (a name the generic dialect leaves
    unquoted is looked up as written, then in upper and lower case)."""
    catalog, schema, table = _where(connection, parts, dialect, True)
    for cat in dialect.lookups(catalog):
        for sch in _schemas(connection, schema, dialect):
            for name in dialect.lookups(table):
                assert name is not None
                keys = _keys_at(connection, dialect, cat, sch, name, False, memo)
                if keys.primary:
                    return next(iter(keys.primary.values())) if len(keys.primary) == 1 else None
    return None


def catalog_keys(connection: Any, parts: list[str], dialect: Dialect,
                 memo: MutableMapping[Any, Any] | None = None) -> TableKeys:
    """The table's catalog keys as SeaTunnel's Jdbc catalog reads them: its primary key (name and
    columns in key order), and each other index as a constraint key (``UNIQUE_KEY`` or
    ``INDEX_KEY``, its columns in index order with their sort)."""
    catalog, schema, table = _where(connection, parts, dialect, False)
    for cat in dialect.lookups(catalog):
        for sch in _schemas(connection, schema, dialect):
            for name in dialect.lookups(table):
                assert name is not None
                found = _keys_at(connection, dialect, cat, sch, name, True, memo).table_keys()
                if found is not None:
                    return found
    return TableKeys()


__all__ = ["Keys", "catalog_keys", "primary_key", "table_where"]
