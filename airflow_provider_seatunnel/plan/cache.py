"""A content-keyed, on-disk cache of compiled plans (what keeps DAG parsing cheap).

What a plan depends on, and so what a hit checks:

* the key (an HMAC, :func:`cache_key`) covers the config's text, name, resolved location and
  format, the working directory (where relative paths resolve), the variables, the values of the
  environment variables the text references, the provider's settings (:func:`..settings.environment`)
  and the code (:func:`code_fingerprint`): the package version, the installed distributions
  (connector plugins included) and, in a source checkout, its modules;
* the entry records what compiling it read besides the text (:mod:`..config.reads`): every
  included file (its absolute path and an HMAC of its bytes, or that it was missing) and every
  environment variable looked up (an HMAC of its value, or that it was unset). A hit re-reads them:
  editing an included file, or changing a variable an included file reads, is a miss. A compile
  that iterated the whole environment is not cached.

No secret is written: an entry is the plan as shown (:meth:`.model.JobPlan.to_dict` without
secrets), and each value that hides (:func:`..spi.secrets.hidden`) is stored as a *reference*
to where it came from, resolved when the entry is read: an environment variable the compile read
(``{"env": NAME}``), a variable (``{"var": NAME}``), or a span of the config text
(``{"text": [start, end]}``). Everything a reference reads is checked by the key or the entry's
dependencies, so a hit resolves to the values of a fresh compile; a plan holding a secret that has
no such source (one pieced together from several) is not cached. Environment values are stored
only as HMACs, never in clear.

Trust: the directory must be owned by the current user and not writable by others, and an
entry owned by the user and writable by no one else; anything else is not read (a warning is
logged once), since a planted plan would run as this user. The directory is created 0700 and
holds a random 32-byte key (``.hmac-key``, 0600) that authenticates every entry: an entry is
``{"mac": HMAC(key, cache key + body), "body": ...}``, so an entry that was edited, copied from
another cache or renamed to another config's key is a miss, never a plan. Entries are written
atomically (:func:`..spi.safe_files.write_atomic`: a fresh 0600 file renamed over the name, a
planted symlink never followed).

Bounds: at most ``[seatunnel] plan_cache_max_entries`` entries (default 1000) and
``plan_cache_max_bytes`` bytes (default 256M) — past either, the least recently used entries
(by modification time, refreshed on every hit) are removed — and a plan larger than
``plan_cache_max_entry_bytes`` (default 16M) is not stored (logged once; the plan is still used).
Airflow's ``[seatunnel] plan_cache_dir``, else ``SEATUNNEL_PLAN_CACHE``, names the directory;
``off`` disables the cache.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import hmac
import json
import logging
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__
from .. import settings as _settings
from ..config.reads import Reads
from ..spi.safe_files import UnsafePath, make_private_dir, open_fd, write_atomic
from ..spi.secrets import hidden
from .model import JobPlan

T = TypeVar("T")
ENV_VAR = "SEATUNNEL_PLAN_CACHE"
#: The layout of an entry's body: ``{"layout": 3, "deps": {...}, "plan": <plan as shown>, "refs": [...]}``.
LAYOUT = 3
KEY_FILE = ".hmac-key"
DEFAULT_MAX_ENTRIES = 1000
DEFAULT_MAX_BYTES = 256 * 1024 ** 2
DEFAULT_MAX_ENTRY_BYTES = 16 * 1024 ** 2
_KEY_BYTES = 32
_STALE_TMP_S = 3600
_INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})
_SUBST = re.compile(r"\$\{\??\s*([^}:\s]+)")
_HEAD, _SEP = b'{"mac":"', b'","body":'
_BODY_AT = len(_HEAD) + 64 + len(_SEP)
log = logging.getLogger(__name__)
_warned: set[str] = set()


@dataclass(frozen=True)
class Store:
    """A usable cache directory, its entry-authentication key and its bounds."""

    directory: Path
    secret: bytes
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_bytes: int = DEFAULT_MAX_BYTES
    max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def mac(self, *parts: bytes) -> str:
        return hmac.new(self.secret, b"\0".join(parts), hashlib.sha256).hexdigest()


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache directory, read at call time (never frozen at import); None when off. Airflow's
    ``[seatunnel] plan_cache_dir``, else ``$SEATUNNEL_PLAN_CACHE`` (:mod:`..settings`), else the
    user cache directory."""
    return _settings.cache_directory(_settings.PLAN_CACHE_DIR, "plans", environ)


