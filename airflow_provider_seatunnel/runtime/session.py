"""The SparkSession of a pipeline, configured from the job's ``env`` (how a driver's Python imports
PySpark: :mod:`.pyspark_internals`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Settings every pipeline session needs (SeaTunnel's ``time`` type is Spark's TIME).
BASE_CONF = {
    "spark.sql.timeType.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}


def spark_conf(env: Mapping[str, Any], jars: Sequence[str] = ()) -> dict[str, str]:
    """``spark.*`` keys of the job's ``env``, as strings (SeaTunnel passes them to SparkConf);
    ``jars`` (see :func:`.jars.pipeline_jars`) join ``spark.jars``."""
    out = dict(BASE_CONF)
    for key, value in env.items():
        if str(key).startswith("spark.") and key != "spark.master":
            out[str(key)] = "true" if value is True else "false" if value is False else str(value)
    if jars:
        known = [j.strip() for j in out.get("spark.jars", "").split(",") if j.strip()]
        out["spark.jars"] = ",".join(dict.fromkeys([*known, *jars]))
    return out


def get_session(app_name: str, env: Mapping[str, Any], master: str | None = None, jars: Sequence[str] = ()) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    for key, value in spark_conf(env, jars).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
