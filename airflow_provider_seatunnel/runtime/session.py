"""The SparkSession of a pipeline, configured from the job's ``env``, and the PySpark it imports."""

from __future__ import annotations

import functools
import os
import sys
import zipfile
from collections.abc import Callable, Mapping, Sequence
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
    second: benchmarks/driver_startup.py); the package's modules were byte-compiled when it was installed. Any other
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


def prepare_driver_python() -> None:
    """The start of a pipeline driver's Python, before anything imports PySpark: PySpark from the
    installed package (:func:`without_bundled_pyspark`), and no pandas, pyarrow or NumPy for
    questions about NumPy values (:func:`lazy_numpy_checks`). Changes nothing once PySpark is
    imported (a driver started otherwise, a test's session)."""
    if "pyspark" in sys.modules:
        return
    sys.path[:] = without_bundled_pyspark(sys.path)
    lazy_numpy_checks()


def _numpy_loaded() -> bool:
    return "numpy" in sys.modules


class _UnlessNumpyLoaded:
    """A py4j input converter for NumPy values that asks nothing until numpy is imported."""

    def __init__(self, converter: Any):
        self.converter = converter

    def can_convert(self, obj: Any) -> bool:
        return _numpy_loaded() and self.converter.can_convert(obj)

    def convert(self, obj: Any, gateway_client: Any) -> Any:
        return self.converter.convert(obj, gateway_client)


def lazy_numpy_checks() -> None:
    """Keep PySpark from importing pandas, pyarrow and NumPy into a driver that uses none of them.

    PySpark 4 asks "is this a NumPy value?" in ``functions.lit`` and in the two py4j input
    converters it registers (asked of every argument of every call into the JVM) by importing
    ``pyspark.testing.utils``, which imports pandas, pyarrow and NumPy: about a third of a
    second of every driver's start, spent before the SparkContext starts. No value can be a
    NumPy one while numpy is not imported, so until it is, these checks answer "no" without
    importing anything; from then on PySpark's own code answers. Idempotent."""
    import py4j.protocol
    from pyspark.sql import types

    numpy_converters = (types.NumpyScalarConverter, types.NumpyArrayConverter)
    py4j.protocol.INPUT_CONVERTER[:] = [_UnlessNumpyLoaded(c) if isinstance(c, numpy_converters) else c
                                        for c in py4j.protocol.INPUT_CONVERTER]
    from pyspark.sql import functions, session
    from pyspark.sql.functions import builtin

    if getattr(builtin.lit, "pyspark_lit", None) is None:
        patched = lit_without_numpy(builtin.lit)
        for module in (builtin, functions, session):  # every module of PySpark that binds ``lit`` by name
            if getattr(module, "lit", None) is patched.pyspark_lit:  # type: ignore[attr-defined]
                module.lit = patched  # type: ignore[attr-defined]


def lit_without_numpy(pyspark_lit: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``pyspark.sql.functions.lit`` that imports nothing to rule out NumPy values while numpy is
    not imported, and makes the same column as ``pyspark_lit``: a column is returned as it is, a
    list becomes an array of literals, any other value a literal through the JVM's ``lit``.
    PySpark's own ``lit`` answers whenever numpy is loaded, a list holds a column (its error),
    or the session is a Spark Connect one."""
    from pyspark.sql import Column
    from pyspark.sql.functions import builtin
    from pyspark.sql.utils import is_remote

    @functools.wraps(pyspark_lit)
    def lit(col: Any) -> Any:
        if _numpy_loaded() or is_remote():
            return pyspark_lit(col)
        if isinstance(col, Column):
            return col
        if isinstance(col, list):
            if any(isinstance(c, Column) for c in col):
                return pyspark_lit(col)  # PySpark's own error
            return builtin.array(*[lit(item) for item in col])
        return builtin._invoke_function("lit", builtin._enum_to_value(col))

    lit.pyspark_lit = pyspark_lit  # type: ignore[attr-defined]
    return lit
