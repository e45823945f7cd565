"""FakeSource's option values read as typed Python values (``rows``, ``defaultValue``, templates).

Numbers come from numbers or their text; bytes from base64 (``rows``) or from the text's UTF-8
bytes (``defaultValue``); dates, times and timestamps from the formats SeaTunnel detects and
``CURRENT_DATE``/``CURRENT_TIME``/``CURRENT_TIMESTAMP``; arrays from lists, maps from objects, rows
from lists (by position) or objects (by name). Integers hold the signed range of their type.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime, time
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext
from typing import Any

from ...spi.schema import DataType, Field

FLOAT_MAX: float = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
DOUBLE_MAX = 1.7976931348623157e308
#: integer type -> (default min, default max = the largest allowed value); SeaTunnel allows no negatives
INT_RANGES = {"tinyint": (0, 127), "smallint": (0, 32767), "int": (0, 2**31 - 1), "bigint": (0, 2**63 - 1)}
FLOAT_RANGES = {"float": (0.0, FLOAT_MAX), "double": (0.0, DOUBLE_MAX)}
#: the signed range of each integer type (template values, explicit values)
INT_LIMITS = {"tinyint": (-2**7, 2**7 - 1), "smallint": (-2**15, 2**15 - 1), "int": (-2**31, 2**31 - 1),
              "bigint": (-2**63, 2**63 - 1)}

_INT_TEXT = re.compile(r"[+-]?\d+\Z")
_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|NaN|Infinity)[fFdD]?\Z")
_DATE = r"(?P<y>\d{4})(?:(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})|年(?P<m2>\d{2})月(?P<d2>\d{2})日)"
_TIME = (r"(?P<H>\d{1,2})(?::(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.(?P<F>\d{1,9}))?)?"
         r"|时(?P<M2>\d{2})分(?P<S2>\d{2})秒)")
_DATE_RE = re.compile(rf"{_DATE}\Z|(?P<cy>\d{{4}})(?P<cm>\d{{2}})(?P<cd>\d{{2}})\Z")
_TIME_RE = re.compile(r"(?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.(?P<F>\d{1,9}))?)?\Z")
_TIMESTAMP_RE = re.compile(rf"{_DATE}[T ]{_TIME}\Z")
_COMPACT_TIMESTAMP_RE = re.compile(r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})\Z")


class BadValue(ValueError):
    """A value that cannot be read as its declared type; ``path`` says where inside the row."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def text_of(value: Any) -> str:
    """A value as Java's ``toString``/Jackson's ``asText`` would give it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def number_of(value: Any) -> float | None:
    """A float from a number or numeric text; None if it is not one."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str) and _FLOAT_TEXT.match(value.strip()):
        text = value.strip().rstrip("fFdD")
        return float(text.replace("Infinity", "inf"))
    return None


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_TEXT.match(value.strip()):
        return int(value.strip())
    return None


def _parse_date(text: str) -> date:
    if text.strip().upper() == "CURRENT_DATE":
        return datetime.now().date()
    m = _DATE_RE.match(text.strip())
    if not m:
        raise BadValue(f"cannot read {text!r} as a date (write yyyy-MM-dd, yyyy/MM/dd, yyyy.MM.dd, yyyyMMdd "
                       "or CURRENT_DATE)")
    if m.group("cy"):
        parts = m.group("cy"), m.group("cm"), m.group("cd")
    else:
        parts = m.group("y"), m.group("m") or m.group("m2"), m.group("d") or m.group("d2")
    try:
        return date(*(int(p) for p in parts))
    except ValueError as e:
        raise BadValue(f"{text!r} is not a valid date: {e}") from None


#: what :func:`narrowed` collects: the values of ``rows`` this package holds narrower than written
_NARROWED: ContextVar[list[str] | None] = ContextVar("fakesource_narrowed", default=None)


@contextmanager
def narrowed() -> Iterator[list[str]]:
    """Collect, while converting, a note per value held narrower than written (a decimal with more digits
    after the point than its scale, rounded half up; a time or timestamp with nanoseconds, cut to the
    microsecond): SeaTunnel keeps them, Spark's types cannot. The compiler shows each as a warning."""
    notes: list[str] = []
    token = _NARROWED.set(notes)
    try:
        yield notes
    finally:
        _NARROWED.reset(token)


def _narrow(note: str) -> None:
    notes = _NARROWED.get()
    if notes is not None:
        notes.append(note)


