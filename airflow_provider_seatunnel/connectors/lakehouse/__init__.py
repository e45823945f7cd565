"""The lakehouse family: what the Delta, Iceberg and Paimon sinks share (no lakehouse connector
imports another; shared code lives here).

* :func:`resolve`: key options (primary keys, partition keys) as the data spells them;
* :func:`changes`: the last change per key in arrival order, UPDATE_BEFORE rows dropped (a merge's input).
* :mod:`.options`: the options the three declare alike and the rules of values their specs cannot state.

The per-table loop, commit identities and fencing are the engine's (``runtime/twophase.py``).
"""

from __future__ import annotations

from typing import Any

from ...spi.errors import RuntimeConfigError
from ...spi.rows import ROW_KIND, arrival_order, data_columns, quote

__all__ = ["DELETE", "UPDATE_BEFORE", "changes", "resolve"]

#: the row kinds a merge treats apart (the hidden row-kind column's codes)
DELETE, UPDATE_BEFORE = 3, 1
_SEQ, _RANK = "__st_seq", "__st_rank"


def resolve(names: tuple[str, ...], columns: list[str], case_sensitive: bool, key: str) -> list[str]:
    """``names`` as the data spells them; a :class:`RuntimeConfigError` for one the data lacks."""
    found = {c: c for c in columns} if case_sensitive else {c.lower(): c for c in columns}
    out = [found.get(n if case_sensitive else n.lower()) for n in names]
    missing = [n for n, c in zip(names, out, strict=True) if c is None]
    if missing:
        raise RuntimeConfigError(f"{key}: {', '.join(missing)} is not a column of the rows "
                                 f"(columns: {', '.join(columns)})")
    return [c for c in out if c is not None]


def changes(df: Any, keys: list[str], parallelism: int) -> Any:
    """The last change per key, in arrival order, UPDATE_BEFORE rows dropped; ``parallelism`` partitions
    grouped by key. Keeps the row-kind column."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ordered = df.select(*[F.col(quote(c)) for c in data_columns(df)], F.col(ROW_KIND), arrival_order(df).alias(_SEQ))
    window = Window.partitionBy(*[F.col(quote(k)) for k in keys]).orderBy(F.col(_SEQ).desc())
    return (ordered.where(F.col(ROW_KIND) != UPDATE_BEFORE).repartition(max(1, parallelism), *[quote(k) for k in keys])
            .withColumn(_RANK, F.row_number().over(window)).where(F.col(_RANK) == 1).drop(_RANK, _SEQ))
