"""The lakehouse family: what the Delta, Iceberg and Paimon sinks share (no lakehouse connector
imports another; shared code lives here).

* :func:`resolve`: key options (primary keys, partition keys) as the data spells them, and
  :func:`read_columns` a source's ``read_columns`` as the table spells them;
* :func:`merge_sql`: the MERGE statement of an upsert's changes into a table (Delta's and Iceberg's SQL);
* :func:`changes`: the last change per key in arrival order, UPDATE_BEFORE rows dropped (a merge's input).
* :mod:`.options`: the options the three declare alike and the rules of values their specs cannot state;
* :mod:`.jars`: the Spark minor version, Maven's local jars and session extensions Delta and Iceberg need.

The per-table loop, commit identities and fencing are the engine's (``runtime/twophase.py``).
"""

from __future__ import annotations

from typing import Any

from ...spi.errors import RuntimeConfigError
from ...spi.rows import ROW_KIND, arrival_order, data_columns, quote

__all__ = ["DELETE", "UPDATE_BEFORE", "changes", "merge_sql", "read_columns", "resolve"]

#: the row kinds a merge treats apart (the hidden row-kind column's codes)
DELETE, UPDATE_BEFORE = 3, 1
_SEQ, _RANK = "__st_seq", "__st_rank"


def resolve(names: tuple[str, ...], columns: list[str], case_sensitive: bool, key: str,
            lacks: str = "is not a column of the rows") -> list[str]:
    """``names`` as ``columns`` spell them, in the order of ``names``; a :class:`RuntimeConfigError` at
    ``key`` (``lacks`` says where they are missing) for those ``columns`` lack."""
    found = {c: c for c in columns} if case_sensitive else {c.lower(): c for c in columns}
    out = [found.get(n if case_sensitive else n.lower()) for n in names]
    missing = [n for n, c in zip(names, out, strict=True) if c is None]
    if missing:
        raise RuntimeConfigError(f"{key}: {', '.join(missing)} {lacks} (columns: {', '.join(columns)})")
    return [c for c in out if c is not None]


def read_columns(wanted: tuple[str, ...], have: list[str], case_sensitive: bool) -> list[str]:
    """A source's ``read_columns`` as the table (whose columns are ``have``) spells them, in their order."""
    return resolve(wanted, have, case_sensitive, "read_columns", "not in the table")


def merge_sql(target: str, view: str, columns: list[str], keys: list[str]) -> str:
    """The MERGE of the changes in the temporary view ``view`` (one row per key, with the row kind) into
    ``target`` (the table as the statement names it) on the ``keys``: a DELETE row deletes the key's row,
    another row replaces it or is inserted (``columns``: the data columns)."""
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in keys)
    kind = f"s.{quote(ROW_KIND)}"
    sets = ", ".join(f"t.{quote(c)} = s.{quote(c)}" for c in columns)
    names, values = ", ".join(quote(c) for c in columns), ", ".join(f"s.{quote(c)}" for c in columns)
    return (f"MERGE INTO {target} t USING {quote(view)} s ON {on} "
            f"WHEN MATCHED AND {kind} = {DELETE} THEN DELETE "
            f"WHEN MATCHED THEN UPDATE SET {sets} "
            f"WHEN NOT MATCHED AND {kind} <> {DELETE} THEN INSERT ({names}) VALUES ({values})")


def changes(df: Any, keys: list[str], parallelism: int) -> Any:
    """The last change per key, in arrival order, UPDATE_BEFORE rows dropped; ``parallelism`` partitions
    grouped by key. Keeps the row-kind column."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ordered = df.select(*[F.col(quote(c)) for c in data_columns(df)], F.col(ROW_KIND), arrival_order(df).alias(_SEQ))
    window = Window.partitionBy(*[F.col(quote(k)) for k in keys]).orderBy(F.col(_SEQ).desc())
    return (ordered.where(F.col(ROW_KIND) != UPDATE_BEFORE).repartition(max(1, parallelism), *[quote(k) for k in keys])
            .withColumn(_RANK, F.row_number().over(window)).where(F.col(_RANK) == 1).drop(_RANK, _SEQ))
