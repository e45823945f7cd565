"""The tables a lakehouse sink's ``prepare`` staged (``{"tables": [...]}``, each entry with a
``status`` and its cached rows under ``df``): committed in order, and their cached rows released."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any


def commit_staged(info: Mapping[str, Any] | None, commit_table: Callable[[dict[str, Any]], None]) -> None:
    """``commit_table`` for each table ``prepare`` staged (in order), then their cached rows dropped."""
    entries = [e for e in (info or {}).get("tables", ()) if e.get("status") == "staged"]
    for entry in entries:
        commit_table(entry)
    release_cached(info)


def release_cached(info: Mapping[str, Any] | None) -> None:
    """Drop the rows ``prepare`` cached for each table (quietly: the session may be gone)."""
    for entry in (info or {}).get("tables", ()):
        df = entry.get("df")
        if df is not None:
            with contextlib.suppress(Exception):
                df.unpersist()
