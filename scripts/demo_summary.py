"""Print a finished DAG run's SeaTunnel results from Airflow's metadata database.

Usage: ``python scripts/demo_summary.py DAG_ID [--run-id RUN_ID]`` (default: the DAG's latest run), with the
same Airflow environment (``AIRFLOW_HOME``, database) the run used. It reads every task's XCom: the
pipelines' metrics (what ``SeaTunnelOperator`` returns) make SeaTunnel's per-pipeline tables and its
"Job Statistic Information" (``runtime/summary.py``); the tasks' rendered ``variables`` tell where the
output went. Exits 1 when the run did not succeed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any


def _is_pipeline_metrics(value: Any) -> bool:
    return isinstance(value, Mapping) and "pipeline" in value and "status" in value and "pipelines" not in value


def _size(path: str) -> tuple[int, int]:
    """Visible data files under ``path`` (SeaTunnel's staging and commit records are hidden) and their bytes."""
    files = size = 0
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in names:
            if not name.startswith((".", "_")):
                files += 1
                size += os.path.getsize(os.path.join(root, name))
    return files, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dag_id")
    parser.add_argument("--run-id", help="default: the DAG's latest run")
    parser.add_argument("--per-pipeline", action="store_true", help="a table per pipeline too, not only the job's")
    args = parser.parse_args(argv)

    from airflow.models.dagrun import DagRun
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from airflow_provider_seatunnel.runtime.summary import job_metrics, render_summary

    with create_session() as session:
        query = select(DagRun).where(DagRun.dag_id == args.dag_id)
        query = query.where(DagRun.run_id == args.run_id) if args.run_id else query.order_by(DagRun.id.desc())
        run = session.scalars(query.limit(1)).first()
        if run is None:
            print(f"error: no run of DAG {args.dag_id!r}" + (f" with run id {args.run_id!r}" if args.run_id else ""),
                  file=sys.stderr)
            return 1
        tis = {ti.task_id: str(ti.state) for ti in session.scalars(
            select(TaskInstance).where(TaskInstance.dag_id == args.dag_id, TaskInstance.run_id == run.run_id))}
        xcoms = {x.task_id: XComModel.deserialize_value(x) for x in session.scalars(
            XComModel.get_many(run_id=run.run_id, dag_ids=args.dag_id, key="return_value"))}
        rendered = {r.task_id: r.rendered_fields for r in session.scalars(
            select(RenderedTaskInstanceFields).where(RenderedTaskInstanceFields.dag_id == args.dag_id,
                                                     RenderedTaskInstanceFields.run_id == run.run_id))}
        state, run_id = str(run.state), run.run_id

    print(f"DAG run {args.dag_id} {run_id}: {state}")
    pipelines = []
    for task_id in sorted(tis):
        m = xcoms.get(task_id)
        counts = (f"read {m.get('read_count', 0)}, wrote {m.get('write_count', 0)}, {m.get('seconds') or 0:.1f} s"
                  if _is_pipeline_metrics(m) else "")
        print(f"  {task_id:<52} {tis[task_id]:<10} {counts}".rstrip())
        if _is_pipeline_metrics(m):
            # the Airflow task id, as the UI shows it (the metrics carry the id compiled from rendered variables)
            pipelines.append({**m, "task_id": task_id})

    outputs = sorted({str(v) for fields in rendered.values() for v in ((fields or {}).get("variables") or {}).values()
                      if isinstance(v, str) and os.path.isdir(v)})
    for path in outputs:
        files, size = _size(path)
        print(f"output: {path}  ({files} file{'s' if files != 1 else ''}, {size / 1024:.0f} KiB)")

    if pipelines:
        pipelines.sort(key=lambda p: p.get("pipeline", 0))
        start = min((p.get("start") or "" for p in pipelines), default="")
        end = max((p.get("end") or "" for p in pipelines), default="")
        job = job_metrics(args.dag_id, pipelines, start, end)
        print(render_summary(job if args.per_pipeline else {**job, "pipelines": []}), end="")
    else:
        print("no pipeline metrics in XCom: a failed task returns none (its log has its summary and error)")
    return 0 if state == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
