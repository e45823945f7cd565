"""Hbase: a table of HBase as source and sink, through HBase's Thrift 1 gateway (``happybase``, extra ``hbase``).

SeaTunnel's options (:mod:`.options`: ``zookeeper_quorum``, ``table``, ``schema``, ``caching``, ``batch``,
``cache_blocks``, ``rowkey_column``, ``family_name``, ``rowkey_delimiter``, ``version_column``,
``null_mode``, ``wal_write``, ``write_buffer_size``, ``encoding``, ``ttl``, ``hbase_extra_config``, the save
modes), and ``hbase_conn_id`` naming an Airflow connection of type ``hbase`` whose host and port are the
Thrift gateway's.

* **Source** (:mod:`.runtime`, :mod:`.datasource`): the table's regions dealt over exactly
  ``vertex.parallelism`` partitions of a PySpark Python data source; each row's ``rowkey`` and
  ``family:qualifier`` cells decoded into the declared schema's types (:mod:`.codec`).
* **Sink**, exactly-once by the engine's two-phase protocol over the storage verbs of :mod:`.runtime`:
  ``stage`` writes the puts into the staging table at the plan's parallelism; ``publish`` (:mod:`.commit`)
  claims the commit with one ``checkAndPut`` on the attempt token and copies the staged cells with their
  timestamps (a repeated copy lands the same cells); ``discard`` deletes the staging.

Compile-time checks with located errors and the source's schema: :mod:`.checks`; deviations from SeaTunnel:
:data:`.options.DEVIATIONS`. The user's docs: docs/hbase.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    RunContext,
    SchemaInference,
    Vertex,
)
from . import checks
from .options import CONN_OPTION, DEVIATIONS, GATEWAY_OPTION, SPEC
from .runtime import HbaseSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "Hbase"]


class Hbase(Connector, SchemaInference, BatchSource, HbaseSinkVerbs, FromConnection):
    name = "Hbase"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's Hbase sink has no aggregated committer (no coordinator slot)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC
    description = "Reads or writes a table of HBase (row key and family:qualifier cells) through its Thrift gateway."
    #: publish claims, then copies: it fires sink.move before each itself
    moves_in_steps = True

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``thrift_gateway`` from a connection of type ``hbase`` (host, port; 9090 when unset)."""
        return {GATEWAY_OPTION: f"{conn.host or 'localhost'}:{int(conn.port or 9090)}"}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return GATEWAY_OPTION not in options

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)


CONNECTOR = Hbase()
