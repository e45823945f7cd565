"""What differs between databases in the SQL the Jdbc connector writes: identifier quoting, the
split hash of a string key, column types of created tables, and what a URL names.

PostgreSQL and MySQL/MariaDB are known; other databases get ANSI SQL (``generic``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dialect:
    """What differs between databases in the SQL this connector writes."""

    name: str  # "postgresql", "mysql" or "generic"
    quote: str  # identifier quote character

    def column(self, name: str) -> str:
        """A column name, quoted (names come from Spark schemas: exact)."""
        return f"{self.quote}{name.replace(self.quote, self.quote * 2)}{self.quote}"

    def part(self, name: str) -> str:
        """A table, schema or database name from the config: quoted where SeaTunnel quotes it."""
        return name if self.name == "generic" else self.column(name)

    def table(self, *parts: str | None) -> str:
        return ".".join(self.part(p) for p in parts if p)

    def hash_mod(self, column: str, buckets: int) -> str:
        """SeaTunnel's ``hashModForField``: the split bucket of a string key."""
        if self.name == "postgresql":
            return f"(ABS(HASHTEXT({self.column(column)}::text)) % {buckets})"
        if self.name == "mysql":
            return f"MOD(ABS(CRC32({self.column(column)})), {buckets})"
        return f"ABS(MD5({self.column(column)}) % {buckets})"

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


def dialect_of(url: str) -> Dialect:
    lowered = url.strip().lower()
    if lowered.startswith(("jdbc:postgresql:", "jdbc:pgsql:")):
        return Dialect("postgresql", '"')
    if lowered.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
        return Dialect("mysql", "`")
    return Dialect("generic", '"')


_PG_URL = re.compile(r"^(jdbc:postgresql://[^/?]*)(?:/([^?]*))?(\?.*)?$", re.I)


def url_database(url: str) -> str | None:
    """The database a PostgreSQL or MySQL URL names (its path), if any."""
    m = re.match(r"^jdbc:(?:postgresql|mysql|mariadb)://[^/?]*/([^?;]*)", url.strip(), re.I)
    return m.group(1) or None if m else None


def url_with_database(url: str, database: str) -> str:
    """A PostgreSQL URL naming ``database`` instead of its own (other URLs unchanged)."""
    m = _PG_URL.match(url.strip())
    if not m:
        return url
    return f"{m.group(1)}/{database}{m.group(3) or ''}"
