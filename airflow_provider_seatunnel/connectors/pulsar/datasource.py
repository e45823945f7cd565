"""The Pulsar source's reads (PySpark Python data sources, BATCH and STREAMING) and the sink's sends. Run time only
(imports PySpark).

Reading (``spark.read.format(NAME)``): the driver's ranges (:mod:`.source`) dealt round-robin over the readers;
each Spark partition opens a non-durable reader per range at its start and yields message bodies up to its
inclusive stop. Writing (:func:`send_batches`, ``mapInArrow`` over the sink's rows: a DataFrame action whose rows
the engine counts): one producer per write task sends its rows (a body column and an optional key column) and
flushes; the task fails unless the broker confirmed every message. No writer data source: a STREAMING
micro-batch's cloned session refuses to register one its parent registered after the clone, and cannot find it.

The spec (endpoint with the token, ranges or topic) travels in one option, :data:`SPEC_OPTION`, whose name Spark's
redaction rule matches: plans and the UI show it as ``*********(redacted)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)

from ...spi.specsource import SpecSource
from .client import connected
from .options import Endpoint

NAME = "seatunnel_pulsar"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.pulsar.secret"


class PulsarDataSource(SpecSource):
    """``spark.read.format("seatunnel_pulsar")``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def schema(self) -> str:
        return "body binary"

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)


@dataclass
class RangesPartition(InputPartition):
    ranges: list[list[Any]]


def _past(mid: Any, stop: Sequence[int]) -> bool:
    """Whether message id ``mid`` is beyond the inclusive ``stop`` (ledger, entry, batch index)."""
    here = (mid.ledger_id(), mid.entry_id())
    if here != (stop[0], stop[1]):
        return here > (stop[0], stop[1])
    return stop[2] >= 0 and mid.batch_index() > stop[2]


def _start(client: Any, topic: str, partition: int, start: str) -> Any:
    """A reader of ``topic`` (partition index ``partition``, -1: not partitioned) positioned at ``start`` (see
    :class:`.source.Range`)."""
    import pulsar

    kind, _, where = start.partition(":")
    if kind == "after":
        ledger, entry = (int(x) for x in where.split(":"))
        return client.create_reader(topic, pulsar.MessageId(partition, ledger, entry, -1))
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    if kind == "time":
        reader.seek(int(where))
    return reader


def read_range(client: Any, topic: str, partition: int, start: str, stop: Sequence[int],
               timeout_ms: int) -> Iterator[tuple[bytes]]:
    """The bodies of one partition's messages from ``start`` up to the inclusive ``stop``."""
    reader = _start(client, topic, partition, start)
    try:
        while reader.has_message_available():
            message = reader.read_next(timeout_ms)
            mid = message.message_id()
            if _past(mid, stop):
                return
            yield (message.data(),)
            if (mid.ledger_id(), mid.entry_id()) == (stop[0], stop[1]) and stop[2] < 0:
                return
    finally:
        reader.close()


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        readers = max(1, int(self.spec["readers"]))
        dealt: list[list[list[Any]]] = [[] for _ in range(readers)]
        for i, r in enumerate(self.spec["ranges"]):
            dealt[i % readers].append(r)
        return [RangesPartition(d) for d in dealt]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, RangesPartition)
        if not partition.ranges:
            return
        endpoint = Endpoint.from_json(self.spec["endpoint"])
        with connected(endpoint, "cannot read") as client:
            for topic, index, start, stop in partition.ranges:
                yield from read_range(client, topic, index, start, stop, int(self.spec["timeout_ms"]))


def producer_of(client: Any, spec: dict[str, Any]) -> Any:
    """A producer of the spec's topic with its routing mode and ``pulsar.config`` settings."""
    import pulsar

    routing = (pulsar.PartitionsRoutingMode.UseSinglePartition if spec["routing"] == "SinglePartition"
               else pulsar.PartitionsRoutingMode.RoundRobinDistribution)
    settings = dict(spec.get("producer") or {})
    compression = settings.pop("compression_type", None)
    if compression is not None:
        settings["compression_type"] = getattr(pulsar.CompressionType, str(compression).upper())
    if "send_timeout_millis" in settings:
        settings["send_timeout_millis"] = int(settings["send_timeout_millis"])
    if "batching_enabled" in settings:
        settings["batching_enabled"] = str(settings["batching_enabled"]).lower() == "true"
    return client.create_producer(spec["topic"], message_routing_mode=routing, block_if_queue_full=True, **settings)


