"""Values to HBase's cell bytes and back, as SeaTunnel's Hbase connector encodes them (HBase's ``Bytes``).

Written (:func:`encoder`): ``tinyint`` 1 byte, ``smallint`` 2, ``int`` 4, ``bigint`` 8 (big-endian two's
complement), ``float`` 4 and ``double`` 8 (IEEE 754, big-endian), ``boolean`` one byte (0xFF true, 0x00
false), ``string`` in ``encoding``, ``array`` its elements' text joined by ``,`` in ``encoding``; other
types are refused, as SeaTunnel's sink refuses them. Read (:func:`decoder`): the same, and ``bytes`` as
they are, ``decimal`` as a 4-byte float (SeaTunnel's reader), ``date``/``time``/``timestamp`` from the text
``yyyy-MM-dd``, ``HH:mm:ss`` and ``yyyy-MM-dd HH:mm:ss``. A cell whose length does not fit the type is a
:class:`CellError`, never a crash of the reader."""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ...spi.schema import DataType

_FIXED = {"tinyint": ">b", "smallint": ">h", "int": ">i", "bigint": ">q", "float": ">f", "double": ">d"}
_CHARSETS = {"utf8": "utf-8", "gbk": "gbk"}


class CellError(ValueError):
    """A value that cannot be encoded, or cell bytes that do not decode to the declared type."""


def charset(encoding: str) -> str:
    return _CHARSETS.get(encoding.lower(), "utf-8")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def encoder(kind: DataType, encoding: str = "utf8") -> Callable[[Any], bytes]:
    """The function giving a non-null value's cell bytes for a field of type ``kind``."""
    name = kind.name
    cs = charset(encoding)
    if name in _FIXED:
        fmt = _FIXED[name]

        def fixed(value: Any) -> bytes:
            try:
                return struct.pack(fmt, value)
            except struct.error as e:
                raise CellError(f"{value!r} does not fit {name}: {e}") from None
        return fixed
    if name == "boolean":
        return lambda value: b"\xff" if value else b"\x00"
    if name == "string":
        return lambda value: str(value).encode(cs)
    if name == "array":
        return lambda value: ",".join("null" if v is None else _text(v) for v in value).encode(cs)
    raise CellError(f"Hbase connector does not support this column type [{kind}]")


def _date(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%Y-%m-%d").date()


def _time(text: str) -> dt.time:
    return dt.datetime.strptime(text, "%H:%M:%S").time()


def _timestamp(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def decoder(kind: DataType) -> Callable[[bytes], Any]:
    """The function giving a cell's value for a field of type ``kind``; raises :class:`CellError`."""
    name = kind.name
    if name in _FIXED:
        fmt = _FIXED[name]
        size = struct.calcsize(fmt)

        def fixed(cell: bytes) -> Any:
            if len(cell) < size:
                raise CellError(f"{len(cell)} byte(s) cannot hold a {name} ({size} bytes)")
            return struct.unpack(fmt, cell[:size])[0]
        return fixed
    if name == "decimal":
        scale = kind.scale or 0

        def decimal(cell: bytes) -> Decimal:
            if len(cell) < 4:
                raise CellError(f"{len(cell)} byte(s) cannot hold a decimal read as a float (4 bytes)")
            return round(Decimal(repr(struct.unpack(">f", cell[:4])[0])), scale)
        return decimal
    if name == "boolean":
        def boolean(cell: bytes) -> bool:
            if len(cell) != 1:
                raise CellError(f"{len(cell)} byte(s) are not a boolean (1 byte)")
            return cell != b"\x00"
        return boolean
    if name == "bytes":
        return bytes
    texts: dict[str, Callable[[str], Any]] = {"string": str, "date": _date, "time": _time, "timestamp": _timestamp}
    if name in texts:
        parse = texts[name]

        def text(cell: bytes) -> Any:
            try:
                return parse(cell.decode("utf-8"))
            except ValueError as e:
                raise CellError(f"{cell[:40]!r} is not a {name}: {e}") from None
        return text
    raise CellError(f"Unsupported data type {kind}")
