"""The Pulsar source in BATCH: bounds fixed on the driver, partitions read by Spark's tasks, the subscription
acknowledged only once the pipeline committed.

:func:`plan_reads` (the driver, when the read starts) lists the partitions of every topic (``topic``, or the
topics of ``topic-pattern``'s namespace whose full name matches it) and fixes each one's range:

* **start**: EARLIEST; LATEST (after the partition's last message now: a BATCH read of it is empty, as on
  SeaTunnel); TIMESTAMP (the first message published at or after ``cursor.startup.timestamp``); SUBSCRIPTION
  (after the mark-delete position of ``subscription.name``, which is created at ``cursor.reset.mode`` when
  missing).
* **stop** (inclusive, as SeaTunnel's stop cursors): LATEST, the partition's last message now; TIMESTAMP, the
  first message published at or after ``cursor.stop.timestamp`` (else the last message).

The ranges are dealt over ``vertex.parallelism`` Spark partitions (:mod:`.datasource`), each reading its
partitions with non-durable readers. :func:`acknowledge`, which the engine calls once every sink of the pipeline
committed, moves ``subscription.name`` of each partition read to its stop (a cumulative acknowledgement): a failed
run acknowledges nothing, so its restore in SUBSCRIPTION mode reads the same messages again.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError
from ...spi.pysources import register_once
from ...spi.rows import with_kind
from ...spi.schema import DataType, Field, Schema
from ...spi.sessions import at_run_end, session_key
from ..jsoncolumns import json_rows
from .client import admin, connected, namespace_topics, topic_path
from .options import TEXT_FIELD, Endpoint, PulsarOptions, full_pattern, pattern_namespace

log = logging.getLogger("seatunnel.pulsar")


@dataclass(frozen=True)
class Range:
    """One partition's read: its ``partition`` index (-1: a topic without partitions), ``start`` (``earliest``,
    ``after:<ledger>:<entry>`` or ``time:<ms>``) and the inclusive ``stop`` (ledger, entry, batch index); ``stop``
    None: nothing to read."""

    topic: str
    partition: int
    start: str
    stop: tuple[int, int, int] | None

    def to_json(self) -> list[Any]:
        return [self.topic, self.partition, self.start, list(self.stop) if self.stop else None]


#: (session, run id, pipeline, vertex ref) -> (endpoint, subscription, ranges) acknowledged after the commit
_HELD: dict[tuple[str, str, str, str], tuple[Endpoint, str, list[Range]]] = {}
_LOCK = threading.Lock()


def _key(ctx: RunContext, vertex: Vertex) -> tuple[str, str, str, str]:
    return session_key(ctx.spark), ctx.run_id, ctx.pipeline_key, vertex.ref


def topics_of(options: PulsarOptions) -> list[str]:
    """The topics named, or those of the pattern's namespace (``persistent://<tenant>/<ns>/...``, default
    ``public/default``) whose full name matches the pattern whole."""
    if options.pattern is None:
        return list(options.topics)
    assert options.endpoint is not None
    namespace = pattern_namespace(options.pattern)
    assert namespace is not None  # options.parse refuses a pattern that does not fix them
    regex = re.compile(full_pattern(options.pattern))
    return [t for t in namespace_topics(options.endpoint, *namespace) if regex.fullmatch(t)]


def _last(endpoint: Endpoint, partition_topic: str) -> tuple[int, int, int] | None:
    """The partition's last message id now; None when it has none."""
    answer = admin(endpoint, "GET", topic_path(partition_topic) + "/lastMessageId", "cannot read the last message")
    ledger, entry = int(answer.get("ledgerId", -1)), int(answer.get("entryId", -1))
    if entry < 0:
        return None
    return ledger, entry, int(answer.get("batchIndex", -1))


def _first_at(client: Any, partition_topic: str, timestamp: int) -> tuple[int, int, int] | None:
    """The id of the first message published at or after ``timestamp``; None when there is none yet."""
    import pulsar

    reader = client.create_reader(partition_topic, pulsar.MessageId.earliest)
    try:
        reader.seek(int(timestamp))
        if not reader.has_message_available():
            return None
        mid = reader.read_next(60_000).message_id()
        return mid.ledger_id(), mid.entry_id(), mid.batch_index()
    finally:
        reader.close()


def _subscription_start(client: Any, endpoint: Endpoint, partition_topic: str, options: PulsarOptions) -> str:
    """``after:<ledger>:<entry>``, the subscription's mark-delete position (created at the reset mode)."""
    import pulsar

    initial = pulsar.InitialPosition.Earliest if options.reset == "EARLIEST" else pulsar.InitialPosition.Latest
    client.subscribe(partition_topic, options.subscription, initial_position=initial).close()
    stats = admin(endpoint, "GET", topic_path(partition_topic) + "/internalStats", "cannot read the cursors")
    cursor = (stats.get("cursors") or {}).get(options.subscription) or {}
    ledger, _, entry = str(cursor.get("markDeletePosition", "")).partition(":")
    if not ledger.lstrip("-").isdigit() or not entry.lstrip("-").isdigit():
        raise PipelineError(f"no position of subscription {options.subscription!r} on {partition_topic}")
    return f"after:{int(ledger)}:{int(entry)}"


