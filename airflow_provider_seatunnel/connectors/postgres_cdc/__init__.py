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

from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import (
    SOURCE,
    UNRENDERED,
    BatchSource,
    ChangeEmitter,
    Connector,
    Dataset,
    Lineage,
    NeedsJars,
    RunContext,
    SchemaInference,
    SourceTables,
    StreamingSource,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema, TableKeys
from .options import LATER_STARTUP_MODES, OTHER_PLUGINS, OptionError, opt, parse

__all__ = ["CONNECTOR", "PostgresCdc"]


def _templated(options: Mapping[str, Any]) -> bool:
    """Whether the options naming the database or its tables are still templates."""
    values = [opt(options, "base-url", ""), *(opt(options, "table-names", None) or [])]
    return any(UNRENDERED.search(str(v)) for v in values)


class PostgresCdc(Connector, SchemaInference, SourceTables, BatchSource, StreamingSource, ChangeEmitter, NeedsJars,
                  Lineage):
    name = "Postgres-CDC"
    kinds = frozenset({SOURCE})
    required = ()  # base-url and table-names: options.parse says so, at their keys
    identity = ("base-url", "table-names", "slot.name")
    exclusive_stream = True
    description = "Captures a PostgreSQL database's tables: a snapshot, then every change (logical replication)."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        if _templated(plugin.options):
            return []  # checked when the task runs, its templates rendered
        try:
            options = parse(plugin.options)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems = []
        if options.startup_mode in LATER_STARTUP_MODES:
            problems.append(job.cannot_run(f"startup.mode {options.startup_mode} is not supported by this package",
                                           plugin, key="startup.mode", hint="use initial or latest"))
        if options.plugin in OTHER_PLUGINS:
            problems.append(job.problem(f"decoding.plugin.name {options.plugin}: changes are decoded with pgoutput "
                                        "(built into PostgreSQL 10 and later) whatever plug-in is named; the named "
                                        "one need not be installed", plugin, key="decoding.plugin.name",
                                        severity="warning", hint="set decoding.plugin.name = pgoutput"))
        fmt = str(opt(plugin.options, "format", "default")).strip().lower()
        if fmt != "default":
            problems.append(job.cannot_run(f"format {fmt} is not supported by this package", plugin, key="format",
                                           hint="leave format unset: rows with row kinds"))
        return problems

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return None, []  # the tables' columns come from the database when the job runs

    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        if _templated(plugin.options):
            return None
        try:
            options = parse(plugin.options)
        except OptionError:
            return None
        return {f"{options.database}.{t}": TableKeys() for t in options.tables}

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        return True

    def jars(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
        from ..jdbc.connection import required_jars

        url = opt(options, "base-url")
        return required_jars({"url": str(url), "driver": "org.postgresql.Driver"}, env) if url else []

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``postgres://host:port/database/schema/table`` per captured table."""
        if _templated(options):
            return [Unnamed("the tables of a templated base-url or table-names")]
        try:
            parsed = parse(options)
        except OptionError:
            return []
        return [f"postgres://{parsed.host}:{parsed.port}/{parsed.database}/{t.replace('.', '/')}"
                for t in parsed.tables]

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read_stream

        return read_stream(ctx, vertex)


CONNECTOR = PostgresCdc()
