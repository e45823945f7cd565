"""Tables read together: a multi-table source that reads a group of tables of one row type as ONE
DataFrame, and a sink that stages such a group straight from it.

A copy of hundreds of small tables pays per table for what Spark does per DataFrame: resolving the
table's schema through its own JDBC connection when the DataFrame is built, and one read task (its
own connection and query) in the write job. A source that can read several tables with one
DataFrame (:class:`ReadsTogether`) answers a :class:`TablesTogether`: every table (a table of a group
as a :class:`TableView`: its row type, and its rows on demand; any other as its DataFrame), plus the
groups (:class:`TableGroup`): one DataFrame per group whose column :attr:`TableGroup.tag`
holds each row's table number (table ``i`` of :attr:`TableGroup.tables` has number ``i``).

The runtime asks for it only where nothing but a sink that can stage from a group
(:class:`StagesShared`) consumes the source; anywhere else the source's plain ``read`` runs. The
sink then stages the tables of a group with one write of the group's DataFrame, each table under its
own commit and token as :class:`.twophase.StagesTogether` does, numbered in its staging by its
number in the group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .contract import RunContext, Vertex
from .twophase import CommitId, Staged, StagesTogether

#: the column of a group's DataFrame holding each row's table number
TAG_COLUMN = "__st_table"


@dataclass(frozen=True)
class TableGroup:
    """Tables of one row type in ONE DataFrame: ``frame`` holds every row of ``tables`` and the column
    ``tag`` (an int) with the row's table number, the position of its table in ``tables``."""

    frame: Any
    tables: tuple[str, ...]
    tag: str = TAG_COLUMN
    #: by table number: the columns no two of the table's rows in ``frame`` share, every row an INSERT
    #: (a key the database enforces, read by one statement: one snapshot); None (or no entry): unknown
    distinct: tuple[tuple[str, ...] | None, ...] = ()

    def number(self, table: str) -> int:
        return self.tables.index(table)

    def distinct_by(self, number: int) -> tuple[str, ...] | None:
        """The columns table ``number``'s rows are distinct by (see :attr:`distinct`), None: unknown."""
        return self.distinct[number] if 0 <= number < len(self.distinct) else None


class TableView:
    """One table of a group before anything reads it: its row type (``schema``, a StructType with the
    table's own catalog keys; ``columns``), which is all the checks, the keys and the save modes ask
    of a table, built without Spark; ``rows()`` the DataFrame of its rows (the group's, filtered by
    its number), built on first use, for a table written or passed through on its own."""

    def __init__(self, schema: Any, rows: Callable[[], Any]):
        self.schema = schema
        self._rows = rows
        self._built: Any = None

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.schema.fields]

    def rows(self) -> Any:
        if self._built is None:
            self._built = self._rows()
        return self._built


def tag_counts(tag: str, numbers: Iterable[int]) -> list[Any]:
    """One aggregate per number of ``numbers``, named ``t<number>``: the rows whose column ``tag``
    holds that number. Each is one SQL expression, built with one call into Spark's JVM (column,
    literal, comparison, ``when``, ``count`` and alias would be six per table)."""
    from pyspark.sql import functions as F

    column = "`" + tag.replace("`", "``") + "`"
    return [F.expr(f"count(CASE WHEN {column} = {int(n)} THEN 1 END) AS t{int(n)}") for n in numbers]


def rows_of(df: Any) -> Any:
    """A table's DataFrame: ``df`` itself, or the rows of a :class:`TableView`."""
    return df.rows() if isinstance(df, TableView) else df


class TablesTogether(dict):  # type: ignore[type-arg]
    """A source's tables (table id -> DataFrame, as any ``read`` answers) and the groups some of them
    were read in (:class:`TableGroup`); a table of no group was read on its own."""

    def __init__(self, tables: Mapping[str, Any], groups: Sequence[TableGroup] = ()):
        super().__init__(tables)
        self.groups: tuple[TableGroup, ...] = tuple(groups)

    def group_of(self, table: str) -> TableGroup | None:
        return next((g for g in self.groups if table in g.tables), None)


@runtime_checkable
class ReadsTogether(Protocol):
    """A BATCH source that can read groups of its tables as one DataFrame each (see the module); the
    tables of one row type in at least ``groups`` groups when there are tables enough (the runtime
    writes that many groups at once)."""

    def read_together(self, ctx: RunContext, vertex: Vertex, groups: int) -> TablesTogether: ...


@runtime_checkable
class StagesShared(StagesTogether, Protocol):
    """A :class:`.twophase.StagesTogether` sink that stages tables of one group from the group's
    DataFrame: ``items`` are the tables' ``(commit, token, view)`` (:class:`TableView`: the row type a
    table's save modes and keys need), ``numbers`` their numbers in ``group`` (the rows of other
    numbers are not staged); one :class:`Staged` per item, in order."""

    def stage_shared(self, ctx: RunContext, vertex: Vertex, items: Sequence[tuple[CommitId, int, Any]],
                     group: TableGroup, numbers: Sequence[int]) -> list[Staged]: ...


@runtime_checkable
class StagesEveryRow(Protocol):
    """A :class:`StagesShared` sink that can say, before the write, whether ``stage_shared`` of these
    tables stages every row of theirs it is given (none merged by key, none dropped): each answer's
    ``rows`` is then the table's rows in the group, and the runtime counts the tables from those
    instead of observing the write (an aggregate per table for every row)."""

    def stages_every_row(self, ctx: RunContext, vertex: Vertex, items: Sequence[tuple[CommitId, int, Any]],
                         group: TableGroup, numbers: Sequence[int]) -> bool: ...


__all__ = ["TAG_COLUMN", "ReadsTogether", "StagesEveryRow", "StagesShared", "TableGroup", "TableView",
           "TablesTogether", "rows_of", "tag_counts"]
