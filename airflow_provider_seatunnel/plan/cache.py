"""A content-keyed, on-disk cache of compiled plans (what keeps DAG parsing cheap).

The key hashes the package version, the config's name, format and text, the variables and the
values of the environment variables the text references. Entries are written atomically,
readable by their owner only.

No secret is written: an entry is the plan as shown (:meth:`.model.JobPlan.to_dict` without
secrets), and each value that hides (:func:`..spi.secrets.hidden`) is stored as a *reference*
to where it came from, resolved when the entry is read: an environment variable the text
references (``{"env": NAME}``), a variable (``{"var": NAME}``), or a span of the config text
(``{"text": [start, end]}``). Everything a reference reads is part of the key, so a hit
resolves to the values of a fresh compile; a plan holding a secret that has no such source (one
pieced together from several) is not cached.

Trust: the directory must be owned by the current user and not writable by others, and an
entry owned by the user and writable by no one else; anything else is not read (a warning is
logged once), since a planted plan would run as this user. The directory is created 0700.
Airflow's ``[seatunnel] plan_cache_dir``, else ``SEATUNNEL_PLAN_CACHE``, names the directory;
``off`` disables the cache.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__
from ..spi.secrets import hidden
from .model import JobPlan

T = TypeVar("T")
ENV_VAR = "SEATUNNEL_PLAN_CACHE"
#: The layout of an entry: ``{"layout": 2, "plan": <plan as shown>, "refs": [[path, reference], ...]}``.
LAYOUT = 2
_SUBST = re.compile(r"\$\{\??\s*([^}:\s]+)")
log = logging.getLogger(__name__)
_warned: set[str] = set()


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache directory, read at call time (never frozen at import); None when off. Airflow's
    ``[seatunnel] plan_cache_dir``, else ``$SEATUNNEL_PLAN_CACHE`` (:mod:`..settings`), else the
    user cache directory."""
    from ..settings import PLAN_CACHE_DIR, value

    setting = value(PLAN_CACHE_DIR, environ) or ""
    if setting.lower() in ("off", "0", "false", "no", "none"):
        return None
    if setting:
        return Path(setting)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("airflow-provider-seatunnel")) / "plans"


def referenced_names(text: str) -> list[str]:
    """The environment variables (or variables) the config text substitutes, sorted."""
    return sorted(set(_SUBST.findall(text)))


