"""Rocketmq at compile time (no Spark, no broker): the block's problems, located at their keys, and the
schema a source gives (its ``schema``); a sink has none."""

from __future__ import annotations

from collections.abc import Sequence

from ...spi import SINK
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .options import CONN_OPTION, SPEC, OptionError, SourceOptions, parse


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Beyond the option spec: the first rule SeaTunnel would refuse, or this package cannot run, that a
    declaration cannot say (an error at its key)."""
    if SPEC.valid(plugin.options, plugin.section) is None:
        return []
    try:
        parse(plugin.options, plugin.section, need_endpoint=False)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    conn = plugin.get(CONN_OPTION)
    if conn is not None and not str(conn).strip():
        return [job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION)]
    return []


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows are its ``schema``'s fields; problems are :func:`check`'s (not repeated here)."""
    if plugin.section == SINK:
        return None, []
    try:
        parsed = parse(plugin.options, plugin.section, need_endpoint=False)
    except OptionError:
        return None, []
    return (parsed.schema if isinstance(parsed, SourceOptions) else None), []
