"""What a connector may ask of the session it is handed: a classic SparkSession (a driver JVM in
this process, reached through py4j) or a Spark Connect session (a thin client of a remote server:
no ``SparkContext``, no JVM here; everything goes through the DataFrame API).

A connector that runs on both declares ``Capabilities(connect=True)`` (:mod:`.capabilities`); one
that needs the driver JVM keeps the default and Connect mode refuses its pipelines before they
start."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (PySpark's ``pyspark.sql.connect`` client)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def session_key(spark: Any) -> str:
    """A name of the session that stays the same for its life: its Spark application id, or, on
    Spark Connect, its session id (several sessions share one server's application)."""
    if is_connect(spark):
        return f"connect:{spark.session_id}"
    return f"app:{spark.sparkContext.applicationId}:{id(spark)}"


#: what connectors close when a pipeline run ends (:func:`at_run_end`), each called with the session
_RUN_END: list[Callable[[Any], Any]] = []


def at_run_end(closer: Callable[[Any], Any]) -> None:
    """Have ``closer(spark)`` called when a pipeline run on ``spark`` ends (a connector's job-wide
    resources, such as its connection pools); registering it twice calls it once."""
    if closer not in _RUN_END:
        _RUN_END.append(closer)


def end_run(spark: Any) -> None:
    """The engine's call when a pipeline run ends, whatever its outcome: every :func:`at_run_end` closer;
    a closer's failure is logged, never raised (the run's outcome stands)."""
    for closer in list(_RUN_END):
        try:
            closer(spark)
        except Exception as e:
            logging.getLogger("seatunnel.runtime").warning("closing %s at the end of the run failed: %s",
                                                           getattr(closer, "__qualname__", closer), e)
