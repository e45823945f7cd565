"""One Spark partition's Stream Load, in the task: its rows spooled to a local file in the load's format,
then one prepared (two-phase) transaction. Runs in Spark's Python workers; imports nothing of Spark.

Values as SeaTunnel's serializers write them: csv joins the fields with ``column_separator`` (``\\N`` for
null), json writes one object per line (``read_json_by_line``) or one array (``strip_outer_array``);
timestamps as ``yyyy-MM-dd HH:mm:ss[.ffffff]``, decimals plain, booleans ``true``/``false``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...spi.errors import DataError
from .streamload import Client, StreamLoadRefused

DELETE_SIGN = "__DORIS_DELETE_SIGN__"
#: the row kinds (their codes) that delete with sink.enable-delete: UPDATE_BEFORE and DELETE
DELETE_KINDS = (1, 3)


def text(value: Any) -> Any:
    """A value as the load's text (None stays None)."""
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
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    if isinstance(value, dict):
        return {str(k): text(v) for k, v in value.items()}
    if hasattr(value, "asDict"):
        return {k: text(v) for k, v in value.asDict().items()}
    return str(value)


class Encoder:
    """Rows to the bytes of one load body."""

    def __init__(self, spec: Mapping[str, Any]):
        self.columns: list[str] = list(spec["columns"])
        self.fmt = str(spec["format"])
        self.separator, self.delimiter = str(spec["column_separator"]), str(spec["line_delimiter"])
        self.array = self.fmt == "json" and str(spec["headers"].get("strip_outer_array", "")).lower() == "true"
        self.delete = bool(spec["enable_delete"])

    def encode(self, values: list[Any], kind: int) -> bytes:
        if kind in DELETE_KINDS and not self.delete:
            raise DataError("a DELETE or UPDATE_BEFORE row reached the Doris sink: set sink.enable-delete = true "
                             "(a Unique Key table) to apply it, or filter such rows out")
        fields = [text(v) for v in values]
        names = self.columns
        if self.delete:
            fields, names = [*fields, "1" if kind in DELETE_KINDS else "0"], [*names, DELETE_SIGN]
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
            if count:
                out.write(between)
            out.write(self.encode(values, kind))
            count += 1
        if self.array:
            out.write(b"]")
        return count


def load_partition(spec: Mapping[str, Any], partition: int, rows: Iterator[Any]) -> Iterator[tuple[int, int, int]]:
    """Spool then load one partition: yields (partition, transaction id, rows); nothing for no rows."""
    encoder = Encoder(spec)
    kind_at = spec.get("kind_index")
    pairs = ((list(r)[:len(encoder.columns)], int(r[kind_at]) if kind_at is not None else 0) for r in rows)
    fd, path = tempfile.mkstemp(prefix="seatunnel-doris-", suffix=".load")
    try:
        with os.fdopen(fd, "wb") as out:
            count = encoder.write(pairs, out)
        if count == 0:
            return
        endpoint = spec["endpoint"]
        client = Client(tuple(endpoint["fenodes"]), endpoint["username"], endpoint["password"],
                        int(spec["max_retries"]))
        headers = dict(spec["headers"])
        if encoder.delete:
            headers["hidden_columns"] = DELETE_SIGN
        try:
            answer = client.load(spec["database"], spec["table"], f"{spec['label']}_{partition}", headers, path)
        except StreamLoadRefused as e:  # relayed by Spark as the deterministic class it names
            raise DataError(e.cause) from None
        loaded = int(answer.get("NumberLoadedRows", count))
        if loaded != count:
            filtered = answer.get("NumberFilteredRows", 0)
            client.decide(spec["database"], int(answer["TxnId"]), "abort")
            raise DataError(f"the load of partition {partition} took {loaded} of {count} rows ({filtered} "
                             f"filtered): {str(answer.get('Message') or '')[:300]} {answer.get('ErrorURL') or ''}")
        yield partition, int(answer["TxnId"]), count
    finally:
        os.unlink(path)


__all__ = ["DELETE_SIGN", "Encoder", "load_partition", "text"]
