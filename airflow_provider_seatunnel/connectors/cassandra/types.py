"""SeaTunnel's mapping of Cassandra's column types (pure Python names: the driver's type classes are
read by their ``typename``), and the conversions of values both ways.

Read: ``text``/``varchar``/``ascii`` and ``varint``, ``uuid``, ``timeuuid``, ``inet`` are strings (an IPv6
address as Java writes it: eight hex groups, none left out, ``0:0:0:0:0:0:0:1``);
``tinyint``, ``smallint``, ``int`` as such; ``bigint`` and ``counter`` bigint; ``float``; ``double`` and
``decimal`` double; ``boolean``; ``time``, ``date``, ``timestamp`` (UTC, without a zone); ``blob``
``array<tinyint>`` (its bytes as signed numbers, as SeaTunnel types it);
``list<T>`` and ``set<T>`` arrays (of string, integer, float or boolean elements); ``map<K,V>`` maps; a
collection Cassandra returns as NULL (it stores an empty collection so) is read empty, as SeaTunnel reads it. Any
other type (``duration``, tuples, user types, vectors, nested collections beyond these) is refused with
its column named, as SeaTunnel refuses it.

Write: each value is bound with its column's type; a value the column cannot take (a string into an
``int``) is a data error naming the column.
"""

from __future__ import annotations

import datetime as dt
import decimal
import ipaddress
import uuid
from collections.abc import Callable
from typing import Any

from ...spi.errors import DataError

STRINGS = ("ascii", "text", "varchar", "varint", "uuid", "timeuuid", "inet")
SCALARS = {**{t: "string" for t in STRINGS}, "tinyint": "tinyint", "smallint": "smallint", "int": "int",
           "bigint": "bigint", "counter": "bigint", "float": "float", "double": "double", "decimal": "double",
           "boolean": "boolean", "time": "time", "date": "date", "timestamp": "timestamp", "blob": "array<tinyint>"}
ARRAY_ELEMENTS = ("string", "tinyint", "smallint", "int", "bigint", "float", "double", "boolean")


class UnsupportedType(ValueError):
    """A column type SeaTunnel's Cassandra connector does not map."""


def _base(cql_type: Any) -> Any:
    while getattr(cql_type, "typename", "") == "frozen":
        cql_type = cql_type.subtypes[0]
    return cql_type


def type_name(cql_type: Any) -> str:
    """The CQL name of a driver type class (``map<text, int>``)."""
    t = _base(cql_type)
    subs = getattr(t, "subtypes", ())
    name = str(getattr(t, "typename", t))
    return f"{name}<{', '.join(type_name(s) for s in subs)}>" if subs and name in ("list", "set", "map") else name


def seatunnel_type(cql_type: Any) -> str:
    """SeaTunnel's type string for a column type, or :class:`UnsupportedType`."""
    t = _base(cql_type)
    name = str(getattr(t, "typename", ""))
    if name in SCALARS:
        return SCALARS[name]
    if name in ("list", "set"):
        element = seatunnel_type(t.subtypes[0])
        if element not in ARRAY_ELEMENTS:
            raise UnsupportedType(f"{type_name(t)} (arrays hold {', '.join(ARRAY_ELEMENTS)})")
        return f"array<{element}>"
    if name == "map":
        return f"map<{seatunnel_type(t.subtypes[0])}, {seatunnel_type(t.subtypes[1])}>"
    raise UnsupportedType(type_name(t))


def reader(cql_type: Any) -> Callable[[Any], Any]:
    """The conversion of a driver value of ``cql_type`` to the Spark value of its SeaTunnel type."""
    t = _base(cql_type)
    name = str(getattr(t, "typename", ""))
    if name == "inet":
        return _inet
    if name in ("varint", "uuid", "timeuuid"):
        return str
    if name == "decimal":
        return float
    if name == "time":
        return lambda v: dt.time(v.hour, v.minute, v.second, v.nanosecond // 1000)
    if name == "date":
        return _date
    if name == "blob":
        return lambda v: memoryview(v).cast("b").tolist()  # signed, as Java's byte[]
    if name in ("list", "set"):
        element = reader(t.subtypes[0])
        order = sorted if name == "set" else list
        return lambda v: [element(x) for x in order(v)]
    if name == "map":
        key, value = reader(t.subtypes[0]), reader(t.subtypes[1])
        return lambda v: {key(k): value(x) for k, x in v.items()}
    return _same


def null_value(cql_type: Any) -> Any:
    """What a NULL of ``cql_type`` reads as: an empty array or map for a collection (Cassandra keeps no empty
    collection apart from NULL), else NULL."""
    name = str(getattr(_base(cql_type), "typename", ""))
    return [] if name in ("list", "set") else {} if name == "map" else None


def _inet(value: Any) -> str:
    """An address's text as Java's ``getHostAddress`` gives it: IPv4 dotted (an IPv4-mapped IPv6 address too),
    IPv6 as eight hex groups without leading zeros, none compressed."""
    address = ipaddress.ip_address(str(value).split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))
    return str(address)


def _same(value: Any) -> Any:
    return value


def _date(value: Any) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return value.date()  # cassandra.util.Date
    except (ValueError, OverflowError):
        raise DataError(f"the date {value} is outside the years 1-9999 a date can hold") from None


def _uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _decimal(value: Any) -> decimal.Decimal:
    return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{type(value).__name__} is not an integer")
    return int(value)


def _float(value: Any) -> float:
    if isinstance(value, (bool, str)):
        raise TypeError(f"{type(value).__name__} is not a number")
    return float(value)


def _timestamp(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value  # naive: UTC, as the session's time zone (UTC) wrote it
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    raise TypeError(f"{type(value).__name__} is not a timestamp")


def _blob(value: Any) -> bytes:
    """A blob's bytes from ``bytes`` or from numbers (``array<tinyint>``: -128..127, or 0..255)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        raise TypeError("text is not bytes")
    numbers = [int(b) for b in value]
    wrong = next((b for b in numbers if not -128 <= b <= 255), None)
    if wrong is not None:
        raise ValueError(f"{wrong} is not a byte")
    return bytes(b & 0xFF for b in numbers)


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        raise TypeError("bytes are not text")
    return value if isinstance(value, str) else str(value)


_WRITERS: dict[str, Callable[[Any], Any]] = {
    "uuid": _uuid, "timeuuid": _uuid, "decimal": _decimal, "varint": _int, "tinyint": _int, "smallint": _int,
    "int": _int, "bigint": _int, "float": _float, "double": _float, "timestamp": _timestamp, "text": _text,
    "varchar": _text, "ascii": _text, "inet": _text, "blob": _blob,
}


def writer(cql_type: Any) -> Callable[[Any], Any]:
    """The conversion of a Spark value to what the driver binds for a column of ``cql_type``."""
    t = _base(cql_type)
    name = str(getattr(t, "typename", ""))
    if name in _WRITERS:
        return _WRITERS[name]
    if name in ("list", "set"):
        element = writer(t.subtypes[0])
        kind: Callable[[Any], Any] = set if name == "set" else list
        return lambda v: kind(element(x) for x in v)
    if name == "map":
        key, value = writer(t.subtypes[0]), writer(t.subtypes[1])
        return lambda v: {key(k): value(x) for k, x in dict(v).items()}
    return _same
