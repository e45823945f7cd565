"""SeaTunnel's date and time functions as native Spark SQL expressions.

Rules kept from SeaTunnel (a timestamp has no zone: Spark's TIMESTAMP_NTZ; "now" is the session's
zone, UTC):

* DATEADD/TIMESTAMPADD(x, n[, unit]) keeps ``x``'s type (DAY without a unit); ``n`` is truncated to
  a whole number. A unit that does not apply to the value (HOUR on a DATE, DAY on a TIME) leaves it
  unchanged; a TIME wraps around midnight.
* DATEDIFF(a, b[, unit]) is ``b - a`` in whole units (DAY without a unit) as a BIGINT; YEAR, MONTH and
  DAY compare the dates only, and MONTH is the months part of the period (``DATEDIFF`` of 2020-01-01
  and 2021-03-01 in MONTH is 2), as java.time.Period gives it.
* EXTRACT and the field functions (HOUR, MINUTE, SECOND, MONTH, YEAR, QUARTER, DAY_OF_*) return INT;
  EXTRACT(MILLISECOND) is the millisecond of the second, EXTRACT(DAYOFWEEK) and DAY_OF_WEEK run
  Monday = 1 to Sunday = 7; WEEK is java.time's ISO week of the year plus one.
* PARSEDATETIME/TO_DATE(s, pattern): a TIMESTAMP when the pattern holds ``yy`` and ``mm``, a DATE with
  ``yy`` only, a TIME with ``mm`` only, else a compile-time error; IS_DATE(NULL, pattern) is TRUE.
* DATE_TRUNC returns a TIMESTAMP; NOW and CURRENT_TIMESTAMP are the local timestamp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from .builders import FunctionError, TypeOf, arity, call, cast, kind, literal, number, template, text, unit

_DATE_UNITS = {"YEAR": 0, "MONTH": 1, "WEEK": 2, "DAY": 3}  # make_interval(years, months, weeks, days, ...)
_TIME_UNITS = {"HOUR": 4, "MINUTE": 5, "SECOND": 6}
_DATEADD_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
_DATEDIFF_UNITS = ("YEAR", "MONTH", "WEEK", "DAY", "DAYTIME", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
_TRUNC_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
_SECONDS = {"HOUR": 3600, "MINUTE": 60, "SECOND": 1}
_ISO_WEEK = ("CAST(FLOOR((7 + CASE WHEN PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) + 1 > 4 "
             "THEN 7 - PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) ELSE -PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) END "
             "+ DAYOFYEAR(_x) - 1) / 7) AS INT)")  # java.time WeekFields.ISO.weekOfYear()
_TIME_OF_DAY = "PMOD(HOUR(_x) * 3600 + MINUTE(_x) * 60 + EXTRACT(SECOND FROM _x) + _n, 86400)"
_MAKE_TIME = ("MAKE_TIME(CAST(FLOOR(_t / 3600) AS INT), CAST(FLOOR(PMOD(_t, 3600) / 60) AS INT), "
              "CAST(PMOD(_t, 60) AS DECIMAL(16, 6)))")
_IS_DATE = ("CASE WHEN _s IS NULL THEN TRUE WHEN NOT (_f LIKE '%yy%' OR _f LIKE '%mm%') THEN FALSE "
            "ELSE TRY_TO_TIMESTAMP(_s, _f) IS NOT NULL END")
#: EXTRACT fields Spark lacks or means otherwise, as expressions of ``_x``
_EXTRACT_TEMPLATES = {
    "DAYOFWEEK": "WEEKDAY(_x) + 1",  # Monday = 1
    "ISODOW": "WEEKDAY(_x) + 1",
    "DOW": "DAYOFWEEK(_x) - 1",  # Sunday = 0
    "DOY": "DAYOFYEAR(_x)",
    "DAYOFYEAR": "DAYOFYEAR(_x)",
    "SECOND": "SECOND(_x)",  # whole seconds
    "MILLISECOND": "CAST(EXTRACT(SECOND FROM _x) * 1000 AS INT) % 1000",  # of the second
    "MICROSECOND": "CAST(EXTRACT(SECOND FROM _x) * 1000000 AS INT)",
    "EPOCH": "UNIX_SECONDS(CAST(_x AS TIMESTAMP))",
    "ISOYEAR": "EXTRACT(YEAROFWEEK FROM _x)",
    "CENTURY": "CASE WHEN YEAR(_x) > 0 THEN (YEAR(_x) - 1) DIV 100 + 1 ELSE YEAR(_x) DIV 100 END",
    "MILLENNIUM": "CASE WHEN YEAR(_x) > 0 THEN (YEAR(_x) - 1) DIV 1000 + 1 ELSE YEAR(_x) DIV 1000 END",
    "DECADE": "YEAR(_x) DIV 10",
    "WEEK": _ISO_WEEK,
}


def _whole(count: Any) -> Any:
    return cast(cast(count, "bigint"), "int")


def _time_plus(x: Any, count: Any, chosen: str) -> Any:
    """A TIME plus ``count`` hours, minutes, seconds or milliseconds, around the clock."""
    if chosen == "MILLISECOND":
        shift: Any = exp.Div(this=cast(cast(count, "bigint"), "decimal(20, 6)"), expression=number(1000))
    else:
        shift = exp.Mul(this=cast(count, "bigint"), expression=number(_SECONDS[chosen]))
    return template(_MAKE_TIME, t=template(_TIME_OF_DAY, x=x, n=shift))


def _dateadd(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """``x`` plus ``n`` units, in ``x``'s type."""
    arity(name, a, 2, 3)
    if len(a) == 3 and literal(a[2]) is None:
        raise FunctionError(f"{name}: the unit must be a string literal such as 'DAY'")
    x, count = a[0], a[1]
    chosen = "DAY" if len(a) == 2 else unit(a[2], _DATEADD_UNITS, name)
    found = kind(x, type_of)
    clock = chosen in _TIME_UNITS or chosen == "MILLISECOND"
    if (found == "date" and clock) or (found == "time" and not clock):
        return x.copy()  # SeaTunnel leaves a value the unit does not apply to as it is
    if found == "time":
        return _time_plus(x, count, chosen)
    amounts: list[Any] = [number(0)] * 7
    if chosen == "QUARTER":
        amounts[1] = exp.Mul(this=_whole(count), expression=number(3))
    elif chosen in _DATE_UNITS:
        amounts[_DATE_UNITS[chosen]] = _whole(count)
    elif chosen in _TIME_UNITS:
        amounts[_TIME_UNITS[chosen]] = _whole(count) if chosen != "SECOND" else cast(cast(count, "bigint"),
                                                                                     "decimal(18, 6)")
    else:  # MILLISECOND
        amounts[6] = cast(exp.Div(this=cast(cast(count, "bigint"), "decimal(18, 6)"), expression=number(1000)),
                          "decimal(18, 6)")
    return exp.Add(this=x.copy(), expression=call("make_interval", *amounts))


