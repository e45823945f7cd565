"""Redis at compile time (no Spark, no server): the block's problems, located at their keys, and
the schema a source gives (``schema`` with ``format = json``, else the one field ``content``)."""

from __future__ import annotations

from collections.abc import Sequence

from ...spi import SINK
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .options import CONN_OPTION, LATER_SINK_OPTIONS, SPEC, OptionError, RedisOptions, parse


def _parsed(plugin: PluginConfig) -> RedisOptions:
    return parse(plugin.options, plugin.section, need_endpoint=False)


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Beyond what the option spec reports: the first rule SeaTunnel would refuse that a declaration
    cannot say (an error at its key), then what this package cannot do (``mode = cluster``: plans,
    fails validate) and options that change nothing (warnings)."""
    if SPEC.valid(plugin.options, plugin.section) is None:
        return []
    try:
        options = _parsed(plugin)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    problems: list[Problem] = []
    if options.mode == "cluster":
        problems.append(job.cannot_run("mode cluster is not supported by this package", plugin, key="mode",
                                       hint="the exactly-once commit publishes with one Lua script on one server: "
                                            "use mode = single"))
    for key in LATER_SINK_OPTIONS if plugin.section == SINK else ():
        if plugin.has(key):
            problems.append(job.cannot_run(f"{key} (a later SeaTunnel version's option) is not supported by this "
                                           "package", plugin, key=key,
                                           hint="name the key's field with key, and write whole rows"))
    conn = plugin.get(CONN_OPTION)
    if conn is not None and not str(conn).strip():
        problems.append(job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION))
    if plugin.section != SINK and options.format == "text" and plugin.has("schema"):
        problems.append(job.problem("schema is ignored: without format json each value is read as the one text "
                                    "field 'content'", plugin, key="schema", severity="warning",
                                    hint="set format = json to parse the values with the schema"))
    if plugin.section == SINK and options.data_type == "hash" and plugin.has("format"):
        problems.append(job.problem("format is ignored with data_type hash: each field becomes a hash field",
                                    plugin, key="format", severity="warning"))
    return problems


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows: its ``schema`` (``format = json``) or ``content string``; a sink has none.
    Problems are :func:`check`'s (not repeated here)."""
    if plugin.section == SINK:
        return None, []
    try:
        return _parsed(plugin).output_schema(), []
    except OptionError:
        return None, []
