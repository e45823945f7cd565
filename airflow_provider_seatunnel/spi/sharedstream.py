"""A streaming source whose tables all come out of one capture.

A change-data-capture source reads a database's change log once for all its tables: one
replication slot, one binlog reader. Its ``read_stream`` returns a :class:`SharedStream`: the
:data:`..contract.Dataset` of its tables as usual (each table's streaming DataFrame, for the row
types and checks made before anything runs), plus the one stream every table comes out of
(:attr:`SharedStream.raw`, a column naming each row's table) and how a micro-batch of it splits
into the tables (:attr:`SharedStream.split`).

The runtime then runs **one** streaming query per such source, whatever the number of tables and
sinks: its offsets (the source's position) are recorded once per micro-batch, and each micro-batch
is split by table and written to every sink. Two queries over one capture would each read and
advance it on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: the raw stream's column naming the table of each row
TABLE_COLUMN = "__st_table"


class SharedStream(dict):  # type: ignore[type-arg]
    """A source's tables (table id -> streaming DataFrame) that all come out of ``raw``; ``split(batch,
    tables)`` turns a micro-batch of ``raw`` (a static DataFrame) into the static DataFrames of
    ``tables`` (table ids), with the row types of the streaming ones."""

    def __init__(self, tables: Mapping[str, Any], raw: Any,
                 split: Callable[[Any, Sequence[str]], dict[str, Any]],
                 on_release: Callable[[], None] | None = None):
        super().__init__(tables)
        self.raw = raw
        self.split = split
        self.on_release = on_release

    def release(self) -> None:
        """The stream ended: let go what the source held while it ran (once; later calls do nothing)."""
        action, self.on_release = self.on_release, None
        if action is not None:
            action()

    def present(self, batch: Any) -> dict[str, int]:
        """The rows of each table in a micro-batch of ``raw`` (one Spark job); tables without rows absent."""
        return {str(r[0]): int(r[1]) for r in batch.groupBy(TABLE_COLUMN).count().collect()}
