"""Iceberg: Apache Iceberg tables as source (batch, time travel, incremental, streaming) and sink (appends,
upserts, save modes), exactly once by write-audit-publish on a branch and Iceberg's fast-forward.

Options as SeaTunnel's Iceberg connector names them (:mod:`.options`): ``catalog_name``, ``namespace``,
``table`` in the catalog ``iceberg.catalog.config`` describes (hadoop, hive, jdbc, rest), its address and
credentials optionally from an Airflow connection (``iceberg_conn_id``).

* **Source** (:mod:`.source`): Iceberg's Spark reader at the plan's parallelism; STREAMING from the
  pipeline's checkpoint (a scheduled run reads the snapshots committed since the last one).
* **Sink** (:mod:`.sink`): ``prepare`` computes the rows once into Spark's cache, ``commit`` writes them
  as one snapshot to a staging branch and publishes it by fast-forwarding the target branch, which
  Iceberg refuses when anything committed to it meanwhile: a restore or an overlapping attempt never
  publishes a run twice. Save modes apply once, in the run's first commit to the table.

Spark needs Iceberg's runtime built for its minor version (Spark 4.1 today; none exists for 4.2) and a
session started with Iceberg's SQL extensions (:mod:`.checks`: :class:`~...spi.NeedsJars`,
:class:`~...spi.NeedsSession`); the run checks both (:mod:`.tables`). The user's docs: docs/iceberg.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    UNRENDERED,
    BatchSource,
    Capabilities,
    ChangeEmitter,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    NeedsJars,
    NeedsSession,
    RunContext,
    SchemaInference,
    SourceTables,
    StreamingSource,
    TableLineage,
    Unnamed,
    Vertex,
)
from ...spi.options import PluginConfig, run_time_options
from ...spi.schema import TableKeys
from . import checks
from .evolve import FOLLOWS
from .options import CATALOG_CONFIG, CONN_OPTION, CONNECTION_CONFIG, NAME, SPEC, SourceOptions, parse
from .sink import IcebergSinkVerbs

__all__ = ["CONNECTOR", "Iceberg"]


def _source(vertex: Vertex) -> SourceOptions:
    return run_time_options(parse, vertex, SourceOptions)


def _named(uri: str) -> str | Unnamed:
    return Unnamed(f"Iceberg table {uri!r}") if UNRENDERED.search(uri) else uri


class Iceberg(Connector, SchemaInference, SourceTables, NeedsJars, NeedsSession, Lineage, TableLineage,
              ChangeEmitter, BatchSource, StreamingSource, IcebergSinkVerbs, FromConnection):
    name = NAME
    connection_option = CONN_OPTION
    #: with primary keys; without, every row is appended as it is (docs/iceberg.md)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, deletes=True)
    option_spec = SPEC  # identity: catalog_name, the connection, namespace, table(s); the rest: checks.check
    secrets = frozenset({"jdbc.password", "jdbc.user", "token", "credential"})  # catalog properties
    description = "Reads (batch, time travel, streaming) and writes Apache Iceberg tables, exactly once."
    #: a CDC source's added, dropped and renamed columns and widened types (:mod:`.evolve`)
    follows_schema_changes = FOLLOWS

    # compile time ------------------------------------------------------------------------------

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)

    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        """A ``table_list``'s tables, named ``<namespace>.<table>``; None for one table."""
        if plugin.section == SINK:
            return None
        try:
            options = parse(plugin.options, plugin.section)
        except Exception:
            return None
        if not isinstance(options, SourceOptions) or len(options.tables) < 2:
            return None
        return {f"{t.namespace}.{t.table}": TableKeys() for t in options.tables}

    #: Iceberg's runtime for the installed PySpark's minor version, a JDBC catalog's driver
    jars = staticmethod(checks.iceberg_jars)

    session_conf = staticmethod(checks.session_conf)

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """A source's rows are INSERTs (Iceberg's readers give rows, not changes)."""
        return inputs_change if vertex.kind != SOURCE else False

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """Each table as a URI (a hadoop catalog's table directory, else ``iceberg://catalog/ns.table``)."""
        return [_named(uri) for uri in checks.assets_of(options)]

    def table_assets(self, options: Mapping[str, Any], table: str) -> list[str | Unnamed]:
        from ..files.placeholders import expand_table_placeholders

        return [_named(expand_table_placeholders(uri, table)) for uri in checks.assets_of(options)]

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """A catalog's address and credentials: a connection of type ``http``/``https`` (or with extra
        ``type = rest``) is a REST catalog (``uri`` from host, port and schema; the password its ``token``,
        or with a login the OAuth2 ``credential`` ``login:password``); any other is a JDBC catalog (host,
        port and schema, or a host that is a whole ``jdbc:`` URL; ``jdbc.user``/``jdbc.password``). The
        connection's extra adds catalog properties (``warehouse``...). The block's own entries win."""
        extra = {str(k): str(v) for k, v in (conn.extra or {}).items() if not isinstance(v, (dict, list))}
        kind = extra.pop("type", "rest" if conn.conn_type in ("http", "https") else "jdbc").lower()
        host, port = str(conn.host or "localhost"), f":{conn.port}" if conn.port else ""
        config: dict[str, str] = {"type": kind, **extra}
        if kind == "rest":
            scheme = "https" if conn.conn_type == "https" else "http"
            config["uri"] = host if "://" in host else f"{scheme}://{host}{port}/{conn.schema or ''}".rstrip("/")
            if conn.password:
                config.update({"credential": f"{conn.login}:{conn.password}"} if conn.login
                              else {"token": str(conn.password)})
        else:
            flavour = conn.conn_type if conn.conn_type in ("postgres", "mysql", "mariadb") else "postgresql"
            flavour = "postgresql" if flavour == "postgres" else flavour
            config["uri"] = host if host.startswith("jdbc:") else f"jdbc:{flavour}://{host}{port}/{conn.schema or ''}"
            if conn.login:
                config["jdbc.user"] = str(conn.login)
            if conn.password:
                config["jdbc.password"] = str(conn.password)
        return {CONNECTION_CONFIG: config}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return SPEC.written(options, CATALOG_CONFIG) is None

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, _source(vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read_stream

        return read_stream(ctx, vertex, _source(vertex))


CONNECTOR = Iceberg()
