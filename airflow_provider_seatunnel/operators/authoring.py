"""What a DAG author's arguments mean at parse time: where a config file is, which pipelines a
:class:`.job_group.SeaTunnelJobGroup` renders and with which task arguments, and what to do with a
job that compiles but holds what cannot run here.

Rules:

* **Config paths.** Text is text; an absolute path is itself; a relative path is looked for in
  the DAG file's folder, then in each folder of the DAG's ``template_searchpath`` (the order of
  Airflow's own template loader), and last as given, relative to the working directory (a path a
  DAG built from its own ``__file__`` while parsed from a relative DAG folder, ``DagBag("dags")``,
  is ``dags/configs/x.conf``: the DAG folder's ``dags/dags/...`` does not hold it). Found: its
  absolute path. Not found: a ``ConfigError`` naming every place looked at. Without a DAG (a
  script), the path is left to the working directory.
* **Selecting pipelines.** A selector is ``task:PATTERN``, ``plugin:PATTERN``, ``dataset:PATTERN``
  or a bare ``PATTERN`` (any of the three). Patterns are shell-style (``*``, ``?``, ``[...]``)
  and match the whole name: task ids and dataset names as written, plugin names in any case. A
  pipeline's plugins are all of its blocks' (sources, transforms, sinks); its datasets, every
  ``plugin_output`` and ``plugin_input`` name in it. With ``select``, a pipeline is kept when a
  selector matches it; an ``exclude`` selector matching it drops it. A selector matching no
  pipeline of the job is an error (a typo would otherwise silently select nothing).
* **What cannot run here** (what ``seatunnel-airflow validate`` refuses: a plugin this package
  only knows by name, an option a connector cannot honour) is reported at parse time as a
  :class:`SeaTunnelPlanWarning` (the DAG still loads; its affected tasks are marked and fail at
  run time without retrying) or, strictly, as a ``ConfigError``: the DAG's import error.
* **Other compile warnings** (what ``validate`` prints as warnings: an unknown option with its
  "did you mean", a ``plugin_input`` naming nothing, a deprecated option) are a
  :class:`SeaTunnelPlanWarning` too, or, strictly, the DAG's import error.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ..config.errors import ConfigError, Problem
from ..plan.model import JobPlan, PipelinePlan

log = logging.getLogger(__name__)

#: What marks a task whose pipeline cannot run here, in its display name.
WARNING_MARK = "⚠ "

#: Task arguments the group sets itself: ``pipeline_kwargs``/``operator_kwargs`` may not.
RESERVED_KWARGS = frozenset({"task_id", "config", "variables", "pipeline", "format", "run_key", "dag",
                             "task_group"})

PipelineKwargs = Mapping[str, Any] | Callable[[PipelinePlan], Mapping[str, Any]] | None


class SeaTunnelPlanWarning(UserWarning):
    """A job that compiles but holds what cannot run here (what ``validate`` refuses): the DAG
    loads, and the affected tasks fail at run time without retrying."""


# -- config paths --------------------------------------------------------------------------------

def is_config_path(config: str | os.PathLike) -> bool:
    """Whether ``config`` is a file path rather than config text (as the config reader tells them apart)."""
    s = os.fspath(config)
    return "\n" not in s and "{" not in s and len(s) < 4096


def dag_of(task: Any) -> Any:
    """The DAG a task was assigned to, or None (Airflow's ``task.dag`` raises while there is none)."""
    try:
        return task.dag
    except (AttributeError, RuntimeError):
        return None


def search_dirs(dag: Any) -> list[str]:
    """Where a relative config path is looked for: the DAG file's folder, then ``template_searchpath``."""
    if dag is None:
        return []
    dirs: list[str] = []
    fileloc = getattr(dag, "fileloc", None)
    if fileloc:
        dirs.append(os.path.dirname(os.path.abspath(fileloc)))
    searchpath = getattr(dag, "template_searchpath", None)
    for d in [searchpath] if isinstance(searchpath, (str, os.PathLike)) else list(searchpath or []):
        if d and os.fspath(d) not in dirs:
            dirs.append(os.fspath(d))
    return dirs


def find_config(config: str | os.PathLike, dag: Any) -> tuple[str, list[str]]:
    """``(config as the tasks read it, the places looked at)``: text and absolute paths as they
    are; a relative path as the first existing file among the DAG's :func:`search_dirs`, then
    the path as given relative to the working directory, made absolute (as given when none has
    it, or when there is no DAG)."""
    s = os.fspath(config)
    if not is_config_path(s) or os.path.isabs(s):
        return s, []
    dirs = search_dirs(dag)
    candidates = [os.path.normpath(os.path.join(d, s)) for d in dirs]
    if dirs and (here := os.path.abspath(s)) not in candidates:
        candidates.append(here)
    found = next((c for c in candidates if os.path.isfile(c)), None)
    return (found or s), candidates


def not_found_error(config: str, looked_in: Sequence[str]) -> ConfigError:
    """The error of a relative config path found nowhere, naming every place looked at."""
    return ConfigError.at(f"config file not found: {config}", file=config,
                          hint="looked in " + ", ".join(looked_in) + "; a relative path is looked for in the "
                          "DAG file's folder, then in the DAG's template_searchpath, then in the working directory")


def resolve_config(config: str | os.PathLike, dag: Any) -> str:
    """``config`` as the tasks read it (:func:`find_config`); a relative path found nowhere raises
    the ``ConfigError`` of :func:`not_found_error`."""
    resolved, looked_in = find_config(config, dag)
    if looked_in and resolved not in looked_in:
        raise not_found_error(os.fspath(config), looked_in)
    return resolved


# -- what cannot run here ------------------------------------------------------------------------

def strict_default() -> bool:
    """The ``strict`` of groups and operators that do not set it: the ``[seatunnel] strict``
    setting (:func:`..settings.strict`), False when unset."""
    from .. import settings

    return settings.strict()


def blocked_doc(problems: Sequence[Problem]) -> str:
    """The task documentation (``doc_md``) of a pipeline that cannot run here."""
    lines = "\n".join(f"* `{p.format()}`" for p in problems)
    return (f"**{WARNING_MARK}This pipeline cannot run here** (`seatunnel-airflow validate` refuses it): the task "
            f"fails when it runs, before any Spark application starts, and is not retried.\n\n{lines}\n")


def report_not_runnable(job: str, blocked: Mapping[str, Sequence[Problem]], *, strict: bool) -> None:
    """At parse time, the pipelines (task id → problems) that cannot run here: with ``strict`` a
    ``ConfigError`` (the DAG's import error), else a :class:`SeaTunnelPlanWarning` located at the
    DAG file's line that built the task or group, and the same in the log."""
    if not blocked:
        return
    problems: list[Problem] = []
    for found in blocked.values():
        problems += [p for p in found if p not in problems]
    if strict:
        raise ConfigError(problems)
    message = (f"SeaTunnel job {job!r}: {len(blocked)} pipeline{'s' if len(blocked) != 1 else ''} cannot run here "
               f"({', '.join(sorted(blocked))}); the task fails at run time without retrying (strict=True makes "
               "this the DAG's import error):\n" + "\n".join(p.format() for p in problems))
    filename, lineno = _author_location()
    warnings.warn_explicit(message, SeaTunnelPlanWarning, filename, lineno)
    log.warning("%s", message)


def report_compile_warnings(job: str, problems: Sequence[Problem], *, strict: bool) -> None:
    """At parse time, the job's other compile warnings (an unknown option and its "did you mean", a
    ``plugin_input`` naming nothing, a deprecated option, a not-portable expression): with ``strict``
    a ``ConfigError`` (the DAG's import error), else one :class:`SeaTunnelPlanWarning` at the DAG
    file's line, and the same in the log. The DAG run's ``prepare`` task logs them again and
    publishes them to the SeaTunnel view."""
    if not problems:
        return
    if strict:
        raise ConfigError([replace(p, severity="error") for p in problems])
    message = (f"SeaTunnel job {job!r}: {len(problems)} compile warning{'s' if len(problems) != 1 else ''} "
               "(strict=True makes them the DAG's import error):\n" + "\n".join(p.format() for p in problems))
    filename, lineno = _author_location()
    warnings.warn_explicit(message, SeaTunnelPlanWarning, filename, lineno)
    log.warning("%s", message)


def _author_location() -> tuple[str, int]:
    """The file and line of the innermost caller outside this package and Airflow (the DAG file's)."""
    package = str(Path(__file__).resolve().parent.parent) + os.sep
    skipped = (package, *(str(Path(m.__file__).resolve().parent) + os.sep for m in _airflow_modules()))
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<") and not str(Path(name).resolve()).startswith(skipped):
            return name, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "<dag>", 1


def _airflow_modules() -> list[Any]:
    names = ("airflow", "airflow.sdk", "attr")
    return [m for n in names if (m := sys.modules.get(n)) is not None and getattr(m, "__file__", None)]


# -- selecting pipelines -------------------------------------------------------------------------

SELECTOR_KINDS = ("task", "plugin", "dataset")


@dataclass(frozen=True)
class Selector:
    """One ``select``/``exclude`` entry: ``kind:pattern`` (kind ``task``, ``plugin`` or ``dataset``)
    or a bare pattern matching any of the three."""

    text: str
    kind: str | None
    pattern: str

    @classmethod
    def parse(cls, text: str) -> Selector:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"a pipeline selector is a non-empty string, found {text!r}")
        kind, sep, pattern = text.partition(":")
        if sep and kind.strip().lower() in SELECTOR_KINDS:
            return cls(text, kind.strip().lower(), pattern.strip())
        if sep and kind.strip().lower() in ("task_id", "plugin_name", "dataset_name"):
            return cls(text, kind.strip().lower().split("_", 1)[0], pattern.strip())
        if sep and " " not in kind:
            raise ValueError(f"pipeline selector {text!r}: unknown kind {kind!r} (use task:, plugin: or dataset:)")
        return cls(text, None, text.strip())

    def matches(self, pipeline: PipelinePlan) -> bool:
        names = pipeline_names(pipeline)
        kinds = [self.kind] if self.kind else list(SELECTOR_KINDS)
        for kind in kinds:
            if kind == "plugin":
                if any(fnmatchcase(n.lower(), self.pattern.lower()) for n in names[kind]):
                    return True
            elif any(fnmatchcase(n, self.pattern) for n in names[kind]):
                return True
        return False


