"""The Http sink: every row of every input table is POSTed to ``url`` as one JSON object (its fields by
name, nulls as null, timestamps and times in ISO text, dates ``yyyy-MM-dd``, decimals as numbers, bytes in
base64), as SeaTunnel's ``Http`` sink sends it, with ``Content-Type: application/json``; ``headers`` (and
an ``http_conn_id`` connection's base URL, basic credentials and extra headers) on every request,
``params`` in its query string.

The rows are posted from Spark's Python workers, each partition by one ``requests`` session, in the
partition's order, one request at a time, with :func:`.request.send`'s retries and failure classes: a
refused row fails the job (SeaTunnel logs and drops it, :data:`.options.SINK_DEVIATIONS`).

Delivery is at least once: an HTTP endpoint takes no part in a commit, so a failed task, a restore or an
overlapping attempt posts the rows it reaches again (docs/restores.md). Nothing is staged or committed.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.rows import data_columns, quote
from ..temporal import json_ready
from .options import parse_sink

log = logging.getLogger("seatunnel.http")

_BODY = "__st_body"
_JSON = {"dateFormat": "yyyy-MM-dd", "ignoreNullFields": "false"}


def body_column(df: Any) -> Any:
    """Each row as SeaTunnel's JSON serialization writes it (the data columns only)."""
    from pyspark.sql import functions as F

    fields = [json_ready(F.col(quote(f.name)), f.dataType).alias(f.name) for f in df.schema.fields
              if f.name in set(data_columns(df))]
    return F.to_json(F.struct(*fields), _JSON)


def _post_batches(config: Mapping[str, Any], batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow: POST each body of the partition; one row per batch, the count posted."""
    import pyarrow as pa

    from .request import Request, build, send, session

    options = parse_sink(config)
    template = build(options, None)
    client = session(options)
    try:
        for batch in batches:
            sent = 0
            for body in batch.column(0).to_pylist():
                send(options, Request("POST", template.url, template.headers, body=body), client)
                sent += 1
            yield pa.RecordBatch.from_pydict({"sent": [sent]}, schema=pa.schema([("sent", pa.int64())]))
    finally:
        client.close()


def write(ctx: RunContext, vertex: Vertex, data: Dataset) -> None:
    """POST the rows of every table of ``data``; logs how many each table sent."""
    from pyspark.sql import functions as F

    options = parse_sink(vertex.config)  # a bad block fails here, on the driver, before any request
    config = json.loads(json.dumps(dict(vertex.config), default=str))  # plain values for the workers
    for table, df in data.items():
        faulted = ctx.with_write_faults(vertex, df)  # a no-op unless a restore trial arms sink.write
        bodies = faulted.select(body_column(faulted).alias(_BODY))
        counted = bodies.mapInArrow(functools.partial(_post_batches, config), "sent long")
        total = counted.agg(F.sum("sent")).collect()[0][0] or 0
        log.info("Http %s: posted %d row(s) of %s to %s", vertex.ref, total, table, options.label)
