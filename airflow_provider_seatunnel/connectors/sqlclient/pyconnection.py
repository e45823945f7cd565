"""The driver-side statements of a Jdbc block on a Spark Connect session, where this process has no
JVM: a Python database driver (psycopg for PostgreSQL, PyMySQL for MySQL and MariaDB) behind the
``java.sql.Connection`` calls the connector makes (:func:`.connection.connect` picks it). Spark's
own JDBC reads and writes still run on the server with the block's JDBC driver.

The rules the connector relies on hold as with a JDBC driver: ``?`` parameters, auto-commit on
until ``setAutoCommit(False)`` (turning it back on commits), savepoints, values read as text, the
SQL type of each column (``java.sql.Types`` codes), and the catalog's tables, primary keys and
indexes. A failed statement raises :class:`.errors.StatementError` with its SQLSTATE (MySQL's
error numbers mapped to theirs), so that failures are classified as the JDBC path classifies them.
Other databases have no Python driver here: :func:`python_family` says which ones do.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any
from urllib.parse import parse_qsl, unquote

from .errors import StatementError
from .options import config_error

#: JDBC URL scheme -> the family whose Python driver serves it
_FAMILIES = {"postgresql": "postgresql", "pgsql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}
_DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}
_INSTALL = "pip install 'airflow-provider-seatunnel[jdbc-connect]'"


def python_family(url: str) -> str | None:
    """``postgresql`` or ``mysql`` when a Python driver here serves the JDBC URL, else None."""
    found = re.match(r"\s*jdbc:([a-z0-9]+):", url, re.IGNORECASE)
    return _FAMILIES.get(found.group(1).lower()) if found else None


def parse_url(url: str) -> tuple[str, str, int, str | None, dict[str, str]]:
    """(family, host, port, database, URL parameters) of a single-host JDBC URL of
    :func:`python_family`; a RuntimeConfigError for anything else."""
    family = python_family(url)
    found = re.match(r"\s*jdbc:[a-z0-9]+:(?://([^/?;]*))?/?([^?;]*)(?:[?;](.*))?$", url, re.IGNORECASE | re.DOTALL)
    if family is None or found is None:
        raise config_error("on a Spark Connect session Jdbc reaches only PostgreSQL, MySQL and MariaDB "
                           "(jdbc:postgresql://, jdbc:mysql://, jdbc:mariadb://): run this job with spark-submit")
    hosts, database, query = found.group(1) or "localhost", unquote(found.group(2) or ""), found.group(3) or ""
    if "," in hosts:
        raise config_error("on a Spark Connect session Jdbc reaches one host: a URL listing several runs with "
                           "spark-submit")
    host, _, port = hosts.rpartition(":") if not hosts.endswith("]") else (hosts, "", "")
    if not host:
        host, port = port, ""
    params = dict(parse_qsl(query.replace(";", "&"), keep_blank_values=True))
    return family, host.strip("[]"), int(port) if port.isdigit() else _DEFAULT_PORTS[family], database or None, params


def _pg_kwargs(host: str, port: int, database: str | None, props: Mapping[str, str]) -> dict[str, Any]:
    """psycopg's connection arguments for pgJDBC's properties (unknown ones are pgJDBC's alone)."""
    out: dict[str, Any] = {"host": host, "port": port, "dbname": database or props.get("user") or "postgres"}
    for key, arg in (("user", "user"), ("password", "password"), ("sslmode", "sslmode"),
                     ("sslrootcert", "sslrootcert"), ("sslcert", "sslcert"), ("sslkey", "sslkey"),
                     ("ApplicationName", "application_name"), ("connectTimeout", "connect_timeout")):
        if props.get(key) not in (None, ""):
            out[arg] = props[key]
    if "sslmode" not in out and str(props.get("ssl", "")).lower() == "true":
        out["sslmode"] = "verify-full"  # pgJDBC's ssl=true verifies the server
    if props.get("currentSchema"):
        out["options"] = f"-c search_path={props['currentSchema']}"
    return out


def _my_kwargs(host: str, port: int, database: str | None, props: Mapping[str, str]) -> dict[str, Any]:
    """PyMySQL's connection arguments for Connector/J's and MariaDB Connector/J's properties."""
    out: dict[str, Any] = {"host": host, "port": port, "database": database, "charset": "utf8mb4"}
    if props.get("user"):
        out["user"] = props["user"]
    if props.get("password") is not None:
        out["password"] = props["password"]
    for key, arg in (("connectTimeout", "connect_timeout"), ("socketTimeout", "read_timeout")):
        if str(props.get(key, "")).isdigit() and int(props[key]) > 0:
            out[arg] = max(1, math.ceil(int(props[key]) / 1000))  # milliseconds in JDBC
    mode = str(props.get("sslMode") or props.get("sslmode") or "").upper()
    if mode in ("REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY", "TRUST", "VERIFY-CA", "VERIFY-FULL") or \
            str(props.get("useSSL", "")).lower() == "true":
        out["ssl"] = {"check_hostname": mode in ("VERIFY_IDENTITY", "VERIFY-FULL")}
    return out


def open_connection(url: str, properties: Mapping[str, str]) -> PyConnection:
    """A :class:`PyConnection` (auto-commit on) to the database of ``url`` (its parameters, then
    ``properties``); a :class:`StatementError` when the database cannot be reached."""
    family, host, port, database, params = parse_url(url)
    props = {**params, **properties}
    try:
        if family == "postgresql":
            import psycopg

            raw: Any = psycopg.connect(**_pg_kwargs(host, port, database, props), autocommit=True)
        else:
            import pymysql

            raw = pymysql.connect(**_my_kwargs(host, port, database, props), autocommit=True)
    except ImportError as e:
        raise config_error(f"Jdbc on a Spark Connect session needs the Python driver {e.name}: {_INSTALL}") from None
    except Exception as e:
        raise as_statement_error(e) from None
    return PyConnection(raw, family)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

#: MySQL error numbers -> SQLSTATE where PyMySQL reports none (Connector/J reports these)
_MYSQL_STATES = {1044: "42000", 1045: "28000", 1049: "42000", 1050: "42S01", 1051: "42S02", 1054: "42S22",
                 1062: "23000", 1064: "42000", 1146: "42S02", 1205: "40001", 1213: "40001", 1264: "22003",
                 1292: "22007", 1366: "22007", 1406: "22001", 1452: "23000", 1048: "23000", 1007: "HY000",
                 2002: "08001", 2003: "08001", 2006: "08S01", 2013: "08S01"}


#: what libpq says (without a SQLSTATE) when the server refuses the login
_REFUSED_LOGINS = ("password authentication failed", "no pg_hba.conf entry", "authentication failed for user")


def as_statement_error(error: BaseException) -> StatementError:
    """A Python driver's error as a :class:`StatementError` with its SQLSTATE (connection failures
    without one: ``08001``)."""
    state = getattr(error, "sqlstate", None)
    if state is None and type(error).__module__.startswith("pymysql"):
        code = error.args[0] if error.args and isinstance(error.args[0], int) else None
        state = _MYSQL_STATES.get(code) if code is not None else None
        if state is None and type(error).__name__ == "IntegrityError":
            state = "23000"
    message = str(error)
    if state is None and any(text in message for text in _REFUSED_LOGINS):
        state = "28000"
    if state is None and type(error).__name__ == "OperationalError":
        state = "08001"
    return StatementError(" ".join(message.split()) or type(error).__name__, state)


def _guarded(call: Callable[..., Any], *args: Any) -> Any:
    try:
        return call(*args)
    except StatementError:
        raise
    except Exception as e:
        if type(e).__module__.split(".")[0] in ("psycopg", "pymysql"):
            raise as_statement_error(e) from None
        raise


# ---------------------------------------------------------------------------------------------
# The connection, statements and result sets
# ---------------------------------------------------------------------------------------------

def to_python_placeholders(sql: str) -> str:
    """``?`` parameters (outside quotes) as ``%s``, and every ``%`` doubled (both drivers format with ``%``)."""
    out, quote = [], ""
    for ch in sql:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "?":
            out.append("%s")
            continue
        out.append("%%" if ch == "%" else ch)
    return "".join(out)


class PyConnection:
    """The ``java.sql.Connection`` calls of this connector on a DB-API connection."""

    def __init__(self, raw: Any, family: str) -> None:
        self.raw, self.family = raw, family
        self._autocommit = True
        self._savepoints = 0

    def setAutoCommit(self, on: bool) -> None:
        if on == self._autocommit:
            return
        if on:
            _guarded(self.raw.commit)  # as JDBC: turning auto-commit on commits the open transaction
        if self.family == "postgresql":
            self.raw.autocommit = on
        else:
            _guarded(self.raw.autocommit, on)
        self._autocommit = on

    def getAutoCommit(self) -> bool:
        return self._autocommit

    def isValid(self, _timeout: int) -> bool:
        try:
            self.run("SELECT 1")
            return True
        except StatementError:
            return False

    def commit(self) -> None:
        _guarded(self.raw.commit)

    def rollback(self, savepoint: str | None = None) -> None:
        if savepoint is None:
            _guarded(self.raw.rollback)
        else:
            self.run(f"ROLLBACK TO SAVEPOINT {savepoint}")

    def setSavepoint(self) -> str:
        self._savepoints += 1
        name = f"st_savepoint_{self._savepoints}"
        self.run(f"SAVEPOINT {name}")
        return name

    def getCatalog(self) -> str | None:
        return self.run("SELECT current_database()" if self.family == "postgresql" else "SELECT DATABASE()")[1][0][0]

    def getSchema(self) -> str | None:
        return self.run("SELECT current_schema()")[1][0][0] if self.family == "postgresql" else None

    def getMetaData(self) -> Catalog:
        return Catalog(self)

    def prepareStatement(self, sql: str) -> Statement:
        return Statement(self, sql)

    def close(self) -> None:
        with suppress(Exception):  # closing a broken connection
            self.raw.close()

    def run(self, sql: str, params: tuple = (), limit: int = 0) -> tuple[int, list[tuple], list[tuple]]:
        """(update count, rows, columns as (label, type code, scale)) of one statement."""
        cursor = _guarded(self.raw.cursor)
        try:
            _guarded(cursor.execute, to_python_placeholders(sql) if params else sql, params or None)
            columns = [self._column(d, cursor) for d in cursor.description or ()]
            rows = (list(_guarded(cursor.fetchmany, limit)) if limit else list(_guarded(cursor.fetchall))) \
                if cursor.description else []
            return int(cursor.rowcount if cursor.rowcount is not None else -1), rows, columns
        finally:
            cursor.close()

    def _column(self, d: Any, cursor: Any) -> tuple[str, int, int]:
        """(label, ``java.sql.Types`` code, scale) of a column as pgJDBC and Connector/J report them."""
        if self.family == "postgresql":
            code = _PG_TYPES.get(d.type_code, 2003 if d.type_code in _PG_ARRAYS else 1111)
            if d.type_code in _PG_TIMES:  # fractional digits of the seconds (6 unless declared)
                return d.name, code, int(d.precision if d.precision is not None else 6)
            return d.name, code, int(_PG_SCALES.get(d.type_code, d.scale or 0))
        type_code, size = d[1], int(d[3] or 0)
        code = _MY_TYPES.get(type_code, 1111)
        binary = _binary(cursor, d[0])
        if type_code in (249, 250, 251, 252) and not binary:
            code = -1  # a TEXT column (BLOB on the wire, a character set of its own)
        elif type_code in (15, 253, 254) and binary:
            code = -2 if type_code == 254 else -3  # BINARY, VARBINARY
        elif type_code == 1 and size == 1:
            code = -7  # TINYINT(1): BIT, as the MySQL drivers read it
        return d[0], code, int(d[5] or 0) if type_code in (0, 246) else 0

    def text(self, value: Any) -> str | None:
        """A value as JDBC's ``getString`` gives it."""
        if value is None:
            return None
        if isinstance(value, bool):
            return ("t" if value else "f") if self.family == "postgresql" else ("1" if value else "0")
        if isinstance(value, dt.datetime):
            return value.isoformat(" ")
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).hex()
        return str(value)