def _fraction(digits: str | None) -> int:
    """The microseconds of a fraction of a second; nanoseconds (a 7th to 9th digit other than 0) are cut
    (Spark's times and timestamps hold microseconds; SeaTunnel keeps them), noted by :func:`narrowed`."""
    digits = digits or "0"
    if digits[6:].strip("0"):
        _narrow(f"the fraction .{digits} has nanoseconds: times and timestamps hold microseconds here, so it is "
                f"read as .{digits[:6]} (SeaTunnel keeps the nanoseconds)")
    return int(digits[:6].ljust(6, "0"))


def _parse_time(text: str) -> time:
    if text.strip() == "CURRENT_TIME":
        return datetime.now().time()
    m = _TIME_RE.match(text.strip())
    if not m:
        raise BadValue(f"cannot read {text!r} as a time (write HH:mm:ss[.fraction] or CURRENT_TIME)")
    try:
        return time(int(m.group("H")), int(m.group("M")), int(m.group("S") or 0), _fraction(m.group("F")))
    except ValueError as e:
        raise BadValue(f"{text!r} is not a valid time: {e}") from None


def _parse_timestamp(text: str) -> datetime:
    stripped = text.strip()
    if stripped.upper() == "CURRENT_TIMESTAMP":
        return datetime.now()
    m = _TIMESTAMP_RE.match(stripped)
    compact = _COMPACT_TIMESTAMP_RE.match(stripped)
    try:
        if compact:
            year, month, day, hour, minute, second = (int(p) for p in compact.groups())
            return datetime(year, month, day, hour, minute, second)
        if m:
            return datetime(int(m.group("y")), int(m.group("m") or m.group("m2")), int(m.group("d") or m.group("d2")),
                            int(m.group("H")), int(m.group("M") or m.group("M2") or 0),
                            int(m.group("S") or m.group("S2") or 0), _fraction(m.group("F")))
    except ValueError as e:
        raise BadValue(f"{text!r} is not a valid timestamp: {e}") from None
    raise BadValue(f"cannot read {text!r} as a timestamp (write yyyy-MM-dd HH:mm:ss[.fraction], with 'T' or "
                   "a space, or yyyyMMddHHmmss, or CURRENT_TIMESTAMP)")


def _decimal(value: Any, dt: DataType, exact: bool = True) -> Decimal:
    """``value`` at the scale of ``dt``, more digits after the point than the scale rounded half up: noted by
    :func:`narrowed` when ``exact`` (a value of ``rows``, which SeaTunnel keeps whole although its type cannot
    hold it), silently for a column's ``defaultValue`` (shaped to its column)."""
    text = text_of(value).strip() if _is_number(value) or isinstance(value, str) else None
    try:
        if text is None:
            raise InvalidOperation
        number = Decimal(text)
        if not number.is_finite():
            raise InvalidOperation
    except InvalidOperation:
        raise BadValue(f"cannot read {text_of(value)!r} as {dt}") from None
    precision, scale = min(dt.precision or 10, 38), dt.scale or 0
    if number != 0 and number.adjusted() >= precision - scale:
        raise BadValue(f"{text} does not fit {dt} (at most {precision - scale} digits before the point)")
    with localcontext(Context(prec=80)):
        scaled = number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        if exact and scaled != number:  # a row's value is never rounded silently
            _narrow(f"{text} has more than {scale} digits after the point: {dt} holds {scaled} (SeaTunnel keeps "
                    f"{text}; declare a larger scale to keep it here)")
    number = scaled
    if len(number.as_tuple().digits) > precision and number != 0:
        raise BadValue(f"{text} does not fit {dt} (at most {precision - scale} digits before the point)")
    return number


