"""``SeaTunnelHook``: compile a SeaTunnel job and run its pipelines through the Spark provider's ``SparkSubmitHook``.

The compiled plan (secrets included) is written to a private directory (mode 0700, file 0600);
spark-submit only ever sees its path, and the job's Spark settings travel in a 0600 properties
file, so no secret reaches the command line. What a pipeline's spark-submit gets is its
:class:`..runtime.launcher.Submission`, as for the command line's ``run``. The values the plan's
redaction hides (:mod:`..spi.secrets`) are registered with Airflow's log masker and masked in
the metrics (the XCom value).

The connections a job's blocks name are resolved by :mod:`.credentials`, the plan's warnings and
blockers come from :mod:`.plan_checks`; their names stay importable from here.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException, AirflowFailException, AirflowNotFoundException

from ..config.errors import ConfigError, Problem
from ..plan.compiler import compile_job
from ..plan.model import JobPlan, PipelinePlan
from ..runtime.context import now
from ..runtime.jvm_startup import ClassArchive, archive_for, spark_defaults, startup_conf
from ..runtime.launcher import APP_FILE, Submission, pyspark_home, secret_values, write_plan_file, write_properties_file
from ..runtime.lean_home import lean_environment
from ..runtime.metrics import FINISHED, PipelineMetrics
from ..runtime.progress import progress_file_of
from ..runtime.remote import Remote, RemoteAddressError, connect_problems
from ..spi.errors import PipelineError, exit_failure
from ..spi.safe_files import open_write
from ..spi.secrets import (
    OPENLINEAGE_SECRET,
    OPENLINEAGE_SECRET_REGEX,
    REDACTION_REGEX_KEY,
    SPARK_REDACTION_REGEX,
    redaction,
)
from .connections import seatunnel_spark_submit_hook, spark_master
from .credentials import SparkConnection, connection_info, missing_spark_connection, with_connections
from .plan_checks import compile_warnings, not_runnable, one_task_id, pipeline_warnings

__all__ = ["SeaTunnelHook", "SeaTunnelPipelineFailed", "SparkConnection", "compile_warnings", "connection_info",
           "missing_spark_connection", "not_runnable", "one_task_id", "pipeline_warnings", "with_connections"]


class SeaTunnelPipelineFailed(AirflowException):
    """A pipeline failed; ``metrics`` holds its metrics (with ``error``), ``deterministic`` says retrying is futile."""

    def __init__(self, message: str, metrics: Mapping[str, Any]):
        super().__init__(message)
        self.metrics = dict(metrics)
        self.deterministic = bool((self.metrics.get("error") or {}).get("deterministic"))


class SeaTunnelHook(BaseHook):
    """Compile a SeaTunnel config and submit its pipelines with ``spark-submit``.

    :param config: a config file path or the config text itself (HOCON, JSON or SQL format).
    :param variables: ``-i`` style variables for the config.
    :param spark_conn_id: the Spark connection (master, deploy mode, spark binary), as ``SparkSubmitHook`` reads it.
    :param format: the config format when it cannot be told from ``config`` (``hocon``, ``json``, ``sql``).
    :param spark_binary: passed to ``SparkSubmitHook`` (default: the connection's, else ``spark-submit`` on PATH).
    :param deploy_mode: passed to ``SparkSubmitHook`` (overrides the connection's).
    :param py_files: ``--py-files`` (e.g. a zip of this package when the driver runs on the cluster).
    :param spark_submit_kwargs: any further ``SparkSubmitHook`` arguments (``executor_memory``, ``jars``...).
    :param jdbc_conn_id: an Airflow connection giving the Jdbc blocks that name none themselves (option
        ``jdbc_conn_id``) their ``url``, ``user`` and ``password`` (see :func:`with_connections`).
    :param include_dirs: folders the config's ``include`` may read besides its own folder tree, Airflow's
        DAG folder and the ``[seatunnel] include_paths`` setting (an operator passes its DAG file's folder
        and ``template_searchpath``).
    :param task_id: the id the pipeline to run was parsed with (its Airflow task's): where this run's
        compile gives it another hash, the run uses this one (:func:`one_task_id`).
    """

    conn_name_attr = "spark_conn_id"
    default_conn_name = "spark_default"
    hook_name = "Apache SeaTunnel (on Spark)"

    def __init__(self, config: str | os.PathLike, variables: Mapping[str, Any] | None = None,
                 spark_conn_id: str = "spark_default", *, format: str | None = None,
                 spark_binary: str | None = None, deploy_mode: str | None = None, py_files: str | None = None,
                 spark_submit_kwargs: Mapping[str, Any] | None = None, jdbc_conn_id: str | None = None,
                 include_dirs: Iterable[str] = (), task_id: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id  # the pipeline's id as the DAG was parsed with: the run's one id (one_task_id)
        self.include_dirs = tuple(include_dirs)  # where the config's includes may read besides its own folder
        self.jdbc_conn_id = jdbc_conn_id
        self.config = config
        self.variables = dict(variables or {})
        self.spark_conn_id = spark_conn_id
        self.format = format
        self.spark_binary = spark_binary
        self.deploy_mode = deploy_mode
        self.py_files = py_files
        self.spark_submit_kwargs = dict(spark_submit_kwargs or {})
        self._plan: JobPlan | None = None
        self._work_dir: Path | None = None
        self._plan_file: Path | None = None
        self._spark_hook: Any = None
        self._properties: tuple[Path, dict[str, str]] | None = None  # the properties file and the job's settings
        self._archive: ClassArchive | None = None  # the driver JVM's class archive (runtime/jvm_startup.py)
        self._spark_connection: SparkConnection | None = None
        self._remote: Remote | None = None
        self._remote_known = False  # whether spark_connect() looked the connection up
        self._connect_attempt: tuple[str, str, int] | None = None  # the attempt running on Spark Connect

    # -- compile ---------------------------------------------------------------------------------

    @property
    def plan(self) -> JobPlan:
        """The compiled plan (through the on-disk plan cache); raises ``ConfigError``."""
        if self._plan is None:
            compiled = compile_job(self.config, self.variables, format=self.format, include_dirs=self.include_dirs)
            self._plan = with_connections(one_task_id(compiled, self.task_id), self.jdbc_conn_id)
        return self._plan

    def mask_secrets(self) -> None:
        """Register the values the plan's redaction hides (connector secrets, ``spark.*`` settings
        by Spark's redaction rule, URL credentials, the Airflow connections' passwords) with
        Airflow's log masker."""
        from airflow.sdk.log import mask_secret

        for value in secret_values(self.plan):
            if value not in (None, ""):
                mask_secret(value if isinstance(value, (dict, list)) else str(value))

    def get_conn(self) -> JobPlan:
        return self.plan

    def pipeline(self, ref: int | str | None = None) -> PipelinePlan:
        """The pipeline ``ref`` (number or task id); without one, the job's only pipeline."""
        plan = self.plan
        if ref is None:
            if len(plan.pipelines) != 1:
                ids = ", ".join(p.task_id for p in plan.pipelines)
                raise ValueError(f"job {plan.name!r} has {len(plan.pipelines)} pipelines ({ids}): name one "
                                 "with pipeline=..., or use SeaTunnelJobGroup to run each as its own task")
            return plan.pipelines[0]
        return plan.pipeline(ref)

    @property
    def work_dir(self) -> Path:
        """A private directory (0700) for the plan file, metrics and properties files."""
        if self._work_dir is None:
            self._work_dir = Path(tempfile.mkdtemp(prefix="seatunnel-airflow-"))
            os.chmod(self._work_dir, stat.S_IRWXU)
        return self._work_dir

    def plan_file(self) -> Path:
        """The plan with its secrets, written once (mode 0600)."""
        if self._plan_file is None:
            self._plan_file = write_plan_file(self.plan, self.work_dir)
        return self._plan_file

    def adopt_work_dir(self, path: Path) -> None:
        """Take over the private directory an earlier process of this task made (a deferred pipeline's, checked
        by the caller): its metrics are read from there and :meth:`cleanup` removes it."""
        self._work_dir = path

    @property
    def plan_path(self) -> Path | None:
        """The plan file once :meth:`plan_file` wrote it (None before, and after :meth:`cleanup`)."""
        return self._plan_file

    def cleanup(self) -> None:
        """Remove the private directory (the plan file holds secrets)."""
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
        self._work_dir = self._plan_file = None

    # -- submit ----------------------------------------------------------------------------------

    def spark_connection(self) -> SparkConnection:
        """Where the Spark connection submits to, as the ``SparkSubmitHook`` reads it (through
        ``BaseHook.get_connection``): its master, the deploy mode (this hook's, else the connection
        extra's ``deploy-mode``) and its extra. No such connection fails the task without a retry
        (:func:`missing_spark_connection`), where the Spark provider would quietly submit to ``yarn``."""
        if self._spark_connection is None:
            deploy_mode = self.spark_submit_kwargs.get("deploy_mode", self.deploy_mode)
            try:
                conn = BaseHook.get_connection(self.spark_conn_id)
            except AirflowNotFoundException:
                raise AirflowFailException(missing_spark_connection(self.spark_conn_id)) from None
            master = spark_master(str(conn.conn_type), conn.host, conn.port)  # a `seatunnel_spark` one too
            extra = dict(conn.extra_dejson or {})
            self._spark_connection = SparkConnection(master, deploy_mode or extra.get("deploy-mode"), extra)
        return self._spark_connection

    def driver_on_cluster(self) -> bool:
        """Whether the Spark driver runs on the cluster (YARN/Kubernetes/standalone cluster deploy mode)."""
        return self.spark_connection().deploy_mode == "cluster"

    def package_zip(self) -> Path:
        """This package and its pure-Python runtime dependency (sqlglot) as one zip for ``--py-files``."""
        import sqlglot

        from .. import __file__ as package_init

        path = self.work_dir / "seatunnel-runtime.zip"
        if not os.path.lexists(path):  # written once, in the private work directory, never through a link
            import zipfile

            roots = [Path(package_init).parent, Path(sqlglot.__file__).parent]
            with open_write(str(path), exclusive=True, text=False, what="the package zip") as fh, \
                    zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
                for root in roots:
                    for file in sorted(root.rglob("*.py")):
                        zf.write(file, file.relative_to(root.parent).as_posix())
        return path

    def metrics_file(self, pipeline: PipelinePlan, attempt: int) -> Path:
        return self.work_dir / f"pipeline-{pipeline.task_id}.attempt-{int(attempt)}.metrics.json"

    def progress_file(self, pipeline: PipelinePlan, attempt: int) -> Path | None:
        """Where the pipeline's driver publishes its progress reports (:func:`..runtime.progress.progress_file_of`),
        None where the driver runs on the cluster."""
        return None if self.driver_on_cluster() else Path(progress_file_of(self.metrics_file(pipeline, attempt)))

    @property
    def spark_hook(self) -> Any:
        """The ``SparkSubmitHook`` :meth:`spark_submit_hook` built last (None before)."""
        return self._spark_hook

    def spark_submit_hook(self, pipeline: int | str | None = None, run_id: str = "manual",
                          attempt: int = 1, *, detached: bool = False) -> Any:
        """The ``SparkSubmitHook`` that runs one pipeline's :class:`..runtime.launcher.Submission`
        (its application is :data:`..runtime.launcher.APP_FILE`); kept as :attr:`spark_hook`.
        Raises ``ConfigError`` when the pipeline holds what cannot run here (:func:`not_runnable`).

        With the driver on this machine, the plan and metrics files are local paths and the
        environment carries our PySpark. With the driver on the cluster, the plan file travels
        with ``--files``, the package with ``--py-files``, and no metrics file comes back.
        The job's Spark settings go to a 0600 properties file, never to the command line;
        ``spark_submit_kwargs`` go to the hook as they are: their ``conf`` (on the command line)
        wins over the job's settings. A ``detached`` driver (deferrable mode: it outlives this process)
        maps the driver JVM's class archive where one exists, and never creates one.
        """
        from ..runtime.pyspark_install import PySparkMismatch, ensure_consistent

        p = self.pipeline(pipeline)
        blockers = not_runnable(self.plan, p)
        if blockers:  # before any JVM starts: retrying cannot fix it
            raise ConfigError(blockers)
        try:
            ensure_consistent()  # a PySpark mixing releases (runtime/pyspark_install.py): no retry fixes it
        except PySparkMismatch as e:
            raise AirflowFailException(str(e)) from None
        on_cluster = self.driver_on_cluster()
        metrics_file = None if on_cluster else self.metrics_file(p, attempt)
        if metrics_file is not None:
            metrics_file.unlink(missing_ok=True)
            Path(progress_file_of(metrics_file)).unlink(missing_ok=True)
        submission = Submission.of(self.plan, p, self.plan_file(), run_id, attempt, metrics_file,
                                   on_cluster=on_cluster)
        extra = dict(self.spark_submit_kwargs)
        kwargs: dict[str, Any] = dict(
            conn_id=self.spark_conn_id, name=submission.name, application_args=list(submission.application_args),
            conf=dict(extra.pop("conf", None) or {}),  # the caller's: --conf wins over the properties file
            env_vars=dict(submission.env) or None, spark_binary=self.spark_binary, deploy_mode=self.deploy_mode,
            py_files=self.py_files or (str(self.package_zip()) if on_cluster else None),
        )
        conf = dict(submission.conf)
        if not on_cluster:  # a driver here: the lean Spark home and no UI for a local master, the class archive
            master = self.spark_connection().master
            environ = {**os.environ, **submission.env}
            defaults = spark_defaults(environ)
            environ = lean_environment(environ, pyspark_home(), master, conf, defaults)
            if environ.get("SPARK_HOME") and kwargs["env_vars"] is not None:
                kwargs["env_vars"]["SPARK_HOME"] = environ["SPARK_HOME"]
            self._archive = archive_for(conf, defaults, environ)
            if detached and self._archive is not None and self._archive.creating is not None:
                self._archive.finish(False)  # a driver outliving this process publishes no archive: none made
                self._archive = None
            conf = startup_conf(conf, defaults, master, self._archive)
        self._properties = (self.work_dir / f"pipeline-{p.task_id}.properties", conf)
        properties = write_properties_file(conf, self._properties[0])
        kwargs["properties_file"] = str(properties) if properties else None
        kwargs.update(extra)
        if submission.files:
            kwargs["files"] = ",".join(x for x in (extra.get("files"), *submission.files) if x)
        self._spark_hook = seatunnel_spark_submit_hook()(**kwargs)  # reads a `seatunnel_spark` connection too
        return self._spark_hook

    def add_spark_conf(self, conf: Mapping[str, Any]) -> None:
        """Spark settings for the submission :meth:`spark_submit_hook` built (the operator's ``conf``,
        with the OpenLineage parent-job and transport settings the Spark provider injects into it):
        written into the pipeline's 0600 properties file over the job's own, never onto the command line.
        Secret values among them (Spark's redaction rule, and the OpenLineage transport's ``auth``
        and ``headers`` settings, e.g. an HTTP ``apiKey``) are registered with Airflow's log masker,
        and the Spark redaction regex of the submission is widened to hide the OpenLineage ones."""
        if self._spark_hook is None or self._properties is None or not conf:
            return
        from airflow.sdk.log import mask_secret

        path, base = self._properties
        added = {str(k): str(v) for k, v in conf.items()}
        rule = redaction(self.plan.env)
        hidden_keys = [k for k in added if rule.matches(k) or OPENLINEAGE_SECRET.search(k)]
        for key in hidden_keys:
            if added[key]:
                mask_secret(added[key])
        merged = {**base, **added}
        if any(OPENLINEAGE_SECRET.search(k) for k in hidden_keys):  # Spark's own rule misses "apiKey"
            own = merged.get(REDACTION_REGEX_KEY) or SPARK_REDACTION_REGEX
            merged[REDACTION_REGEX_KEY] = f"{own}|{OPENLINEAGE_SECRET_REGEX}"
        written = write_properties_file(merged, path)
        self._spark_hook._properties_file = str(written) if written else None

    def pipeline_metrics(self, pipeline: int | str | None, run_id: str, attempt: int, started: str,
                         failure: BaseException | None = None) -> PipelineMetrics:
        """The metrics the pipeline's application wrote, as a failure when spark-submit failed
        (``failure``). Without a metrics file: a failure, or, with the driver on the cluster and no
        ``failure``, a finished pipeline whose counts are in the driver's log. The plan's secrets
        are masked in them (:meth:`..runtime.metrics.PipelineMetrics.redacted`). A class archive the
        launch created is published now if it succeeded."""
        if self._archive is not None:
            self._archive.finish(failure is None)
            self._archive = None
        return self._pipeline_metrics(pipeline, run_id, attempt, started, failure).redacted(secret_values(self.plan))

    def _pipeline_metrics(self, pipeline: int | str | None, run_id: str, attempt: int, started: str,
                          failure: BaseException | None) -> PipelineMetrics:
        p = self.pipeline(pipeline)
        metrics = PipelineMetrics.read(self.metrics_file(p, attempt))
        if metrics is None and failure is None and self.driver_on_cluster():
            return PipelineMetrics(pipeline=p.id, task_id=p.task_id, name=p.name, status=FINISHED, attempt=attempt,
                                   run_id=run_id, start=started, end=now(), committed=True,
                                   extra={"counts_in_driver_log": True})
        if metrics is None:
            reason = str(failure).splitlines()[0] if failure else "no metrics file was written"
            code = re.search(r"Error code is: (\d+)", reason)  # SparkSubmitHook's words; exit 52: out of memory
            return PipelineMetrics.failed(p, run_id, attempt, started, exit_failure(
                int(code[1]), settings={**self.plan.env, **(self.spark_submit_kwargs.get("conf") or {})},
                pipeline=p.task_id, where=f" ({reason})") if code else PipelineError(
                f"{'its Spark Connect client' if self.spark_connect() else 'spark-submit'} failed before the pipeline "
                f"reported: {reason}", pipeline=p.task_id))
        if failure is not None:
            return metrics.failing(PipelineError(str(failure).splitlines()[0], pipeline=p.task_id))
        return metrics

    def failure_message(self, metrics: PipelineMetrics) -> str:
        """What failed: the pipeline, the job, the plugin and the cause."""
        return (f"pipeline {metrics.pipeline} ({metrics.task_id}) of job {self.plan.name!r} failed"
                f"{metrics.where}: {metrics.message}")

    def submit(self, pipeline: int | str | None = None, run_id: str = "manual", attempt: int = 1) -> dict[str, Any]:
        """Run one pipeline as a Spark application and wait for it (or, with a ``spark_connect``
        connection, as a session of its server: :meth:`run_connect`); return its metrics.

        Raises :class:`SeaTunnelPipelineFailed` (with the metrics and their ``error``) when it fails.
        (``SeaTunnelOperator`` runs the same hook through the Spark provider's operator instead,
        for its durable tracking of applications whose driver runs on the cluster.)
        """
        if self.spark_connect() is not None:
            metrics = self.run_connect(pipeline, run_id, attempt)
            if not metrics.ok:
                raise SeaTunnelPipelineFailed(self.failure_message(metrics), metrics.to_dict())
            return metrics.to_dict()
        spark_hook = self.spark_submit_hook(pipeline, run_id, attempt)
        started = now()
        failure: AirflowException | None = None
        try:
            spark_hook.submit(str(APP_FILE))
        except AirflowException as e:
            failure = e
        metrics = self.pipeline_metrics(pipeline, run_id, attempt, started, failure)
        if not metrics.ok:
            raise SeaTunnelPipelineFailed(self.failure_message(metrics), metrics.to_dict()) from failure
        return metrics.to_dict()

    def submit_job(self, run_id: str = "manual", attempt: int = 1) -> dict[str, Any]:
        """Run every pipeline of the job, one after another; return the job's metrics.

        Pipelines are independent: one failing does not stop the others. Raises
        :class:`SeaTunnelPipelineFailed` (with the job's metrics) when any failed.
        """
        from ..runtime.summary import job_metrics

        started, results = now(), list[dict[str, Any]]()
        for p in self.plan.pipelines:
            try:
                results.append(self.submit(p.id, run_id=run_id, attempt=attempt))
            except SeaTunnelPipelineFailed as e:
                results.append(e.metrics)
        job = job_metrics(self.plan.name, results, started, now())
        failed = [m.get("task_id", "?") for m in results if m.get("status") != FINISHED]
        if failed:
            error: Mapping[str, Any] = next(
                (m["error"] for m in results if m.get("status") != FINISHED and m.get("error")), {})
            raise SeaTunnelPipelineFailed(f"job {self.plan.name!r}: pipelines failed: {', '.join(failed)}",
                                          {**job, "error": error})
        return job

    # -- Spark Connect ---------------------------------------------------------------------------

    def spark_connect(self) -> Remote | None:
        """The Spark Connect server a ``spark_connect`` connection names (read as the Spark provider's
        ``SparkConnectHook`` reads it: host, port, ``login`` as user id, ``password`` as token, extra
        ``use_ssl``): pipelines then run as its sessions from this process. None for any other
        connection (spark-submit). The token is registered with Airflow's log masker."""
        if not self._remote_known:
            self._remote_known = True
            try:
                conn = BaseHook.get_connection(self.spark_conn_id)
            except AirflowNotFoundException:
                return None
            if conn.conn_type == "spark_connect":
                from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook
                from airflow.sdk.log import mask_secret

                if conn.password:
                    mask_secret(conn.password)
                    mask_secret(quote(conn.password, safe=""))
                try:
                    self._remote = Remote.parse(SparkConnectHook(conn_id=self.spark_conn_id).get_connection_url())
                except (RemoteAddressError, ValueError) as e:
                    raise AirflowFailException(f"connection {self.spark_conn_id!r}: {e}") from None
        return self._remote

    def connect_blockers(self, pipeline: PipelinePlan) -> list[Problem]:
        """What keeps ``pipeline`` from running on the Spark Connect server (empty without one)."""
        return connect_problems(self.plan, pipeline) if self.spark_connect() is not None else []

    def run_connect(self, pipeline: int | str | None = None, run_id: str = "manual", attempt: int = 1,
                    say: Any = None, on_progress: Any = None) -> PipelineMetrics:
        """Run one pipeline as a session of :meth:`spark_connect`'s server, from this process; its
        metrics (secrets masked), a failure's too. ``ConfigError`` for what cannot run there.
        ``on_progress`` takes its progress reports as plain data (:func:`..runtime.progress.snapshot`)."""
        from ..runtime import faults
        from ..runtime.remote import quiet_client_logs, run_remote_pipeline

        remote = self.spark_connect()
        if remote is None:
            raise AirflowFailException(f"connection {self.spark_conn_id!r} is no spark_connect connection")
        p = self.pipeline(pipeline)
        blockers = not_runnable(self.plan, p) + connect_problems(self.plan, p)
        if blockers:
            raise ConfigError(blockers)
        quiet_client_logs()
        self._connect_attempt = (run_id, p.task_id, attempt)
        try:
            metrics = run_remote_pipeline(remote, self.plan, p, run_id, attempt, options=faults.from_environment(),
                                          say=say or self.log.info, on_progress=on_progress)
        finally:
            self._connect_attempt = None
        return metrics.redacted(secret_values(self.plan))

    def connect_driver(self, pipeline: int | str | None, run_id: str, attempt: int) -> tuple[list[str], dict[str, str],
                                                                                         Path]:
        """The command, environment and metrics file of a process of its own that runs one pipeline as a
        session of :meth:`spark_connect`'s server and writes its metrics there (deferrable mode, see
        :func:`..runtime.remote.driver_command`: the token only in its environment). ``ConfigError`` for
        what cannot run there; the plan file is written (0600) into the private work directory."""
        from ..runtime.pyspark_install import PySparkMismatch, ensure_consistent
        from ..runtime.remote import driver_command

        remote = self.spark_connect()
        if remote is None:
            raise AirflowFailException(f"connection {self.spark_conn_id!r} is no spark_connect connection")
        p = self.pipeline(pipeline)
        blockers = not_runnable(self.plan, p) + connect_problems(self.plan, p)
        if blockers:
            raise ConfigError(blockers)
        try:
            ensure_consistent()  # a PySpark mixing releases: no retry fixes it
        except PySparkMismatch as e:
            raise AirflowFailException(str(e)) from None
        metrics_file = self.metrics_file(p, attempt)
        metrics_file.unlink(missing_ok=True)
        Path(progress_file_of(metrics_file)).unlink(missing_ok=True)
        cmd, env = driver_command(remote, self.plan_file(), p, run_id, attempt, metrics_file)
        return cmd, env, metrics_file

    def on_kill(self) -> None:
        """Kill the running pipeline: its Spark application (``SparkSubmitHook.on_kill``), or, on a
        Spark Connect server, its session (every operation interrupted, the session released)."""
        if self._connect_attempt is not None and self._remote is not None:
            from ..runtime.remote import release_session

            release_session(self._remote, *self._connect_attempt)
        if self._spark_hook is not None:
            self._spark_hook.on_kill()
