"""The Rocketmq source's pulls and the sink's sends as a PySpark Python data source
(``pyspark.sql.datasource``). Run time only (imports PySpark).

* Reading: the driver fixed each queue's range (:mod:`.source`); ``partitions()`` deals the queues over
  exactly ``parallelism`` partitions (queue ``i`` to reader ``i % parallelism``, as SeaTunnel assigns
  splits); ``read()`` pulls each range, ``batch_size`` messages per pull, and yields ``(body, keys, tags,
  topic, queue, offset)``; a message past the range's end is left for the next run.
* Writing: each write task sends its rows (``body``, ``key``), waiting for each message's store: a message
  with a key to the queue its Java hash picks (SeaTunnel's select-by-hash), one without to the queues in
  turn from the task's partition; a body larger than ``max_message_size`` fails the task.

The spec travels in one option, :data:`SPEC_OPTION`, whose name Spark's redaction rule matches.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError, PipelineError
from ...spi.specsource import SpecSource
from .client import Client, Queue, error_of, queue_for_key
from .remoting import RemotingError

NAME = "seatunnel_rocketmq"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.rocketmq.secret"
#: pulls in a row that may return nothing new before a range's end (the broker busy) before the read fails
STALLED_PULLS = 20
READ_SCHEMA = "body binary, keys string, tags string, topic string, queue int, offset bigint"


class RocketMQDataSource(SpecSource):
    """``spark.read.format("seatunnel_rocketmq")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def schema(self) -> str:
        return READ_SCHEMA

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec)


@dataclass
class QueuesPartition(InputPartition):
    ranges: list[dict[str, Any]]


def deal(ranges: Sequence[dict[str, Any]], readers: int) -> list[list[dict[str, Any]]]:
    """Range ``i`` to reader ``i % readers``."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(readers)]
    for i, rg in enumerate(ranges):
        out[i % readers].append(rg)
    return out


def pull_range(client: Client, rg: dict[str, Any], group: str, tags: str, batch: int) -> Iterator[tuple[Any, ...]]:
    """The messages of one range ``[start, end)``, in offset order."""
    q = Queue(str(rg["topic"]), str(rg["broker"]), int(rg["queue"]))
    offset, end = int(rg["start"]), int(rg["end"])
    wanted = None if tags.strip() in ("", "*") else {t.strip() for t in tags.split("||")}
    stalled = 0
    while offset < end:
        messages, next_offset = client.pull(q, str(rg["addr"]), group, offset, min(batch, end - offset), tags)
        for m in messages:
            if m.queue_offset >= end:
                return
            if wanted is not None and m.tags not in wanted:
                continue  # the broker filters by the tag's hash: a colliding tag is dropped here
            yield (m.body, m.keys, m.tags, m.topic, m.queue_id, m.queue_offset)
        if next_offset <= offset:
            stalled += 1
            if messages or stalled > STALLED_PULLS:
                # never end a range early in silence: its messages would be committed unread
                raise RemotingError(f"pull of {q} at {offset} did not advance (range ends at {end})")
            time.sleep(0.05 * stalled)
            continue
        stalled = 0
        offset = next_offset


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        return [QueuesPartition(chunk) for chunk in deal(self.spec["ranges"], max(1, int(self.spec["parallelism"])))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        spec = self.spec
        ranges: list[dict[str, Any]] = getattr(partition, "ranges", [])
        if not ranges:
            return
        try:
            with Client(spec["name_servers"], int(spec["timeout_ms"]) / 1000) as client:
                for rg in ranges:
                    yield from pull_range(client, rg, str(spec["group"]), str(spec["tags"]), int(spec["batch_size"]))
        except RemotingError as e:
            raise error_of(e, "Rocketmq: cannot read") from None


@dataclass
class Sent(WriterCommitMessage):
    """What one write task sent, every message stored."""

    rows: int
    partition: int


def send_all(client: Client, spec: dict[str, Any], rows: Iterator[Any], partition: int) -> int:
    """Send each ``(body, key)`` row to the topic's queues; the messages sent."""
    queues = [Queue(spec["topic"], str(q["broker"]), int(q["queue"])) for q in spec["queues"]]
    masters: dict[str, str] = spec["masters"]
    limit, timeout = int(spec["max_message_size"]), int(spec["send_timeout_ms"]) / 1000
    sent = 0
    for row in rows:
        body = b"" if row[0] is None else str(row[0]).encode("utf-8")
        if len(body) > limit:
            raise DataError(f"Rocketmq: a message of {len(body)} bytes is larger than max.message.size ({limit})")
        key = row[1] if len(row) > 1 else None
        q = queues[queue_for_key(key, len(queues))] if key else queues[(partition + sent) % len(queues)]
        client.send(q, masters[q.broker], str(spec["group"]), body, keys=key or None, timeout=timeout)
        sent += 1
    return sent


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        spec = self.spec
        try:
            with Client(spec["name_servers"], int(spec["send_timeout_ms"]) / 1000) as client:
                return Sent(send_all(client, spec, iterator, partition), partition)
        except RemotingError as e:
            err = error_of(e, f"Rocketmq: cannot send to topic {spec['topic']!r}")
            raise (PipelineError(str(err)) if e.transient else err) from None
