"""One Spark partition's SelectDB Cloud load, in the task: its rows spooled to a local file as SeaTunnel's
serializer writes them (:mod:`..streamload.encode`: csv fields joined by ``file.column_separator``, json one
object per line, rows joined by ``file.line_delimiter``; ``__DORIS_DELETE_SIGN__`` with ``sink.enable-delete``),
then uploaded to the internal stage under the writer's file name. Runs in Spark's Python workers.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi.errors import DataError
from ..streamload.encode import RowEncoder
from ..streamload.http import StreamLoadRefused
from .copy import CopyClient, ref_of

DELETE_SIGN = "__DORIS_DELETE_SIGN__"
_HINT = ("a DELETE or UPDATE_BEFORE row reached the SelectDBCloud sink: set sink.enable-delete = true (a Unique "
         "model table) to apply it, or filter such rows out")


def encoder_of(spec: Mapping[str, Any]) -> RowEncoder:
    """SelectDB's file body of a writer spec."""
    return RowEncoder(list(spec["columns"]), str(spec["format"]), str(spec["column_separator"]),
                      str(spec["line_delimiter"]), False, DELETE_SIGN if spec["enable_delete"] else None, _HINT)


def load_partition(spec: Mapping[str, Any], partition: int, rows: Iterator[Any]) -> Iterator[tuple[int, str, int]]:
    """Spool, then stage one file: yields (partition, the file's reference, rows); nothing for no rows. A retried
    task stages its file again under the same name (the stage keeps the newest upload)."""
    encoder = encoder_of(spec)
    kind_at = spec.get("kind_index")
    pairs = ((list(r)[:len(encoder.columns)], int(r[kind_at]) if kind_at is not None else 0) for r in rows)
    fd, path = tempfile.mkstemp(prefix="seatunnel-selectdb-", suffix=".load")
    try:
        with os.fdopen(fd, "wb") as out:
            count = encoder.write(pairs, out)
        if count == 0:
            return
        endpoint = spec["endpoint"]
        client = CopyClient(tuple(endpoint["fenodes"]), endpoint["username"], endpoint["password"],
                            int(spec["max_retries"]))
        name = f"{spec['label']}_{partition}.{encoder.fmt}"
        try:
            client.upload(name, path)
        except StreamLoadRefused as e:  # relayed by Spark as the deterministic class it names
            raise DataError(e.cause) from None
        yield partition, ref_of(str(spec["table"]), name, str(spec["cluster"]), spec["properties"]), count
    finally:
        os.unlink(path)


__all__ = ["encoder_of", "load_partition"]
