"""Hbase at compile time (no Spark, no server): the block's problems, located at their keys, and the schema a
source gives (its ``schema``). A sink whose input schema is known is checked against it: the
``rowkey_column`` and ``version_column`` fields exist, ``version_column`` is a bigint and every written field
has a type SeaTunnel's sink can write."""

from __future__ import annotations

from collections.abc import Sequence

from ...spi import SINK
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .options import SINK_TYPES, SPEC, OptionError, parse


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Beyond what the option spec reports: the first rule SeaTunnel would refuse that a declaration cannot
    say (an error at its key)."""
    if SPEC.valid(plugin.options, plugin.section) is None:
        return []
    try:
        parse(plugin.options, plugin.section)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    return []


def _sink_problems(plugin: PluginConfig, job: JobConfig, source: Schema) -> list[Problem]:
    options = parse(plugin.options, plugin.section)
    names = source.names
    problems = [job.problem(f"rowkey_column field {name!r} is not in the input (fields: {', '.join(names)})",
                            plugin, key="rowkey_column") for name in options.rowkey_columns if name not in names]
    version = options.version_column
    if version is not None:
        found = source.get(version)
        if found is None:
            problems.append(job.problem(f"version_column field {version!r} is not in the input", plugin,
                                        key="version_column"))
        elif found.type.name != "bigint":
            problems.append(job.problem(f"version_column field {version!r} is {found.type}, not bigint (SeaTunnel "
                                        "reads it as a Long)", plugin, key="version_column",
                                        hint="cast it to bigint in a transform"))
    skip = {*options.rowkey_columns, version}
    for f in source.fields:
        if f.name not in skip and f.type.name not in SINK_TYPES:
            problems.append(job.problem(f"field {f.name!r}: Hbase connector does not support this column type "
                                        f"[{f.type}]", plugin, key="family_name",
                                        hint="cast it to string in a transform (" + ", ".join(SINK_TYPES) +
                                             " are written)"))
    return problems


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows: its ``schema``; a sink has none, and is checked against its input's fields."""
    try:
        if plugin.section == SINK:
            if inputs and inputs[0] is not None and SPEC.valid(plugin.options, plugin.section) is not None:
                return None, _sink_problems(plugin, job, inputs[0])
            return None, []
        return parse(plugin.options, plugin.section).schema, []
    except OptionError:
        return None, []
