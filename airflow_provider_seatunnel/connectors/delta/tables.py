"""Delta at run time: the session's Delta support, checked, and a table's log read through Delta's own
API (``DeltaLog`` through py4j, never the ``_delta_log`` files: entries already folded into a checkpoint
would be missed).

* :func:`ensure_delta`: Delta's classes are on the class path, built for the running Spark's minor
  version (a jar of another minor half works: DataFrame writes succeed, DDL fails), and the session
  started with Delta's SQL extension and catalog (settings a running session cannot take); on a local
  master, Delta's snapshot state is rebuilt in as many tasks as there are cores (its default, 50 tasks
  per snapshot, costs a small machine minutes).
* :func:`table_state`: a table's newest version (-1: no table), columns, partition columns, and the
  application transactions (``txnAppId`` -> ``txnVersion``) its commits recorded.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError
from ..lakehouse.jars import EXTENSIONS_KEY, minor_of
from .checks import CATALOG, CATALOG_KEY, EXTENSION, missing_jars_hint

log = logging.getLogger("seatunnel.delta")

DELTA_LOG = "org.apache.spark.sql.delta.DeltaLog"
SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"


@dataclass(frozen=True)
class TableState:
    """A Delta table as its newest snapshot shows it; ``version`` -1: there is no table."""

    path: str
    version: int
    committed: int | None = None  # the txnVersion recorded for the asked txnAppId
    scope_started: bool = False  # some txnAppId starts with the asked prefix
    scope_versions: tuple[int, ...] = ()  # the txnVersions recorded for the app ids starting with it
    columns: tuple[str, ...] = ()
    partition_columns: tuple[str, ...] = ()
    properties: tuple[tuple[str, str], ...] = ()  # the table's properties (its metadata's configuration)
    schema_json: str = ""  # the table's schema as Spark's JSON

    def table_property(self, key: str) -> str | None:
        return dict(self.properties).get(key)

    @property
    def exists(self) -> bool:
        return self.version >= 0


def _delta_class(spark: Any) -> Any:
    from py4j.protocol import Py4JError

    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        return jvm.java.lang.Class.forName(DELTA_LOG, False, loader)
    except Py4JError:
        return None


def built_for(jar: str) -> str | None:
    """The Spark minor version a Delta jar's name says it is built for (``delta-spark_4.2_2.13-4.4.0.jar``:
    4.2); None for a name without one (``delta-spark_2.13-...``, which does not tell)."""
    found = re.search(r"delta-spark_(\d+\.\d+)_2\.1\d", jar)
    return found.group(1) if found else None


def _jar_of(cls: Any) -> str:
    """Where the class was loaded from ("" when its class loader does not tell)."""
    try:
        source = cls.getProtectionDomain().getCodeSource()
        return str(source.getLocation().getPath()) if source is not None else ""
    except Exception:
        return ""


def ensure_delta(spark: Any, env: Mapping[str, Any]) -> None:
    """A :class:`RuntimeConfigError` unless ``spark`` can run Delta (see the module docstring)."""
    minor = minor_of(spark.version)
    cls = _delta_class(spark)
    if cls is None:
        raise RuntimeConfigError(missing_jars_hint(minor))
    built = built_for(_jar_of(cls))
    if built is not None and built != minor:
        raise RuntimeConfigError(f"the Delta jar on the class path is built for Spark {built}, this is Spark "
                                 f"{spark.version}: use delta-spark_{minor}_2.13 (docs/delta.md)")
    extensions = str(spark.conf.get(EXTENSIONS_KEY, "") or "")
    catalog = str(spark.conf.get(CATALOG_KEY, "") or "")
    if EXTENSION not in extensions or catalog != CATALOG:
        raise RuntimeConfigError(f"the Spark session was started without Delta's {EXTENSIONS_KEY}={EXTENSION} and "
                                 f"{CATALOG_KEY}={CATALOG}; a pipeline's session gets them from its Delta blocks, a "
                                 "session built elsewhere must set them when it starts")
    tune(spark, env)


def tune(spark: Any, env: Mapping[str, Any]) -> None:
    """On a local master, unless the job sets it: Delta's snapshot state in as many tasks as cores."""
    sc = spark.sparkContext
    if SNAPSHOT_PARTITIONS in env or sc.getConf().contains(SNAPSHOT_PARTITIONS):
        return
    if str(sc.master).startswith("local"):
        spark.conf.set(SNAPSHOT_PARTITIONS, str(max(1, min(int(sc.defaultParallelism), 8))))


def _lines(text: Any) -> list[str]:
    return [line for line in str(text).split("\n") if line]


def table_state(spark: Any, path: str, app_id: str | None = None, scope: str | None = None) -> TableState:
    """The table at ``path`` as its newest snapshot shows it; with ``app_id``, the version its
    transaction recorded; with ``scope``, whether any recorded transaction's app id starts with it."""
    jvm = spark.sparkContext._jvm
    snapshot = jvm.org.apache.spark.sql.delta.DeltaLog.forTableWithSnapshot(spark._jsparkSession, path)._2()
    version = int(snapshot.version())
    if version < 0:
        return TableState(path, -1)
    txns = snapshot.transactions()
    committed = None
    if app_id is not None:
        found = txns.get(app_id)
        committed = int(found.get()) if found.isDefined() else None
    in_scope = [a for a in _lines(txns.keySet().mkString("\n")) if scope is not None and a.startswith(scope)]
    metadata = snapshot.metadata()
    configuration = jvm.scala.jdk.javaapi.CollectionConverters.asJava(metadata.configuration())
    return TableState(path, version, committed, bool(in_scope), tuple(int(txns.get(a).get()) for a in in_scope),
                      tuple(str(c) for c in metadata.schema().fieldNames()),
                      tuple(_lines(metadata.partitionColumns().mkString("\n"))),
                      tuple(sorted((str(k), str(v)) for k, v in dict(configuration).items())),
                      str(metadata.schemaString()))


def has_rows(spark: Any, path: str) -> bool:
    return bool(spark.read.format("delta").load(path).limit(1).count())


def sql_path(path: str) -> str:
    """``delta.`<path>``` as Spark SQL names a table by its directory."""
    return "delta.`" + path.replace("`", "``") + "`"
