"""RowKindExtractor transform: appends the row kind as a STRING column, then marks every row INSERT.

``custom_field_name`` (default ``row_kind``) names the column; ``transform_type`` ``SHORT``
(default: ``+I``/``-U``/``+U``/``-D``) or ``FULL`` (``INSERT``/``UPDATE_BEFORE``/...) picks
the spelling. A field of that name must not exist already.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..spi import TRANSFORM, Connector, Dataset, InsertOnly, RunContext, SchemaInference, Transform, Vertex
from ..spi.rows import quote
from .common import single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

NAME = "RowKindExtractor"
SPELLINGS = {"SHORT": ("+I", "-U", "+U", "-D"), "FULL": ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")}


def _options(options: Any) -> tuple[str, str | None]:
    """``(field name, transform type)``; the type is None when it is not SHORT or FULL."""
    field = str(options.get("custom_field_name", "row_kind"))
    kind = str(options.get("transform_type", "SHORT")).strip().upper()
    return field, (kind if kind in SPELLINGS else None)


def _exists(field: str) -> str:
    return f"field name {field} already exists"


class RowKindExtractor(Connector, SchemaInference, Transform, InsertOnly):
    name = NAME
    kinds = frozenset({TRANSFORM})
    connect = True
    description = "Adds the row kind as a column."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        field, kind = _options(plugin.options)
        found = []
        if kind is None:
            found.append(job.problem(f"unknown transform_type {plugin.get('transform_type')!r}", plugin,
                                     key="transform_type", hint="use SHORT or FULL"))
        if not field.strip():
            found.append(job.problem("custom_field_name must not be empty", plugin, key="custom_field_name"))
        return found

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        from ..spi.schema import DataType, Field, Schema

        source = inputs[0] if inputs else None
        field, _ = _options(plugin.options)
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

        field, kind = _options(vertex.config)
        if kind is None:
            raise RuntimeConfigError(f"unknown transform_type {vertex.config.get('transform_type')!r}: "
                                     "use SHORT or FULL")
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
