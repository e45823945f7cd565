"""FakeSource in a BATCH job: each table in exactly ``parallelism`` partitions, one per SeaTunnel reader.

Random rows: ``row.num`` per reader (``row.num × parallelism`` in all), numbered 0.. reader after
reader, with a fresh salt per read (two reads differ; a recomputed DataFrame does not). Explicit
``rows``: the whole list once per split each reader owns. A reader with nothing to emit is an empty
partition, never a missing one.
"""

from __future__ import annotations

import secrets
from typing import Any

from .generate import random_frame, rows_frame
from .options import Table


def reader_ids(spark: Any, count: int, parallelism: int) -> Any:
    """Row numbers ``0..count-1`` in exactly ``parallelism`` partitions, consecutive numbers together."""
    if count > 0:
        return spark.range(0, count, 1, parallelism)
    from pyspark.sql import functions as F

    # An empty range has no partitions at all; an always-false filter the optimizer cannot fold keeps them.
    return spark.range(0, parallelism, 1, parallelism).where(F.spark_partition_id() < F.lit(0))


def batch_table(spark: Any, table: Table, parallelism: int) -> Any:
    """The DataFrame of one table: its explicit ``rows``, or random rows."""
    if table.rows is not None:
        return rows_frame(table, reader_ids(spark, parallelism * table.splits_per_reader, parallelism))
    return random_frame(table, reader_ids(spark, table.row_num * parallelism, parallelism), secrets.randbits(62))
