"""FieldMapper transform: keeps only the mapped fields, in config order, renamed.

``field_mapper`` maps input field names to output names (``id = id``, ``age = age_as``);
types are kept. Every input name must exist. Rows keep their row kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..spi import TRANSFORM, Capabilities, Connector, Dataset, RunContext, SchemaInference, Transform, Vertex
from ..spi.optionspec import Option, OptionSpec, ParsedOptions
from ..spi.rows import quote
from .common import field_problems, kind_columns, require_columns, single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

NAME = "FieldMapper"


SPEC = OptionSpec((
    Option("field_mapper", "map", required=True, description="input field = output field: the fields kept, in "
           "order, renamed."),
))


def _mapping(o: ParsedOptions | None) -> dict[str, str]:
    """The ``field_mapper`` map (input -> output); empty when the block is invalid."""
    return {} if o is None else {str(k): str(v) for k, v in o["field_mapper"].items()}


class FieldMapper(Connector, SchemaInference, Transform):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Keeps and renames the mapped fields."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        o = SPEC.valid(plugin.options)
        if o is None:
            return []  # the spec reports why: missing, or not a map
        mapping = _mapping(o)
        if not mapping:
            return [job.problem("field_mapper is empty", plugin, key="field_mapper", hint="map at least one field")]
        seen: dict[str, str] = {}
        for src, dst in mapping.items():
            if dst in seen:
                return [job.problem(f"the output field '{dst}' is mapped from both '{seen[dst]}' and '{src}'", plugin,
                                    key="field_mapper", hint="give every output field its own name")]
            seen[dst] = src
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        from ..spi.schema import Field, Schema

        source = inputs[0] if inputs else None
        mapping = _mapping(SPEC.valid(plugin.options))
        if source is None or not mapping:
            return None, []
        problems = field_problems(plugin, job, NAME, list(mapping), source, "field_mapper")
        if problems:
            return None, problems
        by_name = {f.name: f for f in source.fields}
        return Schema(tuple(Field(dst, by_name[src].type) for src, dst in mapping.items())), []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        from ..spi.errors import RuntimeConfigError

        mapping = _mapping(SPEC.run_time(vertex.config))
        if not mapping:
            raise RuntimeConfigError("field_mapper must be a non-empty map of input field = output field")
        out = {}
        for table, df in single_input(inputs).items():
            require_columns(df, NAME, list(mapping))
            out[table] = df.select(*[F.col(quote(src)).alias(dst) for src, dst in mapping.items()], *kind_columns(df))
        return out


CONNECTOR = FieldMapper()
