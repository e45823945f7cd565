"""The Hive connector at compile time (no Spark, no metastore): option forms, and one metastore per job.

The metastore is a setting of the Spark session a pipeline runs in (:func:`.options.session_conf`),
so every Hive block of a job must name the same ``metastore_uri`` (and give the same
``hive.hadoop.conf`` values), and the env must not name another one: the first Hive block of the
job wins, each later block that differs is an error located at its key. What needs the metastore
(the table exists, its format, its columns) is checked at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import JobConfig, PluginConfig, Problem, as_list, option
from .options import KERBEROS, METASTORE_KEY, NAME, SAVE_MODE_OPTIONS, metastore_uris, partition_specs, split_table


def _uri(plugin: PluginConfig) -> str | None:
    try:
        return metastore_uris(plugin.get("metastore_uri")) if plugin.has("metastore_uri") else None
    except ValueError:
        return None


def _hadoop_map(plugin: PluginConfig) -> Mapping[str, Any]:
    conf = plugin.get("hive.hadoop.conf")
    return conf if isinstance(conf, Mapping) else {}


def _session_clashes(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """This block against the job's first Hive block and the env: one session, one metastore."""
    mine = _uri(plugin)
    hives = [p for p in job.plugins if p.name.strip().lower() == NAME.lower()]
    first = next((p for p in hives if _uri(p) is not None), None)
    problems: list[Problem] = []
    env_uri = job.env_get(METASTORE_KEY)
    if mine is not None and env_uri is not None and str(env_uri).strip() != mine:
        problems.append(job.problem(
            f"metastore_uri '{mine}' differs from env {METASTORE_KEY} '{env_uri}': a pipeline's Spark session "
            "talks to one metastore", plugin, key="metastore_uri", hint=f"remove {METASTORE_KEY} from env"))
    if first is None or first is plugin or mine is None:
        return problems
    theirs = _uri(first)
    if theirs != mine:
        problems.append(job.problem(
            f"metastore_uri '{mine}' differs from '{theirs}' of {first.label}: every Hive block of a job must "
            "name the same metastore (it is a setting of the Spark session)", plugin, key="metastore_uri",
            hint="read and write one metastore per job, or split the job"))
    ours, first_conf = _hadoop_map(plugin), _hadoop_map(first)
    for key in sorted(set(ours) & set(first_conf)):
        if str(ours[key]) != str(first_conf[key]):
            problems.append(job.problem(
                f"hive.hadoop.conf '{key}' = '{ours[key]}' differs from '{first_conf[key]}' of {first.label}: "
                "the Hadoop settings are the Spark session's", plugin, key="hive.hadoop.conf"))
    return problems


def _forms(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    problems: list[Problem] = []
    table = plugin.get("table_name")
    if table is not None and "${" not in str(table):
        try:
            split_table(table)
        except ValueError as e:
            problems.append(job.problem(str(e), plugin, key="table_name", hint='table_name = "my_db.my_table"'))
    if plugin.has("metastore_uri"):
        try:
            metastore_uris(plugin.get("metastore_uri"))
        except ValueError as e:
            problems.append(job.problem(str(e), plugin, key="metastore_uri",
                                        hint='metastore_uri = "thrift://metastore-host:9083"'))
    return problems


def _codec(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """``lzo`` plans but cannot run (the spec refuses the codecs SeaTunnel does not know)."""
    if str(option(plugin.options, "compress_codec", "")).strip().lower() != "lzo":
        return []
    return [job.cannot_run("compress_codec 'lzo' is not supported by this package's Hive connector", plugin,
                           key="compress_codec",
                           hint="remove compress_codec: ORC and Parquet tables compress as their table "
                                "properties say")]


def _source(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    problems: list[Problem] = []
    if plugin.has("tables_configs"):
        problems.append(job.cannot_run("tables_configs (several Hive tables in one source) is not supported by "
                                       "this package", plugin, key="tables_configs",
                                       hint="use one Hive source block per table"))
    if plugin.has("read_partitions"):
        try:
            partition_specs(plugin.get("read_partitions"))
        except ValueError as e:
            problems.append(job.problem(str(e), plugin, key="read_partitions",
                                        hint='read_partitions = ["par1=a/par2=b", "par1=c/par2=d"]'))
    columns = as_list(plugin.get("read_columns"))
    if plugin.has("read_columns") and (not columns or not all(isinstance(c, str) for c in columns)):
        problems.append(job.problem("read_columns must be a non-empty list of column names", plugin,
                                    key="read_columns", hint='read_columns = ["id", "name"]'))
    return problems


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The compile-time problems of a Hive block beyond each option's own (:data:`.options.SPEC`'s)."""
    problems = _forms(plugin, job) + _codec(plugin, job) + _session_clashes(plugin, job)
    for key in KERBEROS:
        if plugin.has(key):
            problems.append(job.cannot_run(f"Kerberos authentication ({key}) is not supported by this package",
                                           plugin, key=key, hint="run against a metastore without Kerberos"))
            break
    if plugin.section == SOURCE:
        problems += _source(plugin, job)
    elif plugin.section == SINK:
        for key in SAVE_MODE_OPTIONS:
            if plugin.has(key):
                problems.append(job.cannot_run(f"{key} is not supported: the Hive sink writes to an existing table",
                                               plugin, key=key, hint="create the table in Hive first"))
    return problems
