"""The Jdbc source: ``query``, ``table_path`` or each ``table_list`` item as one table, split as
SeaTunnel's splitters decide, read by as many readers as the plan's parallelism gives the vertex.

Splits:

* ``query`` with ``partition_column``: the fixed splitter, ``partition_num`` (default 10)
  splits. Numeric keys: ranges between ``partition_lower_bound`` and ``partition_upper_bound``
  (both set, else the key's min and max are queried); rows outside the bounds and null keys
  are not read, as in SeaTunnel. String keys: one hash-mod bucket per split.
* otherwise the dynamic splitter: the key is ``partition_column``, else the table's
  one-column primary key; ``ceil(rows / split.size)`` splits (numeric keys: even ranges
  between min and max, string keys: hash buckets; null keys go to the first split). No key,
  or a ``query`` without ``partition_column``: one split.

Tables: a ``table_path`` splits into ``database.schema.table`` before quoting
(:func:`..sqlclient.dialects.split_name`; a quoted part is one name) and every part is quoted by the dialect:
PostgreSQL (and its family) reads ``schema.table`` of the URL's database, MySQL ``database.table``,
Oracle, DB2, Dameng, Xugu and IRIS ``schema.table``, other databases every part given. A string
key's hash bucket is the dialect's split hash (:meth:`..sqlclient.dialects.Dialect.hash_mod`). The table id
joins the canonical parts, the URL's database filling in.

Readers: the splits are distributed over ``vertex.parallelism`` readers, one Spark partition each
(more splits than readers: a reader reads several, without a shuffle; fewer: the rows are spread
over every reader). Columns keep the database's names; types are Spark's JDBC mapping
(``timestamp`` without time zone is ``timestamp``, with time zone ``timestamp_tz``; ``time``
columns become ``time``).
"""

from __future__ import annotations

import difflib
import logging
import math
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ...spi.rows import ROW_KIND, kind_literal, quote, with_kind
from ...spi.schema import catalog_keys_of, with_catalog_keys
from ..sqlclient.connection import Conn, columns_of, connect, pool_of, query
from ..sqlclient.dialects import Dialect, NameProblem, as_part, split_name, url_database
from ..sqlclient.errors import reraise
from .catalog import catalog_keys, primary_key
from .options import DEFAULT_PARTITION_NUM, config_error, source_options, text, to_decimal
from .params import OPTION as PARAMS
from .params import bind_query

log = logging.getLogger("seatunnel.jdbc")

# java.sql.Types
_INTEGER_TYPES = {-6, 5, 4, -5}  # TINYINT, SMALLINT, INTEGER, BIGINT
_DECIMAL_TYPES = {2, 3}  # NUMERIC, DECIMAL
_FLOAT_TYPES = {6, 7, 8}  # FLOAT, REAL, DOUBLE
_STRING_TYPES = {1, 12, -1, -15, -9, -16}  # CHAR, VARCHAR, LONGVARCHAR, NCHAR, NVARCHAR, LONGNVARCHAR
_TIME_TYPES = {92, 2013}  # TIME, TIME_WITH_TIMEZONE


@dataclass
class SourceTable:
    """One table the source reads: a query or a table path, and how it is split."""

    table_id: str
    query: str | None
    table_path: str | None
    partition_column: str | None
    partition_num: int | None
    lower: Decimal | None
    upper: Decimal | None


def source_tables(config: Mapping[str, Any], output: str | None, conn: Conn) -> list[SourceTable]:
    """The tables of a source block: its ``table_list`` items, else the block itself."""
    o = source_options(config)
    items = o["table_list"]
    if items is not None:
        if text(o["table_path"]) or text(o["query"]):
            raise config_error("Please configure either table_list or table_path/query, not both")
        if not isinstance(items, list) or not items or not all(isinstance(i, Mapping) for i in items):
            raise config_error("table_list must be a non-empty list of {table_path, query, partition_*} blocks")
    else:
        items = [config]
    tables = [_source_table(item, i, len(items), output, conn) for i, item in enumerate(items)]
    ids = [t.table_id for t in tables]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise config_error(f"table_list names a table twice: {', '.join(twice)}")
    return tables


def _source_table(item: Mapping[str, Any], index: int, items: int, output: str | None, conn: Conn) -> SourceTable:
    o = source_options(item)
    sql, path = text(o["query"]), text(o["table_path"])
    if not sql and not path:
        raise config_error("one of query, table_path or table_list is required")
    if o[PARAMS] is not None:
        if not sql:
            raise config_error(f"{PARAMS} needs a query with ? placeholders")
        sql = bind_query(sql, o[PARAMS], conn.dialect)
    if path:
        table_id = _table_id(path, conn)
    elif items > 1:
        table_id = f"{output or 'default'}_{index}"
    else:
        table_id = output or "default"
    bounds = []
    for key in ("partition_lower_bound", "partition_upper_bound"):
        raw = o[key]
        value = to_decimal(raw)
        if raw is not None and value is None:
            raise config_error(f"{key} must be a number, found {raw!r}")
        bounds.append(value)
    return SourceTable(table_id, sql, path, text(o["partition_column"]), o["partition_num"], *bounds)


