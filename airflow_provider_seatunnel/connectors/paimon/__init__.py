"""Paimon: Apache Paimon tables as a batch source and an exactly-once sink (appends, upserts with row
kinds, save modes), written and read by pypaimon inside Spark's tasks.

No Paimon Spark runtime for Spark 4 is served by the Maven repositories this package is built against,
so the connector uses pypaimon (pure Python, Arrow): :mod:`.sink` writes data files from the executors
(``mapInArrow``) and commits one snapshot on the driver, fenced against overlapping attempts;
:mod:`.source` reads the newest snapshot's splits on the executors. Options: :mod:`.options`; the
private pypaimon API it relies on: :mod:`.compat`. The user's docs: docs/paimon.md.

Warehouses: local directories and HDFS (``hdfs://``, ``viewfs://``: pypaimon's HDFS client, the Hadoop
settings of :mod:`.hadoop`, the commit lock of :mod:`.fences`). Catalogs: ``filesystem`` and ``hive``
(:mod:`.hive`: the file-system layout, registered in a Hive metastore).

What cannot run (a ``not-runnable`` warning at compile time): a warehouse on another file system (object
stores: pypaimon's rename onto an existing snapshot is not atomic there), Kerberos,
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
from .hadoop import DEFAULT_FS, kerberos
from .options import (
    CONF_PATH,
    HADOOP_CONF,
    NAME,
    PARTITION_KEYS,
    PRIMARY_KEYS,
    SPEC,
    SourceOptions,
    Table,
    local_path,
    parse,
)
from .sink import PaimonSinkVerbs

__all__ = ["CONNECTOR", "Paimon"]

#: SeaTunnel's Hadoop options: the settings of an HDFS warehouse (a local one needs none)
HADOOP_KEYS = ("hdfs_site_path", HADOOP_CONF, CONF_PATH)


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


def _storage_problems(table: Table, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """A warehouse that cannot run here, an HDFS one without ``fs.defaultFS`` (SeaTunnel's rule) or with
    Kerberos, and the Hadoop options a local warehouse does not use."""
    problems: list[Problem] = []
    if UNRENDERED.search(table.warehouse):
        return problems
    if not table.is_local() and not table.is_hdfs():
        problems.append(job.cannot_run(f"warehouse '{table.warehouse}': only local and HDFS warehouses can be "
                                       "written and read here (pypaimon's snapshot commit renames onto a name that "
                                       "must not exist, which object stores do not make atomic)", plugin,
                                       key="warehouse", hint="a local path, or hdfs:// (docs/paimon.md)"))
    elif table.is_hdfs():
        if DEFAULT_FS not in table.hadoop and not table.hdfs_site_path and not table.conf_path:
            problems.append(job.problem(f"warehouse '{table.warehouse}' is on HDFS: {HADOOP_CONF} needs "
                                        f"{DEFAULT_FS} (or hdfs_site_path / {CONF_PATH} files that set it)", plugin,
                                        key=HADOOP_CONF,
                                        hint=f'{HADOOP_CONF} = {{ fs.defaultFS = "hdfs://namenode:8020" }}'))
        if kerberos(table.hadoop):
            problems.append(job.cannot_run("Kerberos: the Paimon connector's HDFS client is not tested with it "
                                           "here", plugin, key=HADOOP_CONF, hint="docs/paimon.md, Limits"))
    else:
        problems += [job.problem(f"{key} is not used: the warehouse is a local directory", plugin, key=key,
                                 severity="warning") for key in HADOOP_KEYS if plugin.has(key)]
    if table.catalog_type != "hive" and plugin.has("catalog_uri"):
        problems.append(job.problem("catalog_uri is not used: catalog_type is filesystem", plugin,
                                    key="catalog_uri", severity="warning"))
    return problems


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
        problems += _storage_problems(options.table, plugin, job)
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
