"""RabbitMQ at compile time (no Spark, no broker): the block's problems, located at their keys, and the
schema a source gives (its ``schema``); a sink has none."""

from __future__ import annotations

from collections.abc import Sequence

from ...spi import SINK, SOURCE
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.portability import not_portable
from ...spi.schema import Schema
from .options import CONN_OPTION, SPEC, OptionError, RabbitOptions, parse


def _parsed(plugin: PluginConfig) -> RabbitOptions:
    return parse(plugin.options, plugin.section, need_endpoint=False)


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Beyond the option spec: the first rule SeaTunnel would refuse that a declaration cannot say (an error
    at its key); a source in a BATCH job, which SeaTunnel refuses (not portable: a warning)."""
    if SPEC.valid(plugin.options, plugin.section) is None:
        return []
    try:
        _parsed(plugin)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    problems: list[Problem] = []
    conn = plugin.get(CONN_OPTION)
    if conn is not None and not str(conn).strip():
        problems.append(job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION))
    mode = str(job.env_get("job.mode", "BATCH")).upper()
    if plugin.section == SOURCE and mode != "STREAMING":
        problems.append(not_portable(job, plugin, "SeaTunnel's RabbitMQ source runs in STREAMING jobs only "
                                                  "(here a BATCH job reads the messages ready when it starts)",
                                     hint='set job.mode = "STREAMING" in env to run it on SeaTunnel'))
    return problems


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows are its ``schema``'s fields; problems are :func:`check`'s (not repeated here)."""
    if plugin.section == SINK:
        return None, []
    try:
        return _parsed(plugin).schema, []
    except OptionError:
        return None, []
