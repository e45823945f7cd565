"""``SeaTunnelOperator``: run one pipeline of a SeaTunnel job as an Airflow task.

It is the Spark provider's ``SparkSubmitOperator`` with the application, its arguments and
its Spark settings derived from the compiled job: where the driver runs on the cluster
(YARN, Kubernetes, standalone cluster mode) the provider's durable job tracking makes a retry
after a worker crash reconnect to the running application instead of submitting a second one.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import BaseOperatorLink
from airflow.sdk.exceptions import AirflowException, AirflowFailException
from jinja2 import TemplateNotFound

from ..config.errors import ConfigError
from ..connection_forms import HISTORY_SERVER_EXTRA
from ..hooks.seatunnel import SeaTunnelHook, compile_warnings, not_runnable, pipeline_warnings
from ..runtime.context import now
from ..runtime.launcher import APP_FILE, pipeline_drivers, stop_drivers
from ..runtime.metrics import PipelineMetrics
from ..spi.errors import RuntimeConfigError
from .authoring import (
    WARNING_MARK,
    blocked_doc,
    dag_of,
    find_config,
    is_config_path,
    not_found_error,
    report_compile_warnings,
    report_not_runnable,
    search_dirs,
    strict_default,
)
from .deferrable import DeferrablePipeline, refused_at_parse
from .lineage import operator_lineage, pipeline_assets, publish_assets
from .observability import ProgressRelay, send_pipeline_metrics

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


def _config_retries(plan: JobPlan, pipeline: PipelinePlan, retries: int | None,
                    retry_delay: timedelta | float | None) -> tuple[int | None, timedelta | float | None]:
    """What the config sets wins over every argument (and ``default_args``); a differing argument
    is named in a warning, so the DAG author sees why it has no effect."""
    times, delay = retry_policy(plan, pipeline)
    overridden = []
    if times is not None and retries is not None and retries != times:
        overridden.append(f"retries={retries} (job.retry.times = {times})")
    given = retry_delay.total_seconds() if isinstance(retry_delay, timedelta) else retry_delay
    if delay is not None and given is not None and given != delay.total_seconds():
        overridden.append(f"retry_delay={given:g}s (job.retry.interval.seconds = {delay.total_seconds():g})")
    if overridden:
        warnings.warn(f"pipeline {pipeline.task_id}: the config's restore settings win over "
                      f"{', '.join(overridden)}; remove them from the config's env to use the argument",
                      UserWarning, stacklevel=4)
    # nothing set anywhere (Airflow fills `retries`/`retry_delay` from the group's and DAG's default_args
    # before __init__): SeaTunnel's restore policy, as the plan reports it, instead of Airflow's 0 retries
    default_times, default_delay = default_retry_policy(pipeline)
    return (times if times is not None else retries if retries is not None else default_times,
            delay if delay is not None else retry_delay if retry_delay is not None else default_delay)


def default_retry_policy(pipeline: PipelinePlan | None) -> tuple[int, timedelta]:
    """SeaTunnel's restore policy of a pipeline whose job, task and ``default_args`` set none: the
    plan's ``job.retry.times`` and ``job.retry.interval.seconds`` with SeaTunnel's defaults (3 restores,
    3 s apart), the values the plan's text prints; those defaults where the pipeline is not known at
    parse time (a templated config, a job not compiling yet, a pipeline left to choose)."""
    retry = (pipeline.retry if pipeline is not None else None) or {}
    return int(retry.get("times", 3)), timedelta(seconds=float(retry.get("interval_seconds", 3)))


def retry_policy(plan: JobPlan, pipeline: PipelinePlan) -> tuple[int | None, timedelta | None]:
    """The restore policy the config sets, as Airflow's ``retries`` and ``retry_delay``: the
    pipeline's ``job.retry.times`` and ``job.retry.interval.seconds`` where the job's ``env`` sets
    them, None where it does not (then the task's argument, the task group's ``default_args``, the
    DAG's, and last SeaTunnel's defaults: :func:`default_retry_policy`)."""
    from ..config.hocon import MISSING
    from ..config.options import lookup

    retry = pipeline.retry or {}
    times = retry.get("times") if lookup(plan.env, "job.retry.times") is not MISSING else None
    interval = retry.get("interval_seconds") if lookup(plan.env, "job.retry.interval.seconds") is not MISSING else None
    return (int(times) if times is not None else None,
            timedelta(seconds=float(interval)) if interval is not None else None)




class SparkApplicationLink(BaseOperatorLink):
    """The Spark UI of the pipeline's application, where it outlives the task: the History Server's page
    for it, the standalone master's or the resource manager's page, a Spark Connect server's UI. None for a
    driver UI that died with the task (``local[*]``, client mode without a History Server)."""

    name = "Spark UI"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        # the task runner asks it in the worker once the task ended, and stores it under xcom_key for the
        # UI: the link the task found, read from the operator (no XCom lookup, no "XCom not found" error)
        return getattr(operator, "spark_ui_link", None) or ""


def spark_ui_url(metrics: Mapping[str, Any], master: str, connection_extra: Mapping[str, Any]) -> str | None:
    """Where the application's Spark UI is once the task ended, as far as this side can tell; None
    where only the driver's own UI showed it (gone with the driver)."""
    app_id = metrics.get("application_id")
    history = connection_extra.get(HISTORY_SERVER_EXTRA)
    if history and app_id:
        return f"{str(history).rstrip('/')}/history/{app_id}/jobs/"
    if master.startswith("spark://") and app_id:
        host = urlsplit(master.split(",")[0]).hostname or "localhost"
        return f"http://{host}:{connection_extra.get('master_ui_port', 8080)}/app/?appId={app_id}"
    rm = connection_extra.get("yarn_resourcemanager_webapp_address")
    if master.startswith("yarn") and rm and app_id:
        return f"{str(rm).rstrip('/')}/cluster/app/{app_id}"
    if metrics.get("spark_connect"):  # the Connect server's UI outlives the session
        return metrics.get("ui_url") or None
    return None