def convert(value: Any, dt: DataType, *, base64_bytes: bool = True) -> Any:
    """``value`` (from the config) as a Python value of type ``dt``; raises :class:`BadValue`.

    Numbers come from numbers or their text (a decimal of ``rows`` with more digits after the point than
    its scale is refused, a ``defaultValue`` rounded); bytes from base64 (``rows``) or from the text's
    UTF-8 bytes (``defaultValue``); dates and timestamps from the formats SeaTunnel detects
    and ``CURRENT_DATE``/``CURRENT_TIME``/``CURRENT_TIMESTAMP``; arrays from lists, maps
    from objects (keys read from their text), rows from lists (by position) or objects
    (by name). A row is returned as a list of values in field order, a map as a list of
    ``(key, value)`` pairs.
    """
    if value is None or dt.name == "null":
        return None
    if dt.storage is not dt:  # a vector: its values (a list of floats, base64 bytes, an index -> value object)
        return convert(value, dt.storage, base64_bytes=base64_bytes)
    name = dt.name
    if name == "string":
        return text_of(value)
    if name == "boolean":
        return _boolean(value)
    if name in INT_LIMITS:
        return _integer_of(value, name)
    if name in ("float", "double"):
        return _floating(value, name)
    if name == "decimal":
        return _decimal(value, dt, exact=base64_bytes)
    if name == "bytes":
        return _bytes(value, base64_bytes)
    if name in ("date", "time", "timestamp"):
        if not isinstance(value, str):
            raise BadValue(f"cannot read {text_of(value)!r} as {name} (write it as a string)")
        return _TEMPORAL[name](value)
    if name == "array" and dt.element is not None:
        if not isinstance(value, list):
            raise BadValue(f"cannot read {text_of(value)!r} as {dt} (write a list)")
        return [_nested(v, dt.element, f"[{i}]", base64_bytes) for i, v in enumerate(value)]
    if name == "map" and dt.key is not None and dt.element is not None:
        return _map(value, dt, dt.key, dt.element, base64_bytes)
    if name == "row":
        return row_values(value, dt.fields, base64_bytes)
    raise BadValue(f"no values for type {dt}")


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise BadValue(f"cannot read {text_of(value)!r} as boolean (write true or false)")


def _integer_of(value: Any, name: str) -> int:
    number = _integer(value) if not isinstance(value, (list, dict)) else None
    if number is None:
        raise BadValue(f"cannot read {text_of(value)!r} as {name}")
    low, high = INT_LIMITS[name]
    if not low <= number <= high:
        raise BadValue(f"{number} is out of the {name} range [{low}, {high}]")
    return number


def _floating(value: Any, name: str) -> float:
    number = number_of(value)
    if number is None:
        raise BadValue(f"cannot read {text_of(value)!r} as {name}")
    if name == "float" and math.isfinite(number) and abs(number) > FLOAT_MAX:
        raise BadValue(f"{text_of(value)} is out of the float range")
    return number


def _bytes(value: Any, base64_bytes: bool) -> bytes:
    if not isinstance(value, str):
        raise BadValue(f"cannot read {text_of(value)!r} as bytes (write a base64 string)" if base64_bytes
                       else f"cannot read {text_of(value)!r} as bytes")
    if not base64_bytes:
        return value.encode("utf-8")
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        raise BadValue(f"{value!r} is not base64 (bytes values are written in base64)") from None


_TEMPORAL: dict[str, Callable[[str], Any]] = {"date": _parse_date, "time": _parse_time,
                                              "timestamp": _parse_timestamp}


def _map(value: Any, dt: DataType, key_type: DataType, value_type: DataType, base64_bytes: bool) -> list:
    if not isinstance(value, Mapping):
        raise BadValue(f"cannot read {text_of(value)!r} as {dt} (write an object)")
    pairs: dict[Any, Any] = {}
    for k, v in value.items():
        key = _nested(str(k), key_type, f"[{k!r}]", base64_bytes)
        if key is None:
            raise BadValue("a map key may not be null", f"[{k!r}]")
        pairs[key] = _nested(v, value_type, f"[{k!r}]", base64_bytes)
    return list(pairs.items())


def _nested(value: Any, dt: DataType, step: str, base64_bytes: bool) -> Any:
    """``convert`` of a value inside another; its failure says where (``step``)."""
    try:
        return convert(value, dt, base64_bytes=base64_bytes)
    except BadValue as e:
        raise BadValue(str(e), step + e.path) from None


def row_values(value: Any, fields: tuple[Field, ...], base64_bytes: bool = True) -> list:
    """A row's values in field order, from a list (by position) or an object (by name)."""
    if isinstance(value, list):
        if len(value) > len(fields):
            raise BadValue(f"{len(value)} values for {len(fields)} fields ({', '.join(f.name for f in fields)})")
        given = dict(zip([f.name for f in fields], value, strict=False))
    elif isinstance(value, Mapping):
        unknown = [str(k) for k in value if str(k) not in {f.name for f in fields}]
        if unknown:
            raise BadValue(f"field '{unknown[0]}' does not exist; fields: {', '.join(f.name for f in fields)}")
        given = {str(k): v for k, v in value.items()}
    else:
        raise BadValue(f"cannot read {text_of(value)!r} as a row (write a list or an object)")
    return [_nested(given.get(f.name), f.type, f".{f.name}", base64_bytes) for f in fields]

