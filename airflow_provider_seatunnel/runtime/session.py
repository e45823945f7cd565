"""The SparkSession of a pipeline, configured from the job's ``env`` and the settings its plugins
need at session start (:class:`..spi.NeedsSession`: Hive support and a metastore); how a driver's
Python imports PySpark: :mod:`.pyspark_internals`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Settings every pipeline session needs (SeaTunnel's ``time`` type is Spark's TIME). ``upper`` and
#: ``lower`` map case with the JVM's ``String`` methods, as SeaTunnel's Sql transform does, not with
#: ICU (which also builds its case tables in each driver: over a CPU second at a small job's first
#: ``upper``). A job's ``env`` sets any of them otherwise.
BASE_CONF = {
    "spark.sql.timeType.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.icu.caseMappings.enabled": "false",
}


#: Settings that are comma-separated lists: what several plugins ask for is joined, not a conflict
#: (a pipeline writing Delta and Iceberg tables loads both session extensions).
LIST_SETTINGS = frozenset({"spark.sql.extensions", "spark.jars", "spark.jars.packages"})


def _items(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def session_settings(plan: Any, pipeline: Any) -> dict[str, str]:
    """The settings the pipeline's plugins need at session start (:class:`..spi.NeedsSession`);
    list settings (:data:`LIST_SETTINGS`) join every plugin's entries; a
    :class:`..spi.errors.RuntimeConfigError` when two of them ask different values of another key."""
    from ..spi import NeedsSession, get_connector
    from ..spi.errors import RuntimeConfigError

    out: dict[str, str] = {}
    asked_by: dict[str, str] = {}
    for vertex in pipeline.vertices:
        connector = get_connector(vertex.plugin)
        if not isinstance(connector, NeedsSession):
            continue
        for key, value in connector.session_conf(vertex.config, plan.env).items():
            if key in LIST_SETTINGS and key in out:  # lists: every plugin's entries, each once, in order
                out[key] = ",".join(dict.fromkeys(_items(out[key]) + _items(str(value))))
                continue
            if key in out and out[key] != str(value):
                raise RuntimeConfigError(f"{vertex.ref} {vertex.plugin} needs the session setting {key}={value}, "
                                         f"{asked_by[key]} needs {key}={out[key]}: one session cannot have both")
            out[key], asked_by[key] = str(value), f"{vertex.ref} {vertex.plugin}"
    return out


def application_settings(plan: Any, pipeline: Any) -> dict[str, str]:
    """The settings of a pipeline's own Spark application: :func:`session_settings`, and the FAIR
    scheduler for a pipeline whose multi-table sink writes tables at once (:func:`.tables.session_conf`)."""
    from .tables import session_conf

    return {**session_conf(plan, pipeline), **session_settings(plan, pipeline)}


def spark_conf(env: Mapping[str, Any], jars: Sequence[str] = (),
               session: Mapping[str, str] | None = None) -> dict[str, str]:
    """``spark.*`` keys of the job's ``env``, as strings (SeaTunnel passes them to SparkConf);
    ``jars`` (see :func:`.jars.pipeline_jars`) join ``spark.jars``; ``session`` (see
    :func:`session_settings`) come last."""
    out = dict(BASE_CONF)
    for key, value in env.items():
        if str(key).startswith("spark.") and key != "spark.master":
            out[str(key)] = "true" if value is True else "false" if value is False else str(value)
    out.update(session or {})
    if jars:
        known = [j.strip() for j in out.get("spark.jars", "").split(",") if j.strip()]
        out["spark.jars"] = ",".join(dict.fromkeys([*known, *jars]))
    return out


def get_session(app_name: str, env: Mapping[str, Any], master: str | None = None, jars: Sequence[str] = (),
                session: Mapping[str, str] | None = None) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    for key, value in spark_conf(env, jars, session).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