class ConfigTemplateMixin:
    """Render a config given as an absolute file path too (Jinja's loader only searches the DAG's
    folders); a relative config path found nowhere fails, naming every place looked at.

    Only the fields in :attr:`file_template_fields` are read as template files when their value ends
    with one of ``template_ext``; every other templated field (the Spark provider's ``conf``,
    ``properties_file``, ``files``...) is rendered as the text it is, so a ``spark-defaults.conf``
    path stays a path."""

    template_ext: Sequence[str]
    template_fields: Sequence[str]
    #: the templated fields whose value may name a template file (by its ``template_ext``)
    file_template_fields: Sequence[str] = ("config",)
    _rendering_text = False  # while rendering a field outside file_template_fields

    def resolve_template_files(self) -> None:
        """As Airflow's for the config alone, leaving an absolute config path to :meth:`render_template`
        (no parse-time error) and every other field as it is."""
        hidden = {name: value for name in self.template_fields
                  if (value := getattr(self, name, None)) is not None
                  and (name not in self.file_template_fields or (isinstance(value, str) and os.path.isabs(value)))}
        for name in hidden:
            setattr(self, name, None)
        try:
            super().resolve_template_files()  # type: ignore[misc]
        finally:
            for name, value in hidden.items():
                setattr(self, name, value)

    def _do_render_template_fields(self, parent: Any, template_fields: Any, context: Any, jinja_env: Any,
                                   seen_oids: set[int]) -> None:
        """Airflow's rendering, with the fields outside :attr:`file_template_fields` rendered as text."""
        render = super()._do_render_template_fields  # type: ignore[misc]
        if parent is not self:
            return render(parent, template_fields, context, jinja_env, seen_oids)
        names = list(template_fields)
        render(parent, [n for n in names if n in self.file_template_fields], context, jinja_env, seen_oids)
        self._rendering_text = True
        try:
            render(parent, [n for n in names if n not in self.file_template_fields], context, jinja_env, seen_oids)
        finally:
            self._rendering_text = False

    def render_template(self, content: Any, context: Any, jinja_env: Any = None, seen_oids: Any = None) -> Any:
        if self._rendering_text and isinstance(content, str):
            return self._render(  # type: ignore[attr-defined]
                (jinja_env or self.get_template_env()).from_string(content), context)  # type: ignore[attr-defined]
        if (isinstance(content, str) and content.endswith(tuple(self.template_ext)) and os.path.isabs(content)
                and os.path.isfile(content)):
            if not jinja_env:
                jinja_env = self.get_template_env()  # type: ignore[attr-defined]
            return self._render(  # type: ignore[attr-defined]
                jinja_env.from_string(Path(content).read_text(encoding="utf-8")), context)
        try:
            return super().render_template(content, context, jinja_env, seen_oids)  # type: ignore[misc]
        except TemplateNotFound:
            path = isinstance(content, str) and is_config_path(content) and content.endswith(tuple(self.template_ext))
            if not path:
                raise
            _, looked_in = find_config(content, dag_of(self))
            raise AirflowFailException(f"SeaTunnel config error:\n{not_found_error(content, looked_in)}") from None