def _limit(setting: _settings.Setting, default: int, environ: Mapping[str, str] | None) -> int:
    try:
        return _settings.size(setting, environ, default)
    except ValueError as e:
        _warn_once(f"setting {setting.option}", f"{e}: the default {default} is used")
        return default


def open_store(environ: Mapping[str, str] | None = None) -> Store | None:
    """The cache as configured (:func:`cache_dir`), if its directory and key are usable; else None."""
    directory = cache_dir(environ)
    directory = usable_dir(directory) if directory is not None else None
    secret = _secret(directory) if directory is not None else None
    if directory is None or secret is None:
        return None
    return Store(directory, secret,
                 _limit(_settings.PLAN_CACHE_MAX_ENTRIES, DEFAULT_MAX_ENTRIES, environ),
                 _limit(_settings.PLAN_CACHE_MAX_BYTES, DEFAULT_MAX_BYTES, environ),
                 _limit(_settings.PLAN_CACHE_MAX_ENTRY_BYTES, DEFAULT_MAX_ENTRY_BYTES, environ))


def referenced_names(text: str) -> list[str]:
    """The environment variables (or variables) the config text substitutes, sorted."""
    return sorted(set(_SUBST.findall(text)))


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The code a plan comes from, once per process (a process runs the code it imported): the
    package version; the modification time of every ``site-packages`` directory on ``sys.path``
    (installing, upgrading or removing any distribution, a connector plugin or PySpark included,
    changes it; other ``sys.path`` entries, such as the DAG folder, are left out, so that saving a
    DAG file does not recompile every plan); and, for a source checkout or an editable install (the
    package not inside a ``site-packages`` directory), each module's size and modification time,
    so that editing the compiler recompiles."""
    material: list[Any] = [__version__]
    for entry in sys.path:
        if os.path.basename(entry.rstrip(os.sep)) in _INSTALL_DIRS:
            try:
                material.append((entry, os.stat(entry).st_mtime_ns))
            except OSError:
                material.append((entry, None))
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not _INSTALL_DIRS & set(Path(package).parts):
        for root, dirs, files in os.walk(package):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(root, name))
                    material.append((os.path.relpath(os.path.join(root, name), package), st.st_size, st.st_mtime_ns))
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def cache_key(path: str | None, fmt: str | None, text: str, variables: Mapping[str, Any] | None,
              environ: Mapping[str, str], secret: bytes = b"", include_dirs: tuple[str, ...] = ()) -> str:
    """The entry name of a config: an HMAC (with the store's ``secret``) of everything the plan
    depends on that is known before compiling (the module docstring lists it)."""
    material = {
        "layout": LAYOUT, "version": __version__, "code": code_fingerprint(),
        "path": path, "location": os.path.realpath(path) if path else None, "cwd": os.getcwd(),
        "format": fmt, "text": text,
        "variables": {str(k): v for k, v in (variables or {}).items()},
        "environ": {name: environ.get(name) for name in referenced_names(text)},
        "settings": _settings.environment(environ), "include_dirs": list(include_dirs),
        "dags_folder": _settings.dags_folder(),
    }
    blob = json.dumps(material, sort_keys=True, default=str).encode()
    return hmac.new(secret, blob, hashlib.sha256).hexdigest()


def without_gc(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` with the cyclic GC paused: building many small objects at once stays linear."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return fn(*args)
    finally:
        if enabled:
            gc.enable()


def _warn_once(what: str, why: str, outcome: str = "not used") -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("plan cache: %s %s: %s", what, why, outcome)


def _untrusted(st: os.stat_result, writable_by: int) -> str | None:
    """Why a file or directory with status ``st`` is not to be trusted, or None."""
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & writable_by:
        return f"is writable by {'others' if writable_by == stat.S_IWOTH else 'group or others'} " \
               f"(mode {stat.S_IMODE(st.st_mode):o})"
    return None


def usable_dir(directory: Path) -> Path | None:
    """``directory``, created (0700, a symlink there refused) when missing, if it is one this user
    owns and others cannot write to; else None, with a warning once."""
    try:
        if not directory.is_dir() or directory.is_symlink():
            make_private_dir(str(directory))
        st = os.stat(directory)
    except OSError as e:
        _warn_once(f"directory {directory}", f"cannot be created or read ({e.strerror or e})")
        return None
    why = "is not a directory" if not stat.S_ISDIR(st.st_mode) else _untrusted(st, stat.S_IWOTH)
    if why:
        _warn_once(f"directory {directory}", why)
        return None
    return directory


def _read_key(path: Path) -> bytes | None:
    fd = open_fd(str(path), os.O_RDONLY, 0, "(read) the plan cache key")
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        why = _untrusted(st, 0o077)
        if why:
            _warn_once(f"key {path}", why.replace("writable", "readable or writable"))
            return None
        data = f.read(_KEY_BYTES + 1)
    return data if len(data) == _KEY_BYTES else None


def _secret(directory: Path) -> bytes | None:
    """The directory's entry-authentication key, created (32 random bytes, 0600, published by a
    hard link, so that no one reads a half-written key) when missing; None when it is not usable."""
    path = directory / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        _warn_once(f"key {path}", f"cannot be read ({e.strerror or e})")
        return None
    tmp = directory / f".{KEY_FILE}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    try:
        fd = open_fd(str(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, "the plan cache key")
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(_KEY_BYTES))
        with contextlib.suppress(FileExistsError):  # another process made it first: its key is the key
            os.link(tmp, path)
        return _read_key(path)
    except OSError as e:
        _warn_once(f"key {path}", f"cannot be created ({e.strerror or e})")
        return None
    finally:
        tmp.unlink(missing_ok=True)


def _load(path: Path) -> bytes | None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else _untrusted(
            st, stat.S_IWGRP | stat.S_IWOTH)
        if why:
            _warn_once(f"entry {path}", why)
            return None
        return f.read()


def read(store: Store, key: str) -> dict | None:
    """The entry ``key`` as stored (its secrets still references), or None: missing, unreadable,
    not trusted, not authenticated by the store's key for this cache key, or of another layout."""
    try:
        raw = _load(store.path(key))
    except (OSError, ValueError):
        return None
    if raw is None or not (raw.startswith(_HEAD) and raw[_BODY_AT - len(_SEP):_BODY_AT] == _SEP
                           and raw.endswith(b"}")):
        return None
    body = raw[_BODY_AT:-1]
    if not hmac.compare_digest(raw[len(_HEAD):_BODY_AT - len(_SEP)], store.mac(key.encode(), body).encode()):
        return None
    try:
        entry = json.loads(body)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("layout") != LAYOUT:
        return None
    return entry


