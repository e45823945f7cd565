"""Connect mode: a pipeline run as a Spark Connect session from this process, against a running
Spark Connect server, instead of a Spark application of its own started by spark-submit.

Nothing starts here but a thin client (no JVM): the session is a server's, created for one attempt
of one pipeline and released when it ends, so its temporary views, settings and artifacts are its
own. The walk, the two-phase commit and the restore rules are the ones spark-submit runs
(:func:`.executor.run_pipeline`): only the session differs.

* **Sessions**: each attempt's session id derives from the run id, the pipeline and the attempt
  (:func:`session_id`). Before attempt N opens its session it releases the sessions of attempts
  before it: a task that died (or a worker that stopped heart-beating) leaves its operations on the
  server, and releasing its session interrupts them. The sinks' fencing still holds the line for
  an attempt that is alive and committing (:mod:`..spi.fencing`).
* **Settings**: the job's ``spark.*`` settings a session may change are set on it; the ones only a
  server's start can set (``spark.executor.memory``, ``spark.sql.extensions``...) keep the
  server's values, and the run says which. A setting a plugin cannot do without
  (:class:`..spi.NeedsSession`) must then already hold on the server, else the run fails naming it.
  Jars the connectors need are added to the session as artifacts.
* **What runs**: connectors that declare ``Capabilities(connect=True)`` (:mod:`..spi.sessions`), BATCH jobs;
  the rest are refused before the session opens (:func:`connect_problems`).
* **Secrets**: the server address's ``token`` never reaches a log, a metric or an error
  (:meth:`Remote.display`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

from ..config.errors import Problem
from ..plan.model import JobPlan, PipelinePlan
from ..spi import get_connector
from ..spi.errors import RuntimeConfigError, error_from
from ..spi.secrets import scrub
from .context import RunContext, now
from .jars import pipeline_jars
from .metrics import PipelineMetrics
from .session import LIST_SETTINGS, session_settings, spark_conf

log = logging.getLogger("seatunnel.runtime")

#: the namespace of attempt session ids (:func:`session_id`)
SESSION_NAMESPACE = uuid.UUID("5e47a7e1-0c0e-4c7a-9d1e-c0a11ec7ed00")
#: the client parameters of a ``sc://`` address a user may give (PySpark's names)
PARAMS = ("token", "use_ssl", "user_id", "user_agent")
#: Spark's error classes for settings a running session cannot change
_FIXED = ("CANNOT_MODIFY_STATIC_CONFIG", "CANNOT_MODIFY_CONFIG", "CANNOT_MODIFY_SPARK_CONFIG", "CONFIG_NOT_MODIFIABLE")


class RemoteAddressError(ValueError):
    """A Spark Connect address this package cannot use (what is wrong, and the form it takes)."""


@dataclass(frozen=True)
class Remote:
    """A Spark Connect server: ``sc://host:port`` and the client's parameters (``token``, ``use_ssl``,
    ``user_id``). The token is secret: :meth:`display` and ``repr`` never show it."""

    address: str
    params: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, text: str) -> Remote:
        """``sc://host:port[/;name=value;...]`` as a :class:`Remote`; :class:`RemoteAddressError` for
        anything else (another scheme, no host, a path, a parameter PySpark does not know)."""
        text = str(text or "").strip()
        if not text.startswith("sc://"):
            raise RemoteAddressError(f"a Spark Connect address starts with sc://, e.g. sc://localhost:15002 "
                                     f"(got {cls._shown(text)!r})")
        head, _, tail = text.partition(";")
        url = urlparse(head)
        if not url.hostname:
            raise RemoteAddressError("the Spark Connect address names no host: sc://HOST:PORT")
        try:
            port = url.port or 15002
        except ValueError:
            raise RemoteAddressError(f"the Spark Connect address has a bad port: {cls._shown(head)!r}") from None
        if url.path.strip("/"):
            raise RemoteAddressError(f"a Spark Connect address has no path ({url.path!r}): sc://HOST:PORT")
        params: dict[str, str] = {}
        for part in filter(None, tail.split(";")):
            name, eq, value = part.partition("=")
            if not eq or name not in PARAMS:
                raise RemoteAddressError(f"unknown Spark Connect parameter {name!r}: one of {', '.join(PARAMS)}")
            params[name] = unquote(value)
        return cls(f"sc://{url.hostname}:{port}", params)

    @staticmethod
    def _shown(text: str) -> str:
        return text.split(";", 1)[0]

    @property
    def token(self) -> str | None:
        return self.params.get("token")

    def endpoint(self, session: str | None = None) -> str:
        """The address PySpark connects to (with the token: never log it), for ``session``."""
        params = {**self.params, **({"session_id": session} if session else {})}
        tail = ";".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
        return f"{self.address}/;{tail}" if tail else self.address

    def display(self) -> str:
        """The address as logs and metrics show it: the parameters but the token."""
        shown = [f"{k}={v}" for k, v in self.params.items() if k != "token"]
        return ";".join([self.address + ("/" if shown else ""), *shown]) if shown else self.address


#: PySpark builds Connect expressions (``functions``, ``Column``) while this is set in the environment
CONNECT_MODE_ENV = "SPARK_CONNECT_MODE_ENABLED"
_mode_lock = threading.Lock()
_mode_users = 0
_mode_before: str | None = None


@contextlib.contextmanager
def connect_mode() -> Iterator[None]:
    """PySpark's process-wide Connect switch, on while a pipeline runs on Spark Connect: PySpark
    turns it on when it opens a Connect session and never off. It goes back to what it was when the
    last concurrent pipeline ends, so a classic session can follow in the same process."""
    global _mode_users, _mode_before
    with _mode_lock:
        if _mode_users == 0:
            _mode_before = os.environ.get(CONNECT_MODE_ENV)
            os.environ[CONNECT_MODE_ENV] = "1"
        _mode_users += 1
    try:
        yield
    finally:
        with _mode_lock:
            _mode_users -= 1
            if _mode_users == 0:
                if _mode_before is None:
                    os.environ.pop(CONNECT_MODE_ENV, None)
                else:
                    os.environ[CONNECT_MODE_ENV] = _mode_before


def _builder() -> Any:
    """PySpark's Connect session builder (its own class: the classic builder would switch the whole
    process to Connect mode for good)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return ConnectSession.builder


