"""SeaTunnel's SQL functions and types rewritten to native Spark SQL expressions (no UDFs).

* CONCAT and ``||`` ignore nulls; DATEADD/TIMESTAMPADD(x, n, 'UNIT'), DATEDIFF(a, b, 'UNIT'),
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
  substitution.

Each SeaTunnel function has a rewriter in :data:`REWRITERS`, given the call's arguments; one
that returns None leaves the call to Spark's function of the same name (and arity). This
module imports sqlglot: import it where a query is rewritten, not at DAG-parse time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

#: ``type_of(expression)``: a coarse type ("date", "timestamp", "string", "array", "binary", a numeric
#: name...) where known, to choose between forms (a date or a timestamp, strings or arrays)
TypeOf = Callable[[Any], str | None]
#: ``rewrite(name, arguments, type_of)``: the Spark expression of a SeaTunnel call, or None for Spark's own
Rewriter = Callable[[str, list[Any], TypeOf], Any]


class FunctionError(ValueError):
    """A SeaTunnel function used in a way that has no Spark translation (a bad unit, flag, arity)."""


def no_types(node: Any) -> str | None:
    """The ``type_of`` that knows no type."""
    return None


# ---------------------------------------------------------------- building blocks

_DATE_UNITS = {"YEAR": 0, "MONTH": 1, "WEEK": 2, "DAY": 3}  # make_interval(years, months, weeks, days, ...)
_TIME_UNITS = {"HOUR": 4, "MINUTE": 5, "SECOND": 6}
_DATEADD_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
_DATEDIFF_UNITS = ("YEAR", "MONTH", "WEEK", "DAY", "DAYTIME", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
_TRUNC_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
_NUMBER_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double")
_ISO_WEEK = ("CAST(FLOOR((7 + CASE WHEN PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) + 1 > 4 "
             "THEN 7 - PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) ELSE -PMOD(DAYOFYEAR(_x) - WEEKDAY(_x) - 1, 7) END "
             "+ DAYOFYEAR(_x) - 1) / 7) AS INT)")  # java.time WeekFields.ISO.weekOfYear()
_TRUNC = "CASE WHEN _x < 0 THEN CEIL(_x, _n) ELSE FLOOR(_x, _n) END"
_INSERT = ("CASE WHEN _s IS NULL THEN _a WHEN _a IS NULL THEN _s "
           "WHEN _p < 1 OR _l <= 0 OR LENGTH(_a) = 0 OR _p - 1 > LENGTH(_s) THEN _s "
           "ELSE CONCAT(SUBSTRING(_s, 1, _p - 1), _a, SUBSTRING(_s, _p + _l)) END")
_IS_DATE = "CASE WHEN _s IS NULL OR _s = '' THEN FALSE ELSE TRY_TO_TIMESTAMP(_s, _f) IS NOT NULL END"
#: EXTRACT fields Spark lacks, as expressions of ``_x``
_EXTRACT_TEMPLATES = {
    "CENTURY": "CASE WHEN YEAR(_x) > 0 THEN (YEAR(_x) - 1) DIV 100 + 1 ELSE YEAR(_x) DIV 100 END",
    "MILLENNIUM": "CASE WHEN YEAR(_x) > 0 THEN (YEAR(_x) - 1) DIV 1000 + 1 ELSE YEAR(_x) DIV 1000 END",
    "DECADE": "YEAR(_x) DIV 10",
    "MILLISECOND": "CAST(EXTRACT(SECOND FROM _x) * 1000 AS INT)",
    "MICROSECOND": "CAST(EXTRACT(SECOND FROM _x) * 1000000 AS INT)",
    "WEEK": _ISO_WEEK,
}


@lru_cache(maxsize=64)
def _parsed_template(text: str) -> Any:
    return sqlglot.parse_one(text, read="spark")


def template(text: str, **parts: Any) -> Any:
    """The expression ``text`` with its columns ``_name`` replaced by copies of ``parts[name]``."""
    tree = _parsed_template(text).copy()
    for column in list(tree.find_all(exp.Column)):
        if column.name.startswith("_") and column.name[1:] in parts and not column.table:
            column.replace(parts[column.name[1:]].copy())
    return tree


def call(name: str, *args: Any) -> Any:
    return exp.Anonymous(this=name, expressions=[a.copy() for a in args])


def text(value: str) -> Any:
    return exp.Literal.string(value)


def number(value: int) -> Any:
    return exp.Literal.number(value)


def cast(node: Any, to: str) -> Any:
    return exp.Cast(this=node.copy(), to=exp.DataType.build(to, dialect="spark"))


def literal(node: Any) -> str | None:
    """The value of a string literal, None for any other expression."""
    return node.this if isinstance(node, exp.Literal) and node.is_string else None


def unit(node: Any, allowed: Sequence[str], function: str) -> str:
    """The unit a string literal names, upper-cased; FunctionError unless it is ``allowed``."""
    value = (literal(node) or "").strip().upper()
    if value not in allowed:
        raise FunctionError(f"{function}: unsupported unit {literal(node)!r}; use one of {', '.join(allowed)}")
    return value


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


def concat(args: list[Any], type_of: TypeOf) -> Any:
    """SeaTunnel's CONCAT (and ``||``): nulls count as empty strings; arrays and bytes concatenate as such."""
    if any(type_of(a) in ("array", "binary") for a in args):
        return call("concat", *args)
    return call("concat", *[call("coalesce", cast(a, "string"), text("")) for a in args])


