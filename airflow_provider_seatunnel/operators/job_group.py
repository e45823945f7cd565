"""``SeaTunnelJobGroup``: a SeaTunnel job as an Airflow task group, one task per pipeline (SubPlan).

    prepare ──► <pipeline task> ──► summary       (one pipeline task per SubPlan, in parallel)
            └─► <pipeline task> ──┘

``prepare`` applies the sinks' save modes once per DAG run; the pipelines run and restore
independently (a failed pipeline does not stop the others); ``summary`` (trigger rule
``all_done``) logs the job summary, returns the job's metrics and fails if any pipeline failed.
Which pipelines are rendered and with which task arguments: :mod:`.authoring`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from airflow.sdk import BaseOperator, TaskGroup, get_parsing_context
from airflow.sdk.exceptions import AirflowFailException

from ..config.errors import ConfigError
from ..hooks.seatunnel import compile_warnings, not_runnable, one_task_id, pipeline_warnings, with_connections
from ..plan.compiler import compile_job
from ..plan.model import JobPlan
from ..runtime.context import now
from .authoring import (
    WARNING_MARK,
    PipelineKwargs,
    blocked_doc,
    checked_kwargs,
    dag_of,
    display_names,
    pipeline_slots,
    pipeline_task_kwargs,
    report_compile_warnings,
    report_not_runnable,
    resolve_config,
    search_dirs,
    select_pipelines,
    strict_default,
)
from .seatunnel import (
    METRICS_XCOM_KEY,
    ConfigTemplateMixin,
    SeaTunnelOperator,
    format_of,
    pipeline_assets,
)

PREPARE_TASK_ID = "prepare"
SUMMARY_TASK_ID = "summary"


class SeaTunnelPrepareOperator(ConfigTemplateMixin, BaseOperator):
    """Apply the save modes of every sink of a job (``schema_save_mode``, ``data_save_mode``) once per run.

    Each sink leaves a marker under the run id, so neither a retry of this task nor the pipelines
    (nor their retries) apply them again. Sinks whose targets depend on the data (a
    ``${table_name}`` in the path) are left to their pipelines, which apply them once per table.
    ``pipelines`` (task ids) limits it to the sinks of those pipelines (a group's selection);
    ``jdbc_conn_id`` gives Jdbc blocks their connection, as for the pipelines.
    """

    template_fields: Sequence[str] = ("config", "variables")
    template_ext: Sequence[str] = (".conf", ".hocon", ".json", ".sql")
    ui_color = "#e6f4ff"

    def __init__(self, *, config: str | os.PathLike, variables: Mapping[str, Any] | None = None,
                 format: str | None = None, run_key: str, pipelines: Sequence[str] | None = None,
                 jdbc_conn_id: str | None = None, pipeline_task_ids: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pipeline_task_ids = list(pipeline_task_ids)  # the group's pipeline tasks, as parsed (the view's links)
        self.format = format or format_of(config)
        self.config = os.fspath(config)
        self.variables = dict(variables or {})
        self.run_key = run_key
        self.pipelines = list(pipelines) if pipelines is not None else None
        self.jdbc_conn_id = jdbc_conn_id

    def execute(self, context: Any) -> list[str]:
        from ..spi import SaveModes, get_connector
        from ..spi.errors import PipelineError

        try:
            plan = with_connections(compile_job(self.config, self.variables, format=self.format,
                                                include_dirs=search_dirs(dag_of(self))),
                                    self.jdbc_conn_id)
            chosen = plan.pipelines if self.pipelines is None else [plan.pipeline(t) for t in self.pipelines]
        except ConfigError as e:
            raise AirflowFailException(f"SeaTunnel config error:\n{e}") from None
        except KeyError as e:
            raise AirflowFailException(str(e.args[0] if e.args else e)) from None
        found = self._warnings(plan, chosen)
        for warning in found:
            self.log.warning("SeaTunnel compile warning: %s", warning["text"])
        self._publish_view(context, plan, chosen, found)
        if plan.mode.upper() == "STREAMING":
            # a stream applies them once, at its start (its checkpoint remembers), never per DAG run
            self.log.info("STREAMING job %s: save modes run once per stream, by its first micro-batch", plan.name)
            return []
        run_id = f"{context['run_id']}:{self.run_key}"
        done: list[str] = []
        seen: set[str] = set()
        for pipeline in chosen:
            if not_runnable(plan, pipeline):
                self.log.info("pipeline %s cannot run here: its sinks' save modes are left alone", pipeline.task_id)
                continue
            for sink in pipeline.sinks:
                connector = get_connector(sink.plugin)
                if not isinstance(connector, SaveModes) or sink.ref in seen:
                    continue
                seen.add(sink.ref)
                try:
                    actions = connector.save_mode(run_id, sink)
                except PipelineError as e:
                    detail = f"save mode of {sink.ref} {sink.plugin} failed: {e}"
                    if e.deterministic:
                        raise AirflowFailException(detail) from None
                    raise
                if actions is None:
                    self.log.info("%s %s: save modes wait for the data's tables (applied by its pipeline)",
                                  sink.ref, sink.plugin)
                    continue
                for action in actions:
                    self.log.info("%s %s: %s", sink.ref, sink.plugin, action)
                done += [f"{sink.ref}: {a}" for a in actions] or [f"{sink.ref}: nothing to do"]
        return done


    @staticmethod
    def _warnings(plan: JobPlan, chosen: Sequence[Any]) -> list[dict[str, Any]]:
        """The compile warnings of the chosen pipelines (what cannot run here among them), each once, as
        the view shows them: ``text`` (the warning as ``validate`` prints it), ``hint``, ``plugin``,
        ``key``, ``code``; no value the plan's redaction hides (a password from a connection)."""
        from ..runtime.launcher import secret_values

        secrets = sorted({str(v) for v in secret_values(plan) if v not in (None, "") and len(str(v)) > 2},
                         key=len, reverse=True)

        def masked(text: Any) -> Any:
            if not isinstance(text, str):
                return text
            for secret in secrets:
                text = text.replace(secret, "***")
            return text

        found: list[Any] = []
        for pipeline in chosen:
            found += [w for w in pipeline_warnings(plan, pipeline) if w not in found]
        return [{"text": masked(w.format()), "message": masked(w.message), "hint": masked(w.hint),
                 "plugin": w.plugin, "key": w.key, "line": w.line, "code": w.code} for w in found]

    def _publish_view(self, context: Any, plan: JobPlan, chosen: Sequence[Any],
                      warnings: Sequence[Mapping[str, Any]] = ()) -> None:
        """The job's graph for the SeaTunnel view of this DAG run (``plan.view``: no options, no secrets)
        with its compile warnings, each pipeline with the task that runs it. Compiled with this run's
        variables, a pipeline's task id may differ from the parsed one in its hash: its readable part then
        finds its task, and the view names it by that task's id, as the task's run does (one id:
        :func:`..hooks.seatunnel.one_task_id`)."""
        from ..plan.view import XCOM_KEY, job_view

        parsed = {t.rsplit(".", 1)[-1]: t for t in self.pipeline_task_ids}
        by_slug: dict[str, list[str]] = {}
        for local, full in parsed.items():
            by_slug.setdefault(local.rsplit("_", 1)[0], []).append(full)
        tasks: dict[str, str] = {}
        for p in chosen:
            same = by_slug.get(p.task_id.rsplit("_", 1)[0], [])
            task = parsed.get(p.task_id) or (same[0] if len(same) == 1 else None)
            if task is not None:
                tasks[p.task_id] = task
        named: dict[str, str] = {}
        for compiled, task in tasks.items():
            local = task.rsplit(".", 1)[-1]
            plan = one_task_id(plan, local)
            named[local if any(p.task_id == local for p in plan.pipelines) else compiled] = task
        tasks = named
        try:
            context["ti"].xcom_push(key=XCOM_KEY, value=job_view(plan, tasks, warnings))
        except Exception as e:  # the view is informative: the run goes on without it
            self.log.warning("could not publish the job's graph for the SeaTunnel view: %s", e)


class SeaTunnelSummaryOperator(BaseOperator):
    """Log the job summary of the pipelines' metrics; return the job's metrics; fail if a pipeline failed."""

    template_fields: Sequence[str] = ()
    ui_color = "#e6f4ff"

    def __init__(self, *, job_name: str, pipeline_task_ids: Sequence[str], **kwargs: Any) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        super().__init__(**kwargs)
        self.job_name = job_name
        self.pipeline_task_ids = sorted(pipeline_task_ids)

    def execute(self, context: Any) -> dict[str, Any]:
        from ..runtime.metrics import PipelineMetrics
        from ..runtime.summary import job_metrics, render_summary

        ti = context["ti"]
        pipelines: list[PipelineMetrics] = []
        for task_id in self.pipeline_task_ids:
            metrics = ti.xcom_pull(task_ids=task_id, key=METRICS_XCOM_KEY)
            pipelines.append(PipelineMetrics.from_dict(metrics) if metrics else
                             PipelineMetrics.not_run(task_id.rsplit(".", 1)[-1], airflow_task_id=task_id))
        started = min((p.start for p in pipelines if p.start), default=None)
        ended = max((p.end for p in pipelines if p.end), default=None)
        job = job_metrics(self.job_name, pipelines, started or now(), ended or now())
        self.log.info("%s", render_summary(job))
        failed = [p.extra.get("airflow_task_id") or p.task_id or "?" for p in pipelines if not p.ok]
        if failed:
            ti.xcom_push(key=METRICS_XCOM_KEY, value=job)
            raise AirflowFailException(f"SeaTunnel job {self.job_name!r}: {len(failed)} of {len(pipelines)} "
                                       f"pipelines did not finish: {', '.join(sorted(failed))}")
        return job


class SeaTunnelJobGroup(TaskGroup):
    """Compile ``config`` at DAG-parse time (through the plan cache) and render the job as tasks:
    ``prepare``, one :class:`SeaTunnelOperator` per pipeline (the plan's stable task ids, no edges
    between them: pipelines run in parallel and fail alone), and ``summary``.

    :param config: a config file or config text, compiled at parse time. A relative path is looked
        for in the DAG file's folder, then in the DAG's ``template_searchpath``; a ``ConfigError``
        (with its file, line, plugin and key, or every place a missing file was looked for) is the
        DAG's import error.
    :param variables: may hold Jinja templates, rendered per task at run time (the parse-time
        compile sees them verbatim).
    :param spark_conn_id: the Spark connection of every pipeline task.
    :param jdbc_conn_id: the Airflow connection of the Jdbc blocks that name none (``prepare``'s too).
    :param operator_kwargs: arguments for every pipeline task (``spark_submit_kwargs``, ``pool``...).
    :param pipeline_kwargs: arguments per pipeline task, after ``operator_kwargs``: a mapping, or a
        callable given the pipeline's plan (:class:`..plan.model.PipelinePlan`) returning one
        (``pool``, ``pool_slots``, ``queue``, ``priority_weight``, ``executor``...). ``pool_slots``
        defaults to the pipeline's slots (one per parallel instance of each fused task group).
    :param select: selectors of the pipelines to render (default: all); ``exclude``: of those not
        to. ``task:``, ``plugin:`` or ``dataset:`` patterns (:mod:`.authoring`).
    :param strict: a pipeline holding what cannot run here (what ``validate`` refuses) makes the
        DAG's import error instead of a warning; default: the ``[seatunnel] strict`` setting.

    Pipeline tasks show as ``web_orders → LocalFile`` (their ``task_display_name``) over their
    stable task ids. Retries: the config's ``job.retry.*`` where it sets them, else Airflow's order
    (``operator_kwargs``/``pipeline_kwargs``, the group's ``default_args``, the DAG's, Airflow's
    defaults). Further keyword arguments go to the TaskGroup.

    On a worker running one task, Airflow's parsing context lets the group skip what that task
    does not need: nothing is compiled for a task outside the group, and only that task is built.
    """

    def __init__(self, group_id: str, config: str | os.PathLike, variables: Mapping[str, Any] | None = None, *,
                 format: str | None = None, tooltip: str = "", spark_conn_id: str | None = None,
                 jdbc_conn_id: str | None = None, operator_kwargs: Mapping[str, Any] | None = None,
                 pipeline_kwargs: PipelineKwargs = None, select: str | Iterable[str] | None = None,
                 exclude: str | Iterable[str] | None = None, strict: bool | None = None,
                 **group_kwargs: Any) -> None:
        super().__init__(group_id=group_id, tooltip=tooltip, **group_kwargs)
        self.plan: JobPlan | None = None
        self._compiled_with: tuple[str, dict[str, Any], str | None] | None = None
        wanted = self._wanted_task_id()
        if wanted == "":
            return  # a worker running another task of this DAG: nothing here is needed
        try:
            config_arg = resolve_config(config, getattr(self, "dag", None))
            self.plan = plan = compile_job(config_arg, variables, format=format,
                                           include_dirs=search_dirs(getattr(self, "dag", None)))
        except ConfigError as e:
            raise e.with_traceback(None) from None  # the import error is the message, not our stack
        fmt = format or format_of(config_arg)
        variables = dict(variables or {})
        self._compiled_with = (config_arg, variables, fmt)
        selected = select_pipelines(plan, select, exclude)
        shared = _shared_kwargs(spark_conn_id=spark_conn_id, jdbc_conn_id=jdbc_conn_id,
                                operator_kwargs=operator_kwargs)
        blocked = {p.task_id: found for p in selected if (found := not_runnable(plan, p))}
        strict = strict_default() if strict is None else strict
        try:
            report_not_runnable(plan.name, blocked, strict=strict)
            report_compile_warnings(plan.name, compile_warnings(plan, selected), strict=strict)
        except ConfigError as e:
            raise e.with_traceback(None) from None
        self.tooltip = tooltip or _tooltip(plan, selected, blocked)
        common: dict[str, Any] = dict(config=config_arg, variables=variables, format=fmt)
        names = display_names(selected)

        def build(local_id: str) -> bool:
            return wanted is None or wanted == self.child_id(local_id)

        with self:
            prepare = (SeaTunnelPrepareOperator(
                task_id=PREPARE_TASK_ID, run_key=group_id, jdbc_conn_id=shared.get("jdbc_conn_id"),
                pipelines=None if len(selected) == len(plan.pipelines) else [p.task_id for p in selected],
                pipeline_task_ids=[self.child_id(p.task_id) for p in selected], **common)
                if build(PREPARE_TASK_ID) else None)
            pipelines = []
            for p in selected:
                if not build(p.task_id):
                    continue
                inlets, outlets = pipeline_assets(p)
                defaults: dict[str, Any] = dict(inlets=inlets, outlets=outlets, pool_slots=pipeline_slots(p),
                                                task_display_name=names[p.task_id])
                if p.task_id in blocked:
                    defaults.update(task_display_name=WARNING_MARK + names[p.task_id],
                                    doc_md=blocked_doc(blocked[p.task_id]))
                kwargs = pipeline_task_kwargs(p, defaults, shared, pipeline_kwargs)
                pipelines.append(SeaTunnelOperator(task_id=p.task_id, pipeline=p.task_id, run_key=group_id,
                                                   **common, **kwargs))
            summary = None
            if build(SUMMARY_TASK_ID):
                summary = SeaTunnelSummaryOperator(
                    task_id=SUMMARY_TASK_ID, job_name=plan.name,
                    pipeline_task_ids=[self.child_id(p.task_id) for p in selected])
            if prepare is not None and pipelines:
                prepare >> pipelines
            if summary is not None and pipelines:
                pipelines >> summary

    def compiled_plan(self, config: str, variables: Mapping[str, Any], format: str | None) -> JobPlan | None:
        """The plan this group compiled, when ``config``, ``variables`` and ``format`` are the ones
        it compiled (its pipeline tasks ask, instead of compiling the job again), else None."""
        if self.plan is None or self._compiled_with != (config, dict(variables), format):
            return None
        return self.plan

    def _wanted_task_id(self) -> str | None:
        """None: build everything; "": build nothing; else the one task id a worker is running."""
        context = get_parsing_context()
        if not context.task_id:
            return None
        dag = getattr(self, "dag", None)
        if context.dag_id and dag is not None and context.dag_id != dag.dag_id:
            return ""
        if context.task_id.startswith(self.child_id("")):
            return context.task_id
        return ""


def _shared_kwargs(*, spark_conn_id: str | None, jdbc_conn_id: str | None,
                   operator_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments every pipeline task gets: the group's connection ids and ``operator_kwargs``
    (naming a connection in both is an error)."""
    shared = checked_kwargs("operator_kwargs", operator_kwargs)
    for name, value in (("spark_conn_id", spark_conn_id), ("jdbc_conn_id", jdbc_conn_id)):
        if value is None:
            continue
        if name in shared and shared[name] != value:
            raise ValueError(f"{name} is given twice: {value!r} and operator_kwargs[{name!r}] = {shared[name]!r}")
        shared[name] = value
    return shared


def _tooltip(plan: JobPlan, selected: Sequence[Any], blocked: Mapping[str, Any]) -> str:
    count = (f"{len(selected)} pipelines" if len(selected) == len(plan.pipelines)
             else f"{len(selected)} of {len(plan.pipelines)} pipelines")
    warning = f"; {WARNING_MARK}{len(blocked)} cannot run here" if blocked else ""
    return f"SeaTunnel job {plan.name}: {count}{warning}"
