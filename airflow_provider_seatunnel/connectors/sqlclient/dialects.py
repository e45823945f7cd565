"""What differs between databases in the SQL the Jdbc connector writes: identifier quoting, the
upsert, the split hash of a string key, column types of created tables, and what a URL names.

A :class:`Dialect` is one of SeaTunnel's Jdbc dialects; their rules, and which URL and which
``dialect`` option name picks which, are the tables of :mod:`.databases`. PostgreSQL, MySQL/MariaDB
and SQLite are tested against real databases; Oracle, SQL Server, DB2 and the others are SQL
generation only (untested: no such server runs here); a database SeaTunnel has no dialect for
gets ANSI SQL (``generic``). The URL picks the dialect; the block's ``dialect`` option (SeaTunnel's)
overrides it, ``compatible_mode`` refines it; any other name falls back to the URL. Each dialect has
a *family*, the layout of its table names and what this package runs around the data: PostgreSQL's
(PostgreSQL and the databases SeaTunnel gives its dialect, Kingbase, Redshift), MySQL's (MySQL,
OceanBase, StarRocks), SQLite's, or the generic one (every other).

Identifiers. Every table, schema, database and column name the connector writes into SQL goes
through :meth:`Dialect.part` or :meth:`Dialect.column`, so that a name is always exactly one
identifier, whatever characters it holds:

* PostgreSQL, SQLite, Oracle, Dameng, Redshift, Vertica, Xugu, SAP HANA and IRIS quote with ``"``,
  MySQL and OceanBase with a backtick, SQL Server with ``[ ]``, all as written (SeaTunnel's dialects
  do the same), the closing quote character doubled inside the name.
* The generic dialect quotes with ANSI ``"`` (doubled inside). A *plain* name, ASCII letters,
  digits and ``_`` not starting with a digit, is written unquoted instead, as SeaTunnel's generic
  dialect writes every name: the database then folds its case as it folds any unquoted name
  (``orders`` finds ``ORDERS`` on H2), where quoting it would look it up exactly. A plain name is
  one SQL token: it cannot end the statement or start another. The dialects SeaTunnel writes names
  unquoted in (DB2, Kingbase, Snowflake, Teradata, Phoenix; Hive, Gbase 8a and Tablestore with
  backticks) do the same (:attr:`Dialect.folds`).
* Column names come from the data's fields (``field_ide`` applied) and are quoted as written in
  every dialect (Spark creates the staging table's columns that way).

Names with parts. A table name from a config (``table``, ``table_path``) splits on ``.`` into
``database.schema.table`` (at most three parts) before quoting. A part written between double
quotes or backticks is one name, taken exactly (a dot inside stays; the quote character doubled
inside it means itself) and quoted in every dialect, the folding ones too: write ``"ORDER"`` or
``"my.table"`` to name exactly that. Whitespace around an unquoted part is not part of the name.
:func:`split_name` rejects what cannot be a name at all: an empty part, a NUL character, an
unterminated quote, text after a closing quote, more than three parts. A split part is kept in a
canonical text form (quoted parts re-quoted with ``"``) that :meth:`Dialect.part` reads back and
:func:`unquote` turns into the name the database stores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote as url_quote
from urllib.parse import unquote as url_unquote

#: characters that open a quoted name part in a config (any dialect)
NAME_QUOTES = ('"', "`")
#: most parts a table name has: database.schema.table
MAX_PARTS = 3
#: a name the generic dialect leaves unquoted (one SQL token, folded by the database)
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class NameProblem(ValueError):
    """A table, schema or database name that cannot be a name (the message says why)."""


def _quoted_part(text: str, start: int) -> tuple[str, int]:
    """(name, index after the closing quote) of the quoted part opening at ``text[start]``."""
    mark, i, out = text[start], start + 1, []
    while i < len(text):
        if text[i] == mark:
            if text[i + 1:i + 2] == mark:
                out.append(mark)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(text[i])
        i += 1
    raise NameProblem(f"the quote {mark} opened at character {start + 1} is not closed")


def _canonical(name: str, quoted: bool) -> str:
    """The canonical text of one part: a quoted part as ``"name"`` (``"`` doubled), else the name."""
    return '"' + name.replace('"', '""') + '"' if quoted else name


def split_name(text: str, max_parts: int = MAX_PARTS) -> list[str]:
    """The parts of a dotted name (``database.schema.table``) in canonical text form; NameProblem
    for what cannot be a name (see the module docstring)."""
    if "\x00" in text:
        raise NameProblem("it contains a NUL character")
    parts: list[str] = []
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i < len(text) and text[i] in NAME_QUOTES:
            name, i = _quoted_part(text, i)
            end = text.find(".", i)
            end = len(text) if end < 0 else end
            if text[i:end].strip():
                raise NameProblem(f"text follows the closing quote of part {len(parts) + 1}: {text[i:end].strip()!r}")
            part = _canonical(name, True) if name else ""
        else:
            end = text.find(".", i)
            end = len(text) if end < 0 else end
            part = text[i:end].strip()
        if not part:
            raise NameProblem(f"part {len(parts) + 1} is empty")
        parts.append(part)
        if end >= len(text):
            break
        i = end + 1
    if len(parts) > max_parts:
        raise NameProblem(f"it has {len(parts)} parts; at most {max_parts} (database.schema.table)")
    return parts


def single_name(text: str) -> str:
    """One name (a ``database`` option) in canonical form: exactly what is written, or the name
    between its quotes; a dot does not split it."""
    stripped = text.strip()
    if "\x00" in stripped:
        raise NameProblem("it contains a NUL character")
    if not stripped:
        raise NameProblem("it is empty")
    if stripped[0] not in NAME_QUOTES:
        return _canonical(stripped, "." in stripped)
    name, end = _quoted_part(stripped, 0)
    if stripped[end:].strip():
        raise NameProblem(f"text follows the closing quote: {stripped[end:].strip()!r}")
    if not name:
        raise NameProblem("it is empty")
    return _canonical(name, True)


def _read_part(part: str) -> tuple[str, bool]:
    """(name, quoted) of a canonical part (a quoted part names exactly its content)."""
    if part[:1] in NAME_QUOTES:
        try:
            name, end = _quoted_part(part, 0)
        except NameProblem:
            return part, False
        if end == len(part):
            return name, True
    return part, False


def unquote(part: str) -> str:
    """The name a canonical part stands for (without its quotes)."""
    return _read_part(part)[0]


def as_part(name: str) -> str:
    """The canonical part of the exact name ``name`` (quoted when reading it back unquoted would
    change it: a dot, an opening quote, surrounding whitespace)."""
    exact = bool(name) and name[0] not in NAME_QUOTES and "." not in name and name == name.strip()
    return _canonical(name, not exact)


@dataclass(frozen=True)
class Dialect:
    """What differs between databases in the SQL this connector writes (the tables of SeaTunnel's
    dialects: :mod:`.databases`)."""

    name: str  # SeaTunnel's dialect: "postgresql", "mysql", "sqlite", "oracle", "sqlserver", ... or "generic"
    quote: str  # the identifier quote (its opening character)
    #: how names are read and what runs around the data: "postgresql" (schema.table in the URL's
    #: database), "mysql" (database.table), "sqlite" or "generic" ([catalog.][schema.]table)
    family: str = "generic"
    close: str = ""  # the closing quote when it differs (SQL Server's ``]``)
    folds: bool = False  # a plain name is written unquoted (the database folds its case)
    #: the native upsert: "on_conflict", "duplicate_key", "merge", "insert_or_update"; None: none
    #: (delete, then insert)
    upsert: str | None = None
    merge_as: bool = True  # ``AS`` before MERGE's table aliases (Oracle refuses it)
    merge_end: str = ""  # what ends a MERGE (SQL Server: ``;``)
    hash: str | None = "ABS(MD5({col}) % {n})"  # the split hash of a string key; None: none
    catalogs: bool = True  # a table name's database part is written in SQL (Oracle: schema.table only)
    #: what a sink's ``database`` option does in the generic family, as in SeaTunnel's dialect:
    #: "schema" qualifies a one-part ``table`` (DB2, SAP HANA...), "catalog" a two-part one (SQL
    #: Server...), "ignored": only the table's own parts count
    database_option: str = "ignored"
    row_values: bool = True  # ``(a, b) IN (SELECT …)`` works (else ``EXISTS``)
    max_precision: int = 38  # of a created decimal column
    bookkeeping: tuple[str, str] = ("BIGINT", "TIMESTAMP")  # the commit log's bigint and timestamp types
    own_staging: bool = False  # the sink creates the staging table (Spark's types for it would cut data)
    #: statements run after a save mode's CREATE TABLE (``{table}``: the created table), in its transaction
    after_create: tuple[str, ...] = ()
    types: Mapping[str, str | None] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def closing(self) -> str:
        return self.close or self.quote

    def column(self, name: str) -> str:
        """A column name, quoted as written (names come from Spark schemas: exact)."""
        end = self.closing
        return f"{self.quote}{name.replace(end, end * 2)}{end}"

    def bare(self, part: str) -> bool:
        """Whether the canonical ``part`` is written unquoted: only a plain, unquoted name, in a
        dialect that folds names (the generic one, and those SeaTunnel writes names unquoted in)."""
        name, quoted = _read_part(part)
        return self.folds and not quoted and _PLAIN.fullmatch(name) is not None

    def part(self, part: str) -> str:
        """One table, schema or database name (canonical part form) as an identifier: quoted, but for a
        plain name a folding dialect leaves to the database's case folding."""
        return unquote(part) if self.bare(part) else self.column(unquote(part))

    def table(self, *parts: str | None) -> str:
        return ".".join(self.part(p) for p in parts if p)

    def lookups(self, part: str | None) -> list[str | None]:
        """The names a database's metadata may list the canonical ``part`` under: the name, and for a
        name written unquoted (:meth:`bare`) its upper and lower case too (the database folded it)."""
        if part is None:
            return [None]
        name = unquote(part)
        return list(dict.fromkeys([name, name.upper(), name.lower()])) if self.bare(part) else [name]

    def hash_mod(self, column: str, buckets: int) -> str | None:
        """SeaTunnel's ``hashModForField``: the split bucket of a string key (SQLite has no hash
        function: its length and last character decide); None where the dialect has none (IRIS)."""
        return self.hash.format(col=self.column(column), n=buckets) if self.hash else None

    @property
    def upserts_on_conflict(self) -> bool:
        """Whether ``INSERT … ON CONFLICT (key) DO UPDATE SET c = EXCLUDED.c`` upserts (PostgreSQL, SQLite)."""
        return self.upsert == "on_conflict"

    @property
    def json_type(self) -> str | None:
        """The column type of JSON data (maps, rows, arrays), None where it is text."""
        return self.types.get("json")

    @property
    def time_type(self) -> str | None:
        """The column type of a time of day, None where the database has none (Oracle)."""
        return self.types.get("time")

    def sql_type(self, dtype: Any, key: bool = False) -> str | None:
        """The column type a created table gets for a Spark type (SeaTunnel's type converters:
        :data:`.databases.TYPES`); None for a time where the database has no TIME type."""
        from pyspark.sql import types as T

        types = self.types
        if isinstance(dtype, (T.StringType, T.VarcharType, T.CharType, T.NullType)):
            return types["key_string"] if key else types["string"]
        if isinstance(dtype, T.ArrayType) and self.name == "postgresql" and flat(dtype.elementType):
            return f"{self.sql_type(dtype.elementType)}[]"
        if type(dtype).__name__ == "TimeType":
            return self.time_type
        for spark_type, kind in TYPE_KINDS.items():
            if isinstance(dtype, getattr(T, spark_type)):
                return types[kind]
        if isinstance(dtype, T.DecimalType):
            precision, scale = dtype.precision, dtype.scale
            if precision > self.max_precision:  # as SeaTunnel narrows: the integer digits are kept
                scale, precision = max(0, scale - (precision - self.max_precision)), self.max_precision
            return str(types["decimal"]).format(p=precision, s=scale)
        return self.json_type or types["string"]  # maps, rows, arrays as JSON

    def field_type(self, spark_field: Any, key: bool = False) -> str | None:
        """The column type a created table gets for a Spark field: a string the source declared
        ``varchar(n)`` or ``char(n)`` (Spark keeps the declaration in the field's metadata) keeps that
        length where the dialect has a bounded type of that kind (:data:`.databases.TYPES`:
        ``varchar``/``char``, at most ``max_length`` characters), as SeaTunnel keeps the source
        column's length; any other field as :meth:`sql_type`."""
        declared = re.fullmatch(r"\s*(var)?char\((\d+)\)\s*",
                                str((spark_field.metadata or {}).get(CHAR_VARCHAR_KEY) or "").lower())
        if declared:
            kind, length = ("varchar" if declared.group(1) else "char"), int(declared.group(2))
            template = self.types.get(kind)
            if template and 0 < length <= int(self.types.get("max_length") or 0):
                return str(template).format(n=length)
        return self.sql_type(spark_field.dataType, key=key)


#: the field metadata where Spark keeps a column's declared ``char(n)``/``varchar(n)`` type
CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"

#: Spark type class -> the kind of :data:`.databases.TYPES` (strings, times, decimals and JSON aside)
TYPE_KINDS = {"BooleanType": "boolean", "ByteType": "tinyint", "ShortType": "smallint", "IntegerType": "int",
              "LongType": "bigint", "FloatType": "float", "DoubleType": "double", "BinaryType": "bytes",
              "DateType": "date", "TimestampNTZType": "timestamp", "TimestampType": "timestamp_tz"}


def flat(dtype: Any) -> bool:
    """Whether a Spark type is a scalar a PostgreSQL array can hold (no nesting, no time)."""
    from pyspark.sql import types as T

    return not isinstance(dtype, (T.ArrayType, T.MapType, T.StructType, T.NullType)) \
        and type(dtype).__name__ != "TimeType"


#: URL schemes whose path names the database (``jdbc:<scheme>://host:port/database``)
_PG_SCHEMES = "postgresql|opengauss|highgo|kingbase8|redshift"
_PG_URL = re.compile(rf"^(jdbc:(?:{_PG_SCHEMES})://[^/?]*)(?:/([^?]*))?(\?.*)?$", re.I)


def url_database(url: str) -> str | None:
    """The database a PostgreSQL-like or MySQL-like URL names (its path, percent-decoded as the
    drivers do), if any."""
    m = re.match(rf"^jdbc:(?:{_PG_SCHEMES}|mysql|mariadb|oceanbase)://[^/?]*/([^?;]*)", url.strip(), re.I)
    return url_unquote(m.group(1)) or None if m else None


def url_with_database(url: str, database: str) -> str:
    """A PostgreSQL(-like) URL naming the database ``database`` (a name, not canonical text)
    instead of its own, the name percent-encoded so that no character of it can end the path or add
    a URL parameter (other URLs unchanged)."""
    m = _PG_URL.match(url.strip())
    if not m:
        return url
    return f"{m.group(1)}/{url_quote(database, safe='')}{m.group(3) or ''}"
