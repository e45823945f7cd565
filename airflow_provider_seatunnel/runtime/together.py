"""A source's tables read together, staged together: the runtime side of :mod:`..spi.together`.

The walk asks a :class:`..spi.together.ReadsTogether` source for its groups only where they can
reach a sink whole (:func:`pairs`): in BATCH, on a classic session, the source feeding ONE sink and
nothing else, that sink taking only this input, at the source's parallelism (no repartition
between), and staging from a group (:class:`..spi.together.StagesShared`). Anything else between
them (a transform, a second consumer) gets the source's plain ``read``.

A table of a group reaches the sink as its row type (:class:`..spi.together.TableView`); its own
DataFrame is built only where it is written or passed through on its own.

Counting stays per table. A table's own DataFrame of a group is never run, so its rows are counted
where the group's DataFrame is written: one observation over it counts each table's number
(:class:`SharedCounts`), and both the table's read counter and its write counter answer from it
(:class:`TableCounter`; both count the rows the source gave the sink). A table of a group written
another way (staged alone, or passed through because this run committed it already) is counted by
an observation of its own DataFrame.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..spi import SINK, get_connector
from ..spi.sessions import is_connect
from ..spi.together import ReadsTogether, StagesShared, TableGroup, TablesTogether, rows_of, tag_counts
from . import tables
from .counting import Counter, _Observed

_names = itertools.count(1)


def pairs(w: Any, vertex: Any, connector: Any) -> bool:
    """Whether the walk ``w`` reads ``vertex``'s tables together (see the module's docstring)."""
    if w.streaming or w.schema_only or not isinstance(connector, ReadsTogether) or is_connect(w.ctx.spark):
        return False
    down = w.down.get(vertex.id, [])
    if len(down) != 1:
        return False
    sink = w.by_id[down[0]]
    return (sink.kind == SINK and bool(getattr(sink, "multi_table", False)) and w.up.get(sink.id) == [vertex.id]
            and sink.parallelism == vertex.parallelism and isinstance(get_connector(sink.plugin), StagesShared))


class SharedCounts:
    """The rows of each table of a source's groups, from the observations over what was written."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._of: dict[str, tuple[_Observed | _Known, str]] = {}

    def observe(self, df: Any, numbers: Mapping[str, int], tag: str | None) -> Any:
        """``df`` counted in the action that writes it: the rows of each table of ``numbers`` (table ->
        its number in the column ``tag``; ``tag`` None: ``df`` is that one table's rows)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        observation = Observation(f"together:{next(_names)}")
        metrics = (tag_counts(tag, numbers.values()) if tag is not None else
                   [F.count(F.lit(1)).alias(f"t{n}") for n in numbers.values()])
        observed = _Observed(observation)
        with self._lock:
            for table, n in numbers.items():
                self._of[table] = (observed, f"t{n}")
        return df.observe(observation, *metrics)

    def record(self, rows: Mapping[str, int]) -> None:
        """Tables counted without an observation: their rows as the sink staged every one of them."""
        known = _Known({f"t{i}": n for i, n in enumerate(rows.values())})
        with self._lock:
            for i, table in enumerate(rows):
                self._of[table] = (known, f"t{i}")

    def rows(self, table: str, wait: float) -> int | None:
        """The table's rows once the action counting them ended (None before, or when none counts them)."""
        with self._lock:
            found = self._of.get(table)
        if found is None:
            return None
        values = found[0].get(wait)
        return None if values is None else int(values[found[1]])


class _Known:
    """Counts known already (:meth:`SharedCounts.record`), answered as an observation's are."""

    def __init__(self, values: dict[str, int]):
        self.values = values

    def get(self, wait: float) -> dict[str, int]:
        return self.values


@dataclass
class TableCounter(Counter):
    """A table's counter answering from its :class:`SharedCounts`."""

    shared: SharedCounts = field(default_factory=SharedCounts, repr=False)

    def get(self, wait: float = 10.0) -> dict[str, int]:
        rows = self.shared.rows(self.table, wait)
        return {} if rows is None else {"rows": rows}

    def live(self) -> int | None:
        try:
            return self.shared.rows(self.table, 0.0)
        except Exception:  # the session is busy or gone: unknown for now
            return None


class Paired(TablesTogether):
    """A sink's input from a source read together: its tables, the source's groups and their counts."""

    def __init__(self, tables: Mapping[str, Any], groups: tuple[TableGroup, ...], counts: SharedCounts):
        super().__init__(tables, groups)
        self.counts = counts

    def counter(self, spark: Any, name: str) -> TableCounter:
        """The counter ``name`` (``<role>:<vertex>:<table>``) of a table of a group."""
        return TableCounter(spark, None, -1, name=name, shared=self.counts)

    def grouped(self, table: str) -> bool:
        return self.group_of(table) is not None

    def counted(self, table: str) -> Any:
        """A table's own DataFrame, counted by the action that runs it (a table written on its own)."""
        return self.counts.observe(rows_of(self[table]), {table: 0}, None)

    def with_tables(self, tables: Mapping[str, Any]) -> Paired:
        return Paired(tables, self.groups, self.counts)


def read(w: Any, vertex: Any, connector: Any) -> Paired:
    """``vertex``'s tables read together (:func:`pairs` said so), with their shared counts."""
    sink = w.by_id[w.down[vertex.id][0]]
    # as many groups as the sink writes at once (its bound, not the tables': unknown before the read)
    groups = tables.concurrency(w.ctx, sink, 1 << 20, get_connector(sink.plugin))
    data = connector.read_together(w.ctx, vertex, groups)
    return Paired(data, tuple(data.groups), SharedCounts())


def group_frame(data: Paired, group: TableGroup, numbers: Mapping[str, int], observed: bool = True) -> Any:
    """The group's DataFrame to write the tables ``numbers`` (table -> number) from: their rows alone
    (unless they are all of the group's), counted per table by the write (``observed``; else the sink
    stages every row and its counts are :meth:`SharedCounts.record`-ed)."""
    from pyspark.sql import functions as F

    frame = group.frame
    if len(numbers) < len(group.tables):
        frame = frame.where(F.col(group.tag).isin(*sorted(numbers.values())))
    return data.counts.observe(frame, numbers, group.tag) if observed else frame


__all__ = ["Paired", "SharedCounts", "TableCounter", "group_frame", "pairs", "read"]
