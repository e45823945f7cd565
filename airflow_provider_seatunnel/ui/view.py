"""The SeaTunnel view of one DAG run, assembled from what Airflow's REST API answers: the job groups
of the run (their ``prepare`` tasks), each group's job graph (the plan view its prepare task
published, :mod:`..plan.view`), and each pipeline task's state, try, times, counts (its metrics
XCom: final counts; while it runs, its last progress report: the ``seatunnel_progress`` XCom, else
the last progress line in its log) and links (its task log, its Spark UI).
Each group also lists its tables: rows read and written per table, failed first
(:func:`..runtime.metrics.table_counts`; a pipeline that counted nothing lists the tables its plan names).

Pure functions over plain data: the FastAPI app (:mod:`.app`) fetches, this assembles.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from ..runtime.metrics import FAILED, FINISHED, TABLE_RUNNING, TableCounts, table_counts, table_order

#: the class name the REST API reports for a job group's prepare task
PREPARE_OPERATOR = "SeaTunnelPrepareOperator"
#: task states, in the order the view sorts and counts them
STATES = ("failed", "upstream_failed", "up_for_retry", "running", "queued", "scheduled", "deferred", "restarting",
          "success", "skipped", "removed", "none")


def prepare_tasks(task_instances: Iterable[Mapping[str, Any]]) -> list[str]:
    """The task ids of the run's job groups' prepare tasks, in task id order."""
    return sorted(str(t["task_id"]) for t in task_instances if t.get("operator") == PREPARE_OPERATOR)


def pipeline_tasks(plans: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The Airflow task ids of every pipeline of the plans (the tasks whose metrics the view reads)."""
    return [str(p["airflow_task_id"]) for plan in plans.values() for p in plan.get("pipelines", ())
            if p.get("airflow_task_id")]


def task_link(dag_id: str, run_id: str, task_id: str, try_number: int | None = None) -> str:
    """The Airflow UI's page of a task instance (its log), relative to the UI's base URL."""
    link = f"dags/{quote(dag_id, safe='')}/runs/{quote(run_id, safe='')}/tasks/{quote(task_id, safe='')}"
    return link + (f"?try_number={try_number}" if try_number else "")


#: a running BATCH pipeline's progress line, and a STREAMING one's micro-batch line (runtime/progress.py,
#: runtime/streaming.py)
_PROGRESS = re.compile(r"progress after (\d+) s: read ([\d,]+|n/a) rows.*?, wrote ([\d,]+|n/a) rows")
_BATCH = re.compile(r"micro-batch \d+: .*?\((\d+) micro-batch\(es\), ([\d,]+) rows written so far")


def live_progress(lines: Iterable[str]) -> dict[str, Any] | None:
    """The counts of the last progress line in a running pipeline's log (None: none yet)."""
    found: dict[str, Any] | None = None
    for line in lines:
        if m := _PROGRESS.search(line):
            found = {"seconds": int(m[1]), "read_count": _number(m[2]), "write_count": _number(m[3])}
        elif m := _BATCH.search(line):
            found = {"micro_batches": int(m[1]), "read_count": None, "write_count": _number(m[2])}
    return found


def _number(text: str) -> int | None:
    return None if text == "n/a" else int(text.replace(",", ""))


#: a pipeline's status by its task's state, while it has no metrics (a running task, one that died)
_TASK_STATUS = {"failed": FAILED, "upstream_failed": FAILED, "running": TABLE_RUNNING, "success": FINISHED}


def _plan_tables(p: Mapping[str, Any]) -> list[str]:
    """The tables a pipeline's plan names: those its sinks receive, else those its sources produce."""
    for kind in ("sink", "source"):
        found = [str(t) for v in p.get("vertices", ()) if v.get("kind") == kind for t in (v.get("tables") or ())]
        if found:
            return list(dict.fromkeys(found))
    return []


