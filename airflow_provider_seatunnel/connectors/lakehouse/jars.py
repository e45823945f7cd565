"""What a lakehouse connector's Spark needs, alike for Delta and Iceberg: both ship as jars built for one
Spark minor version, found in Maven's local repository (``make test-deps`` fetches them) unless the job's
env names them itself (a cluster's way), and both start the session with a SQL extension of their own.

* :func:`minor_of` / :func:`spark_minor`: the ``major.minor`` of a Spark version, of the installed PySpark
  (read without importing it: plans are built at DAG-parse time);
* :func:`m2_jar`: where Maven's local repository keeps the jar of a ``group:artifact:version`` coordinate;
* :func:`env_names`: whether the env gives Spark an artifact itself (``spark.jars`` or ``spark.jars.packages``);
* :func:`with_extension`: the env's ``spark.sql.extensions`` with one more appended once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["EXTENSIONS_KEY", "env_names", "m2_jar", "m2_repository", "minor_of", "spark_minor", "with_extension"]

EXTENSIONS_KEY = "spark.sql.extensions"


def minor_of(version: str) -> str:
    """``major.minor`` of a Spark version (``4.1.1`` -> ``4.1``)."""
    return ".".join(str(version).split(".")[:2])


def spark_minor() -> str | None:
    """``major.minor`` of the installed PySpark, read from its distribution's metadata; None when PySpark
    is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return minor_of(version("pyspark"))
    except PackageNotFoundError:
        return None


def m2_repository() -> str:
    return os.path.join(os.path.expanduser("~"), ".m2", "repository")


def m2_jar(coordinate: str) -> str:
    """The path of ``group:artifact:version``'s jar in Maven's local repository (it may not be there)."""
    group, artifact, version = coordinate.split(":")
    return os.path.join(m2_repository(), *group.split("."), artifact, version, f"{artifact}-{version}.jar")


def env_names(env: Mapping[str, Any], artifact: str) -> bool:
    """Whether the job's env gives Spark ``artifact`` itself (in ``spark.jars`` or ``spark.jars.packages``)."""
    named = str(env.get("spark.jars", "")) + "," + str(env.get("spark.jars.packages", ""))
    return artifact in named


def with_extension(env: Mapping[str, Any], extension: str) -> str:
    """The env's SQL extensions (blanks dropped) with ``extension`` after them, each once."""
    given = [e.strip() for e in str(env.get(EXTENSIONS_KEY) or "").split(",") if e.strip()]
    return ",".join(dict.fromkeys([*given, extension]))
