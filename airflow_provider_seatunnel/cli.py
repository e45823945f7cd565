"""``seatunnel-airflow``: validate, plan and run SeaTunnel job configs.

Everything printed goes through :func:`_out`, which escapes terminal control characters.
Exit codes: 0 success, a STREAMING ``run`` stopped by SIGTERM or SIGINT included (its queries
stop after their running micro-batch); 1 a pipeline failed (``run``); 2 a bad config (ConfigError)
or bad arguments. A ConfigError is printed as its message, never as a traceback. What is printed
hides secrets by :mod:`.spi.secrets`' rule; ``run`` removes its work directory (the plan with
its secrets, the properties files, metrics and logs) when it ends, unless ``--keep-work-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from . import __version__
from .config.errors import ConfigError, Problem, escape_controls
from .config.variables import split_cli_variables

EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="seatunnel-airflow",
                                 description="Compile Apache SeaTunnel job configs into pipelines for Spark.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="{validate,plan,run}")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("config", help="job config file (.conf/.hocon, .json or .sql)")
        p.add_argument("-i", "--variable", action="append", default=[], metavar="K=V",
                       help="set a variable (repeatable; K=V,K2=V2 also works)")
        p.add_argument("--format-config", dest="config_format", choices=("hocon", "json", "sql"),
                       help="config format (default: from the file extension)")

    v = sub.add_parser("validate", help="check a config; exit 2 with every error found")
    common(v)
    v.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p = sub.add_parser("plan", help="print the pipelines a config compiles to")
    common(p)
    p.add_argument("--format", choices=("text", "json", "dot"), default="text", help="output format")
    p.add_argument("--no-cache", action="store_true", help="compile without the plan cache")
    r = sub.add_parser("run", help="compile, then run the pipelines with spark-submit (or on a Spark Connect "
                       "server: --remote)")
    common(r)
    r.add_argument("--pipeline", action="append", metavar="ID",
                   help="run only this pipeline (number or task id; repeatable); default: all")
    r.add_argument("--master", help="Spark master (default: env spark.master, else local[*])")
    r.add_argument("--run-id", help="identity of this run (default: manual__<time>); a rerun with the id of an "
                   "earlier run is a restore: sinks that committed are not written again, a commit left half way "
                   "is finished")
    r.add_argument("--attempt", type=_attempt, default=1, metavar="N",
                   help="retry number of this run (default 1): a restore of a failed run passes 2, 3, ... "
                        "(the pipelines see it as the Airflow try number)")
    r.add_argument("--metrics-file", help="write the job's metrics as JSON here")
    r.add_argument("--work-dir", help="directory for the plan file, Spark properties files and pipeline logs "
                   "(default: a new temporary directory). Removed after the run, failed or not; of a directory "
                   "that existed before, only the files the run wrote are removed")
    r.add_argument("--keep-work-dir", action="store_true",
                   help="keep the work directory after the run (it holds the plan with its secrets, readable by "
                        "its owner only, and the pipelines' logs)")
    r.add_argument("--max-parallel", type=int, help="pipelines running at once (default: all)")
    r.add_argument("--remote", metavar="sc://HOST:PORT",
                   help="run each pipeline as a session of this Spark Connect server, from this process, instead "
                        "of a Spark application of its own (spark-submit). Its token comes from the environment "
                        "variable SPARK_CONNECT_AUTHENTICATE_TOKEN, never from the command line")
    return ap


def _out(text: str, file: Any = None) -> None:
    """Print ``text`` (to stdout, or ``file``) with its terminal control characters escaped: the one
    place the command line prints, so that a config's plugin name, key or value holding an escape
    sequence (``\\x1b[2J``), a carriage return or a bidi override cannot rewrite the terminal."""
    print(escape_controls(str(text)), file=file if file is not None else sys.stdout)


def _attempt(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, found {text!r}")
    return value


def _print_problems(problems: Sequence[Problem], stream=None) -> None:
    stream = stream or sys.stderr
    for p in problems:
        _out(("error: " if p.severity == "error" else "") + p.format(), file=stream)


def cmd_validate(args: argparse.Namespace) -> int:
    from .plan.compiler import validate_job

    variables = split_cli_variables(args.variable)
    errors, warnings, plan = validate_job(args.config, variables, format=args.config_format)
    errors = [Problem(**{**e.to_dict(), "severity": "error"}) for e in errors]
    if args.format == "json":
        _out(json.dumps({"valid": not errors, "errors": [e.to_dict() for e in errors],
                          "warnings": [w.to_dict() for w in warnings],
                          "pipelines": len(plan.pipelines) if plan else None}, indent=2))
    else:
        _print_problems(warnings)
        _print_problems(errors)
        if not errors and plan is not None:
            n = len(plan.pipelines)
            _out(f"{args.config}: valid ({n} pipeline{'s' if n != 1 else ''})")
    return EXIT_CONFIG if errors else EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan.compiler import compile_job
    from .plan.render import RENDERERS

    variables = split_cli_variables(args.variable)
    plan = compile_job(args.config, variables, format=args.config_format, use_cache=not args.no_cache)
    rendered = RENDERERS[args.format](plan)  # JSON: the secrets redacted where they stand
    if args.format != "json":  # a warning or a note quoting a secret's value: masked in the text too
        from .spi.secrets import hidden, scrub

        rendered = scrub(rendered, [value for _, value in hidden(plan.to_dict(secrets=True), plan.to_dict())])
    _out(rendered)
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from .plan.compiler import compile_job
    from .runtime import faults
    from .runtime.launcher import run_pipelines
    from .runtime.pyspark_install import PySparkMismatch, ensure_consistent
    from .spi import NOT_RUNNABLE

    variables = split_cli_variables(args.variable)
    plan = compile_job(args.config, variables, format=args.config_format)
    blockers = [Problem(**{**w, "severity": "error"}) for w in plan.warnings if w.get("code") == NOT_RUNNABLE]
    if blockers:
        _print_problems(blockers)
        return EXIT_CONFIG
    try:
        pipelines = [plan.pipeline(ref) for ref in args.pipeline] if args.pipeline else list(plan.pipelines)
    except KeyError as e:
        _out(f"error: {e.args[0]}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        faults.check_plan(faults.parse(os.environ.get(faults.ENV)), plan)
    except faults.FaultSpecError as e:
        _out(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if os.environ.get(faults.ENV, "").strip():
        _out(f"warning: fault injection is ON: {faults.ENV}={os.environ[faults.ENV]}", file=sys.stderr)
    try:
        ensure_consistent()  # before any spark-submit: a PySpark mixing releases
    except PySparkMismatch as e:
        _out(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if args.remote:
        return _run_remote(args, plan, pipelines)
    master = args.master or str(plan.env.get("spark.master") or "local[*]")
    job = run_pipelines(plan, pipelines, master=master, run_id=args.run_id, work_dir=args.work_dir,
                        max_parallel=args.max_parallel, attempt=args.attempt, keep_work_dir=args.keep_work_dir,
                        stop=_stop_on_signals(plan))
    return _report(args, job)


def _stop_on_signals(plan: Any) -> threading.Event | None:
    """A STREAMING run's stop: SIGTERM or SIGINT to this command sets it, and the pipelines' queries stop
    between micro-batches (their drivers get SIGTERM); the command then exits 0 with what they wrote.
    None for a BATCH run (the signals keep their default: the command ends)."""
    if str(plan.mode).upper() != "STREAMING":
        return None
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _run_remote(args: argparse.Namespace, plan: Any, pipelines: list[Any]) -> int:
    """``run --remote``: the pipelines as Spark Connect sessions (:mod:`.runtime.remote`)."""
    from .runtime import faults
    from .runtime.remote import Remote, RemoteAddressError, run_remote_pipelines

    try:
        remote = Remote.parse(args.remote)
    except RemoteAddressError as e:
        _out(f"error: --remote: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if remote.token is not None:  # `ps` shows a command line to every user of the machine
        _out("error: --remote: no token on the command line: set SPARK_CONNECT_AUTHENTICATE_TOKEN in the "
              "environment", file=sys.stderr)
        return EXIT_CONFIG
    unused = [name for name in ("master", "work_dir") if getattr(args, name)]
    if unused or args.keep_work_dir:
        names = [f"--{n.replace('_', '-')}" for n in unused] + (["--keep-work-dir"] if args.keep_work_dir else [])
        _out(f"error: {', '.join(names)} do not apply with --remote (the server has its master; nothing is "
              "written locally)", file=sys.stderr)
        return EXIT_CONFIG
    stop = _stop_on_signals(plan) or threading.Event()  # STREAMING: the queries stop between micro-batches
    job = run_remote_pipelines(plan, pipelines, remote, run_id=args.run_id, attempt=args.attempt,
                               max_parallel=args.max_parallel, options=faults.from_environment(), stop=stop)
    return _report(args, job)


def _report(args: argparse.Namespace, job: dict[str, Any]) -> int:
    """Print the job's summary and each failure; write ``--metrics-file``; the exit code."""
    from .runtime.metrics import PipelineMetrics
    from .runtime.summary import render_summary

    _out(render_summary(job))
    unwritten = False
    if args.metrics_file:  # a fresh 0600 file renamed over the name: a symlink there is replaced, never followed
        from .spi.safe_files import write_atomic

        try:
            write_atomic(args.metrics_file, json.dumps(job, indent=2, default=str), 0o600, "the metrics file")
        except OSError as e:
            _out(f"error: --metrics-file {args.metrics_file}: {e.strerror or e}", file=sys.stderr)
            unwritten = True
    failed = [m for m in map(PipelineMetrics.from_dict, job["pipelines"]) if not m.ok]
    for m in failed:
        _out(f"error: pipeline {m.pipeline} ({m.task_id}) failed{m.where}: {m.message}", file=sys.stderr)
    if failed and not args.keep_work_dir and not args.remote:
        _out("note: the work directory with the pipelines' logs was removed; run again with --keep-work-dir "
              "to keep it", file=sys.stderr)
    return EXIT_FAILED if failed or unwritten else EXIT_OK


COMMANDS = {"validate": cmd_validate, "plan": cmd_plan, "run": cmd_run}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as e:
        _print_problems(e.warnings)
        _print_problems(e.problems)
        return EXIT_CONFIG
    except BrokenPipeError:  # the reader went away (`plan ... | head`): nothing left to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's flush at exit would fail again
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
