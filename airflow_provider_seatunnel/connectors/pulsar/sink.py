"""The Pulsar sink: at least once, every message confirmed, with a commit record and a fence per run.

PyPI's ``pulsar-client`` has no transactions, so no staging can be published atomically (EXACTLY_ONCE is refused
at compile time): the sink sends in ``prepare``. ``NON`` just sends. ``AT_LEAST_ONCE`` keeps, per (run id,
pipeline, sink, table), a digest named ``<id>`` below, the two guarantees the broker allows:

* **fence**: before sending, the driver opens an *exclusive* producer on the record topic
  ``seatunnel-commit-<id>`` (the sink topic's namespace); the broker refuses a second exclusive producer while the
  first lives, so two attempts of one run never send at once: the later one fails (transiently: Airflow retries
  it) and, once the earlier recorded its commit, sends nothing.
* **commit record**: once Spark's write finished (every write task's messages confirmed), the fence's producer
  sends one record message; the topic's durable subscription ``seatunnel`` (never acknowledged) keeps it from the
  broker's retention and inactive-topic deletion. A restore of a run whose record exists sends nothing (its rows
  only pass through Spark's ``noop`` sink, to be counted).

A driver killed while sending, or after it and before the record, leaves messages the restore sends again:
duplicates of at most that run's rows, never a loss.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError
from ...spi.rows import data_columns, keys_in_arrival_order, quote
from ...spi.twophase import digest
from ..jsoncolumns import json_text
from .client import connected, error_of
from .options import PulsarOptions

log = logging.getLogger("seatunnel.pulsar")

RECORD_PREFIX = "seatunnel-commit-"
RECORD_SUBSCRIPTION = "seatunnel"


def record_topic(topic: str, key: str) -> str:
    """The record topic of commit ``key`` in ``topic``'s namespace."""
    return topic.rsplit("/", 1)[0] + "/" + RECORD_PREFIX + key


def _body(rows: Any, options: PulsarOptions) -> Any:
    from pyspark.sql import functions as F

    if options.format == "text":
        columns = data_columns(rows)
        return F.concat_ws(options.field_delimiter,
                           *[F.coalesce(F.col(quote(c)).cast("string"), F.lit("")) for c in columns])
    return json_text(rows)


def _keyed(df: Any, options: PulsarOptions, vertex: Vertex) -> Any:
    """Each key's rows in one writer, in arrival order (the engine may have dealt changes over the sink's
    writers): a key's messages reach its partition in order."""
    return keys_in_arrival_order(df, list(options.key_fields), vertex.parallelism)


def _send(ctx: RunContext, rows: Any, options: PulsarOptions) -> None:

    from .datasource import send_batches

    assert options.endpoint is not None
    key = json_text(rows, options.key_fields) if options.key_fields else None  # nulls kept, as SeaTunnel
    columns = [_body(rows, options).alias("body")] + ([key.alias("key")] if key is not None else [])
    spec = {"endpoint": options.endpoint.to_json(), "topic": options.topics[0], "routing": options.routing,
            "producer": dict(options.producer)}
    sent = sum(r["n"] for r in rows.select(*columns).mapInArrow(lambda it: send_batches(spec, it), "n long").collect())
    log.info("Pulsar: %d message(s) sent to %s", sent, spec["topic"])


def _recorded(client: Any, topic: str) -> bool:
    import pulsar

    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    try:
        return bool(reader.has_message_available())
    finally:
        reader.close()


def _fence(client: Any, topic: str, target: str, options: PulsarOptions) -> Any:
    """The run's exclusive producer on its record topic, or a transient error: another attempt holds it."""
    import pulsar

    client.subscribe(topic, RECORD_SUBSCRIPTION, initial_position=pulsar.InitialPosition.Earliest).close()
    try:
        return client.create_producer(topic, access_mode=pulsar.ProducerAccessMode.Exclusive)
    except Exception as e:
        if "Fenced" in type(e).__name__ or "Busy" in type(e).__name__ or "fenced" in str(e).lower():
            raise PipelineError(f"another attempt of this run is sending to {target} (it holds the fence "
                                f"{topic}): retry once it ended") from None
        assert options.endpoint is not None
        raise error_of(e, options.endpoint, f"cannot take the fence {topic}") from None


def write(ctx: RunContext, vertex: Vertex, data: Dataset, options: PulsarOptions) -> None:
    """Send every table's rows; AT_LEAST_ONCE: once per run id (fenced, recorded)."""
    endpoint = options.endpoint
    assert endpoint is not None
    target = f"{endpoint.label} topic {options.topics[0]!r}"
    for table, df in data.items():
        if options.semantics == "NON":
            _send(ctx, ctx.with_write_faults(vertex, _keyed(df, options, vertex)), options)
            continue
        topic = record_topic(options.topics[0], digest(ctx.run_id, ctx.pipeline_key, vertex.ref, table))
        with connected(endpoint, f"cannot send to {target}") as client:
            fence = _fence(client, topic, target, options)
            if _recorded(client, topic):
                log.info("Pulsar %s: table %s of run %s was sent already: nothing sent", vertex.ref, table,
                         ctx.run_id)
                df.write.format("noop").mode("overwrite").save()
                continue
            _send(ctx, ctx.with_write_faults(vertex, _keyed(df, options, vertex)), options)
            ctx.fault_point("sink.commit", vertex)
            fence.send(json.dumps({"run": ctx.run_id, "table": table}).encode())
            fence.close()
            log.info("Pulsar %s: table %s sent to %s (every message confirmed)", vertex.ref, table, target)
