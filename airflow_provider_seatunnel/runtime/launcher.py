"""The spark-submit contract of a pipeline, and the command line's ``run`` (pipelines concurrently).

A :class:`Submission` says how one pipeline is submitted: the application (``runtime/app.py``),
its arguments (plan file, pipeline, run id, attempt, metrics file), the Spark settings (the
job's ``env`` and the jars its connectors need), the files it ships and the environment
spark-submit needs. The command line turns it into a spark-submit command
(:meth:`Submission.command`), the Airflow hook into a ``SparkSubmitHook``. No Spark setting of
the job reaches a command line (where ``ps`` shows it to every user): they all go to a 0600
properties file (:func:`write_properties_file`), as the plan's secrets stay in the 0600 plan file.

Under ``run`` each pipeline is its own Spark application; its full log (Spark's stack traces
included) goes to a file, and only progress lines and the outcome reach the screen. The work
directory (plan, properties, metrics and logs) is removed after the run unless it is to be kept;
of a directory that existed before, only the files the run wrote go.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
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
from typing import IO, TYPE_CHECKING, Any

from ..plan.model import JobPlan, PipelinePlan
from ..spi.errors import PipelineError, exit_failure
from ..spi.safe_files import UnsafePath, open_write, write_atomic
from ..spi.secrets import embedded, hidden, redaction, scrub
from .context import now
from .jars import pipeline_jars
from .jvm_startup import ClassArchive, archive_for, spark_defaults, spark_defaults_file, startup_conf
from .lean_home import lean_environment
from .metrics import PipelineMetrics
from .session import application_settings, spark_conf

if TYPE_CHECKING:
    import psutil

APP_FILE = Path(__file__).with_name("app.py")
PROGRESS_MARK = "seatunnel.runtime:"
#: What spark-submit needs from our environment to find PySpark, this Python and this package
#: (plus the test-only fault injection switch, off unless set, and the settings the driver reads).
ENV_KEYS = ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PATH", "PYTHONPATH", "SEATUNNEL_FAULTS",
            "SEATUNNEL_CHECKPOINT_ROOT", "SEATUNNEL_JDBC_DRIVER_PATH", "SPARK_LAUNCHER_OPTS")
#: The Java options of spark-submit's launcher JVM (``spark-class`` starts it only to print the driver's
#: command line): the client compiler only and the serial collector, a third less CPU for a program that
#: runs a fraction of a second. ``SPARK_LAUNCHER_OPTS`` set in the environment wins.
LAUNCHER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def pyspark_home() -> Path:
    """Where the installed PySpark keeps Spark (bin/, jars/): our SPARK_HOME."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("PySpark is not installed: pip install airflow-provider-seatunnel")
    return Path(next(iter(spec.submodule_search_locations)))


def submit_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment spark-submit needs: SPARK_HOME, our Python, our venv first on PATH, the
    provider's settings as this process reads them (Airflow's ``[seatunnel]`` section included), and
    the launcher JVM's options (:data:`LAUNCHER_JAVA_OPTIONS`) unless set."""
    from ..settings import environment

    env = dict(os.environ if base is None else base)
    env.update(environment(env))
    home = pyspark_home()
    env.setdefault("SPARK_HOME", str(home))
    env.setdefault("SPARK_LAUNCHER_OPTS", LAUNCHER_JAVA_OPTIONS)
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON") or sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = env.get("PYSPARK_DRIVER_PYTHON") or sys.executable
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def write_plan_file(plan: JobPlan, directory: Path) -> Path:
    """The plan with its secrets, readable by its owner only (mode 0600). A directory this call
    creates is made 0700; the mode of one that exists is left as it is (``--work-dir /tmp`` must not
    lock others out of /tmp): the file's own mode keeps the secrets private."""
    if not directory.exists():  # made here 0700 from the start; one that appeared meanwhile: FileExistsError
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=stat.S_IRWXU)
        os.chmod(directory, stat.S_IRWXU)  # whatever the umask
    return _write_private(directory / "plan.json", json.dumps(plan.to_dict(secrets=True)))


