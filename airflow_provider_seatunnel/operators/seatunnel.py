"""``SeaTunnelOperator``: run one pipeline of a SeaTunnel job as an Airflow task.

It is the Spark provider's ``SparkSubmitOperator`` with the application, its arguments and
its Spark settings derived from the compiled job: where the driver runs on the cluster
(YARN, Kubernetes, standalone cluster mode) the provider's durable job tracking makes a retry
after a worker crash reconnect to the running application instead of submitting a second one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, BaseOperatorLink
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from ..config.errors import ConfigError
from ..hooks.seatunnel import SeaTunnelHook
from ..runtime.context import now
from ..runtime.launcher import APP_FILE, pipeline_drivers, stop_drivers
from ..runtime.metrics import PipelineMetrics

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from ..plan.model import JobPlan, PipelinePlan

_FORMATS = {".conf": "hocon", ".hocon": "hocon", ".json": "json", ".sql": "sql"}
#: The XCom key every pipeline task pushes its metrics under, failed or not (the group's summary reads it).
METRICS_XCOM_KEY = "seatunnel_metrics"


def format_of(config: Any) -> str | None:
    """The format a config path's extension names (kept, because rendering replaces the path by its text)."""
    if isinstance(config, (str, os.PathLike)):
        s = os.fspath(config)
        if "\n" not in s and "{" not in s:
            return _FORMATS.get(Path(s).suffix.lower())
    return None


def pipeline_assets(pipeline: PipelinePlan) -> tuple[list[Asset], list[Asset]]:
    """Airflow lineage of one pipeline: its sources' data as inlets, its sinks' targets as outlets."""
    from ..spi import Lineage, get_connector

    def uris(vertices: Sequence[Any]) -> list[str]:
        out: list[str] = []
        for v in vertices:
            connector = get_connector(v.plugin)
            if isinstance(connector, Lineage):
                out += [u for u in connector.assets(v.config) if u not in out]
        return sorted(out)

    return ([Asset(uri) for uri in uris(pipeline.sources)], [Asset(uri) for uri in uris(pipeline.sinks)])


def retry_policy(pipeline: PipelinePlan) -> tuple[int | None, timedelta | None]:
    """The pipeline's restore policy as Airflow's ``retries`` and ``retry_delay``."""
    retry = pipeline.retry or {}
    times = retry.get("times")
    interval = retry.get("interval_seconds")
    return (int(times) if times is not None else None,
            timedelta(seconds=float(interval)) if interval is not None else None)


class SparkApplicationLink(BaseOperatorLink):
    """The Spark UI of the pipeline's application (the master's or the resource manager's page for it)."""

    name = "Spark UI"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        from airflow.providers.common.compat.sdk import XCom

        return XCom.get_value(ti_key=ti_key, key=self.xcom_key) or ""


def spark_ui_url(metrics: Mapping[str, Any], master: str, connection_extra: Mapping[str, Any]) -> str | None:
    """Where the application's Spark UI is, as far as this side can tell."""
    app_id = metrics.get("application_id")
    if master.startswith("spark://") and app_id:
        host = urlsplit(master.split(",")[0]).hostname or "localhost"
        return f"http://{host}:{connection_extra.get('master_ui_port', 8080)}/app/?appId={app_id}"
    rm = connection_extra.get("yarn_resourcemanager_webapp_address")
    if master.startswith("yarn") and rm and app_id:
        return f"{str(rm).rstrip('/')}/cluster/app/{app_id}"
    return metrics.get("ui_url") or None