def session_id(run_id: str, task_id: str, attempt: int) -> str:
    """The session id of one attempt of a pipeline in a run (a UUID, as Spark Connect requires)."""
    return str(uuid.uuid5(SESSION_NAMESPACE, f"{run_id}\x00{task_id}\x00{int(attempt)}"))


def connect_problems(plan: JobPlan, pipeline: PipelinePlan) -> list[Problem]:
    """Why ``pipeline`` cannot run in Connect mode (empty: it can): a plugin whose connector needs
    the driver's JVM (``connect`` not declared; in a STREAMING job, a source without
    ``connect_stream``), or one whose options its connector cannot serve there (``connect_blocker``)."""
    streaming = str(plan.mode).upper() == "STREAMING"
    hint = "use a spark connection (spark-submit) for this pipeline"
    found = []
    for v in pipeline.vertices:
        connector = get_connector(v.plugin)
        if connector is None or not connector.capabilities.connect:
            found.append(Problem(f"{v.plugin} needs the Spark driver's JVM in this process: it runs with "
                                 f"spark-submit, not on a Spark Connect session", plugin=f"{v.ref} {v.plugin}",
                                 severity="error", hint=hint))
        elif streaming and v.kind == "source" and not connector.capabilities.connect_stream:
            found.append(Problem(f"{v.plugin} reads STREAMING jobs through the Spark driver's JVM in this "
                                 f"process: it runs with spark-submit, not on a Spark Connect session",
                                 plugin=f"{v.ref} {v.plugin}", severity="error", hint=hint))
        elif blocker := connector.connect_blocker(v.config):
            found.append(Problem(blocker, plugin=f"{v.ref} {v.plugin}", severity="error", hint=hint))
    return found


def _set(spark: Any, key: str, value: str) -> bool:
    """Set ``key`` on the session; False when only the server's start can set it (Spark's error classes
    :data:`_FIXED`); any other failure is raised."""
    try:
        spark.conf.set(key, value)
    except Exception as e:
        if not any(code in str(e) for code in _FIXED):
            raise
        return False
    return True


def _server_has(spark: Any, key: str, value: str) -> bool:
    try:
        held = spark.conf.get(key, None)
    except Exception:
        return False
    if held is None:
        return False
    if key in LIST_SETTINGS:
        have = {v.strip() for v in str(held).split(",")}
        return all(v.strip() in have for v in value.split(",") if v.strip())
    return str(held) == value


