"""The RabbitMQ sink's publishing as a PySpark Python data source (``df.write.format(NAME)``): one write
task per partition, each with its own connection and channel in publisher-confirm mode, so that a task
succeeds only once the broker confirmed every message it sent. Run time only (imports PySpark).

The spec (endpoint with credentials, queue, routing) travels in one option, :data:`SPEC_OPTION`, whose
name Spark's redaction rule matches: plans and the UI show it as ``*********(redacted)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceWriter, WriterCommitMessage

from ...spi.specsource import SpecSource
from .client import connected
from .options import Endpoint

NAME = "seatunnel_rabbitmq"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.rabbitmq.secret"


class RabbitMQDataSource(SpecSource):
    """``df.write.format("seatunnel_rabbitmq")`` of one string column, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec)


@dataclass
class Published(WriterCommitMessage):
    """What one write task published, every message confirmed."""

    rows: int
    partition: int


def publish_all(channel: Any, spec: Mapping[str, Any], bodies: Iterator[bytes]) -> int:
    """Publish ``bodies`` on ``channel`` (in confirm mode: each call returns once the broker confirmed it)
    to the queue, or to ``exchange`` with ``routing_key``; the messages published."""
    import pika

    properties = pika.BasicProperties(delivery_mode=2) if spec["persistent"] else None
    exchange, routing = (spec["exchange"], spec["routing_key"]) if spec.get("routing_key") else ("", spec["queue"])
    sent = 0
    for body in bodies:
        channel.basic_publish(exchange, routing, body, properties)
        sent += 1
    return sent


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        endpoint = Endpoint.from_json(spec["endpoint"])
        with connected(endpoint, f"cannot publish to queue {spec['queue']!r}") as conn:
            channel = conn.channel()
            if spec.get("declare"):
                channel.queue_declare(spec["queue"], **spec["declare"])
            channel.confirm_delivery()
            rows = publish_all(channel, spec, (b"" if row[0] is None else str(row[0]).encode("utf-8")
                                               for row in iterator))
        return Published(rows, partition)


# ------------------------------------------------------------------------------------------------
# STREAMING reads: a consumer in Spark's driver-side Python worker of the query
# ------------------------------------------------------------------------------------------------

STREAM_NAME = "seatunnel_rabbitmq_stream"


class RabbitMQStreamSource(SpecSource):
    """``spark.readStream.format("seatunnel_rabbitmq_stream")``: message bodies as micro-batches."""

    format_name = STREAM_NAME
    spec_option = SPEC_OPTION

    def schema(self) -> str:
        return "body binary"

    def streamReader(self, schema: Any) -> Any:
        from .stream import QueueStreamReader

        return QueueStreamReader(self.spec)

