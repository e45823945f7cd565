"""``equals_to`` values read as SeaTunnel reads them: the config value becomes a JSON node, whose text
is converted to the field's type (Jackson's ``asText``, ``Double.toString`` for doubles).

Maps become dicts, rows lists of field values (by position), decimals ``Decimal`` with the scale
SeaTunnel's BigDecimal would have (``1.50`` has scale 2; a HOCON double has the scale of its
``Double.toString`` text). Dates, times and timestamps accept the formats SeaTunnel detects.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any

from ...spi.schema import DataType
from ..javatext import java_double

_INT_RANGES = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}


def num_text(value: float | None) -> str:
    """A rule value for a message (``5``, not ``5.0``)."""
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else repr(value)


def show(value: Any) -> str:
    """A config value for a message (strings quoted, lists and objects as JSON)."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _json_text(value: Any) -> str:
    """Jackson's ``asText()`` of the JSON node a config value becomes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, (list, dict)):
        return ""
    return str(value)


_DATE = [re.compile(p) for p in (r"(\d{4})-(\d{2})-(\d{2})", r"(\d{4})年(\d{2})月(\d{2})日", r"(\d{4})/(\d{2})/(\d{2})",
                                 r"(\d{4})\.(\d{2})\.(\d{2})", r"(\d{4})(\d{2})(\d{2})")]
_TIMESTAMP = [re.compile(p) for p in (
    r"(\d{4})-(\d{2})-(\d{2})[\sT](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?",
    r"(\d{4})/(\d{2})/(\d{2})\s(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?",
    r"(\d{4})\.(\d{2})\.(\d{2})\s(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?",
    r"(\d{4})年(\d{2})月(\d{2})日\s(\d{2})时(\d{2})分(\d{2})秒()",
    r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})()")]
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{0,9}))?")


def _micros(fraction: str | None) -> int:
    return int((fraction or "").ljust(6, "0")[:6])


def convert_expected(value: Any, t: DataType) -> Any:
    """``value`` (an ``equals_to``) as a value of type ``t``; ValueError when SeaTunnel could not read it.

    Maps become dicts, rows lists of field values (positional), decimals ``Decimal`` with
    the scale SeaTunnel's BigDecimal would have (``1.50`` has scale 2; a HOCON double has
    the scale of its ``Double.toString`` text).
    """
    if value is None or t.name == "null":
        return None
    text = _json_text(value).strip()
    if t.name == "boolean":
        return value if isinstance(value, bool) else text.lower() == "true"
    if t.name in _INT_RANGES:
        return _integer(value, text, t.name)
    if t.name in ("float", "double"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{show(value)} is not a number") from None
    if t.name == "decimal":
        return _decimal(value, text)
    if t.name == "string":
        if isinstance(value, (list, dict)):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return _json_text(value)
    if t.name == "bytes":
        return _bytes(value)
    if t.name in ("date", "timestamp", "time"):
        return _temporal(value, text, t.name)
    if t.name in ("array", "map", "row"):
        return _nested(value, t)
    raise ValueError(f"equals_to is not supported for {t}")


def _integer(value: Any, text: str, name: str) -> int:
    if isinstance(value, float) and name in ("int", "bigint") and -_INT_RANGES[name] <= value < _INT_RANGES[name]:
        return int(value)  # Jackson's asInt()/asLong() truncates a double
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(f"{show(value)} is not an integer")
    if not -_INT_RANGES[name] <= int(text) < _INT_RANGES[name]:
        raise ValueError(f"{show(value)} is out of the {name} range")
    return int(text)


def _decimal(value: Any, text: str) -> Decimal:
    try:
        number = Decimal(str(value) if isinstance(value, int) and not isinstance(value, bool) else text)
    except InvalidOperation:
        raise ValueError(f"{show(value)} is not a decimal number") from None
    if not number.is_finite() or isinstance(value, bool):
        raise ValueError(f"{show(value)} is not a decimal number")
    return number


def _bytes(value: Any) -> bytes:
    if not isinstance(value, str):
        raise ValueError("bytes are written as a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{show(value)} is not base64") from None


def _temporal(value: Any, text: str, name: str) -> date | datetime | time:
    if name == "date":
        for pattern in _DATE:
            m = pattern.fullmatch(text)
            if m:
                return date(int(m[1]), int(m[2]), int(m[3]))
        raise ValueError(f"{show(value)} is not a date (write yyyy-MM-dd)")
    if name == "timestamp":
        for pattern in _TIMESTAMP:
            m = pattern.fullmatch(text)
            if m:
                return datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), _micros(m[7]))
        raise ValueError(f"{show(value)} is not a timestamp (write yyyy-MM-dd HH:mm:ss[.SSS])")
    m = _TIME.fullmatch(text)
    if not m:
        raise ValueError(f"{show(value)} is not a time (write HH:mm:ss[.SSS])")
    return time(int(m[1]), int(m[2]), int(m[3]), _micros(m[4]))


def _nested(value: Any, t: DataType) -> Any:
    """An array (a list), a map (an object, keys read from their text) or a row (a list or an object)."""
    if t.name == "array" and t.element is not None:
        if not isinstance(value, list):
            raise ValueError(f"an array is written as a list, found {show(value)}")
        return [convert_expected(v, t.element) for v in value]
    if t.name == "map" and t.key is not None and t.element is not None:
        if not isinstance(value, Mapping):
            raise ValueError(f"a map is written as an object {{ key = value }}, found {show(value)}")
        return {convert_expected(str(k), t.key): convert_expected(v, t.element) for k, v in value.items()}
    if t.name == "row":
        if isinstance(value, list):
            if len(value) < len(t.fields):
                raise ValueError(f"the row has {len(t.fields)} fields, the list gives {len(value)}")
            return [convert_expected(v, f.type) for v, f in zip(value, t.fields, strict=False)]
        if isinstance(value, Mapping):
            missing = [f.name for f in t.fields if f.name not in value]
            if missing:
                raise ValueError("missing row field(s) " + ", ".join(missing))
            return [convert_expected(value[f.name], f.type) for f in t.fields]
        raise ValueError(f"a row is written as a list or an object, found {show(value)}")
    raise ValueError(f"equals_to is not supported for {t}")
