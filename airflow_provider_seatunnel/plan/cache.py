"""A content-keyed, on-disk cache of compiled plans (what keeps DAG parsing cheap).

The key hashes the package version, the config's name, format and text, the variables
and the values of the environment variables the text references. Entries are written
atomically, readable by their owner only (plans may hold secrets).
``SEATUNNEL_PLAN_CACHE`` names the directory; ``off`` disables the cache.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__

T = TypeVar("T")
ENV_VAR = "SEATUNNEL_PLAN_CACHE"
_SUBST = re.compile(r"\$\{\??\s*([^}:\s]+)")


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache directory, read at call time (never frozen at import); None when off."""
    env = os.environ if environ is None else environ
    setting = env.get(ENV_VAR, "").strip()
    if setting.lower() in ("off", "0", "false", "no", "none"):
        return None
    if setting:
        return Path(setting)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("airflow-provider-seatunnel")) / "plans"


def cache_key(path: str | None, fmt: str | None, text: str, variables: Mapping[str, Any] | None,
              environ: Mapping[str, str]) -> str:
    referenced = sorted(set(_SUBST.findall(text)))
    material = {
        "version": __version__, "path": path, "format": fmt, "text": text,
        "variables": {str(k): v for k, v in (variables or {}).items()},
        "environ": {name: environ.get(name) for name in referenced},
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


def _load(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read(directory: Path, key: str) -> dict | None:
    try:
        return without_gc(_load, directory / f"{key}.json")
    except (OSError, ValueError):
        return None


def write(directory: Path, key: str, plan: dict) -> None:
    """Write atomically (temp file + rename), mode 0600; a failure only costs the cache."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(plan, f, separators=(",", ":"))
            os.replace(tmp, directory / f"{key}.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass
