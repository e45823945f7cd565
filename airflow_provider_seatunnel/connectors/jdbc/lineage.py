"""The tables a Jdbc block reads or writes, as dataset URIs (the :class:`...spi.Lineage` capability).

A table is named as OpenLineage names a database's tables: the namespace ``<scheme>://host:port``
(the scheme Airflow's providers give the database, ``postgres``, ``mysql``, ``mssql``...: the
databases' table, :data:`.databases.DATABASES`; the database's default port when the URL has none;
never the URL's user, password or parameters) and the table's parts: PostgreSQL (and the databases
of its dialect family) ``database.schema.table`` (schema ``public`` when the name has none), MySQL
(and its family) ``database.table``, other databases ``database.schema.table`` (the URL's database
before a name with fewer parts). The URL's database is its path, or the parameter that names it
(SQL Server's and Greenplum's ``databaseName``, Teradata's ``DATABASE``, whose ``DBS_PORT`` is the
port). The URI holds each part as a path segment (``postgres://db:5432/shop/public/orders``), as
Airflow's providers write their assets; the Airflow layer turns it into OpenLineage's namespace and
name.

Which tables: a source's ``table_path`` and each ``table_list`` item's, the tables its ``query``
reads (parsed with sqlglot in the database's dialect); a sink's ``table`` (with ``database``) or the
table its ``query`` inserts into, else, per upstream table, the table the data's table names
(``${table_name}``: :func:`table_assets`). What the options do not name yet (no ``url``: it comes
from an Airflow connection when the task runs; a template or variable left in a name) is an
:class:`...spi.Unnamed`; so is a query sqlglot cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ...spi import UNRENDERED, Unnamed
from ...spi.options import lookup, option
from ..sqlclient.databases import DATABASES, DIALECTS
from ..sqlclient.dialects import NameProblem, single_name, split_name, unquote, url_database
from .options import text

#: JDBC subprotocol -> the scheme of the dataset URI (Airflow's providers' and OpenLineage's)
_SCHEMES = {prefix.split(":")[1]: db.scheme for db in reversed(DATABASES) for prefix in db.prefixes}
#: scheme -> the port a URL without one means
_PORTS = {db.scheme: db.port for db in reversed(DATABASES) if db.port}
#: scheme -> the sqlglot dialect a query in the database's own SQL is read with
_SQL_DIALECTS = {db.scheme: db.sqlglot for db in reversed(DATABASES) if db.sqlglot}
#: scheme -> the family of its dialect (how its table names read)
_FAMILIES = {db.scheme: DIALECTS[db.dialect].family for db in reversed(DATABASES)}
#: ``jdbc:<subprotocol>:`` (Oracle's ``thin:@``, Greenplum's ``greenplum:``, Phoenix's ``thin:url=http:``,
#: Tablestore's ``https:``) ``//host:port/path``
_URL = re.compile(r"jdbc:([a-z0-9-]+):(?:[a-z]+:@|greenplum:|thin:url=[a-z]+:|https?:)?(?://)?([^/;?]*)/?([^;?]*)",
                  re.I)
_DATABASE_PARAMETER = re.compile(r";\s*(?:databaseName|database)\s*=\s*([^;]*)", re.I)


def assets(options: Mapping[str, Any]) -> list[str | Unnamed]:
    """The dataset URIs of the tables the block reads or writes (see the module docstring)."""
    where = _datasource(options)
    if isinstance(where, Unnamed):
        return [where]
    out: list[str | Unnamed] = []
    for parts in _tables(options, where[0], where[2]):
        found = parts if isinstance(parts, Unnamed) else _uri(where, parts)
        if found not in out:
            out.append(found)
    return out


def table_assets(options: Mapping[str, Any], table: str) -> list[str | Unnamed]:
    """What a sink writes for the upstream table ``table``: its options for that table (``table``
    and ``database`` default to the table's own names, placeholders expanded)."""
    from .target import sink_config

    return assets(sink_config(options, table, None))


def _datasource(options: Mapping[str, Any]) -> tuple[str, str, str | None] | Unnamed:
    """(scheme, host:port, the URL's database) of the block's ``url``."""
    url = text(option(options, "url"))
    if not url:
        conn_id = text(option(options, "jdbc_conn_id"))
        return Unnamed(f"the URL of the Airflow connection {conn_id!r}" if conn_id
                       else "the URL of the task's Airflow connection (jdbc_conn_id)")
    if UNRENDERED.search(url):
        return Unnamed("a url still templated")
    found = _URL.match(url)
    if not found or not found.group(2):
        return Unnamed("a url without a host", at_run_time=False)
    kind, authority, path = found.groups()
    scheme = _SCHEMES.get(kind.lower(), kind.lower())
    host = authority.rsplit("@", 1)[-1].split(",")[0]  # never credentials; the first of several hosts
    database, port = _path_database(scheme, path, url)
    if not re.search(r":\d+$", host) and (port or scheme in _PORTS):
        host = f"{host}:{port or _PORTS[scheme]}"
    return scheme, host.lower(), database


def _path_database(scheme: str, path: str, url: str) -> tuple[str | None, str | None]:
    """(the database, the port) a URL's path or parameters name: Teradata's ``DATABASE=…,DBS_PORT=…``
    path, Informix's ``database:INFORMIXSERVER=…``, SQL Server's and Greenplum's ``;databaseName=…``,
    else the path (percent-decoded where the driver decodes it)."""
    if scheme == "teradata":
        params = dict(p.split("=", 1) for p in path.split(",") if "=" in p)
        params = {k.strip().upper(): v.strip() for k, v in params.items()}
        return params.get("DATABASE") or None, params.get("DBS_PORT") or None
    if scheme == "informix":
        return path.split(":")[0] or None, None
    named = _DATABASE_PARAMETER.search(url)
    return url_database(url) or path or (named.group(1).strip() if named else None) or None, None


def _uri(where: tuple[str, str, str | None], parts: list[str]) -> str:
    scheme, host, _ = where
    return f"{scheme}://{host}/" + "/".join(quote(p, safe="") for p in parts)


def _tables(options: Mapping[str, Any], scheme: str, database: str | None) -> list[list[str] | Unnamed]:
    """The qualified names (exact parts) of the tables the block reads or writes (``database``:
    the URL's)."""
    items = lookup(options, "table_list")
    blocks = [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) and items else [options]
    out: list[list[str] | Unnamed] = []
    for block in blocks:
        for key in ("table_path", "query"):
            name = text(option(block, key))
            if name:
                out += _names(name, key, scheme, database)
    table = text(option(options, "table"))
    if table:
        given = text(option(options, "database"))
        out += _names(table, "table", scheme, database, given)
    elif not out:  # a sink whose tables the data names (``table`` defaults to ``${table_name}``)
        out.append(Unnamed("the tables the data names (${table_name})"))
    return out


def _names(text: str, key: str, scheme: str, database: str | None,
           given_database: str | None = None) -> list[list[str] | Unnamed]:
    """The tables ``text`` (a table name, or a query for ``key`` ``query``) names, qualified."""
    if UNRENDERED.search(text) or (given_database and UNRENDERED.search(given_database)):
        return [Unnamed(f"{key} {text!r}")]
    if key == "query":
        tables = _query_tables(text, scheme)
        if tables is None:
            return [Unnamed(f"the tables of the query {text[:60]!r}", at_run_time=False)]
    else:
        try:
            tables = [[unquote(p) for p in split_name(text)]]
        except NameProblem:
            return [Unnamed(f"{key} {text!r}", at_run_time=False)]
    if given_database:
        try:
            given_database = unquote(single_name(given_database))
        except NameProblem:
            given_database = None
    return [_qualified(t, scheme, database, given_database, sink=key == "table") for t in tables]


def _qualified(parts: list[str], scheme: str, database: str | None, given: str | None, sink: bool) -> list[str]:
    """``parts`` of a table name as the dataset's name: PostgreSQL database.schema.table, MySQL
    database.table, other databases the URL's database before a name of fewer than three parts. A sink's
    ``database`` (``given``) names the database of a name without one."""
    family = _FAMILIES.get(scheme)
    if family == "postgresql":
        if len(parts) == 3:
            return parts
        schema = parts[0] if len(parts) == 2 else "public"
        return [p for p in ((given if sink and given else database), schema, parts[-1]) if p]
    if family == "mysql":
        return parts if len(parts) >= 2 else [p for p in ((given if sink else None) or database, parts[0]) if p]
    return [database, *parts] if len(parts) < 3 and database else parts


def _query_tables(query: str, scheme: str) -> list[list[str]] | None:
    """The tables a query reads (a SELECT) or writes (an INSERT, its target only), CTE names
    excluded; None when sqlglot cannot read it."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        tree = sqlglot.parse_one(query, read=_SQL_DIALECTS.get(scheme))
    except (SqlglotError, RecursionError):  # a query nested too deep for the parser: no lineage
        return None
    if isinstance(tree, exp.Insert):
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        tables = [target] if isinstance(target, exp.Table) else []
    else:
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        tables = [t for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes]
    out: list[list[str]] = []
    for t in tables:
        parts = [p.name for p in t.parts]
        if parts and parts not in out:
            out.append(parts)
    return out
