"""Split transform: splits a field's text into several STRING fields.

``separator`` is a Java regex; the value (converted with toString) is split with limit =
the number of ``output_fields``, as Java's ``String.split(regex, limit)`` does (Spark's
``split(str, regex, limit)`` is that very call), so the last output keeps the remainder.
Missing parts are null, a null value makes every output null, and ``split_field`` is
kept. An output named like an existing field overwrites it in place; the others are
appended in order. Rows keep their row kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..spi import TRANSFORM, Capabilities, Connector, Dataset, RunContext, SchemaInference, Transform, Vertex
from ..spi.optionspec import Option, OptionSpec
from ..spi.rows import quote
from .common import check_regex, field_problems, kind_columns, require_columns, single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

NAME = "Split"


SPEC = OptionSpec((
    Option("separator", required=True, description="A Java regex the field is split at."),
    Option("split_field", required=True, description="The field to split (its text)."),
    Option("output_fields", "list", required=True, description="The fields the parts go to, in order; a part "
           "beyond the last is dropped, a missing part is null."),
))


def _options(options: Any) -> tuple[str | None, str | None, list[str]]:
    o = SPEC.valid(options)
    if o is None:
        return None, None, []
    return o["separator"], o["split_field"], [str(x) for x in o["output_fields"] or ()]


class Split(Connector, SchemaInference, Transform):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Splits a string field into several."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        separator, _, outputs = _options(plugin.options)
        if separator is None:
            return []  # the spec reports why
        found = []
        if not outputs:
            found.append(job.problem("output_fields is empty", plugin, key="output_fields",
                                     hint="list the fields the parts go to"))
        if len(set(outputs)) != len(outputs):
            found.append(job.problem("output_fields names a field twice", plugin, key="output_fields"))
        return found

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        from ..spi.schema import DataType, Field

        source = inputs[0] if inputs else None
        _, field, outputs = _options(plugin.options)
        if source is None or field is None or not outputs:
            return None, []
        problems = field_problems(plugin, job, NAME, [field], source, "split_field")
        if problems:
            return None, problems
        out = source
        for name in outputs:
            out = out.with_field(Field(name, DataType("string")))
        return out, []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType

        from ..spi.errors import RuntimeConfigError
        from ..spi.rows import data_columns

        o = SPEC.run_time(vertex.config)
        sep, field, outputs = o["separator"], o["split_field"], [str(x) for x in o["output_fields"]]
        if not outputs:
            raise RuntimeConfigError("output_fields is empty")
        check_regex(ctx, sep, "the separator")
        out = {}
        for table, df in single_input(inputs).items():
            require_columns(df, NAME, [field])
            value = F.col(quote(field))
            if not isinstance(df.schema[field].dataType, StringType):
                value = value.cast("string")
            parts = F.split(value, sep, len(outputs))
            columns: dict[str, Any] = {c: F.col(quote(c)) for c in data_columns(df)}
            for i, name in enumerate(outputs):
                columns[name] = F.try_element_at(parts, F.lit(i + 1))
            out[table] = df.select(*[col.alias(name) for name, col in columns.items()], *kind_columns(df))
        return out


CONNECTOR = Split()