def pipeline_tables(p: Mapping[str, Any], state: str, metrics: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """A pipeline's tables with rows read and written, failed first: from its metrics, or, before it
    reported, the tables of its plan with its task's state (failed, running, finished or not run yet)."""
    if not metrics:
        status = _TASK_STATUS.get(state, "")
        metrics = {"status": status, "pipeline": p.get("id"), "task_id": p.get("airflow_task_id") or ""}
    return [t.to_dict() for t in table_counts(metrics, _plan_tables(p))]


def _pipeline(dag_id: str, run_id: str, p: Mapping[str, Any], ti: Mapping[str, Any] | None,
              metrics: Mapping[str, Any] | None, live: Mapping[str, Any] | None = None) -> dict[str, Any]:
    task_id = p.get("airflow_task_id")
    state = "not a task of this DAG" if not task_id else str((ti or {}).get("state") or "none")
    m = metrics or (live if state == "running" else None) or {}
    error = m.get("error") or {}
    return {
        **p, "state": state, "try_number": (ti or {}).get("try_number"), "live": not metrics and bool(m),
        "start": (ti or {}).get("start_date"), "end": (ti or {}).get("end_date"),
        "duration": (ti or {}).get("duration"),
        "read_count": m.get("read_count"), "write_count": m.get("write_count"),
        "per_source": m.get("per_source") or {}, "per_sink": m.get("per_sink") or {},
        "status": m.get("status"), "error": error.get("message"), "deterministic": error.get("deterministic"),
        "log_url": task_link(dag_id, run_id, task_id, (ti or {}).get("try_number")) if task_id else None,
        "spark_ui": m.get("ui_url"), "application_id": m.get("application_id"),
        "spark_connect": m.get("spark_connect"),
        "tables": pipeline_tables(p, state, metrics or _counted_live(state, live)),
    }


def _counted_live(state: str, live: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A running task's progress report as the metrics its tables are counted from, where it counts
    per table (the ``seatunnel_progress`` XCom does; a log line does not)."""
    if state != "running" or not live or not (live.get("per_table") or live.get("per_table_read")):
        return None
    return {**live, "status": TABLE_RUNNING}


def run_view(dag_id: str, run_id: str, task_instances: Iterable[Mapping[str, Any]],
             plans: Mapping[str, Mapping[str, Any]], metrics: Mapping[str, Mapping[str, Any]],
             run: Mapping[str, Any] | None = None,
             live: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The view of a DAG run: ``plans`` by prepare task id, ``metrics`` by pipeline task id (what each
    pipeline task returned, where it has), ``live`` by running pipeline task id (its ``seatunnel_progress``
    XCom, or :func:`live_progress` of its log),
    the run's task instances and the run itself."""
    live = live or {}
    tis = {str(t["task_id"]): t for t in task_instances}
    groups = []
    for prepare_id, plan in sorted(plans.items()):
        pipelines = [_pipeline(dag_id, run_id, p, tis.get(str(p.get("airflow_task_id"))),
                               metrics.get(str(p.get("airflow_task_id"))), live.get(str(p.get("airflow_task_id"))))
                     for p in plan.get("pipelines", ())]
        states = Counter(p["state"] for p in pipelines)
        group = prepare_id.rsplit(".", 1)[0] if "." in prepare_id else ""
        summary = tis.get(f"{group}.summary" if group else "summary") or {}
        groups.append({
            "group": group, "job": plan.get("job"), "mode": plan.get("mode"),
            "pipeline_count": plan.get("pipeline_count", len(pipelines)),
            "prepare": {"task_id": prepare_id, "state": (tis.get(prepare_id) or {}).get("state"),
                        "log_url": task_link(dag_id, run_id, prepare_id)},
            "summary": {"state": summary.get("state")},
            "states": {s: states[s] for s in sorted(states, key=_state_rank)},
            "read_count": sum(p["read_count"] or 0 for p in pipelines),
            "write_count": sum(p["write_count"] or 0 for p in pipelines),
            "pipelines": pipelines,
            "warnings": list(plan.get("warnings") or ()),  # the job's compile warnings (the prepare task's)
            "tables": _group_tables(pipelines),
        })
    return {"dag_id": dag_id, "run_id": run_id, "state": (run or {}).get("state"),
            "groups": groups, "active": any(g["states"].get(s) for g in groups
                                            for s in ("running", "queued", "scheduled", "up_for_retry", "none",
                                                      "restarting", "deferred"))}


def _group_tables(pipelines: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every pipeline's tables, failed first (the pipeline's task id, not the plan's, on each)."""
    rows = [TableCounts(**{**t, "task_id": p.get("airflow_task_id") or t.get("task_id") or "",
                           "pipeline": p.get("id")})
            for p in pipelines for t in p.get("tables", ())]
    return [t.to_dict() for t in table_order(rows)]


def _state_rank(state: str) -> int:
    return STATES.index(state) if state in STATES else len(STATES)
