"""Iceberg at run time: the session's Iceberg support, checked; the job's catalog registered with Spark;
a table's branches and the commits on a branch's history, read from Iceberg's metadata tables.

* :func:`ensure_iceberg`: the running Spark is a version an Iceberg runtime is built for (a runtime of
  another Spark minor fails deep inside its first catalog operation, so the run refuses it first, with
  the versions that work), Iceberg's classes are on the class path and the session started with its SQL
  extensions (a setting a running session cannot take).
* :func:`register`: an ``iceberg.catalog.config`` becomes a Spark catalog of the session named
  ``seatunnel_<catalog_name>_<digest of its properties>`` (one catalog per distinct configuration, never
  a changed one under an old name), with Iceberg's table cache off (every check reads the catalog's
  current metadata); without one, ``catalog_name`` is a Spark catalog the env configures.
* :func:`table_state`: whether the table exists, the branches it has, and the ``seatunnel.commit``
  property of every snapshot in a branch's history (its head and the head's ancestors).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError
from ...spi.twophase import digest
from ..lakehouse.jars import EXTENSIONS_KEY, minor_of
from .checks import EXTENSION, ICEBERG_RELEASES, missing_jar_hint, works_on
from .options import Catalog, TableRef

log = logging.getLogger("seatunnel.iceberg")

CATALOG_CLASS = "org.apache.iceberg.spark.SparkCatalog"
#: the snapshot summary property naming the (run, sink, target, pipeline, table, micro-batch) a commit is of
COMMIT_PROPERTY = "seatunnel.commit"


@dataclass(frozen=True)
class TableState:
    """A table as its metadata shows it: ``exists``; ``head`` the snapshot id of the asked branch (None:
    the branch has no snapshot); ``commits`` the ``seatunnel.commit`` values on the branch's history."""

    name: str
    exists: bool
    head: int | None = None
    commits: frozenset[str] = frozenset()
    branches: tuple[str, ...] = ()

    def committed(self, commit: str) -> bool:
        return commit in self.commits

    def scope_started(self, scope: str) -> bool:
        return any(c.startswith(scope) for c in self.commits)


def ensure_iceberg(spark: Any) -> None:
    """A :class:`RuntimeConfigError` unless ``spark`` can run Iceberg (see the module docstring)."""
    from py4j.protocol import Py4JError

    minor = minor_of(spark.version)
    if minor not in ICEBERG_RELEASES:
        raise RuntimeConfigError(f"Iceberg has no Spark runtime for Spark {spark.version}: it runs on {works_on()}. "
                                 "Run the pipelines with Iceberg blocks on PySpark 4.1 (docs/install.md, "
                                 "docs/iceberg.md)")
    jvm = spark.sparkContext._jvm
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(CATALOG_CLASS, False, loader)
    except Py4JError:
        raise RuntimeConfigError(missing_jar_hint(minor)) from None
    if EXTENSION not in str(spark.conf.get(EXTENSIONS_KEY, "") or ""):
        raise RuntimeConfigError(f"the Spark session was started without Iceberg's {EXTENSIONS_KEY}={EXTENSION}; a "
                                 "pipeline's session gets it from its Iceberg blocks, a session built elsewhere must "
                                 "set it when it starts")


def catalog_name(catalog: Catalog) -> str:
    """The Spark catalog the block's tables are in (see the module docstring)."""
    if not catalog.config:
        return catalog.name
    content = sorted(catalog.config.items()) + sorted(("hadoop." + k, v) for k, v in catalog.hadoop.items())
    return f"seatunnel_{catalog.name}_{digest(*content, length=10)}"


def ensure_jdbc_driver(spark: Any, uri: str) -> None:
    """A JDBC catalog's driver loadable and registered with Java's ``DriverManager`` (a session started
    without its jar gets it added, as the Jdbc connector adds its drivers)."""
    from py4j.protocol import Py4JError

    from ..sqlclient.connection import Conn, default_driver_class, ensure_driver

    driver = default_driver_class(uri)
    if driver is None:
        return
    ensure_driver(spark, Conn(uri, driver))
    jvm = spark.sparkContext._jvm
    with contextlib.suppress(Py4JError):  # loading the class registers the driver
        jvm.java.lang.Class.forName(driver, True, jvm.java.lang.Thread.currentThread().getContextClassLoader())


