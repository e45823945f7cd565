"""Clickhouse: a query as a source, a table as an exactly-once sink, over ClickHouse's HTTP interface (port
8123; standard library only).

SeaTunnel's options (:mod:`.options`: ``host``, ``database``, ``table``, ``sql``, ``username``, ``password``,
``clickhouse.config``, ``server_time_zone``, ``bulk_size``, ``primary_key``, ``support_upsert``,
``allow_experimental_lightweight_delete``, ``split_mode``, ``sharding_key``), or ``clickhouse_conn_id`` naming
an Airflow connection that gives the address and the credentials. SeaTunnel 2.3.8's Clickhouse has no save
modes: nor has this one (the target table must exist).

* **Source** (:mod:`.runtime`, :mod:`.datasource`): the query's columns and types come from the server when the
  task runs (``DESCRIBE``), mapped as SeaTunnel maps them (:mod:`.types`); one reader runs the query, as
  SeaTunnel's single split, among the plan's ``parallelism`` partitions.
* **Sink**, exactly-once through the engine's two phases over :class:`.runtime.ClickhouseSinkVerbs`: each
  writer stages its rows into its own table of the bookkeeping database ``_seatunnel``; ``publish``
  (:mod:`.commit`) claims the commit and MOVEs the staged partitions into the target; a restore finishes a
  claimed publish. With ``primary_key`` the rows are applied by key (the keys' rows deleted, the last row of
  each key moved in).

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/clickhouse.md.
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
    SchemaInference,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .options import CONN_OPTION, DEVIATIONS, SPEC, OptionError, parse
from .runtime import ClickhouseSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "Clickhouse"]


class Clickhouse(Connector, SchemaInference, BatchSource, ClickhouseSinkVerbs, FromConnection, Lineage):
    name = "Clickhouse"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's Clickhouse sink has no aggregated committer (no coordinator slot)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), deletes=True)
    option_spec = SPEC  # required, identity and secrets (password) come from it
    description = "Reads a ClickHouse query's answer, or writes a ClickHouse table exactly once (HTTP interface)."

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """What the spec cannot say: host as host:port, bundled credentials, settings, upsert's key, a sink's
        several hosts (it writes through the first)."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            options = parse(plugin.options, plugin.section, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems: list[Problem] = []
        if plugin.section == SINK and plugin.has("sharding_key") and not options.split_mode:
            problems.append(job.problem("sharding_key only works with split_mode = true", plugin, key="sharding_key",
                                        severity="warning"))
        if plugin.section == SINK and options.endpoint is not None and len(options.endpoint.hosts) > 1:
            problems.append(job.problem(
                f"the sink writes through its first host ({options.endpoint.hosts[0]}) only: its staging tables and "
                "commit records must stay on one server for every attempt and restore", plugin, key="host",
                severity="warning", hint="list one host for a sink (a Distributed table spreads the rows)"))
        return problems

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """A source's rows are the query's columns, known when the task runs (the server describes them)."""
        if plugin.section == SINK and inputs and inputs[0] is not None:
            o = SPEC.valid(plugin.options, SINK)
            names = set(inputs[0].names)
            keys = [k.strip() for k in str(o["primary_key"] or "").split(",") if k.strip()] if o is not None else []
            missing = [k for k in keys if k not in names]
            if missing:
                return None, [job.problem(f"primary_key names {', '.join(missing)}, which is not an input field",
                                          plugin, key="primary_key")]
        return None, []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``host``, ``username``, ``password`` (and ``database`` from the schema) from a connection."""
        out: dict[str, Any] = {"host": f"{conn.host or 'localhost'}:{int(conn.port or 8123)}"}
        out.update(conn.credentials())  # both or neither: the options bundle them
        if conn.schema:
            out["database"] = str(conn.schema)
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "host" not in options

    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        host, database = options.get("host"), options.get("database")
        if not host or not database:
            return [Unnamed("Clickhouse", at_run_time=True)]
        first = str(host).split(",")[0].strip().rsplit("@", 1)[-1]
        table = options.get("table")
        return [f"clickhouse://{first}/{database}" + (f"/{table}" if table else "")]

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)


CONNECTOR = Clickhouse()
