"""RowKindExtractor transform: appends the row kind as a STRING column, then marks every row INSERT.

``custom_field_name`` (default ``row_kind``) names the column; ``transform_type`` ``SHORT``
(default: ``+I``/``-U``/``+U``/``-D``) or ``FULL`` (``INSERT``/``UPDATE_BEFORE``/...) picks
the spelling. A field of that name must not exist already.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..spi import (
    TRANSFORM,
    Capabilities,
    Connector,
    Dataset,
    RunContext,
    SchemaInference,
    Transform,
    Vertex,
)
from ..spi.optionspec import Option, OptionSpec
from ..spi.rows import quote
from .common import single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

NAME = "RowKindExtractor"
SPELLINGS = {"SHORT": ("+I", "-U", "+U", "-D"), "FULL": ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")}


SPEC = OptionSpec((
    Option("custom_field_name", default="row_kind", description="The column the row kind goes to."),
    Option("transform_type", "enum", "SHORT", "How the kind is spelled: SHORT (+I, -U, +U, -D) or FULL "
           "(INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE).", choices=tuple(SPELLINGS)),
))


def _exists(field: str) -> str:
    return f"field name {field} already exists"


class RowKindExtractor(Connector, SchemaInference, Transform):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True, inserts_only=True)
    option_spec = SPEC
    description = "Adds the row kind as a column."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        field = plugin.get("custom_field_name")
        if field is not None and not str(field).strip():
            return [job.problem("custom_field_name must not be empty", plugin, key="custom_field_name")]
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        from ..spi.schema import DataType, Field, Schema

        source = inputs[0] if inputs else None
        field = str(plugin.get("custom_field_name", "row_kind"))
        if source is None:
            return None, []
        if field in source.names:
            return None, [job.problem(_exists(field), plugin, key="custom_field_name",
                                      hint="choose another custom_field_name")]
        return Schema((*source.fields, Field(field, DataType("string")))), []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        from ..spi.errors import RuntimeConfigError
        from ..spi.rows import ROW_KIND, data_columns, kind_literal

        o = SPEC.run_time(vertex.config)
        field, kind = o["custom_field_name"], o["transform_type"]
        names = F.array(*[F.lit(s) for s in SPELLINGS[kind]])
        out = {}
        for table, df in single_input(inputs).items():
            if field in data_columns(df):
                raise RuntimeConfigError(_exists(field))
            code = F.coalesce(F.col(ROW_KIND), F.lit(0)) if ROW_KIND in df.columns else F.lit(0)
            label = F.element_at(names, code.cast("int") + 1)
            out[table] = df.select(*[F.col(quote(c)) for c in data_columns(df)], label.alias(field),
                                   kind_literal(0).alias(ROW_KIND))
        return out


CONNECTOR = RowKindExtractor()
