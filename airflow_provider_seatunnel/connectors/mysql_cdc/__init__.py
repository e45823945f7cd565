"""MySQL-CDC: a MySQL or MariaDB database's tables, their snapshot then every change, with row kinds.

SeaTunnel's options (:mod:`.options`). STREAMING: per table, a snapshot at a binlog position (a
consistent-snapshot transaction), then the row events after that position, read as a replica
(:mod:`.runtime`, :mod:`.datasource`); binlog positions are the stream's offsets in the
pipeline's checkpoint, so a restore re-reads from the last recorded micro-batch on. BATCH: the
tables once.

Needs ``mysql-replication`` and ``PyMySQL`` (extra ``cdc``); the server ``log_bin`` with
``binlog_format = ROW`` and ``binlog_row_image = FULL``; a user with ``SELECT``, ``REPLICATION
SLAVE`` and ``REPLICATION CLIENT`` (and ``RELOAD`` on MySQL, for the snapshot's lock). The user's
docs: docs/cdc.md.
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
    RunContext,
    SchemaInference,
    SourceTables,
    StreamingSource,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema, TableKeys
from .options import LATER_STARTUP_MODES, OptionError, opt, parse

__all__ = ["CONNECTOR", "MySqlCdc"]


def _templated(options: Mapping[str, Any]) -> bool:
    values = [opt(options, "base-url", ""), *(opt(options, "table-names", None) or [])]
    return any(UNRENDERED.search(str(v)) for v in values)


class MySqlCdc(Connector, SchemaInference, SourceTables, BatchSource, StreamingSource, ChangeEmitter, Lineage):
    name = "MySQL-CDC"
    kinds = frozenset({SOURCE})
    required = ()  # base-url and table-names: options.parse says so, at their keys
    identity = ("base-url", "table-names")
    exclusive_stream = False  # the binlog has no consumer position: any number of queries may read it
    description = "Captures a MySQL or MariaDB database's tables: a snapshot, then every change (the binlog)."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        if _templated(plugin.options):
            return []
        try:
            options = parse(plugin.options)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems = []
        if options.server_ids is not None and options.server_ids[1] - options.server_ids[0] + 1 < len(options.tables):
            low = options.server_ids[0]
            problems.append(job.problem(f"server-id gives {options.server_ids[1] - low + 1} id(s) for "
                                        f"{len(options.tables)} tables: each captured table reads the binlog with its "
                                        f"own id, here {low}..{low + len(options.tables) - 1}", plugin,
                                        key="server-id", severity="warning",
                                        hint=f'server-id = "{low}-{low + len(options.tables) - 1}"'))
        if options.startup_mode in LATER_STARTUP_MODES:
            problems.append(job.cannot_run(f"startup.mode {options.startup_mode} is not supported by this package",
                                           plugin, key="startup.mode", hint="use initial or latest"))
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
            return {t: TableKeys() for t in parse(plugin.options).tables}
        except OptionError:
            return None

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        return True

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``mysql://host:port/database/table`` per captured table."""
        if _templated(options):
            return [Unnamed("the tables of a templated base-url or table-names")]
        try:
            parsed = parse(options)
        except OptionError:
            return []
        return [f"mysql://{parsed.host}:{parsed.port}/{t.replace('.', '/')}" for t in parsed.tables]

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read_stream

        return read_stream(ctx, vertex)


CONNECTOR = MySqlCdc()
