"""Row counts from the pass that writes the data: counting points.

A counting point is a filter that keeps every row (partition ids are never negative); its key
makes it findable in Spark's SQL plan graphs, whose "number of output rows" metric is the count.
"""

from __future__ import annotations

import itertools
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from ..spi.rows import ROW_KIND

log = logging.getLogger("seatunnel.runtime")

#: A counting point is a filter that keeps every row (partition ids are never negative); its key
#: makes it findable in Spark's SQL plan graphs, whose "number of output rows" metric is the count.
_MARKER = re.compile(r"SPARK_PARTITION_ID\(\) > -(\d+)\b", re.IGNORECASE)
_MARKER_BASE = 1_000_000_000
_keys = itertools.count(1)
#: (application id, execution id) -> {marker key: rows} of finished SQL executions (parsed once)
_finished: dict[tuple[str, int], dict[int, int]] = {}


def _digits(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text) or 0)


def _status_store(spark: Any) -> Any:
    return spark._jsparkSession.sharedState().statusStore()


def _newest_execution(store: Any) -> int:
    """The id of the newest SQL execution the status store holds (-1 for none)."""
    count = int(store.executionsCount())
    return int(store.executionsList(count - 1, 1).apply(0).executionId()) if count else -1


def _marker_rows(spark: Any, since: int, wait: float) -> dict[int, int]:
    """Rows through every counting point of the SQL executions from id ``since`` on (the largest
    value when several executions ran one: a persisted or recomputed plan runs a point again).

    Reads Spark's SQL status store, after the listener bus has delivered every event posted so
    far (the end of the action that ran the points is posted before the action returns)."""
    try:
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(int(wait * 1000))
    except Exception as e:  # a bus still busy after ``wait``: read what has arrived
        log.debug("listener bus not drained: %s", e)
    store = _status_store(spark)
    app = spark.sparkContext.applicationId
    rows: dict[int, int] = {}
    for execution_id in range(max(since, 0), _newest_execution(store) + 1):
        found = _finished.get((app, execution_id))
        if found is None:
            stored = store.execution(execution_id)
            if not stored.isDefined():
                continue
            execution = stored.get()
            found = {}
            if _MARKER.search(execution.physicalPlanDescription() or ""):
                values = store.executionMetrics(execution_id)
                nodes = store.planGraph(execution_id).allNodes()
                for j in range(nodes.size()):
                    node = nodes.apply(j)
                    marker = _MARKER.search(node.desc()) if node.name() == "Filter" else None
                    if marker is None:
                        continue
                    metrics = node.metrics()
                    for m in range(metrics.size()):
                        metric = metrics.apply(m)
                        if metric.name() == "number of output rows":
                            value = values.get(metric.accumulatorId())
                            found[int(marker.group(1))] = _digits(value.get()) if value.isDefined() else 0
            if execution.completionTime().isDefined():
                _finished[(app, execution_id)] = found
        for marker_key, value in found.items():
            rows[marker_key] = max(rows.get(marker_key, 0), value)
    return rows


@dataclass
class Counter:
    """The rows through one counting point (and, when asked, an Observation of their DELETE and
    UPDATE_BEFORE rows)."""

    spark: Any
    key: int
    since: int  # the first SQL execution that can run it
    deletes: Any = None  # Observation

    def get(self, wait: float = 10.0) -> dict[str, int]:
        """The counts, or ``{}`` when no action ran over the DataFrame (a sink that skipped a
        table, e.g. a retry whose commit had already happened)."""
        rows = _marker_rows(self.spark, self.since, wait).get(self.key + _MARKER_BASE)
        if rows is None:
            return {}
        out = {"rows": rows}
        jo = getattr(self.deletes, "_jo", None)
        if jo is not None:
            deadline = time.monotonic() + wait
            while not jo.future().isCompleted() and time.monotonic() < deadline:
                time.sleep(0.02)
            if jo.future().isCompleted():
                out["deletes"] = int((self.deletes.get or {}).get("deletes") or 0)
        return out


def count_rows(df: Any, name: str, deletes: bool = False) -> tuple[Any, Counter]:
    """``df`` with a counting point: whatever action runs it counts its rows in the same pass,
    through the SQL metric of a filter that keeps every row (it costs a row almost nothing,
    unlike an aggregating ``DataFrame.observe``, and Spark pushes no filter below it, so a
    source counts every row it read). With ``deletes`` its DELETE/UPDATE_BEFORE rows are
    also counted, by an observation (callers ask only where such rows can occur)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    key = next(_keys)
    counted = df.where(F.spark_partition_id() > F.lit(-(_MARKER_BASE + key)))
    counter = Counter(df.sparkSession, key, _newest_execution(_status_store(df.sparkSession)) + 1)
    if deletes and ROW_KIND in df.columns:
        counter.deletes = Observation(f"{name}:deletes")
        counted = counted.observe(counter.deletes, F.count_if(F.col(ROW_KIND).isin(1, 3)).alias("deletes"))
    return counted, counter