def apply_settings(spark: Any, plan: JobPlan, pipeline: PipelinePlan, say: Callable[[str], None]) -> None:
    """The job's and its plugins' Spark settings on the session (see the module docstring); jars as artifacts."""
    needed = session_settings(plan, pipeline)
    kept: list[str] = []
    for key, value in spark_conf(plan.env).items():
        if key not in needed and key not in ("spark.jars", "spark.jars.packages") and not _set(spark, key, value):
            kept.append(key)
    for key, value in needed.items():  # list settings are only ever the server's
        if (key in LIST_SETTINGS or not _set(spark, key, value)) and not _server_has(spark, key, value):
            raise RuntimeConfigError(
                f"the pipeline needs the setting {key} (its plugins' value), which only the Spark Connect "
                "server's start can set: start the server with it, or run this pipeline with spark-submit")
    if kept:
        say(f"Spark Connect: the server's own values stay for {', '.join(sorted(kept))} "
            "(only its start sets them)")
    jars = pipeline_jars(plan, pipeline)
    if jars:
        spark.addArtifacts(*jars)
        say(f"Spark Connect: added {len(jars)} jar(s) to the session")


def release_session(remote: Remote, run_id: str, task_id: str, attempt: int) -> None:
    """Interrupt every operation of an attempt's session and release it. Best effort: a session
    that is gone (or never was) is skipped."""
    try:
        old = _builder().remote(remote.endpoint(session_id(run_id, task_id, attempt))).create()
        try:
            old.interruptAll()
        finally:
            old.stop()
    except Exception as e:  # released already, or the server does not know it
        log.debug("session of attempt %s: %s", attempt, type(e).__name__)


def release_earlier(remote: Remote, run_id: str, task_id: str, attempt: int) -> None:
    """Release the sessions of the attempts before ``attempt``: what a dead attempt left running on
    the server is interrupted."""
    for earlier in range(1, int(attempt)):
        release_session(remote, run_id, task_id, earlier)


def open_session(remote: Remote, plan: JobPlan, pipeline: PipelinePlan, run_id: str, attempt: int,
                 say: Callable[[str], None]) -> Any:
    """A new Spark Connect session for this attempt, set up for the pipeline (see the module docstring)."""
    from .pyspark_install import ensure_consistent

    ensure_consistent()
    release_earlier(remote, run_id, pipeline.task_id, attempt)
    for mine in (session_id(run_id, pipeline.task_id, attempt), str(uuid.uuid4())):
        spark = _builder().remote(remote.endpoint(mine)).create()
        try:
            apply_settings(spark, plan, pipeline, say)  # the session's first request
            return spark
        except BaseException as e:
            with contextlib.suppress(Exception):
                spark.stop()
            if "SESSION_CLOSED" not in str(e):
                raise
            # this attempt of the run ran before (the command line, asked twice): a new session
    raise AssertionError("unreachable")


def server_application(spark: Any) -> tuple[str | None, str | None]:
    """The server's Spark application id and UI address (None where it does not say)."""
    def get(key: str) -> str | None:
        try:
            value = spark.conf.get(key, None)
        except Exception:
            return None
        return str(value) if value else None

    host, port = get("spark.driver.host"), get("spark.ui.port") or "4040"
    enabled = (get("spark.ui.enabled") or "true").lower() != "false"
    return get("spark.app.id"), (f"http://{host}:{port}" if host and enabled else None)


def run_remote_pipeline(remote: Remote, plan: JobPlan, pipeline: PipelinePlan, run_id: str, attempt: int = 1, *,
                        options: Mapping[str, Any] | None = None, say: Callable[[str], None] | None = None,
                        label: str | None = None, stop: threading.Event | None = None,
                        on_progress: Callable[[Mapping[str, Any]], None] | None = None) -> PipelineMetrics:
    """Run ``pipeline`` to its commit as a Spark Connect session of ``remote``; its metrics, a
    failure's too (``error`` says why and whether a retry helps). Never raises for a failed run. A
    STREAMING pipeline runs until its queries end or ``stop`` is set (they stop between micro-batches).
    ``on_progress`` takes each progress report as plain data (:attr:`.context.RunContext.on_progress`)."""
    with connect_mode():
        return _run_remote(remote, plan, pipeline, run_id, attempt, options, say or log.info,
                           label or f"Pipeline [({pipeline.id}/{len(plan.pipelines)})] {pipeline.task_id}", stop,
                           on_progress)


