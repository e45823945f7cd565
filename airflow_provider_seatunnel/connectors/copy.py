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
from ..spi.errors import RuntimeConfigError
from ..spi.options import JobConfig, PluginConfig, Problem
from ..spi.rows import data_columns, quote
from ..spi.schema import Field, Schema
from .common import field_problems, kind_columns, require_columns, single_input

NAME = "Copy"


def _copies(options: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """``[(dest, src)]`` in config order; None if neither form is set (or ``fields`` is no map)."""
    fields = options.get("fields")
    if fields is not None:
        if not isinstance(fields, Mapping):
            return None
        return [(str(dest), str(src)) for dest, src in fields.items()]
    src, dest = options.get("src_field"), options.get("dest_field")
    if src is None or dest is None:
        return None
    return [(str(dest), str(src))]


def _key(options: Mapping[str, Any]) -> str:
    return "fields" if "fields" in options else "src_field"


def _check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    if plugin.has("fields"):
        copies = _copies(plugin.options)
        if copies is None:
            return [job.problem("fields must be a map of destination = source", plugin, key="fields",
                                hint='write fields { name_copy = "name" }')]
        if not copies:
            return [job.problem("fields is empty", plugin, key="fields", hint="copy at least one field")]
        return []
    has_src, has_dest = plugin.has("src_field"), plugin.has("dest_field")
    if has_src == has_dest:
        return []  # both, or neither (SeaTunnel accepts a Copy that copies nothing)
    missing = "dest_field" if has_src else "src_field"
    return [job.problem(f"src_field and dest_field go together: {missing} is not set", plugin,
                        key="src_field" if has_src else "dest_field",
                        hint="or use fields { dest = src }, which replaces them")]


class Copy(Connector, Transform, SchemaInference):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    description = "Copies fields into new columns."

    check = staticmethod(_check)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        source = inputs[0] if inputs else None
        copies = _copies(plugin.options)
        if source is None or copies is None:
            return source, []
        problems = field_problems(plugin, job, NAME, [src for _, src in copies], source, _key(plugin.options))
        if problems:
            return None, problems
        by_name = {f.name: f for f in source.fields}
        out = source
        for dest, src in copies:
            out = out.with_field(Field(dest, by_name[src].type))
        return out, []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        copies = _copies(vertex.config) or []
        if vertex.config.get("fields") is not None and not isinstance(vertex.config.get("fields"), Mapping):
            raise RuntimeConfigError("fields must be a map of destination = source")
        out = {}
        for table, df in single_input(inputs).items():
            require_columns(df, NAME, [src for _, src in copies])
            columns: dict[str, Any] = {c: F.col(quote(c)) for c in data_columns(df)}
            for dest, src in copies:
                columns[dest] = F.col(quote(src))  # an existing key keeps its place: overwritten in place
            out[table] = df.select(*[col.alias(name) for name, col in columns.items()], *kind_columns(df))
        return out


CONNECTOR = Copy()
