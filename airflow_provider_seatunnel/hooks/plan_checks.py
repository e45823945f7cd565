"""What the compiled plan says about a pipeline before it runs: its compile warnings, what cannot run here,
and the one task id a run uses."""

from __future__ import annotations

from collections.abc import Iterable

from ..config.errors import Problem
from ..plan.model import JobPlan, PipelinePlan


def pipeline_warnings(plan: JobPlan, pipeline: PipelinePlan | None = None) -> list[Problem]:
    """The plan's compile warnings (an unknown option and its "did you mean", a ``plugin_input``
    naming nothing, a deprecated option, what cannot run here...) that concern ``pipeline`` (or the
    whole job): a warning located at a block belongs to the pipelines containing that block; one
    located nowhere, to every pipeline."""
    refs = None if pipeline is None else {v.ref for v in pipeline.vertices}
    found = []
    for warning in plan.warnings:
        ref = str(warning.get("plugin") or "").split(" ", 1)[0]
        if refs is None or not ref or ref in refs:
            found.append(Problem(**warning))
    return found


def compile_warnings(plan: JobPlan, pipelines: Iterable[PipelinePlan]) -> list[Problem]:
    """The compile warnings of ``pipelines`` other than what cannot run here (:func:`not_runnable`
    reports those), each once."""
    from ..spi import NOT_RUNNABLE

    found: list[Problem] = []
    for pipeline in pipelines:
        found += [p for p in pipeline_warnings(plan, pipeline) if p.code != NOT_RUNNABLE and p not in found]
    return found


def not_runnable(plan: JobPlan, pipeline: PipelinePlan | None = None) -> list[Problem]:
    """What ``validate`` refuses in ``pipeline`` (or in the whole job), as errors: a plugin this
    package cannot run (a SeaTunnel plugin it only knows by name, an unknown one) or an option a
    connector cannot honour here (the plan's ``not-runnable`` warnings, :func:`pipeline_warnings`)."""
    from dataclasses import replace

    from ..spi import NOT_RUNNABLE

    return [replace(p, severity="error") for p in pipeline_warnings(plan, pipeline) if p.code == NOT_RUNNABLE]


def one_task_id(plan: JobPlan, task_id: str | None) -> JobPlan:
    """The plan with the pipeline ``task_id`` names under that very id: its Airflow task's, as parsed.
    A task id hashes the pipeline's sources and sinks, so one compiled with this run's rendered
    variables (a templated path, an incremental window in a query) may differ in its hash from the
    parsed one; the run then uses the parsed id everywhere (its log, metrics, errors, commits), one
    id per pipeline. A STREAMING pipeline keeps its compiled id: that id names its checkpoint, which
    a stream whose source changed must not resume."""
    if not task_id or plan.mode.upper() == "STREAMING":
        return plan
    try:
        compiled = plan.pipeline(task_id)
    except KeyError:
        return plan  # not this job's pipeline: the operator reports it
    if compiled.task_id == task_id or any(p.task_id == task_id for p in plan.pipelines):
        return plan
    from dataclasses import replace

    return replace(plan, pipelines=tuple(replace(p, task_id=task_id) if p is compiled else p
                                         for p in plan.pipelines))
