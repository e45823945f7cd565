"""Postgres-CDC: a PostgreSQL database's tables, their snapshot then every change, with row kinds.

SeaTunnel's options (:mod:`.options`). STREAMING (the use it is for): per table a logical
replication slot and a publication; the first micro-batch holds the snapshot taken at the slot's
consistent point and the changes after it, later ones the changes since (:mod:`.runtime`,
:mod:`.datasource`, :mod:`.pgoutput`). Positions are LSNs in the pipeline's checkpoint; the slot's
confirmed position advances only once Spark recorded the micro-batch, so a restore reads from the
last committed micro-batch on and nothing is lost or read twice. BATCH: the tables once.

Needs ``psycopg`` (extra ``cdc``) and the PostgreSQL JDBC driver; the server ``wal_level =
logical`` and a user with the ``REPLICATION`` attribute that owns the tables (for the
publication). The user's docs: docs/cdc.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import SOURCE, Capabilities, NeedsJars
from ...spi.options import JobConfig, PluginConfig, Problem, option
from ..cdc.source import CdcSource
from .options import OTHER_PLUGINS, SPEC, PgCdcOptions, parse

__all__ = ["CONNECTOR", "PostgresCdc"]


class PostgresCdc(CdcSource, NeedsJars):
    name = "Postgres-CDC"
    capabilities = Capabilities(sections=frozenset({SOURCE}), exclusive_stream=True)
    option_spec = SPEC  # required, identity (base-url, table-names, slot.name) and secrets come from it
    runtime = ".runtime"
    description = "Captures a PostgreSQL database's tables: a snapshot, then every change (logical replication)."

    parse = staticmethod(parse)

    def table_ids(self, parsed: PgCdcOptions) -> list[str]:
        return [f"{parsed.database}.{t}" for t in parsed.tables]

    def asset(self, parsed: PgCdcOptions, table: str) -> str:
        """``postgres://host:port/database/schema/table``."""
        return f"postgres://{parsed.host}:{parsed.port}/{parsed.database}/{table.replace('.', '/')}"

    def more_problems(self, plugin: PluginConfig, job: JobConfig, parsed: PgCdcOptions) -> list[Problem]:
        if parsed.plugin not in OTHER_PLUGINS:
            return []
        return [job.problem(f"decoding.plugin.name {parsed.plugin}: changes are decoded with pgoutput (built into "
                            "PostgreSQL 10 and later) whatever plug-in is named; the named one need not be installed",
                            plugin, key="decoding.plugin.name", severity="warning",
                            hint="set decoding.plugin.name = pgoutput")]

    def jars(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
        from ..sqlclient.connection import required_jars

        url = option(options, "base-url")
        return required_jars({"url": str(url), "driver": "org.postgresql.Driver"}, env) if url else []


CONNECTOR = PostgresCdc()
