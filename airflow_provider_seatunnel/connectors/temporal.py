"""Timestamps and times as text, the three ways the file formats write them, without losing digits
(Spark columns; every store's writers share these).

- **Pattern** (text, csv, excel): ``datetime_format``/``time_format``. Unset, SeaTunnel's defaults
  (``yyyy-MM-dd HH:mm:ss``, ``HH:mm:ss``) are written and a value that has a fraction of a second gets
  it appended (``.123``, ``.5``, ``.000001``: its digits without trailing zeros), so a value without one
  is written as SeaTunnel writes it and a value with one is not cut. Set, the pattern is honoured
  exactly (SeaTunnel's bytes, fraction included only if the pattern has one).
- **ISO** (json): ``2021-07-04T17:45:30`` and ``17:45:30``, seconds always, then the fraction's
  digits without trailing zeros when there is one.
- **Java** (xml, partition directories): Java's ``toString``: the seconds only when the value has
  seconds or a fraction, the fraction in groups of three digits (``17:45``, ``17:45:30.500``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: the option and the Spark type name of each kind whose fraction a default pattern keeps
FRACTION_KINDS = {"datetime_format": "timestamp", "time_format": "time"}


def is_time(dtype: Any) -> bool:
    """A Spark TIME type (``TimeType`` is missing from older pyspark releases)."""
    return type(dtype).__name__ == "TimeType"


def is_timestamp(dtype: Any) -> bool:
    from pyspark.sql import types as T

    return isinstance(dtype, (T.TimestampNTZType, T.TimestampType))


def on_day_zero(column: Any) -> Any:
    """A time column as a timestamp on 1970-01-01 (what ``date_format`` takes)."""
    from pyspark.sql import functions as F

    return F.make_timestamp_ntz(date=F.lit("1970-01-01").cast("date"), time=column)


def _micros(stamp: Any) -> Any:
    from pyspark.sql import functions as F

    return F.date_format(stamp, "SSSSSS")


def _fraction(stamp: Any) -> Any:
    """``.`` and the fraction's digits without trailing zeros; "" when the value has none."""
    from pyspark.sql import functions as F

    micros = _micros(stamp)
    return F.when(micros == "000000", F.lit("")).otherwise(F.concat(F.lit("."), F.regexp_replace(micros, "0+$", "")))


def pattern_text(column: Any, dtype: Any, pattern: str, keep_fraction: bool) -> Any:
    """A timestamp or time in ``pattern``; ``keep_fraction`` appends the value's fraction when it has one."""
    from pyspark.sql import functions as F

    stamp = on_day_zero(column) if is_time(dtype) else column
    text = F.date_format(stamp, pattern)
    return F.concat(text, _fraction(stamp)) if keep_fraction else text


def iso_text(column: Any, dtype: Any) -> Any:
    """A timestamp or time as ISO text (json): seconds always, the fraction's digits when it has one."""
    stamp = on_day_zero(column) if is_time(dtype) else column
    return pattern_text(stamp, None, "HH:mm:ss" if is_time(dtype) else "yyyy-MM-dd'T'HH:mm:ss", True)


def java_text(column: Any, dtype: Any) -> Any:
    """A timestamp or time as Java's ``toString`` writes it: ``HH:mm``, then ``:ss`` when the value has
    seconds or a fraction, then the fraction in groups of three digits."""
    from pyspark.sql import functions as F

    stamp = on_day_zero(column) if is_time(dtype) else column
    head = "HH:mm" if is_time(dtype) else "yyyy-MM-dd'T'HH:mm"
    micros = _micros(stamp)
    whole = micros == "000000"
    return (F.when(whole & (F.date_format(stamp, "ss") == "00"), F.date_format(stamp, head))
            .when(whole, F.date_format(stamp, f"{head}:ss"))
            .when(F.substring(micros, 4, 3) == "000", F.date_format(stamp, f"{head}:ss.SSS"))
            .otherwise(F.date_format(stamp, f"{head}:ss.SSSSSS")))


