"""The Pulsar source's reads and the sink's sends as a PySpark Python data source. Run time only (imports PySpark).

Reading (``spark.read.format(NAME)``): the driver's ranges (:mod:`.source`) dealt round-robin over the readers;
each Spark partition opens a non-durable reader per range at its start and yields message bodies up to its
inclusive stop. Writing (``df.write.format(NAME)``): one producer per write task sends its rows (a body column and
an optional key column) and flushes; the task fails unless the broker confirmed every message.

The spec (endpoint with the token, ranges or topic) travels in one option, :data:`SPEC_OPTION`, whose name Spark's
redaction rule matches: plans and the UI show it as ``*********(redacted)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.specsource import SpecSource
from .client import connected
from .options import Endpoint

NAME = "seatunnel_pulsar"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.pulsar.secret"


class PulsarDataSource(SpecSource):
    """``spark.read.format("seatunnel_pulsar")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def schema(self) -> str:
        return "body binary"

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec)


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


@dataclass
class Sent(WriterCommitMessage):
    """What one write task sent, every message confirmed."""

    rows: int
    partition: int


def producer_of(client: Any, spec: dict[str, Any]) -> Any:
    """A producer of the spec's topic with its routing mode and ``pulsar.config`` settings."""
    import pulsar

    routing = (pulsar.PartitionsRoutingMode.UseSinglePartition if spec["routing"] == "SinglePartition"
               else pulsar.PartitionsRoutingMode.RoundRobinDistribution)
    settings = dict(spec.get("producer") or {})
    compression = settings.pop("compression_type", None)
    if compression is not None:
        settings["compression_type"] = getattr(pulsar.CompressionType, str(compression).upper())
    for name in ("send_timeout_millis",):
        if name in settings:
            settings[name] = int(settings[name])
    if "batching_enabled" in settings:
        settings["batching_enabled"] = str(settings["batching_enabled"]).lower() == "true"
    return client.create_producer(spec["topic"], message_routing_mode=routing, block_if_queue_full=True, **settings)


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        endpoint = Endpoint.from_json(self.spec["endpoint"])
        failures: list[str] = []

        def sent(result: Any, _id: Any) -> None:
            if str(result) != "Ok" and not str(result).endswith(".Ok"):
                failures.append(str(result))

        rows = 0
        with connected(endpoint, f"cannot send to {self.spec['topic']}") as client:
            producer = producer_of(client, self.spec)
            for row in iterator:
                body = b"" if row[0] is None else str(row[0]).encode("utf-8")
                key = row[1] if len(row) > 1 else None
                if key is None:
                    producer.send_async(body, sent)
                else:
                    producer.send_async(body, sent, partition_key=str(key))
                rows += 1
            producer.flush()
            producer.close()
        if failures:
            raise RuntimeError(f"Pulsar refused {len(failures)} message(s) sent to {self.spec['topic']}: "
                               f"{failures[0]}")
        return Sent(rows, partition)
