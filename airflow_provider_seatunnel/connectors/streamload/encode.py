"""Rows as a Stream Load body, in Spark's Python workers (imports nothing of Spark).

Values as SeaTunnel's serializers write them: csv joins the fields with the column separator (``\\N`` for
null), json writes one object per row (by line, or in one array); timestamps as ``yyyy-MM-dd
HH:mm:ss[.ffffff]``, decimals plain, booleans ``true``/``false``, arrays and maps as JSON. With a delete
column, each row carries its operation: 1 for DELETE and UPDATE_BEFORE rows, 0 for the others.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Iterable
from typing import Any

from ...spi.errors import DataError

#: the row kinds (their codes) that delete: UPDATE_BEFORE and DELETE
DELETE_KINDS = (1, 3)


def text(value: Any, binary: str = "base64") -> Any:
    """A value as the load's text (None stays None); ``binary``: bytes as ``base64`` or ``utf8`` text."""
    if value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool)):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S") + (f".{value.microsecond:06d}" if value.microsecond else "")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (bytes, bytearray)):
        if binary == "utf8":
            try:
                return bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise DataError("a bytes value is not UTF-8 text: the load sends bytes as text") from None
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, (list, tuple)):
        return [text(v, binary) for v in value]
    if isinstance(value, dict):
        return {str(k): text(v, binary) for k, v in value.items()}
    if hasattr(value, "asDict"):
        return {k: text(v, binary) for k, v in value.asDict().items()}
    return str(value)


class RowEncoder:
    """Rows to the bytes of one load body.

    ``delete_column``: the column carrying each row's operation (None: DELETE and UPDATE_BEFORE rows fail with
    ``delete_hint``); ``delete_as_int``: the operation as a JSON number; ``terminated``: every csv row ends with
    the line delimiter (else rows are only separated by it); ``binary``: bytes as ``base64`` or ``utf8``."""

    def __init__(self, columns: list[str], fmt: str, separator: str, delimiter: str, json_array: bool,
                 delete_column: str | None, delete_hint: str, delete_as_int: bool = False, terminated: bool = False,
                 binary: str = "base64"):
        self.columns, self.fmt, self.separator, self.delimiter = columns, fmt, separator, delimiter
        self.array = fmt == "json" and json_array
        self.delete_column, self.delete_hint, self.delete_as_int = delete_column, delete_hint, delete_as_int
        self.terminated = terminated and fmt == "csv"
        self.binary = binary

    def encode(self, values: list[Any], kind: int) -> bytes:
        if kind in DELETE_KINDS and self.delete_column is None:
            raise DataError(self.delete_hint)
        fields = [text(v, self.binary) for v in values]
        names = self.columns
        if self.delete_column is not None:
            op: Any = int(kind in DELETE_KINDS)
            fields, names = [*fields, op if self.delete_as_int else str(op)], [*names, self.delete_column]
        if self.fmt == "json":
            return json.dumps(dict(zip(names, fields, strict=True)), ensure_ascii=False).encode()
        cells = ["\\N" if f is None else json.dumps(f) if isinstance(f, (list, dict)) else str(f) for f in fields]
        return self.separator.join(cells).encode()

    def write(self, rows: Iterable[tuple[list[Any], int]], out: Any) -> int:
        count = 0
        between = b"," if self.array else (b"\n" if self.fmt == "json" else self.delimiter.encode())
        if self.array:
            out.write(b"[")
        for values, kind in rows:
            if count and not self.terminated:
                out.write(between)
            out.write(self.encode(values, kind))
            if self.terminated:
                out.write(between)
            count += 1
        if self.array:
            out.write(b"]")
        return count


def unescape(text: str) -> str:
    """A separator as Stream Load reads it: ``\\t``, ``\\n`` and ``\\xHH`` escapes."""
    if text.startswith("\\x") and len(text) == 4:
        return chr(int(text[2:], 16))
    return text.replace("\\t", "\t").replace("\\n", "\n")


__all__ = ["DELETE_KINDS", "RowEncoder", "text", "unescape"]
