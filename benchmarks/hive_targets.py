"""Restore-trial targets on Hive (:mod:`restore_faults`): two tables of a private Hive metastore
(``tests/hive_metastore.py``, started once per benchmark run), written by two Hive sinks of one
pipeline.

* ``rf.hive_orc``: ORC, no partitions (``id bigint, name string, grp string``);
* ``rf.hive_pq``: Parquet, ``PARTITIONED BY (grp string)`` (``id bigint, name string``).

Before every trial each table is dropped with what it holds (data, the sink's hidden staging and
commit directories, the staging tables killed runs left in ``rf``), created again and given one row
of an earlier run, ``(-1, "old", "g0")`` (for the Parquet table: partition ``grp=g0``, so that the
input's rows of ``g0`` go into an existing partition and those of ``g1``…``g4`` into new ones).

A reader sees what a user's Spark session with Hive support sees: one session in this process
(``local[1]``), talking to the same metastore, reading ``SELECT id, name, grp`` after
``REFRESH TABLE`` with Spark's per-partition file-listing cache off. That is also what the Hive
source of this package reads (``spark.table``): partitions come from the metastore, the files
from the partitions' directories (dot and underscore entries skipped), so files a killed commit
already moved show. *Raw* counts the data files under a table's location (hidden entries
excluded): what a naive listing sees.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
DATABASE = "rf"
#: table -> (its DDL after the name, the statement that puts the old row in)
TABLES = {
    "hive_orc": ("(id bigint, name string, grp string) STORED AS ORC",
                 "INSERT INTO {t} VALUES (-1, 'old', 'g0')"),
    "hive_pq": ("(id bigint, name string) PARTITIONED BY (grp string) STORED AS PARQUET",
                "INSERT INTO {t} PARTITION (grp = 'g0') VALUES (-1, 'old')"),
}


class _Hive:
    """The metastore of the benchmark run and the reader's Spark session on it."""

    def __init__(self, resources: Any):
        from tests import hive_metastore

        self.metastore = hive_metastore.start()
        resources.callback(self.metastore.stop)  # after the session stopped (callbacks run last first)
        from pyspark.sql import SparkSession

        self.spark = (SparkSession.builder.master("local[1]").appName("restore_faults hive reader")
                      .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                      .config("spark.sql.catalogImplementation", "hive")
                      .config("spark.hadoop.hive.metastore.uris", self.metastore.uri)
                      .config("spark.sql.warehouse.dir", f"file:{self.metastore.warehouse}")
                      .config("spark.sql.hive.filesourcePartitionFileCacheSize", "0")
                      .config("spark.sql.session.timeZone", "UTC")
                      .enableHiveSupport().getOrCreate())
        resources.callback(self.spark.stop)
        self.spark.sparkContext.setLogLevel("ERROR")
        self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE} "
                       f"LOCATION 'file:{self.metastore.warehouse}/{DATABASE}.db'")

    def location(self, table: str) -> Path:
        return self.metastore.warehouse / f"{DATABASE}.db" / table

    def staging_tables(self) -> list[str]:
        return [t.name for t in self.spark.catalog.listTables(DATABASE) if t.name.startswith("st_staging")]


def _hive(resources: Any) -> _Hive:
    """The metastore and reader session, started once for the benchmark run."""
    if getattr(resources, "hive", None) is None:
        resources.hive = _Hive(resources)
    return resources.hive


def hive_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Hive's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    hive = _hive(resources)
    spark = hive.spark

    def seeder(table: str) -> Callable[[], None]:
        ddl, insert = TABLES[table]
        qualified = f"{DATABASE}.{table}"

        def seed() -> None:
            for staging in hive.staging_tables():  # external tables over the hidden staging directories
                spark.sql(f"DROP TABLE IF EXISTS {DATABASE}.{staging}")
            spark.sql(f"DROP TABLE IF EXISTS {qualified}")
            shutil.rmtree(hive.location(table), ignore_errors=True)
            spark.sql(f"CREATE TABLE {qualified} {ddl}")  # managed: under the database's location
            spark.sql(insert.format(t=qualified))
        return seed

    def reader(table: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            spark.sql(f"REFRESH TABLE {DATABASE}.{table}")
            return [(int(r[0]), r[1], r[2]) for r in spark.sql(f"SELECT id, name, grp FROM {DATABASE}.{table}")
                    .collect()]
        return read

    def raw(table: str) -> Callable[[], int]:
        def count() -> int:
            root = hive.location(table)
            return sum(1 for p in root.rglob("*") if p.is_file() and not any(
                x.startswith((".", "_")) for x in p.relative_to(root).parts)) if root.exists() else 0
        return count

    def block(table: str) -> str:
        return (f'Hive {{ plugin_input = "rows", table_name = "{DATABASE}.{table}", '
                f'metastore_uri = "{hive.metastore.uri}" }}')

    return [sink_cls(f"Hive {fmt}", block(table), seeder(table), reader(table), raw(table), list(OLD))
            for table, fmt in (("hive_orc", "ORC"), ("hive_pq", "Parquet by grp"))]


READING = ("The targets are two tables of a private Hive metastore (`tests/hive_metastore.py`): `rf.hive_orc` (ORC, "
           "no partitions) and `rf.hive_pq` (Parquet, partitioned by `grp`; the earlier row is in partition `g0`, "
           "so the input goes into one existing and four new partitions). *Visible after attempt 1* is what a Spark "
           "session with Hive support reads from each table after `REFRESH TABLE` (`old`: only the earlier row, "
           "`all`: everything, `PARTIAL`: a half-committed table, e.g. files moved into the table's or an existing "
           "partition's directory by a commit killed half way); *raw files* counts the data files under each "
           "table's location after attempt 1 → after the restore (hidden staging and commit directories excluded).")
