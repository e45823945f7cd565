"""The jars a plan needs on Spark's classpath (JDBC drivers...), for spark-submit and sessions.

A connector may declare ``jars(config, env) -> list[str]`` (the Jdbc connector finds its
driver jar that way); :func:`pipeline_jars` merges them with the job's own
``env.spark.jars``. Pure Python: no PySpark import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..plan.model import JobPlan, PipelinePlan
from ..spi import NeedsJars, get_connector


def env_jars(env: Mapping[str, Any]) -> list[str]:
    """The jars of the job's ``env.spark.jars`` (comma-separated)."""
    return [j.strip() for j in str(env.get("spark.jars") or "").split(",") if j.strip()]


def pipeline_jars(plan: JobPlan, pipeline: PipelinePlan | Iterable[PipelinePlan] | None = None) -> list[str]:
    """Every jar the pipeline (or pipelines; default: all of the plan's) needs, in order and
    without repeats: ``env.spark.jars`` first, then each connector's jars (:class:`..spi.NeedsJars`).

    spark-submit takes them as ``--jars a,b`` (which replaces ``--conf spark.jars``: this list
    already holds the env's) or as ``spark.jars`` through :func:`..runtime.session.spark_conf`.
    """
    if pipeline is None:
        pipelines: list[PipelinePlan] = list(plan.pipelines)
    elif isinstance(pipeline, PipelinePlan):
        pipelines = [pipeline]
    else:
        pipelines = list(pipeline)
    out = env_jars(plan.env)
    for p in pipelines:
        for vertex in p.vertices:
            connector = get_connector(vertex.plugin)
            if isinstance(connector, NeedsJars):
                out.extend(connector.jars(vertex.config, plan.env))
    return list(dict.fromkeys(out))