def kept_fractions(given: Callable[[str], bool]) -> tuple[str, ...]:
    """The kinds (``timestamp``, ``time``) whose format option is unset (``given(key)`` false): their
    default pattern keeps a value's fraction."""
    return tuple(kind for key, kind in FRACTION_KINDS.items() if not given(key))


def temporal_text(column: Any, dtype: Any, opts: Mapping[str, Any]) -> Any:
    """A timestamp or time as the text formats write it (``opts``: ``datetime``, ``time`` patterns,
    ``fractions`` the kinds whose fraction is kept)."""
    kind = "time" if is_time(dtype) else "timestamp"
    pattern = opts["time"] if kind == "time" else opts["datetime"]
    return pattern_text(column, dtype, pattern, kind in opts.get("fractions", ()))


def has_temporal(dtype: Any) -> bool:
    """``dtype`` is or holds a timestamp or time."""
    from pyspark.sql import types as T

    if is_time(dtype) or is_timestamp(dtype):
        return True
    if isinstance(dtype, T.ArrayType):
        return has_temporal(dtype.elementType)
    if isinstance(dtype, T.MapType):
        return has_temporal(dtype.keyType) or has_temporal(dtype.valueType)
    if isinstance(dtype, T.StructType):
        return any(has_temporal(f.dataType) for f in dtype.fields)
    return False


def map_temporal(column: Any, dtype: Any, leaf: Callable[[Any, Any], Any]) -> Any:
    """``column`` with ``leaf(value, type)`` applied to every timestamp and time in it, nested too."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not has_temporal(dtype):
        return column
    if is_time(dtype) or is_timestamp(dtype):
        return leaf(column, dtype)
    if isinstance(dtype, T.ArrayType):
        return F.transform(column, lambda x: map_temporal(x, dtype.elementType, leaf))
    if isinstance(dtype, T.MapType):
        if has_temporal(dtype.keyType):
            column = F.transform_keys(column, lambda k, _: map_temporal(k, dtype.keyType, leaf))
        return F.transform_values(column, lambda _, v: map_temporal(v, dtype.valueType, leaf))
    fields = [map_temporal(column.getField(f.name), f.dataType, leaf).alias(f.name) for f in dtype.fields]
    return F.when(column.isNotNull(), F.struct(*fields))


def json_ready(column: Any, dtype: Any) -> Any:
    """``column`` with every timestamp and time in it (nested too) as its ISO text, the rest as it is:
    what the json writer writes as SeaTunnel's json does."""
    return map_temporal(column, dtype, iso_text)


def zoned(column: Any, dtype: Any, where: str, millis: bool, times: bool = False) -> Any:
    """A timestamp without time zone as the instant its wall-clock time is in the session's zone (parquet
    and orc write instants, as SeaTunnel does); a time, when ``times`` (orc), as that of 1970-01-01, else
    left as it is. Never cut silently: a value with digits under the millisecond when ``millis``, or a
    wall-clock time the zone skips (the hour clocks go forward), fails the write naming ``where`` and
    the value."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if times and is_time(dtype):
        column, dtype = on_day_zero(column), T.TimestampNTZType()
    if not isinstance(dtype, T.TimestampNTZType):
        return column
    instant = column.cast("timestamp")
    text = F.date_format(column, "yyyy-MM-dd HH:mm:ss.SSSSSS")
    problems = []
    if millis:
        problems.append((F.date_format(column, "SSSSSS").substr(4, 3) != "000",
                         " has digits under the millisecond and parquet_timestamp_unit is MILLIS (SeaTunnel's "
                         "type; set parquet_timestamp_unit = \"MICROS\" to keep them)"))
    problems.append((instant.cast("timestamp_ntz") != column,
                     " does not exist in the session's time zone (a skipped hour): it cannot be written as an instant"))
    out = instant
    for bad, why in reversed(problems):
        message = F.concat(F.lit(f"{where}: the timestamp "), text, F.lit(why))
        out = F.when(column.isNotNull() & bad, F.raise_error(message)).otherwise(out)
    return out
