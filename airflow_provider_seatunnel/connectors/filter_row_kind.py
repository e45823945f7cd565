"""FilterRowKind transform: keeps (``include_kinds``) or drops (``exclude_kinds``) rows by row kind.

Kinds are INSERT, UPDATE_BEFORE, UPDATE_AFTER and DELETE, case-insensitive. Exactly one of
the two lists must be set, and not empty. The schema is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
from ..spi.optionspec import Option, OptionSpec
from .common import single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

NAME = "FilterRowKind"
KINDS = ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")  # = runtime.rows.ROW_KINDS, by code


LISTS = ("include_kinds", "exclude_kinds")

SPEC = OptionSpec((
    Option("include_kinds", "list", description="The row kinds kept (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE; "
           "any case). Set exactly one of include_kinds and exclude_kinds."),
    Option("exclude_kinds", "list", description="The row kinds dropped (as include_kinds)."),
))


def _kinds(options: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """``(key, names)`` of the first list set (:data:`SPEC`'s typed value); None if neither is set."""
    o = SPEC.parse(options)
    key = next((k for k in LISTS if o.given(k)), None)
    return None if key is None else (key, [str(x).strip() for x in o[key]])


class FilterRowKind(Connector, SchemaInference, Transform):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Keeps or drops rows by row kind."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        found = exactly_one_of(plugin, job, ("include_kinds",), ("exclude_kinds",))
        if found:
            return [job.problem(f"These options(include_kinds,exclude_kinds) are mutually exclusive: {p.message}",
                                plugin, key=p.key, hint=p.hint) for p in found]
        if SPEC.valid(plugin.options) is None:
            return []  # a wrong type: the spec's problem
        key, names = _kinds(plugin.options) or ("include_kinds", [])
        if not names:
            return [job.problem(f"{key} is empty", plugin, key=key, hint="list kinds: " + ", ".join(KINDS))]
        bad = [n for n in names if n.upper() not in KINDS]
        if bad:
            return [job.problem(f"unknown row kind {', '.join(repr(b) for b in bad)}", plugin, key=key,
                                hint="row kinds are " + ", ".join(KINDS))]
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return (inputs[0] if inputs else None), []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        from ..spi.errors import RuntimeConfigError
        from ..spi.options import OptionError
        from ..spi.rows import ROW_KIND, kind_code

        try:
            chosen = _kinds(vertex.config)
        except OptionError as e:
            raise e.at_run_time() from None
        if chosen is None or not chosen[1]:
            raise RuntimeConfigError("set include_kinds or exclude_kinds (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)")
        key, names = chosen
        try:
            codes = sorted({kind_code(n) for n in names})
        except ValueError as e:
            raise RuntimeConfigError(f"{key}: {e}") from None
        out = {}
        for table, df in single_input(inputs).items():
            kind = F.coalesce(F.col(ROW_KIND), F.lit(0)) if ROW_KIND in df.columns else F.lit(0)
            hit = kind.isin(codes)
            out[table] = df.where(hit if key == "include_kinds" else ~hit)
        return out


CONNECTOR = FilterRowKind()
