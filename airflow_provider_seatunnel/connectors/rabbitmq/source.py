"""The RabbitMQ source on the Spark driver: a consumer that acknowledges only what the pipeline committed.

A delivery's acknowledgement belongs to the channel that received it, so the consumer lives in the
driver's process from the read until the pipeline's end; Spark's tasks only parse the bodies.

BATCH (:func:`read`): the queue is declared (``durable``, ``exclusive``, ``auto_delete``) and the
messages ready at that moment are taken (manual acknowledgement, ``prefetch_count`` deliveries ahead),
at most :data:`.options.MAX_BATCH_BYTES` of bodies (the rest waits for the next run); the consumer is then
cancelled, which returns any delivery beyond them to the queue. The bodies are dealt over exactly
``vertex.parallelism`` partitions and parsed as JSON rows of ``schema`` (:mod:`..jsoncolumns`). The
deliveries are acknowledged by :func:`acknowledge`, which the engine calls once every sink of the
pipeline committed; a run that fails, or a driver that dies, closes the connection instead and the
broker requeues them: nothing is lost. A driver killed after its sinks committed and before the
acknowledgement leaves those messages to be read again (at least once; with ``use_correlation_id`` a
message redelivered within one read is read once). A run's first read records how many messages it took
(a durable, expiring queue ``seatunnel.read.<id>``); a restore of the run takes that many, which are the
same messages (requeued at the head of the queue) while no other consumer shares it: a sink that recorded
the run's commit then skips exactly them. Before acknowledging, the read marks the run acknowledged
(``seatunnel.acked.<id>``): a rerun of a finished run reads nothing.

The connection asks for no heartbeat (the driver services it only between Spark jobs); the broker's
``consumer_timeout`` (30 minutes by default) bounds how long a read may hold its deliveries unacknowledged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
from dataclasses import dataclass, replace
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.pysources import register_once
from ...spi.rows import with_kind
from ...spi.sessions import at_run_end, session_key
from ..jsoncolumns import json_rows
from .client import connect, error_of, queue_exists
from .options import MAX_BATCH_BYTES, RECORD_TTL_MS, Endpoint, RabbitOptions

log = logging.getLogger("seatunnel.rabbitmq")

READ_PREFIX = "seatunnel.read."
ACKED_PREFIX = "seatunnel.acked."


@dataclass
class Held:
    """Deliveries taken by a read and not yet acknowledged: the connection holds them."""

    connection: Any
    channel: Any
    endpoint: Endpoint
    last_tag: int | None
    messages: int
    record: str = ""


#: (session, run id, pipeline, vertex ref) -> what a BATCH read holds until :func:`acknowledge`
_HELD: dict[tuple[str, str, str, str], Held] = {}
_LOCK = threading.Lock()


def _key(ctx: RunContext, vertex: Vertex) -> tuple[str, str, str, str]:
    return session_key(ctx.spark), ctx.run_id, ctx.pipeline_key, vertex.ref


def read_record(ctx: RunContext, vertex: Vertex) -> str:
    """The queue recording how many messages the run's read took (a restore takes as many again)."""
    text = json.dumps([ctx.run_id, ctx.pipeline_key, vertex.ref])
    return READ_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:40]


def _recorded(conn: Any, record: str) -> int | None:
    """The count an earlier attempt of the run recorded (its message peeked, left in place), else None."""
    ch = conn.channel()
    ch.queue_declare(record, durable=True, arguments={"x-expires": RECORD_TTL_MS})
    method, _, body = ch.basic_get(record, auto_ack=False)
    ch.close()  # the peeked message goes back
    return int(body) if method is not None else None


def _record(conn: Any, record: str, taken: int) -> None:
    ch = conn.channel()
    ch.confirm_delivery()
    ch.basic_publish("", record, str(taken).encode())
    ch.close()


def take_ready(options: RabbitOptions, record: str | None = None,
               budget: int = MAX_BATCH_BYTES) -> tuple[list[bytes], Held]:
    """The bodies of the messages ready in the queue now (at most ``budget`` bytes), unacknowledged. With
    ``record``: the first attempt of a run records how many it took; a later one (a restore) takes that many
    (the unacknowledged ones were requeued at the head of the queue: the same messages)."""
    import pika.exceptions as pe

    endpoint = options.endpoint
    assert endpoint is not None
    doing = f"cannot read queue {options.queue!r}"
    conn = connect(replace(endpoint, heartbeat=0), doing)  # held across Spark jobs, which service no heartbeat
    try:
        ch = conn.channel()
        ready = int(ch.queue_declare(options.queue, **options.declare_args()).method.message_count)
        if record and queue_exists(conn, ACKED_PREFIX + record):
            ready = 0  # this run's read was acknowledged already: a rerun reads nothing more
        earlier = _recorded(conn, record) if record and ready else None
        ready = ready if earlier is None else earlier
        bodies: list[bytes] = []
        last_tag: int | None = None
        if ready:
            ch.basic_qos(prefetch_count=min(options.prefetch_count or ready, ready, 65535))
            seen: set[str] = set()
            size = 0
            for method, props, body in ch.consume(options.queue, auto_ack=False,
                                                  inactivity_timeout=options.delivery_timeout_ms / 1000):
                if method is None:  # nothing more arrived in time: another consumer took the rest
                    break
                last_tag = method.delivery_tag
                correlation = getattr(props, "correlation_id", None)
                if options.use_correlation_id and correlation is not None:
                    if correlation in seen:
                        continue  # a redelivered duplicate: acknowledged with the rest, not read twice
                    seen.add(correlation)
                bodies.append(body)
                size += len(body)
                if len(bodies) >= ready or size >= budget:
                    break
            ch.cancel()  # deliveries beyond these go back to the queue
        if record and earlier is None:
            _record(conn, record, len(bodies))
        return bodies, Held(conn, ch, endpoint, last_tag, len(bodies), record or "")
    except pe.AMQPError as e:
        _close(conn)
        raise error_of(e, endpoint, doing) from None
    except BaseException:
        _close(conn)
        raise


