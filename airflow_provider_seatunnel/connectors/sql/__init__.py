"""Sql transform: a Spark SQL query over the transform's input(s), with SeaTunnel's SQL functions.

Compile time (no Spark, safe at DAG-parse time): the query is parsed with sqlglot to report
syntax errors, to list the tables it reads, and to decide whether a multi-input Sql can be split
per input (:mod:`.analysis`); when every input schema is known, the columns the query references
are checked and the output schema is inferred where its types are certain (:mod:`.schema`); in a
STREAMING job, what a stream cannot run and a stateful query without a watermark are errors
(:mod:`.streaming`); the columns each output field comes from are read from the query
(:mod:`.lineage`, for OpenLineage's column lineage).

Run time: the inputs become temporary views and ``spark.sql`` runs the query rewritten to read
them, carrying row kinds where rows pass one by one (:mod:`.apply`), with SeaTunnel's functions
rewritten to native Spark expressions (:mod:`.functions`).

The modules that import sqlglot or PySpark at their top (:mod:`.apply`, :mod:`.functions`) are
imported when a query is rewritten or run, not with this package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...spi import (
    TRANSFORM,
    Capabilities,
    ColumnFlow,
    ColumnLineage,
    Connector,
    Dataset,
    PerInput,
    PerInputSplit,
    ReadsTablesByName,
    RunContext,
    SchemaInference,
    Transform,
    Vertex,
)
from .analysis import COMBINING, ROW_WISE, UNION, SqlAnalysis, SqlSyntaxError, analyze_query
from .options import SPEC, query_of
from .portability import at_query_line, findings, problems
from .schema import output_schema
from .streaming import (
    STATEFUL,
    UNSUPPORTED,
    WATERMARK_KEY,
    Watermark,
    check_streaming,
    read_watermarks,
    streaming_problem,
)

if TYPE_CHECKING:
    from ...spi.options import JobConfig, PluginConfig, Problem

__all__ = [
    "COMBINING", "CONNECTOR", "NAME", "ROW_WISE", "STATEFUL", "UNION", "UNSUPPORTED", "WATERMARK_KEY", "Sql",
    "SqlAnalysis", "SqlSyntaxError", "Watermark", "analyze_query", "read_watermarks", "streaming_problem",
]

NAME = "Sql"


class Sql(Connector, SchemaInference, Transform, ReadsTablesByName, PerInputSplit, ColumnLineage):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Runs a Spark SQL query over its input(s)."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The query is one non-empty SELECT (a syntax error is placed on its line of the config),
        then the STREAMING checks."""
        o = SPEC.valid(plugin.options)
        if o is None:
            return []  # the spec reports why
        query = o["query"]
        if not query.strip():
            return [job.problem("the query must be a non-empty SQL string", plugin, key="query")]
        try:
            analyze_query(query)
        except SqlSyntaxError as e:
            return [at_query_line(job.problem(f"SQL syntax error: {e}", plugin, key="query",
                                              hint="the query is Spark SQL; fix it and run validate again"),
                                  e.line, e.col)]
        return [*problems(plugin, job, findings(query)), *check_streaming(plugin, job, query)]

    schema = staticmethod(output_schema)

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from .apply import apply  # sqlglot and PySpark: run time only

        return apply(ctx, vertex, inputs)

    def column_lineage(self, options: Mapping[str, Any],
                       inputs: Mapping[str, Sequence[str] | None]) -> ColumnFlow | None:
        """The input columns of each output field, and those that decide the rows (:mod:`.lineage`)."""
        from .lineage import column_lineage

        query = query_of(options)
        return column_lineage(query, inputs) if query is not None else None

    def input_tables(self, plugin: PluginConfig) -> tuple[str, ...] | None:
        query = query_of(plugin.options)
        if query is None:
            return None
        try:
            return analyze_query(query).tables
        except SqlSyntaxError:  # reported by check()
            return None

    def per_input(self, plugin: PluginConfig, inputs: tuple[str, ...]) -> PerInput:
        """A query that joins or aggregates across its inputs cannot run per input; a UNION (not ALL)
        then deduplicates within each pipeline only."""
        query = query_of(plugin.options)
        if query is None:
            return PerInput()
        try:
            analysis = analyze_query(query, inputs)
        except SqlSyntaxError:
            return PerInput()
        if analysis.mode == COMBINING:
            return PerInput(blocker=analysis.reason)
        if analysis.mode == UNION and analysis.union_distinct:
            return PerInput(warning="UNION removes duplicates within each pipeline only, since the job splits "
                                    "per input", warning_key="query",
                            hint="write UNION ALL, or deduplicate in the sink (primary_keys)")
        return PerInput()


CONNECTOR = Sql()