class SeaTunnelOperator(ConfigTemplateMixin, DeferrablePipeline, SparkSubmitOperator):
    """Run one pipeline (SubPlan) of a SeaTunnel job with ``spark-submit``; its metrics are the XCom value.

    :param config: a config file (``.conf``/``.hocon``/``.json``/``.sql``, rendered as a Jinja template
        and found on the DAG's template search path) or the config text. Templated.
    :param variables: the job's variables (``{"dt": "{{ ds }}"}``). Templated.
    :param pipeline: the pipeline to run (number or task id); may be omitted when the job has one.
    :param spark_conn_id: the Spark connection (master, deploy mode).
    :param run_key: what, with the DAG run id, names the job's run (its commits, save modes, staging);
        default: the enclosing task group's id, else this task's id. Pipelines of one job share it.
    :param retries: the config's ``job.retry.times`` when it sets it (an Airflow retry is the pipeline
        restore); otherwise this argument, else ``default_args`` (the task group's, then the DAG's),
        else SeaTunnel's default restore policy (3 retries), never Airflow's default of none.
    :param retry_delay: likewise, the config's ``job.retry.interval.seconds`` first; SeaTunnel's 3 s last.
    :param durable: where the driver runs on the cluster, a retry reconnects to an application still
        running instead of submitting another (the Spark provider's tracking; Airflow 3.3+).
    :param py_files: ``--py-files``; with the driver on the cluster it defaults to a zip of this package.
    :param spark_submit_kwargs: further ``SparkSubmitHook`` arguments (``executor_memory``, ``jars``...).
    :param jdbc_conn_id: an Airflow connection for the Jdbc blocks that name none (their option
        ``jdbc_conn_id``) and set no credentials: its URL, login and password, resolved at run time.
    :param strict: at parse time, a pipeline holding what cannot run here (what ``validate`` refuses)
        is the DAG's import error instead of a warning; default: the ``[seatunnel] strict`` setting.
        At run time such a pipeline always fails with ``AirflowFailException`` before Spark starts.
    :param deferrable: free the worker slot while the pipeline runs: its driver (spark-submit in client
        deploy mode, or a Spark Connect client with a ``spark_connect`` connection) runs detached on the
        worker's machine and a trigger watches it (:mod:`.deferrable`); BATCH jobs, never cluster deploy mode.

    A relative ``config`` path is looked for in the DAG file's folder, then in the DAG's
    ``template_searchpath``, then as given relative to the working directory; found at parse time,
    the task holds its absolute path.

    ``inlets``/``outlets`` default to the job's sources and sinks as Airflow assets (a sink's target known
    only at run time as an asset alias, resolved when the pipeline committed); with the OpenLineage provider,
    the task reports its datasets, schemas, row counts and column lineage (:mod:`.lineage`). ``conf`` (and
    the OpenLineage keys ``openlineage_inject_parent_job_info``/``..._transport_info`` add to it) joins the
    job's Spark settings in the properties file; ``env_vars`` join spark-submit's environment (the
    launcher's own variables win). The Spark provider's templated fields stay templated (``conf``,
    ``env_vars``...), rendered as text: only ``config`` is read as a template file. A ``ConfigError``
    or a deterministic failure (a broken Assert rule, bad data, an option only checkable at run time)
    raises ``AirflowFailException``: retrying cannot fix it. Anything else raises a retryable
    ``AirflowException``.
    """

    #: ours, then the Spark provider's (``conf``, ``env_vars``, ``application_args``... stay templated)
    template_fields: Sequence[str] = ("config", "variables", *SparkSubmitOperator.template_fields)
    template_ext: Sequence[str] = (".conf", ".hocon", ".json", ".sql")
    template_fields_renderers: ClassVar[dict[str, str]] = {"variables": "json", "conf": "json", "env_vars": "json"}
    operator_extra_links = (SparkApplicationLink(),)
    ui_color = "#1890ff"
    ui_fgcolor = "#ffffff"

    def __init__(self, *, config: str | os.PathLike, variables: Mapping[str, Any] | None = None,
                 pipeline: int | str | None = None, spark_conn_id: str = "spark_default", format: str | None = None,
                 spark_binary: str | None = None, deploy_mode: str | None = None, py_files: str | None = None,
                 spark_submit_kwargs: Mapping[str, Any] | None = None, run_key: str | None = None,
                 retries: int | None = None, retry_delay: timedelta | float | None = None,
                 durable: bool | None = None, jdbc_conn_id: str | None = None, strict: bool | None = None,
                 deferrable: bool = False, **kwargs: Any) -> None:
        from airflow.sdk.definitions._internal.contextmanager import DagContext

        if kwargs.get("application_args"):
            raise ValueError("SeaTunnelOperator: application_args are the pipeline launcher's own; pass the job's "
                             "values as variables=...")
        fmt = format or format_of(config)
        variables = dict(variables or {})
        plan = _group_plan(kwargs.get("task_group"), os.fspath(config), variables, fmt)
        in_group = plan is not None  # built by a SeaTunnelJobGroup, which compiled and checked the job
        if not in_group:
            dag = kwargs.get("dag") or DagContext.get_current()
            config, _ = find_config(config, dag)
            plan = self._parse_time_plan(os.fspath(config), variables, fmt, search_dirs(dag))
        config = os.fspath(config)
        chosen = _choose(plan, pipeline)
        refused = deferrable and refused_at_parse(
            (spark_submit_kwargs or {}).get("deploy_mode", deploy_mode), plan.mode if plan is not None else None)
        if refused:
            raise ValueError(f"SeaTunnelOperator {kwargs.get('task_id')!r}: {refused}")
        if plan is not None and chosen is not None:
            retries, retry_delay = _config_retries(plan, chosen, retries, retry_delay)
            if "inlets" not in kwargs or "outlets" not in kwargs:
                inlets, outlets = pipeline_assets(chosen)
                kwargs.setdefault("inlets", inlets)
                kwargs.setdefault("outlets", outlets)
            if not in_group:
                _check_runnable(plan, chosen, strict, kwargs)
        unknown_times, unknown_delay = default_retry_policy(None)  # the pipeline is only known at run time
        kwargs["retries"] = retries if retries is not None else unknown_times
        kwargs["retry_delay"] = retry_delay if retry_delay is not None else unknown_delay
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
        self.deferrable = deferrable  # the driver detached, a trigger watching it (.deferrable)
        # the pipeline's id as parsed: the one id its run uses (hooks.seatunnel.one_task_id)
        self.pipeline_task_id = (chosen.task_id if chosen is not None
                                 else pipeline if isinstance(pipeline, str) else None)

    # -- parse time ------------------------------------------------------------------------------

    @staticmethod
    def _parse_time_plan(config: str, variables: Mapping[str, Any], fmt: str | None,
                         include_dirs: list[str]) -> JobPlan | None:
        """The job as it compiles at parse time (through the plan cache, no Spark), or None (a
        templated config, a file not found...: :meth:`execute` reports what is wrong then)."""
        from ..plan.compiler import compile_job

        if "{{" in config:
            return None
        try:
            return compile_job(config, variables, format=fmt, include_dirs=include_dirs)
        except (ConfigError, OSError, ValueError):
            return None

    # -- run time --------------------------------------------------------------------------------

    @cached_property
    def hook(self) -> SeaTunnelHook:
        """The SeaTunnel hook (compiles the rendered config; builds the ``SparkSubmitHook``)."""
        return SeaTunnelHook(self.config, self.variables, self.spark_conn_id, format=self.format,
                             spark_binary=self.spark_binary, deploy_mode=self.deploy_mode,
                             py_files=self.seatunnel_py_files, spark_submit_kwargs=self.spark_submit_kwargs,
                             jdbc_conn_id=self.jdbc_conn_id, include_dirs=search_dirs(dag_of(self)),
                             task_id=getattr(self, "pipeline_task_id", None))

    def restore_policy(self) -> tuple[int, float]:
        """The restore policy this task really has (Airflow's ``retries`` and ``retry_delay`` as the
        task was built: the config's ``job.retry.*``, else the arguments and ``default_args``, else
        SeaTunnel's defaults), which the plan text in the task log prints."""
        delay = self.retry_delay
        seconds = delay.total_seconds() if isinstance(delay, timedelta) else float(delay or 0)
        return int(self.retries or 0), seconds

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
        if self.conf:  # the operator's conf, with what the Spark provider's execute() injected (OpenLineage)
            self.hook.add_spark_conf(self.conf)
        if self.env_vars:  # the operator's (rendered) environment joins the submission's, which wins
            spark_hook._env_vars = {**{str(k): str(v) for k, v in self.env_vars.items()},
                                    **(spark_hook._env_vars or {})}
        return spark_hook

    def _compiled(self) -> tuple[JobPlan, PipelinePlan]:
        """The rendered job's plan and this task's pipeline; a config error fails the task (not retried)."""
        hook = self.hook
        try:
            plan = hook.plan
            pipeline = hook.pipeline(self.pipeline)
        except ConfigError as e:
            raise AirflowFailException(f"SeaTunnel config error:\n{e}") from None
        except (KeyError, ValueError) as e:
            raise AirflowFailException(str(e.args[0] if e.args else e)) from None
        hook.mask_secrets()
        return plan, pipeline

    def execute(self, context: Any) -> dict[str, Any]:  # type: ignore[override]  # the XCom value
        from ..plan.render import render_text

        hook = self.hook
        plan, pipeline = self._compiled()
        self.log.info("SeaTunnel job %s, running pipeline %s (%s):\n%s", plan.name, pipeline.id, pipeline.task_id,
                      render_text(plan, restore={pipeline.task_id: self.restore_policy()}))
        for warning in pipeline_warnings(plan, pipeline):
            self.log.warning("SeaTunnel compile warning: %s", warning.format())
        run_id = self.job_run_id(context)
        ti = context.get("ti")
        attempt = int(getattr(ti, "try_number", None) or 1)
        blockers = not_runnable(plan, pipeline) + hook.connect_blockers(pipeline)
        if blockers:
            self._refuse(context, plan, pipeline, blockers, run_id, attempt)
        if self.deferrable:
            self._defer(pipeline, run_id, attempt)  # raises TaskDeferred: the work directory stays
        try:
            metrics = self._for_task(self._run(context, pipeline, run_id, attempt))
        finally:
            hook.cleanup()
        return self._report(context, plan, metrics)

    def _report(self, context: Any, plan: JobPlan, metrics: PipelineMetrics) -> dict[str, Any]:
        """Publish the pipeline's metrics and log its summary; its metrics, or the failure raised
        (``AirflowFailException`` for a deterministic one: not retried)."""
        from ..runtime.summary import job_metrics, render_summary

        hook = self.hook
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

    def _run(self, context: Any, pipeline: PipelinePlan, run_id: str, attempt: int) -> PipelineMetrics:
        """Run the pipeline: as a session of the Spark Connect server a ``spark_connect`` connection
        names, from this task; else as a Spark application through the Spark provider's operator."""
        hook = self.hook
        ti = context.get("ti")
        push = (lambda key, value: ti.xcom_push(key=key, value=value)) if ti is not None else (lambda key, value: None)
        if hook.spark_connect() is not None:
            return hook.run_connect(pipeline.id, run_id, attempt, say=self.log.info,
                                    on_progress=ProgressRelay(push).publish)
        hook.spark_submit_hook(pipeline.id, run_id=run_id, attempt=attempt)  # what _get_hook() hands the provider
        progress_file = hook.progress_file(pipeline, attempt)
        relay = ProgressRelay(push, str(progress_file) if progress_file else None).start()
        started = now()
        failure: Exception | None = None
        try:
            super().execute(context)  # SparkSubmitOperator: plain submit, or durable tracking on a cluster
        except Exception as e:  # the metrics file says why; the exception is the fallback
            failure = e
        finally:
            relay.stop()
        return hook.pipeline_metrics(pipeline.id, run_id, attempt, started, failure)

    def _refuse(self, context: Any, plan: JobPlan, pipeline: PipelinePlan, blockers: Sequence[Any], run_id: str,
                attempt: int) -> None:
        """Fail, before any Spark application starts and without a retry, a pipeline holding what
        cannot run here (what ``validate`` refuses); its metrics say why."""
        cause = "; ".join(p.format() for p in blockers)
        plugin = next((p.plugin for p in blockers if p.plugin), None)
        error = RuntimeConfigError(f"cannot run here: {cause}", plugin=plugin,
                                   pipeline=pipeline.task_id)
        self._publish(context, self._for_task(PipelineMetrics.failed(pipeline, run_id, attempt, now(), error)))
        self.hook.cleanup()
        lines = "\n".join(p.format() for p in blockers)
        raise AirflowFailException(f"pipeline {pipeline.id} ({pipeline.task_id}) of job {plan.name!r} cannot run "
                                   f"here; nothing was submitted (not retried: the same job fails the same way):\n"
                                   f"{lines}")

    def _for_task(self, metrics: PipelineMetrics) -> PipelineMetrics:
        """The metrics under this task's names: its own task id (``airflow_task_id``), and the
        ``pipeline`` it was given as ``task_id`` where the compiled one differs (only in its hash,
        when rendered variables changed a path), the compiled one kept as ``compiled_task_id``.
        Their ``ui_url`` is the Spark UI that outlives the task (:func:`spark_ui_url`, also the task's
        :class:`SparkApplicationLink`), absent where there is none."""
        connection = self.hook.spark_connection()
        self.spark_ui_link = spark_ui_url(metrics.to_dict(), connection.master, connection.extra)
        extra = {k: v for k, v in metrics.extra.items() if k != "ui_url"}
        metrics = replace(metrics, extra={**extra, **({"ui_url": self.spark_ui_link} if self.spark_ui_link else {})})
        metrics = metrics.with_extra(airflow_task_id=self.task_id)
        if metrics.task_id and isinstance(self.pipeline, str) and metrics.task_id != self.pipeline:
            metrics = replace(metrics, task_id=self.pipeline).with_extra(compiled_task_id=metrics.task_id)
        return metrics

    def _publish(self, context: Any, metrics: PipelineMetrics) -> None:
        """Push the metrics (for the group's summary), send them through Airflow's Stats
        (:mod:`.observability`), and push the assets of the task's aliases."""
        ti = context.get("ti")
        if ti is None:
            return
        ti.xcom_push(key=METRICS_XCOM_KEY, value=metrics.to_dict())
        send_pipeline_metrics(self.dag_id, self.task_id, metrics.to_dict(), job=self.hook.plan.name)
        self.lineage_metrics = metrics.to_dict()
        if metrics.ok:
            publish_assets(self.outlets, context, self.hook.pipeline(self.pipeline), self.lineage_metrics)

    def get_openlineage_facets_on_start(self) -> Any:
        """OpenLineage's view of the task as it starts (the listener asks once the fields are rendered):
        the pipeline's input and output datasets with their schemas, from the compiled rendered config
        (the hook keeps the plan for :meth:`execute`). Targets only the data names are left to the
        COMPLETE event; a config that does not compile gives no datasets (execute reports why)."""
        from airflow.providers.openlineage.extractors import OperatorLineage

        try:
            pipeline = self.hook.pipeline(self.pipeline)
        except (ConfigError, KeyError, ValueError, AirflowException):
            return OperatorLineage()
        return operator_lineage(pipeline, None)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """OpenLineage's view of the task: the pipeline's datasets with schemas, rows and column lineage."""
        from airflow.providers.openlineage.extractors import OperatorLineage

        hook = self.__dict__.get("hook")
        try:
            pipeline = hook.pipeline(self.pipeline) if hook is not None else None
        except (ConfigError, KeyError, ValueError):
            pipeline = None
        if pipeline is None:
            return OperatorLineage()
        metrics = getattr(self, "lineage_metrics", None) or task_instance.xcom_pull(
            task_ids=self.task_id, key=METRICS_XCOM_KEY)
        return operator_lineage(pipeline, metrics)

    #: How long a STREAMING pipeline may take to commit its running micro-batch when the task is killed.
    stream_stop_timeout: float = 60.0

    def on_kill(self) -> None:
        """Stop the pipeline's Spark application: a STREAMING pipeline whose driver runs here first gets
        SIGTERM (its running micro-batch commits, its queries stop); then the Spark provider's kill."""
        hook = self.__dict__.get("hook")  # the cached SeaTunnel hook: only there once execute() ran
        if hook is not None and hook.spark_hook is None:
            hook.on_kill()  # a pipeline on a Spark Connect server: its session is interrupted and released
        if hook is None or hook.spark_hook is None:
            return  # nothing was submitted
        if hook.plan.mode.upper() == "STREAMING" and hook.plan_path is not None:
            drivers = pipeline_drivers(str(hook.plan_path))
            if drivers:
                self.log.info("stopping the streaming pipeline gracefully (SIGTERM to its driver)")
                if stop_drivers(drivers, self.stream_stop_timeout):
                    return
        super().on_kill()