def path_parts(path: str) -> list[str]:
    """The canonical parts of a ``table_path``; RuntimeConfigError when it cannot be a table name."""
    try:
        return split_name(path)
    except NameProblem as e:
        raise config_error(f"table_path {path!r} is not a table name: {e}") from None


def _table_id(path: str, conn: Conn) -> str:
    """The table id (``database.schema.table``) of a ``table_path``, the URL's database filling in."""
    parts = path_parts(path)
    database = url_database(conn.url)
    family = conn.dialect.family
    if database and ((family == "postgresql" and len(parts) < 3) or (family == "mysql" and len(parts) == 1)):
        parts = [as_part(database), *parts]
    return ".".join(parts)


def _table_sql(path: str, dialect: Dialect) -> str:
    """The table of a ``table_path`` as SQL, every part quoted by the dialect."""
    parts = path_parts(path)
    if (dialect.family == "postgresql" or not dialect.catalogs) and len(parts) == 3:
        parts = parts[1:]  # a connection reads one database: schema.table
    if dialect.family == "mysql" and len(parts) == 3:
        parts = [parts[0], parts[2]]
    return dialect.table(*parts)


def _ranges(low: Decimal, high: Decimal, count: int, integral: bool) -> list[tuple[Decimal, Decimal]]:
    """``count`` consecutive ranges covering [low, high] (SeaTunnel's numeric-between splits)."""
    if integral:
        low, high = low.to_integral_value(rounding="ROUND_FLOOR"), high.to_integral_value(rounding="ROUND_CEILING")
        span = high - low + 1
        count = max(1, min(count, int(span)))
        size, extra = divmod(int(span), count)
        out, start = [], low
        for i in range(count):
            end = start + size - 1 + (1 if i < extra else 0)
            out.append((start, end))
            start = end + 1
        return out
    count = max(1, count)
    step = (high - low) / count
    edges = [low + step * i for i in range(count)] + [high]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def _predicates(dialect: Dialect, column: str, kind: str, count: int, low: Decimal | None, high: Decimal | None,
                integral: bool, with_nulls: bool) -> list[str]:
    """One WHERE condition per split."""
    col = dialect.column(column)
    if kind == "string":
        if dialect.hash_mod(column, count) is None:
            raise config_error(f"the {dialect.name} dialect has no hash function: a string split key "
                               f"({column}) cannot be split; remove partition_column or use a numeric one")
        out = [f"{dialect.hash_mod(column, count)} = {i}" for i in range(count)]
    else:
        assert low is not None and high is not None
        ranges = _ranges(low, high, count, integral)
        out = []
        for i, (start, end) in enumerate(ranges):
            last = i == len(ranges) - 1
            if integral:
                out.append(f"{col} >= {start} AND {col} <= {end}")
            else:
                out.append(f"{col} >= {start} AND {col} {'<=' if last else '<'} {end}")
    if with_nulls and out:
        out[0] = f"({out[0]}) OR {col} IS NULL"
    return out


def _key_kind(type_code: int, scale: int) -> tuple[str | None, bool]:
    """('numeric'|'string'|None, integral) of a key column."""
    if type_code in _INTEGER_TYPES:
        return "numeric", True
    if type_code in _DECIMAL_TYPES:
        return "numeric", scale <= 0
    if type_code in _FLOAT_TYPES:
        return "numeric", False
    if type_code in _STRING_TYPES:
        return "string", False
    return None, False


def split_key(connection: Any, conn: Conn, spec: SourceTable, columns: list[tuple[str, int, int]],
              memo: MutableMapping[Any, Any] | None = None) -> tuple[str, int, int] | None:
    """The column (name, type code, scale) a table splits by: its ``partition_column``, else (a
    ``table_path``) its one-column primary key; None: it reads in one split."""
    key = spec.partition_column
    if key is None and spec.table_path and not spec.query:
        key = primary_key(connection, path_parts(spec.table_path), conn.dialect, memo)
    if key is None:
        return None
    by_name = {c[0].lower(): c for c in columns}
    column = by_name.get(key.lower())
    if column is None:
        close = difflib.get_close_matches(key.lower(), list(by_name), n=1)
        raise config_error(f"partition_column '{key}' is not a column of the source"
                           + (f"; did you mean '{by_name[close[0]][0]}'?" if close else ""))
    return column