class ConfigTemplateMixin:
    """Render a config given as an absolute file path too (Jinja's loader only searches the DAG's folders)."""

    template_ext: Sequence[str]
    template_fields: Sequence[str]

    def resolve_template_files(self) -> None:
        """As Airflow's, leaving absolute config paths to :meth:`render_template` (no parse-time error)."""
        absolute = {name: value for name in self.template_fields
                    if isinstance(value := getattr(self, name, None), str) and os.path.isabs(value)}
        for name in absolute:
            setattr(self, name, None)
        try:
            super().resolve_template_files()  # type: ignore[misc]
        finally:
            for name, value in absolute.items():
                setattr(self, name, value)

    def render_template(self, content: Any, context: Any, jinja_env: Any = None, seen_oids: Any = None) -> Any:
        if (isinstance(content, str) and content.endswith(tuple(self.template_ext)) and os.path.isabs(content)
                and os.path.isfile(content)):
            if not jinja_env:
                jinja_env = self.get_template_env()  # type: ignore[attr-defined]
            return self._render(  # type: ignore[attr-defined]
                jinja_env.from_string(Path(content).read_text(encoding="utf-8")), context)
        return super().render_template(content, context, jinja_env, seen_oids)  # type: ignore[misc]


class SeaTunnelOperator(ConfigTemplateMixin, SparkSubmitOperator):
    """Run one pipeline (SubPlan) of a SeaTunnel job with ``spark-submit``; its metrics are the XCom value.

    :param config: a config file (``.conf``/``.hocon``/``.json``/``.sql``, rendered as a Jinja template
        and found on the DAG's template search path) or the config text. Templated.
    :param variables: the job's variables (``{"dt": "{{ ds }}"}``). Templated.
    :param pipeline: the pipeline to run (number or task id); may be omitted when the job has one.
    :param spark_conn_id: the Spark connection (master, deploy mode).
    :param run_key: what, with the DAG run id, names the job's run (its commits, save modes, staging);
        default: the enclosing task group's id, else this task's id. Pipelines of one job share it.
    :param retries: default: the config's ``job.retry.times`` (an Airflow retry is the pipeline restore).
    :param retry_delay: default: the config's ``job.retry.interval.seconds``.
    :param durable: where the driver runs on the cluster, a retry reconnects to an application still
        running instead of submitting another (the Spark provider's tracking; Airflow 3.3+).
    :param py_files: ``--py-files``; with the driver on the cluster it defaults to a zip of this package.
    :param spark_submit_kwargs: further ``SparkSubmitHook`` arguments (``executor_memory``, ``jars``...).
    :param jdbc_conn_id: an Airflow connection for the Jdbc blocks that name none (their option
        ``jdbc_conn_id``) and set no credentials: its URL, login and password, resolved at run time.

    ``inlets``/``outlets`` default to the job's sources and sinks as Airflow assets. A ``ConfigError``
    or a deterministic failure (a broken Assert rule, bad data, an option only checkable at run time)
    raises ``AirflowFailException``: retrying cannot fix it. Anything else raises a retryable
    ``AirflowException``.
    """

    template_fields: Sequence[str] = ("config", "variables")
    template_ext: Sequence[str] = (".conf", ".hocon", ".json", ".sql")
    template_fields_renderers: ClassVar[dict[str, str]] = {"variables": "json"}
    operator_extra_links = (SparkApplicationLink(),)
    ui_color = "#1890ff"
    ui_fgcolor = "#ffffff"

    def __init__(self, *, config: str | os.PathLike, variables: Mapping[str, Any] | None = None,
                 pipeline: int | str | None = None, spark_conn_id: str = "spark_default", format: str | None = None,
                 spark_binary: str | None = None, deploy_mode: str | None = None, py_files: str | None = None,
                 spark_submit_kwargs: Mapping[str, Any] | None = None, run_key: str | None = None,
                 retries: int | None = None, retry_delay: timedelta | float | None = None,
                 durable: bool | None = None, jdbc_conn_id: str | None = None, **kwargs: Any) -> None:
        fmt = format or format_of(config)
        config = os.fspath(config)
        variables = dict(variables or {})
        if retries is None or retry_delay is None or "inlets" not in kwargs or "outlets" not in kwargs:
            plan = self._parse_time_plan(config, variables, fmt, kwargs.get("dag"))
            chosen = _choose(plan, pipeline)
            if chosen is not None:
                default_retries, default_delay = retry_policy(chosen)
                retries = default_retries if retries is None else retries
                retry_delay = default_delay if retry_delay is None else retry_delay
                inlets, outlets = pipeline_assets(chosen)
                kwargs.setdefault("inlets", inlets)
                kwargs.setdefault("outlets", outlets)
        if retries is not None:
            kwargs["retries"] = retries
        if retry_delay is not None:
            kwargs["retry_delay"] = retry_delay
        super().__init__(application=str(APP_FILE), conn_id=spark_conn_id, name="seatunnel", durable=durable,
                         **kwargs)
        self.config = config
        self.variables = variables
        self.pipeline = pipeline
        self.spark_conn_id = spark_conn_id
        self.format = fmt
        self.spark_binary = spark_binary
        self.deploy_mode = deploy_mode
        self.seatunnel_py_files = py_files
        self.spark_submit_kwargs = dict(spark_submit_kwargs or {})
        self.run_key = run_key
        self.jdbc_conn_id = jdbc_conn_id

    # -- parse time ------------------------------------------------------------------------------

    @staticmethod
    def _parse_time_plan(config: str, variables: Mapping[str, Any], fmt: str | None, dag: Any) -> JobPlan | None:
        """The job as it compiles at parse time (through the plan cache, no Spark), or None
        (a templated config, a file only found on the template search path at run time...)."""
        from airflow.sdk.definitions._internal.contextmanager import DagContext

        from ..plan.compiler import compile_job

        dag = dag or DagContext.get_current()
        candidates: list[str] = [config]
        if dag is not None and format_of(config) and not os.path.isabs(config):
            searchpath = getattr(dag, "template_searchpath", None)
            dirs = [searchpath] if isinstance(searchpath, str) else list(searchpath or [])
            dirs.append(getattr(dag, "folder", None))
            candidates += [str(Path(d) / config) for d in dirs if d]
        for candidate in candidates:
            if "{{" in candidate:
                continue
            try:
                return compile_job(candidate, variables, format=fmt)
            except (ConfigError, OSError, ValueError):
                continue  # not found here, or templated: execute() reports real errors
        return None

    # -- run time --------------------------------------------------------------------------------

    @cached_property
    def hook(self) -> SeaTunnelHook:
        """The SeaTunnel hook (compiles the rendered config; builds the ``SparkSubmitHook``)."""
        return SeaTunnelHook(self.config, self.variables, self.spark_conn_id, format=self.format,
                             spark_binary=self.spark_binary, deploy_mode=self.deploy_mode,
                             py_files=self.seatunnel_py_files, spark_submit_kwargs=self.spark_submit_kwargs,
                             jdbc_conn_id=self.jdbc_conn_id)

    def job_run_id(self, context: Any) -> str:
        """The run id the pipeline's sinks commit under: the DAG run plus the job's run key."""
        key = self.run_key
        if key is None:
            group = getattr(self, "task_group", None)
            key = getattr(group, "group_id", None) or self.task_id
        return f"{context['run_id']}:{key}"

    def _get_hook(self) -> SparkSubmitHook:
        """The Spark provider's hook factory (its ``execute`` and ``on_kill`` ask it): the
        ``SparkSubmitHook`` the SeaTunnel hook built for this run's pipeline in :meth:`execute`."""
        spark_hook = self.hook.spark_hook
        if spark_hook is None:
            raise AirflowException("no pipeline was submitted: the SeaTunnel hook builds the SparkSubmitHook "
                                   "in execute()")
        return spark_hook

    def execute(self, context: Any) -> dict[str, Any]:  # type: ignore[override]  # the XCom value
        from ..plan.render import render_text
        from ..runtime.summary import job_metrics, render_summary

        hook = self.hook
        try:
            plan = hook.plan
            pipeline = hook.pipeline(self.pipeline)
        except ConfigError as e:
            raise AirflowFailException(f"SeaTunnel config error:\n{e}") from None
        except (KeyError, ValueError) as e:
            raise AirflowFailException(str(e.args[0] if e.args else e)) from None
        hook.mask_secrets()
        self.log.info("SeaTunnel job %s, running pipeline %s (%s):\n%s", plan.name, pipeline.id, pipeline.task_id,
                      render_text(plan))
        run_id = self.job_run_id(context)
        ti = context.get("ti")
        attempt = int(getattr(ti, "try_number", None) or 1)
        hook.spark_submit_hook(pipeline.id, run_id=run_id, attempt=attempt)  # what _get_hook() hands the provider
        started = now()
        failure: Exception | None = None
        try:
            try:
                super().execute(context)  # SparkSubmitOperator: plain submit, or durable tracking on a cluster
            except Exception as e:  # the metrics file says why; the exception is the fallback
                failure = e
            metrics = self._for_task(hook.pipeline_metrics(pipeline.id, run_id, attempt, started, failure))
        finally:
            hook.cleanup()
        self._publish(context, metrics)
        summary = render_summary(job_metrics(plan.name, [metrics], metrics.start or "", metrics.end or ""))
        if metrics.ok:
            self.log.info("%s", summary)
            return metrics.to_dict()
        self.log.error("%s", summary)
        message = hook.failure_message(metrics)
        if metrics.deterministic:
            raise AirflowFailException(f"{message} (not retried: the same input fails the same way)")
        raise AirflowException(message)

    def _for_task(self, metrics: PipelineMetrics) -> PipelineMetrics:
        """The metrics under this task's names: its own task id (``airflow_task_id``), and the
        ``pipeline`` it was given as ``task_id`` where the compiled one differs (only in its hash,
        when rendered variables changed a path), the compiled one kept as ``compiled_task_id``."""
        metrics = metrics.with_extra(airflow_task_id=self.task_id)
        if metrics.task_id and isinstance(self.pipeline, str) and metrics.task_id != self.pipeline:
            metrics = replace(metrics, task_id=self.pipeline).with_extra(compiled_task_id=metrics.task_id)
        return metrics

    def _publish(self, context: Any, metrics: PipelineMetrics) -> None:
        """Push the metrics (for the group's summary) and the Spark UI link, where known."""
        ti = context.get("ti")
        if ti is None:
            return
        ti.xcom_push(key=METRICS_XCOM_KEY, value=metrics.to_dict())
        connection = self.hook.spark_connection()
        url = spark_ui_url(metrics.to_dict(), connection.master, connection.extra)
        if url:
            ti.xcom_push(key=SparkApplicationLink().xcom_key, value=url)

    #: How long a STREAMING pipeline may take to commit its running micro-batch when the task is killed.
    stream_stop_timeout: float = 60.0

    def on_kill(self) -> None:
        """Stop the pipeline's Spark application: a STREAMING pipeline whose driver runs here first gets
        SIGTERM (its running micro-batch commits, its queries stop); then the Spark provider's kill."""
        hook = self.__dict__.get("hook")  # the cached SeaTunnel hook: only there once execute() ran
        if hook is None or hook.spark_hook is None:
            return  # nothing was submitted
        if hook.plan.mode.upper() == "STREAMING" and hook.plan_path is not None:
            drivers = pipeline_drivers(str(hook.plan_path))
            if drivers:
                self.log.info("stopping the streaming pipeline gracefully (SIGTERM to its driver)")
                if stop_drivers(drivers, self.stream_stop_timeout):
                    return
        super().on_kill()


def _choose(plan: JobPlan | None, pipeline: int | str | None) -> PipelinePlan | None:
    if plan is None or not plan.pipelines:
        return None
    if pipeline is None:
        return plan.pipelines[0] if len(plan.pipelines) == 1 else None
    try:
        return plan.pipeline(pipeline)
    except KeyError:
        return None
