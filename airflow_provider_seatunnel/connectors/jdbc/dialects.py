"""What differs between databases in the SQL the Jdbc connector writes: identifier quoting, the
split hash of a string key, column types of created tables, and what a URL names.

PostgreSQL, MySQL/MariaDB and SQLite are known; other databases get ANSI SQL (``generic``). The URL
picks the dialect; the block's ``dialect`` option (SeaTunnel's) overrides it: ``postgres``/``postgresql``,
``mysql``/``mariadb``, ``sqlite`` or ``generic``, case-insensitive; any other name falls back to the URL.

Identifiers. Every table, schema, database and column name the connector writes into SQL goes
through :meth:`Dialect.part` or :meth:`Dialect.column`, so that a name is always exactly one
identifier, whatever characters it holds:

* PostgreSQL and SQLite quote with ``"``, MySQL with a backtick, all as written (SeaTunnel's dialects do
  the same), the quote character doubled inside the name.
* The generic dialect quotes with ANSI ``"`` (doubled inside). A *plain* name, ASCII letters,
  digits and ``_`` not starting with a digit, is written unquoted instead, as SeaTunnel's generic
  dialect writes every name: the database then folds its case as it folds any unquoted name
  (``orders`` finds ``ORDERS`` on Oracle, DB2, H2), where quoting it would look it up exactly. A
  plain name is one SQL token: it cannot end the statement or start another.
* Column names come from the data's fields (``field_ide`` applied) and are quoted as written in
  every dialect (Spark creates the staging table's columns that way).

Names with parts. A table name from a config (``table``, ``table_path``) splits on ``.`` into
``database.schema.table`` (at most three parts) before quoting. A part written between double
quotes or backticks is one name, taken exactly (a dot inside stays; the quote character doubled
inside it means itself) and quoted in every dialect, the generic one too: write ``"ORDER"`` or
``"my.table"`` to name exactly that. Whitespace around an unquoted part is not part of the name.
:func:`split_name` rejects what cannot be a name at all: an empty part, a NUL character, an
unterminated quote, text after a closing quote, more than three parts. A split part is kept in a
canonical text form (quoted parts re-quoted with ``"``) that :meth:`Dialect.part` reads back and
:func:`unquote` turns into the name the database stores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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
    """What differs between databases in the SQL this connector writes."""

    name: str  # "postgresql", "mysql", "sqlite" or "generic"
    quote: str  # identifier quote character

    def column(self, name: str) -> str:
        """A column name, quoted as written (names come from Spark schemas: exact)."""
        return f"{self.quote}{name.replace(self.quote, self.quote * 2)}{self.quote}"

    def bare(self, part: str) -> bool:
        """Whether the canonical ``part`` is written unquoted: only a plain, unquoted name, generic only."""
        name, quoted = _read_part(part)
        return self.name == "generic" and not quoted and _PLAIN.fullmatch(name) is not None

    def part(self, part: str) -> str:
        """One table, schema or database name (canonical part form) as an identifier: quoted, but for a
        plain name the generic dialect leaves to the database's case folding."""
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

    def hash_mod(self, column: str, buckets: int) -> str:
        """SeaTunnel's ``hashModForField``: the split bucket of a string key. SQLite has no hash
        function: its length and last character decide."""
        if self.name == "postgresql":
            return f"(ABS(HASHTEXT({self.column(column)}::text)) % {buckets})"
        if self.name == "mysql":
            return f"MOD(ABS(CRC32({self.column(column)})), {buckets})"
        if self.name == "sqlite":
            col = self.column(column)
            return f"((LENGTH({col}) + COALESCE(UNICODE(SUBSTR({col}, -1, 1)), 0)) % {buckets})"
        return f"ABS(MD5({self.column(column)}) % {buckets})"

    @property
    def upserts_on_conflict(self) -> bool:
        """Whether ``INSERT … ON CONFLICT (key) DO UPDATE SET c = EXCLUDED.c`` upserts (PostgreSQL, SQLite)."""
        return self.name in ("postgresql", "sqlite")

    @property
    def json_type(self) -> str | None:
        return {"postgresql": "JSONB", "mysql": "JSON"}.get(self.name)

    def sql_type(self, dtype: Any, key: bool = False) -> str:
        """The column type a created table gets for a Spark type (SeaTunnel's type converters)."""
        from pyspark.sql import types as T

        pg, my = self.name == "postgresql", self.name == "mysql"
        if isinstance(dtype, (T.StringType, T.VarcharType, T.CharType, T.NullType)):
            return "VARCHAR(255)" if key and not pg else ("LONGTEXT" if my else "TEXT")
        if isinstance(dtype, T.ArrayType) and pg and flat(dtype.elementType):
            return self.sql_type(dtype.elementType) + "[]"
        if type(dtype).__name__ == "TimeType":
            return "TIME(6)" if my else "TIME"
        for spark_type, (pg_type, my_type, other) in _SIMPLE_TYPES.items():
            if isinstance(dtype, getattr(T, spark_type)):
                return pg_type if pg else my_type if my else other
        if isinstance(dtype, T.DecimalType):
            return f"{'NUMERIC' if pg else 'DECIMAL'}({dtype.precision},{dtype.scale})"
        return self.json_type or "TEXT"  # maps, rows, arrays as JSON