def pipeline_names(pipeline: PipelinePlan) -> dict[str, set[str]]:
    """What selectors match in a pipeline: its task id, its blocks' plugin names, its dataset names."""
    datasets = {n for v in pipeline.vertices for n in (v.output, *v.inputs) if n}
    return {"task": {pipeline.task_id}, "plugin": {v.plugin for v in pipeline.vertices}, "dataset": datasets}


def _selectors(value: str | Iterable[str] | None) -> list[Selector]:
    if value is None:
        return []
    return [Selector.parse(value)] if isinstance(value, str) else [Selector.parse(v) for v in value]


def select_pipelines(plan: JobPlan, select: str | Iterable[str] | None = None,
                     exclude: str | Iterable[str] | None = None) -> list[PipelinePlan]:
    """The job's pipelines kept by ``select`` and ``exclude`` (module docstring), sorted by task id.
    Raises ``ValueError`` for a selector matching no pipeline, or when nothing is left."""
    chosen, dropped = _selectors(select), _selectors(exclude)
    for selector in (*chosen, *dropped):
        if not any(selector.matches(p) for p in plan.pipelines):
            names: dict[str, set[str]] = {k: set() for k in SELECTOR_KINDS}
            for p in plan.pipelines:
                for k, v in pipeline_names(p).items():
                    names[k] |= v
            known = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in names.items())
            raise ValueError(f"pipeline selector {selector.text!r} matches no pipeline of job {plan.name!r} ({known})")
    kept = [p for p in sorted(plan.pipelines, key=lambda p: p.task_id)
            if (not chosen or any(s.matches(p) for s in chosen)) and not any(s.matches(p) for s in dropped)]
    if not kept:
        raise ValueError(f"select/exclude leave no pipeline of job {plan.name!r}")
    return kept