def register(spark: Any, catalog: Catalog) -> str:
    """The catalog as a Spark catalog of ``spark``'s session; its name."""
    name = catalog_name(catalog)
    if catalog.type == "jdbc" and catalog.config.get("uri"):
        ensure_jdbc_driver(spark, catalog.config["uri"])
    if not catalog.config:
        if spark.conf.get(f"spark.sql.catalog.{name}", None) is None:
            raise RuntimeConfigError(f"catalog_name '{name}' is not a Spark catalog of the session and the block has "
                                     "no iceberg.catalog.config: describe the catalog")
        return name
    prefix = f"spark.sql.catalog.{name}"
    settings = {prefix: CATALOG_CLASS, f"{prefix}.cache-enabled": "false"}
    settings.update({f"{prefix}.{k}": v for k, v in catalog.config.items()})
    settings.update({f"{prefix}.hadoop.{k}": v for k, v in catalog.hadoop.items()})
    for key, value in settings.items():
        if spark.conf.get(key, None) != value:
            spark.conf.set(key, value)
    return name


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def identifier(catalog: str, ref: TableRef, suffix: str | None = None) -> str:
    """``catalog.namespace.table[.suffix]`` quoted for Spark SQL (a dotted namespace is nested)."""
    parts = [catalog, *ref.namespace.split("."), ref.table] + ([suffix] if suffix else [])
    return ".".join(quote(p) for p in parts)


def procedure_name(ref: TableRef) -> str:
    """The table as Iceberg's procedures take it: ``namespace.table`` (a string literal's text)."""
    return f"{ref.namespace}.{ref.table}".replace("'", "\\'")


def table_exists(spark: Any, catalog: str, ref: TableRef) -> bool:
    return bool(spark.catalog.tableExists(identifier(catalog, ref)))


def _history(snapshots: list[Any], head: int | None) -> list[Any]:
    """The snapshots from ``head`` back to the first (parent links)."""
    by_id = {r["snapshot_id"]: r for r in snapshots}
    out, at = [], head
    while at is not None and at in by_id:
        out.append(by_id[at])
        at = by_id[at]["parent_id"]
    return out


def table_state(spark: Any, catalog: str, ref: TableRef, branch: str = "main") -> TableState:
    """The table's branches, ``branch``'s head and the commits on its history (see :class:`TableState`)."""
    name = identifier(catalog, ref)
    if not table_exists(spark, catalog, ref):
        return TableState(name, False)
    refs = spark.sql(f"SELECT name, type, snapshot_id FROM {identifier(catalog, ref, 'refs')}").collect()
    branches = tuple(sorted(r["name"] for r in refs if r["type"] == "BRANCH"))
    head = next((r["snapshot_id"] for r in refs if r["name"] == branch and r["type"] == "BRANCH"), None)
    if head is None:
        return TableState(name, True, None, frozenset(), branches)
    snapshots = spark.sql(f"SELECT snapshot_id, parent_id, summary['{COMMIT_PROPERTY}'] AS commit "
                          f"FROM {identifier(catalog, ref, 'snapshots')}").collect()
    commits = frozenset(r["commit"] for r in _history(snapshots, head) if r["commit"])
    return TableState(name, True, head, commits, branches)


def has_rows(spark: Any, catalog: str, ref: TableRef, branch: str = "main") -> bool:
    table = identifier(catalog, ref, None if branch == "main" else f"branch_{branch}")
    return bool(spark.table(table).limit(1).count())


def snapshot_millis(spark: Any, catalog: str, ref: TableRef, snapshot_id: int) -> int | None:
    """When the snapshot ``snapshot_id`` was committed (epoch milliseconds); None: no such snapshot."""
    found = spark.sql(f"SELECT unix_millis(committed_at) AS millis FROM {identifier(catalog, ref, 'snapshots')} "
                      f"WHERE snapshot_id = {int(snapshot_id)}").collect()
    return int(found[0]["millis"]) if found else None
