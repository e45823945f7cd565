"""The spark-submit contract of a pipeline, and the command line's ``run`` (pipelines concurrently).

A :class:`Submission` says how one pipeline is submitted: the application (``runtime/app.py``),
its arguments (plan file, pipeline, run id, attempt, metrics file), the Spark settings (the
job's ``env`` and the jars its connectors need) split into public and sensitive ones, the files
it ships and the environment spark-submit needs. The command line turns it into a spark-submit
command (:meth:`Submission.command`), the Airflow hook into a ``SparkSubmitHook``. Sensitive
settings never reach a command line: they go to a 0600 properties file
(:func:`write_properties_file`), as the plan's secrets stay in the 0600 plan file.

Under ``run`` each pipeline is its own Spark application; its full log (Spark's stack traces
included) goes to a file, and only progress lines and the outcome reach the screen.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..plan.model import JobPlan, PipelinePlan
from ..spi.errors import PipelineError
from .context import now
from .jars import pipeline_jars
from .metrics import PipelineMetrics
from .session import spark_conf

if TYPE_CHECKING:
    import psutil

APP_FILE = Path(__file__).with_name("app.py")
PROGRESS_MARK = "seatunnel.runtime:"
#: Spark settings whose values must not appear on a command line: they go to a 0600 properties file.
SENSITIVE = re.compile(r"secret|password|token|credential|(^|[._-])key($|[._-])", re.IGNORECASE)
#: What spark-submit needs from our environment to find PySpark, this Python and this package
#: (plus the test-only fault injection switch, off unless set, and the checkpoint root).
ENV_KEYS = ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PATH", "PYTHONPATH", "SEATUNNEL_FAULTS",
            "SEATUNNEL_CHECKPOINT_ROOT")


def pyspark_home() -> Path:
    """Where the installed PySpark keeps Spark (bin/, jars/): our SPARK_HOME."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("PySpark is not installed: pip install airflow-provider-seatunnel")
    return Path(next(iter(spec.submodule_search_locations)))


def submit_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment spark-submit needs: SPARK_HOME, our Python, our venv first on PATH."""
    env = dict(os.environ if base is None else base)
    home = pyspark_home()
    env.setdefault("SPARK_HOME", str(home))
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON") or sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = env.get("PYSPARK_DRIVER_PYTHON") or sys.executable
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def write_plan_file(plan: JobPlan, directory: Path) -> Path:
    """The plan with its secrets, readable by its owner only (mode 0600). A directory this call
    creates is made 0700; the mode of one that exists is left as it is (``--work-dir /tmp`` must not
    lock others out of /tmp): the file's own mode keeps the secrets private."""
    if not directory.exists():
        directory.mkdir(parents=True)
        os.chmod(directory, stat.S_IRWXU)
    path = directory / "plan.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(plan.to_dict(secrets=True), f)
    return path


def write_properties_file(sensitive: Mapping[str, str], path: Path,
                          environ: Mapping[str, str] | None = None) -> Path | None:
    """The ``sensitive`` Spark settings as a properties file readable by its owner only (0600), or
    None when there are none. spark-submit reads ``spark-defaults.conf`` only without
    ``--properties-file``: that file's settings (of ``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``
    in ``environ``, default ``os.environ``) are carried over first."""
    if not sensitive:
        return None
    env = os.environ if environ is None else environ
    conf_dir = env.get("SPARK_CONF_DIR") or (str(Path(env["SPARK_HOME"]) / "conf") if env.get("SPARK_HOME") else None)
    defaults = Path(conf_dir) / "spark-defaults.conf" if conf_dir else None
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        if defaults is not None and defaults.is_file():
            f.write(defaults.read_text(encoding="utf-8").rstrip("\n") + "\n")
        for key, value in sorted(sensitive.items()):
            f.write(f"{key} {value}\n")
    return path


def app_arguments(plan_file: Path, pipeline: PipelinePlan, run_id: str, attempt: int,
                  metrics_file: Path | None) -> list[str]:
    """The arguments of ``runtime/app.py`` for one pipeline."""
    args = ["--plan", str(plan_file), "--pipeline", str(pipeline.id), "--run-id", str(run_id),
            "--attempt", str(int(attempt))]
    return [*args, "--metrics-file", str(metrics_file)] if metrics_file is not None else args


