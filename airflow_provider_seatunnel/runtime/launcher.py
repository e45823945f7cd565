"""Submit pipelines with ``spark-submit`` (the command line's ``run``), concurrently.

Each pipeline is its own Spark application; its full log (Spark's stack traces
included) goes to a file, and only progress lines and the outcome reach the screen.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from ..plan.model import JobPlan, PipelinePlan
from .jars import pipeline_jars
from .session import spark_conf

APP_FILE = Path(__file__).with_name("app.py")
PROGRESS_MARK = "seatunnel.runtime:"


def pyspark_home() -> Path:
    """Where the installed PySpark keeps Spark (bin/, jars/): our SPARK_HOME."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("PySpark is not installed: pip install airflow-provider-seatunnel")
    return Path(next(iter(spec.submodule_search_locations)))


def submit_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment spark-submit needs: SPARK_HOME, our Python, our venv first on PATH."""
    env = dict(os.environ if base is None else base)
    home = pyspark_home()
    env.setdefault("SPARK_HOME", str(home))
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON") or sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = env.get("PYSPARK_DRIVER_PYTHON") or sys.executable
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def is_pipeline_driver(pid: int, plan_file: str | None = None) -> bool:
    """Whether process ``pid`` is the Python driver of ``runtime/app.py`` (of ``plan_file``, when
    given), Linux only. Checks the executable: until spark-submit's shell script has exec'ed
    into its JVM, that process carries the same arguments."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return False
    return (exe.startswith("python") and any(w.endswith(b"runtime/app.py") for w in words)
            and (plan_file is None or os.fsencode(plan_file) in words))


def write_plan_file(plan: JobPlan, directory: Path) -> Path:
    """The plan with its secrets, readable by its owner only (mode 0600)."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, stat.S_IRWXU)
    path = directory / "plan.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(plan.to_dict(secrets=True), f)
    return path


def submit_command(plan: JobPlan, pipeline: PipelinePlan, plan_file: Path, run_id: str, master: str,
                   metrics_file: Path, attempt: int = 1) -> list[str]:
    """The spark-submit command line for one pipeline (no secrets: they stay in the plan file)."""
    cmd = [str(pyspark_home() / "bin" / "spark-submit"), "--master", master,
           "--name", f"{plan.name}:{pipeline.task_id}"]
    for key, value in sorted(spark_conf(plan.env, pipeline_jars(plan, pipeline)).items()):
        cmd += ["--conf", f"{key}={value}"]
    return [*cmd, str(APP_FILE), *app_arguments(plan_file, pipeline, run_id, attempt, metrics_file)]


def app_arguments(plan_file: Path, pipeline: PipelinePlan, run_id: str, attempt: int,
                  metrics_file: Path | None) -> list[str]:
    """The arguments of ``runtime/app.py`` for one pipeline (the command line and the Airflow hook share them)."""
    args = ["--plan", str(plan_file), "--pipeline", str(pipeline.id), "--run-id", str(run_id),
            "--attempt", str(int(attempt))]
    return [*args, "--metrics-file", str(metrics_file)] if metrics_file is not None else args


def default_run_id() -> str:
    return "manual__" + datetime.now().strftime("%Y%m%dT%H%M%S")


def _now() -> str:
    return datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")


def run_pipelines(plan: JobPlan, pipelines: Sequence[PipelinePlan], *, master: str = "local[*]",
                  run_id: str | None = None, work_dir: Path | None = None, max_parallel: int | None = None,
                  say: Callable[[str], None] = print, attempt: int = 1) -> dict[str, Any]:
    """Run ``pipelines`` concurrently through spark-submit; return the job's metrics.

    ``run_id`` of an earlier run makes this a restore; ``attempt`` (1, 2, ...) is the retry number
    the pipelines see (an Airflow task's try number)."""
    from .summary import job_metrics

    run_id = run_id or default_run_id()
    work_dir = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="seatunnel-run-"))
    plan_file = write_plan_file(plan, work_dir)
    env = submit_environment()
    lock = threading.Lock()
    started = _now()

    def one(p: PipelinePlan) -> dict[str, Any]:
        metrics_file = work_dir / f"pipeline-{p.task_id}.metrics.json"
        log_file = work_dir / f"pipeline-{p.task_id}.log"
        metrics_file.unlink(missing_ok=True)  # never report an earlier attempt's metrics
        cmd = submit_command(plan, p, plan_file, run_id, master, metrics_file, attempt)
        with lock:
            say(f"pipeline {p.id} {p.task_id}: submitted ({p.name}); log: {log_file}")
        t0 = time.monotonic()
        last = ""
        with open(log_file, "w") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                    bufsize=1)
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                if PROGRESS_MARK in line:
                    last = line.split(PROGRESS_MARK, 1)[1].strip()
                    with lock:
                        say(f"pipeline {p.id}: {last}")
            code = proc.wait()
        try:
            metrics = json.loads(metrics_file.read_text())
        except (OSError, ValueError):
            metrics = {"pipeline": p.id, "task_id": p.task_id, "name": p.name, "status": "FAILED",
                       "read_count": 0, "write_count": 0, "failed_count": 0, "start": started, "end": _now(),
                       "error": {"kind": "runtime", "deterministic": False, "plugin": None,
                                 "message": f"spark-submit exited with {code} before the pipeline reported"
                                            + (f" (last: {last})" if last else "") + f"; see {log_file}"}}
        if code != 0 and metrics.get("status") == "FINISHED":
            metrics["status"] = "FAILED"
        metrics["log"] = str(log_file)
        metrics.setdefault("seconds", round(time.monotonic() - t0, 3))
        with lock:
            if metrics["status"] == "FINISHED":
                say(f"pipeline {p.id} {p.task_id}: FINISHED (read {metrics['read_count']}, "
                    f"wrote {metrics['write_count']})")
            else:
                err = metrics.get("error") or {}
                who = f" in {err['plugin']}" if err.get("plugin") else ""
                say(f"pipeline {p.id} {p.task_id}: FAILED{who}: {err.get('message', 'unknown error')} "
                    f"(log: {log_file})")
        return metrics

    workers = max(1, min(max_parallel or len(pipelines), len(pipelines)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(one, pipelines))
    job = job_metrics(plan.name, results, started, _now())
    job["run_id"] = run_id
    job["attempt"] = int(attempt)
    job["work_dir"] = str(work_dir)
    return job