def needs_bounds(spec: SourceTable, column: tuple[str, int, int] | None) -> bool:
    """Whether the dynamic splitter asks the table's rows and key bounds (:func:`bounds_sql`) to split it
    by ``column`` (:func:`split_key`)."""
    return column is not None and not (spec.query and spec.partition_column) and \
        _key_kind(column[1], column[2])[0] is not None


def bounds_sql(items: Sequence[tuple[str, str]]) -> str:
    """ONE query of the row count and the key's MIN and MAX of each ``(base query, quoted key column)``
    item: a row ``(position, COUNT(*), MIN, MAX)`` per item (the keys of one type: the branches of a
    ``UNION ALL``)."""
    return " UNION ALL ".join(f"SELECT {i}, COUNT(*), MIN({key}), MAX({key}) FROM ({base}) st_jdbc_bounds"
                              for i, (base, key) in enumerate(items))


def _splits(connection: Any, conn: Conn, spec: SourceTable, base: str, config: Mapping[str, Any],
            columns: list[tuple[str, int, int]], memo: MutableMapping[Any, Any] | None = None,
            bounds: Sequence[str | None] | None = None) -> list[str] | None:
    """The WHERE condition of each split (None: one split reading everything); ``bounds``: the rows,
    MIN and MAX of the dynamic splitter's key, when asked already (:func:`bounds_sql`)."""
    fixed = bool(spec.query and spec.partition_column)
    column = split_key(connection, conn, spec, columns, memo)
    if column is None:
        return None
    name, code, scale = column
    kind, integral = _key_kind(code, scale)
    if kind is None:
        if fixed:
            raise config_error(f"partition_column '{name}' must be a numeric or string column")
        return None
    if not fixed:
        return _dynamic_splits(connection, conn.dialect, name, kind, integral, base, config, bounds)
    if code in _DECIMAL_TYPES and scale > 0:
        raise config_error(f"partition_column '{name}' is a decimal with {scale} decimal places: the split key "
                           "must be an integer or a string")
    return _fixed_splits(connection, conn.dialect, spec, name, kind, integral, base)


def _fixed_splits(connection: Any, dialect: Dialect, spec: SourceTable, name: str, kind: str, integral: bool,
                  base: str) -> list[str] | None:
    """``partition_num`` splits of the key's bounds (queried unless both are set), or hash buckets."""
    count = spec.partition_num or DEFAULT_PARTITION_NUM
    if kind == "string":
        return _predicates(dialect, name, kind, count, None, None, False, False)
    low, high = spec.lower, spec.upper
    if low is None or high is None:
        col = dialect.column(name)
        (low_text, high_text), = query(connection, f"SELECT MIN({col}), MAX({col}) FROM ({base}) st_jdbc_bounds")
        low, high = to_decimal(low_text), to_decimal(high_text)
        if low is None or high is None:
            return None
    if low > high:
        raise config_error(f"partition_lower_bound {low} is greater than partition_upper_bound {high}")
    return _predicates(dialect, name, kind, count, low, high, integral, False)


def _dynamic_splits(connection: Any, dialect: Dialect, name: str, kind: str, integral: bool, base: str,
                    config: Mapping[str, Any], bounds: Sequence[str | None] | None = None) -> list[str] | None:
    """``ceil(rows / split.size)`` splits over the key's range (null keys in the first one); ``bounds``
    (rows, MIN, MAX) when asked already."""
    split_size = source_options(config)["split.size"]
    col = dialect.column(name)
    if bounds is None:
        bounds, = query(connection, f"SELECT COUNT(*), MIN({col}), MAX({col}) FROM ({base}) st_jdbc_bounds")
    rows_text, low_text, high_text = bounds
    count = max(1, math.ceil(int(rows_text or 0) / split_size))
    if count == 1:
        return None
    if kind == "string":
        return _predicates(dialect, name, kind, count, None, None, False, True)
    low, high = to_decimal(low_text), to_decimal(high_text)
    if low is None or high is None:
        return None
    return _predicates(dialect, name, kind, count, low, high, integral, True)


def _base_query(spec: SourceTable, config: Mapping[str, Any], dialect: Dialect) -> str:
    """The SELECT of one table, ``where_condition`` applied."""
    if spec.query:
        base = spec.query.strip().rstrip(";").strip()
    else:
        base = f"SELECT * FROM {_table_sql(str(spec.table_path), dialect)}"
    where = text(source_options(config)["where_condition"])
    if where:
        if not where.lower().startswith("where"):
            raise config_error(f"where_condition must start with 'where', found {where!r}")
        base = f"SELECT * FROM ({base}) st_jdbc_where {where}"
    return base


