"""Where a Jdbc sink writes one upstream table: the target table (generated SQL) or the block's
explicit ``query``, and the schema or database its staging and bookkeeping tables live in.

``table`` splits into ``database.schema.table`` before anything is quoted (:func:`..sqlclient.dialects.split_name`:
a part between quotes is one name, a name that cannot be one is a RuntimeConfigError): PostgreSQL
reads ``[database.]schema.table`` (another database than the URL's means a connection to it),
MySQL ``database.table``, SQLite ``[schema.]table`` (``main`` or an attached database), other
databases ``[catalog.][schema.]table`` (each by its dialect's family; Oracle, DB2, Dameng, Xugu and
IRIS write no catalog: ``schema.table``). The parts are kept in
canonical text form; every statement quotes them through the dialect (:meth:`Target.qualified`).
A sink's ``schema`` option (SeaTunnel's catalog option) names the schema whatever ``table`` says
(not on MySQL, which has none); its ``database`` option qualifies a generic-family table as the
dialect does (:func:`_generic_database`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.options import MISSING, lookup
from ...spi.rows import ROW_KIND
from ...spi.schema import TableKeys
from ..sqlclient.connection import Conn, connection_of
from ..sqlclient.dialects import Dialect, NameProblem, single_name, split_name, unquote, url_database, url_with_database
from .options import config_error, sink_options, table_config, text

#: the staged rows' row kind keeps the hidden column's name
KIND_COLUMN = ROW_KIND


@dataclass
class Target:
    """Where a sink writes one table: a table (generated SQL) or an explicit ``query``."""

    conn: Conn
    database: str | None  # names in canonical part form (:func:`..sqlclient.dialects.split_name`)
    schema: str | None
    table: str | None  # None: query mode
    query: str | None
    primary_keys: list[str]
    field_ide: str
    base_conn: Conn | None = None  # the configured URL, when ``database`` switched a PostgreSQL URL

    @property
    def dialect(self) -> Dialect:
        return self.conn.dialect

    @property
    def home(self) -> tuple[str | None, ...]:
        """Where staging and bookkeeping tables live: the target's schema (MySQL: database; other
        databases: catalog and schema)."""
        family = self.dialect.family
        if family == "mysql":
            return (self.database,)
        return (self.schema,) if family in ("postgresql", "sqlite") else (self.database, self.schema)

    def qualified(self, name: str) -> str:
        """The table ``name`` (canonical part form) next to the target, every part quoted by the dialect."""
        return self.dialect.table(*self.home, name)

    @property
    def ident(self) -> str:
        assert self.table is not None
        return self.qualified(self.ide(self.table))

    @property
    def label(self) -> str:
        if self.table is None:
            return "the sink query"
        return ".".join(p for p in (*self.home, self.table) if p)

    def ide(self, name: str) -> str:
        """``field_ide``: names of the created table and its columns as written, upper or lower case."""
        if self.field_ide == "UPPERCASE":
            return name.upper()
        return name.lower() if self.field_ide == "LOWERCASE" else name


def sink_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None,
                keys: TableKeys | None = None) -> dict:
    """The sink's options for one table: ``table``/``database`` default to the table's own
    names, then every top-level string has its table placeholders expanded (``keys``: the table's
    catalog keys, for ``${primary_key}`` and ``${unique_key}``)."""
    raw = dict(config)
    if lookup(raw, "table") is MISSING:
        raw["table"] = "${table_name}"
    if lookup(raw, "database") is MISSING:
        raw["database"] = "${database_name}"
    return table_config(raw, table_key, field_names, keys)


def sink_target(config: Mapping[str, Any]) -> Target:
    """The target of a sink's (per-table) options."""
    conn = connection_of(config)
    dialect = conn.dialect
    o = sink_options(config)
    query = text(o["query"])
    if not query and not o["generate_sink_sql"]:
        raise config_error("query is required when generate_sink_sql is false (set generate_sink_sql = true to "
                           "write the table named by database and table)")
    keys = [str(k).strip() for k in o["primary_keys"] or () if str(k).strip()]
    ide = o["field_ide"]
    if query:
        return Target(conn, None, None, None, query, keys, ide)
    table = text(o["table"])
    if not table:
        raise config_error("table is required (the upstream table has no name to default to)")
    parts = _parts(table, "table", split_name)
    schema = parts[-2] if len(parts) >= 2 else None
    family = dialect.family
    if len(parts) == 3 or (len(parts) == 2 and family == "mysql"):
        database = parts[0]
    elif family == "sqlite":  # one database, the URL's file
        database = None
    elif family == "generic":
        database, schema = _generic_database(dialect, text(o["database"]), parts, schema)
    else:
        given = text(o["database"])
        database = _parts(given, "database", single_name) if given else None
    named = text(o["schema"])  # SeaTunnel's catalog option: the schema, whatever the table names
    if named and family != "mysql":
        schema = _parts(named, "schema", single_name)
    if family == "mysql":
        schema = None
    if family == "generic" and not dialect.catalogs:  # schema.table: the connection's database
        database = None
    base_conn = None
    if family == "postgresql" and database and unquote(database) != url_database(conn.url):
        base_conn, conn = conn, conn.with_url(url_with_database(conn.url, unquote(database)))
    return Target(conn, database, schema, parts[-1], None, keys, ide, base_conn)


