"""Row metadata carried through Spark: the row kind travels in a hidden column.

SeaTunnel rows carry a RowKind (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE); here it is
the ByteType column :data:`ROW_KIND` (0..3), dropped before data reaches a sink that
stores rows. A source's tables travel as separate DataFrames (a :data:`Dataset` maps a
table id to its DataFrame), so no table column is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

ROW_KIND = "__st_row_kind"
#: the position of a row in the stream a sink receives, set by the engine when it must move rows
#: between partitions before a sink (a shuffle keeps no order): a sink that keeps the last change
#: per key orders by :func:`arrival_order`
ARRIVAL = "__st_arrival"
HIDDEN = (ROW_KIND, ARRIVAL)
#: Spark column metadata key a source sets on a column its table gained after the stream started
#: (``schema-changes.enabled``): a sink that follows schema changes adds such a column to its target
ADDED_COLUMN = "seatunnel.added_column"
ROW_KINDS = ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")
SHORT_KINDS = ("+I", "-U", "+U", "-D")

#: table id -> DataFrame with the data columns and :data:`ROW_KIND`
Dataset = dict  # dict[str, DataFrame]


def kind_code(name: str) -> int:
    """The code of a row kind name (case-insensitive); ValueError for an unknown one."""
    upper = str(name).strip().upper()
    if upper not in ROW_KINDS:
        raise ValueError(f"unknown row kind {name!r}: use one of {', '.join(ROW_KINDS)}")
    return ROW_KINDS.index(upper)


def kind_literal(code: int = 0) -> Column:
    """The row-kind code ``code`` as a literal of the hidden column's type (a typed cast: no
    SQL parser, whose first use costs a cold JVM a few hundred milliseconds)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    return F.lit(code).cast(T.ByteType())


def with_kind(df: DataFrame, code: int = 0) -> DataFrame:
    """``df`` with the hidden row-kind column (INSERT unless it already has one)."""
    if ROW_KIND in df.columns:
        return df
    return df.withColumn(ROW_KIND, kind_literal(code))


def data_columns(df: DataFrame) -> list[str]:
    return [c for c in df.columns if c not in HIDDEN]


def data_only(df: DataFrame) -> DataFrame:
    """The data columns alone (what a sink stores)."""
    return df.select(*[df[c] for c in data_columns(df)]) if ROW_KIND in df.columns else df


def kind_name(col: Column) -> Column:
    """A column with the row kind's name (``INSERT``…) from the hidden code."""
    from pyspark.sql import functions as F

    return F.element_at(F.array(*[F.lit(k) for k in ROW_KINDS]), col.cast("int") + 1)


def arrival_order(df: DataFrame) -> Column:
    """A column that orders ``df``'s rows as they arrived: the engine's :data:`ARRIVAL` when set,
    else their position (partition, then row) as they are now."""
    from pyspark.sql import functions as F

    return F.col(ARRIVAL) if ARRIVAL in df.columns else F.monotonically_increasing_id()


def keys_in_arrival_order(df: DataFrame, keys: list[str] | tuple[str, ...], parallelism: int) -> DataFrame:
    """``df`` with each key's rows in one of ``parallelism`` partitions, in the order they arrived, when the
    engine numbered them before a shuffle (:data:`ARRIVAL`): a sink that applies its partitions' changes
    one partition after another then applies a key's changes in their order. Else (no keys, a key that is
    not a column, or no shuffle: a partition's rows are in arrival order already) ``df`` as it is."""
    if not keys or ARRIVAL not in df.columns or any(k not in df.columns for k in keys):
        return df
    from pyspark.sql import functions as F

    return df.repartition(max(1, parallelism), *[F.col(quote(k)) for k in keys]).sortWithinPartitions(ARRIVAL)


def last_per_key(df: DataFrame, keys: list[str] | tuple[str, ...]) -> DataFrame:
    """The last row of each key in the order the rows arrived (:func:`arrival_order`), row kind kept: what
    applying them one after another leaves, for a sink that writes each key's row whole."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order, rank = "__st_last_order", "__st_last_rank"
    ranked = df.withColumn(order, arrival_order(df))
    window = Window.partitionBy(*[F.col(quote(k)) for k in keys]).orderBy(F.col(order).desc())
    return ranked.withColumn(rank, F.row_number().over(window)).where(F.col(rank) == 1).drop(rank, order)


def added_columns(df: DataFrame) -> list[str]:
    """The data columns of ``df`` marked :data:`ADDED_COLUMN` (a schema change to follow)."""
    return [f.name for f in df.schema.fields if f.name not in HIDDEN and (f.metadata or {}).get(ADDED_COLUMN)]


def quote(name: str) -> str:
    """``name`` as a Spark column reference (backticks: dots and spaces stay part of the name)."""
    return "`" + name.replace("`", "``") + "`"
