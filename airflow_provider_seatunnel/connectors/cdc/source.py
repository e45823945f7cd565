"""What the change data capture connectors share at compile time (no Spark): the checks of their
common options, the tables they capture, their lineage, and the delegation to their run-time module.

A CDC connector subclasses :class:`CdcSource` and says how its options parse (:meth:`CdcSource.parse`,
raising :class:`OptionError`), the table ids and asset URIs of its tables, its own extra checks, and
the module holding ``read``/``read_stream`` (imported when the job runs)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...spi import (
    SOURCE,
    UNRENDERED,
    BatchSource,
    Capabilities,
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
from ...spi.options import MISSING, JobConfig, OptionError, PluginConfig, Problem, lookup
from ...spi.schema import Schema, TableKeys

#: SeaTunnel's start-up modes that plan but cannot run here
LATER_STARTUP_MODES = ("earliest", "specific", "timestamp")


def _opt(options: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = lookup(options, key)
    return default if value is MISSING or value is None else value


def templated(options: Mapping[str, Any]) -> bool:
    """Whether the options naming the database or its tables are still templates (checked when the
    task runs, rendered)."""
    values = [_opt(options, "base-url", ""), *(_opt(options, "table-names", None) or [])]
    return any(UNRENDERED.search(str(v)) for v in values)


class CdcSource(Connector, SchemaInference, SourceTables, BatchSource, StreamingSource, ChangeEmitter, Lineage):
    """A database's tables: their snapshot, then every change, with row kinds."""

    capabilities = Capabilities(sections=frozenset({SOURCE}))
    required = ()  # base-url and table-names: parse() says so, at their keys
    #: the module holding ``read`` and ``read_stream``, relative to the subclass's package
    runtime: ClassVar[str] = ""

    # what a subclass says ------------------------------------------------------------------------

    def parse(self, options: Mapping[str, Any]) -> Any:
        """The block's options (with ``tables``, ``startup_mode``), or :class:`OptionError`."""
        raise NotImplementedError

    def table_ids(self, parsed: Any) -> list[str]:
        return list(parsed.tables)

    def asset(self, parsed: Any, table: str) -> str:
        raise NotImplementedError

    def more_problems(self, plugin: PluginConfig, job: JobConfig, parsed: Any) -> list[Problem]:
        return []

    # compile time --------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        if templated(plugin.options):
            return []
        try:
            parsed = self.parse(plugin.options)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems = list(self.more_problems(plugin, job, parsed))
        if parsed.startup_mode in LATER_STARTUP_MODES:
            problems.append(job.cannot_run(f"startup.mode {parsed.startup_mode} is not supported by this package",
                                           plugin, key="startup.mode", hint="use initial or latest"))
        fmt = str(_opt(plugin.options, "format", "default")).strip().lower()
        if fmt != "default":
            problems.append(job.cannot_run(f"format {fmt} is not supported by this package", plugin, key="format",
                                           hint="leave format unset: rows with row kinds"))
        return problems

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return None, []  # the tables' columns come from the database when the job runs

    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        if templated(plugin.options):
            return None
        try:
            return {t: TableKeys() for t in self.table_ids(self.parse(plugin.options))}
        except OptionError:
            return None

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        return True

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        if templated(options):
            return [Unnamed("the tables of a templated base-url or table-names")]
        try:
            parsed = self.parse(options)
        except OptionError:
            return []
        return [self.asset(parsed, t) for t in parsed.tables]

    # run time ------------------------------------------------------------------------------------

    def _runtime(self) -> Any:
        return importlib.import_module(self.runtime, type(self).__module__)

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return dict(self._runtime().read(ctx, vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return dict(self._runtime().read_stream(ctx, vertex))
