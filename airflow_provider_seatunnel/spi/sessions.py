"""What a connector may ask of the session it is handed: a classic SparkSession (a driver JVM in
this process, reached through py4j) or a Spark Connect session (a thin client of a remote server:
no ``SparkContext``, no JVM here; everything goes through the DataFrame API).

A connector that runs on both declares ``Capabilities(connect=True)`` (:mod:`.capabilities`); one
that needs the driver JVM keeps the default and Connect mode refuses its pipelines before they
start."""

from __future__ import annotations

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
