"""What the change data capture connectors share at compile time (no Spark): the checks of their
common options, the tables they capture, their lineage, and the delegation to their run-time module.

A CDC connector subclasses :class:`CdcSource`, declares its options with :func:`cdc_spec` (the family's
options, SeaTunnel's names and defaults, then its own) and says how its typed options become its
settings (:meth:`CdcSource.parse`, raising :class:`OptionError` for the rules across options), the table
ids and asset URIs of its tables, its own extra checks, and the module holding ``read``/``read_stream``
(imported when the job runs)."""

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
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem, as_list, option
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import Schema, TableKeys

#: the start-up modes that run here (``initial``: snapshot, then changes; ``latest``: changes only)
STARTUP_MODES = ("initial", "latest")
#: SeaTunnel's start-up modes that plan but cannot run here
LATER_STARTUP_MODES = ("earliest", "specific", "timestamp")
#: the one ``format`` that runs here: rows with row kinds
DEFAULT_FORMAT = "default"
DEFAULT_SPLIT_SIZE = 8096
#: what an option SeaTunnel's incremental sources tune, and this package does not need, says of itself
_ACCEPTED = "Accepted and not needed here."


def _family(table_names: str) -> tuple[Option, ...]:
    """The options every CDC source has (SeaTunnel's incremental source), ``table-names`` described as
    ``table_names`` says."""
    return (
        Option("base-url", required=True, allow_blank=False, identity=True, description="The database's JDBC URL."),
        Option("username", description="The user the capture connects as."),
        Option("password", secret=True, description="The user's password."),
        Option("database-names", "list", description=_ACCEPTED + " The tables are named by table-names."),
        Option("table-names", "list", required=True, identity=True, description=table_names),
        Option("table-names-config", "any", description=_ACCEPTED),
        Option("startup.mode", "enum", "initial", choices=STARTUP_MODES + LATER_STARTUP_MODES,
               description="initial: a snapshot, then every change; latest: the changes from the first run on; "
               + ", ".join(LATER_STARTUP_MODES) + " plan but cannot run here."),
        Option("startup.timestamp", "long", description="The start with startup.mode = timestamp (plans only)."),
        Option("startup.specific-offset.file", description="The start with startup.mode = specific (plans only)."),
        Option("startup.specific-offset.pos", "long",
               description="The start with startup.mode = specific (plans only)."),
        Option("stop.mode", description=_ACCEPTED + " The capture never stops."),
        Option("snapshot.split.size", "int", DEFAULT_SPLIT_SIZE, minimum=1,
               description="Rows per split of a table's snapshot."),
        Option("snapshot.fetch.size", "int", 1024, minimum=1, description=_ACCEPTED),
        Option("incremental.parallelism", "int", 1, minimum=1, description=_ACCEPTED),
        Option("server-time-zone", description=_ACCEPTED),
        Option("connect.timeout.ms", "long", 30000, minimum=0, description=_ACCEPTED),
        Option("connect.max-retries", "int", 3, minimum=0, description=_ACCEPTED),
        Option("connection.pool.size", "int", 20, minimum=1, description=_ACCEPTED),
        Option("chunk-key.even-distribution.factor.upper-bound", "double", 1000.0, description=_ACCEPTED),
        Option("chunk-key.even-distribution.factor.lower-bound", "double", 0.05, description=_ACCEPTED),
        Option("sample-sharding.threshold", "int", 1000, description=_ACCEPTED),
        Option("inverse-sampling.rate", "int", 1000, description=_ACCEPTED),
        Option("exactly_once", "bool", False, description="Accepted: the capture is exactly-once whatever it says "
               "(positions live in the pipeline's checkpoint)."),
        Option("format", default=DEFAULT_FORMAT, description="default: rows with row kinds; another format plans "
               "but cannot run here."),
        Option("schema-changes.enabled", "bool", False, description="Follow columns added to the captured tables."),
        Option("debezium", "map", description=_ACCEPTED + " Debezium's own properties."),
    )


def cdc_spec(table_names: str, *own: Option) -> OptionSpec:
    """A CDC source's options: the family's, then the connector's ``own``."""
    return OptionSpec((*_family(table_names), *own))


def templated(options: Mapping[str, Any]) -> bool:
    """Whether the options naming the database or its tables are still templates (checked when the
    task runs, rendered)."""
    values = [option(options, "base-url", ""), *as_list(option(options, "table-names"))]
    return any(UNRENDERED.search(str(v)) for v in values)


class CdcSource(Connector, SchemaInference, SourceTables, BatchSource, StreamingSource, ChangeEmitter, Lineage):
    """A database's tables: their snapshot, then every change, with row kinds."""

    capabilities = Capabilities(sections=frozenset({SOURCE}))
    #: the module holding ``read`` and ``read_stream``, relative to the subclass's package
    runtime: ClassVar[str] = ""

    # what a subclass says ------------------------------------------------------------------------

    def parse(self, options: Mapping[str, Any], section: str = SOURCE) -> Any:
        """The block's settings (with ``tables``, ``startup_mode``) from its typed options (the class's
        ``option_spec``), or :class:`OptionError`."""
        raise NotImplementedError

    def _parsed(self, options: Mapping[str, Any]) -> Any:
        """The block's settings; None when the options are wrong (the compile-time check says why)."""
        try:
            return self.parse(options)
        except OptionError:
            return None

    def table_ids(self, parsed: Any) -> list[str]:
        return list(parsed.tables)

    def asset(self, parsed: Any, table: str) -> str:
        raise NotImplementedError

    def more_problems(self, plugin: PluginConfig, job: JobConfig, parsed: Any) -> list[Problem]:
        return []

    # compile time --------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The rules across options (the spec checks each option): the tables' names against the URL's
        database, and what plans but cannot run here."""
        spec = self.option_spec
        if templated(plugin.options) or spec is None or spec.valid(plugin.options, SOURCE) is None:
            return []  # checked when the task runs, rendered; or the spec's problems say why
        try:
            parsed = self.parse(plugin.options)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems = list(self.more_problems(plugin, job, parsed))
        if parsed.startup_mode in LATER_STARTUP_MODES:
            problems.append(job.cannot_run(f"startup.mode {parsed.startup_mode} is not supported by this package",
                                           plugin, key="startup.mode", hint="use initial or latest"))
        fmt = parsed.format
        if fmt != DEFAULT_FORMAT:
            problems.append(job.cannot_run(f"format {fmt} is not supported by this package", plugin, key="format",
                                           hint="leave format unset: rows with row kinds"))
        return problems

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return None, []  # the tables' columns come from the database when the job runs

    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        parsed = None if templated(plugin.options) else self._parsed(plugin.options)
        return None if parsed is None else {t: TableKeys() for t in self.table_ids(parsed)}

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        return True

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        if templated(options):
            return [Unnamed("the tables of a templated base-url or table-names")]
        parsed = self._parsed(options)
        return [] if parsed is None else [self.asset(parsed, t) for t in parsed.tables]

    # run time ------------------------------------------------------------------------------------

    def _runtime(self) -> Any:
        return importlib.import_module(self.runtime, type(self).__module__)

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return dict(self._runtime().read(ctx, vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        """The tables as one stream (a :class:`...spi.sharedstream.SharedStream`: one capture for all)."""
        data: Dataset = self._runtime().read_stream(ctx, vertex)
        return data
