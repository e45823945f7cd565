"""Rows to InfluxDB points (line protocol) and query answers to rows; pure Python, run time.

A point (:class:`PointWriter`): the measurement; the ``key_tags`` fields as tags (text; a null tag is not
written); every other field but ``key_time`` as a field, typed as SeaTunnel writes it (boolean; smallint,
int and bigint as integers ``1i``; float and double as floats; string quoted); a null field left out; the
time in nanoseconds: the ``key_time`` value (bigint or string in the ``epoch`` unit, a timestamp as its
instant read at UTC) or, without ``key_time``, the given processing time.

A query answer's value becomes the declared type as SeaTunnel's converter does (:func:`convert`): boolean
from its text, integers from their text, float and double from numbers, string as is (numbers as text).
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
from collections.abc import Callable, Sequence
from typing import Any

from ...spi.errors import DataError
from ..javatext import java_double

#: the range of a point's time (InfluxDB's: int64 nanoseconds)
MIN_TIME, MAX_TIME = -9223372036854775806, 9223372036854775806
_INT_RANGES = {"smallint": (-(2 ** 15), 2 ** 15 - 1), "int": (-(2 ** 31), 2 ** 31 - 1),
               "bigint": (-(2 ** 63), 2 ** 63 - 1)}


def _escape_key(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def escape_measurement(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(" ", "\\ ")


def _string(value: Any) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tag_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    return str(value)


def field_text(kind: str, name: str, value: Any) -> str:
    """One field's value in line protocol, as SeaTunnel types it."""
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("smallint", "int", "bigint", "tinyint"):
        return f"{int(value)}i"
    if kind in ("float", "double"):
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            raise DataError(f"the field '{name}' holds {number}, which InfluxDB cannot store")
        return repr(number)
    if kind == "string":
        return _string(value)
    raise DataError(f"the field '{name}' is of type {kind}, which the InfluxDB sink does not write")


def _instant_ns(value: Any, kind: str, unit_ns: int, name: str) -> int:
    if isinstance(value, dt.datetime):
        seconds = calendar.timegm(value.utctimetuple()) if value.tzinfo else calendar.timegm(value.timetuple())
        return (seconds * 1_000_000 + value.microsecond) * 1000
    try:
        return int(str(value).strip()) * unit_ns
    except ValueError:
        raise DataError(f"the key_time field '{name}' holds {str(value)[:60]!r}, not a number of its "
                        f"epoch unit") from None


class PointWriter:
    """Turns rows of ``names``/``kinds`` into line protocol lines of one measurement."""

    def __init__(self, measurement: str, names: Sequence[str], kinds: Sequence[str], key_time: str | None,
                 key_tags: Sequence[str], unit_ns: int) -> None:
        self.prefix = escape_measurement(measurement)
        self.tags = [(names.index(t), _escape_key(t)) for t in key_tags]
        skip = {*key_tags, *([key_time] if key_time else [])}
        self.fields = [(i, _escape_key(n), n, kinds[i]) for i, n in enumerate(names) if n not in skip]
        self.time_at = names.index(key_time) if key_time else None
        self.time_kind = kinds[self.time_at] if self.time_at is not None else ""
        self.key_time, self.unit_ns = key_time, unit_ns

    def line(self, row: Sequence[Any], processing_ns: int) -> str:
        """One row's point; ``processing_ns`` is its time without ``key_time``."""
        tags = "".join(f",{key}={_escape_key(_tag_text(row[i]))}" for i, key in self.tags
                       if row[i] is not None and _tag_text(row[i]) != "")
        fields = ",".join(f"{key}={field_text(kind, name, row[i])}" for i, key, name, kind in self.fields
                          if row[i] is not None)
        if not fields:
            raise DataError("a row has no non-null field: InfluxDB needs one field per point")
        if self.time_at is None:
            time_ns = processing_ns
        else:
            value = row[self.time_at]
            if value is None:
                raise DataError(f"the key_time field '{self.key_time}' is null in a row")
            time_ns = _instant_ns(value, self.time_kind, self.unit_ns, str(self.key_time))
        if not MIN_TIME <= time_ns <= MAX_TIME:
            raise DataError(f"the time {time_ns} ns of a row is outside InfluxDB's range")
        return f"{self.prefix}{tags} {fields} {time_ns}"


def convert(value: Any, kind: str, name: str) -> Any:
    """A value of a query's answer as the declared type ``kind`` (None stays None)."""
    if value is None:
        return None
    try:
        if kind == "boolean":
            return str(value).strip().lower() == "true"
        if kind in _INT_RANGES:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            number = int(value) if isinstance(value, (int, float)) else int(str(value).strip())
            low, high = _INT_RANGES[kind]
            if not low <= number <= high:
                raise ValueError(value)
            return number
        if kind in ("float", "double"):
            return float(value)
        if kind == "string":
            return value if isinstance(value, str) else _tag_text(value)
    except (TypeError, ValueError):
        raise DataError(f"the column '{name}' holds {str(value)[:60]!r}, not a {kind}") from None
    raise DataError(f"the column '{name}' is declared {kind}, which the InfluxDB source does not convert")


def _column(i: int) -> Callable[[Sequence[Any]], Any]:
    return lambda values: values[i]


def _constant(value: Any) -> Callable[[Sequence[Any]], Any]:
    return lambda values: value


def row_reader(names: Sequence[str], kinds: Sequence[str],
               columns: Sequence[str], tags: dict[str, Any] | None) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function turning one value list of a series (its ``columns``, its GROUP BY ``tags``) into a row of
    the declared fields; a declared field neither holds fails naming it."""
    at = {c: i for i, c in enumerate(columns)}
    tags = dict(tags or {})
    getters: list[Callable[[Sequence[Any]], Any]] = []
    for name in names:
        if name in at:
            getters.append(_column(at[name]))
        elif name in tags:
            getters.append(_constant(tags[name]))
        else:
            raise DataError(f"the query's answer has no column '{name}' (its columns: {', '.join(columns)}): "
                            "select it, or remove it from schema")

    def read(values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(convert(get(values), kind, name) for get, kind, name in zip(getters, kinds, names, strict=True))

    return read
