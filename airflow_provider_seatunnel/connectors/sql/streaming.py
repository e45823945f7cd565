"""A Sql transform in a STREAMING job (docs/streaming.md): what a stream can run, and watermarks.

A stateful query (join, aggregation, DISTINCT, UNION, subquery) needs the ``watermark`` option
(``{ column, delay [, input] }``), applied to the streaming inputs; window functions, ORDER BY,
LIMIT, INTERSECT and EXCEPT cannot run on a stream. Both are compile-time errors
(:func:`streaming_problem`, :func:`check_streaming`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...spi.rows import quote
from .analysis import parse
from .options import WATERMARK_KEY, watermark_of

if TYPE_CHECKING:
    from ...spi.options import JobConfig, PluginConfig, Problem

#: stream operators Spark keeps state for: allowed with a ``watermark``
STATEFUL = "stateful"
#: operators a stream cannot run at all (in append mode, which the streaming sinks use)
UNSUPPORTED = "unsupported"
_INTERVAL_UNITS = ("microsecond", "millisecond", "second", "minute", "hour", "day", "week")
_INTERVAL = re.compile(r"(?i)\s*(?:interval\s+)?(?:\d+(?:\.\d+)?\s*(?:" + "|".join(_INTERVAL_UNITS) + r")s?\s*)+")


def _unsupported(tree: Any) -> list[str]:
    """What in ``tree`` a stream cannot run: window functions (OVER), ORDER BY, LIMIT, INTERSECT, EXCEPT."""
    from sqlglot import exp

    found = [node.key.upper() for node in tree.find_all(exp.Intersect, exp.Except)]
    if tree.find(exp.Window):
        found.append("a window function (OVER)")
    if any(not isinstance(node.parent, exp.Window) for node in tree.find_all(exp.Order)):
        found.append("ORDER BY")
    if any(node.args.get("limit") for node in tree.find_all(exp.Select, exp.Union)):
        found.append("a LIMIT")
    return found


def _stateful(tree: Any) -> list[str]:
    """What in ``tree`` Spark keeps state for across micro-batches: joins, aggregations, DISTINCT,
    UNION (distinct), subqueries."""
    from sqlglot import exp

    found: list[str] = []
    for select in tree.find_all(exp.Select):
        if select.args.get("joins"):
            found.append("a JOIN")
        if select.args.get("group") or select.find(exp.AggFunc):
            found.append("an aggregation")
        if select.args.get("distinct"):
            found.append("SELECT DISTINCT")
    if any(u.args.get("distinct") for u in tree.find_all(exp.Union)):
        found.append("UNION (without ALL)")
    if any(isinstance(q.parent, (exp.In, exp.Exists)) or isinstance(q, exp.Exists)
           for q in tree.find_all(exp.Subquery, exp.Exists)) or any(i.args.get("query") for i in tree.find_all(exp.In)):
        found.append("a subquery")
    return found


def streaming_problem(query: str) -> tuple[str, str] | None:
    """``(STATEFUL or UNSUPPORTED, what)`` when ``query`` cannot run row by row on a stream, else None.

    Stateful (Spark keeps state across micro-batches; a watermark bounds it): joins, aggregations,
    DISTINCT, UNION (distinct), subqueries. Unsupported on a stream: window functions (OVER),
    ORDER BY, LIMIT, INTERSECT and EXCEPT. Raises :class:`.analysis.SqlSyntaxError`.
    """
    tree = parse(query)
    unsupported = _unsupported(tree)
    if unsupported:
        return UNSUPPORTED, ", ".join(dict.fromkeys(unsupported))
    stateful = _stateful(tree)
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


def _read_watermark(item: Any, where: str, issues: list[str]) -> Watermark | None:
    """One watermark object, or None (with what is wrong with it added to ``issues``)."""
    if not isinstance(item, Mapping):
        issues.append(f"{where}expected {{ column = \"ts\", delay = \"10 seconds\" }}, found {item!r}")
        return None
    unknown = sorted(set(item) - {"column", "delay", "input"})
    if unknown:
        issues.append(f"{where}unknown key(s) {', '.join(unknown)}: use column, delay and input")
    column, delay, source = item.get("column"), item.get("delay"), item.get("input")
    if not isinstance(column, str) or not column.strip():
        issues.append(f"{where}column must name the event-time column")
        return None
    if isinstance(delay, int) and not isinstance(delay, bool) and delay >= 0:
        delay = f"{delay} milliseconds"
    elif isinstance(delay, str) and delay.strip().isdigit():
        delay = f"{int(delay.strip())} milliseconds"
    if not isinstance(delay, str) or not _INTERVAL.fullmatch(delay):
        issues.append(f"{where}delay must be an interval such as \"10 seconds\" or \"1 minute\" (or a number "
                      f"of ms), found {delay!r}")
        return None
    if source is not None and (not isinstance(source, str) or not source.strip()):
        issues.append(f"{where}input must name one of the Sql's inputs")
        return None
    return Watermark(column.strip(), delay.strip(), source.strip() if source else None)


def read_watermarks(value: Any) -> tuple[list[Watermark], list[str]]:
    """The watermarks of a ``watermark`` option (an object or a list of objects) and what is wrong with it.

    ``delay`` is a Spark interval (``"10 seconds"``, ``"1 minute 30 seconds"``) or a number of ms."""
    if value is None:
        return [], []
    items = value if isinstance(value, list) else [value]
    found: list[Watermark] = []
    issues: list[str] = []
    for i, item in enumerate(items):
        mark = _read_watermark(item, f"item {i}: " if isinstance(value, list) else "", issues)
        if mark is not None:
            found.append(mark)
    return found, issues


def check_streaming(plugin: PluginConfig, job: JobConfig, query: str) -> list[Problem]:
    """The ``watermark`` option; in a STREAMING job, a stateful query needs one and some queries cannot run."""
    raw = watermark_of(plugin.options)
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


# ---------------------------------------------------------------- run time

def watermarked(vertex: Any, name: str, df: Any) -> Any:
    """``df`` (the input ``name``) with the vertex's watermark when it is a stream; event-time columns of
    SeaTunnel's timestamp type (no zone) are read as Spark TIMESTAMP (UTC), as watermarks require."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ...spi.errors import RuntimeConfigError

    if not getattr(df, "isStreaming", False):
        return df
    marks, issues = read_watermarks(watermark_of(vertex.config))
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
            df = df.withColumn(found.name, F.col(quote(found.name)).cast("timestamp"))
        df = df.withWatermark(found.name, mark.delay)
    return df


def zone_free(df: Any) -> Any:
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
    return df.select(*[F.col(quote(f.name)).cast(new).alias(f.name) if new != f.dataType else F.col(quote(f.name))
                       for f, new in changed])
