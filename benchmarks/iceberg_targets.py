"""Restore-trial targets on Apache Iceberg (:mod:`restore_faults`): two Iceberg tables of a hadoop catalog in the
trial's work directory (``<work>/iceberg``, namespace ``bench``), written by two Iceberg sinks of one pipeline:

* ``ice_append``: plain appends (each run's rows added once);
* ``ice_upsert``: ``iceberg.table.primary-keys = "id"`` (a MERGE per run: each input row replaces the row of its id).

Before every trial each table is dropped with what it holds (``DROP TABLE ... PURGE``) and written again by the
reader's session with rows of an earlier run: ``(-1, "old", "g0")``, and for the upsert table also a stale version
of input row 0, ``(0, "stale", "g9")``, which the input replaces.

A reader sees what an Iceberg reader sees: the table's ``main`` branch (one Spark session in this process,
``local[1]``, with Iceberg's runtime and SQL extensions, as the connector's docs give them). *Raw* counts the
table's branches other than ``main``: the staging branches of attempts that wrote and never published (a killed
attempt's stays until the next commit of its identity drops it, and must be gone after the restore).

Iceberg has no Spark runtime for PySpark 4.2: run these trials with the lowest-versions venv's Python
(``.cache/venv-lowest/bin/python benchmarks/restore_faults.py --sink Iceberg``, PySpark 4.1).

The sink's commit is one published snapshot per sink, preceded by one ``sink.move`` (:data:`MOVES`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
STALE: list[Row] = [(0, "stale", "g9")]
#: sink.move occurrences in one run: one per sink (each sink's commit is one fast-forward)
MOVES = 2
NAMESPACE = "bench"


class _Reader:
    """The reader's Spark session, with Iceberg (started once per benchmark run)."""

    def __init__(self, resources: Any):
        from pyspark.sql import SparkSession

        from airflow_provider_seatunnel.connectors.iceberg import checks

        minor = checks.spark_minor()
        jars = checks.iceberg_jars({}, {})
        if minor not in checks.ICEBERG_RELEASES or not jars:
            raise SystemExit(f"Iceberg needs PySpark with an Iceberg runtime ({checks.works_on()}), found {minor}: "
                             "run with .cache/venv-lowest/bin/python" if minor not in checks.ICEBERG_RELEASES
                             else checks.missing_jar_hint(minor))
        builder = (SparkSession.builder.master("local[1]").appName("restore_faults iceberg reader")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC").config("spark.jars", ",".join(jars)))
        for key, value in checks.session_conf({}, {}).items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        resources.callback(self.spark.stop)
        self.spark.sparkContext.setLogLevel("ERROR")


def _reader(resources: Any) -> _Reader:
    if getattr(resources, "iceberg", None) is None:
        resources.iceberg = _Reader(resources)
    return resources.iceberg


def reader_session(resources: Any) -> Any:
    """The benchmark run's Spark session with Iceberg (started on first use, stopped with ``resources``)."""
    return _reader(resources).spark


def register_catalog(spark: Any, name: str, warehouse: str, namespace: str, table: str) -> str:
    """Register a hadoop catalog ``name`` on ``warehouse`` with the reader's session; the table's identifier."""
    from airflow_provider_seatunnel.connectors.iceberg.options import Catalog, TableRef
    from airflow_provider_seatunnel.connectors.iceberg.tables import identifier, register

    return identifier(register(spark, Catalog(name, {"type": "hadoop", "warehouse": warehouse})),
                      TableRef(namespace, table))


def iceberg_sinks(work: Path, rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Iceberg's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    from airflow_provider_seatunnel.connectors.iceberg.options import Catalog, TableRef
    from airflow_provider_seatunnel.connectors.iceberg.tables import identifier, register, table_state

    spark = _reader(resources).spark
    warehouse = f"file://{work / 'iceberg'}"
    catalog = register(spark, Catalog("bench", {"type": "hadoop", "warehouse": warehouse}))
    tables = {"ice_append": OLD, "ice_upsert": OLD + STALE}

    def name(table: str) -> str:
        return identifier(catalog, TableRef(NAMESPACE, table))

    def seeder(table: str) -> Callable[[], None]:
        def seed() -> None:
            spark.sql(f"DROP TABLE IF EXISTS {name(table)} PURGE").collect()
            (spark.createDataFrame(tables[table], "id bigint, name string, grp string").coalesce(1)
             .writeTo(name(table)).using("iceberg").create())
        return seed

    def reader(table: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(r[0]), r[1], r[2]) for r in spark.table(name(table)).select("id", "name", "grp").collect()]
        return read

    def raw(table: str) -> Callable[[], int]:
        def count() -> int:
            return len([b for b in table_state(spark, catalog, TableRef(NAMESPACE, table)).branches if b != "main"])
        return count

    def block(table: str, extra: str = "") -> str:
        return (f'Iceberg {{ plugin_input = "rows", catalog_name = "bench", namespace = "{NAMESPACE}", '
                f'table = "{table}", iceberg.catalog.config = {{ type = "hadoop", warehouse = "{warehouse}" }}'
                f'{extra} }}')

    return [sink_cls("Iceberg append", block("ice_append"), seeder("ice_append"), reader("ice_append"),
                     raw("ice_append"), list(OLD)),
            sink_cls("Iceberg upsert", block("ice_upsert", ', iceberg.table.primary-keys = "id"'),
                     seeder("ice_upsert"), reader("ice_upsert"), raw("ice_upsert"), OLD + STALE, upsert=True)]


READING = ("The targets are two Iceberg tables of a hadoop catalog (Iceberg 1.12.0 on PySpark 4.1): `ice_append` "
           "(plain appends) and `ice_upsert` (`iceberg.table.primary-keys = \"id\"`, one MERGE per run; it also holds "
           "a stale version of input row 0, which the input replaces). *Visible after attempt 1* is what an Iceberg "
           "reader sees on each table's `main` (`old`: only the earlier rows, `all`: everything, `PARTIAL` would be a "
           "half-committed table); *staging branches* counts each table's branches other than `main` after attempt 1 "
           "→ after the restore (a killed attempt's staging branch, never published, must be gone after the "
           "restore).")