# -- task arguments per pipeline ------------------------------------------------------------------

def display_name(pipeline: PipelinePlan) -> str:
    """``web_orders → LocalFile``: the sources' dataset names (their plugin where unnamed), then the sinks' plugins."""
    sources = [v.output or v.plugin for v in pipeline.sources]
    sinks = [v.plugin for v in pipeline.sinks]
    return f"{' + '.join(sources)} → {' + '.join(sinks)}"


def display_names(pipelines: Sequence[PipelinePlan]) -> dict[str, str]:
    """Each pipeline's :func:`display_name` by task id; names that two pipelines share get the task
    id's hash (``web_orders → LocalFile (b83f63f5)``)."""
    names = {p.task_id: display_name(p) for p in pipelines}
    shared = {n for n in names.values() if list(names.values()).count(n) > 1}
    return {t: f"{n} ({t.rsplit('_', 1)[-1]})" if n in shared else n for t, n in names.items()}


def pipeline_slots(pipeline: PipelinePlan) -> int:
    """The slots the pipeline takes while it runs: one per parallel instance of each fused task group."""
    slots = pipeline.slots or {}
    value = slots.get("with_fusion") or sum(g.parallelism for g in pipeline.task_groups) or 1
    return max(1, int(value))


def checked_kwargs(name: str, kwargs: Any) -> dict[str, Any]:
    """``kwargs`` as a dict, refusing the arguments the group sets itself."""
    if kwargs is None:
        return {}
    if not isinstance(kwargs, Mapping):
        raise TypeError(f"{name} must be a mapping of task arguments, found {type(kwargs).__name__}")
    reserved = sorted(RESERVED_KWARGS & set(kwargs))
    if reserved:
        raise ValueError(f"{name} may not set {', '.join(reserved)}: the group sets them for each pipeline")
    return dict(kwargs)


def pipeline_task_kwargs(pipeline: PipelinePlan, defaults: Mapping[str, Any], shared: Mapping[str, Any],
                         pipeline_kwargs: PipelineKwargs) -> dict[str, Any]:
    """One pipeline task's arguments: the group's ``defaults`` (display name, pool slots, lineage),
    then ``shared`` (the same for every pipeline), then ``pipeline_kwargs`` (a mapping, or a
    callable given the pipeline's plan)."""
    own = pipeline_kwargs(pipeline) if callable(pipeline_kwargs) else pipeline_kwargs
    return {**defaults, **shared, **checked_kwargs("pipeline_kwargs", own)}
