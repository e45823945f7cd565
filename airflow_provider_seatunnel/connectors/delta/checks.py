"""Delta at compile time (no Spark): the block's problems located at their keys, the sink's keys against
its input's fields, and what the pipeline's Spark needs: the Delta jars of its Spark version and the
session settings of Delta's SQL extension and catalog.

Delta's Spark artifact is built for one Spark minor version: ``delta-spark_<major.minor>_2.13``. A jar
of another minor half works (DataFrame writes succeed, DDL fails with ``NoSuchMethodError``), so the
artifact is chosen from the installed PySpark's version (:data:`DELTA_RELEASES`), and the run checks
the jar it loaded against ``spark.version`` (:mod:`.runtime`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi.options import JobConfig, PluginConfig, Problem, mode_option_problems
from ...spi.schema import Schema
from ..lakehouse.jars import EXTENSIONS_KEY, env_names, m2_jar, m2_repository, spark_minor, with_extension
from ..lakehouse.options import checked, key_problems, save_mode_problems
from .options import SPEC, SourceOptions, parse

#: Spark minor version -> the newest Delta release built for it (``io.delta:delta-spark_<minor>_2.13``),
#: as Maven Central serves them: Delta 4.4.0 for Spark 4.0, 4.1 and 4.2 (Spark 4.0's is older than this
#: package's floor, PySpark 4.1)
DELTA_RELEASES = {"4.0": "4.4.0", "4.1": "4.4.0", "4.2": "4.4.0"}
#: the artifact a job's env names when it gives Spark Delta itself
ARTIFACT = "delta-spark"
EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG_KEY = "spark.sql.catalog.spark_catalog"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
#: source options of each mode only
STREAM_ONLY = ("start_version", "start_timestamp", "skip_change_commits", "change_data_feed")
BATCH_ONLY = ("use_version", "use_timestamp")


def coordinates(minor: str) -> list[str]:
    """The Maven coordinates of Delta for Spark ``minor`` (the ``spark.jars.packages`` line)."""
    release = DELTA_RELEASES.get(minor, max(DELTA_RELEASES.values()))
    return [f"io.delta:delta-spark_{minor}_2.13:{release}", f"io.delta:delta-storage:{release}"]


def delta_jars(options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
    """Delta's jars for the installed PySpark from Maven's local repository (``make test-deps`` fetches
    them); nothing when the env names Delta itself (a cluster's way: docs/delta.md), when no Delta
    release is known for the Spark version, or when they are not there (the run says what is missing). The
    block's options do not change them."""
    minor = spark_minor()
    if env_names(env, ARTIFACT) or minor is None or minor not in DELTA_RELEASES:
        return []
    jars = [m2_jar(c) for c in coordinates(minor)]
    return jars if all(os.path.isfile(j) for j in jars) else []


def missing_jars_hint(minor: str | None) -> str:
    packages = ",".join(coordinates(minor or "4.2"))
    return (f"Delta's jars for Spark {minor} are not in {m2_repository()}: run `make test-deps`, or set "
            f'env spark.jars.packages = "{packages}"')


def session_conf(options: Mapping[str, Any], env: Mapping[str, Any]) -> dict[str, str]:
    """Delta's SQL extension (after the env's own extensions) and its catalog as ``spark_catalog``:
    settings a session takes when it starts only, whatever the block's options."""
    return {EXTENSIONS_KEY: with_extension(env, EXTENSION), CATALOG_KEY: CATALOG}


def _source(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    return mode_option_problems(plugin, job, BATCH_ONLY, STREAM_ONLY, ("one version of the table", "every commit"),
                                "use start_version or start_timestamp")


def _env(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    problems: list[Problem] = []
    catalog = job.env_get(CATALOG_KEY)
    if catalog is not None and str(catalog).strip() != CATALOG:
        problems.append(job.problem(f"env {CATALOG_KEY} = '{catalog}' is not Delta's catalog: a pipeline with a "
                                    f"Delta block starts its Spark session with {CATALOG}", None, key=CATALOG_KEY,
                                    hint=f"remove {CATALOG_KEY} from env"))
    minor = spark_minor()
    if minor is not None and minor not in DELTA_RELEASES and not env_names(job.env, ARTIFACT):
        problems.append(job.problem(
            f"no Delta release is known for Spark {minor} (Delta 4.4.0 is built for Spark "
            f"{', '.join(DELTA_RELEASES)}): Spark needs Delta's jars of its own minor version", plugin,
            severity="warning", hint=f'set env spark.jars.packages = "{",".join(coordinates(minor))}" once Delta '
                                     "publishes them"))
    return problems


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The first option the connector refuses beyond :data:`.options.SPEC`'s types, choices and unknown
    keys (reported before: an error at its key), then mode and env problems."""
    options, refused = checked(SPEC, parse, plugin, job)
    if options is None:
        return refused
    problems = _env(plugin, job)
    if isinstance(options, SourceOptions):
        return problems + _source(plugin, job)
    return problems + save_mode_problems("Delta", options, plugin, job)


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """A source's rows are known at run time only (the table's log has them). A sink's ``primary_keys``
    and ``partition_keys`` must name fields of its input, where the input's schema is known."""
    return None, key_problems(SPEC, parse, plugin, job, inputs, ("primary_keys", "partition_keys"))


def assets_of(options: Mapping[str, Any]) -> list[str]:
    """The table's location as a URI (OpenLineage's naming of a file system directory), or the empty
    list when the options do not name one; placeholders left as they are (see :mod:`.` for Unnamed)."""
    path = SPEC.written(options, "path")
    if path is None:
        parts = [SPEC.written(options, k) for k in ("warehouse", "database", "table")]
        if any(p is None for p in parts):
            return []
        path = f"{str(parts[0]).rstrip('/')}/{parts[1]}.db/{parts[2]}"
    return [str(path).strip()]
