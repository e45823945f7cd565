"""Elasticsearch and Easysearch at compile time (no Spark, no server): the block's problems, located at
their keys, and the schema a source gives (its ``schema``; with ``source`` only, the index's mapping
decides the types when the task runs: unknown here)."""

from __future__ import annotations

from ...spi import SINK
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.optionspec import OptionSpec
from ...spi.schema import Schema
from .options import SearchOptions, parse


def parsed(plugin: PluginConfig, spec: OptionSpec, conn_option: str) -> SearchOptions:
    return parse(plugin.options, plugin.section, spec, conn_option, need_endpoint=False)


def check(plugin: PluginConfig, job: JobConfig, spec: OptionSpec, conn_option: str) -> list[Problem]:
    """Beyond the spec: SeaTunnel's rules a declaration cannot say (errors at their keys), what this package
    cannot run (plans, fails validate) and options that change nothing (warnings)."""
    if spec.valid(plugin.options, plugin.section) is None:
        return []
    try:
        options = parsed(plugin, spec, conn_option)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    problems: list[Problem] = []
    conn = plugin.get(conn_option)
    if conn is not None and not str(conn).strip():
        problems.append(job.problem(f"{conn_option} must name an Airflow connection", plugin, key=conn_option))
    if plugin.has("tls_keystore_path"):
        problems.append(job.cannot_run("a client key store (tls_keystore_path) is not supported by this package",
                                       plugin, key="tls_keystore_path",
                                       hint="authenticate with username and password over https"))
    if plugin.section == SINK:
        row = options.row_placeholders()
        if row:
            problems.append(job.cannot_run(f"an index named by a field of each row (${{{row[0]}}}) is not "
                                           "supported by this package", plugin, key="index",
                                           hint="write one index per table (${table_name}) or a fixed index"))
        if plugin.has("index_type"):
            problems.append(job.problem("index_type is ignored: Elasticsearch 7 and later have no mapping types",
                                        plugin, key="index_type", severity="warning"))
    elif plugin.has("index") and plugin.has("index_list"):
        problems.append(job.problem("index is ignored when index_list is set (as SeaTunnel)", plugin, key="index",
                                    severity="warning"))
    return problems


def schema(plugin: PluginConfig, spec: OptionSpec, conn_option: str) -> Schema | None:
    """A single-index source's rows when its ``schema`` gives them; None otherwise (the mapping decides)."""
    if plugin.section == SINK:
        return None
    try:
        options = parsed(plugin, spec, conn_option)
    except OptionError:
        return None
    if len(options.tables) != 1:
        return None
    return options.tables[0].schema


__all__ = ["check", "parsed", "schema"]
