"""The compiler: config → LogicalDag → chains → pipelines → physical plan.

Pure Python and cheap to import: no PySpark, no Airflow. Safe at DAG-parse time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..config import reads
from ..config.errors import ConfigError, Problem
from ..config.loader import detect_format, load_job, read_config_text
from ..spi import NOT_RUNNABLE
from . import cache
from .logical import build_logical_dag
from .model import JobPlan
from .physical import build_physical_plan
from .split import build_chains, split_pipelines


def compile_text(path: str | None, text: str, variables: Mapping[str, Any] | None = None,
                 format: str | None = None, environ: Mapping[str, str] | None = None,
                 include_dirs: Iterable[str | os.PathLike] = ()) -> JobPlan:
    """Compile a config's text (``path`` names it in messages); no cache. ``include_dirs``: folders
    an ``include`` may read besides the config's own tree (:func:`~..config.limits.include_roots`)."""
    job = load_job(path or "", variables, text=text, format=format, environ=environ, include_dirs=include_dirs)
    try:
        dag = build_logical_dag(job)
        chains = build_chains(dag)
        pipelines, split_warnings = split_pipelines(dag, chains)
        return build_physical_plan(dag, pipelines, [*dag.warnings, *split_warnings])
    except ConfigError as e:  # what the reader found doubtful may explain the error: keep it
        raise e.with_warnings(job.warnings) from None


def compile_job(config: str | os.PathLike, variables: Mapping[str, Any] | None = None, *,
                format: str | None = None, environ: Mapping[str, str] | None = None,
                use_cache: bool = True, include_dirs: Iterable[str | os.PathLike] = ()) -> JobPlan:
    """Compile a job config (a file path or inline text) into a :class:`JobPlan`.

    Raises :class:`ConfigError` naming file, line, plugin and key. Plans are cached on
    disk by content (see :mod:`.cache`): compiling an unchanged config again (same text, included
    files, working directory, variables, environment it reads, settings and code) is a read, its
    secrets (never written to the cache) read back from the environment, the variables or the
    config text they came from.
    """
    env = os.environ if environ is None else environ
    dirs = tuple(os.fspath(d) for d in include_dirs)
    path, text = read_config_text(config)
    store = cache.open_store() if use_cache else None
    key = None
    if store is not None:
        key = cache.cache_key(path, format or detect_format(path, text), text, variables, env, store.secret, dirs)
        hit = cache.cached_plan(store, key, text, variables, env)
        if hit is not None:
            return hit
    with reads.recording() as seen:  # what the compile reads besides the text: the entry's dependencies
        plan = cache.without_gc(compile_text, path, text, variables, format, reads.RecordingEnviron(env), dirs)
    if store is not None and key is not None:
        cache.write(store, key, cache.entry_of(plan, text, variables, env, seen, store), path or "inline config")
    return plan


def validate_job(config: str | os.PathLike, variables: Mapping[str, Any] | None = None, *,
                 format: str | None = None, environ: Mapping[str, str] | None = None,
                 include_dirs: Iterable[str | os.PathLike] = ()) -> tuple[list[Problem], list[Problem], JobPlan | None]:
    """``(errors, warnings, plan)``: errors include plugins this package cannot run."""
    try:
        plan = compile_job(config, variables, format=format, environ=environ, use_cache=False,
                           include_dirs=include_dirs)
    except ConfigError as e:
        return list(e.problems), list(e.warnings), None
    problems = [Problem(**w) for w in plan.warnings]
    errors = [p for p in problems if p.code == NOT_RUNNABLE]
    warnings = [p for p in problems if p.code != NOT_RUNNABLE]
    return errors, warnings, plan
