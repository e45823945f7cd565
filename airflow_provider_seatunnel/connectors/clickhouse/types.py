"""ClickHouse's column types as SeaTunnel's, values read from ``JSONCompactEachRow`` and rows written as
``JSONEachRow``. Imports nothing of Spark.

The mapping is SeaTunnel's (its client's Java class of each type): Int8 -> tinyint; UInt8, Int16 -> smallint;
UInt16, Int32 -> int; UInt32, Int64, UInt64, Interval* -> bigint; Float32 -> float; Float64 -> double;
Decimal(p, s) -> decimal(p, s); Bool -> boolean; Date, Date32 -> date; DateTime, DateTime64 -> timestamp
(the wall-clock time in the column's or the session's time zone); String, FixedString, UUID, IPv4, IPv6,
Enum*, Int128 and wider, JSON and the geo types -> string; Array(T) and Map(K, V) of those; Nullable(T)
and LowCardinality(T) as T. Tuple, Nested and others are refused by name.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...spi.errors import DataError, RuntimeConfigError

_SIMPLE = {"Int8": "tinyint", "UInt8": "smallint", "Int16": "smallint", "UInt16": "int", "Int32": "int",
           "UInt32": "bigint", "Int64": "bigint", "UInt64": "bigint", "Float32": "float", "Float64": "double",
           "Bool": "boolean", "Date": "date", "Date32": "date", "String": "string", "UUID": "string",
           "IPv4": "string", "IPv6": "string", "Int128": "string", "UInt128": "string", "Int256": "string",
           "UInt256": "string", "Point": "string", "Ring": "string", "Polygon": "string", "MultiPolygon": "string",
           "LineString": "string", "MultiLineString": "string", "JSON": "string", "Object('json')": "string"}
_WRAPPERS = ("Nullable(", "LowCardinality(")
#: the widest value of a bigint: UInt64 values above it do not fit
MAX_BIGINT = 2**63 - 1
#: the settings every read sends: 64-bit integers and decimals quoted (exact), NaN and infinities as text
READ_SETTINGS = {"output_format_json_quote_64bit_integers": "1", "output_format_json_quote_decimals": "1",
                 "output_format_json_quote_denormals": "1", "output_format_decimal_trailing_zeros": "0",
                 "date_time_output_format": "simple"}
#: the settings every staging insert sends
WRITE_SETTINGS = {"date_time_input_format": "best_effort", "input_format_skip_unknown_fields": "0",
                  "input_format_null_as_default": "1"}


def _args(text: str) -> list[str]:
    """The top-level comma-separated arguments of ``T(...)``."""
    inner, out, depth, start = text[text.index("(") + 1:-1], [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            out.append(inner[start:i].strip())
            start = i + 1
    out.append(inner[start:].strip())
    return out


def unwrap(ch_type: str) -> str:
    """The type without Nullable(...) and LowCardinality(...)."""
    text = ch_type.strip()
    while text.startswith(_WRAPPERS) and text.endswith(")"):
        text = text[text.index("(") + 1:-1].strip()
    return text


def seatunnel_type(ch_type: str) -> str:
    """SeaTunnel's type string of a ClickHouse type; raises :class:`RuntimeConfigError` for one it cannot read."""
    text = unwrap(ch_type)
    base = text.split("(", 1)[0]
    if text in _SIMPLE:
        return _SIMPLE[text]
    if base in ("DateTime", "DateTime64"):
        return "timestamp"
    if base.startswith("Decimal"):
        if base == "Decimal":
            precision, scale = (int(a) for a in _args(text))
        else:
            precision = {"Decimal32": 9, "Decimal64": 18, "Decimal128": 38, "Decimal256": 76}[base]
            scale = int(_args(text)[0])
        return f"decimal({min(precision, 38)}, {scale})"
    if base in ("FixedString", "Enum8", "Enum", "Enum16"):
        return "string"
    if base.startswith("Interval"):
        return "bigint"
    if base == "Array":
        return f"array<{seatunnel_type(_args(text)[0])}>"
    if base == "Map":
        key, value = _args(text)
        return f"map<{seatunnel_type(key)}, {seatunnel_type(value)}>"
    raise RuntimeConfigError(f"the ClickHouse type {ch_type} has no SeaTunnel type (Tuple, Nested, Variant, "
                             "Dynamic... are not read): cast the column in sql")


def _integer(ch_type: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> int:
        number = int(value)
        if number > MAX_BIGINT:
            raise DataError(f"the {ch_type} value {number} does not fit a bigint (SeaTunnel would wrap it "
                            "negative): cast it to String or Decimal in sql")
        return number
    return convert


def _timestamp(value: Any) -> dt.datetime:
    text = str(value).replace("T", " ")
    head, _, fraction = text.partition(".")
    out = dt.datetime.strptime(head, "%Y-%m-%d %H:%M:%S")
    return out.replace(microsecond=int((fraction + "000000")[:6])) if fraction else out


def reader(ch_type: str) -> Callable[[Any], Any]:
    """A function from a JSON value of ``ch_type`` (not null) to the Python value of its SeaTunnel type."""
    text = unwrap(ch_type)
    kind = seatunnel_type(text).split("<", 1)[0].split("(", 1)[0]
    base = text.split("(", 1)[0]
    if kind == "array":
        element = reader(_args(text)[0])
        return lambda v: [None if x is None else element(x) for x in v]
    if kind == "map":
        key_type, value_type = _args(text)
        key, value = reader(key_type), reader(value_type)
        return lambda v: {key(k): None if x is None else value(x) for k, x in v.items()}
    simple: dict[str, Callable[[Any], Any]] = {
        "tinyint": int, "smallint": int, "int": int, "bigint": _integer(text), "float": float, "double": float,
        "boolean": lambda v: bool(v) if not isinstance(v, str) else v.lower() == "true",
        "date": lambda v: dt.date.fromisoformat(str(v)), "timestamp": _timestamp,
        "decimal": lambda v: decimal.Decimal(str(v)),
    }
    if kind in simple:
        return simple[kind]
    if base in ("Point", "Ring", "Polygon", "MultiPolygon", "LineString", "MultiLineString", "JSON", "Object"):
        return lambda v: v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
    return str


def row_reader(types: Sequence[str]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function from one ``JSONCompactEachRow`` row to the row's Python values."""
    readers = [reader(t) for t in types]

    def read(values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(None if v is None else r(v) for r, v in zip(readers, values, strict=True))
    return read


def json_value(value: Any) -> Any:
    """A Python value (from a Spark row) as the JSON value ClickHouse parses into its column."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value).lower()
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S") + (f".{value.microsecond:06d}" if value.microsecond else "")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(bytes(value)).decode()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if hasattr(value, "asDict"):
        return {k: json_value(v) for k, v in value.asDict().items()}
    return str(value)


def json_lines(names: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """Rows as a ``JSONEachRow`` body."""
    return b"".join(json.dumps({n: json_value(v) for n, v in zip(names, row, strict=True)},
                               separators=(",", ":"), ensure_ascii=False).encode() + b"\n" for row in rows)


__all__ = ["MAX_BIGINT", "READ_SETTINGS", "WRITE_SETTINGS", "json_lines", "json_value", "reader", "row_reader",
           "seatunnel_type", "unwrap"]
