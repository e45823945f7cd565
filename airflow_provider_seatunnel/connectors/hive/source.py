"""The Hive source: a table of the session's metastore, read by Spark (its ORC and Parquet readers,
or Hive's SerDe for text tables).

The columns are the table's data columns then its partition columns, as SeaTunnel's file readers
give them; ``read_columns`` keeps those it names, in its order. ``read_partitions`` keeps the rows
of the partitions it names (``k=v`` or ``k=v/k2=v2``, compared as the partition directories spell
the values), which Spark turns into partition pruning. The schema is known at run time only (the
metastore has it): the plan says unknown. The table comes in exactly the plan's parallelism:
Spark's splits coalesced when there are more, the rows repartitioned when there are fewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...spi import SOURCE, Dataset, RunContext, Vertex
from ...spi.rows import quote, with_kind
from ..files.reading import at_parallelism
from .options import SPEC, config_error, partition_specs, split_table
from .tables import describe, require_hive


def _partition_filter(specs: list[list[tuple[str, str]]], partition_columns: Sequence[str]) -> Any:
    """The rows of any of the partitions (each: every key = value, as strings)."""
    from functools import reduce

    from pyspark.sql import functions as F

    by_lower = {c.lower(): c for c in partition_columns}
    clauses = []
    for spec in specs:
        tests = []
        for key, value in spec:
            column = by_lower.get(key.lower())
            if column is None:
                raise config_error(f"read_partitions: '{key}' is not a partition column of the table "
                                   f"(partition columns: {', '.join(partition_columns) or 'none'})")
            tests.append(F.col(quote(column)).cast("string") == F.lit(value))
        clauses.append(reduce(lambda a, b: a & b, tests))
    return reduce(lambda a, b: a | b, clauses)


def _columns(df: Any, wanted: list[str]) -> list[str]:
    by_lower = {c.lower(): c for c in df.columns}
    missing = [c for c in wanted if c.lower() not in by_lower]
    if missing:
        raise config_error(f"read_columns: {', '.join(missing)} not in the table (columns: {', '.join(df.columns)})")
    return [by_lower[c.lower()] for c in wanted]


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The table (``read_partitions``, ``read_columns`` applied) at ``vertex.parallelism`` partitions."""
    spark = ctx.spark
    require_hive(spark)
    o = SPEC.run_time(vertex.config, SOURCE)
    try:
        database, table = split_table(o["table_name"])
    except ValueError as e:
        raise config_error(str(e)) from None
    info = describe(spark, database, table)
    df = spark.table(info.qualified)
    if o["read_partitions"] is not None:
        try:
            specs = partition_specs(list(o["read_partitions"]))
        except ValueError as e:
            raise config_error(str(e)) from None
        df = df.where(_partition_filter(specs, info.partition_columns))
    wanted = [str(c) for c in (o["read_columns"] or ())]
    if wanted:
        df = df.select(*[quote(c) for c in _columns(df, wanted)])
    return {"default": with_kind(at_parallelism(df, max(1, int(vertex.parallelism))))}
