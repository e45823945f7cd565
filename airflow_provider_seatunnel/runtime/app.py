"""The PySpark application ``spark-submit`` runs: one pipeline of a compiled plan.

    spark-submit .../runtime/app.py --plan PLAN.json --pipeline ID --run-id RUN \
        [--attempt N] [--metrics-file FILE]

Exit codes: 0 the pipeline committed; 1 it failed (the metrics file says why, and
whether retrying can help); 2 the plan or arguments are unusable.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import traceback
from datetime import datetime
from pathlib import Path


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="seatunnel-pipeline")
    ap.add_argument("--plan", required=True, help="compiled plan JSON")
    ap.add_argument("--pipeline", required=True, help="pipeline number or task id")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--attempt", type=int, default=1)
    ap.add_argument("--metrics-file")
    ap.add_argument("--master", help="only when not started by spark-submit")
    return ap.parse_args(argv)


def _write_metrics(path: str | None, metrics: dict) -> None:
    if not path:
        return
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(metrics, indent=2, default=str))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    # imports here: the package must be importable when spark-submit runs this file directly
    from airflow_provider_seatunnel.plan.model import JobPlan
    from airflow_provider_seatunnel.runtime.errors import PipelineError
    from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
    from airflow_provider_seatunnel.runtime.jars import pipeline_jars
    from airflow_provider_seatunnel.runtime.session import get_session

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("seatunnel.runtime")
    args = _args(argv)
    try:
        plan = JobPlan.from_dict(json.loads(Path(args.plan).read_text()))
        pipeline = plan.pipeline(args.pipeline)
    except (OSError, ValueError, KeyError) as e:
        log.error("cannot read the plan %s: %s", args.plan, e)
        return 2
    label = f"Pipeline [({pipeline.id}/{len(plan.pipelines)})] {pipeline.task_id}"
    started = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
    spark = None
    try:
        spark = get_session(f"{plan.name}:{pipeline.task_id}", plan.env, args.master, pipeline_jars(plan, pipeline))
        spark.sparkContext.setLogLevel("WARN")
        log.info("Job %s, %s: running (attempt %s, run %s)", plan.name, label, args.attempt, args.run_id)
        ctx = RunContext(spark=spark, plan=plan, pipeline=pipeline, run_id=args.run_id, attempt=args.attempt)
        metrics = run_pipeline(ctx, on_event=lambda msg: log.info("%s: %s", label, msg))
        metrics["application_id"] = spark.sparkContext.applicationId
        _write_metrics(args.metrics_file, metrics)
        log.info("Job %s, %s: FINISHED, read %s, wrote %s", plan.name, label, metrics["read_count"],
                 metrics["write_count"])
        return 0
    except BaseException as e:  # every failure ends in the metrics file
        error = e if isinstance(e, PipelineError) else PipelineError(
            f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}",
            pipeline=pipeline.task_id)
        log.error("Job %s, %s: FAILED: %s\n%s", plan.name, label, error, traceback.format_exc())
        _write_metrics(args.metrics_file, {
            "pipeline": pipeline.id, "task_id": pipeline.task_id, "name": pipeline.name, "status": "FAILED",
            "attempt": args.attempt, "run_id": args.run_id, "start": started,
            "end": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S"),
            "read_count": 0, "write_count": 0, "failed_count": 0, "committed": False,
            "error": error.to_dict(),
            "application_id": spark.sparkContext.applicationId if spark is not None else None,
        })
        return 1
    finally:
        if spark is not None:
            spark.stop()


if __name__ == "__main__":
    sys.exit(main())
