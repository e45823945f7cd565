"""The SparkSession of a pipeline, configured from the job's ``env``, and the PySpark it imports."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
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


def without_bundled_pyspark(path: Sequence[str]) -> list[str]:
    """``path`` (a driver's ``sys.path``) without spark-submit's ``pyspark.zip`` when that zip is
    the own copy of a pyspark package importable from ``path`` (``SPARK_HOME`` is the
    pip-installed PySpark) and holds the same version: PySpark is then imported from the package.

    Python keeps no bytecode for modules it imports from a zip, so a driver importing PySpark
    from spark-submit's zip compiles some two hundred modules on every start (about half a
    second of CPU); the package's modules were byte-compiled when it was installed. Any other
    Spark (a cluster's ``SPARK_HOME``, another version) keeps its zip."""
    directories = {os.path.realpath(p) for p in path if p and not p.endswith(".zip")}
    out = list(path)
    for entry in path:
        if os.path.basename(entry) != "pyspark.zip":
            continue
        package = Path(os.path.realpath(entry)).parents[2]  # <site>/pyspark from <site>/pyspark/python/lib/pyspark.zip
        if package.name != "pyspark" or str(package.parent) not in directories:
            continue
        try:
            with zipfile.ZipFile(entry) as bundled:
                same = bundled.read("pyspark/version.py") == (package / "version.py").read_bytes()
        except (OSError, KeyError, zipfile.BadZipFile):
            same = False
        if same:
            out.remove(entry)
    return out
