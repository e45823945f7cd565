"""``SeaTunnelJobGroup``: a SeaTunnel job as an Airflow task group, one task per pipeline (SubPlan).

    prepare ──► <pipeline task> ──► summary       (one pipeline task per SubPlan, in parallel)
            └─► <pipeline task> ──┘

``prepare`` applies the sinks' save modes once per DAG run; the pipelines run and restore
independently (a failed pipeline does not stop the others); ``summary`` (trigger rule
``all_done``) logs the job summary, returns the job's metrics and fails if any pipeline failed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from airflow.sdk import BaseOperator, TaskGroup, get_parsing_context
from airflow.sdk.exceptions import AirflowFailException

from ..config.errors import ConfigError
from ..plan.compiler import compile_job
from ..runtime.context import now
from .seatunnel import (
    METRICS_XCOM_KEY,
    ConfigTemplateMixin,
    SeaTunnelOperator,
    format_of,
    pipeline_assets,
    retry_policy,
)

PREPARE_TASK_ID = "prepare"
SUMMARY_TASK_ID = "summary"


class SeaTunnelPrepareOperator(ConfigTemplateMixin, BaseOperator):
    """Apply the save modes of every sink of a job (``schema_save_mode``, ``data_save_mode``) once per run.

    Each sink leaves a marker under the run id, so neither a retry of this task nor the pipelines
    (nor their retries) apply them again. Sinks whose targets depend on the data (a
    ``${table_name}`` in the path) are left to their pipelines, which apply them once per table.
    """

    template_fields: Sequence[str] = ("config", "variables")
    template_ext: Sequence[str] = (".conf", ".hocon", ".json", ".sql")
    ui_color = "#e6f4ff"

    def __init__(self, *, config: str | os.PathLike, variables: Mapping[str, Any] | None = None,
                 format: str | None = None, run_key: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.format = format or format_of(config)
        self.config = os.fspath(config)
        self.variables = dict(variables or {})
        self.run_key = run_key

    def execute(self, context: Any) -> list[str]:
        from ..spi import SaveModes, get_connector
        from ..spi.errors import PipelineError

        try:
            plan = compile_job(self.config, self.variables, format=self.format)
        except ConfigError as e:
            raise AirflowFailException(f"SeaTunnel config error:\n{e}") from None
        if plan.mode.upper() == "STREAMING":
            # a stream applies them once, at its start (its checkpoint remembers), never per DAG run
            self.log.info("STREAMING job %s: save modes run once per stream, by its first micro-batch", plan.name)
            return []
        run_id = f"{context['run_id']}:{self.run_key}"
        done: list[str] = []
        seen: set[str] = set()
        for pipeline in plan.pipelines:
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

    ``config`` must be a readable file path or inline text here (it is compiled at parse time); a
    ``ConfigError`` becomes the DAG's import error, with its file, line, plugin and key. ``variables``
    may hold Jinja templates: they are rendered per task at run time (the parse-time compile sees
    them verbatim). ``operator_kwargs`` (``spark_conn_id``, ``spark_submit_kwargs``, ``pool``...) go
    to every pipeline task; further keyword arguments go to the TaskGroup.

    On a worker running one task, Airflow's parsing context lets the group skip what that task
    does not need: nothing is compiled for a task outside the group, and only that task is built.
    """

    def __init__(self, group_id: str, config: str | os.PathLike, variables: Mapping[str, Any] | None = None, *,
                 format: str | None = None, tooltip: str = "", operator_kwargs: Mapping[str, Any] | None = None,
                 **group_kwargs: Any) -> None:
        super().__init__(group_id=group_id, tooltip=tooltip, **group_kwargs)
        self.plan = None
        wanted = self._wanted_task_id()
        if wanted == "":
            return  # a worker running another task of this DAG: nothing here is needed
        try:
            self.plan = plan = compile_job(config, variables, format=format)
        except ConfigError as e:
            raise e.with_traceback(None) from None  # the import error is the message, not our stack
        self.tooltip = tooltip or f"SeaTunnel job {plan.name}: {len(plan.pipelines)} pipelines"
        config_arg = os.fspath(config)
        fmt = format or format_of(config_arg)
        variables = dict(variables or {})
        common = dict(config=config_arg, variables=variables, format=fmt)

        def build(local_id: str) -> bool:
            return wanted is None or wanted == self.child_id(local_id)

        with self:
            prepare = (SeaTunnelPrepareOperator(task_id=PREPARE_TASK_ID, run_key=group_id, **common)
                       if build(PREPARE_TASK_ID) else None)
            pipelines = []
            for p in sorted(plan.pipelines, key=lambda p: p.task_id):
                if not build(p.task_id):
                    continue
                retries, retry_delay = retry_policy(p)
                inlets, outlets = pipeline_assets(p)
                kwargs: dict[str, Any] = dict(retries=retries, retry_delay=retry_delay, inlets=inlets,
                                              outlets=outlets)
                kwargs.update(operator_kwargs or {})
                pipelines.append(SeaTunnelOperator(task_id=p.task_id, pipeline=p.task_id, run_key=group_id,
                                                   **common, **kwargs))
            summary = None
            if build(SUMMARY_TASK_ID):
                summary = SeaTunnelSummaryOperator(
                    task_id=SUMMARY_TASK_ID, job_name=plan.name,
                    pipeline_task_ids=[self.child_id(p.task_id) for p in plan.pipelines])
            if prepare is not None and pipelines:
                prepare >> pipelines
            if summary is not None and pipelines:
                pipelines >> summary

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