def _group_plan(group: Any, config: str, variables: Mapping[str, Any], fmt: str | None) -> JobPlan | None:
    """The plan the enclosing :class:`.job_group.SeaTunnelJobGroup` compiled for this very config,
    variables and format (so that its tasks do not compile the job again), else None."""
    compiled = getattr(group, "compiled_plan", None)
    return compiled(config, variables, fmt) if callable(compiled) else None


def _check_runnable(plan: JobPlan, pipeline: PipelinePlan, strict: bool | None, kwargs: dict[str, Any]) -> None:
    """At parse time, the pipeline's compile warnings and what in it cannot run here: strictly the DAG's
    import error, else a warning, and a blocked task marked (display name, documentation) unless the
    caller set those."""
    strict = strict_default() if strict is None else strict
    report_compile_warnings(plan.name, compile_warnings(plan, [pipeline]), strict=strict)
    blockers = not_runnable(plan, pipeline)
    if not blockers:
        return
    report_not_runnable(plan.name, {pipeline.task_id: blockers}, strict=strict)
    kwargs.setdefault("task_display_name", WARNING_MARK + str(kwargs.get("task_id", pipeline.task_id)))
    kwargs.setdefault("doc_md", blocked_doc(blockers))


def _choose(plan: JobPlan | None, pipeline: int | str | None) -> PipelinePlan | None:
    if plan is None or not plan.pipelines:
        return None
    if pipeline is None:
        return plan.pipelines[0] if len(plan.pipelines) == 1 else None
    try:
        return plan.pipeline(pipeline)
    except KeyError:
        return None