def _generic_database(dialect: Dialect, given: str | None, parts: list[str],
                      schema: str | None) -> tuple[str | None, str | None]:
    """(catalog, schema) of a generic-family table of fewer than three ``parts``: the ``database``
    option (``given``) qualifies it as the dialect's SeaTunnel counterpart writes it
    (:attr:`..sqlclient.dialects.Dialect.database_option`): the schema of a one-part table (DB2, SAP HANA,
    Dameng...), the catalog of a two-part one (SQL Server, Vertica, Snowflake); else only the
    table's own parts count."""
    if not given:
        return None, schema
    if dialect.database_option == "schema" and len(parts) == 1:
        return None, _parts(given, "database", single_name)
    if dialect.database_option == "catalog" and len(parts) == 2:
        return _parts(given, "database", single_name), schema
    return None, schema


def _parts(text: str, key: str, parse: Any) -> Any:
    """``parse(text)`` (:func:`..sqlclient.dialects.split_name` or ``single_name``); RuntimeConfigError
    naming ``key``."""
    try:
        return parse(text)
    except NameProblem as e:
        raise config_error(f"{key} {text!r} is not a name: {e}") from None


def target_of(config: Mapping[str, Any], table_key: str, field_names: list[str] | None,
              keys: TableKeys | None = None) -> tuple[dict, Target]:
    """The per-table options of a sink block and their target."""
    options = sink_config(config, table_key, field_names, keys)
    return options, sink_target(options)


def resolve_keys(keys: list[str], columns: list[str]) -> list[str]:
    """``primary_keys`` as the input's column names (exact, else case-insensitive); RuntimeConfigError
    for a key that is not an input field."""
    by_lower = {c.lower(): c for c in columns}
    out = []
    for key in keys:
        match = key if key in columns else by_lower.get(key.lower())
        if match is None and key.strip() in ("${primary_key}", "${unique_key}"):
            raise config_error(f"primary_keys = [\"{key.strip()}\"]: the table has no such key to stand for "
                               "(its source declares none): name the key columns")
        if match is None:
            close = difflib.get_close_matches(key.lower(), list(by_lower), n=1)
            raise config_error(f"primary_keys names '{key}', which is not an input field"
                               + (f"; did you mean '{by_lower[close[0]]}'?" if close else "")
                               + f" (fields: {', '.join(columns)})")
        out.append(match)
    return out


def _where(connection: Any, target: Target) -> tuple[Any, list[str | None], list[str | None], Any]:
    """The metadata, the catalogs and schemas the target's tables are listed under, and the LIKE
    pattern matching exactly a name (:func:`table_exists`, :func:`listed_tables`)."""
    meta = connection.getMetaData()
    if target.dialect.family == "mysql":
        catalogs = [unquote(target.database) if target.database else connection.getCatalog()]
        schemas: list[str | None] = [None]
    else:
        catalogs = target.dialect.lookups(target.database) if target.dialect.family == "generic" else [None]
        schemas = target.dialect.lookups(target.schema) if target.schema else [connection.getSchema()]
    escape = meta.getSearchStringEscape() or ""

    def pattern(text: str | None) -> str | None:  # the metadata's LIKE pattern matching exactly ``text``
        if text is None or not escape:
            return text
        return text.replace(escape, escape * 2).replace("_", escape + "_").replace("%", escape + "%")

    return meta, catalogs, schemas, pattern


def listed_tables(connection: Any, target: Target) -> Listed:
    """Every table next to the target (its schema; MySQL: database), listed once: what
    :func:`table_exists` answers for any name there, without a catalog query per name."""
    meta, catalogs, schemas, pattern = _where(connection, target)
    found: set[tuple[str | None, str]] = set()
    for catalog in catalogs:
        for schema in schemas:
            result = meta.getTables(catalog, pattern(schema), None, None)
            try:
                while result.next():
                    found.add((result.getString("TABLE_SCHEM"), str(result.getString("TABLE_NAME"))))
            finally:
                result.close()
    return Listed(frozenset(found), tuple(schemas))


@dataclass(frozen=True)
class Listed:
    """The (schema, name) of the tables :func:`listed_tables` found, and the schemas it looked in."""

    tables: frozenset[tuple[str | None, str]]
    schemas: tuple[str | None, ...]

    def has(self, target: Target, name: str) -> bool:
        """:func:`table_exists`' answer for the table ``name`` (canonical part form)."""
        return any((schema, candidate) in self.tables or (None, candidate) in self.tables
                   or (schema is None and any(n == candidate for _, n in self.tables))
                   for schema in self.schemas for candidate in target.dialect.lookups(name))


def table_exists(connection: Any, target: Target, name: str) -> bool:
    """Whether the table ``name`` (canonical part form) exists next to the target: in its schema
    (MySQL: database)."""
    meta, catalogs, schemas, pattern = _where(connection, target)
    for catalog in catalogs:
        for schema in schemas:
            for candidate in target.dialect.lookups(name):
                if _listed(meta.getTables(catalog, pattern(schema), pattern(candidate), None), schema, candidate):
                    return True
    return False


def _listed(result: Any, schema: str | None, name: str | None) -> bool:
    """Whether a metadata result set lists the table ``name`` in ``schema`` (closes it)."""
    try:
        while result.next():
            if result.getString("TABLE_NAME") == name and (
                    schema is None or result.getString("TABLE_SCHEM") in (schema, None)):
                return True
    finally:
        result.close()
    return False