def cache_key(path: str | None, fmt: str | None, text: str, variables: Mapping[str, Any] | None,
              environ: Mapping[str, str]) -> str:
    material = {
        "version": __version__, "path": path, "format": fmt, "text": text,
        "variables": {str(k): v for k, v in (variables or {}).items()},
        "environ": {name: environ.get(name) for name in referenced_names(text)},
    }
    blob = json.dumps(material, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def without_gc(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` with the cyclic GC paused: building many small objects at once stays linear."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return fn(*args)
    finally:
        if enabled:
            gc.enable()


def _warn_once(what: str, why: str) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("plan cache: %s %s: not used", what, why)


def _untrusted(st: os.stat_result, writable_by: int) -> str | None:
    """Why a file or directory with status ``st`` is not to be trusted, or None."""
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & writable_by:
        return f"is writable by {'others' if writable_by == stat.S_IWOTH else 'group or others'} " \
               f"(mode {stat.S_IMODE(st.st_mode):o})"
    return None


def usable_dir(directory: Path) -> Path | None:
    """``directory``, created (0700; its parents as the umask gives) when missing, if it is one this
    user owns and others cannot write to; else None, with a warning once."""
    try:
        if not directory.exists():
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(directory)
    except OSError as e:
        _warn_once(f"directory {directory}", f"cannot be created or read ({e.strerror})")
        return None
    why = "is not a directory" if not stat.S_ISDIR(st.st_mode) else _untrusted(st, stat.S_IWOTH)
    if why:
        _warn_once(f"directory {directory}", why)
        return None
    return directory


def _load(path: Path) -> dict | None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, encoding="utf-8") as f:
        st = os.fstat(f.fileno())
        why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else _untrusted(
            st, stat.S_IWGRP | stat.S_IWOTH)
        if why:
            _warn_once(f"entry {path}", why)
            return None
        return json.load(f)


def read(directory: Path, key: str) -> dict | None:
    """The entry ``key`` as stored (its secrets still references), or None: missing, unreadable,
    not trusted, or of another layout."""
    try:
        entry = _load(directory / f"{key}.json")
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("layout") != LAYOUT:
        return None
    return entry


def _reference(value: Any, text: str, names: list[str], variables: Mapping[str, Any],
               environ: Mapping[str, str]) -> dict | None:
    """Where a secret ``value`` can be read again from the key's own inputs, or None."""
    if not isinstance(value, (str, int, float, bool)):
        return None
    for name in names:
        if isinstance(value, str) and environ.get(name) == value:
            return {"env": name}
    for name, given in variables.items():
        if type(given) is type(value) and given == value:
            return {"var": str(name)}
    start = text.find(value) if isinstance(value, str) else -1
    return {"text": [start, start + len(value)]} if start >= 0 else None


def _resolve(ref: Mapping[str, Any], text: str, variables: Mapping[str, Any], environ: Mapping[str, str]) -> Any:
    if "env" in ref:
        return environ[ref["env"]]
    if "var" in ref:
        return {str(k): v for k, v in variables.items()}[ref["var"]]
    start, end = ref["text"]
    return text[start:end]


def _put(tree: Any, path: list[Any], value: Any) -> None:
    for step in path[:-1]:
        tree = tree[step]
    tree[path[-1]] = value


def entry_of(plan: JobPlan, text: str, variables: Mapping[str, Any] | None,
             environ: Mapping[str, str]) -> dict | None:
    """The cache entry of ``plan`` (a :class:`.model.JobPlan` compiled from ``text``): the plan as
    shown and a reference for each value that hides; None when one has no reference."""
    full, shown = plan.to_dict(secrets=True), plan.to_dict()
    names, given = referenced_names(text), dict(variables or {})
    refs = []
    for path, value in hidden(full, shown):
        ref = _reference(value, text, names, given, environ)
        if ref is None or _resolve(ref, text, given, environ) != value:
            return None
        refs.append([list(path), ref])
        _put(shown, list(path), None)  # neither the secret nor its masked form: the reference says it
    return {"layout": LAYOUT, "plan": shown, "refs": refs}


def plan_dict(entry: Mapping[str, Any], text: str, variables: Mapping[str, Any] | None,
              environ: Mapping[str, str]) -> dict:
    """The plan (``to_dict(secrets=True)``) an entry holds, its references resolved."""
    plan, given = entry["plan"], dict(variables or {})
    for path, ref in entry["refs"]:
        _put(plan, path, _resolve(ref, text, given, environ))
    return plan


def cached_plan(directory: Path, key: str, text: str, variables: Mapping[str, Any] | None,
                environ: Mapping[str, str]) -> JobPlan | None:
    """The plan the entry ``key`` holds, its secrets resolved (:func:`plan_dict`), or None (no
    usable entry). Decoded and built with the cyclic GC paused throughout."""
    def load() -> JobPlan | None:
        entry = read(directory, key)
        if entry is None:
            return None
        try:
            return JobPlan.from_dict(plan_dict(entry, text, variables, environ))
        except (KeyError, IndexError, TypeError, ValueError):
            return None  # an entry of another layout: recompiled and overwritten

    return without_gc(load)


def write(directory: Path, key: str, entry: dict | None) -> None:
    """Write ``entry`` atomically (temp file + rename), mode 0600; None removes the key's entry (one
    of an older layout may hold secrets). A failure only costs the cache."""
    target = directory / f"{key}.json"
    try:
        if entry is None:
            target.unlink(missing_ok=True)
            return
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, separators=(",", ":"))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass
