"""Sql transform: a Spark SQL query over the transform's input(s), with SeaTunnel's SQL functions.

Compile time (no Spark): the query is parsed with sqlglot to report syntax errors, to list
the tables it reads, and to decide whether a multi-input Sql can be split per input (a
row-wise query or a UNION of one-input branches can; a join or an aggregation across
inputs cannot). When every input schema is known, the columns the query references are
checked (sqlglot's qualifier) and the output schema is inferred where its types are
certain (else it is left unknown).

Run time: each input is registered as a temporary view under a name unique to this run of
this vertex (``__st_<vertex>_<run>_<name>``) and the query's table references are
rewritten to those names (CTE names are left alone), then ``spark.sql`` runs it:

* Tables: every input under its dataset name, the first also as ``this``. With one input,
  any other table name reads that input too (SeaTunnel does not enforce the FROM name).
  In a split pipeline (R15) the inputs of other pipelines are registered as empty tables
  with the present input's schema (R7: all inputs share a row type), so
  ``SELECT ... FROM a UNION ALL SELECT ... FROM b`` yields this pipeline's share; a
  one-table row-wise query (``SELECT ... FROM a``) reads the pipeline's input whatever
  its name, as SeaTunnel runs every input's rows through it.
* Row kinds: stars hide the row-kind column (``* EXCEPT``); a row-wise SELECT (one
  source, no join, aggregation, GROUP BY or DISTINCT) carries its source's row kind, and
  UNION ALL branches keep theirs; rows a query combines are INSERT.
* SeaTunnel functions are rewritten to native Spark expressions (no UDFs):
  CONCAT and ``||`` ignore nulls; DATEADD/TIMESTAMPADD(x, n, 'UNIT'), DATEDIFF(a, b, 'UNIT'),
  DATE_TRUNC(x, 'UNIT'), FORMATDATETIME, PARSEDATETIME/TO_DATE(s, fmt), IS_DATE, TO_CHAR,
  DAYNAME, MONTHNAME, DAY_OF_WEEK (Monday = 1), DAY_OF_MONTH, DAY_OF_YEAR, WEEK (ISO
  weekOfYear), FROM_UNIXTIME(s, fmt, zone), EXTRACT (DOW Sunday = 0, ISODOW, WEEK, SECOND,
  MILLISECOND(S), MICROSECOND(S), EPOCH, CENTURY, DECADE, MILLENNIUM, ISOYEAR),
  REGEXP_REPLACE/REGEXP_LIKE/REGEXP_SUBSTR with flags (i, c, n, m), LTRIM/RTRIM(s, chars),
  INSTR, INSERT, HEXTORAW, RAWTOHEX, TRUNC/TRUNCATE(x, n), MULTI_IF, and CAST to BYTES,
  DATETIME and TIMESTAMP (a SeaTunnel timestamp has no zone: TIMESTAMP_NTZ). Functions
  Spark has under the same name and meaning run natively (UPPER/UCASE, IFNULL, LOCATE,
  LPAD, SOUNDEX, SUBSTRING, ROUND, MOD, COALESCE, NULLIF, UUID, ...). Not supported:
  TRIM_SCALE, MURMUR64, negative start positions of INSTR/LOCATE.
* Where Spark's meaning wins: operators keep Spark SQL semantics (ANSI null comparisons,
  standard LIKE, BETWEEN and NOT allowed; SeaTunnel's ``!=`` is true when one side is null);
  a two-argument DATEDIFF is Spark's ``datediff(end, start)``; ``TRIM(s, chars)`` trims
  every character of ``chars`` (SeaTunnel: its first); the session's time zone (UTC) is
  the default zone of FROM_UNIXTIME; ``${name}`` inside a query is Spark's variable
  substitution. A failure the query hits in Spark's analysis is a RuntimeConfigError naming
  the inputs by their dataset names.

STREAMING jobs (docs/streaming.md): a stateful query (join, aggregation, DISTINCT, UNION, subquery)
needs the ``watermark`` option (``{ column, delay [, input] }``), applied to the streaming inputs;
window functions, ORDER BY, LIMIT, INTERSECT and EXCEPT cannot run on a stream. Both are
compile-time errors (:func:`streaming_problem`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from ..spi import (
    TRANSFORM,
    Connector,
    Dataset,
    PerInput,
    PerInputSplit,
    ReadsTablesByName,
    RunContext,
    SchemaInference,
    Transform,
    Vertex,
)
from ..spi.rows import ROW_KIND

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import DataType, Schema

NAME = "Sql"

#: How a Sql transform treats its inputs.
ROW_WISE = "row-wise"  # one table read, row by row: SeaTunnel's own Sql semantics
UNION = "union"  # a UNION [ALL] of branches that each read one input row by row
COMBINING = "combining"  # joins or aggregates across rows/inputs: cannot be split per input

#: SeaTunnel function names parsed as plain calls and rewritten to Spark by :func:`to_spark`.
SEATUNNEL_FUNCTIONS = (
    "CONCAT", "DATEADD", "TIMESTAMPADD", "DATEDIFF", "DATE_TRUNC", "TRUNC", "TRUNCATE", "TO_CHAR", "LTRIM",
    "RTRIM", "REGEXP_LIKE", "REGEXP_REPLACE", "REGEXP_SUBSTR", "INSTR", "INSERT", "HEXTORAW", "RAWTOHEX",
    "FORMATDATETIME", "PARSEDATETIME", "TO_DATE", "IS_DATE", "DAYNAME", "MONTHNAME", "DAY_OF_WEEK",
    "DAY_OF_MONTH", "DAY_OF_YEAR", "WEEK", "FROM_UNIXTIME", "MULTI_IF",
)


@dataclass(frozen=True)
class SqlAnalysis:
    tables: tuple[str, ...]  # tables the query reads, in order, CTE names excluded
    mode: str
    reason: str = ""
    union_distinct: bool = False


class SqlSyntaxError(ValueError):
    def __init__(self, message: str, line: int | None = None, col: int | None = None):
        super().__init__(message)
        self.line, self.col = line, col


# ---------------------------------------------------------------- parsing

@lru_cache(maxsize=1)
def dialect() -> Any:
    """Spark's sqlglot dialect, reading SeaTunnel's forms: its functions as plain calls (any
    arity, rewritten later), ``TRIM(s, chars)`` in SeaTunnel's order and ``CAST(x AS BYTES)``."""
    from sqlglot import exp
    from sqlglot.dialects.spark import Spark
    from sqlglot.tokens import TokenType

    def call(name: str) -> Callable[[list], Any]:
        return lambda args: exp.Anonymous(this=name, expressions=args)

    class SeaTunnelSpark(Spark):
        class Tokenizer(Spark.Tokenizer):
            KEYWORDS: ClassVar[dict] = {**Spark.Tokenizer.KEYWORDS, "BYTES": TokenType.VARBINARY}

        class Parser(Spark.Parser):
            TRIM_PATTERN_FIRST = False
            FUNCTIONS: ClassVar[dict] = {**Spark.Parser.FUNCTIONS, **{name: call(name) for name in SEATUNNEL_FUNCTIONS}}

    return SeaTunnelSpark


@lru_cache(maxsize=4096)
def _parse(query: str) -> Any:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    try:
        statements = [s for s in sqlglot.parse(query, read=dialect()) if s is not None]
    except ParseError as e:
        info = e.errors[0] if e.errors else {}
        message = info.get("description") or str(e).splitlines()[0]
        if info.get("highlight"):
            message += f" near '{info['highlight']}'"
        raise SqlSyntaxError(message, info.get("line"), info.get("col")) from None
    except TokenError as e:
        raise SqlSyntaxError(str(e)) from None
    if len(statements) != 1:
        raise SqlSyntaxError(f"expected one SELECT statement, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise SqlSyntaxError(f"only a query (SELECT) is allowed, found {tree.key.upper()}")
    return tree


def _arg(node: Any, name: str) -> Any:
    """``node.args[name]`` across sqlglot versions (newer ones spell ``from_``, ``with_``, ``except_``)."""
    return node.args.get(name + "_", node.args.get(name))


def _key(cls: Any, name: str) -> str:
    return name + "_" if name + "_" in cls.arg_types else name


def _ctes(node: Any) -> list[Any]:
    with_ = _arg(node, "with")
    return list(with_.expressions) if with_ is not None else []


def analyze_query(query: str, inputs: Sequence[str] = ()) -> SqlAnalysis:
    """Parse ``query`` and classify it against ``inputs`` (the transform's input names).

    Raises :class:`SqlSyntaxError` for SQL that does not parse as one statement.
    Results are cached by query text and inputs, so asking again is cheap.
    """
    return _analyze(query, tuple(inputs))


@lru_cache(maxsize=4096)
def _analyze(query: str, inputs: tuple[str, ...]) -> SqlAnalysis:
    from sqlglot import exp

    tree = _parse(query)

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables: list[str] = []
    for table in tree.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name not in tables:
            tables.append(name)
    known = {i.lower() for i in inputs} | {"this"}

    def inputs_read(node: exp.Expression) -> set[str]:
        return {t.name.lower() for t in node.find_all(exp.Table) if t.name.lower() in known}

    def row_wise_problem(select: exp.Expression) -> str:
        if not isinstance(select, exp.Select):
            return "a nested set operation"
        if select.args.get("joins"):
            return "a JOIN"
        if select.args.get("group") or select.find(exp.AggFunc):
            return "an aggregation"
        if select.find(exp.Window):
            return "a window function"
        if select.args.get("distinct"):
            return "SELECT DISTINCT"
        if select.args.get("limit"):
            return "a LIMIT"
        if len(inputs_read(select)) > 1:
            return "a query reading several inputs"
        return ""

    if len(inputs) < 2:
        return SqlAnalysis(tuple(tables), ROW_WISE)

    if isinstance(tree, exp.SetOperation):
        if not isinstance(tree, exp.Union):
            return SqlAnalysis(tuple(tables), COMBINING, f"{tree.key.upper()} compares rows across inputs")
        leaves: list[exp.Expression] = []
        distinct = False
        stack: list[exp.Expression] = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, exp.Union):
                if node.args.get("limit"):
                    return SqlAnalysis(tuple(tables), COMBINING, "a LIMIT over the union of inputs")
                distinct = distinct or bool(node.args.get("distinct"))
                stack.extend([node.right, node.left])
            elif isinstance(node, exp.SetOperation):
                return SqlAnalysis(tuple(tables), COMBINING, f"{node.key.upper()} compares rows across inputs")
            else:
                leaves.append(node.this if isinstance(node, exp.Subquery) else node)
        for leaf in leaves:
            problem = row_wise_problem(leaf)
            if problem:
                return SqlAnalysis(tuple(tables), COMBINING, f"{problem} inside the UNION")
        return SqlAnalysis(tuple(tables), UNION, union_distinct=distinct)

    problem = row_wise_problem(tree)
    if problem:
        return SqlAnalysis(tuple(tables), COMBINING, f"{problem} across its inputs")
    return SqlAnalysis(tuple(tables), ROW_WISE)


# ---------------------------------------------------------------- STREAMING jobs

#: stream operators Spark keeps state for: allowed with a ``watermark``
STATEFUL = "stateful"
#: operators a stream cannot run at all (in append mode, which the streaming sinks use)
UNSUPPORTED = "unsupported"
WATERMARK_KEY = "watermark"
_INTERVAL_UNITS = ("microsecond", "millisecond", "second", "minute", "hour", "day", "week")
_INTERVAL = re.compile(r"(?i)\s*(?:interval\s+)?(?:\d+(?:\.\d+)?\s*(?:" + "|".join(_INTERVAL_UNITS) + r")s?\s*)+")


def streaming_problem(query: str) -> tuple[str, str] | None:
    """``(STATEFUL or UNSUPPORTED, what)`` when ``query`` cannot run row by row on a stream, else None.

    Stateful (Spark keeps state across micro-batches; a watermark bounds it): joins, aggregations,
    DISTINCT, UNION (distinct), subqueries. Unsupported on a stream: window functions (OVER),
    ORDER BY, LIMIT, INTERSECT and EXCEPT. Raises :class:`SqlSyntaxError`.
    """
    from sqlglot import exp

    tree = _parse(query)
    unsupported: list[str] = []
    stateful: list[str] = []
    for node in tree.find_all(exp.Intersect, exp.Except):
        unsupported.append(node.key.upper())
    if tree.find(exp.Window):
        unsupported.append("a window function (OVER)")
    for node in tree.find_all(exp.Order):
        if not isinstance(node.parent, exp.Window):
            unsupported.append("ORDER BY")
            break
    if any(node.args.get("limit") for node in tree.find_all(exp.Select, exp.Union)):
        unsupported.append("a LIMIT")
    if unsupported:
        return UNSUPPORTED, ", ".join(dict.fromkeys(unsupported))
    for select in tree.find_all(exp.Select):
        if select.args.get("joins"):
            stateful.append("a JOIN")
        if select.args.get("group") or select.find(exp.AggFunc):
            stateful.append("an aggregation")
        if select.args.get("distinct"):
            stateful.append("SELECT DISTINCT")
    if any(u.args.get("distinct") for u in tree.find_all(exp.Union)):
        stateful.append("UNION (without ALL)")
    if any(isinstance(q.parent, (exp.In, exp.Exists)) or isinstance(q, exp.Exists)
           for q in tree.find_all(exp.Subquery, exp.Exists)) or any(i.args.get("query") for i in tree.find_all(exp.In)):
        stateful.append("a subquery")
    if stateful:
        return STATEFUL, ", ".join(dict.fromkeys(stateful))
    return None


@dataclass(frozen=True)
class Watermark:
    """``watermark = { column = "ts", delay = "10 seconds" [, input = "orders"] }``: Spark's event-time
    watermark on an input of a streaming Sql (``input`` absent: every input with the column)."""

    column: str
    delay: str
    input: str | None = None


def read_watermarks(value: Any) -> tuple[list[Watermark], list[str]]:
    """The watermarks of a ``watermark`` option (an object or a list of objects) and what is wrong with it.

    ``delay`` is a Spark interval (``"10 seconds"``, ``"1 minute 30 seconds"``) or a number of ms."""
    if value is None:
        return [], []
    items = value if isinstance(value, list) else [value]
    found: list[Watermark] = []
    issues: list[str] = []
    for i, item in enumerate(items):
        where = f"item {i}: " if isinstance(value, list) else ""
        if not isinstance(item, Mapping):
            issues.append(f"{where}expected {{ column = \"ts\", delay = \"10 seconds\" }}, found {item!r}")
            continue
        unknown = sorted(set(item) - {"column", "delay", "input"})
        if unknown:
            issues.append(f"{where}unknown key(s) {', '.join(unknown)}: use column, delay and input")
        column, delay, source = item.get("column"), item.get("delay"), item.get("input")
        if not isinstance(column, str) or not column.strip():
            issues.append(f"{where}column must name the event-time column")
            continue
        if isinstance(delay, int) and not isinstance(delay, bool) and delay >= 0:
            delay = f"{delay} milliseconds"
        elif isinstance(delay, str) and delay.strip().isdigit():
            delay = f"{int(delay.strip())} milliseconds"
        if not isinstance(delay, str) or not _INTERVAL.fullmatch(delay):
            issues.append(f"{where}delay must be an interval such as \"10 seconds\" or \"1 minute\" (or a number "
                          f"of ms), found {delay!r}")
            continue
        if source is not None and (not isinstance(source, str) or not source.strip()):
            issues.append(f"{where}input must name one of the Sql's inputs")
            continue
        found.append(Watermark(column.strip(), delay.strip(), source.strip() if source else None))
    return found, issues


def _watermarked(vertex: Any, name: str, df: Any) -> Any:
    """``df`` (the input ``name``) with the vertex's watermark when it is a stream; event-time columns of
    SeaTunnel's timestamp type (no zone) are read as Spark TIMESTAMP (UTC), as watermarks require."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..spi.errors import RuntimeConfigError

    if not getattr(df, "isStreaming", False):
        return df
    marks, issues = read_watermarks(vertex.config.get(WATERMARK_KEY))
    if issues:
        raise RuntimeConfigError(f"option '{WATERMARK_KEY}': " + "; ".join(issues))
    types = {f.name.lower(): f for f in df.schema.fields}
    for mark in marks:
        if mark.input is not None and mark.input.lower() != name.lower():
            continue
        found = types.get(mark.column.lower())
        if found is None:
            if mark.input is not None:
                raise RuntimeConfigError(f"option '{WATERMARK_KEY}': the input '{name}' has no column "
                                         f"'{mark.column}' (its columns: {', '.join(df.columns)})")
            continue
        if not isinstance(found.dataType, (T.TimestampType, T.TimestampNTZType, T.DateType)):
            raise RuntimeConfigError(f"option '{WATERMARK_KEY}': the event-time column '{found.name}' of '{name}' "
                                     f"is {found.dataType.simpleString()}, not a timestamp")
        if not isinstance(found.dataType, T.TimestampType):
            df = df.withColumn(found.name, F.col(f"`{found.name}`").cast("timestamp"))
        df = df.withWatermark(found.name, mark.delay)
    return df


def _zone_free(df: Any) -> Any:
    """Spark TIMESTAMP values (nested ones too, e.g. a ``window`` struct) back to SeaTunnel's zone-free
    timestamp, after a watermark made the event time a Spark TIMESTAMP."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def ntz(dtype: Any) -> Any:
        if isinstance(dtype, T.TimestampType):
            return T.TimestampNTZType()
        if isinstance(dtype, T.StructType):
            return T.StructType([T.StructField(f.name, ntz(f.dataType), f.nullable, f.metadata) for f in dtype.fields])
        if isinstance(dtype, T.ArrayType):
            return T.ArrayType(ntz(dtype.elementType), dtype.containsNull)
        if isinstance(dtype, T.MapType):
            return T.MapType(ntz(dtype.keyType), ntz(dtype.valueType), dtype.valueContainsNull)
        return dtype

    changed = [(f, ntz(f.dataType)) for f in df.schema.fields]
    if all(new == f.dataType for f, new in changed):
        return df
    return df.select(*[F.col(f"`{f.name}`").cast(new).alias(f.name) if new != f.dataType else F.col(f"`{f.name}`")
                       for f, new in changed])


# ---------------------------------------------------------------- SeaTunnel functions -> Spark

_DATE_UNITS = {"YEAR": 0, "MONTH": 1, "WEEK": 2, "DAY": 3}  # make_interval(years, months, weeks, days, ...)
_TIME_UNITS = {"HOUR": 4, "MINUTE": 5, "SECOND": 6}
_DATEADD_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
_DATEDIFF_UNITS = ("YEAR", "MONTH", "WEEK", "DAY", "DAYTIME", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
_TRUNC_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
_ISO_WEEK = ("CAST(FLOOR((7 + CASE WHEN PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) + 1 > 4 "
             "THEN 7 - PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) ELSE -PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) END "
             "+ DAYOFYEAR(_x) - 1) / 7) AS INT)")  # java.time WeekFields.ISO.weekOfYear()
_TEMPLATES = {
    "TRUNC": "CASE WHEN _x < 0 THEN CEIL(_x, _n) ELSE FLOOR(_x, _n) END",
    "INSERT": ("CASE WHEN _s IS NULL THEN _a WHEN _a IS NULL THEN _s "
               "WHEN _p < 1 OR _l <= 0 OR LENGTH(_a) = 0 OR _p - 1 > LENGTH(_s) THEN _s "
               "ELSE CONCAT(SUBSTRING(_s, 1, _p - 1), _a, SUBSTRING(_s, _p + _l)) END"),
    "IS_DATE": "CASE WHEN _s IS NULL OR _s = '' THEN FALSE ELSE TRY_TO_TIMESTAMP(_s, _f) IS NOT NULL END",
    "CENTURY": "CASE WHEN YEAR(_x) > 0 THEN (YEAR(_x) - 1) DIV 100 + 1 ELSE YEAR(_x) DIV 100 END",
    "MILLENNIUM": "CASE WHEN YEAR(_x) > 0 THEN (YEAR(_x) - 1) DIV 1000 + 1 ELSE YEAR(_x) DIV 1000 END",
    "DECADE": "YEAR(_x) DIV 10",
    "MILLISECOND": "CAST(EXTRACT(SECOND FROM _x) * 1000 AS INT)",
    "MICROSECOND": "CAST(EXTRACT(SECOND FROM _x) * 1000000 AS INT)",
    "WEEK": _ISO_WEEK,
}


@lru_cache(maxsize=64)
def _parsed_template(text: str) -> Any:
    import sqlglot

    return sqlglot.parse_one(text, read="spark")


def _template(text: str, **parts: Any) -> Any:
    """The expression ``text`` with its columns ``_name`` replaced by copies of ``parts[name]``."""
    from sqlglot import exp

    tree = _parsed_template(text).copy()
    for column in list(tree.find_all(exp.Column)):
        if column.name.startswith("_") and column.name[1:] in parts and not column.table:
            column.replace(parts[column.name[1:]].copy())
    return tree


class FunctionError(ValueError):
    """A SeaTunnel function used in a way that has no Spark translation (a bad unit, flag, arity)."""


def to_spark(tree: Any, type_of: Callable[[Any], str | None] = lambda node: None) -> Any:
    """Rewrite SeaTunnel's SQL functions and types in ``tree`` (in place) to native Spark SQL.

    ``type_of(expression)`` gives a coarse type ("date", "timestamp", "string", "numeric",
    "array", "binary", ...) where known, to choose between date and timestamp forms.
    Raises :class:`FunctionError`.
    """
    from sqlglot import exp

    def call(name: str, *args: Any) -> Any:
        return exp.Anonymous(this=name, expressions=[a.copy() for a in args])

    def text(value: str) -> Any:
        return exp.Literal.string(value)

    def number(value: int) -> Any:
        return exp.Literal.number(value)

    def cast(node: Any, to: str) -> Any:
        return exp.Cast(this=node.copy(), to=exp.DataType.build(to, dialect="spark"))

    def literal(node: Any) -> str | None:
        return node.this if isinstance(node, exp.Literal) and node.is_string else None

    def flagged(regex: Any, flags: Any) -> Any:
        """``regex`` with SeaTunnel's flag letters (i, c, n, m) as an inline Java flag group."""
        if flags is None or isinstance(flags, exp.Null):
            return regex
        letters = literal(flags)
        if letters is None:
            raise FunctionError("regular expression flags must be a string literal such as 'i'")
        ci = dotall = multiline = False
        for c in letters:
            if c not in "icnm":
                raise FunctionError(f"unknown regular expression flag {c!r}: use i, c, n or m")
            ci = True if c == "i" else False if c == "c" else ci
            dotall, multiline = dotall or c == "n", multiline or c == "m"
        prefix = "".join(f for f, on in (("i", ci), ("s", dotall), ("m", multiline), ("u", ci)) if on)
        if not prefix:
            return regex
        if literal(regex) is not None:
            return text(f"(?{prefix}){literal(regex)}")
        return call("concat", text(f"(?{prefix})"), regex)

    def concat(args: list[Any]) -> Any:
        if any(type_of(a) in ("array", "binary") for a in args):
            return call("concat", *args)
        return call("concat", *[call("coalesce", cast(a, "string"), text("")) for a in args])

    def unit(node: Any, allowed: Sequence[str], function: str) -> str:
        value = (literal(node) or "").strip().upper()
        if value not in allowed:
            raise FunctionError(f"{function}: unsupported unit {literal(node)!r}; use one of {', '.join(allowed)}")
        return value

    def dateadd(x: Any, n: Any, name: str) -> Any:
        amounts: list[Any] = [number(0)] * 7
        if name == "QUARTER":
            amounts[1] = exp.Mul(this=cast(n, "int"), expression=number(3))
        elif name in _DATE_UNITS:
            amounts[_DATE_UNITS[name]] = cast(n, "int")
        elif name in _TIME_UNITS:
            amounts[_TIME_UNITS[name]] = cast(n, "int") if name != "SECOND" else cast(n, "decimal(18, 6)")
        else:  # MILLISECOND
            amounts[6] = cast(exp.Div(this=cast(n, "decimal(18, 6)"), expression=number(1000)), "decimal(18, 6)")
        if (name in _TIME_UNITS or name == "MILLISECOND") and type_of(x) == "date":
            x = cast(x, "timestamp_ntz")
        return exp.Add(this=x.copy(), expression=call("make_interval", *amounts))

    def datediff(a: Any, b: Any, name: str) -> Any:
        if name == "DAY":
            return cast(call("datediff", cast(b, "date"), cast(a, "date")), "bigint")
        if name in ("YEAR", "MONTH"):
            return call("timestampdiff", exp.Var(this=name), cast(a, "date"), cast(b, "date"))
        return call("timestampdiff", exp.Var(this="DAY" if name == "DAYTIME" else name), a, b)

    def parse_datetime(s: Any, fmt: Any) -> Any:
        pattern = literal(fmt)
        bare = re.sub(r"'[^']*'", "", pattern or "")
        has_date, has_time = bool(re.search(r"[yuMLdDQqwWEeY]", bare)), bool(re.search(r"[HhkKmsSanNA]", bare))
        if pattern is not None and has_date and not has_time:
            return call("to_date", s, fmt)
        if pattern is not None and has_time and not has_date:
            return call("to_time", s, fmt)
        return call("to_timestamp_ntz", s, fmt)

    def extract(node: Any) -> Any:
        field, x = node.name.upper(), node.expression
        if field in ("DOW", "DAYOFWEEK"):
            return exp.Sub(this=call("dayofweek", x), expression=number(1))
        if field == "ISODOW":
            return exp.Add(this=call("weekday", x), expression=number(1))
        if field in ("DOY", "DAYOFYEAR"):
            return call("dayofyear", x)
        if field == "SECOND":
            return call("second", x)
        if field == "EPOCH":
            return call("unix_seconds", cast(x, "timestamp"))
        if field == "ISOYEAR":
            return exp.Extract(this=exp.Var(this="YEAROFWEEK"), expression=x.copy())
        key = field[:-1] if field in ("MILLISECONDS", "MICROSECONDS") else field
        if key in _TEMPLATES:
            return _template(_TEMPLATES[key], x=x)
        return None

    def function(node: Any) -> Any:
        name, a = node.name.upper(), list(node.expressions)
        n = len(a)
        if name == "CONCAT":
            return concat(a)
        if name in ("DATEADD", "TIMESTAMPADD") and (n == 2 or (n == 3 and literal(a[2]) is not None)):
            return dateadd(a[0], a[1], "DAY" if n == 2 else unit(a[2], _DATEADD_UNITS, name))
        if name == "DATEDIFF" and n == 3 and literal(a[2]) is not None:
            return datediff(a[0], a[1], unit(a[2], _DATEDIFF_UNITS, name))
        if name == "DATE_TRUNC" and n == 2 and literal(a[1]) is not None and literal(a[0]) is None:
            return cast(call("date_trunc", text(unit(a[1], _TRUNC_UNITS, name)), a[0]), "timestamp_ntz")
        if name in ("TRUNC", "TRUNCATE") and n in (1, 2) and (n == 1 or literal(a[1]) is None):
            result = _template(_TEMPLATES["TRUNC"], x=a[0], n=a[1] if n == 2 else number(0))
            kind = type_of(a[0])
            return cast(result, kind) if kind in ("tinyint", "smallint", "int", "bigint", "float", "double") else result
        if name == "TO_CHAR" and n in (1, 2):
            kind = "numeric" if isinstance(a[0], exp.Literal) and not a[0].is_string else type_of(a[0])
            if n == 1 or kind in ("numeric", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal",
                                  "boolean"):
                return cast(a[0], "string")
            return a[0].copy() if kind == "string" else call("date_format", a[0], a[1])
        if name in ("LTRIM", "RTRIM") and n == 2:
            first = call("coalesce", call("nullif", call("substring", a[1], number(1), number(1)), text("")), text(" "))
            return exp.Trim(this=a[0].copy(), expression=first, position="LEADING" if name == "LTRIM" else "TRAILING")
        if name == "REGEXP_REPLACE" and n == 4 and (literal(a[3]) is not None or isinstance(a[3], exp.Null)):
            return call("regexp_replace", a[0], flagged(a[1], a[3]), a[2])
        if name == "REGEXP_LIKE" and n in (2, 3):
            return call("regexp_like", a[0], flagged(a[1], a[2] if n == 3 else None))
        if name == "REGEXP_SUBSTR" and n > 2:
            def given(i: int, default: Any) -> Any:
                return default if i >= n or isinstance(a[i], exp.Null) else a[i]
            found = call("regexp_extract_all", call("substring", a[0], given(2, number(1))),
                         flagged(a[1], a[4] if n > 4 else None), given(5, number(0)))
            return call("try_element_at", found, given(3, number(1)))
        if name == "INSTR" and n in (2, 3):
            return call("coalesce", call("locate", a[1], a[0], *a[2:]), number(0))
        if name == "INSERT" and n == 4:
            return _template(_TEMPLATES["INSERT"], s=a[0], p=a[1], l=a[2], a=a[3])
        if name == "HEXTORAW" and n == 1:
            return call("decode", call("unhex", a[0]), text("UTF-16BE"))
        if name == "RAWTOHEX" and n == 1:
            raw = a[0] if type_of(a[0]) == "binary" else call("encode", cast(a[0], "string"), text("UTF-16BE"))
            return call("lower", call("hex", raw))
        if name == "FORMATDATETIME" and n == 2:
            return call("date_format", a[0], a[1])
        if name in ("PARSEDATETIME", "TO_DATE") and n == 2:
            return parse_datetime(a[0], a[1])
        if name == "PARSEDATETIME" and n == 1:
            return call("to_timestamp_ntz", a[0])
        if name == "IS_DATE" and n == 2:
            return _template(_TEMPLATES["IS_DATE"], s=a[0], f=a[1])
        if name in ("DAYNAME", "MONTHNAME") and n == 1:
            return call("date_format", a[0], text("EEEE" if name == "DAYNAME" else "MMMM"))
        if name == "DAY_OF_WEEK" and n == 1:
            return exp.Add(this=call("weekday", a[0]), expression=number(1))
        if name in ("DAY_OF_MONTH", "DAY_OF_YEAR") and n == 1:
            return call("dayofmonth" if name == "DAY_OF_MONTH" else "dayofyear", a[0])
        if name == "WEEK" and n == 1:
            return _template(_ISO_WEEK, x=a[0])
        if name == "FROM_UNIXTIME" and n == 3:
            return call("date_format", call("from_utc_timestamp", call("timestamp_seconds", a[0]), a[2]), a[1])
        if name == "MULTI_IF":
            if n < 3 or n % 2 == 0:
                raise FunctionError("MULTI_IF takes condition, value pairs and a final value")
            ifs = [exp.If(this=a[i].copy(), true=a[i + 1].copy()) for i in range(0, n - 1, 2)]
            return exp.Case(ifs=ifs, default=a[-1].copy())
        return call(name.lower(), *a)  # Spark's own function of that name (and arity)

    nodes = list(tree.find_all(exp.Anonymous, exp.Extract, exp.DataType))
    for node in reversed(nodes):  # deepest first: arguments are rewritten before their callers
        if isinstance(node, exp.DataType):
            if getattr(node.this, "name", None) in ("TIMESTAMP", "TIMESTAMPTZ", "DATETIME"):  # Spark's TIMESTAMP
                node.replace(exp.DataType.build("timestamp_ntz", dialect="spark"))
            continue
        if isinstance(node, exp.Extract):
            new = extract(node)
        elif node.name.upper() in SEATUNNEL_FUNCTIONS:
            new = function(node)
        else:
            continue
        if new is not None:
            node.replace(new)
    for pipe in [p for p in tree.find_all(exp.DPipe) if not isinstance(p.parent, exp.DPipe)]:
        leaves, stack = [], [pipe]
        while stack:
            node = stack.pop()
            if isinstance(node, exp.DPipe):
                stack += [node.expression, node.this]
            else:
                leaves.append(node)
        pipe.replace(concat(leaves))
    return tree


# ---------------------------------------------------------------- table references, stars and row kinds

@dataclass(frozen=True)
class View:
    """A registered input as the rewriting sees it."""

    ident: str  # the unique temporary view name


def prepare_query(query: str, views: Mapping[str, View], fallback: str | None, carry: bool = True,
                  type_of: Callable[[Any], str | None] = lambda node: None) -> tuple[str, bool]:
    """``(Spark SQL, whether its output carries the row-kind column)`` for ``query``.

    ``views`` maps lower-cased table names to registered views; a table not among them
    reads ``views[fallback]`` (single-input Sql) or is an error (RuntimeConfigError-worthy
    ValueError). With ``carry`` false no row kind is carried (every output row is INSERT).
    """
    from sqlglot import exp

    tree = _parse(query).copy()
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    ours: set[int] = set()
    for table in list(tree.find_all(exp.Table)):
        name = table.name
        if not name or table.args.get("db") or table.args.get("catalog") or name.lower() in cte_names:
            continue
        view = views.get(name.lower()) or (views.get(fallback) if fallback else None)
        if view is None:
            known = ", ".join(sorted(k for k in views if k != "this"))
            raise ValueError(f"the query reads the table '{name}', which is not an input of this Sql "
                             f"(its inputs: {known}, and 'this' for the first)")
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
        table.set("this", exp.to_identifier(view.ident, quoted=True))
        ours.add(id(table))
    tree = to_spark(tree, type_of)

    star_key = _key(exp.Star, "except")

    def kind_column(alias: str | None) -> Any:
        return exp.column(ROW_KIND, table=exp.to_identifier(alias) if alias else None, quoted=True)

    def literal_kind(node: Any) -> None:
        if isinstance(node, exp.Subquery):
            literal_kind(node.this)
        elif isinstance(node, exp.SetOperation):
            literal_kind(node.left)
            literal_kind(node.right)
        elif isinstance(node, exp.Select):
            node.append("expressions", exp.alias_(exp.cast(exp.Literal.number(0), "TINYINT"), ROW_KIND,
                                                  quoted=True))

    def hide(star: Any, columns: list[Any]) -> None:
        """Add the row-kind columns to the star's EXCEPT list (keeping the user's own)."""
        present = list(_arg(star, "except") or [])
        written = {c.sql() for c in present}
        star.set(star_key, present + [c for c in columns if c.sql() not in written])

    def own_aggregate(select: Any) -> bool:
        return any(agg.find_ancestor(exp.Window, exp.Select) is select
                   for p in select.expressions for agg in p.find_all(exp.AggFunc))

    def process(node: Any, scope: dict[str, bool], carry: bool) -> bool:
        """Rewrite stars and carry row kinds in ``node``; return whether its output has the kind column."""
        scope = dict(scope)
        for cte in _ctes(node):
            scope[cte.alias_or_name.lower()] = process(cte.this, scope, True)
        if isinstance(node, exp.Subquery):
            return process(node.this, scope, carry)
        if isinstance(node, exp.SetOperation):
            keep = carry and isinstance(node, exp.Union) and not node.args.get("distinct")
            left, right = process(node.left, scope, keep), process(node.right, scope, keep)
            if left != right:
                literal_kind(node.right if left else node.left)
            return left or right
        if not isinstance(node, exp.Select):
            return False
        from_ = _arg(node, "from")
        sources = ([from_.this] if from_ is not None else []) + [j.this for j in node.args.get("joins") or []]
        kinded: list[str | None] = []  # aliases of the sources whose rows carry a kind
        for source in sources:
            if isinstance(source, exp.Table):
                has = id(source) in ours or scope.get(source.name.lower(), False)
                alias = source.alias_or_name
            elif isinstance(source, exp.Subquery):
                has, alias = process(source.this, scope, True), source.alias or None
            else:
                has, alias = False, None
            if has:
                kinded.append(alias)
        lowered = {a.lower() for a in kinded if a}
        for projection in node.expressions:
            if isinstance(projection, exp.Star) and kinded:
                hide(projection, [kind_column(a if len(kinded) > 1 else None) for a in kinded])
            elif (isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
                  and projection.table.lower() in lowered):
                hide(projection.this, [kind_column(None)])
        row_wise = (carry and len(sources) == 1 and len(kinded) == 1 and not node.args.get("group")
                    and not node.args.get("having") and not node.args.get("distinct") and not own_aggregate(node))
        if row_wise:
            node.append("expressions", kind_column(kinded[0]))
        return row_wise

    carried = process(tree, {}, carry)
    return tree.sql(dialect=dialect()), carried


# ---------------------------------------------------------------- run time

def _declared_inputs(ctx: Any, vertex: Any, query: str) -> list[str]:
    """The dataset names this Sql reads by its config (all of them, also those of other pipelines)."""
    from ..spi.options import MISSING, as_list, lookup

    for key in ("plugin_input", "source_table_name"):
        value = lookup(vertex.config, key)
        if value is not MISSING and value is not None:
            names = [str(x).strip() for x in as_list(value) if str(x).strip()]
            if names:
                return names
    plan = getattr(ctx, "plan", None)
    outputs = {v.output.lower() for p in getattr(plan, "pipelines", ()) for v in p.vertices if v.output}
    implicit = [t for t in analyze_query(query).tables if t.lower() in outputs]
    return implicit or list(vertex.inputs)


def _coarse(dtype: Any) -> str:
    """A Spark type as :func:`to_spark` wants it: date, timestamp, string, array, binary or a numeric name."""
    name = dtype.typeName()
    return {"timestamp_ntz": "timestamp", "integer": "int", "long": "bigint", "short": "smallint",
            "byte": "tinyint"}.get(name, name)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _run(ctx: Any, vertex: Any, query: str, frames: list[tuple[str, Any]], declared: list[str]) -> Any:
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    from ..spi.errors import RuntimeConfigError
    from ..spi.rows import HIDDEN, kind_literal, with_kind

    def normal(df: Any) -> Any:
        """``df`` with its data columns, then the row kind (as the query's star expansion expects)."""
        df = with_kind(df)
        columns = df.columns
        data = [c for c in columns if c not in HIDDEN]
        if columns == [*data, ROW_KIND]:
            return df
        return df.select(*[F.col("`" + c.replace("`", "``") + "`") for c in data], F.col(ROW_KIND))

    frames = [(name, normal(df)) for name, df in frames]
    first = frames[0][1]
    frames_by_key: dict[str, Any] = {}
    for name, df in frames:
        frames_by_key.setdefault(name.lower(), df)
    one_table = len(frames) == 1 and len(declared) > 1 and analyze_query(query, declared).mode == ROW_WISE
    for name in declared:
        if name.lower() not in frames_by_key:
            # Another pipeline's input (R15 split). A one-table row-wise query runs every input's rows, as
            # SeaTunnel's Sql ignores the FROM name: it reads this pipeline's input. Otherwise (a UNION of
            # the inputs) the absent input is empty here, so each pipeline yields its own share.
            empty = first.where(F.lit(False)) if first.isStreaming else ctx.spark.createDataFrame([], first.schema)
            frames_by_key[name.lower()] = first if one_table else empty
    frames_by_key.setdefault("this", first)
    run = uuid.uuid4().hex[:8]
    views = {key: View(f"__st_{_safe(vertex.id)}_{run}_{_safe(key)}") for key in frames_by_key}
    types: dict[str, str] = {}
    for df in frames_by_key.values():
        for f in df.schema.fields:
            types.setdefault(f.name.lower(), _coarse(f.dataType))

    def type_of(node: Any) -> str | None:
        from sqlglot import exp

        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            return types.get(node.name.lower())
        if isinstance(node, exp.Cast):
            return re.sub(r"\(.*", "", node.to.sql(dialect="spark").lower()).replace("timestamp_ntz", "timestamp")
        return None

    fallback = "this" if len(declared) <= 1 else None

    def clean(message: str) -> str:
        """The message with the inputs' own names, and without the hidden row-kind column."""
        for key, view in views.items():
            message = message.replace(f"`{view.ident}`", key).replace(view.ident, key)
        message = re.sub(rf"(, )?(`[^`]*`\.)?`{ROW_KIND}`", "", message).replace("[, ", "[")
        return message.strip().splitlines()[0] if message.strip() else message

    try:
        sql, carried = prepare_query(query, views, fallback, True, type_of)
    except (ValueError, SqlSyntaxError) as e:
        raise RuntimeConfigError(str(e)) from None
    registered = {key: view for key, view in views.items() if view.ident in sql}  # only the views it reads
    for key, view in registered.items():
        frames_by_key[key].createOrReplaceTempView(view.ident)
    try:
        try:
            result = ctx.spark.sql(sql)
        except AnalysisException as e:
            if ROW_KIND not in str(e):
                raise
            sql, carried = prepare_query(query, views, fallback, False, type_of)  # combine: INSERT rows
            result = ctx.spark.sql(sql)
    except AnalysisException as e:
        raise RuntimeConfigError(f"the query does not run on Spark: {clean(str(e))}") from None
    finally:
        for view in registered.values():
            ctx.spark.catalog.dropTempView(view.ident)
    if carried and ROW_KIND in result.columns:
        return result
    return result.withColumn(ROW_KIND, kind_literal(0))


def apply(ctx: Any, vertex: Any, inputs: dict) -> dict:
    from ..spi.errors import RuntimeConfigError

    query = vertex.config.get("query")
    if not isinstance(query, str) or not query.strip():
        raise RuntimeConfigError("the query must be a non-empty SQL string")
    present = [(name, dataset) for name, dataset in inputs.items()]
    if not present:
        raise RuntimeConfigError("the Sql transform has no input")
    declared = _declared_inputs(ctx, vertex, query)
    marked = vertex.config.get(WATERMARK_KEY) is not None  # streams only: see _watermarked

    def run(frames: list[tuple[str, Any]]) -> Any:
        if not marked:
            return _run(ctx, vertex, query, frames, declared)
        result = _run(ctx, vertex, query, [(n, _watermarked(vertex, n, df)) for n, df in frames], declared)
        return _zone_free(result) if result.isStreaming else result

    if len(present) == 1:
        name, dataset = present[0]
        return {table: run([(name, df)]) for table, df in dataset.items()}
    frames = []
    for name, dataset in present:
        if len(dataset) != 1:
            raise RuntimeConfigError(f"the input '{name}' has {len(dataset)} tables: a Sql with several inputs "
                                     "reads single-table inputs")
        frames.append((name, next(iter(dataset.values()))))
    return {next(iter(present[0][1])): run(frames)}


# ---------------------------------------------------------------- compile time

def _check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    query = plugin.get("query")
    if query is None:
        return []  # reported as a missing required option
    if not isinstance(query, str) or not query.strip():
        return [job.problem("the query must be a non-empty SQL string", plugin, key="query")]
    try:
        analyze_query(query)
    except SqlSyntaxError as e:
        p = job.problem(f"SQL syntax error: {e}", plugin, key="query",
                        hint="the query is Spark SQL; fix it and run validate again")
        if e.line is not None and p.line is not None:
            from dataclasses import replace

            p = replace(p, line=p.line + e.line - 1, col=e.col)
        return [p]
    return _check_streaming(plugin, job, query)


def _check_streaming(plugin: PluginConfig, job: JobConfig, query: str) -> list[Problem]:
    """The ``watermark`` option; in a STREAMING job, a stateful query needs one and some queries cannot run."""
    raw = plugin.get(WATERMARK_KEY)
    _, issues = read_watermarks(raw)
    problems = [job.problem(issue, plugin, key=WATERMARK_KEY,
                            hint='watermark = { column = "ts", delay = "10 seconds" }') for issue in issues]
    if str(job.env_get("job.mode", "BATCH")).strip().upper() != "STREAMING":
        return problems
    found = streaming_problem(query)
    if found is None:
        return problems
    kind, what = found
    if kind == UNSUPPORTED:
        problems.append(job.problem(f"the query uses {what}, which a STREAMING job cannot run on a stream", plugin,
                                    key="query", hint="drop it, or run the job with job.mode = BATCH"))
    elif raw is None:
        problems.append(job.problem(f"the query uses {what}: in a STREAMING job such a stateful query needs a "
                                    "watermark bounding its state", plugin, key="query",
                                    hint='set watermark = { column = "<event-time column>", delay = "10 seconds" } '
                                         "in this Sql block (see docs/streaming.md), or use job.mode = BATCH"))
    return problems


_NUMERIC_RANK = ("tinyint", "smallint", "int", "bigint", "float", "double")
_STRING_NODES = ("Upper", "Lower", "Concat", "ConcatWs", "Substring", "Trim", "Replace", "RegexpReplace", "Initcap",
                 "Pad", "Repeat", "Reverse", "Left", "Right", "DPipe", "TimeToStr", "Chr", "Uuid", "Soundex")
_BOOLEAN_NODES = ("EQ", "NEQ", "GT", "GTE", "LT", "LTE", "And", "Or", "Not", "In", "Like", "ILike", "Is",
                  "Between", "RegexpLike", "Exists", "NullSafeEQ", "Boolean")
_CALL_TYPES = {"date_format": "string", "concat": "string", "decode": "string", "lower": "string",
               "regexp_replace": "string", "regexp_substr": "string", "dayofmonth": "int", "dayofyear": "int",
               "weekday": "int", "regexp_like": "boolean", "to_timestamp_ntz": "timestamp", "to_date": "date",
               "timestampdiff": "bigint", "unix_seconds": "bigint", "upper": "string", "ucase": "string",
               "lcase": "string"}


def _seatunnel_type(sql_type: str) -> str | None:
    """A SeaTunnel type string for a Spark SQL type as sqlglot prints it, where they match."""
    t = sql_type.lower().replace(" ", "")
    simple = {"string": "string", "varchar": "string", "text": "string", "boolean": "boolean", "tinyint": "tinyint",
              "smallint": "smallint", "int": "int", "integer": "int", "bigint": "bigint", "long": "bigint",
              "float": "float", "double": "double", "date": "date", "timestamp_ntz": "timestamp",
              "binary": "bytes"}
    if t in simple:
        return simple[t]
    m = re.fullmatch(r"decimal\((\d+),(\d+)\)", t)
    return f"decimal({m.group(1)}, {m.group(2)})" if m else None


def _sqlglot_type(dtype: DataType) -> str:
    """A SeaTunnel type in Spark SQL type syntax (for sqlglot's schema)."""
    if dtype.name == "array":
        return f"ARRAY<{_sqlglot_type(dtype.element)}>"
    if dtype.name == "map":
        return f"MAP<{_sqlglot_type(dtype.key)}, {_sqlglot_type(dtype.element)}>"
    if dtype.name == "row":
        return "STRUCT<" + ", ".join(f"`{f.name}`: {_sqlglot_type(f.type)}" for f in dtype.fields) + ">"
    return {"bytes": "BINARY", "timestamp": "TIMESTAMP_NTZ", "null": "STRING", "time": "STRING"}.get(
        dtype.name, str(dtype).upper().replace(" ", ""))


def _infer(node: Any, resolve: Callable[[Any], DataType | None]) -> DataType | None:
    """The Spark result type of ``node`` where it is certain, as a SeaTunnel type; else None."""
    from sqlglot import exp

    from ..spi.schema import DataType, parse_type

    kind = type(node).__name__

    def named(name: str | None) -> DataType | None:
        return parse_type(name) if name else None

    if isinstance(node, (exp.Alias, exp.Paren)):
        return _infer(node.this, resolve)
    if isinstance(node, exp.Column):
        return resolve(node)
    if isinstance(node, exp.Dot):  # a row's field: r.x
        row = _infer(node.this, resolve)
        found = (next((f for f in row.fields if f.name.lower() == node.name.lower()), None)
                 if row and row.name == "row" else None)
        return found.type if found is not None else None
    if isinstance(node, exp.Cast):
        return named(_seatunnel_type(node.to.sql(dialect="spark")))
    if isinstance(node, exp.Literal):
        if node.is_string:
            return DataType("string")
        digits = node.this
        if re.fullmatch(r"\d+", digits):
            return DataType("int" if int(digits) < 2**31 else "bigint")
        m = re.fullmatch(r"(\d*)\.(\d+)", digits)
        if m:
            whole = m.group(1).lstrip("0")
            scale = len(m.group(2))
            return DataType("decimal", precision=max(len(whole) + scale, scale, 1), scale=scale)
        return None
    if kind in _BOOLEAN_NODES:
        return DataType("boolean")
    if kind in _STRING_NODES:
        return DataType("string")
    if kind in ("Pi", "Rand"):
        return DataType("double")
    if kind == "Count":
        return DataType("bigint")
    if isinstance(node, exp.Anonymous):
        return named(_CALL_TYPES.get(node.name.lower()))
    if isinstance(node, exp.Neg):
        return _infer(node.this, resolve)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.Div)):
        left, right = _infer(node.this, resolve), _infer(node.expression, resolve)
        if left is None or right is None or not (left.is_numeric and right.is_numeric):
            return None
        names = {left.name, right.name}
        if names & {"float", "double"}:
            return DataType("double" if "double" in names or isinstance(node, exp.Div) or "decimal" in names
                            else "float")
        if "decimal" in names:
            return None  # Spark's decimal precision rules: not inferred
        if isinstance(node, exp.Div):
            return DataType("double")
        return DataType(max(left.name, right.name, key=_NUMERIC_RANK.index))
    if isinstance(node, (exp.Case, exp.Coalesce)):
        parts = ([i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
                 if isinstance(node, exp.Case) else [node.this, *node.expressions])
        found = [_infer(p, resolve) for p in parts if p is not None and not isinstance(p, exp.Null)]
        return found[0] if found and None not in found and len({str(t) for t in found}) == 1 else None
    return None


def _schema_problem(message: str, plugin: PluginConfig, job: JobConfig,
                    known: Mapping[str, Schema]) -> Problem | None:
    """A problem for a column the query reads that its input lacks; None for the qualifier's other complaints
    (Spark decides those at run time)."""
    m = re.search(r"Column '([^']+)' could not be resolved|Unknown column: (\S+)", message)
    if not m:
        return None
    column = (m.group(1) or m.group(2)).strip('"`')
    written = re.search(rf"(?i)\b({re.escape(column)})\b", plugin.get("query") or "")
    column = written.group(1) if written else column  # as the query spells it
    fields = list(dict.fromkeys(f for s in known.values() for f in s.names))
    return job.problem(f"the query references the column '{column}', which does not exist in its input",
                       plugin, key="query", hint="the fields are: " + ", ".join(fields))


def schema(plugin: PluginConfig, job: JobConfig, inputs: list[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    from sqlglot import exp
    from sqlglot.errors import OptimizeError
    from sqlglot.optimizer.qualify import qualify

    from ..spi.options import as_list
    from ..spi.schema import Field, Schema

    query = plugin.get("query")
    if not inputs or any(s is None for s in inputs) or not isinstance(query, str):
        return None, []
    try:
        analysis = analyze_query(query)
    except SqlSyntaxError:
        return None, []  # reported by the check
    names = [str(x).strip() for x in as_list(plugin.get("plugin_input", plugin.get("source_table_name")))]
    if len(names) == len(inputs) and names:
        known = {n.lower(): s for n, s in zip(names, inputs, strict=True)}
        for table in analysis.tables:
            if table.lower() not in known and table.lower() != "this" and len(inputs) > 1:
                return None, [job.problem(f"the query reads the table '{table}', which is not an input of this Sql",
                                          plugin, key="query", hint="its inputs are: " + ", ".join(names))]
    elif len(inputs) == 1:
        known = {}
    else:
        return None, []  # implicit multi-input wiring: tables are the inputs, checked by the compiler
    lax = len(inputs) == 1
    if lax:
        for table in analysis.tables:
            known.setdefault(table.lower(), inputs[0])
    known.setdefault("this", inputs[0])

    try:
        tree = to_spark(_parse(query).copy(), lambda node: None)
    except FunctionError as e:
        return None, [job.problem(str(e), plugin, key="query")]
    # Spark resolves names case-insensitively, backticks or not: compare lower-cased names
    mapping = {name: {f.name.lower(): _sqlglot_type(f.type) for f in s.fields} for name, s in known.items()}
    lowered = tree.copy()
    for ident in lowered.find_all(exp.Identifier):
        ident.set("this", ident.this.lower())
    try:
        qualified = qualify(lowered, schema=mapping, dialect="spark", validate_qualify_columns=True,
                            quote_identifiers=False, identify=False)
    except OptimizeError as e:
        problem = _schema_problem(str(e), plugin, job, known)
        return None, [problem] if problem is not None else []
    except Exception:  # sqlglot's qualifier may not follow every Spark construct: no check then
        return None, []

    # output names from the written query, types from the qualified one (stars expanded alike)
    leftmost = tree
    while isinstance(leftmost, (exp.SetOperation, exp.Subquery)):
        leftmost = leftmost.left if isinstance(leftmost, exp.SetOperation) else leftmost.this
    qleft = qualified
    while isinstance(qleft, (exp.SetOperation, exp.Subquery)):
        qleft = qleft.left if isinstance(qleft, exp.SetOperation) else qleft.this
    if not isinstance(leftmost, exp.Select) or not isinstance(qleft, exp.Select):
        return None, []
    aliases: dict[str, Schema] = {}
    for table in qleft.find_all(exp.Table):
        if table.find_ancestor(exp.Select) is qleft and table.name.lower() in known:
            aliases[table.alias_or_name.lower()] = known[table.name.lower()]

    def resolve(column: Any) -> DataType | None:
        """The input type of a qualified column (``t.c``), or of a row's field (``t.c.f``)."""
        parts = [p.name for p in column.parts]
        source = aliases.get(parts[0].lower()) if len(parts) > 1 else None
        found = source.get(parts[1]) if source is not None else None
        dtype = found.type if found is not None else None
        for name in parts[2:]:
            inner = (next((f for f in dtype.fields if f.name.lower() == name.lower()), None)
                     if dtype and dtype.name == "row" else None)
            dtype = inner.type if inner is not None else None
        return dtype

    from_ = _arg(leftmost, "from")
    sources = ([from_.this] if from_ is not None else []) + [j.this for j in leftmost.args.get("joins") or []]
    fields: list[Field] = []
    position = 0
    for projection in leftmost.expressions:
        star = projection if isinstance(projection, exp.Star) else (
            projection.this if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star) else None)
        if star is not None:
            expanded = []
            for source in sources:
                if not isinstance(source, exp.Table) or source.name.lower() not in known:
                    return None, []
                if isinstance(projection, exp.Column) and projection.table.lower() != source.alias_or_name.lower():
                    continue
                expanded += list(known[source.name.lower()].fields)
            fields += expanded
            position += len(expanded)
            continue
        if isinstance(projection, exp.Alias):
            name = projection.alias
        elif isinstance(projection, exp.Column):
            name = projection.name
        else:
            return None, []  # Spark names it by its SQL text: not inferred
        if position >= len(qleft.expressions):
            return None, []
        dtype = _infer(qleft.expressions[position], resolve)
        if dtype is None:
            return None, []
        fields.append(Field(name, dtype))
        position += 1
    return Schema(tuple(fields)), []


class Sql(Connector, SchemaInference, Transform, ReadsTablesByName, PerInputSplit):
    name = NAME
    kinds = frozenset({TRANSFORM})
    required = ("query",)
    description = "Runs a Spark SQL query over its input(s)."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return _check(plugin, job)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return schema(plugin, job, list(inputs))

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        return apply(ctx, vertex, inputs)


    def input_tables(self, plugin: PluginConfig) -> tuple[str, ...] | None:
        query = plugin.get("query")
        if not isinstance(query, str):
            return None
        try:
            return analyze_query(query).tables
        except SqlSyntaxError:  # reported by check()
            return None

    def per_input(self, plugin: PluginConfig, inputs: tuple[str, ...]) -> PerInput:
        """A query that joins or aggregates across its inputs cannot run per input; a UNION (not ALL)
        then deduplicates within each pipeline only."""
        query = plugin.get("query")
        if not isinstance(query, str):
            return PerInput()
        try:
            analysis = analyze_query(query, inputs)
        except SqlSyntaxError:
            return PerInput()
        if analysis.mode == COMBINING:
            return PerInput(blocker=analysis.reason)
        if analysis.mode == UNION and analysis.union_distinct:
            return PerInput(warning="UNION removes duplicates within each pipeline only, since the job splits "
                                    "per input", warning_key="query",
                            hint="write UNION ALL, or deduplicate in the sink (primary_keys)")
        return PerInput()


CONNECTOR = Sql()
