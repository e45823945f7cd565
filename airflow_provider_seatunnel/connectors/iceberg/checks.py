"""Iceberg at compile time (no Spark): the block's problems located at their keys, the sink's keys against
its input's fields, and what the pipeline's Spark needs: Iceberg's Spark runtime of its Spark version
(and a JDBC catalog's driver) and the session setting of Iceberg's SQL extensions.

Iceberg's Spark runtime is built for one Spark minor version: ``iceberg-spark-runtime-<major.minor>_2.13``;
one of another minor fails on its first catalog operation (``IncompatibleClassChangeError``). The artifact
is chosen from the installed PySpark's version (:data:`ICEBERG_RELEASES`); a Spark no Iceberg release is
built for gets neither jar nor extension, a plan warning, and at run time a deterministic error naming
the Spark versions that work (:func:`.tables.ensure_iceberg`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi.options import JobConfig, PluginConfig, Problem, mode_option_problems
from ...spi.schema import Schema
from ..lakehouse.jars import EXTENSIONS_KEY, env_names, m2_jar, m2_repository, spark_minor, with_extension
from ..lakehouse.options import checked, key_problems, save_mode_problems
from .options import (
    CATALOG_CONFIG,
    CONN_OPTION,
    CONNECTION_CONFIG,
    PARTITION_KEYS,
    PRIMARY_KEYS,
    SPEC,
    SourceOptions,
    parse,
)

#: Spark minor version -> the newest Iceberg release built for it that Maven Central serves
#: (``org.apache.iceberg:iceberg-spark-runtime-<minor>_2.13``). Spark 4.2 has none yet; 4.0 is below this
#: package's floor (PySpark 4.1)
ICEBERG_RELEASES = {"4.0": "1.11.0", "4.1": "1.12.0"}
#: the artifact a job's env names when it gives Spark Iceberg itself
ARTIFACT = "iceberg-spark-runtime"
EXTENSION = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
#: source options of each mode only
STREAM_ONLY = ("stream_scan_strategy", "start_snapshot_timestamp", "increment.scan-interval")
BATCH_ONLY = ("use_snapshot_id", "use_snapshot_timestamp", "end_snapshot_id")
UNSUPPORTED = {"iceberg.hadoop-conf-path": "put core-site.xml/hdfs-site.xml/hive-site.xml in HADOOP_CONF_DIR or set "
                                           "them in hadoop.config",
               "kerberos_principal": "Kerberos is not supported here", "kerberos_keytab_path": "Kerberos is not "
                                                                                            "supported here"}


def coordinate(minor: str) -> str:
    """The Maven coordinate of Iceberg's runtime for Spark ``minor`` (the ``spark.jars.packages`` line)."""
    release = ICEBERG_RELEASES.get(minor, max(ICEBERG_RELEASES.values()))
    return f"org.apache.iceberg:iceberg-spark-runtime-{minor}_2.13:{release}"


def works_on() -> str:
    """The Spark versions an Iceberg runtime is known for, as the messages name them."""
    return ", ".join(f"Spark {m} (Iceberg {r})" for m, r in ICEBERG_RELEASES.items() if m >= "4.1")