def send_partition(spec: dict[str, Any], rows: Iterator[Any]) -> Iterator[int]:
    """One write task: send its rows (a body and an optional key) with one producer, flush, and yield how many
    were sent; fails unless the broker confirmed every message."""
    endpoint = Endpoint.from_json(spec["endpoint"])
    failures: list[str] = []

    def sent(result: Any, _id: Any) -> None:
        if not str(result).endswith("Ok"):
            failures.append(str(result))

    count = 0
    with connected(endpoint, f"cannot send to {spec['topic']}") as client:
        producer = producer_of(client, spec)
        for row in rows:
            body = b"" if row[0] is None else str(row[0]).encode("utf-8")
            key = row[1] if len(row) > 1 else None
            if key is None:
                producer.send_async(body, sent)
            else:
                producer.send_async(body, sent, partition_key=str(key))
            count += 1
        producer.flush()
        producer.close()
    if failures:
        raise RuntimeError(f"Pulsar refused {len(failures)} message(s) sent to {spec['topic']}: {failures[0]}")
    yield count


def send_batches(spec: dict[str, Any], batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow``'s function: one write task's Arrow batches (``body``, optional ``key``) sent by
    :func:`send_partition`; one batch with the count (``n``)."""
    import pyarrow as pa

    def rows() -> Iterator[tuple[Any, Any]]:
        for batch in batches:
            bodies = batch.column(0).to_pylist()
            keys = batch.column(1).to_pylist() if batch.num_columns > 1 else [None] * len(bodies)
            yield from zip(bodies, keys, strict=True)

    yield pa.RecordBatch.from_pydict({"n": [next(send_partition(spec, rows()))]})


# ------------------------------------------------------------------------------------------------
# STREAMING reads: offsets are each partition's position, planned in the query's driver-side Python worker
# ------------------------------------------------------------------------------------------------

STREAM_NAME = "seatunnel_pulsar_stream"


class PulsarStreamSource(SpecSource):
    """``spark.readStream.format("seatunnel_pulsar_stream")``: message bodies as micro-batches."""

    format_name = STREAM_NAME
    spec_option = SPEC_OPTION

    def schema(self) -> str:
        return "body binary"

    def streamReader(self, schema: Any) -> Any:
        return PartitionsStreamReader(self.spec)


def _position(start: str) -> tuple[int, int] | None:
    kind, _, where = start.partition(":")
    if kind != "after":
        return None
    ledger, entry = where.split(":")
    return int(ledger), int(entry)


class PartitionsStreamReader(DataSourceStreamReader):
    """Offsets ``{"p": {partition topic: start}}``, a start as :class:`.source.Range` writes it; a micro-batch
    reads each partition from its start offset up to its end offset (``after:<ledger>:<entry>``, inclusive).
    ``latestOffset`` is each partition's last message now, capped at the stop cursor's position when there is
    one; ``commit(end)`` (micro-batches up to ``end`` committed) acknowledges ``subscription.name`` there."""

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def initialOffset(self) -> dict:
        return {"p": {topic: start for topic, (_, start) in self.spec["starts"].items()}}

    def latestOffset(self, start: dict, limit: Any) -> dict:
        from .client import admin, topic_path

        endpoint = Endpoint.from_json(self.spec["endpoint"])
        out: dict[str, str] = {}
        for topic, (_, initial) in self.spec["starts"].items():
            answer = admin(endpoint, "GET", topic_path(topic) + "/lastMessageId", "cannot read the last message")
            last = (int(answer.get("ledgerId", -1)), int(answer.get("entryId", -1)))
            cap = self.spec["caps"].get(topic)
            if cap is not None and last > tuple(cap):
                last = (int(cap[0]), int(cap[1]))
            out[topic] = f"after:{last[0]}:{last[1]}" if last[1] >= 0 else start["p"].get(topic, initial)
        return {"p": out}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        readers = max(1, int(self.spec["readers"]))
        dealt: list[list[list[Any]]] = [[] for _ in range(readers)]
        todo = []
        for topic, stop in end["p"].items():
            begin = start["p"].get(topic, self.spec["starts"][topic][1])
            stop_at, begun = _position(stop), _position(begin)
            if stop_at is not None and (begun is None or stop_at > begun):
                todo.append([topic, self.spec["starts"][topic][0], begin, [stop_at[0], stop_at[1], -1]])
        for i, r in enumerate(todo):
            dealt[i % readers].append(r)
        return [RangesPartition(d) for d in dealt]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        return _Reader(self.spec).read(partition)

    def commit(self, end: dict) -> None:
        import contextlib

        import pulsar

        from .client import connected

        endpoint = Endpoint.from_json(self.spec["endpoint"])
        with contextlib.suppress(Exception), connected(endpoint, "cannot acknowledge") as client:
            for topic, stop in end["p"].items():
                at = _position(stop)
                if at is None:
                    continue
                consumer = client.subscribe(topic, self.spec["subscription"],
                                            initial_position=pulsar.InitialPosition.Earliest)
                try:
                    consumer.acknowledge_cumulative(pulsar.MessageId(self.spec["starts"][topic][0], at[0], at[1], -1))
                finally:
                    consumer.close()