def _binary(cursor: Any, name: str) -> bool:
    fields = getattr(getattr(cursor, "_result", None), "fields", None) or ()
    return any(f.name == name and f.charsetnr == 63 for f in fields)


#: PostgreSQL type OIDs -> java.sql.Types, as pgJDBC reports them
_PG_TYPES = {16: -7, 17: -2, 18: 1, 19: 12, 20: -5, 21: 5, 23: 4, 25: 12, 26: -5, 114: 1111, 700: 7, 701: 8,
             1042: 1, 1043: 12, 1082: 91, 1083: 92, 1114: 93, 1184: 93, 1266: 92, 1700: 2, 2950: 1111, 3802: 1111}
#: PostgreSQL: the scale pgJDBC reports for floating point types
_PG_SCALES = {700: 8, 701: 17}
_PG_TIMES = {1083, 1114, 1184, 1266}
_PG_ARRAYS = {1000, 1001, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1115, 1182, 1183, 1185, 1231, 2951}
#: MySQL protocol field types -> java.sql.Types, as Connector/J reports them
_MY_TYPES = {0: 3, 246: 3, 1: -6, 2: 5, 3: 4, 4: 7, 5: 8, 7: 93, 8: -5, 9: 4, 10: 91, 11: 92, 12: 93, 13: 91,
             15: 12, 253: 12, 254: 1, 16: -7, 245: -1, 249: -4, 250: -4, 251: -4, 252: -4}


