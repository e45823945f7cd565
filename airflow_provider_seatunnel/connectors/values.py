"""Values to rows and rows to values, as SeaTunnel's json and text formats shape them (shared by
Redis and Http; pure Python: these run inside Spark's Python workers).

Reading (``format = json``): a value is a JSON object (one row) or an array of objects (one row
each); each schema field takes the member of its name (absent: null) converted leniently, as
SeaTunnel's JSON reader does: a number written as a string is parsed ("26" for an int), a
string field receives the JSON text of an object or array, ``bytes`` are base64, dates and
timestamps ISO text. A value that is not JSON, or a member that does not convert, raises
:class:`ValueFormatError`.

Writing: ``json`` is the row as one compact JSON object (dates and times as ISO text, a fraction of a
second only when there is one, without trailing zeros, as SeaTunnel's json writes them; bytes as
base64, decimals as exact numbers); ``text`` the fields' text joined by the delimiter (null:
empty); a hash gets one field per non-null row field (scalars as their JSON text without
quotes, objects and arrays as JSON).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..spi.schema import DataType, Schema

_INT_RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


class ValueFormatError(ValueError):
    """A value that does not parse as the format and schema say."""


# ------------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------------

def _integer(value: Any, t: DataType) -> int:
    if isinstance(value, bool):
        raise ValueFormatError(f"{value!r} is not a {t.name}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    number = value if isinstance(value, int) else int(str(value).strip())
    bits = _INT_RANGES[t.name]
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise ValueFormatError(f"{number} is out of the range of {t.name}")
    return number


def _timestamp(value: Any) -> dt.datetime:
    text = str(value).strip().replace(" ", "T", 1)
    return dt.datetime.fromisoformat(text[:-1] if text.endswith("Z") else text).replace(tzinfo=None)


def _scalar(value: Any, t: DataType) -> Any:
    name = t.name
    if name == "string":
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if name == "boolean":
        return value if isinstance(value, bool) else str(value).strip().lower() == "true"
    if name in _INT_RANGES:
        return _integer(value, t)
    if name in ("float", "double"):
        if isinstance(value, bool):
            raise ValueFormatError(f"{value!r} is not a {name}")
        return float(value)
    if name == "decimal":
        return decimal.Decimal(str(value).strip())
    if name == "date":
        return dt.date.fromisoformat(str(value).strip()[:10])
    if name == "timestamp":
        return _timestamp(value)
    if name == "time":
        return dt.time.fromisoformat(str(value).strip())
    if name == "bytes":
        return base64.b64decode(str(value)) if isinstance(value, str) else bytes(value)
    if name == "null":
        return None
    raise ValueFormatError(f"no conversion to {t}")


def convert(value: Any, t: DataType) -> Any:
    """``value`` (a JSON value, or text holding one for a nested type) as Spark's Python value of ``t``."""
    if value is None:
        return None
    try:
        if t.name in ("array", "map", "row") and isinstance(value, str):
            value = json.loads(value)
        if t.name == "array" and t.element is not None:
            if not isinstance(value, list):
                raise ValueFormatError(f"{_short(value)} is not an array")
            return [convert(v, t.element) for v in value]
        if t.name == "map" and t.key is not None and t.element is not None:
            if not isinstance(value, Mapping):
                raise ValueFormatError(f"{_short(value)} is not an object")
            return {convert(k, t.key): convert(v, t.element) for k, v in value.items()}
        if t.name == "row":
            if not isinstance(value, Mapping):
                raise ValueFormatError(f"{_short(value)} is not an object")
            return tuple(convert(value.get(f.name), f.type) for f in t.fields)
        return _scalar(value, t)
    except ValueFormatError:
        raise
    except (ValueError, TypeError, ArithmeticError) as e:
        raise ValueFormatError(f"{_short(value)} is not a {t}: {e}") from None


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return repr(text if len(text) <= limit else text[:limit] + "...")


def row_of(obj: Mapping[str, Any], schema: Schema) -> tuple[Any, ...]:
    """One row: each field from the member of its name (null when absent)."""
    out = []
    for f in schema.fields:
        try:
            out.append(convert(obj.get(f.name), f.type))
        except ValueFormatError as e:
            raise ValueFormatError(f"field '{f.name}': {e}") from None
    return tuple(out)


def rows_of_json(text: str, schema: Schema) -> list[tuple[Any, ...]]:
    """The rows of one JSON value: an object is one row, an array one row per object."""
    try:
        parsed = json.loads(text)
    except ValueError as e:
        raise ValueFormatError(f"{_short(text)} is not JSON: {e}") from None
    items = parsed if isinstance(parsed, list) else [parsed]
    rows = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ValueFormatError(f"{_short(item)} is not a JSON object")
        rows.append(row_of(item, schema))
    return rows


def hash_json(fields: Mapping[str, str]) -> str:
    return json.dumps(dict(fields), ensure_ascii=False, separators=(",", ":"))


# ------------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------------

def iso_text(value: dt.datetime | dt.date | dt.time) -> str:
    """A date, timestamp or time as SeaTunnel's json writes it: ISO, seconds always, a fraction of a
    second only when there is one, as its digits without trailing zeros (``2021-07-04T17:45:30.5``)."""
    if isinstance(value, (dt.datetime, dt.time)):
        whole = value.replace(microsecond=0).isoformat()
        return whole + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    return value.isoformat()


def _plain(value: Any) -> Any:
    """A Spark Python value as JSON-ready data (decimals stay :class:`decimal.Decimal`)."""
    if value is None or isinstance(value, (bool, int, float, str, decimal.Decimal)):
        return value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return iso_text(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if hasattr(value, "asDict"):  # a pyspark Row
        return {k: _plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, Mapping):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _write(value: Any, out: list[str]) -> None:
    """Compact JSON of plain data; decimals as their exact digits, NaN and infinities as text."""
    if isinstance(value, Mapping):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            out.append(("," if i else "") + json.dumps(str(k), ensure_ascii=False) + ":")
            _write(v, out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _write(v, out)
        out.append("]")
    elif isinstance(value, decimal.Decimal):
        out.append(format(value, "f") if value.is_finite() else json.dumps(str(value)))
    elif isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        out.append(json.dumps(str(value)))
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def to_json(value: Any) -> str:
    out: list[str] = []
    _write(_plain(value), out)
    return "".join(out)


def text_of(value: Any) -> str:
    """A field as text: strings as they are, booleans ``true``/``false``, nested values as JSON."""
    plain = _plain(value)
    if plain is None:
        return ""
    if isinstance(plain, str):
        return plain
    return to_json(plain)


def serializer(names: Sequence[str], fmt: str, delimiter: str) -> Callable[[Sequence[Any]], str]:
    """A row's value: ``json`` an object of ``names``, ``text`` the fields joined by ``delimiter``."""
    if fmt == "text":
        return lambda values: delimiter.join(text_of(v) for v in values)
    return lambda values: to_json(dict(zip(names, values, strict=True)))


def hash_fields(names: Sequence[str], values: Sequence[Any]) -> list[tuple[str, str]]:
    """A row as hash fields: one per non-null field."""
    return [(n, text_of(v)) for n, v in zip(names, values, strict=True) if v is not None]


def key_text(value: Any) -> str:
    return text_of(value)