def _datediff(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """DATEDIFF(a, b[, unit]): ``b - a`` in whole units, a BIGINT."""
    arity(name, a, 2, 3)
    if len(a) == 3 and literal(a[2]) is None:
        raise FunctionError("DATEDIFF: the unit must be a string literal such as 'DAY'")
    first, second = a[0], a[1]
    chosen = "DAY" if len(a) == 2 else unit(a[2], _DATEDIFF_UNITS, name)
    if chosen == "DAY":
        return cast(call("datediff", cast(second, "date"), cast(first, "date")), "bigint")
    if chosen in ("YEAR", "MONTH"):
        diff = call("timestampdiff", exp.Var(this=chosen), cast(first, "date"), cast(second, "date"))
        return diff if chosen == "YEAR" else exp.Mod(this=diff, expression=number(12))
    return call("timestampdiff", exp.Var(this="DAY" if chosen == "DAYTIME" else chosen), first, second)


def _date_trunc(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2)
    if literal(a[0]) is not None:
        return None  # Spark's date_trunc('UNIT', x)
    return cast(call("date_trunc", text(unit(a[1], _TRUNC_UNITS, name)), a[0]), "timestamp_ntz")


def _formatdatetime(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2)
    return call("date_format", a[0], a[1])


def parsed_type(pattern: str | None, name: str = "PARSEDATETIME") -> str:
    """SeaTunnel's result type of PARSEDATETIME/TO_DATE by its pattern's text."""
    if pattern is None:
        return "timestamp"
    if "yy" in pattern and "mm" in pattern:
        return "timestamp"
    if "yy" in pattern:
        return "date"
    if "mm" in pattern:
        return "time"
    raise FunctionError(f"{name}: the pattern {pattern!r} has neither a year (yy) nor minutes (mm)")


def _parse_datetime(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """PARSEDATETIME/TO_DATE(s, pattern): a timestamp, a date or a time, as the pattern's text says."""
    if len(a) == 1 and name == "PARSEDATETIME":
        return call("to_timestamp_ntz", a[0])
    arity(name, a, 2)
    found = parsed_type(literal(a[1]), name)
    return call({"date": "to_date", "time": "to_time"}.get(found, "to_timestamp_ntz"), a[0], a[1])


def _is_date(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2)
    return template(_IS_DATE, s=a[0], f=a[1])


def _day_or_month_name(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return call("date_format", a[0], text("EEEE" if name == "DAYNAME" else "MMMM"))


def _day_of(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    if name == "DAY_OF_WEEK":
        return exp.Add(this=call("weekday", a[0]), expression=number(1))
    return call("dayofmonth" if name == "DAY_OF_MONTH" else "dayofyear", a[0])


def _week(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return exp.Add(this=template(_ISO_WEEK, x=a[0]), expression=number(1))


def _from_unixtime(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2, 3)
    if len(a) == 2:
        return call("from_unixtime", cast(a[0], "bigint"), a[1])
    return call("date_format", call("from_utc_timestamp", call("timestamp_seconds", a[0]), a[2]), a[1])


def _now(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 0)
    return call("localtimestamp")


def _field(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return None


def extract(node: Any) -> Any:
    """SeaTunnel's EXTRACT(field FROM x) in Spark; None where Spark's own EXTRACT means the same."""
    field, x = node.name.upper(), node.expression
    key = field[:-1] if field in ("MILLISECONDS", "MICROSECONDS") else field
    return template(_EXTRACT_TEMPLATES[key], x=x) if key in _EXTRACT_TEMPLATES else None


#: date and time functions by upper-case name
DATETIME_REWRITERS: dict[str, Callable[[str, list[Any], TypeOf], Any]] = {
    "DATEADD": _dateadd, "TIMESTAMPADD": _dateadd, "DATEDIFF": _datediff, "DATE_TRUNC": _date_trunc,
    "DAYNAME": _day_or_month_name, "MONTHNAME": _day_or_month_name, "DAY_OF_WEEK": _day_of, "DAY_OF_MONTH": _day_of,
    "DAY_OF_YEAR": _day_of, "FORMATDATETIME": _formatdatetime, "PARSEDATETIME": _parse_datetime,
    "TO_DATE": _parse_datetime, "IS_DATE": _is_date, "WEEK": _week, "FROM_UNIXTIME": _from_unixtime, "NOW": _now,
    **{f: _field for f in ("HOUR", "MINUTE", "SECOND", "MONTH", "YEAR", "QUARTER")},
}
#: result types of the date and time functions whose rewrite does not end in a CAST (for the compiled schema)
DATETIME_TYPES = {**dict.fromkeys(("DAYNAME", "MONTHNAME", "FORMATDATETIME", "FROM_UNIXTIME"), "string"),
                  **dict.fromkeys(("DAY_OF_WEEK", "DAY_OF_MONTH", "DAY_OF_YEAR", "WEEK", "HOUR", "MINUTE", "SECOND",
                                   "MONTH", "YEAR", "QUARTER"), "int"),
                  "DATEDIFF": "bigint", "IS_DATE": "boolean", "NOW": "timestamp"}