#: Spark type class -> (PostgreSQL, MySQL, other databases) column type
_SIMPLE_TYPES = {
    "BooleanType": ("BOOLEAN", "BOOLEAN", "BOOLEAN"),
    "ByteType": ("SMALLINT", "TINYINT", "SMALLINT"),
    "ShortType": ("SMALLINT", "SMALLINT", "SMALLINT"),
    "IntegerType": ("INTEGER", "INTEGER", "INTEGER"),
    "LongType": ("BIGINT", "BIGINT", "BIGINT"),
    "FloatType": ("REAL", "FLOAT", "FLOAT"),
    "DoubleType": ("DOUBLE PRECISION", "DOUBLE", "DOUBLE PRECISION"),
    "BinaryType": ("BYTEA", "LONGBLOB", "BLOB"),
    "DateType": ("DATE", "DATE", "DATE"),
    "TimestampNTZType": ("TIMESTAMP", "DATETIME(6)", "TIMESTAMP"),
    "TimestampType": ("TIMESTAMPTZ", "TIMESTAMP(6)", "TIMESTAMP WITH TIME ZONE"),
}


def flat(dtype: Any) -> bool:
    """Whether a Spark type is a scalar a PostgreSQL array can hold (no nesting, no time)."""
    from pyspark.sql import types as T

    return not isinstance(dtype, (T.ArrayType, T.MapType, T.StructType, T.NullType)) \
        and type(dtype).__name__ != "TimeType"


#: the ``dialect`` option's names (SeaTunnel's dialect names, case-insensitive) this package has
_NAMED = {"postgres": "postgresql", "postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql",
          "sqlite": "sqlite", "generic": "generic"}
_DIALECTS = {"postgresql": Dialect("postgresql", '"'), "mysql": Dialect("mysql", "`"),
             "sqlite": Dialect("sqlite", '"'), "generic": Dialect("generic", '"')}


def dialect_of(url: str, name: str | None = None) -> Dialect:
    """The dialect ``name`` selects (see :data:`_NAMED`), else the one of the URL's database."""
    named = _NAMED.get((name or "").strip().lower())
    if named:
        return _DIALECTS[named]
    lowered = url.strip().lower()
    if lowered.startswith(("jdbc:postgresql:", "jdbc:pgsql:")):
        return _DIALECTS["postgresql"]
    if lowered.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
        return _DIALECTS["mysql"]
    if lowered.startswith("jdbc:sqlite:"):
        return _DIALECTS["sqlite"]
    return _DIALECTS["generic"]


_PG_URL = re.compile(r"^(jdbc:postgresql://[^/?]*)(?:/([^?]*))?(\?.*)?$", re.I)


def url_database(url: str) -> str | None:
    """The database a PostgreSQL or MySQL URL names (its path, percent-decoded as the drivers do), if any."""
    m = re.match(r"^jdbc:(?:postgresql|mysql|mariadb)://[^/?]*/([^?;]*)", url.strip(), re.I)
    return url_unquote(m.group(1)) or None if m else None


def url_with_database(url: str, database: str) -> str:
    """A PostgreSQL URL naming the database ``database`` (a name, not canonical text) instead of its
    own, the name percent-encoded so that no character of it can end the path or add a URL parameter
    (other URLs unchanged)."""
    m = _PG_URL.match(url.strip())
    if not m:
        return url
    return f"{m.group(1)}/{url_quote(database, safe='')}{m.group(3) or ''}"
