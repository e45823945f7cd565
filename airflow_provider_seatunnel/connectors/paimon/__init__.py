"""Paimon: Apache Paimon tables as a batch source and an exactly-once sink (appends, upserts with row
kinds, save modes), written and read by pypaimon inside Spark's tasks.

No Paimon Spark runtime for Spark 4 is served by the Maven repositories this package is built against,
so the connector uses pypaimon (pure Python, Arrow): :mod:`.sink` writes data files from the executors
(``mapInArrow``) and commits one snapshot on the driver, fenced against overlapping attempts;
:mod:`.source` reads the newest snapshot's splits on the executors. Options: :mod:`.options`; the
private pypaimon API it relies on: :mod:`.compat`. The user's docs: docs/paimon.md.

What cannot run (a ``not-runnable`` warning at compile time): ``catalog_type = hive`` (pypaimon has
no Hive catalog), a warehouse that is not a local path (the commit lock is a local ``flock``),
``data_save_mode = CUSTOM_PROCESSING``. A STREAMING job cannot read a Paimon source (batch only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    UNRENDERED,
    BatchSource,
    Capabilities,
    Connector,
    Dataset,
    Lineage,
    RunContext,
    SchemaInference,
    TableLineage,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem, run_time_options
from ...spi.schema import Schema
from ..lakehouse.options import checked, key_problems, save_mode_problems
from .evolve import FOLLOWS
from .options import (
    HADOOP_CONF,
    NAME,
    PARTITION_KEYS,
    PRIMARY_KEYS,
    SPEC,
    SourceOptions,
    local_path,
    parse,
)
from .sink import PaimonSinkVerbs

__all__ = ["CONNECTOR", "Paimon"]

#: SeaTunnel's Hadoop options: accepted, not used (a local warehouse needs no Hadoop settings)
UNUSED = ("hdfs_site_path", HADOOP_CONF, "paimon.hadoop.conf-path")


def _source(vertex: Vertex) -> SourceOptions:
    return run_time_options(parse, vertex, SourceOptions)


def _location(options: Mapping[str, Any], table: str | None = None) -> str | Unnamed:
    parts = [SPEC.written(options, k) for k in ("warehouse", "database", "table")]
    if any(p is None for p in parts):
        return Unnamed("the Paimon table of options without warehouse, database and table", at_run_time=False)
    warehouse, database, name = (str(p).strip() for p in parts)
    if table is not None:
        from ..files.placeholders import expand_table_placeholders

        database, name = expand_table_placeholders(database, table), expand_table_placeholders(name, table)
    text = f"{local_path(warehouse).rstrip('/')}/{database}.db/{name}"
    if UNRENDERED.search(text):
        return Unnamed(f"Paimon table {text!r}")
    return "file://" + text if text.startswith("/") else text


class Paimon(Connector, SchemaInference, Lineage, TableLineage, BatchSource, PaimonSinkVerbs):
    name = NAME
    #: with paimon.table.primary-keys; without, every row is appended as it is
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, deletes=True)
    option_spec = SPEC  # identity: warehouse, database, table; options.table_of reports the first missing one
    description = "Reads (batch) and writes Apache Paimon tables through pypaimon, exactly once."
    #: a CDC source's added, dropped and renamed columns and widened types (:mod:`.evolve`)
    follows_schema_changes = FOLLOWS

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The first option refused beyond :data:`.options.SPEC`'s types, choices and unknown keys (an
        error at its key), then what cannot run and what is not used."""
        options, problems = checked(SPEC, parse, plugin, job)
        if options is None:
            return problems
        if options.table.catalog_type == "hive":
            problems.append(job.cannot_run("catalog_type hive: pypaimon has no Hive catalog", plugin,
                                           key="catalog_type", hint="use a filesystem catalog (docs/paimon.md)"))
        elif not options.table.is_local() and not UNRENDERED.search(options.table.warehouse):
            problems.append(job.cannot_run(f"warehouse '{options.table.warehouse}': only a local warehouse can be "
                                           "written and read here (the commit lock is a local file lock)", plugin,
                                           key="warehouse", hint="a path on a local or NFSv4 file system"))
        for key in UNUSED:
            if plugin.has(key):
                problems.append(job.problem(f"{key} is not used: the warehouse is a local directory", plugin,
                                            key=key, severity="warning"))
        return problems + save_mode_problems(NAME, options, plugin, job)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """A source's rows are known at run time only; a sink's keys must name fields of its input."""
        return None, key_problems(SPEC, parse, plugin, job, inputs, (PRIMARY_KEYS, PARTITION_KEYS))

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """The table's directory as a URI (``file:///data/paimon/shop.db/orders``)."""
        return [_location(options)]

    def table_assets(self, options: Mapping[str, Any], table: str) -> list[str | Unnamed]:
        return [_location(options, table)]

    # run time ----------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, _source(vertex))


CONNECTOR = Paimon()
