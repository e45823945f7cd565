"""Filter transform: keeps (``include_fields``, fallback key ``fields``) or drops (``exclude_fields``) fields.

Include lists the output in the listed order; exclude keeps the input order minus the
listed fields. Every listed field must exist (SeaTunnel's TRANSFORM_COMMON-02). Rows keep
their row kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..spi import TRANSFORM, Capabilities, Connector, Dataset, RunContext, SchemaInference, Transform, Vertex
from ..spi.errors import RuntimeConfigError
from ..spi.options import MISSING, JobConfig, PluginConfig, Problem
from ..spi.optionspec import Option, OptionSpec, ParsedOptions
from ..spi.rows import data_columns, quote
from ..spi.schema import Schema
from .common import field_problems, kind_columns, require_columns, single_input

NAME = "Filter"


SPEC = OptionSpec((
    Option("include_fields", "list", fallback=("fields",), description="The fields kept, in this order."),
    Option("exclude_fields", "list", description="The fields dropped (the rest keep the input's order)."),
), exactly_one=(("include_fields", "exclude_fields"),))


def _options(o: ParsedOptions) -> tuple[list[str] | None, list[str] | None]:
    """``(include, exclude)`` field lists; the one not set is None."""
    include, exclude = o["include_fields"], o["exclude_fields"]
    return ([str(x) for x in include] if include is not None else None,
            [str(x) for x in exclude] if exclude is not None else None)


def _key(options: Any) -> str:
    """The key the field list is written under (``include_fields``, its older name ``fields``, or
    ``exclude_fields``)."""
    key, value = SPEC.get("include_fields").raw(options)
    return "exclude_fields" if value is MISSING else key


def _schema(plugin: PluginConfig, job: JobConfig,
            inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    source, o = inputs[0] if inputs else None, SPEC.valid(plugin.options)
    if source is None or o is None:
        return None, []
    include, exclude = _options(o)
    if (include is None) == (exclude is None):
        return None, []
    listed = include if include is not None else exclude or []
    problems = field_problems(plugin, job, NAME, listed, source, _key(plugin.options))
    if problems:
        return None, problems
    by_name = {f.name: f for f in source.fields}
    if include is not None:
        return Schema(tuple(by_name[n] for n in dict.fromkeys(include))), []
    dropped = set(listed)
    return Schema(tuple(f for f in source.fields if f.name not in dropped)), []


class Filter(Connector, Transform, SchemaInference):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Keeps (include_fields) or drops (exclude_fields) fields."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        o = SPEC.valid(plugin.options)
        if o is None:
            return []  # the spec reports why (a list that is none, or not exactly one of the two)
        include, exclude = _options(o)
        if not (include if include is not None else exclude):
            return [job.problem("the field list is empty", plugin, key=_key(plugin.options),
                                hint="list at least one field")]
        return []

    schema = staticmethod(_schema)

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        """Each table with the listed fields kept (or dropped), the row kind columns kept."""
        from pyspark.sql import functions as F

        include, exclude = _options(SPEC.run_time(vertex.config))
        if (include is None) == (exclude is None):
            raise RuntimeConfigError("exactly one of include_fields (or fields) and exclude_fields must be set")
        listed = include if include is not None else exclude or []
        out = {}
        for table, df in single_input(inputs).items():
            require_columns(df, NAME, listed)
            if include is not None:
                keep = list(dict.fromkeys(include))
            else:
                dropped = set(listed)
                keep = [c for c in data_columns(df) if c not in dropped]
            out[table] = df.select(*[F.col(quote(c)) for c in keep], *kind_columns(df))
        return out


CONNECTOR = Filter()