def _write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` as a new file only its owner can read (0600): written under a
    fresh name, then renamed over ``path``, so neither a file nor a symbolic link that someone else
    left at ``path`` (in a shared directory) ever receives it (:func:`..spi.safe_files.write_atomic`)."""
    write_atomic(str(path), text, 0o600, "the private file")
    return path


def secret_values(plan: JobPlan) -> list[Any]:
    """The values the plan's redaction hides (:mod:`..spi.secrets`), and the secret ``name=value``
    parts of those that are strings: what no log or metric may show."""
    values = [value for _, value in hidden(plan.to_dict(secrets=True), plan.to_dict())]
    rule = redaction(plan.env)
    return [*values, *(part for value in values for part in embedded(value, rule))]


_PROPERTIES_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}


def _properties_text(text: str, key: bool) -> str:
    """``text`` escaped for a Java properties file (as ``java.util.Properties.load`` reads it back):
    backslashes and line breaks always; in a key also the separators, comment marks and spaces; in a
    value a leading space."""
    out = "".join(_PROPERTIES_ESCAPES.get(c, "\\" + c if key and c in " =:#!" else c) for c in text)
    return "\\" + out if not key and out.startswith(" ") else out


def write_properties_file(conf: Mapping[str, str], path: Path,
                          environ: Mapping[str, str] | None = None) -> Path | None:
    """The Spark settings ``conf`` as a properties file readable by its owner only (0600), or None
    when there are none. spark-submit reads ``spark-defaults.conf`` only without
    ``--properties-file``: that file's settings (of ``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``
    in ``environ``, default ``os.environ``) are carried over first, so ``conf`` wins over them.
    (Spark trims the values it reads from such a file.)"""
    if not conf:
        return None
    defaults = spark_defaults_file(os.environ if environ is None else environ)
    lines = [defaults.read_text(encoding="utf-8").rstrip("\n")] if defaults is not None else []
    lines += [f"{_properties_text(key, True)} {_properties_text(value, False)}" for key, value in sorted(conf.items())]
    return _write_private(path, "\n".join(lines) + "\n")


def app_arguments(plan_file: Path, pipeline: PipelinePlan, run_id: str, attempt: int,
                  metrics_file: Path | None) -> list[str]:
    """The arguments of ``runtime/app.py`` for one pipeline."""
    args = ["--plan", str(plan_file), "--pipeline", str(pipeline.id), "--run-id", str(run_id),
            "--attempt", str(int(attempt))]
    return [*args, "--metrics-file", str(metrics_file)] if metrics_file is not None else args


@dataclass(frozen=True)
class Submission:
    """How one pipeline is submitted (see the module docstring); build it with :meth:`of`.

    ``conf`` are its Spark settings (the job's ``env`` ``spark.*`` keys, the base settings and
    ``spark.jars`` with the ``jars`` its connectors need): they only ever go to a 0600 properties
    file, never to a command line. ``env`` is what spark-submit's environment must hold on top of
    the caller's (empty for a driver on the cluster, whose paths mean nothing here); ``files`` are
    shipped with ``--files``."""

    name: str
    application: str
    application_args: tuple[str, ...]
    conf: Mapping[str, str]
    jars: tuple[str, ...]
    env: Mapping[str, str]
    files: tuple[str, ...] = ()

    @classmethod
    def of(cls, plan: JobPlan, pipeline: PipelinePlan, plan_file: Path, run_id: str, attempt: int = 1,
           metrics_file: Path | None = None, *, on_cluster: bool = False) -> Submission:
        """The submission of ``pipeline``. With the driver on the cluster (``on_cluster``) the plan
        file travels with ``--files`` and is read from the driver's working directory, and no
        metrics file comes back. Refuses a PySpark that mixes releases (:mod:`.pyspark_install`)."""
        from .pyspark_install import ensure_consistent

        ensure_consistent()
        jars = pipeline_jars(plan, pipeline)
        env: dict[str, str] = {}
        files: tuple[str, ...] = ()
        if on_cluster:
            args, files = app_arguments(Path(plan_file.name), pipeline, run_id, attempt, None), (str(plan_file),)
        else:
            args = app_arguments(plan_file, pipeline, run_id, attempt, metrics_file)
            environ = submit_environment()
            env = {k: environ[k] for k in ENV_KEYS if k in environ}
        return cls(name=f"{plan.name}:{pipeline.task_id}", application=str(APP_FILE), application_args=tuple(args),
                   conf=dict(sorted(spark_conf(plan.env, jars, application_settings(plan, pipeline)).items())),
                   jars=tuple(jars), env=env, files=files)

    def command(self, master: str, properties_file: Path | None = None) -> list[str]:
        """The spark-submit command line (PySpark's own ``spark-submit``); ``properties_file``
        holds :attr:`conf` (:func:`write_properties_file`): no setting is on the line itself."""
        cmd = [str(pyspark_home() / "bin" / "spark-submit"), "--master", master, "--name", self.name]
        if properties_file is not None:
            cmd += ["--properties-file", str(properties_file)]
        if self.files:
            cmd += ["--files", ",".join(self.files)]
        return [*cmd, self.application, *self.application_args]


def launch_environment(submission: Submission, master: str) -> dict[str, str]:
    """The environment spark-submit runs ``submission`` with on this machine: ours with the submission's,
    and for a local ``master`` the lean Spark home (:mod:`.lean_home`) unless a setting asks for what it
    leaves out."""
    env = {**os.environ, **submission.env}
    return lean_environment(env, pyspark_home(), master, submission.conf, spark_defaults(env))


def local_launch(submission: Submission, master: str, properties_file: Path,
                 archive: ClassArchive | None = None,
                 environ: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The command and the environment that run ``submission`` with PySpark's spark-submit on this
    machine (``environ``, default :func:`launch_environment`); its Spark settings, with the start-up
    ones (:func:`.jvm_startup.startup_conf`: no UI for a local master, the driver JVM's class
    ``archive``), are written to ``properties_file`` first."""
    env = dict(environ) if environ is not None else launch_environment(submission, master)
    conf = startup_conf(submission.conf, spark_defaults(env), master, archive)
    return submission.command(master, write_properties_file(conf, properties_file, env)), env


def submit_command(plan: JobPlan, pipeline: PipelinePlan, plan_file: Path, run_id: str, master: str,
                   metrics_file: Path, attempt: int = 1) -> list[str]:
    """The spark-submit command line for one pipeline run here. No secret is on it: the plan's stay
    in the plan file, the Spark settings go to ``pipeline-<task id>.properties`` beside it."""
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


def _follow(cmd: Sequence[str], env: Mapping[str, str], log: IO[str],
            progress: Callable[[str], None]) -> tuple[int, str]:
    """Run ``cmd``, its output into ``log`` (the pipeline's log, opened by the caller); each progress
    line of the driver goes to ``progress``. Returns the exit code and the last progress line."""
    last = ""
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(env), bufsize=1)
    assert proc.stdout is not None
    for line in proc.stdout:
        log.write(line)
        if PROGRESS_MARK in line:
            last = line.split(PROGRESS_MARK, 1)[1].strip()
            progress(last)
    return proc.wait(), last


def _launch(submission: Submission, master: str, properties_file: Path, log: IO[str],
            progress: Callable[[str], None]) -> tuple[int, str]:
    """Run ``submission`` here (:func:`local_launch`, :func:`_follow`) with the driver JVM's class archive
    (:mod:`.jvm_startup`, keyed to the Spark home :func:`launch_environment` chose): the launch that
    creates it publishes it when it exits 0."""
    environ = launch_environment(submission, master)
    archive = archive_for(submission.conf, spark_defaults(environ), environ)
    code: int | None = None
    try:
        cmd, env = local_launch(submission, master, properties_file, archive, environ)
        code, last = _follow(cmd, env, log, progress)
        return code, last
    finally:
        if archive is not None:
            archive.finish(code == 0)


def log_tail(path: Path, size: int = 64 * 1024) -> str:
    """The last ``size`` bytes of a pipeline's log (where its root cause is), or "" without one."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


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
        t0 = time.monotonic()
        try:  # the log never follows a symlink at its name (a planted one fails the pipeline, unsubmitted)
            with open_write(str(log_file), what="the pipeline's log") as log:
                self.tell(f"pipeline {p.id} {p.task_id}: submitted ({p.name}); log: {log_file}")
                code, last = _launch(submission, self.master, work_dir / f"pipeline-{p.task_id}.properties", log,
                                     lambda line: self.tell(f"pipeline {p.id}: {line}"))
        except UnsafePath as e:
            error = PipelineError(f"not submitted: {e.strerror}", pipeline=p.task_id)
            self.tell(f"pipeline {p.id} {p.task_id}: FAILED: {error}")
            return PipelineMetrics.failed(p, self.run_id, self.attempt, self.started, error)
        metrics = PipelineMetrics.read(metrics_file)
        if metrics is None or code != 0:  # the root cause from the log's end; exit 52 / OOM: not retried
            error = exit_failure(code, log_tail(log_file), {**spark_conf(self.plan.env), "spark.master": self.master},
                                 reported=metrics is not None, pipeline=p.task_id,
                                 where=(f" (last: {last})" if last and metrics is None else "") + f"; see {log_file}")
            metrics = (PipelineMetrics.failed(p, self.run_id, self.attempt, self.started, error) if metrics is None
                       else metrics.failing(error))
        if metrics.seconds is None:
            metrics = replace(metrics, seconds=round(time.monotonic() - t0, 3))
        metrics = metrics.with_extra(log=str(log_file))
        if metrics.ok:
            self.tell(f"pipeline {p.id} {p.task_id}: FINISHED (read {metrics.read_count}, "
                      f"wrote {metrics.write_count})")
        else:
            self.tell(f"pipeline {p.id} {p.task_id}: FAILED{metrics.where}: {metrics.message} (log: {log_file})")
        return metrics


@dataclass(frozen=True)
class WorkDir:
    """The command line's work directory: ``path``, and the directories this run created to get it
    (``created``, outermost first; empty when ``path`` existed before)."""

    path: Path
    created: tuple[Path, ...]

    @classmethod
    def open(cls, given: str | os.PathLike[str] | None) -> WorkDir:
        """A new private temporary directory, or ``given`` (made by :func:`write_plan_file` if missing)."""
        if not given:
            path = Path(tempfile.mkdtemp(prefix="seatunnel-run-"))
            return cls(path, (path,))
        path, missing = Path(given), []
        probe = path.absolute()
        while not probe.exists() and probe != probe.parent:
            missing.append(probe)
            probe = probe.parent
        return cls(path, tuple(reversed(missing)))

    def run_files(self, pipelines: Iterable[PipelinePlan]) -> list[Path]:
        """The files a run writes here: the plan, and each pipeline's properties, metrics and log."""
        names = ["plan.json"]
        for p in pipelines:
            names += [f"pipeline-{p.task_id}.{suffix}" for suffix in ("properties", "metrics.json", "log")]
        return [self.path / name for name in names]

    def remove(self, pipelines: Iterable[PipelinePlan]) -> None:
        """Remove what the run created: the directories it made (the parents only while empty), else
        only its own files (:meth:`run_files`), never a directory that existed before."""
        if not self.created:
            for path in self.run_files(pipelines):
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    path.unlink()
            return
        shutil.rmtree(self.created[-1], ignore_errors=True)
        for parent in reversed(self.created[:-1]):
            try:
                parent.rmdir()
            except OSError:
                break  # something else lives there now


def _forward_stop(stop: threading.Event, plan_file: Path, done: threading.Event,
                  say: Callable[[str], None]) -> None:
    """Once ``stop`` is set and until ``done``: SIGTERM to each pipeline driver of ``plan_file`` below this
    process, once each, a driver that starts later included (it stops its queries after their running
    micro-batch; a driver still starting stops them before they start)."""
    import psutil

    signalled: set[int] = set()
    while not done.wait(0.5):
        if not stop.is_set():
            continue
        for driver in pipeline_drivers(str(plan_file)):
            if driver.pid in signalled:
                continue
            signalled.add(driver.pid)
            say(f"stop requested: SIGTERM to the pipeline driver {driver.pid}; its queries stop after their "
                "running micro-batch")
            with contextlib.suppress(psutil.Error):
                driver.send_signal(signal.SIGTERM)


def run_pipelines(plan: JobPlan, pipelines: Sequence[PipelinePlan], *, master: str = "local[*]",
                  run_id: str | None = None, work_dir: Path | None = None, max_parallel: int | None = None,
                  say: Callable[[str], None] = print, attempt: int = 1, keep_work_dir: bool = False,
                  stop: threading.Event | None = None) -> dict[str, Any]:
    """Run ``pipelines`` concurrently through spark-submit; return the job's metrics.

    ``run_id`` of an earlier run makes this a restore; ``attempt`` (1, 2, ...) is the retry number
    the pipelines see (an Airflow task's try number). The work directory (``work_dir``, default a
    new temporary one) is removed afterwards, failed or not (see :meth:`WorkDir.remove`), unless
    ``keep_work_dir``: then the job's metrics name it (``work_dir``) and each pipeline's log
    (``log``). The plan's secrets are masked in what is said and in the metrics. ``stop`` (a
    STREAMING run's; the command line sets it on SIGTERM or SIGINT): once set, each pipeline's
    driver gets SIGTERM (:func:`_forward_stop`) and stops its queries gracefully."""
    from .summary import job_metrics

    secrets = secret_values(plan)
    workspace = WorkDir.open(work_dir)
    done = threading.Event()
    try:
        run = _Run(plan, write_plan_file(plan, workspace.path), run_id or default_run_id(), int(attempt), master,
                   lambda text: say(scrub(text, secrets)))
        if stop is not None:
            threading.Thread(target=_forward_stop, args=(stop, run.plan_file, done, run.tell), daemon=True,
                             name="seatunnel-stop").start()
        workers = max(1, min(max_parallel or len(pipelines), len(pipelines)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = [m.redacted(secrets) for m in pool.map(run.pipeline, pipelines)]
    finally:
        done.set()
        if not keep_work_dir:
            workspace.remove(pipelines)
    if not keep_work_dir:
        results = [replace(m, extra={k: v for k, v in m.extra.items() if k != "log"}) for m in results]
    job = job_metrics(plan.name, results, run.started, now())
    job["run_id"] = run.run_id
    job["attempt"] = run.attempt
    if keep_work_dir:
        job["work_dir"] = str(workspace.path)
    return job
