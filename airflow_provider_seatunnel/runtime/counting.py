"""Row counts from the pass that writes the data.

Two ways to count, one chosen per counter:

* a counting point (``status_store_counts`` in :mod:`.pyspark_internals`, used where the
  installed PySpark is one it was written for): a filter that keeps every row (partition ids
  are never negative), whose key makes it findable in Spark's SQL plan graphs; their "number of
  output rows" metric is the count. It costs a row almost nothing;
* otherwise (and always on Spark Connect) the public API: ``DataFrame.observe`` with an
  ``Observation`` that counts the rows (an aggregation per row; the first action over the
  DataFrame is the one counted).

Either way Spark pushes no filter below the count, so a source counts every row it read, and a
DataFrame run by several actions (persisted, recomputed) is counted once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..spi.rows import ROW_KIND
from ..spi.sessions import is_connect
from . import pyspark_internals as internals

_MARKER_BASE = 1_000_000_000
_keys = itertools.count(1)
_reading = threading.local()


@contextmanager
def one_reading() -> Iterator[None]:
    """Inside, every counter asking for its live rows shares one reading of the counting points per
    ``since`` (one progress line asks every counter of the pipeline at once: a multi-table pipeline has
    hundreds, which share a few ``since``); outside, each asks afresh. Per thread."""
    outer = getattr(_reading, "rows", None)
    _reading.rows = {} if outer is None else outer
    try:
        yield
    finally:
        _reading.rows = outer


def _live_rows(spark: Any, since: int) -> dict[int, int]:
    """The live rows of the counting points from execution ``since`` on (shared within :func:`one_reading`)."""
    shared: dict[tuple[int, int], dict[int, int]] | None = getattr(_reading, "rows", None)
    key = (id(spark), since)
    if shared is not None and key in shared:
        return shared[key]
    rows = internals.marker_rows(spark, since, 0.0)
    if shared is not None:
        shared[key] = rows
    return rows


class _Observed:
    """The metrics of an ``Observation``, through its public ``get`` (which blocks until an action
    over the observed DataFrame finished) asked in a daemon thread: ``None`` while none has."""

    def __init__(self, observation: Any):
        self.observation = observation
        self._values: dict[str, Any] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def _fetch(self) -> None:
        try:  # Spark Connect answers at once: empty until an action over the DataFrame returned
            self._values = dict(self.observation.get) or None
        except BaseException as e:  # the session stopped, or the action failed: asked again by get
            self._error = e

    def get(self, wait: float) -> dict[str, Any] | None:
        if self._values is None:
            if self._thread is None:
                self._thread = threading.Thread(target=self._fetch, name="seatunnel-observation", daemon=True)
                self._thread.start()
            self._thread.join(wait)
            if self._error is not None:
                raise self._error
            if self._values is None and not self._thread.is_alive():
                self._thread = None  # answered "nothing yet": ask again next time
        return self._values


@dataclass
class Counter:
    """The rows through one counting point or observation (and, when asked, of their DELETE and
    UPDATE_BEFORE rows)."""

    spark: Any
    key: int | None  # a counting point's key; None when the observation counts the rows too
    since: int  # the first SQL execution that can run the counting point
    observed: _Observed | None = field(default=None, repr=False)  # the observation's metrics
    name: str = ""  # what it counts: ``<role>:<vertex>:<table>`` (``read:source_0:public.t1``)

    @property
    def table(self) -> str:
        """The table it counts: what follows the role and the vertex in its name (the whole name
        when it has no such parts)."""
        parts = self.name.split(":", 2)
        return parts[2] if len(parts) == 3 else self.name

    def get(self, wait: float = 10.0) -> dict[str, int]:
        """The counts, or ``{}`` when no action ran over the DataFrame (a sink that skipped a
        table, e.g. a retry whose commit had already happened; without a counting point this
        answer takes ``wait`` seconds)."""
        if self.key is None:
            values = self.observed.get(wait) if self.observed is not None else None
            if values is None:
                return {}
            out = {"rows": int(values["rows"])}
            if "deletes" in values:
                out["deletes"] = int(values["deletes"] or 0)
            return out
        rows = internals.marker_rows(self.spark, self.since, wait).get(self.key + _MARKER_BASE)
        if rows is None:
            return {}
        out = {"rows": rows}
        if self.observed is not None:  # the action ran: its observation is there, or soon
            values = self.observed.get(wait)
            if values is not None:
                out["deletes"] = int(values.get("deletes") or 0)
        return out

    def live(self) -> int | None:
        """The rows counted so far, while the action over the DataFrame still runs (a counting point's
        live SQL metric: finished tasks, and running ones as their executors report); an observation
        knows nothing until its action ended (None until then). Never waits."""
        try:
            if self.key is None:
                values = self.observed.get(0.0) if self.observed is not None else None
                return None if values is None else int(values["rows"])
            return _live_rows(self.spark, self.since).get(self.key + _MARKER_BASE, 0)
        except Exception:  # the session is busy or gone: unknown for now
            return None


def settle(spark: Any) -> None:
    """A table's write returned: the counting points it ran are kept now (:func:`.pyspark_internals.settle`),
    so its counts do not depend on how many SQL executions Spark's status store keeps (a job of many
    tables runs more than its 1,000 before reading them). Nothing to do where observations count."""
    if spark is None or is_connect(spark) or not internals.STATUS_STORE_COUNTS.applies():
        return
    internals.settle(spark)


def rows_per_table(counters: list[Counter], wait: float = 10.0) -> dict[str, int]:
    """The final rows of each table the ``counters`` count (summed where two count one table)."""
    out: dict[str, int] = {}
    for c in counters:
        out[c.table] = out.get(c.table, 0) + c.get(wait).get("rows", 0)
    return out


def count_rows(df: Any, name: str, deletes: bool = False) -> tuple[Any, Counter]:
    """``df`` counted in whatever action runs it, in the same pass: by a counting point where
    ``status_store_counts`` applies, else by an observation. With ``deletes`` its
    DELETE/UPDATE_BEFORE rows are also counted, by an observation (callers ask only where such
    rows can occur)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    spark = df.sparkSession
    deletes = deletes and ROW_KIND in df.columns
    delete_rows = F.count_if(F.col(ROW_KIND).isin(1, 3)).alias("deletes") if deletes else None
    if is_connect(spark) or not internals.STATUS_STORE_COUNTS.applies():
        observation = Observation(f"{name}:rows")
        metrics = [F.count(F.lit(1)).alias("rows"), *([delete_rows] if delete_rows is not None else [])]
        return df.observe(observation, *metrics), Counter(spark, None, -1, _Observed(observation), name)
    internals.check_status_store(spark)
    key = next(_keys)
    counted = df.where(F.spark_partition_id() > F.lit(-(_MARKER_BASE + key)))
    counter = Counter(spark, key, internals.newest_execution(spark) + 1, name=name)
    internals.hold(spark.sparkContext.applicationId, counter.since, counter)
    if delete_rows is not None:
        observation = Observation(f"{name}:deletes")
        counter.observed = _Observed(observation)
        counted = counted.observe(observation, delete_rows)
    return counted, counter
