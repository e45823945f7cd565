"""Filter transform: keeps (``include_fields``, fallback key ``fields``) or drops (``exclude_fields``) fields.

Include lists the output in the listed order; exclude keeps the input order minus the
listed fields. Every listed field must exist (SeaTunnel's TRANSFORM_COMMON-02). Rows keep
their row kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..spi import (
    TRANSFORM,
    Capabilities,
    Connector,
    Dataset,
    RunContext,
    SchemaInference,
    Transform,
    Vertex,
    exactly_one_of,
)
from ..spi.errors import RuntimeConfigError
from ..spi.options import MISSING, JobConfig, PluginConfig, Problem, as_list, lookup
from ..spi.rows import data_columns, quote
from ..spi.schema import Schema
from .common import field_problems, kind_columns, require_columns, single_input

NAME = "Filter"


def _options(options: Any) -> tuple[list[str] | None, list[str] | None]:
    """``(include, exclude)`` field lists; the one not set is None."""
    include = lookup(options, "include_fields")
    if include is MISSING:
        include = lookup(options, "fields")
    exclude = lookup(options, "exclude_fields")
    return ([str(x) for x in as_list(include)] if include is not MISSING else None,
            [str(x) for x in as_list(exclude)] if exclude is not MISSING else None)


def _key(options: Any) -> str:
    include, _ = _options(options)
    if include is None:
        return "exclude_fields"
    return "include_fields" if "include_fields" in options else "fields"


def _schema(plugin: PluginConfig, job: JobConfig,
            inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    source = inputs[0] if inputs else None
    include, exclude = _options(plugin.options)
    if source is None or (include is None) == (exclude is None):
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
    description = "Keeps (include_fields) or drops (exclude_fields) fields."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        found = exactly_one_of(plugin, job, ("include_fields", "fields"), ("exclude_fields",))
        if not found:
            include, exclude = _options(plugin.options)
            if not (include if include is not None else exclude):
                found.append(job.problem("the field list is empty", plugin, key=_key(plugin.options),
                                         hint="list at least one field"))
        return found

    schema = staticmethod(_schema)

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        return _apply(vertex, inputs)


def _apply(vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
    from pyspark.sql import functions as F

    include, exclude = _options(vertex.config)
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
