"""SeaTunnel's system functions and CAST as native Spark SQL expressions.

Rules kept from SeaTunnel:

* CAST(BIGINT AS TIMESTAMP) reads epoch milliseconds (in the session's zone, UTC); CAST(INT AS DATE)
  reads ``yyyyMMdd`` and CAST(INT AS TIME) ``HHmmss``; a TIMESTAMP or DATE casts to TIME (midnight for
  a date) and a TIME to today's TIMESTAMP; CAST(x AS DECIMAL(p, s)) rounds up (towards positive
  infinity) at the scale; CAST(x AS BYTES) is the UTF-8 bytes of the value's text; CAST(x AS STRING)
  writes a timestamp as Java does (``2021-04-08T13:34:45``). TIMESTAMP and DATETIME have no zone
  (TIMESTAMP_NTZ); BYTE is TINYINT, LONG BIGINT.
* COALESCE, IFNULL (two arguments) and NULLIF take their first argument's type.
* MULTI_IF(cond, value, ..., else) is a CASE (a later SeaTunnel function, kept).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from .builders import (
    INTEGRAL,
    FunctionError,
    TypeOf,
    arity,
    call,
    cast,
    family,
    full_type,
    kind,
    number,
    template,
)
from .string_functions import java_string

_INT_DATE = "MAKE_DATE(_x DIV 10000, (_x DIV 100) % 100, _x % 100)"
_INT_TIME = "MAKE_TIME(CAST(_x DIV 10000 AS INT), CAST((_x DIV 100) % 100 AS INT), CAST(_x % 100 AS DECIMAL(16, 6)))"
_TIMESTAMP_TIME = "MAKE_TIME(HOUR(_x), MINUTE(_x), CAST(EXTRACT(SECOND FROM _x) AS DECIMAL(16, 6)))"
_DATE_TIME = "CASE WHEN _x IS NULL THEN NULL ELSE MAKE_TIME(0, 0, 0) END"
_TIMESTAMPS = ("timestamp", "timestamp_ntz", "timestamptz", "datetime", "timestamp_ltz")


def _decimal(x: Any, target: Any, source: str | None) -> Any:
    """CAST(x AS DECIMAL(p, s)) rounding up at the scale, as SeaTunnel's ``setScale(s, CEILING)``."""
    params = [int(p.this.this) for p in target.expressions if isinstance(p.this, exp.Literal)]
    precision, scale = [*params, 10, 0][:2] if params else (10, 0)
    if source in INTEGRAL:
        return None
    if source == "decimal":
        widened = x.copy()
    else:
        widened = cast(x, f"decimal(38, {max(scale, min(38 - (precision - scale), 18))})")
    return cast(call("ceil", widened, number(scale)), f"decimal({precision}, {scale})")


def rewrite_cast(node: Any, type_of: TypeOf) -> Any:
    """SeaTunnel's CAST in Spark; None where Spark's CAST means the same."""
    x, target = node.this, node.to
    to = target.sql(dialect="spark").lower().replace(" ", "")
    to_family, source = family(to), kind(x, type_of)
    if to in _TIMESTAMPS:
        if source == "bigint":
            return cast(call("timestamp_millis", x), "timestamp_ntz")
        if source == "time":
            return call("make_timestamp_ntz", call("current_date"), x)
        return cast(x, "timestamp_ntz") if to != "timestamp_ntz" else None
    if to == "date" and source in ("int", "smallint", "tinyint"):
        return template(_INT_DATE, x=x)
    if to_family == "time":
        if source in ("int", "smallint", "tinyint"):
            return template(_INT_TIME, x=x)
        if source == "timestamp":
            return template(_TIMESTAMP_TIME, x=x)
        return template(_DATE_TIME, x=x) if source == "date" else None
    if to_family in ("binary", "varbinary"):
        return None if source in ("string", "binary", None) else cast(java_string(x, type_of), "binary")
    if to_family == "string":
        return java_string(x, type_of) if source == "timestamp" else None
    if to_family == "decimal":
        return _decimal(x, target, source)
    return None


def _first_type(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """COALESCE/IFNULL/NULLIF: Spark's function, cast to the first argument's type where another differs."""
    if name in ("IFNULL", "NULLIF"):
        arity(name, a, 2)
    elif not a:
        raise FunctionError("COALESCE takes at least one argument")
    result = call(name.lower(), *a)
    first = full_type(a[0], type_of)
    others = {full_type(x, type_of) for x in a[1:] if not isinstance(x, exp.Null)}
    return cast(result, first) if first and others - {first} else result


def _multi_if(name: str, a: list[Any], type_of: TypeOf) -> Any:
    n = len(a)
    if n < 3 or n % 2 == 0:
        raise FunctionError("MULTI_IF takes condition, value pairs and a final value")
    ifs = [exp.If(this=a[i].copy(), true=a[i + 1].copy()) for i in range(0, n - 1, 2)]
    return exp.Case(ifs=ifs, default=a[-1].copy())


def _uuid(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 0)
    return None


#: system functions by upper-case name
SYSTEM_REWRITERS = {"COALESCE": _first_type, "IFNULL": _first_type, "NULLIF": _first_type, "MULTI_IF": _multi_if,
                    "UUID": _uuid}
SYSTEM_TYPES = {"UUID": "string"}
FIRST_ARGUMENT_TYPE = ("COALESCE", "IFNULL", "NULLIF")
