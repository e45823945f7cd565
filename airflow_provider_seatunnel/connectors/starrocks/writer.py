"""One Spark partition's StarRocks load, in the task: its rows spooled to a local file as SeaTunnel's
serializers write them (:mod:`..streamload.encode`), then one transaction begun, loaded and prepared under the
writer's label. Runs in Spark's Python workers; imports nothing of Spark.

json: one array of objects (``strip_outer_array: true``), fields by name; csv: fields joined by
``column_separator``, every row ending with ``row_delimiter``, the ``columns`` header naming them. With
``enable_upsert_delete`` each row carries ``__op`` (0 upsert, 1 delete). Bytes are sent as UTF-8 text.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi.errors import DataError
from ..streamload.encode import RowEncoder
from ..streamload.http import StreamLoadRefused
from .options import OP_COLUMN
from .txn import TxnClient

_HINT = ("a DELETE or UPDATE_BEFORE row reached the StarRocks sink: set enable_upsert_delete = true (a Primary "
         "Key table) to apply it, or filter such rows out")


def encoder_of(spec: Mapping[str, Any]) -> RowEncoder:
    """StarRocks's load body of a writer spec."""
    return RowEncoder(list(spec["columns"]), str(spec["format"]), str(spec["column_separator"]),
                      str(spec["row_delimiter"]), True, OP_COLUMN if spec["upsert_delete"] else None, _HINT,
                      delete_as_int=True, terminated=True, binary="utf8")


def headers_of(spec: Mapping[str, Any], encoder: RowEncoder) -> dict[str, str]:
    """The load's headers, as SeaTunnel sends them: csv names its columns (the user's ``columns`` wins), json
    is one array; ``format`` upper-case."""
    headers: dict[str, str] = {}
    if encoder.fmt == "csv":
        names = [*encoder.columns, *([encoder.delete_column] if encoder.delete_column else [])]
        headers["columns"] = ",".join(f"`{n}`" for n in names)
    headers.update({k: v for k, v in dict(spec["headers"]).items() if k != "format"})
    headers.update({"format": encoder.fmt.upper(), "Content-Type": "application/x-www-form-urlencoded"})
    if encoder.fmt == "json":
        headers["strip_outer_array"] = "true"
    return headers


def load_partition(spec: Mapping[str, Any], partition: int, rows: Iterator[Any]) -> Iterator[tuple[int, str, int]]:
    """Spool, then begin, load and prepare one transaction: yields (partition, label, rows); nothing for no
    rows. A failed load or prepare rolls the transaction back."""
    encoder = encoder_of(spec)
    kind_at = spec.get("kind_index")
    pairs = ((list(r)[:len(encoder.columns)], int(r[kind_at]) if kind_at is not None else 0) for r in rows)
    fd, path = tempfile.mkstemp(prefix="seatunnel-starrocks-", suffix=".load")
    try:
        with os.fdopen(fd, "wb") as out:
            count = encoder.write(pairs, out)
        if count == 0:
            return
        endpoint = spec["endpoint"]
        client = TxnClient(tuple(endpoint["fenodes"]), endpoint["username"], endpoint["password"],
                           int(spec["max_retries"]), float(spec["timeout_ms"]) / 1000.0, int(spec["backoff_ms"]),
                           int(spec["max_backoff_ms"]))
        db, table, label = spec["database"], spec["table"], f"{spec['label']}_{partition}"
        try:
            client.begin(db, table, label)
            try:
                answer = client.load(db, table, label, headers_of(spec, encoder), path)
                loaded = int(answer.get("NumberLoadedRows", count))
                if loaded != count:
                    raise DataError(f"the load of partition {partition} took {loaded} of {count} rows "
                                    f"({answer.get('NumberFilteredRows', 0)} filtered): "
                                    f"{str(answer.get('Message') or '')[:300]} {answer.get('ErrorURL') or ''}")
                client.prepare(db, label)
            except BaseException:
                with contextlib.suppress(Exception):
                    client.decide(db, label, "abort")
                raise
        except StreamLoadRefused as e:  # relayed by Spark as the deterministic class it names
            raise DataError(e.cause) from None
        yield partition, label, count
    finally:
        os.unlink(path)


__all__ = ["encoder_of", "headers_of", "load_partition"]