class Statement:
    """A prepared statement: ``?`` parameters set by index, then run."""

    def __init__(self, connection: PyConnection, sql: str) -> None:
        self.connection, self.sql = connection, sql
        self.params: dict[int, Any] = {}
        self.limit = 0
        self.count = -1

    def setNull(self, index: int, _type: int) -> None:
        self.params[index] = None

    def setBoolean(self, index: int, value: bool) -> None:
        self.params[index] = bool(value)

    def setLong(self, index: int, value: int) -> None:
        self.params[index] = int(value)

    def setString(self, index: int, value: str) -> None:
        self.params[index] = str(value)

    def setMaxRows(self, limit: int) -> None:
        self.limit = int(limit)

    def _params(self) -> tuple:
        return tuple(self.params[i] for i in sorted(self.params))

    def execute(self) -> bool:
        self.count, rows, _ = self.connection.run(self.sql, self._params(), self.limit)
        return bool(rows)

    def getUpdateCount(self) -> int:
        return self.count

    def executeQuery(self) -> Rows:
        _, rows, columns = self.connection.run(self.sql, self._params(), self.limit)
        return Rows(self.connection, [c[0] for c in columns], rows, columns)

    def close(self) -> None:
        pass


class Rows:
    """A result set read in full: ``next`` then values by 1-based index or by column label."""

    def __init__(self, connection: PyConnection, labels: list[str], rows: list[tuple],
                 columns: list[tuple[str, int, int]] | None = None) -> None:
        self.connection, self.rows, self.columns = connection, rows, columns or [(n, 12, 0) for n in labels]
        self.index = {label.upper(): i for i, label in reversed(list(enumerate(labels)))}
        self.at = -1

    def next(self) -> bool:
        self.at += 1
        return self.at < len(self.rows)

    def _value(self, key: int | str) -> Any:
        return self.rows[self.at][key - 1 if isinstance(key, int) else self.index[key.upper()]]

    def getString(self, key: int | str) -> str | None:
        return self.connection.text(self._value(key))

    def getInt(self, key: int | str) -> int:
        value = self._value(key)
        return int(value) if value is not None else 0

    def getBoolean(self, key: int | str) -> bool:
        value = self._value(key)
        return str(value).lower() in ("1", "t", "true") if not isinstance(value, bool) else value

    def getMetaData(self) -> ColumnsMeta:
        return ColumnsMeta(self.columns)

    def close(self) -> None:
        pass


