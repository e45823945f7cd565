"""The RabbitMQ sink: at least once, with publisher confirms, a commit record and a fence per run.

RabbitMQ has no transaction that spans a restore (a channel's transaction dies with its connection, and
a message once routed cannot be withdrawn), so no staging can be published atomically: the sink
publishes in ``prepare`` and keeps the two guarantees the broker allows, per (run id, pipeline, sink,
table), a digest named ``<id>`` below:

* **commit record**: once Spark's write finished (every write task's messages confirmed by the broker),
  the driver declares the durable queue ``seatunnel.commit.<id>`` (expiring unused after
  :data:`.options.RECORD_TTL_MS`; a micro-batch's after an hour). A restore of a run whose record exists
  publishes nothing (its rows only pass through Spark's ``noop`` sink, to be counted).
* **fence**: before publishing, the driver declares ``seatunnel.fence.<id>`` *exclusive*; the broker
  refuses a second connection's declaration (``RESOURCE_LOCKED``) while the first lives, so two attempts
  of one run never publish at once: the later one fails (transiently, Airflow retries it) and, once the
  earlier recorded its commit, publishes nothing. The fence goes when its connection closes (the attempt
  ends or dies).

A driver killed while publishing, or after it and before the record, leaves messages the restore
publishes again: duplicates of at most that run's rows, never a loss.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import replace
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError
from ...spi.pysources import register_for_write
from ..jsoncolumns import json_text
from .client import RESOURCE_LOCKED, connected, queue_exists, reply_code
from .options import RECORD_TTL_MS, STREAM_RECORD_TTL_MS, RabbitOptions

log = logging.getLogger("seatunnel.rabbitmq")

COMMIT_PREFIX = "seatunnel.commit."
FENCE_PREFIX = "seatunnel.fence."


def commit_id(ctx: RunContext, vertex: Vertex, table: str) -> str:
    """The digest naming one table's commit of this run, pipeline and sink."""
    text = json.dumps([ctx.run_id, ctx.pipeline_key, vertex.ref, table])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _fence(conn: Any, key: str, target: str) -> None:
    """Hold the run's fence (an exclusive queue of this connection) or raise: another attempt holds it."""
    import pika.exceptions as pe

    try:
        conn.channel().queue_declare(FENCE_PREFIX + key, exclusive=True, auto_delete=True)
    except pe.ChannelClosedByBroker as e:
        if reply_code(e) == RESOURCE_LOCKED:
            raise PipelineError(f"another attempt of this run is publishing to {target} (it holds the fence "
                                f"{FENCE_PREFIX + key}): retry once it ended") from None
        raise


def _spec(options: RabbitOptions) -> dict[str, Any]:
    assert options.endpoint is not None
    # an exclusive queue belongs to one connection: the writers cannot declare it, as SeaTunnel's cannot
    declare = None if options.exclusive else options.declare_args()
    return {"endpoint": options.endpoint.to_json(), "queue": options.queue, "routing_key": options.routing_key,
            "exchange": options.exchange, "declare": declare, "persistent": options.durable}


def write(ctx: RunContext, vertex: Vertex, data: Dataset, options: RabbitOptions) -> None:
    """Publish every table's rows as JSON messages, once per run id (fenced, recorded)."""
    from .datasource import NAME, SPEC_OPTION, RabbitMQDataSource

    endpoint = options.endpoint
    assert endpoint is not None
    target = f"{endpoint.label} queue {options.queue!r}"
    ttl = STREAM_RECORD_TTL_MS if ctx.batch_id is not None else RECORD_TTL_MS
    for table, df in data.items():
        key = commit_id(ctx, vertex, table)
        # no heartbeat: the driver's connection waits in Spark's write, servicing nothing, and must keep the fence
        with connected(replace(endpoint, heartbeat=0), f"cannot publish to {target}") as conn:
            _fence(conn, key, target)
            if queue_exists(conn, COMMIT_PREFIX + key):
                log.info("RabbitMQ %s: table %s of run %s was published already: nothing sent", vertex.ref, table,
                         ctx.run_id)
                df.write.format("noop").mode("overwrite").save()
                continue
            rows = ctx.with_write_faults(vertex, df)
            register_for_write(ctx.spark, rows, RabbitMQDataSource)
            body = json_text(rows).alias("body")
            rows.select(body).write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(_spec(options))).save()
            ctx.fault_point("sink.commit", vertex)
            conn.channel().queue_declare(COMMIT_PREFIX + key, durable=True, arguments={"x-expires": ttl})
            log.info("RabbitMQ %s: table %s published to %s (every message confirmed)", vertex.ref, table, target)
