"""Restore-trial targets on Delta Lake (:mod:`restore_faults`): two Delta tables in the trial's work
directory, written by two Delta sinks of one pipeline:

* ``delta_append``: plain appends (each run's rows added once);
* ``delta_upsert``: ``primary_keys = ["id"]`` (a MERGE per run: each input row replaces the row of its id).

Before every trial each table is deleted with what it holds (data files, the log) and written again by
the reader's session with rows of an earlier run: ``(-1, "old", "g0")``, and for the upsert table also a
stale version of input row 0, ``(0, "stale", "g9")``, which the input replaces.

A reader sees what a Delta reader sees: the table's newest version (one Spark session in this process,
``local[1]``, with Delta's jars and settings, as the connector's docs give them). *Raw* counts the data
files under a table's directory, its log excluded: files of a commit that never landed (a write killed
before its commit, an attempt that lost to another) stay there until ``VACUUM``, invisible to readers.

The sink's commit is one Delta commit per sink, preceded by one ``sink.move`` (:data:`MOVES`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
STALE: list[Row] = [(0, "stale", "g9")]
#: sink.move occurrences in one run: one per sink (each sink's commit is one Delta commit)
MOVES = 2


class _Reader:
    """The reader's Spark session, with Delta (started once per benchmark run)."""

    def __init__(self, resources: Any):
        from pyspark.sql import SparkSession

        from airflow_provider_seatunnel.connectors.delta import checks

        jars = checks.delta_jars({}, {})
        if not jars:
            raise SystemExit(checks.missing_jars_hint(checks.spark_minor()))
        builder = (SparkSession.builder.master("local[1]").appName("restore_faults delta reader")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC").config("spark.jars", ",".join(jars))
                   .config("spark.databricks.delta.snapshotPartitions", "1"))
        for key, value in checks.session_conf({}, {}).items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        resources.callback(self.spark.stop)
        self.spark.sparkContext.setLogLevel("ERROR")


def _reader(resources: Any) -> _Reader:
    if getattr(resources, "delta", None) is None:
        resources.delta = _Reader(resources)
    return resources.delta


def reader_session(resources: Any) -> Any:
    """The benchmark run's Spark session with Delta (started on first use, stopped with ``resources``)."""
    return _reader(resources).spark


def delta_sinks(work: Path, rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Delta's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    spark = _reader(resources).spark
    tables = {"delta_append": OLD, "delta_upsert": OLD + STALE}

    def seeder(table: str) -> Callable[[], None]:
        def seed() -> None:
            shutil.rmtree(work / table, ignore_errors=True)
            (spark.createDataFrame(tables[table], "id bigint, name string, grp string").coalesce(1)
             .write.format("delta").save(str(work / table)))
        return seed

    def reader(table: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(r[0]), r[1], r[2]) for r in spark.read.format("delta").load(str(work / table))
                    .select("id", "name", "grp").collect()]
        return read

    def raw(table: str) -> Callable[[], int]:
        def count() -> int:
            root = work / table
            return sum(1 for p in root.rglob("*.parquet") if "_delta_log" not in p.parts) if root.exists() else 0
        return count

    def block(table: str, extra: str = "") -> str:
        return f'Delta {{ plugin_input = "rows", path = "{work / table}"{extra} }}'

    return [sink_cls("Delta append", block("delta_append"), seeder("delta_append"), reader("delta_append"),
                     raw("delta_append"), list(OLD)),
            sink_cls("Delta upsert", block("delta_upsert", ', primary_keys = ["id"]'), seeder("delta_upsert"),
                     reader("delta_upsert"), raw("delta_upsert"), OLD + STALE, upsert=True)]


READING = ("The targets are two Delta tables (`tests`' Delta 4.4.0 jars): `delta_append` (plain appends) and "
           "`delta_upsert` (`primary_keys = [\"id\"]`, one MERGE per run; it also holds a stale version of input "
           "row 0, which the input replaces). *Visible after attempt 1* is what a Delta reader sees in each table's "
           "newest version (`old`: only the earlier rows, `all`: everything, `PARTIAL` would be a half-committed "
           "table); *raw files* counts the Parquet files under each table's directory, its log excluded, after "
           "attempt 1 → after the restore (files of a write that never committed stay until `VACUUM`, unread).")