def iceberg_jars(options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
    """Iceberg's runtime for the installed PySpark from Maven's local repository (``make test-deps`` fetches
    it; nothing when the env names Iceberg itself, a cluster's way, or for a Spark without a release), and a
    JDBC catalog's driver (found as the Jdbc connector finds its drivers)."""
    from ..sqlclient.connection import required_jars

    minor = spark_minor()
    jars: list[str] = []
    if not env_names(env, ARTIFACT) and minor in ICEBERG_RELEASES and os.path.isfile(m2_jar(coordinate(minor))):
        jars.append(m2_jar(coordinate(minor)))
    config = {k: v for key in (CONNECTION_CONFIG, CATALOG_CONFIG) if isinstance(SPEC.written(options, key), Mapping)
              for k, v in SPEC.written(options, key).items()}
    if str(config.get("type", "")).lower() == "jdbc" and config.get("uri"):
        jars.extend(required_jars({"url": str(config["uri"])}, env))
    return jars


def missing_jar_hint(minor: str) -> str:
    return (f"Iceberg's Spark runtime for Spark {minor} is not in {m2_repository()}: run `make test-deps`, or set "
            f'env spark.jars.packages = "{coordinate(minor)}"')


def session_conf(options: Mapping[str, Any], env: Mapping[str, Any]) -> dict[str, str]:
    """Iceberg's SQL extensions (after the env's own extensions), a setting a session takes when it starts
    only, whatever the block's options; none on a Spark no Iceberg release is built for (the run refuses it:
    :mod:`.tables`)."""
    minor = spark_minor()
    if minor not in ICEBERG_RELEASES and not env_names(env, ARTIFACT):
        return {}
    return {EXTENSIONS_KEY: with_extension(env, EXTENSION)}


def _source(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    streaming = str(job.env_get("job.mode", "BATCH")).strip().upper() == "STREAMING"
    problems = mode_option_problems(plugin, job, BATCH_ONLY, STREAM_ONLY, ("one snapshot of the table",
                                    "every snapshot"), "use stream_scan_strategy (with start_snapshot_id or "
                                    "start_snapshot_timestamp)")
    if streaming and plugin.has("table_list"):
        problems.append(job.problem("a STREAMING Iceberg source reads one table", plugin, key="table_list",
                                    hint="one source block per table"))
    return problems


def _env(plugin: PluginConfig, job: JobConfig, catalog: Any) -> list[Problem]:
    problems: list[Problem] = []
    if not catalog.config and not plugin.has(CONN_OPTION) \
            and job.env_get(f"spark.sql.catalog.{catalog.name}") is None:
        problems.append(job.problem(f"the catalog is not described: set {CATALOG_CONFIG}, {CONN_OPTION}, or env "
                                    f"spark.sql.catalog.{catalog.name}", plugin, key=CATALOG_CONFIG,
                                    hint=f'{CATALOG_CONFIG} = {{ type = "hadoop", warehouse = "file:///data/ice" }}'))
    minor = spark_minor()
    if minor is not None and minor not in ICEBERG_RELEASES and not env_names(job.env, ARTIFACT):
        problems.append(job.problem(
            f"no Iceberg release is built for Spark {minor}: Iceberg runs on {works_on()} (docs/install.md); a "
            "pipeline with an Iceberg block fails on this Spark", plugin, severity="warning",
            hint="run the pipelines on PySpark 4.1"))
    for key, why in UNSUPPORTED.items():
        if plugin.has(key):
            problems.append(job.cannot_run(f"{key} is not supported by this package's Iceberg connector", plugin,
                                           key=key, hint=why))
    return problems


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The first option the connector refuses beyond :data:`.options.SPEC`'s types, choices and unknown
    keys (reported before: an error at its key), then mode and env problems."""
    options, refused = checked(SPEC, parse, plugin, job)
    if options is None:
        return refused
    problems = _env(plugin, job, options.catalog)
    if isinstance(options, SourceOptions):
        return problems + _source(plugin, job)
    return problems + save_mode_problems("Iceberg", options, plugin, job)


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows are known at run time only (the catalog has them). A sink's primary and partition
    keys must name fields of its input, where the input's schema is known."""
    return None, key_problems(SPEC, parse, plugin, job, inputs, (PRIMARY_KEYS, PARTITION_KEYS))


def assets_of(options: Mapping[str, Any]) -> list[str]:
    """Each table as a URI: a hadoop catalog's table directory (``<warehouse>/<namespace>/<table>``), else
    ``iceberg://<catalog_name>/<namespace>.<table>``; placeholders left as they are."""
    config = SPEC.written(options, CATALOG_CONFIG) or {}
    listed = SPEC.written(options, "table_list")
    blocks = listed if isinstance(listed, list) else [options]
    catalog = SPEC.written(options, "catalog_name", "default")
    out = []
    for block in blocks:
        if not isinstance(block, Mapping) or SPEC.written(block, "table") is None:
            continue
        namespace = str(SPEC.written(block, "namespace", SPEC.written(options, "namespace", "default")))
        table = str(SPEC.written(block, "table"))
        if isinstance(config, Mapping) and str(config.get("type", "")).lower() == "hadoop" and config.get("warehouse"):
            out.append(f"{str(config['warehouse']).rstrip('/')}/{namespace.replace('.', '/')}/{table}")
        else:
            out.append(f"iceberg://{catalog}/{namespace}.{table}")
    return out
