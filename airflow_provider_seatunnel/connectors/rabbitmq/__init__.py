"""RabbitMQ: a queue of a RabbitMQ broker as source and sink (the ``pika`` client, extra ``rabbitmq``).

SeaTunnel's options (:mod:`.options`: ``host``, ``port``, ``virtual_host``, ``username``, ``password``,
``url``, ``queue_name``, ``durable``/``exclusive``/``auto_delete``, ``routing_key``/``exchange``,
``schema``, ``prefetch_count``, ``delivery_timeout``...), or ``rabbitmq_conn_id`` naming an Airflow
connection (host, port, login, password; its schema is the virtual host).

* **Source** (:mod:`.source`): messages are JSON rows of ``schema``. BATCH takes the messages ready when
  the read starts and acknowledges them only once every sink of the pipeline committed (a failed run
  returns them to the queue); STREAMING reads micro-batches the same way, acknowledging each once Spark
  committed it. At least once: a driver killed between the commit and the acknowledgement leaves those
  messages to be read again.
* **Sink** (:mod:`.sink`, :mod:`.datasource`): every row a JSON message, published by one write task per
  partition with publisher confirms; a commit record per run id makes a restore publish nothing twice once
  a run finished, and an exclusive fence queue keeps two attempts of one run from publishing at once. At
  least once: RabbitMQ has no transaction across a restore (a run killed mid-publish republishes).

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/rabbitmq.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    AcknowledgesRead,
    BatchSource,
    Capabilities,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    RunContext,
    SchemaInference,
    StreamingSource,
    Unnamed,
    Vertex,
)
from ...spi.options import run_time_options
from . import checks
from .options import CONN_OPTION, DEVIATIONS, SPEC, RabbitOptions, parse, written_endpoint

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "RabbitMQ"]


def _options(vertex: Vertex) -> RabbitOptions:
    return run_time_options(parse, vertex, RabbitOptions)


class RabbitMQ(Connector, SchemaInference, BatchSource, StreamingSource, AcknowledgesRead, Lineage, FromConnection):
    name = "RabbitMQ"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's RabbitMQ sink has no aggregated committer (no coordinator slot)
    #: exclusive_stream: a STREAMING read takes messages off the queue (one consumer, one sink's query)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True, exclusive_stream=True)
    option_spec = SPEC  # required, identity and secrets (password, url) come from it
    description = "Reads or publishes JSON messages of a RabbitMQ queue (acknowledged after the commit; at least once)."

    # compile time ------------------------------------------------------------------------------

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``host``, ``port``, ``virtual_host``, ``username`` and ``password`` from a connection (any type,
        e.g. ``amqp``): host, port (default 5672), schema (the virtual host, default ``/``), login, password."""
        out: dict[str, Any] = {"host": str(conn.host or "localhost"), "port": int(conn.port or 5672),
                               "virtual_host": str(conn.schema or "/")}
        out.update(conn.credentials())  # both or neither: the options bundle them
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "host" not in options and "url" not in options

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``amqp://host:port/<vhost>/<queue>`` (the broker's address, never the credentials)."""
        queue = options.get("queue_name")
        where = written_endpoint(options)
        if not queue:
            return []
        if where is None:
            return [Unnamed(f"queue {queue!r} of connection {options.get(CONN_OPTION)!r}")]
        from urllib.parse import quote

        return [f"{where}/{quote(str(queue), safe='')}"]

    # run time ----------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, _options(vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read_stream

        return read_stream(ctx, vertex, _options(vertex))

    def acknowledge(self, ctx: RunContext, vertex: Vertex) -> None:
        from .source import acknowledge

        acknowledge(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Publish every row (:mod:`.sink`): at least once, fenced and recorded; nothing left to commit."""
        from .sink import write

        write(ctx, vertex, data, _options(vertex))
        return None


CONNECTOR = RabbitMQ()
