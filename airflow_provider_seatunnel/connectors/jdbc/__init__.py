"""Jdbc: databases through a JDBC driver, as source and sink (Spark's JDBC data source).

The data path is Spark's JDBC reader and writer; the driver (a Java class in a jar) is found by
:func:`..sqlclient.connection.required_jars` and reaches Spark through ``spark.jars``. Statements of the
driver side (split bounds, save modes, the commit) go through the same driver, in the Spark driver's
JVM; on a Spark Connect session, which has no JVM in this process, through a Python driver
(:mod:`..sqlclient.pyconnection`: PostgreSQL, MySQL and MariaDB), while Spark's reads and writes run on
the server with the JDBC driver (a session artifact). Dialects (:mod:`..sqlclient.dialects`,
:mod:`..sqlclient.databases`): quoting, upsert, types and split hashing as SeaTunnel's dialect of each
database writes them; PostgreSQL, MySQL/MariaDB and SQLite are tested against real databases, Oracle,
SQL Server, DB2 and the others are SQL generation only (untested); other databases get ANSI SQL.

Both read and write at the parallelism the plan gives the vertex, never at a figure of their own:

* **Source** (``read``, :mod:`.source`): ``query``, ``table_path`` or ``table_list`` (each item its
  own table), split as SeaTunnel's splitters decide; the splits are distributed over
  ``vertex.parallelism`` readers, one Spark partition each. Where the runtime asks
  (``read_together``, :mod:`.together`), tables of one row type are read by one query per group.
* **Sink** (storage verbs, :mod:`.sink`; the engine runs the two phases): exactly-once without XA,
  keyed by run id, pipeline, sink and table. ``stage`` writes each table into a staging table with
  ``vertex.parallelism`` writers, after the save modes (:mod:`.savemodes`, once per run);
  ``publish`` (:mod:`.commit`) moves the staged rows into the target and records the commit in
  one database transaction; ``discard`` drops a staging table. In a STREAMING job each
  micro-batch goes through the same two phases, and ``retire`` drops the commit-log rows of the
  micro-batches Spark will never replay.

Errors are classified by SQLSTATE (:mod:`..sqlclient.errors`); passwords never appear in messages. The
compile-time checks are in :mod:`.checks`, the tables it reads and writes as datasets in
:mod:`.lineage`; the deviations from SeaTunnel are listed in :data:`.options.DEVIATIONS`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    NeedsJars,
    RetiresCommits,
    RunContext,
    SchemaInference,
    SourceTables,
    TableLineage,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem, as_bool, option
from ...spi.schema import Schema, TableKeys
from ..sqlclient.connection import connection_of, ensure_driver, options_from_connection, required_jars
from .checks import check, key_problems
from .lineage import assets, table_assets
from .options import DEVIATIONS, SPEC
from .source import over_readers, primary_key_columns, read_table, source_tables
from .together import read_together
from .verbs import JdbcSinkVerbs

__all__ = ["CONNECTOR", "DEVIATIONS", "Jdbc"]

log = logging.getLogger("seatunnel.jdbc")


class Jdbc(Connector, SchemaInference, NeedsJars, Lineage, TableLineage, BatchSource, JdbcSinkVerbs,
           RetiresCommits, SourceTables, FromConnection):
    name = "Jdbc"
    connection_option = "jdbc_conn_id"
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, deletes=True, connect=True,
                                inserts_only=True, concurrent_tables=True)
    option_spec = SPEC  # identity (url, jdbc_conn_id, table_path, database, table, query) and secrets; url and
    # driver are required unless the block's jdbc_conn_id gives them (checks.py)
    description = "Reads a query or table, or writes (upserts) a table, through JDBC."

    # compile time ------------------------------------------------------------------------------

    check = staticmethod(check)

    def allows_concurrent_tables(self, vertex: Vertex) -> bool:
        """Several tables written at once, except into SQLite: one writer at a time per database file
        (a second one fails with ``SQLITE_BUSY``)."""
        from ..sqlclient.databases import dialect_of

        url = vertex.config.get("url")
        return not (isinstance(url, str) and dialect_of(url).family == "sqlite")

    connection_options = staticmethod(options_from_connection)

    def connect_blocker(self, options: Mapping[str, Any]) -> str | None:
        """On a Spark Connect session the statements run on the driver go through a Python driver
        (:mod:`..sqlclient.pyconnection`): PostgreSQL, MySQL and MariaDB URLs only (a URL from an Airflow
        connection is checked when the pipeline starts)."""
        from ..sqlclient.pyconnection import python_family

        url = str(options.get("url") or "").strip()
        if not url or "${" in url or python_family(url):
            return None
        scheme = url.split(":")[1] if url.count(":") >= 2 else url
        return (f"on a Spark Connect session Jdbc reaches only PostgreSQL, MySQL and MariaDB (a Python driver "
                f"runs its statements), not jdbc:{scheme}")

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return not ({"user", "password"} & set(options))

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """Unknown without a database (None); a sink's ``primary_keys`` must be input fields."""
        return None, key_problems(plugin, job, list(inputs))

    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        """A ``table_list``'s tables by their ``table_path`` as written (a query item: ``<output>_<i>``);
        their keys come from the database at run time. None for a single table."""
        items = plugin.get("table_list")
        if not isinstance(items, list) or len(items) < 2:
            return None
        output = plugin.get("plugin_output") or plugin.get("result_table_name") or "default"
        return {str(item.get("table_path") or f"{output}_{i}") if isinstance(item, Mapping) else f"{output}_{i}":
                TableKeys() for i, item in enumerate(items)}

    def has_committer(self, options: Mapping[str, Any]) -> bool:
        """SeaTunnel's Jdbc sink has an aggregated committer only with ``is_exactly_once`` (XA)."""
        return as_bool(option(options, "is_exactly_once")) is True

    jars = staticmethod(required_jars)

    assets = staticmethod(assets)
    table_assets = staticmethod(table_assets)

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        """``query``, ``table_path`` or each ``table_list`` item as ``{table id: DataFrame}``, split
        as SeaTunnel's splitters do and read by ``vertex.parallelism`` readers (that many partitions)."""
        config = vertex.config
        conn = connection_of(config)
        ensure_driver(ctx.spark, conn, ctx.plan.env, config)
        readers = max(1, int(vertex.parallelism))
        out: dict[str, Any] = {}
        for spec in source_tables(config, vertex.output, conn):
            df, splits = read_table(ctx.spark, conn, spec, config)
            log.info("Jdbc: reading %s from %s in %d split(s) by %d reader(s)", spec.table_path or "a query",
                     conn.safe_url, splits, readers)
            key = primary_key_columns(df) if splits < readers else ()
            out[spec.table_id] = over_readers(df, splits, readers, key)
        return out

    #: tables of one row type read as one DataFrame per group (:class:`...spi.together.ReadsTogether`),
    #: where the database skips the branches a task does not read (:mod:`.together`)
    read_together = staticmethod(read_together)


CONNECTOR = Jdbc()