@dataclass(frozen=True)
class Submission:
    """How one pipeline is submitted (see the module docstring); build it with :meth:`of`.

    ``conf`` may be shown (it holds ``spark.jars``: ``jars`` are the ones it lists);
    ``sensitive_conf`` only ever goes to a properties file; ``env`` is what spark-submit's
    environment must hold on top of the caller's (empty for a driver on the cluster, whose
    paths mean nothing here); ``files`` are shipped with ``--files``."""

    name: str
    application: str
    application_args: tuple[str, ...]
    conf: Mapping[str, str]
    sensitive_conf: Mapping[str, str]
    jars: tuple[str, ...]
    env: Mapping[str, str]
    files: tuple[str, ...] = ()

    @classmethod
    def of(cls, plan: JobPlan, pipeline: PipelinePlan, plan_file: Path, run_id: str, attempt: int = 1,
           metrics_file: Path | None = None, *, on_cluster: bool = False) -> Submission:
        """The submission of ``pipeline``. With the driver on the cluster (``on_cluster``) the plan
        file travels with ``--files`` and is read from the driver's working directory, and no
        metrics file comes back."""
        jars = pipeline_jars(plan, pipeline)
        conf = spark_conf(plan.env, jars)
        sensitive = {k: v for k, v in conf.items() if SENSITIVE.search(k)}
        env: dict[str, str] = {}
        files: tuple[str, ...] = ()
        if on_cluster:
            args, files = app_arguments(Path(plan_file.name), pipeline, run_id, attempt, None), (str(plan_file),)
        else:
            args = app_arguments(plan_file, pipeline, run_id, attempt, metrics_file)
            environ = submit_environment()
            env = {k: environ[k] for k in ENV_KEYS if k in environ}
        return cls(name=f"{plan.name}:{pipeline.task_id}", application=str(APP_FILE), application_args=tuple(args),
                   conf={k: v for k, v in sorted(conf.items()) if k not in sensitive}, sensitive_conf=sensitive,
                   jars=tuple(jars), env=env, files=files)

    def command(self, master: str, properties_file: Path | None = None) -> list[str]:
        """The spark-submit command line (PySpark's own ``spark-submit``); ``properties_file``
        holds :attr:`sensitive_conf` (:func:`write_properties_file`)."""
        cmd = [str(pyspark_home() / "bin" / "spark-submit"), "--master", master, "--name", self.name]
        for key, value in self.conf.items():
            cmd += ["--conf", f"{key}={value}"]
        if properties_file is not None:
            cmd += ["--properties-file", str(properties_file)]
        if self.files:
            cmd += ["--files", ",".join(self.files)]
        return [*cmd, self.application, *self.application_args]


def local_launch(submission: Submission, master: str, properties_file: Path) -> tuple[list[str], dict[str, str]]:
    """The command and the environment that run ``submission`` with PySpark's spark-submit on this
    machine; its sensitive settings (if any) are written to ``properties_file`` first."""
    env = {**os.environ, **submission.env}
    return submission.command(master, write_properties_file(submission.sensitive_conf, properties_file, env)), env


def submit_command(plan: JobPlan, pipeline: PipelinePlan, plan_file: Path, run_id: str, master: str,
                   metrics_file: Path, attempt: int = 1) -> list[str]:
    """The spark-submit command line for one pipeline run here. No secret is on it: the plan's stay
    in the plan file, sensitive Spark settings go to ``pipeline-<task id>.properties`` beside it."""
    submission = Submission.of(plan, pipeline, plan_file, run_id, attempt, metrics_file)
    return local_launch(submission, master, plan_file.parent / f"pipeline-{pipeline.task_id}.properties")[0]


# -- processes ----------------------------------------------------------------------------------


def is_pipeline_driver(process: int | psutil.Process, plan_file: str | None = None) -> bool:
    """Whether ``process`` (a pid) is the Python driver of ``runtime/app.py`` (of ``plan_file``, when
    given). Checks the executable: until spark-submit's shell script has exec'ed into its JVM, that
    process carries the same arguments."""
    import psutil

    try:
        proc = process if isinstance(process, psutil.Process) else psutil.Process(process)
        words = proc.cmdline()
        exe = os.path.basename(proc.exe())
    except (psutil.Error, OSError):
        return False
    return (exe.startswith("python") and any(w.endswith("runtime/app.py") for w in words)
            and (plan_file is None or plan_file in words))


def pipeline_drivers(plan_file: str | None = None, root: int | None = None) -> list[psutil.Process]:
    """The pipeline drivers (of ``plan_file``, when given) among the processes below ``root``
    (default: this process, which started their spark-submit)."""
    import psutil

    try:
        below = psutil.Process(root).children(recursive=True)
    except psutil.Error:
        return []
    return [p for p in below if is_pipeline_driver(p, plan_file)]


