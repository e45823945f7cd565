"""Kafka at compile time (no Spark, no broker): the block's problems located at their keys, the
schema and tables a source gives, and the jars Spark needs."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import SINK
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema, TableKeys
from .options import (
    CHANGE_FORMATS,
    CONN_OPTION,
    LATER_FORMATS,
    SPEC,
    OptionError,
    SinkOptions,
    SourceOptions,
    parse,
    source_options,
    written,
)

#: Spark's Kafka source and sink (its version is PySpark's) and the dependencies PySpark does not ship
#: (their versions are the ones its pom names)
SPARK_KAFKA = ("org/apache/spark", "spark-sql-kafka-0-10_2.13")
SPARK_KAFKA_DEPENDENCIES = (("org/apache/spark", "spark-token-provider-kafka-0-10_2.13"),
                            ("org/apache/kafka", "kafka-clients"), ("org/apache/commons", "commons-pool2"))


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The first option SeaTunnel would refuse (an error at its key), then what cannot run here. The
    declared types, choices and required options are :data:`.options.SPEC`'s problems, reported before."""
    if SPEC.valid(plugin.options, plugin.section) is None:
        return []
    try:
        options = parse(plugin.options, plugin.section, need_bootstrap=False)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    problems: list[Problem] = []
    formats = [options.format] if isinstance(options, SinkOptions) else [t.format for t in options.tables]
    for fmt in formats:
        if fmt in LATER_FORMATS:
            problems.append(job.cannot_run(f"format {fmt} is not supported by this package", plugin, key="format",
                                           hint="use json, text, canal_json, debezium_json, ogg_json or maxwell_json"))
            break
    conn = written(plugin.options, CONN_OPTION)
    if conn is not None and not str(conn).strip():
        problems.append(job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION))
    if isinstance(options, SourceOptions):
        problems.extend(_source_warnings(plugin, job, options))
    elif options.semantics == "EXACTLY_ONCE" and options.assign_partitions and options.partition is not None:
        problems.append(job.problem("assign_partitions is ignored: partition sends every record to one partition",
                                    plugin, key="assign_partitions", severity="warning"))
    return problems


def _source_warnings(plugin: PluginConfig, job: JobConfig, options: SourceOptions) -> list[Problem]:
    out: list[Problem] = []
    for spec in options.tables:
        if spec.schema is None and plugin.has("format") and len(options.tables) == 1:
            out.append(job.problem("format is ignored without a schema: each record is read as the one text field "
                                   "'content'", plugin, key="format", severity="warning",
                                   hint="add schema = { fields { ... } } to parse the records"))
        if spec.format in CHANGE_FORMATS and plugin.has("format_error_handle_way"):
            out.append(job.problem(f"format_error_handle_way does not apply to {spec.format}: records that cannot "
                                   "be parsed are dropped (as in SeaTunnel)", plugin, key="format_error_handle_way",
                                   severity="warning"))
    return out


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows: its ``schema`` or ``content string`` (one table); a sink has none."""
    if plugin.section == SINK:
        return None, []
    try:
        options = source_options(plugin.options, need_bootstrap=False)
    except OptionError:
        return None, []
    if len(options.tables) != 1:
        return None, []
    return options.tables[0].output_schema(), []


def tables(plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
    """A ``table_list``'s tables by topic; None for one table."""
    if plugin.section == SINK:
        return None
    try:
        options = source_options(plugin.options, need_bootstrap=False)
    except OptionError:
        return None
    if len(options.tables) < 2:
        return None
    return {spec.table_id: TableKeys() for spec in options.tables}


def m2_repository() -> str:
    return os.path.join(os.path.expanduser("~"), ".m2", "repository")


def _jar(group: str, artifact: str, version: str) -> str:
    return os.path.join(m2_repository(), group, artifact, version, f"{artifact}-{version}.jar")


def spark_avro_jar() -> str | None:
    """``spark-avro`` for the PySpark in use, from Maven's local repository (``format = avro``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        jar = _jar("org/apache/spark", "spark-avro_2.13", version("pyspark"))
    except PackageNotFoundError:
        return None
    return jar if os.path.isfile(jar) else None


def uses_avro(options: Mapping[str, Any]) -> bool:
    tables = written(options, "table_list")
    blocks = [t for t in tables if isinstance(t, Mapping)] if isinstance(tables, list) else []
    formats = [str(written(b, "format", written(options, "format", "json"))).lower() for b in blocks] or \
        [str(written(options, "format", "json")).lower()]
    return "avro" in formats


def spark_kafka_jars(env: Mapping[str, Any]) -> list[str]:
    """Spark's Kafka source/sink jars for the PySpark in use from Maven's local repository (``make
    test-deps`` fetches them), its dependencies at the versions its pom names; nothing when
    ``env.spark.jars`` or ``spark.jars.packages`` names spark-sql-kafka (a cluster's way:
    docs/kafka.md) or when they are not there (the run then says what is missing)."""
    named = str(env.get("spark.jars", "")) + "," + str(env.get("spark.jars.packages", ""))
    if "spark-sql-kafka" in named:
        return []
    from importlib.metadata import PackageNotFoundError, version

    try:  # the installed release, without importing PySpark (plans are built at DAG-parse time)
        spark_version = version("pyspark")
    except PackageNotFoundError:
        return []
    group, artifact = SPARK_KAFKA
    main = _jar(group, artifact, spark_version)
    pom = main[: -len(".jar")] + ".pom"
    if not os.path.isfile(main) or not os.path.isfile(pom):
        return []
    with open(pom, encoding="utf-8") as f:
        text = f.read()
    out = [main]
    for dep_group, dep_artifact in SPARK_KAFKA_DEPENDENCIES:
        wanted = spark_version if dep_artifact.startswith("spark-") else _pom_version(text, dep_artifact)
        jar = _jar(dep_group, dep_artifact, wanted or "")
        if not wanted or not os.path.isfile(jar):
            return []
        out.append(jar)
    return out


def _pom_version(pom: str, artifact: str) -> str | None:
    import re

    m = re.search(rf"<artifactId>{re.escape(artifact)}</artifactId>\s*<version>([^<$]+)</version>", pom)
    return m.group(1).strip() if m else None


def missing_jars_hint() -> str:
    return (f"Spark's Kafka source and sink ({SPARK_KAFKA[1]} and its dependencies; spark-avro_2.13 for format "
            f"avro) are not in {m2_repository()}: run `make test-deps`, or set env spark.jars.packages = "
            '"org.apache.spark:spark-sql-kafka-0-10_2.13:<your Spark version>"')
