"""Copy transform: copies fields into other columns.

``fields`` maps destination = source (``id_1 = "id"``); the deprecated pair
``src_field`` + ``dest_field`` copies one field and is read only when ``fields`` is not
set. A destination that is an existing column is overwritten in place, otherwise it is
appended, in config order; it takes the source column's type. Without either option the
rows pass unchanged, as in SeaTunnel. Rows keep their row kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..spi import TRANSFORM, Capabilities, Connector, Dataset, RunContext, SchemaInference, Transform, Vertex
from ..spi.options import JobConfig, PluginConfig, Problem
from ..spi.optionspec import Option, OptionSpec, ParsedOptions
from ..spi.rows import data_columns, quote
from ..spi.schema import Field, Schema
from .common import field_problems, kind_columns, require_columns, single_input

NAME = "Copy"

SPEC = OptionSpec((
    Option("fields", "map", description="destination = source: the fields copied, in order (replaces src_field and "
           "dest_field)."),
    Option("src_field", description="Deprecated: the one field copied (read without fields)."),
    Option("dest_field", description="Deprecated: the column src_field is copied to."),
))


def _copies(o: ParsedOptions) -> list[tuple[str, str]]:
    """``[(dest, src)]`` in config order; none if neither form is set."""
    if o["fields"] is not None:
        return [(str(dest), str(src)) for dest, src in o["fields"].items()]
    if o["src_field"] is None or o["dest_field"] is None:
        return []
    return [(o["dest_field"], o["src_field"])]


def _check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    o = SPEC.valid(plugin.options)
    if o is None:
        return []  # the spec reports why
    if o.given("fields"):
        if not o["fields"]:
            return [job.problem("fields is empty", plugin, key="fields", hint="copy at least one field")]
        return []
    has_src, has_dest = o.given("src_field"), o.given("dest_field")
    if has_src == has_dest:
        return []  # both, or neither (SeaTunnel accepts a Copy that copies nothing)
    missing = "dest_field" if has_src else "src_field"
    return [job.problem(f"src_field and dest_field go together: {missing} is not set", plugin,
                        key="src_field" if has_src else "dest_field",
                        hint="or use fields { dest = src }, which replaces them")]


class Copy(Connector, Transform, SchemaInference):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Copies fields into new columns."

    check = staticmethod(_check)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        source, o = inputs[0] if inputs else None, SPEC.valid(plugin.options)
        if source is None or o is None:
            return source, []
        copies = _copies(o)
        key = "fields" if o.given("fields") else "src_field"
        problems = field_problems(plugin, job, NAME, [src for _, src in copies], source, key)
        if problems:
            return None, problems
        by_name = {f.name: f for f in source.fields}
        out = source
        for dest, src in copies:
            out = out.with_field(Field(dest, by_name[src].type))
        return out, []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        copies = _copies(SPEC.run_time(vertex.config))
        out = {}
        for table, df in single_input(inputs).items():
            require_columns(df, NAME, [src for _, src in copies])
            columns: dict[str, Any] = {c: F.col(quote(c)) for c in data_columns(df)}
            for dest, src in copies:
                columns[dest] = F.col(quote(src))  # an existing key keeps its place: overwritten in place
            out[table] = df.select(*[col.alias(name) for name, col in columns.items()], *kind_columns(df))
        return out


CONNECTOR = Copy()