def stop_drivers(drivers: Iterable[psutil.Process], timeout: float) -> bool:
    """SIGTERM to each driver (a STREAMING one commits its running micro-batch and stops), then wait
    until the spark-submit processes above them (or the drivers, started by this process itself)
    have exited; whether they all did within ``timeout`` seconds. Waits without reaping: the code
    that started spark-submit collects its exit code."""
    import psutil

    watched = []
    for driver in drivers:
        try:
            parent = driver.parent()
            watched.append(parent if parent is not None and parent.pid != os.getpid() else driver)
            driver.send_signal(signal.SIGTERM)
        except psutil.NoSuchProcess:
            continue
    deadline = time.monotonic() + timeout
    while True:
        if all(_exited(p) for p in watched):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


def _exited(process: psutil.Process) -> bool:
    import psutil

    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# -- the command line's run ---------------------------------------------------------------------


def default_run_id() -> str:
    """A new run id: readable time plus a random part, so two runs started in the same second never
    share one (a shared run id would make the second a restore of the first)."""
    return f"manual__{datetime.now().strftime('%Y%m%dT%H%M%S')}_{uuid.uuid4().hex[:8]}"


def _follow(cmd: Sequence[str], env: Mapping[str, str], log_file: Path,
            progress: Callable[[str], None]) -> tuple[int, str]:
    """Run ``cmd``, its output into ``log_file``; each progress line of the driver goes to
    ``progress``. Returns the exit code and the last progress line."""
    last = ""
    with open(log_file, "w") as log:
        proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(env), bufsize=1)
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            if PROGRESS_MARK in line:
                last = line.split(PROGRESS_MARK, 1)[1].strip()
                progress(last)
        return proc.wait(), last


@dataclass
class _Run:
    """One ``run`` of the command line: what its pipelines share."""

    plan: JobPlan
    plan_file: Path
    run_id: str
    attempt: int
    master: str
    say: Callable[[str], None]
    started: str = field(default_factory=now)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tell(self, text: str) -> None:
        with self.lock:
            self.say(text)

    def pipeline(self, p: PipelinePlan) -> PipelineMetrics:
        """Submit ``p``, wait for it, and return its metrics (a failure's too)."""
        work_dir = self.plan_file.parent
        metrics_file = work_dir / f"pipeline-{p.task_id}.metrics.json"
        log_file = work_dir / f"pipeline-{p.task_id}.log"
        metrics_file.unlink(missing_ok=True)  # never report an earlier attempt's metrics
        submission = Submission.of(self.plan, p, self.plan_file, self.run_id, self.attempt, metrics_file)
        cmd, env = local_launch(submission, self.master, work_dir / f"pipeline-{p.task_id}.properties")
        self.tell(f"pipeline {p.id} {p.task_id}: submitted ({p.name}); log: {log_file}")
        t0 = time.monotonic()
        code, last = _follow(cmd, env, log_file, lambda line: self.tell(f"pipeline {p.id}: {line}"))
        metrics = PipelineMetrics.read(metrics_file)
        if metrics is None:
            metrics = PipelineMetrics.failed(p, self.run_id, self.attempt, self.started, PipelineError(
                f"spark-submit exited with {code} before the pipeline reported"
                + (f" (last: {last})" if last else "") + f"; see {log_file}", pipeline=p.task_id))
        elif code != 0:
            metrics = metrics.failing(PipelineError(f"spark-submit exited with {code}; see {log_file}",
                                                    pipeline=p.task_id))
        if metrics.seconds is None:
            metrics = replace(metrics, seconds=round(time.monotonic() - t0, 3))
        metrics = metrics.with_extra(log=str(log_file))
        if metrics.ok:
            self.tell(f"pipeline {p.id} {p.task_id}: FINISHED (read {metrics.read_count}, "
                      f"wrote {metrics.write_count})")
        else:
            self.tell(f"pipeline {p.id} {p.task_id}: FAILED{metrics.where}: {metrics.message} (log: {log_file})")
        return metrics


def run_pipelines(plan: JobPlan, pipelines: Sequence[PipelinePlan], *, master: str = "local[*]",
                  run_id: str | None = None, work_dir: Path | None = None, max_parallel: int | None = None,
                  say: Callable[[str], None] = print, attempt: int = 1) -> dict[str, Any]:
    """Run ``pipelines`` concurrently through spark-submit; return the job's metrics.

    ``run_id`` of an earlier run makes this a restore; ``attempt`` (1, 2, ...) is the retry number
    the pipelines see (an Airflow task's try number)."""
    from .summary import job_metrics

    work_dir = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="seatunnel-run-"))
    run = _Run(plan, write_plan_file(plan, work_dir), run_id or default_run_id(), int(attempt), master, say)
    workers = max(1, min(max_parallel or len(pipelines), len(pipelines)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(run.pipeline, pipelines))
    job = job_metrics(plan.name, results, run.started, now())
    job["run_id"] = run.run_id
    job["attempt"] = run.attempt
    job["work_dir"] = str(work_dir)
    return job
