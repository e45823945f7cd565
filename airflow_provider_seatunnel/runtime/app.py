"""The PySpark application ``spark-submit`` runs: one pipeline of a compiled plan.

    spark-submit .../runtime/app.py --plan PLAN.json --pipeline ID --run-id RUN \
        [--attempt N] [--metrics-file FILE]
    python -m airflow_provider_seatunnel.runtime.app ... --remote sc://HOST:PORT

With ``--remote`` no Spark starts here: the pipeline runs as a session of that Spark Connect server
(:func:`.remote.run_remote_pipeline`; the server's token from ``SPARK_CONNECT_AUTHENTICATE_TOKEN``,
never from the command line), and the metrics file is written the same way: a deferred task's
driver on Spark Connect (``operators/deferrable.py``).

Exit codes: 0 the pipeline committed (a STREAMING one also when SIGTERM or SIGINT stopped it: its
queries stop after their running micro-batch); 1 it failed (the metrics file says why, and
whether retrying can help); 2 the plan, the arguments or ``SEATUNNEL_FAULTS`` are unusable.

A run with the ``--run-id`` of an earlier run is a restore: sinks that committed do not
write again, a commit a killed driver left half way is finished (docs/restores.md).
``SEATUNNEL_FAULTS`` (unset in production) injects faults for restore tests
(``runtime/faults.py``). Started by spark-submit, the driver dies with spark-submit's JVM
(Linux), so a killed spark-submit never leaves a driver behind that goes on committing.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="seatunnel-pipeline")
    ap.add_argument("--plan", required=True, help="compiled plan JSON")
    ap.add_argument("--pipeline", required=True, help="pipeline number or task id")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--attempt", type=int, default=1)
    ap.add_argument("--metrics-file")
    ap.add_argument("--master", help="only when not started by spark-submit")
    ap.add_argument("--remote", help="run as a session of this Spark Connect server (sc://HOST:PORT, no token)")
    return ap.parse_args(argv)


def _die_with_parent() -> None:
    """When spark-submit's JVM (our parent) dies, SIGKILL this driver too (Linux ``PR_SET_PDEATHSIG``).

    Without it a killed spark-submit leaves the Python driver running until its next call into
    the JVM fails, and a commit (pure Python file moves) would go on, or be rolled back, behind
    the back of the retry that the scheduler starts meanwhile."""
    if not sys.platform.startswith("linux") or "PYSPARK_GATEWAY_PORT" not in os.environ:
        return  # not started by spark-submit
    try:
        import ctypes

        parent = os.getppid()
        try:  # already orphaned (spark-submit killed before we got here): our parent is no JVM any more
            if not Path(f"/proc/{parent}/comm").read_text().startswith("java"):
                os.kill(os.getpid(), signal.SIGKILL)
        except OSError:
            pass
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0 and os.getppid() != parent:  # 1 = PR_SET_PDEATHSIG
            os.kill(os.getpid(), signal.SIGKILL)  # the parent died before the call
    except (OSError, AttributeError):  # no prctl: keep the default behaviour
        pass


def _stop_on_sigterm(log: logging.Logger, label: str, stop: threading.Event | None = None) -> threading.Event:
    """An event SIGTERM (and SIGINT) sets (``stop``, or a new one): a streaming pipeline then stops its
    queries gracefully (running micro-batches finish and commit; a stop before they started starts none)
    and exits 0 with what it wrote. Installed as soon as the plan is read, so that a SIGTERM while Spark
    starts stops the stream too, and again once the session exists (PySpark sets its own SIGINT handler)."""
    stop = stop or threading.Event()

    def handle(signum: int, _frame: Any) -> None:
        log.warning("%s: %s received: stopping the streaming queries after their running micro-batch", label,
                    signal.Signals(signum).name)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)
    return stop


def main(argv: list[str] | None = None) -> int:
    # imports here: the package must be importable when spark-submit runs this file directly
    from airflow_provider_seatunnel.runtime.pyspark_internals import prepare_driver_python

    prepare_driver_python()  # PySpark from the installed, byte-compiled package
    from airflow_provider_seatunnel.plan.model import JobPlan
    from airflow_provider_seatunnel.runtime import faults
    from airflow_provider_seatunnel.runtime.context import now
    from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
    from airflow_provider_seatunnel.runtime.jars import pipeline_jars
    from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics
    from airflow_provider_seatunnel.runtime.progress import file_publisher, progress_file_of
    from airflow_provider_seatunnel.runtime.session import application_settings, get_session
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError, error_from
    from airflow_provider_seatunnel.spi.sessions import end_run

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("seatunnel.runtime")
    _die_with_parent()
    args = _args(argv)
    try:
        plan = JobPlan.from_dict(json.loads(Path(args.plan).read_text()))
        pipeline = plan.pipeline(args.pipeline)
    except (OSError, ValueError, KeyError) as e:
        log.error("cannot read the plan %s: %s", args.plan, e)
        return 2
    label = f"Pipeline [({pipeline.id}/{len(plan.pipelines)})] {pipeline.task_id}"
    stop = _stop_on_sigterm(log, f"Job {plan.name}, {label}") if (
        plan.mode == "STREAMING" and not args.remote) else None
    started = now()
    try:
        options = faults.from_environment()
        faults.check_plan(options[faults.OPTION].faults if options else (), plan)
    except faults.FaultSpecError as e:
        log.error("Job %s, %s: %s", plan.name, label, e)
        if args.metrics_file:
            PipelineMetrics.failed(pipeline, args.run_id, args.attempt, started,
                                   RuntimeConfigError(str(e), pipeline=pipeline.task_id)).write(args.metrics_file)
        return 2
    if options:
        log.warning("Job %s, %s: fault injection is ON (%s=%s)", plan.name, label, faults.ENV,
                    os.environ.get(faults.ENV))
    if args.remote:
        return _run_on_connect(args, plan, pipeline, options, log, label)
    spark = None
    try:
        spark = get_session(f"{plan.name}:{pipeline.task_id}", plan.env, args.master, pipeline_jars(plan, pipeline),
                            application_settings(plan, pipeline))
        spark.sparkContext.setLogLevel("WARN")
        log.info("Job %s, %s: running (attempt %s, run %s)", plan.name, label, args.attempt, args.run_id)
        ctx = RunContext(spark=spark, plan=plan, pipeline=pipeline, run_id=args.run_id, attempt=args.attempt,
                         options=options, on_progress=file_publisher(progress_file_of(args.metrics_file))
                         if args.metrics_file else None)
        if plan.mode == "STREAMING":  # Structured Streaming queries; SIGTERM stops them between micro-batches
            from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

            stop = _stop_on_sigterm(log, f"Job {plan.name}, {label}", stop)
            metrics = run_streaming_pipeline(ctx, on_event=lambda msg: log.info("%s: %s", label, msg), stop=stop)
        else:
            metrics = run_pipeline(ctx, on_event=lambda msg: log.info("%s: %s", label, msg))
        finished = replace(PipelineMetrics.from_dict(metrics), application_id=spark.sparkContext.applicationId)
        finished = finished.with_extra(ui_url=spark.sparkContext.uiWebUrl)
        if args.metrics_file:
            finished.write(args.metrics_file)
        log.info("Job %s, %s: FINISHED, read %s, wrote %s", plan.name, label, finished.read_count,
                 finished.write_count)
        return 0
    except BaseException as e:  # every failure ends in the metrics file
        error = error_from(e, pipeline=pipeline.task_id, settings=plan.env)  # what happened, and if a retry helps
        log.error("Job %s, %s: FAILED: %s\n%s", plan.name, label, error, traceback.format_exc())
        if args.metrics_file:
            PipelineMetrics.failed(pipeline, args.run_id, args.attempt, started, error, application_id=(
                spark.sparkContext.applicationId if spark is not None else None)).write(args.metrics_file)
        return 1
    finally:
        if spark is not None:
            end_run(spark)  # a streaming run's connection pools (a BATCH run closed its own)
            jvm = spark.sparkContext._jvm
            spark.stop()
            _close_filesystems(jvm)


def _run_on_connect(args: argparse.Namespace, plan: Any, pipeline: Any, options: Any, log: logging.Logger,
                    label: str) -> int:
    """Run the pipeline as a session of the Spark Connect server ``--remote`` names; its metrics (the
    plan's secrets and the token masked, in what is logged too) to the metrics file. 0: it committed;
    1: it failed (the metrics say why); 2: the address is unusable (a token in it included)."""
    from airflow_provider_seatunnel.runtime.launcher import secret_values
    from airflow_provider_seatunnel.runtime.progress import file_publisher, progress_file_of
    from airflow_provider_seatunnel.runtime.remote import (
        TOKEN_ENV,
        Remote,
        RemoteAddressError,
        quiet_client_logs,
        run_remote_pipeline,
    )
    from airflow_provider_seatunnel.spi.secrets import scrub

    try:
        remote = Remote.parse(args.remote)
        if remote.token is not None:
            raise RemoteAddressError(f"no token on the command line: set {TOKEN_ENV}")
    except RemoteAddressError as e:
        log.error("Job %s, %s: --remote: %s", plan.name, label, e)
        return 2
    secrets = [*secret_values(plan), os.environ.get(TOKEN_ENV)]
    quiet_client_logs()
    metrics = run_remote_pipeline(
        remote, plan, pipeline, args.run_id, args.attempt, options=options, label=label,
        say=lambda msg: log.info("Job %s, %s", plan.name, scrub(msg, secrets)),
        on_progress=file_publisher(progress_file_of(args.metrics_file)) if args.metrics_file else None,
    ).redacted(secrets)
    if args.metrics_file:
        metrics.write(args.metrics_file)
    if metrics.ok:
        log.info("Job %s, %s: FINISHED, read %s, wrote %s", plan.name, label, metrics.read_count, metrics.write_count)
        return 0
    log.error("Job %s, %s: FAILED%s: %s", plan.name, label, metrics.where, metrics.message)
    return 1


def _close_filesystems(jvm: Any) -> None:
    """Close the Hadoop file systems the run opened, once Spark stopped: some hold threads that keep
    the driver's JVM from exiting (Hadoop's SFTP client keeps its SSH sessions on non-daemon threads)."""
    try:
        jvm.org.apache.hadoop.fs.FileSystem.closeAll()
    except Exception as e:  # never hide the run's own outcome
        logging.getLogger("seatunnel.runtime").warning("could not close Hadoop's file systems: %s", e)


if __name__ == "__main__":
    sys.exit(main())
