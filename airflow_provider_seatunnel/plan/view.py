"""What the SeaTunnel view in the Airflow UI shows of a compiled job (``ui/``): its pipelines, how the
job split into them and why, each pipeline's sources, transform chains and sinks with their
parallelism, and the slots it needs — as plain JSON, with no plugin options at all (so no secret
can reach the page). A job group's ``prepare`` task publishes it for its DAG run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .model import JobPlan, PipelinePlan, PlanVertex

#: the XCom key under which a job group's prepare task publishes :func:`job_view`
XCOM_KEY = "seatunnel_plan"
VIEW_VERSION = 1


def _vertex(v: PlanVertex) -> dict[str, Any]:
    return {"id": v.id, "ref": v.ref, "kind": v.kind, "plugin": v.plugin, "parallelism": v.parallelism,
            "chain": v.chain, "output": v.output, "inputs": list(v.inputs),
            "tables": list(v.tables) if v.tables is not None else None}


def _pipeline(p: PipelinePlan, task_id: str | None) -> dict[str, Any]:
    return {
        "id": p.id, "task_id": p.task_id, "airflow_task_id": task_id, "name": p.name,
        "vertices": [_vertex(v) for v in p.vertices], "edges": [list(e) for e in p.edges],
        "chains": [{"name": c.get("name"), "vertices": list(c.get("vertices", ())), "parallelism": c.get("parallelism")}
                   for c in p.chains],
        "slots": dict(p.slots), "split": dict(p.split),
    }


def job_view(plan: JobPlan, task_ids: Mapping[str, str] | None = None,
             warnings: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The view of ``plan``; ``task_ids`` maps a pipeline's task id to its Airflow task id (a
    pipeline without one is not a task of this DAG: not selected, or excluded); ``warnings``, the
    job's compile warnings as the publishing task words them (no option values)."""
    ids = task_ids or {}
    return {
        "version": VIEW_VERSION, "job": plan.name, "mode": plan.mode, "pipeline_count": len(plan.pipelines),
        "pipelines": [_pipeline(p, ids.get(p.task_id)) for p in plan.pipelines],
        "warnings": [dict(w) for w in warnings],
    }
