"""One Spark partition's Doris Stream Load, in the task: its rows spooled to a local file in the load's format
(:mod:`..streamload.encode`), then one prepared (two-phase) transaction. Runs in Spark's Python workers;
imports nothing of Spark.

csv fields are joined by ``column_separator`` and rows by ``line_delimiter``; json is one object per line
(``read_json_by_line``) or one array (``strip_outer_array``); bytes as base64. With ``sink.enable-delete``
each row carries ``__DORIS_DELETE_SIGN__`` (``hidden_columns``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi.errors import DataError
from ..streamload.encode import RowEncoder, text
from .streamload import Client, StreamLoadRefused

DELETE_SIGN = "__DORIS_DELETE_SIGN__"
_HINT = ("a DELETE or UPDATE_BEFORE row reached the Doris sink: set sink.enable-delete = true (a Unique Key "
         "table) to apply it, or filter such rows out")


class Encoder(RowEncoder):
    """Doris's load body of a writer spec (columns, format, separators, headers, enable_delete)."""

    def __init__(self, spec: Mapping[str, Any]):
        super().__init__(list(spec["columns"]), str(spec["format"]), str(spec["column_separator"]),
                         str(spec["line_delimiter"]),
                         str(spec["headers"].get("strip_outer_array", "")).lower() == "true",
                         DELETE_SIGN if spec["enable_delete"] else None, _HINT)


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
        if encoder.delete_column:
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