def _file_mac(store: Store, path: str) -> str | None:
    """The HMAC of the regular file at ``path`` (None: missing or not a regular file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return store.mac(b"file", f.read())


def _env_mac(store: Store, name: str, value: str | None) -> str | None:
    return None if value is None else store.mac(b"env", name.encode(), value.encode("utf-8", "surrogateescape"))


def _deps(store: Store, seen: Reads) -> dict:
    files = [[path, None if data is None else store.mac(b"file", data)] for path, data in sorted(seen.files.items())]
    env = [[name, _env_mac(store, name, value)] for name, value in sorted(seen.env.items())]
    return {"files": files, "env": env}


def deps_hold(store: Store, deps: Any, environ: Mapping[str, str]) -> bool:
    """Whether every included file and environment variable an entry recorded still reads the same."""
    try:
        for name, mac in deps["env"]:
            if _env_mac(store, name, environ.get(name)) != mac:
                return False
        return all(_file_mac(store, path) == mac for path, mac in deps["files"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


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
    if not isinstance(value, str):
        return None
    start = text.find(value)
    return {"text": [start, start + len(value)]} if start >= 0 else None


def _resolve(ref: Mapping[str, Any], text: str, variables: Mapping[str, Any], environ: Mapping[str, str],
             env_names: frozenset[str] | None = None) -> Any:
    """The value a reference names; ValueError for one that reads outside what the entry was checked against."""
    if "env" in ref:
        if env_names is not None and ref["env"] not in env_names:
            raise ValueError(f"reference to an environment variable the compile did not read: {ref['env']!r}")
        return environ[ref["env"]]
    if "var" in ref:
        return {str(k): v for k, v in variables.items()}[ref["var"]]
    start, end = ref["text"]
    if not (type(start) is int and type(end) is int and 0 <= start <= end <= len(text)):
        raise ValueError(f"text reference out of range: {ref['text']!r}")
    return text[start:end]


def _put(tree: Any, path: list[Any], value: Any) -> None:
    for step in path[:-1]:
        tree = tree[step]
    tree[path[-1]] = value


def entry_of(plan: JobPlan, text: str, variables: Mapping[str, Any] | None,
             environ: Mapping[str, str], seen: Reads, store: Store) -> dict | None:
    """The cache entry of ``plan`` (a :class:`.model.JobPlan` compiled from ``text``, having read
    ``seen``): its dependencies, the plan as shown and a reference for each value that hides; None
    when one has no reference or the compile read the whole environment."""
    if seen.whole_environment:
        return None
    full, shown = plan.to_dict(secrets=True), plan.to_dict()
    names, given = sorted({*referenced_names(text), *seen.env}), dict(variables or {})
    refs = []
    for path, value in hidden(full, shown):
        ref = _reference(value, text, names, given, environ)
        if ref is None or _resolve(ref, text, given, environ) != value:
            return None
        refs.append([list(path), ref])
        _put(shown, list(path), None)  # neither the secret nor its masked form: the reference says it
    deps = _deps(store, seen)
    for name in referenced_names(text):  # in the key already; listed so that a reference may read it
        if name not in seen.env:
            deps["env"].append([name, _env_mac(store, name, environ.get(name))])
    return {"layout": LAYOUT, "deps": deps, "plan": shown, "refs": refs}


def plan_dict(entry: Mapping[str, Any], text: str, variables: Mapping[str, Any] | None,
              environ: Mapping[str, str]) -> dict:
    """The plan (``to_dict(secrets=True)``) an entry holds, its references resolved."""
    plan, given = entry["plan"], dict(variables or {})
    env_names = frozenset(name for name, _ in entry["deps"]["env"])
    for path, ref in entry["refs"]:
        _put(plan, path, _resolve(ref, text, given, environ, env_names))
    return plan


def cached_plan(store: Store, key: str, text: str, variables: Mapping[str, Any] | None,
                environ: Mapping[str, str]) -> JobPlan | None:
    """The plan the entry ``key`` holds, its secrets resolved (:func:`plan_dict`), or None (no
    usable entry, or one whose included files or environment changed). Decoded and built with the
    cyclic GC paused throughout; a hit marks the entry recently used."""
    def load() -> JobPlan | None:
        entry = read(store, key)
        if entry is None or not deps_hold(store, entry.get("deps"), environ):
            return None
        try:
            plan = JobPlan.from_dict(plan_dict(entry, text, variables, environ))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            return None  # an entry of another layout: recompiled and overwritten
        with contextlib.suppress(OSError):
            os.utime(store.path(key))
        return plan

    return without_gc(load)


def write(store: Store, key: str, entry: dict | None, what: str = "inline config") -> None:
    """Write ``entry`` authenticated and atomically (0600, never through a symlink), then keep the
    store within its bounds; None removes the key's entry (one of an older layout may hold secrets).
    An entry over ``max_entry_bytes`` is not stored (a warning once). A failure only costs the cache."""
    target = store.path(key)
    try:
        if entry is None:
            target.unlink(missing_ok=True)
            return
        body = json.dumps(entry, separators=(",", ":")).encode()
        if len(body) > store.max_entry_bytes:
            target.unlink(missing_ok=True)
            _warn_once(f"the plan of {what}", f"is {len(body)} bytes, over plan_cache_max_entry_bytes "
                       f"({store.max_entry_bytes})", "compiled every time, not stored")
            return
        write_atomic(str(target), _HEAD + store.mac(key.encode(), body).encode() + _SEP + body + b"}",
                     0o600, "the plan cache entry")
        evict(store, keep=target.name)
    except UnsafePath as e:
        _warn_once(f"entry {target}", str(e))
    except OSError:
        pass


def evict(store: Store, keep: str | None = None) -> list[str]:
    """Remove the least recently used entries (oldest modification time first) until at most
    ``max_entries`` entries of at most ``max_bytes`` in all remain, and temporary files left by a
    crashed writer; the entry ``keep`` (just written) goes last. The names removed."""
    found: list[tuple[bool, int, str, int]] = []
    removed: list[str] = []
    now = time.time()
    with os.scandir(store.directory) as it:
        for e in it:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if e.name.endswith(".tmp") and e.name.startswith(".") and now - st.st_mtime > _STALE_TMP_S:
                removed.append(e.name)
            elif e.name.endswith(".json"):
                found.append((e.name == keep, st.st_mtime_ns, e.name, st.st_size))
    found.sort()
    count, total = len(found), sum(size for *_, size in found)
    for _, _, name, size in found:
        if count <= store.max_entries and total <= store.max_bytes:
            break
        removed.append(name)
        count, total = count - 1, total - size
    for name in removed:
        with contextlib.suppress(OSError):
            (store.directory / name).unlink()
    return removed
