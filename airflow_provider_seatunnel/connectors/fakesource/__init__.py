"""FakeSource: generated rows (random, ranged, templated or explicit ``rows``).

Each table comes in exactly ``vertex.parallelism`` partitions, one per SeaTunnel reader, and
``row.num`` is per reader (a source at parallelism 3 with ``row.num = 5`` makes 15 rows). Every
column is a native Spark expression computed on the executors.

* :mod:`.values`: option values read as typed values;
* :mod:`.options`: the options of a block, one table or ``tables_configs`` (compile time and run time);
* :mod:`.generate`: random values and explicit rows as Spark expressions;
* :mod:`.batch`: a BATCH read; :mod:`.streaming`: a STREAMING read (splits as a file stream).
"""

from __future__ import annotations

from collections.abc import Mapping

from ...spi import (
    SOURCE,
    BatchSource,
    Capabilities,
    ChangeEmitter,
    Connector,
    Dataset,
    RunContext,
    SchemaInference,
    SourceTables,
    StreamingSource,
    Vertex,
)
from ...spi.errors import RuntimeConfigError
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import TableKeys
from .batch import batch_table
from .options import SPEC, Table, option_problems, output_schema, read_tables, table_keys
from .streaming import stream_table
from .values import BadValue, text_of

__all__ = ["CONNECTOR", "FakeSource"]


class FakeSource(Connector, SchemaInference, SourceTables, BatchSource, StreamingSource, ChangeEmitter):
    name = "FakeSource"
    capabilities = Capabilities(sections=frozenset({SOURCE}), connect=True)
    option_spec = SPEC  # identity: schema.table
    description = "Generates rows from a schema: random, ranged, templated or explicit."

    check = staticmethod(option_problems)

    def problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The keys :data:`.options.SPEC` does not declare (a warning), then :meth:`check`: the reader words
        every problem of the values, per ``tables_configs`` item (the spec's own would repeat them)."""
        unknown = [p for p in SPEC.problems(plugin, job) if p.code == "unknown-option"]
        return unknown + self.check(plugin, job)

    schema = staticmethod(output_schema)

    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        """Its tables (one per ``tables_configs`` item), each with the keys its ``schema`` declares."""
        return table_keys(plugin.options, plugin.get("plugin_output") or plugin.get("result_table_name"))

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        """One DataFrame per table: random rows, or the explicit ``rows``, in ``vertex.parallelism`` partitions."""
        parallelism = _parallelism(vertex)
        try:
            return {t.key: batch_table(ctx.spark, t, parallelism) for t in _tables(vertex)}
        except BadValue as e:  # a value valid at compile time but not now (cannot happen with a checked plan)
            raise RuntimeConfigError(str(e)) from None

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        """One streaming DataFrame per table, each micro-batch in ``vertex.parallelism`` partitions."""
        parallelism = _parallelism(vertex)
        try:
            return {t.key: stream_table(ctx, vertex, number, t, parallelism)
                    for number, t in enumerate(_tables(vertex))}
        except BadValue as e:
            raise RuntimeConfigError(str(e)) from None

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """Whether an explicit ``rows`` item has a kind other than INSERT (random rows are INSERTs)."""
        tables, _ = read_tables(vertex.config, vertex.output)
        return any(text_of(item.get("kind")) != "INSERT" for t in tables for item in (t.rows or ())
                   if isinstance(item, Mapping))


def _tables(vertex: Vertex) -> list[Table]:
    """The tables of the block; a RuntimeConfigError naming every wrong option."""
    tables, found = read_tables(vertex.config, vertex.output)
    issues = [i for i in found if not i.warning]
    if issues:
        raise RuntimeConfigError("; ".join(f"option '{i.key}': {i.message}" for i in issues))
    return tables


def _parallelism(vertex: Vertex) -> int:
    """The readers: the plan's parallelism of the vertex (the engine's one figure, never the raw option)."""
    return max(1, int(vertex.parallelism or 1))


CONNECTOR = FakeSource()