# ---------------------------------------------------------------- the functions, one rewriter each

def _concat(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return concat(a, type_of)


def _dateadd(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """``x`` plus ``n`` units (DAY without a unit), as ``x + make_interval(...)``."""
    n = len(a)
    if not (n == 2 or (n == 3 and literal(a[2]) is not None)):
        return None
    x, count, chosen = a[0], a[1], "DAY" if n == 2 else unit(a[2], _DATEADD_UNITS, name)
    amounts: list[Any] = [number(0)] * 7
    if chosen == "QUARTER":
        amounts[1] = exp.Mul(this=cast(count, "int"), expression=number(3))
    elif chosen in _DATE_UNITS:
        amounts[_DATE_UNITS[chosen]] = cast(count, "int")
    elif chosen in _TIME_UNITS:
        amounts[_TIME_UNITS[chosen]] = cast(count, "int") if chosen != "SECOND" else cast(count, "decimal(18, 6)")
    else:  # MILLISECOND
        amounts[6] = cast(exp.Div(this=cast(count, "decimal(18, 6)"), expression=number(1000)), "decimal(18, 6)")
    if (chosen in _TIME_UNITS or chosen == "MILLISECOND") and type_of(x) == "date":
        x = cast(x, "timestamp_ntz")
    return exp.Add(this=x.copy(), expression=call("make_interval", *amounts))


def _datediff(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 3 or literal(a[2]) is None:
        return None  # Spark's datediff(end, start)
    first, second, chosen = a[0], a[1], unit(a[2], _DATEDIFF_UNITS, name)
    if chosen == "DAY":
        return cast(call("datediff", cast(second, "date"), cast(first, "date")), "bigint")
    if chosen in ("YEAR", "MONTH"):
        return call("timestampdiff", exp.Var(this=chosen), cast(first, "date"), cast(second, "date"))
    return call("timestampdiff", exp.Var(this="DAY" if chosen == "DAYTIME" else chosen), first, second)


def _date_trunc(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 2 or literal(a[1]) is None or literal(a[0]) is not None:
        return None  # Spark's date_trunc('UNIT', x)
    return cast(call("date_trunc", text(unit(a[1], _TRUNC_UNITS, name)), a[0]), "timestamp_ntz")


def _trunc(name: str, a: list[Any], type_of: TypeOf) -> Any:
    n = len(a)
    if n not in (1, 2) or (n == 2 and literal(a[1]) is not None):
        return None  # Spark's trunc(date, 'UNIT')
    result = template(_TRUNC, x=a[0], n=a[1] if n == 2 else number(0))
    kind = type_of(a[0])
    return cast(result, kind) if kind in _NUMBER_TYPES else result


def _to_char(name: str, a: list[Any], type_of: TypeOf) -> Any:
    n = len(a)
    if n not in (1, 2):
        return None
    kind = "numeric" if isinstance(a[0], exp.Literal) and not a[0].is_string else type_of(a[0])
    if n == 1 or kind in ("numeric", *_NUMBER_TYPES, "decimal", "boolean"):
        return cast(a[0], "string")
    return a[0].copy() if kind == "string" else call("date_format", a[0], a[1])


def _trim_side(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """LTRIM/RTRIM(s, chars): trims the first character of ``chars`` (a space when empty)."""
    if len(a) != 2:
        return None
    first = call("coalesce", call("nullif", call("substring", a[1], number(1), number(1)), text("")), text(" "))
    return exp.Trim(this=a[0].copy(), expression=first, position="LEADING" if name == "LTRIM" else "TRAILING")


def _regexp_replace(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 4 or not (literal(a[3]) is not None or isinstance(a[3], exp.Null)):
        return None
    return call("regexp_replace", a[0], flagged(a[1], a[3]), a[2])


def _regexp_like(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) not in (2, 3):
        return None
    return call("regexp_like", a[0], flagged(a[1], a[2] if len(a) == 3 else None))


def _regexp_substr(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """REGEXP_SUBSTR(s, regex, position, occurrence, flags, group)."""
    n = len(a)
    if n <= 2:
        return None

    def given(i: int, default: Any) -> Any:
        return default if i >= n or isinstance(a[i], exp.Null) else a[i]

    found = call("regexp_extract_all", call("substring", a[0], given(2, number(1))),
                 flagged(a[1], a[4] if n > 4 else None), given(5, number(0)))
    return call("try_element_at", found, given(3, number(1)))


def _instr(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) not in (2, 3):
        return None
    return call("coalesce", call("locate", a[1], a[0], *a[2:]), number(0))


def _insert(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return template(_INSERT, s=a[0], p=a[1], l=a[2], a=a[3]) if len(a) == 4 else None


def _hextoraw(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return call("decode", call("unhex", a[0]), text("UTF-16BE")) if len(a) == 1 else None


def _rawtohex(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 1:
        return None
    raw = a[0] if type_of(a[0]) == "binary" else call("encode", cast(a[0], "string"), text("UTF-16BE"))
    return call("lower", call("hex", raw))


def _formatdatetime(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return call("date_format", a[0], a[1]) if len(a) == 2 else None


def _parse_datetime(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """PARSEDATETIME/TO_DATE(s, fmt): a date, a time or a timestamp, as the pattern's letters say."""
    if len(a) == 1 and name == "PARSEDATETIME":
        return call("to_timestamp_ntz", a[0])
    if len(a) != 2:
        return None
    s, fmt = a
    pattern = literal(fmt)
    bare = re.sub(r"'[^']*'", "", pattern or "")
    has_date, has_time = bool(re.search(r"[yuMLdDQqwWEeY]", bare)), bool(re.search(r"[HhkKmsSanNA]", bare))
    if pattern is not None and has_date and not has_time:
        return call("to_date", s, fmt)
    if pattern is not None and has_time and not has_date:
        return call("to_time", s, fmt)
    return call("to_timestamp_ntz", s, fmt)


def _is_date(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return template(_IS_DATE, s=a[0], f=a[1]) if len(a) == 2 else None


def _day_or_month_name(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 1:
        return None
    return call("date_format", a[0], text("EEEE" if name == "DAYNAME" else "MMMM"))


def _day_of_week(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return exp.Add(this=call("weekday", a[0]), expression=number(1)) if len(a) == 1 else None


def _day_of(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 1:
        return None
    return call("dayofmonth" if name == "DAY_OF_MONTH" else "dayofyear", a[0])


def _week(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return template(_ISO_WEEK, x=a[0]) if len(a) == 1 else None


def _from_unixtime(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) != 3:
        return None
    return call("date_format", call("from_utc_timestamp", call("timestamp_seconds", a[0]), a[2]), a[1])


def _multi_if(name: str, a: list[Any], type_of: TypeOf) -> Any:
    n = len(a)
    if n < 3 or n % 2 == 0:
        raise FunctionError("MULTI_IF takes condition, value pairs and a final value")
    ifs = [exp.If(this=a[i].copy(), true=a[i + 1].copy()) for i in range(0, n - 1, 2)]
    return exp.Case(ifs=ifs, default=a[-1].copy())


#: SeaTunnel's functions by upper-case name: parsed as plain calls (:func:`.analysis.dialect`) and
#: rewritten by :func:`to_spark`
REWRITERS: dict[str, Rewriter] = {
    "CONCAT": _concat, "DATEADD": _dateadd, "TIMESTAMPADD": _dateadd, "DATEDIFF": _datediff,
    "DATE_TRUNC": _date_trunc, "TRUNC": _trunc, "TRUNCATE": _trunc, "TO_CHAR": _to_char, "LTRIM": _trim_side,
    "RTRIM": _trim_side, "REGEXP_LIKE": _regexp_like, "REGEXP_REPLACE": _regexp_replace,
    "REGEXP_SUBSTR": _regexp_substr, "INSTR": _instr, "INSERT": _insert, "HEXTORAW": _hextoraw,
    "RAWTOHEX": _rawtohex, "FORMATDATETIME": _formatdatetime, "PARSEDATETIME": _parse_datetime,
    "TO_DATE": _parse_datetime, "IS_DATE": _is_date, "DAYNAME": _day_or_month_name,
    "MONTHNAME": _day_or_month_name, "DAY_OF_WEEK": _day_of_week, "DAY_OF_MONTH": _day_of,
    "DAY_OF_YEAR": _day_of, "WEEK": _week, "FROM_UNIXTIME": _from_unixtime, "MULTI_IF": _multi_if,
}
SEATUNNEL_FUNCTIONS = tuple(REWRITERS)


# ---------------------------------------------------------------- EXTRACT

#: EXTRACT fields whose meaning differs from Spark's, as expressions of the value
_EXTRACTS: dict[str, Callable[[Any], Any]] = {
    "DOW": lambda x: exp.Sub(this=call("dayofweek", x), expression=number(1)),  # Sunday = 0
    "DAYOFWEEK": lambda x: exp.Sub(this=call("dayofweek", x), expression=number(1)),
    "ISODOW": lambda x: exp.Add(this=call("weekday", x), expression=number(1)),  # Monday = 1
    "DOY": lambda x: call("dayofyear", x),
    "DAYOFYEAR": lambda x: call("dayofyear", x),
    "SECOND": lambda x: call("second", x),  # whole seconds
    "EPOCH": lambda x: call("unix_seconds", cast(x, "timestamp")),
    "ISOYEAR": lambda x: exp.Extract(this=exp.Var(this="YEAROFWEEK"), expression=x.copy()),
}


def _extract(node: Any) -> Any:
    """SeaTunnel's EXTRACT(field FROM x) in Spark; None where Spark's own EXTRACT means the same."""
    field, x = node.name.upper(), node.expression
    if field in _EXTRACTS:
        return _EXTRACTS[field](x)
    key = field[:-1] if field in ("MILLISECONDS", "MICROSECONDS") else field
    return template(_EXTRACT_TEMPLATES[key], x=x) if key in _EXTRACT_TEMPLATES else None


# ---------------------------------------------------------------- the walk

def _rewrite(node: Any, type_of: TypeOf) -> Any:
    """The Spark form of one call, EXTRACT or type; None to keep ``node`` as it is."""
    if isinstance(node, exp.DataType):
        if getattr(node.this, "name", None) in ("TIMESTAMP", "TIMESTAMPTZ", "DATETIME"):  # Spark's TIMESTAMP
            return exp.DataType.build("timestamp_ntz", dialect="spark")
        return None
    if isinstance(node, exp.Extract):
        return _extract(node)
    name = node.name.upper()
    rewriter = REWRITERS.get(name)
    if rewriter is None:
        return None
    args = list(node.expressions)
    new = rewriter(name, args, type_of)
    return new if new is not None else call(name.lower(), *args)  # Spark's own function of that name


def to_spark(tree: Any, type_of: TypeOf = no_types) -> Any:
    """Rewrite SeaTunnel's SQL functions and types in ``tree`` (in place) to native Spark SQL.

    ``type_of(expression)`` gives a coarse type ("date", "timestamp", "string", "numeric",
    "array", "binary", ...) where known, to choose between date and timestamp forms.
    Raises :class:`FunctionError`.
    """
    nodes = list(tree.find_all(exp.Anonymous, exp.Extract, exp.DataType))
    for node in reversed(nodes):  # deepest first: arguments are rewritten before their callers
        new = _rewrite(node, type_of)
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
        pipe.replace(concat(leaves, type_of))
    return tree
