"""Console sink: prints rows to the log, as SeaTunnel's Console does.

Options: ``log.print.data`` (default true), ``log.print.delay.ms`` (default 0). Each row
is logged as ``subtaskIndex=<i>  rowIndex=<n>:  SeaTunnelRow#tableId=<t>
SeaTunnelRow#kind=<KIND> : v1, v2, ...``. The subtask is the sink's parallel writer that
received the row: the engine hands the sink its data in ``vertex.parallelism`` partitions
(the plan's figure), one per subtask, so subtasks are numbered ``0 .. parallelism - 1`` and
``rowIndex`` counts from 1 within each. Rows stream to the driver partition by partition
(never all at once) in the one pass that also counts them.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ..spi import SINK, Connector, Dataset, RunContext, Sink, Vertex
from ..spi.options import as_bool, as_int
from ..spi.rows import ROW_KIND, ROW_KINDS, data_columns, quote

log = logging.getLogger("seatunnel.console")


def render_value(value: Any) -> str:
    """A value as SeaTunnel's Console prints it (null as empty, arrays and rows in brackets)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if isinstance(value, dict):
        return json.dumps({str(k): _plain(v) for k, v in value.items()}, default=str, separators=(",", ":"))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    if hasattr(value, "asDict"):  # a nested Row
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    if isinstance(value, datetime):
        text = value.isoformat(timespec="microseconds" if value.microsecond else "seconds")
        return text[:-3] if text.endswith(":00") and not value.microsecond else text
    if isinstance(value, (date, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _plain(value: Any) -> Any:
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (Decimal, date, datetime, bytes)):
        return str(value)
    return value


def _print_table(ctx: RunContext, table: str, df: Any, delay_ms: int) -> None:
    """Log every row of ``df`` with its subtask (the partition it arrived in) and its index there."""
    from pyspark.sql import functions as F

    columns = data_columns(df)
    # Stream rows to the driver partition by partition: computed (and counted) once by a noop
    # pass, then read from the cache (toLocalIterator would run a job per partition).
    rows = ctx.materialize(df.select(F.spark_partition_id().alias("__st_subtask"), F.col(ROW_KIND),
                                     *[F.col(quote(c)) for c in columns]))
    index: dict[int, int] = {}
    for row in rows.toLocalIterator():
        subtask = row[0]
        index[subtask] = index.get(subtask, 0) + 1
        values = ", ".join(render_value(v) for v in row[2:])
        log.info("subtaskIndex=%s  rowIndex=%s:  SeaTunnelRow#tableId=%s SeaTunnelRow#kind=%s : %s",
                 subtask, index[subtask], table, ROW_KINDS[row[1] or 0], values)
        if delay_ms:
            time.sleep(delay_ms / 1000)
    rows.unpersist()


class Console(Connector, Sink):
    name = "Console"
    kinds = frozenset({SINK})
    description = "Prints rows to the log."

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Log each table's row type, then its rows (unless ``log.print.data`` is false: then the rows
        are only counted). Nothing to commit."""
        print_data = as_bool(vertex.config.get("log.print.data", True))
        delay_ms = as_int(vertex.config.get("log.print.delay.ms", 0)) or 0
        for table, df in data.items():
            columns = data_columns(df)
            types = ", ".join(f"{f.name}<{f.dataType.simpleString().upper()}>" for f in df.schema.fields
                              if f.name in columns)
            log.info("output rowType: %s", types)
            if print_data is False:
                df.write.format("noop").mode("overwrite").save()  # one pass: the counts
                continue
            _print_table(ctx, table, df, delay_ms)
        return None


CONNECTOR = Console()
