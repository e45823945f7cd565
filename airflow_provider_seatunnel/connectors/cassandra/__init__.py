"""Cassandra: the rows of a CQL query as a source, a table as a sink (the DataStax ``cassandra-driver``,
extra ``cassandra``).

SeaTunnel's options (:mod:`.options`: ``host``, ``keyspace``, ``username``/``password``, ``datacenter``,
``consistency_level``; a source's ``cql``; a sink's ``table``, ``fields``, ``batch_size``, ``batch_type``,
``async_write``), or ``cassandra_conn_id`` naming an Airflow connection of type ``cassandra``.

* **Source** (:mod:`.runtime`, :mod:`.datasource`): the cql's rows with SeaTunnel's type mapping
  (:mod:`.types`), a plain ``SELECT`` of one table split into the plan's parallelism token ranges.
* **Sink**: prepared ``INSERT``\\ s from one write task per partition of the plan's parallelism, at least
  once with idempotent replays (every ``INSERT`` upserts its primary key), fenced by an attempt token and
  recorded per run (:mod:`.runtime`). SeaTunnel's Cassandra sink has no save modes: nor has this one.

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/cassandra.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    Lineage,
    RunContext,
    Sink,
    Vertex,
)
from ...spi.contract import Unnamed
from ...spi.options import JobConfig, PluginConfig, Problem
from .options import CONN_OPTION, DEVIATIONS, SPEC, OptionError, parse

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "Cassandra"]


class Cassandra(Connector, BatchSource, Sink, FromConnection, Lineage):
    name = "Cassandra"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's Cassandra sink has none (no coordinator slot); every row read is an INSERT
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC  # required, identity and secrets (password) come from it
    description = "Reads the rows of a CQL query, or writes rows into a table, of Apache Cassandra."

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """Beyond the spec: the rules across options (``host``'s form, username with password)."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            parse(plugin.options, plugin.section, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        return []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """From a connection of type ``cassandra``: ``host`` (its hosts, comma-separated, each with the
        connection's port, default 9042), ``username``/``password`` (login, password), ``keyspace`` (schema),
        ``datacenter`` (extra ``datacenter``)."""
        port = int(conn.port or 9042)
        hosts = [h.strip() for h in str(conn.host or "localhost").split(",") if h.strip()]
        out: dict[str, Any] = {"host": ",".join(h if ":" in h else f"{h}:{port}" for h in hosts)}
        out.update(conn.credentials())  # both or neither: the options bundle them
        if conn.schema:
            out["keyspace"] = str(conn.schema)
        dc = (conn.extra or {}).get("datacenter")
        if dc:
            out["datacenter"] = str(dc)
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "host" not in options and "password" not in options

    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        """``cassandra://host:port/<keyspace>.<table>`` (a sink's table; a source's query is unnamed)."""
        host, ks, table = options.get("host"), options.get("keyspace"), options.get("table")
        if not host or not ks:
            return [Unnamed(f"the keyspace of connection {options.get(CONN_OPTION)!r}", True)]
        first = str(host).split(",")[0].strip()
        if not table:
            return [Unnamed(f"the query of keyspace {ks} at {first}", False)]
        return [f"cassandra://{first}/{ks}.{table}"]

    # run time ----------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Write every row (:mod:`.runtime`): at least once, fenced and recorded; nothing left to commit."""
        from .runtime import write

        write(ctx, vertex, data)
        return None


CONNECTOR = Cassandra()
