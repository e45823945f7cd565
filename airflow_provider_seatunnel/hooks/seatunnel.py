"""``SeaTunnelHook``: compile a SeaTunnel job and run its pipelines through the Spark provider's ``SparkSubmitHook``.

The compiled plan (secrets included) is written to a private directory (mode 0700, file 0600);
spark-submit only ever sees its path, so no secret reaches the command line or the task log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException

from ..plan.compiler import compile_job
from ..plan.model import JobPlan, PipelinePlan
from ..runtime.jars import pipeline_jars
from ..runtime.launcher import APP_FILE, app_arguments, submit_environment, write_plan_file
from ..runtime.session import spark_conf

#: Spark settings whose values must not appear on the command line: they go to a 0600 properties file.
_SENSITIVE = re.compile(r"secret|password|token|credential|(^|[._-])key($|[._-])", re.IGNORECASE)
#: What spark-submit needs from our environment to find PySpark, this Python and this package
#: (plus the test-only fault injection switch, off unless set).
_ENV_KEYS = ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PATH", "PYTHONPATH", "SEATUNNEL_FAULTS",
             "SEATUNNEL_CHECKPOINT_ROOT")


class SeaTunnelPipelineFailed(AirflowException):
    """A pipeline failed; ``metrics`` holds its metrics (with ``error``), ``deterministic`` says retrying is futile."""

    def __init__(self, message: str, metrics: Mapping[str, Any]):
        super().__init__(message)
        self.metrics = dict(metrics)
        self.deterministic = bool((self.metrics.get("error") or {}).get("deterministic"))


#: Airflow connection types and the JDBC URL scheme of their databases.
_JDBC_SCHEMES = {"postgres": "postgresql", "postgresql": "postgresql", "mysql": "mysql", "mssql": "sqlserver",
                 "oracle": "oracle", "jdbc": None}


def jdbc_options(conn: Any) -> dict[str, str]:
    """``url``, ``user`` and ``password`` of a Jdbc block from an Airflow connection: a ``jdbc:`` URL
    in its host or its extra ``url``, else one built from its type, host, port and schema (database)."""
    extra = conn.extra_dejson or {}
    url = extra.get("url") or (conn.host if str(conn.host or "").startswith("jdbc:") else None)
    if not url:
        scheme = _JDBC_SCHEMES.get(str(conn.conn_type).lower()) or str(conn.conn_type).lower()
        port = f":{conn.port}" if conn.port else ""
        url = f"jdbc:{scheme}://{conn.host}{port}/{conn.schema or ''}"
    out = {"url": str(url)}
    if conn.login:
        out["user"] = str(conn.login)
    if conn.password:
        out["password"] = str(conn.password)
    return out


def with_connections(plan: JobPlan, default_conn_id: str | None = None) -> JobPlan:
    """The plan with each Jdbc block's credentials taken from its Airflow connection (its own option
    ``jdbc_conn_id``, else ``default_conn_id`` for blocks that set no ``user``/``password``). Options
    the block sets itself win. Run time only: the values reach only the private plan file."""
    from dataclasses import replace

    def resolved(vertex: Any) -> Any:
        if vertex.plugin.lower() != "jdbc":
            return vertex
        conn_id = vertex.config.get("jdbc_conn_id")
        if conn_id is None and default_conn_id and not ({"user", "password"} & set(vertex.config)):
            conn_id = default_conn_id
        if not conn_id:
            return vertex
        given = jdbc_options(BaseHook.get_connection(str(conn_id)))
        return replace(vertex, config={**given, **vertex.config})

    pipelines = tuple(replace(p, vertices=tuple(resolved(v) for v in p.vertices)) for p in plan.pipelines)
    return replace(plan, pipelines=pipelines)


def _now() -> str:
    return datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")


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
    """

    conn_name_attr = "spark_conn_id"
    default_conn_name = "spark_default"
    hook_name = "Apache SeaTunnel (on Spark)"

    def __init__(self, config: str | os.PathLike, variables: Mapping[str, Any] | None = None,
                 spark_conn_id: str = "spark_default", *, format: str | None = None,
                 spark_binary: str | None = None, deploy_mode: str | None = None, py_files: str | None = None,
                 spark_submit_kwargs: Mapping[str, Any] | None = None, jdbc_conn_id: str | None = None) -> None:
        super().__init__()
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

    # -- compile ---------------------------------------------------------------------------------

    @property
    def plan(self) -> JobPlan:
        """The compiled plan (through the on-disk plan cache); raises ``ConfigError``."""
        if self._plan is None:
            self._plan = with_connections(compile_job(self.config, self.variables, format=self.format),
                                          self.jdbc_conn_id)
        return self._plan

    def mask_secrets(self) -> None:
        """Register the job's secret option values (passwords, tokens) with Airflow's log masker."""
        from airflow.sdk.log import mask_secret

        from ..spi.secrets import SECRET_OPTIONS

        for pipeline in self.plan.pipelines:
            for vertex in pipeline.vertices:
                for key, value in vertex.config.items():
                    if str(key).lower() in SECRET_OPTIONS and value not in (None, ""):
                        mask_secret(str(value), name=str(key))

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

    def cleanup(self) -> None:
        """Remove the private directory (the plan file holds secrets)."""
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
        self._work_dir = self._plan_file = None

    # -- submit ----------------------------------------------------------------------------------

    def _properties_file(self, sensitive: Mapping[str, str], name: str) -> str | None:
        if not sensitive:
            return None
        path = self.work_dir / f"{name}.properties"
        # spark-submit reads spark-defaults.conf only without --properties-file: carry it over
        conf_dir = os.environ.get("SPARK_CONF_DIR") or (
            str(Path(os.environ["SPARK_HOME"]) / "conf") if os.environ.get("SPARK_HOME") else None)
        defaults = Path(conf_dir) / "spark-defaults.conf" if conf_dir else None
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            if defaults is not None and defaults.is_file():
                f.write(defaults.read_text(encoding="utf-8").rstrip("\n") + "\n")
            for key, value in sorted(sensitive.items()):
                f.write(f"{key} {value}\n")
        return str(path)

    def _spark_hook_kwargs(self, pipeline: PipelinePlan) -> dict[str, Any]:
        conf = spark_conf(self.plan.env, pipeline_jars(self.plan, pipeline))
        sensitive = {k: v for k, v in conf.items() if _SENSITIVE.search(k)}
        public = {k: v for k, v in sorted(conf.items()) if k not in sensitive}
        environ = submit_environment()
        kwargs: dict[str, Any] = dict(
            conf=public, conn_id=self.spark_conn_id, name=f"{self.plan.name}:{pipeline.task_id}",
            env_vars={k: environ[k] for k in _ENV_KEYS if k in environ}, py_files=self.py_files,
            spark_binary=self.spark_binary, deploy_mode=self.deploy_mode,
            properties_file=self._properties_file(sensitive, f"pipeline-{pipeline.task_id}"),
        )
        extra = dict(self.spark_submit_kwargs)
        kwargs["conf"] = {**public, **dict(extra.pop("conf", None) or {})}  # the job's env, then the caller's
        kwargs.update(extra)
        return kwargs

    @staticmethod
    def driver_on_cluster(spark_hook: Any) -> bool:
        """Whether the Spark driver runs on the cluster (YARN/Kubernetes/standalone cluster deploy mode)."""
        return spark_hook._connection.get("deploy_mode") == "cluster"

    def package_zip(self) -> Path:
        """This package and its pure-Python runtime dependency (sqlglot) as one zip for ``--py-files``."""
        import sqlglot

        from .. import __file__ as package_init

        path = self.work_dir / "seatunnel-runtime.zip"
        if not path.exists():
            import zipfile

            roots = [Path(package_init).parent, Path(sqlglot.__file__).parent]
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
                for root in roots:
                    for file in sorted(root.rglob("*.py")):
                        zf.write(file, file.relative_to(root.parent).as_posix())
        return path

    def metrics_file(self, pipeline: PipelinePlan, attempt: int) -> Path:
        return self.work_dir / f"pipeline-{pipeline.task_id}.attempt-{int(attempt)}.metrics.json"

    def spark_submit_hook(self, pipeline: int | str | None = None, run_id: str = "manual",
                          attempt: int = 1) -> Any:
        """The ``SparkSubmitHook`` that runs one pipeline (its application is :data:`APP_FILE`).

        With the driver on this machine, the plan and metrics files are local paths and the
        environment carries our PySpark. With the driver on the cluster, the plan file travels
        with ``--files``, the package with ``--py-files``, and no metrics file comes back.
        """
        from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

        p = self.pipeline(pipeline)
        plan_file = self.plan_file()
        metrics_file = self.metrics_file(p, attempt)
        metrics_file.unlink(missing_ok=True)
        kwargs = self._spark_hook_kwargs(p)
        hook = SparkSubmitHook(application_args=app_arguments(plan_file, p, run_id, attempt, metrics_file),
                               **kwargs)
        if self.driver_on_cluster(hook):
            # Our local PySpark environment makes no sense there: ship the plan and the package instead.
            args = app_arguments(Path(plan_file.name), p, run_id, attempt, None)
            files = ",".join(x for x in (kwargs.get("files"), str(plan_file)) if x)
            kwargs.update(env_vars=self.spark_submit_kwargs.get("env_vars"), files=files,
                          py_files=self.py_files or str(self.package_zip()))
            hook = SparkSubmitHook(application_args=args, **kwargs)
        return hook

    def pipeline_metrics(self, pipeline: int | str | None, run_id: str, attempt: int, started: str,
                         failure: BaseException | None = None, on_cluster: bool = False) -> dict[str, Any]:
        """The metrics the pipeline's application wrote; raise :class:`SeaTunnelPipelineFailed` if it failed."""
        p = self.pipeline(pipeline)
        base = {"pipeline": p.id, "task_id": p.task_id, "name": p.name, "attempt": attempt, "run_id": run_id,
                "start": started, "end": _now(), "read_count": 0, "write_count": 0, "failed_count": 0}
        try:
            metrics = json.loads(self.metrics_file(p, attempt).read_text())
        except (OSError, ValueError):
            if on_cluster and failure is None:
                # the driver ran on the cluster: its counts are in its own log, not here
                metrics = {**base, "status": "FINISHED", "committed": True, "counts_in_driver_log": True}
            else:
                reason = str(failure).splitlines()[0] if failure else "no metrics file was written"
                metrics = {**base, "status": "FAILED", "committed": False,
                           "error": {"kind": "runtime", "deterministic": False, "plugin": None,
                                     "pipeline": p.task_id,
                                     "message": f"spark-submit failed before the pipeline reported: {reason}"}}
        if failure is not None and metrics.get("status") == "FINISHED":
            metrics["status"] = "FAILED"
            metrics.setdefault("error", {"kind": "runtime", "deterministic": False, "plugin": None,
                                         "pipeline": p.task_id, "message": str(failure).splitlines()[0]})
        if metrics.get("status") != "FINISHED":
            err = metrics.get("error") or {}
            who = f" in {err['plugin']}" if err.get("plugin") else ""
            raise SeaTunnelPipelineFailed(
                f"pipeline {p.id} ({p.task_id}) of job {self.plan.name!r} failed{who}: "
                f"{err.get('message', 'unknown error')}", metrics)
        return metrics

    def submit(self, pipeline: int | str | None = None, run_id: str = "manual", attempt: int = 1) -> dict[str, Any]:
        """Run one pipeline as a Spark application and wait for it; return its metrics.

        Raises :class:`SeaTunnelPipelineFailed` (with the metrics and their ``error``) when it fails.
        (``SeaTunnelOperator`` runs the same hook through the Spark provider's operator instead,
        for its durable tracking of applications whose driver runs on the cluster.)
        """
        self._spark_hook = self.spark_submit_hook(pipeline, run_id, attempt)
        started = _now()
        failure: AirflowException | None = None
        try:
            self._spark_hook.submit(str(APP_FILE))
        except AirflowException as e:
            failure = e
        try:
            return self.pipeline_metrics(pipeline, run_id, attempt, started, failure,
                                         self.driver_on_cluster(self._spark_hook))
        except SeaTunnelPipelineFailed as e:
            raise e from failure

    def submit_job(self, run_id: str = "manual", attempt: int = 1) -> dict[str, Any]:
        """Run every pipeline of the job, one after another; return the job's metrics.

        Pipelines are independent: one failing does not stop the others. Raises
        :class:`SeaTunnelPipelineFailed` (with the job's metrics) when any failed.
        """
        from ..runtime.summary import job_metrics

        started, results = _now(), []
        for p in self.plan.pipelines:
            try:
                results.append(self.submit(p.id, run_id=run_id, attempt=attempt))
            except SeaTunnelPipelineFailed as e:
                results.append(e.metrics)
        job = job_metrics(self.plan.name, results, started, _now())
        failed = [m.get("task_id", "?") for m in results if m.get("status") != "FINISHED"]
        if failed:
            error = next((m["error"] for m in results if m.get("status") != "FINISHED" and m.get("error")), {})
            raise SeaTunnelPipelineFailed(f"job {self.plan.name!r}: pipelines failed: {', '.join(failed)}",
                                          {**job, "error": error})
        return job

    def on_kill(self) -> None:
        """Kill the running Spark application (delegates to ``SparkSubmitHook.on_kill``)."""
        if self._spark_hook is not None:
            self._spark_hook.on_kill()