def _range(client: Any, options: PulsarOptions, partition_topic: str, index: int) -> Range:
    endpoint = options.endpoint
    assert endpoint is not None
    last = _last(endpoint, partition_topic)
    stop = last
    if options.stop == "TIMESTAMP" and last is not None:
        stop = _first_at(client, partition_topic, int(options.stop_timestamp or 0)) or last
    if options.start == "SUBSCRIPTION":
        start = _subscription_start(client, endpoint, partition_topic, options)
    elif options.start == "LATEST":
        start = f"after:{last[0]}:{last[1]}" if last else "earliest"
        stop = None  # nothing is after the last message
    elif options.start == "TIMESTAMP":
        start = f"time:{int(options.start_timestamp or 0)}"
    else:
        start = "earliest"
    if start.startswith("after:") and stop is not None:
        ledger, entry = (int(x) for x in start.split(":")[1:])
        if (stop[0], stop[1]) <= (ledger, entry):
            stop = None  # nothing after the start
    return Range(partition_topic, index, start, stop)


def plan_reads(options: PulsarOptions) -> list[Range]:
    """Every partition's range, fixed now (the driver)."""
    endpoint = options.endpoint
    assert endpoint is not None
    ranges: list[Range] = []
    with connected(endpoint, "cannot plan the read") as client:
        for topic in topics_of(options):
            parts = client.get_topic_partitions(topic)
            for index, part in enumerate(parts):
                ranges.append(_range(client, options, part, index if "-partition-" in part else -1))
    return ranges


def _release(spark: Any) -> None:
    """Forget the ranges of reads never acknowledged (a failed run: its subscription stays where it was)."""
    mine = session_key(spark)
    with _LOCK:
        for k in [k for k in _HELD if k[0] == mine]:
            del _HELD[k]


def read(ctx: RunContext, vertex: Vertex, options: PulsarOptions) -> Dataset:
    """The ranges' messages as rows in ``vertex.parallelism`` partitions; acknowledged by :func:`acknowledge`."""
    from .datasource import NAME, SPEC_OPTION, PulsarDataSource

    assert options.endpoint is not None
    ranges = plan_reads(options)
    with _LOCK:
        _HELD[_key(ctx, vertex)] = (options.endpoint, options.subscription, ranges)
    at_run_end(_release)
    readers = max(1, int(vertex.parallelism))
    todo = [r.to_json() for r in ranges if r.stop is not None]
    spec = {"endpoint": options.endpoint.to_json(), "ranges": todo, "readers": readers,
            "timeout_ms": max(int(options.poll_timeout_ms), 30_000)}
    register_once(ctx.spark, PulsarDataSource)
    raw = ctx.spark.read.format(NAME).option(SPEC_OPTION, json.dumps(spec)).load()
    schema = options.schema or Schema((Field(TEXT_FIELD, DataType("string")),))
    log.info("Pulsar %s: reading %d partition(s) at %s over %d reader(s)", vertex.ref, len(todo),
             options.endpoint.label, readers)
    return {"default": with_kind(json_rows(raw, "body", schema))}


def read_stream(ctx: RunContext, vertex: Vertex, options: PulsarOptions) -> Dataset:
    """STREAMING: micro-batches of every partition from its start (``cursor.startup.mode``, or the checkpoint's
    offsets on a restart) up to its last message at each trigger, capped at the stop cursor's position fixed now
    when ``cursor.stop.mode`` is not NEVER; dealt over ``vertex.parallelism`` partitions (:mod:`.datasource`)."""
    from .datasource import SPEC_OPTION, STREAM_NAME, PulsarStreamSource

    assert options.endpoint is not None
    ranges = plan_reads(options)
    capped = options.stop != "NEVER"
    spec = {"endpoint": options.endpoint.to_json(), "subscription": options.subscription,
            "readers": max(1, int(vertex.parallelism)), "timeout_ms": max(int(options.poll_timeout_ms), 30_000),
            "starts": {r.topic: [r.partition, r.start] for r in ranges},
            "caps": {r.topic: (list(r.stop[:2]) if r.stop else [-1, -1]) for r in ranges if capped}}
    register_once(ctx.spark, PulsarStreamSource)
    raw = ctx.spark.readStream.format(STREAM_NAME).option(SPEC_OPTION, json.dumps(spec)).load()
    schema = options.schema or Schema((Field(TEXT_FIELD, DataType("string")),))
    log.info("Pulsar %s: streaming %d partition(s) at %s over %d reader(s)", vertex.ref, len(ranges),
             options.endpoint.label, spec["readers"])
    return {"default": with_kind(json_rows(raw, "body", schema))}


def acknowledge(ctx: RunContext, vertex: Vertex) -> None:
    """Every sink committed: acknowledge each partition read up to its stop on ``subscription.name``."""
    import pulsar

    with _LOCK:
        held = _HELD.pop(_key(ctx, vertex), None)
    if held is None:
        return
    endpoint, subscription, ranges = held
    done = [r for r in ranges if r.stop is not None]
    if not done:
        return
    with connected(endpoint, f"cannot acknowledge subscription {subscription!r}") as client:
        for r in done:
            assert r.stop is not None
            consumer = client.subscribe(r.topic, subscription, initial_position=pulsar.InitialPosition.Earliest)
            try:
                consumer.acknowledge_cumulative(pulsar.MessageId(r.partition, r.stop[0], r.stop[1], r.stop[2]))
            finally:
                consumer.close()
    log.info("Pulsar %s: subscription %r acknowledged on %d partition(s)", vertex.ref, subscription, len(done))
