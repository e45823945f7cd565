"""Rocketmq: topics of a RocketMQ cluster as source and sink, over RocketMQ's remoting protocol
(:mod:`.remoting`, :mod:`.client`: no client library).

SeaTunnel's options (:mod:`.options`: ``name.srv.addr``, ``topics``/``topic``, ``consumer.group``,
``start.mode`` with its timestamp and offsets, ``commit.on.checkpoint``, ``batch.size``, ``format`` json or
text with ``field.delimiter``, ``producer.group``, ``partition.key.fields``, ``max.message.size``,
``send.message.timeout``...), or ``rocketmq_conn_id`` naming an Airflow connection (host and port of a name
server; its extra's ``name_srv_addr`` lists several).

* **Source** (:mod:`.source`, BATCH): every queue read from the start mode's offset to its end when the read
  started, the queues dealt over the plan's parallelism; the group's offsets are committed once every sink
  of the pipeline committed, and a restore reads the same ranges (recorded at the broker).
* **Sink** (:mod:`.sink`, :mod:`.datasource`): every row a message (keyed by ``partition.key.fields``, which
  picks its queue by hash), each send waiting for the store; a commit record per run makes a restore of a
  finished run send nothing, and a fence (a broker queue lock) refuses an overlapping attempt. At least once.

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/rocketmq.md.
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
    Unnamed,
    Vertex,
)
from ...spi.options import run_time_options
from . import checks
from .options import CONN_OPTION, DEFAULT_PORT, DEVIATIONS, SPEC, SinkOptions, SourceOptions, parse, written_endpoint

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "Rocketmq"]


class Rocketmq(Connector, SchemaInference, BatchSource, AcknowledgesRead, Lineage, FromConnection):
    name = "Rocketmq"
    connection_option = CONN_OPTION
    #: no committer: the sink sends in prepare (at least once, recorded and fenced)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC
    description = "Reads (BATCH) or sends messages of RocketMQ topics (json or text; at least once, fenced)."

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``name.srv.addr`` from a connection: its extra's ``name_srv_addr``, else host:port (default 9876)."""
        listed = (conn.extra or {}).get("name_srv_addr")
        if listed:
            return {"name.srv.addr": str(listed)}
        return {"name.srv.addr": f"{conn.host or 'localhost'}:{int(conn.port or DEFAULT_PORT)}"}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "name.srv.addr" not in options

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``rocketmq://<name servers>/<topic>`` per topic written or read."""
        from urllib.parse import quote

        names = [options["topic"]] if "topic" in options else str(options.get("topics") or "").split(",")
        names = [str(n).strip() for n in names if str(n).strip()]
        where = written_endpoint(options)
        if where is None:
            return [Unnamed(f"topic {n!r} of connection {options.get(CONN_OPTION)!r}") for n in names]
        return [f"{where}/{quote(n, safe='')}" for n in names]

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, run_time_options(parse, vertex, SourceOptions))

    def acknowledge(self, ctx: RunContext, vertex: Vertex) -> None:
        from .source import acknowledge

        acknowledge(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Send every row (:mod:`.sink`): at least once, fenced and recorded; nothing left to commit."""
        from .sink import write

        write(ctx, vertex, data, run_time_options(parse, vertex, SinkOptions))
        return None


CONNECTOR = Rocketmq()