def read_table(spark: Any, conn: Conn, spec: SourceTable, config: Mapping[str, Any]) -> tuple[Any, int]:
    """One table's DataFrame (with the row kind) and its number of splits (one partition each)."""

    base = _base_query(spec, config, conn.dialect)
    what = f"cannot read {spec.table_path or 'the query'} from {conn.safe_url}"
    memo = pool_of(spark, conn).memo  # the job's catalog keys, one listing per schema (.catalog)
    try:
        with connect(spark, conn) as connection:
            columns = columns_of(connection, base)
            predicates = _splits(connection, conn, spec, base, config, columns, memo)
            keys = catalog_keys(connection, path_parts(spec.table_path), conn.dialect, memo) \
                if spec.table_path and not spec.query else None
    except Exception as e:
        raise reraise(e, what, conn) from None
    fetch = source_options(config)["fetch_size"]
    options = conn.spark_options(preferTimestampNTZ="true", **({"fetchsize": fetch} if fetch else {}),
                                 **_custom_schema(conn.dialect, columns))
    table = f"({base}) st_jdbc_src"
    try:
        if predicates:
            props = {k: v for k, v in options.items() if k != "url"}
            df = spark.read.jdbc(conn.spark_url, table, predicates=predicates, properties=props)
        else:
            df = spark.read.format("jdbc").options(**options, dbtable=table).load()
    except Exception as e:
        raise reraise(e, what, conn) from None
    df = as_read(df, conn.dialect, columns)
    splits = len(predicates) if predicates else 1
    if keys is not None and not keys.empty and ROW_KIND not in df.columns:
        return with_catalog_keys(df, keys, kind_literal().alias(ROW_KIND)), splits  # one step, not two
    if keys is not None and not keys.empty:
        df = with_catalog_keys(df, keys)
    return with_kind(df), splits


def as_read(df: Any, dialect: Dialect, columns: list[tuple[str, int, int]]) -> Any:
    """A JDBC read's DataFrame with the columns Spark cannot map turned into their types: SQLite's
    dates read as text, and ``time`` columns."""
    from pyspark.sql import functions as F

    if dialect.family == "sqlite":
        texts = {name: _SQLITE_TEXT_CASTS[code] for name, code, _ in columns if code in _SQLITE_TEXT_CASTS}
        df = df.select(*[F.expr(f"try_cast({quote(c)} AS {texts[c]})").alias(c) if c in texts else F.col(quote(c))
                         for c in df.columns])
    times = {name for name, code, _ in columns if code in _TIME_TYPES}
    if times:
        df = df.select(*[F.date_format(F.col(quote(c)), "HH:mm:ss.SSSSSS").cast("time").alias(c)
                         if c in times else F.col(quote(c)) for c in df.columns])
    return df


#: SQLite: java.sql.Types code -> what Spark reads the column as (see :func:`_custom_schema`)
_SQLITE_READ_AS = {-5: "BIGINT", 91: "STRING", 93: "STRING"}
#: SQLite: the type a column read as text is cast to
_SQLITE_TEXT_CASTS = {91: "date", 93: "timestamp_ntz"}


def _custom_schema(dialect: Dialect, columns: list[tuple[str, int, int]]) -> dict[str, str]:
    """Spark's ``customSchema`` where its mapping fails on SQLite: the driver calls every column
    unsigned, which makes Spark read a ``BIGINT`` as ``decimal(20,0)`` (read as ``bigint``), and it
    parses dates only in its own format (``DATE``/``TIMESTAMP`` columns are read as text, then
    cast: ISO text, as SQLite's date functions write it)."""
    if dialect.family != "sqlite":
        return {}
    found = [f"`{name.replace('`', '``')}` {_SQLITE_READ_AS[code]}" for name, code, _ in columns
             if code in _SQLITE_READ_AS]
    return {"customSchema": ", ".join(found)} if found else {}


def over_readers(df: Any, splits: int, readers: int, key: Sequence[str] = ()) -> Any:
    """``df`` (one partition per split) in ``readers`` partitions: several splits per reader
    without a shuffle when there are more splits than readers, the rows spread over every reader
    when there are fewer: by the hash of ``key`` (the table's primary key) when given, else round
    robin. Spread by the key, a sink that groups the rows by that same key into as many writers
    (an upsert on the table's primary key) finds them grouped already: Spark plans one shuffle, not two
    (when adaptive execution is off, as in a plain multi-table copy: ``runtime/tables.py``)."""
    from pyspark.sql import functions as F

    if splits > readers:
        return df.coalesce(readers)
    if splits < readers:
        return df.repartition(readers, *[F.col(quote(c)) for c in key]) if key else df.repartition(readers)
    return df


def primary_key_columns(df: Any) -> tuple[str, ...]:
    """The columns of the primary key ``df``'s catalog keys name (none: no key known)."""
    keys = catalog_keys_of(df)
    return tuple(keys.primary_key[1]) if keys.primary_key else ()