def _close(conn: Any) -> None:
    with contextlib.suppress(Exception):
        if conn.is_open:
            conn.close()


def _release(spark: Any) -> None:
    """Close the connections of reads never acknowledged (a failed run): the broker requeues their messages."""
    mine = session_key(spark)
    with _LOCK:
        keys = [k for k in _HELD if k[0] == mine]
        held = [_HELD.pop(k) for k in keys]
    for h in held:
        if h.last_tag is not None:
            log.info("RabbitMQ: %d message(s) read from %s returned to the queue (not committed)", h.messages,
                     h.endpoint.label)
        _close(h.connection)


def read(ctx: RunContext, vertex: Vertex, options: RabbitOptions) -> Dataset:
    """The ready messages as rows in ``vertex.parallelism`` partitions; acknowledged by :func:`acknowledge`."""
    assert options.schema is not None and options.endpoint is not None
    bodies, held = take_ready(options, read_record(ctx, vertex))
    with _LOCK:
        old = _HELD.pop(_key(ctx, vertex), None)
        _HELD[_key(ctx, vertex)] = held
    if old is not None:
        _close(old.connection)
    at_run_end(_release)
    readers = max(1, int(vertex.parallelism))
    rdd = ctx.spark.sparkContext.parallelize([(b,) for b in bodies], readers)
    raw = ctx.spark.createDataFrame(rdd, "body binary")
    log.info("RabbitMQ %s: read %d message(s) of queue %r at %s into %d partition(s)", vertex.ref, len(bodies),
             options.queue, options.endpoint.label, readers)
    return {"default": with_kind(json_rows(raw, "body", options.schema))}


def acknowledge(ctx: RunContext, vertex: Vertex) -> None:
    """Every sink committed: acknowledge what the read took (one ``basic.ack`` with ``multiple``), then close."""
    with _LOCK:
        held = _HELD.pop(_key(ctx, vertex), None)
    if held is None:
        return
    try:
        if held.last_tag is not None:
            # the mark first: a crash before the ack then leaves the messages to a later run (duplicates),
            # never to a rerun of this one that would skip them as committed (a loss)
            held.connection.channel().queue_declare(ACKED_PREFIX + held.record, durable=True,
                                                    arguments={"x-expires": RECORD_TTL_MS})
            held.channel.basic_ack(held.last_tag, multiple=True)
            log.info("RabbitMQ %s: acknowledged %d message(s) at %s", vertex.ref, held.messages, held.endpoint.label)
    finally:
        _close(held.connection)


def read_stream(ctx: RunContext, vertex: Vertex, options: RabbitOptions) -> Dataset:
    """STREAMING: micro-batches of the queue (:mod:`.stream`), each acknowledged once Spark committed it,
    dealt over ``vertex.parallelism`` partitions."""
    from .datasource import SPEC_OPTION, STREAM_NAME, RabbitMQStreamSource

    assert options.schema is not None and options.endpoint is not None
    spec = {"endpoint": options.endpoint.to_json(), "queue": options.queue, "declare": options.declare_args(),
            "prefetch_count": options.prefetch_count, "delivery_timeout_ms": options.delivery_timeout_ms,
            "queries": _local(f"{ctx.stream.checkpoint}/queries") if ctx.stream is not None else None,
            "parallelism": max(1, int(vertex.parallelism))}
    register_once(ctx.spark, RabbitMQStreamSource)
    raw = ctx.spark.readStream.format(STREAM_NAME).option(SPEC_OPTION, json.dumps(spec)).load()
    readers = max(1, int(vertex.parallelism))  # the reader deals each micro-batch over as many partitions
    log.info("RabbitMQ %s: streaming queue %r at %s into %d partition(s)", vertex.ref, options.queue,
             options.endpoint.label, readers)
    return {"default": with_kind(json_rows(raw, "body", options.schema))}


def _local(uri: str) -> str | None:
    """The local path of a ``file:`` URI or plain path; None for another file system."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(uri)
    if parts.scheme in ("", "file"):
        return unquote(parts.path) if parts.scheme else uri
    return None
