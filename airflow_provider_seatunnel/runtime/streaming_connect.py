"""STREAMING pipelines on a Spark Connect session: what changes when the queries' ``foreachBatch``
functions run on the server.

A Connect client sends a query's ``foreachBatch`` function to the server, which calls it in a Python
process of its own with each micro-batch (and a session of its own pointing at the same server). So
the function must carry everything the sink needs as plain data — :class:`RemoteBatchWriter`: the
plan, the pipeline, the run, the sink vertex and table, the query's checkpoint — and the two-phase
commit of every micro-batch (:func:`.streaming.write_micro_batch`, the same code as in spark-submit
mode) runs in that process. The rules that follow:

* the micro-batch's run id is ``<query id>:batch-<batch id>`` as in spark-submit mode; the query id
  is read from the query's checkpoint (``<checkpoint>/metadata``, read through the server), so a
  micro-batch replayed after a crash carries the run id of its first attempt;
* rows written are counted by an observation on the query's DataFrame (``write:<vertex>:<table>``),
  reported in Spark's progress of each finished micro-batch, not by the writer (its process is not
  this one);
* the connectors' Python code and this package must be importable by the server's Python workers
  (as for the Python code Spark's tasks run), and paths the sinks commit into are the server's;
* stopping waits until no micro-batch is running, then stops the queries; one that starts in
  between is interrupted, which the two-phase commit makes safe (Spark replays it, its run id finds
  it committed or not);
* ``kill`` faults in the writer SIGKILL the server's Python process running it: the query fails and
  the restore replays the micro-batch.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..plan.model import JobPlan, PipelinePlan, PlanVertex
from ..spi import StreamInfo, get_connector
from .context import RunContext

#: query ids by checkpoint, in the server's Python process that runs a query's writer
_QUERY_IDS: dict[str, str] = {}
_LOCK = threading.Lock()


def query_id(spark: Any, checkpoint: str) -> str:
    """The id Spark keeps in a query's checkpoint (``metadata``: one JSON line), read through ``spark``."""
    with _LOCK:
        if checkpoint not in _QUERY_IDS:
            line = spark.read.text(f"{checkpoint.rstrip('/')}/metadata").first()
            _QUERY_IDS[checkpoint] = str(json.loads(line[0])["id"])
        return _QUERY_IDS[checkpoint]


@dataclass(frozen=True)
class RemoteBatchWriter:
    """A query's ``foreachBatch`` function for a Spark Connect session: plain data the server's Python
    process unpickles, then each call writes one micro-batch through the sink's two phases."""

    plan: JobPlan
    pipeline: PipelinePlan
    run_id: str
    attempt: int
    stream: StreamInfo
    vertex: PlanVertex
    stable: PlanVertex  # the vertex the sink sees (a position-free ref)
    table: str
    checkpoint: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, batch_df: Any, batch_id: int) -> None:
        from .streaming import write_micro_batch

        spark = batch_df.sparkSession
        ctx = RunContext(spark=spark, plan=self.plan, pipeline=self.pipeline, run_id=self.run_id,
                         attempt=self.attempt, options=dict(self.options), stream=self.stream)
        connector = get_connector(self.vertex.plugin)
        write_micro_batch(ctx, self.vertex, self.stable, connector, self.table, query_id(spark, self.checkpoint),
                          batch_df, int(batch_id))


def written_name(vertex: PlanVertex, table: str) -> str:
    """The observation counting what a query hands its sink (see :func:`observe_writes`)."""
    return f"write:{vertex.id}:{table}"


def observe_writes(df: Any, vertex: PlanVertex, table: str, deletes: bool) -> Any:
    """``df`` observed: its rows (and DELETE/UPDATE_BEFORE rows with ``deletes``) per micro-batch, in
    Spark's progress reports under :func:`written_name`."""
    from pyspark.sql import functions as F

    from ..spi.rows import ROW_KIND

    metrics = [F.count(F.lit(1)).alias("rows")]
    if deletes and ROW_KIND in df.columns:
        metrics.append(F.count_if(F.col(ROW_KIND).isin(1, 3)).alias("deletes"))
    return df.observe(written_name(vertex, table), *metrics)


def observed_row(row: Any) -> dict[str, int]:
    """An observation's values in a progress report, by name. A Spark Connect client gets the row as
    Spark serialised it (``values`` and a JSON ``schema``), a classic session as a ``Row`` of its own."""
    values = row.asDict() if hasattr(row, "asDict") else dict(row)
    if set(values) == {"values", "schema"} and isinstance(values["schema"], Mapping):
        names = [f["name"] for f in values["schema"].get("fields", ())]
        values = dict(zip(names, values["values"], strict=False))
    return {k: int(v or 0) for k, v in values.items()}


def observed_writes(progress: Any, vertex: PlanVertex, table: str) -> dict[str, int] | None:
    """The counts :func:`observe_writes` reported in one progress report (None when it has none)."""
    row = (progress["observedMetrics"] or {}).get(written_name(vertex, table))
    return None if row is None else observed_row(row)