def _run_remote(remote: Remote, plan: JobPlan, pipeline: PipelinePlan, run_id: str, attempt: int,
                options: Mapping[str, Any] | None, tell: Callable[[str], None], label: str,
                stop: threading.Event | None = None,
                on_progress: Callable[[Mapping[str, Any]], None] | None = None) -> PipelineMetrics:
    from .executor import run_pipeline
    from .streaming import run_streaming_pipeline

    started, t0 = now(), time.monotonic()
    spark = None
    try:
        problems = connect_problems(plan, pipeline)
        if problems:
            raise RuntimeConfigError("; ".join(p.format() for p in problems))
        spark = open_session(remote, plan, pipeline, run_id, attempt, tell)
        tell(f"{label}: running {pipeline.task_id} on Spark Connect {remote.display()} (attempt {attempt}, "
             f"run {run_id}, session {spark.session_id}, {time.monotonic() - t0:.1f} s to connect)")
        ctx = RunContext(spark=spark, plan=plan, pipeline=pipeline, run_id=run_id, attempt=attempt,
                         options=dict(options or {}), on_progress=on_progress)
        def event(msg: str) -> None:
            tell(f"{label}: {msg}")

        metrics = PipelineMetrics.from_dict(run_streaming_pipeline(ctx, on_event=event, stop=stop)
                                            if str(plan.mode).upper() == "STREAMING" else run_pipeline(ctx, event))
        app_id, ui = server_application(spark)
        metrics = replace(metrics, application_id=app_id, seconds=round(time.monotonic() - t0, 3))
        metrics = metrics.with_extra(spark_connect=remote.display(), session_id=spark.session_id)
        return metrics.with_extra(ui_url=ui) if ui else metrics
    except Exception as e:  # every failure ends in the metrics
        error = error_from(e, pipeline=pipeline.task_id, settings=plan.env)
        return PipelineMetrics.failed(pipeline, run_id, attempt, started, error, spark_connect=remote.display())
    finally:
        if spark is not None:
            try:
                spark.stop()  # releases the session on the server
            except Exception as e:
                log.warning("%s: could not release the Spark Connect session: %s", label, type(e).__name__)


#: PySpark's client reads the server's token from here when the address carries none
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"


def driver_command(remote: Remote, plan_file: Path, pipeline: PipelinePlan, run_id: str, attempt: int,
                   metrics_file: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a process of its own that runs ``pipeline`` as a session of
    ``remote`` (deferrable mode: it outlives the task's process): this Python running
    ``runtime/app.py --remote``, which writes the pipeline's metrics to ``metrics_file`` as a driver
    spark-submit starts does. The token is only in its environment (:data:`TOKEN_ENV`, readable by
    this user alone), never on its command line, which ``ps`` shows every user."""
    from ..settings import environment
    from .launcher import app_arguments

    address = Remote(remote.address, {k: v for k, v in remote.params.items() if k != "token"})
    env = {**os.environ, **environment(os.environ)}
    if remote.token is not None:
        env[TOKEN_ENV] = remote.token
    cmd = [sys.executable, "-m", "airflow_provider_seatunnel.runtime.app",
           *app_arguments(plan_file, pipeline, run_id, attempt, metrics_file), "--remote", address.endpoint()]
    return cmd, env


def quiet_client_logs() -> None:
    """PySpark's client logs every analysis error with its whole JVM stack (as JSON, at ERROR); the
    run reports each failure once, with its root cause."""
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def run_remote_pipelines(plan: JobPlan, pipelines: Sequence[PipelinePlan], remote: Remote, *,
                         run_id: str | None = None, attempt: int = 1, max_parallel: int | None = None,
                         options: Mapping[str, Any] | None = None, say: Callable[[str], None] = print,
                         stop: threading.Event | None = None) -> dict[str, Any]:
    """The command line's ``run --remote``: ``pipelines`` concurrently, each a session of ``remote``
    from this process; the job's metrics (as :func:`.launcher.run_pipelines` returns them). The
    plan's secrets are masked in what is said and in the metrics. ``stop`` ends STREAMING pipelines."""
    from .launcher import default_run_id, secret_values
    from .summary import job_metrics

    secrets = secret_values(plan)
    lock = threading.Lock()

    def tell(text: str) -> None:
        with lock:
            say(scrub(text, secrets))

    quiet_client_logs()
    run = run_id or default_run_id()
    started = now()
    workers = max(1, min(max_parallel or len(pipelines), len(pipelines)))

    def run_one(p: Any) -> Any:
        return run_remote_pipeline(remote, plan, p, run, attempt, options=options, say=tell,
                                   label=f"pipeline {p.id}", stop=stop).redacted(secrets)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_one, p) for p in pipelines]
        # waits in short steps: a signal the kernel hands another thread is run by this (main) thread only
        # when it wakes, and SIGTERM is what stops a STREAMING pipeline
        while wait(futures, timeout=0.2).not_done:
            pass
        results = [f.result() for f in futures]
    for m in results:
        tell(f"pipeline {m.pipeline} {m.task_id}: " + (f"FINISHED (read {m.read_count}, wrote {m.write_count})"
                                                      if m.ok else f"FAILED{m.where}: {m.message}"))
    job = job_metrics(plan.name, results, started, now())
    job.update(run_id=run, attempt=int(attempt), spark_connect=remote.display())
    return job
