"""The bounds the config reader keeps, whatever the config asks for.

A job config is read at DAG-parse time, in the scheduler's DAG processor, from files anyone
with write access to the DAG folder controls. So reading one is bounded in depth, size and
reach: a config that crosses a bound ends in a located :class:`~.errors.ConfigError`, never in a
``RecursionError``, a ``MemoryError`` or a read outside the places configs may come from.

* ``max_depth``: objects, lists (and Sql expressions) nest at most this deep, as written and
  after substitution;
* ``max_resolved_size``: what substitutions and concatenations produce, summed over the whole
  config (characters of text plus one per object, list and value): a "billion laughs" of
  doubling substitutions stops here;
* ``max_includes``: ``include`` directives read in all, across every included file;
* ``max_include_depth``: an included file including another, and so on;
* ``max_file_bytes``: the size of each file read (the config and each include).

Where includes may read is :func:`include_roots`: the including config's own directory tree,
plus the folders the caller names (a DAG's folder, its ``template_searchpath``) and the
``[seatunnel] include_paths`` setting.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .. import settings


@dataclass(frozen=True)
class Limits:
    """The reader's bounds (see the module docstring); pass ``limits=Limits(...)`` to change one."""

    max_depth: int = 64
    max_resolved_size: int = 32 * 1024 * 1024
    max_includes: int = 100
    max_include_depth: int = 10
    max_file_bytes: int = 16 * 1024 * 1024


DEFAULT_LIMITS = Limits()


def include_roots(config_file: str | None, extra: Iterable[str | os.PathLike] = ()) -> tuple[Path, ...]:
    """The directories an ``include`` may read from, resolved (symlinks followed): the directory of
    ``config_file`` (the working directory for config text), then ``extra`` (an operator's DAG file
    folder and ``template_searchpath``), then Airflow's DAG folder in a process that loaded Airflow,
    then the ``[seatunnel] include_paths`` setting (directories separated by ``:`` or ``,``)."""
    first = Path(config_file).parent if config_file else Path(os.getcwd())
    configured = re.split(r"[:,]", settings.value(settings.INCLUDE_PATHS) or "")
    dags = settings.dags_folder()
    roots: list[Path] = []
    for d in [first, *extra, *([dags] if dags else []), *(c.strip() for c in configured if c.strip())]:
        r = Path(d).expanduser().resolve()
        if r not in roots:
            roots.append(r)
    return tuple(roots)