class ColumnsMeta:
    """``ResultSetMetaData``: each column's label, ``java.sql.Types`` code and scale (1-based)."""

    def __init__(self, columns: list[tuple[str, int, int]]) -> None:
        self.columns = columns

    def getColumnCount(self) -> int:
        return len(self.columns)

    def getColumnLabel(self, i: int) -> str:
        return self.columns[i - 1][0]

    def getColumnType(self, i: int) -> int:
        return self.columns[i - 1][1]

    def getScale(self, i: int) -> int:
        return self.columns[i - 1][2]


class Catalog:
    """``DatabaseMetaData``: tables (LIKE patterns, ``\\`` escapes), primary keys and indexes as
    the JDBC drivers list them (MySQL: databases are catalogs, there are no schemas)."""

    def __init__(self, connection: PyConnection) -> None:
        self.connection = connection
        self.pg = connection.family == "postgresql"

    def getSearchStringEscape(self) -> str:
        return "\\"

    def _rows(self, labels: list[str], sql: str, params: list[Any]) -> Rows:
        return Rows(self.connection, labels, self.connection.run(sql, tuple(params))[1])

    def getTables(self, catalog: str | None, schema: str | None, name: str | None, _types: Any) -> Rows:
        if self.pg:
            sql = ("SELECT n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                   "ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')")
            where = [(" AND n.nspname LIKE ?", schema), (" AND c.relname LIKE ?", name)]
        else:
            sql = "SELECT NULL, table_name FROM information_schema.tables WHERE 1 = 1"
            where = [(" AND table_schema = ?", catalog), (" AND table_name LIKE ?", name)]
        params = [v for _, v in where if v is not None]
        return self._rows(["TABLE_SCHEM", "TABLE_NAME"], sql + "".join(c for c, v in where if v is not None), params)

    def _needs(self, table: str | None) -> str:
        """A listing of a whole schema is not offered (the connector then asks table by table)."""
        if table is None:
            raise StatementError("the Python driver's catalog lists the keys of one table at a time", "0A000")
        return table

    def getPrimaryKeys(self, catalog: str | None, schema: str | None, table: str | None) -> Rows:
        table = self._needs(table)
        if self.pg:
            sql = (_PG_INDEX_COLUMNS + " WHERE i.indisprimary AND ct.relname = ?"
                   + (" AND n.nspname = ?" if schema is not None else "") + " ORDER BY k.pos")
            params = [table] + ([schema] if schema is not None else [])
            rows = [(r[1], r[4], r[0]) for r in self.connection.run(sql, tuple(params))[1]]
            return Rows(self.connection, ["COLUMN_NAME", "KEY_SEQ", "PK_NAME"], rows)
        sql = ("SELECT column_name, seq_in_index, index_name FROM information_schema.statistics WHERE "
               "index_name = 'PRIMARY' AND table_name = ? AND table_schema = COALESCE(?, DATABASE()) "
               "ORDER BY seq_in_index")
        return self._rows(["COLUMN_NAME", "KEY_SEQ", "PK_NAME"], sql, [table, catalog])

    def getIndexInfo(self, catalog: str | None, schema: str | None, table: str | None, _unique: bool,
                     _approximate: bool) -> Rows:
        table = self._needs(table)
        labels = ["INDEX_NAME", "COLUMN_NAME", "NON_UNIQUE", "ASC_OR_DESC", "ORDINAL_POSITION"]
        if self.pg:
            sql = _PG_INDEX_COLUMNS + " WHERE ct.relname = ?" + (" AND n.nspname = ?" if schema is not None else "")
            params = [table] + ([schema] if schema is not None else [])
            found = self.connection.run(sql, tuple(params))[1]
            rows = [(r[0], r[1], not r[2], "D" if r[3] else "A", r[4]) for r in found]
            return Rows(self.connection, labels, sorted(rows, key=lambda r: (r[2], r[0], r[4])))
        sql = ("SELECT index_name, column_name, non_unique, collation, seq_in_index FROM information_schema.statistics "
               "WHERE table_name = ? AND table_schema = COALESCE(?, DATABASE()) ORDER BY non_unique, index_name, "
               "seq_in_index")
        return self._rows(labels, sql, [table, catalog])


#: PostgreSQL: (index, column, unique, descending, position in the index) of a table's indexes
_PG_INDEX_COLUMNS = (
    "SELECT ci.relname, a.attname, i.indisunique, (i.indoption[k.pos - 1] & 1) = 1, k.pos "
    "FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ct ON ct.oid = i.indrelid "
    "JOIN pg_catalog.pg_namespace n ON n.oid = ct.relnamespace JOIN pg_catalog.pg_class ci ON ci.oid = i.indexrelid "
    "CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, pos) "
    "LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = ct.oid AND a.attnum = k.attnum AND k.attnum > 0")
