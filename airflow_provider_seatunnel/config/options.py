"""Option lookup and coercion as SeaTunnel's ReadonlyConfig does it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .hocon import MISSING

_INT = re.compile(r"[+-]?\d+\Z")


def lookup(options: Mapping[str, Any], key: str) -> Any:
    """``options[key]`` by SeaTunnel's rule: the flat key ``a.b.c`` first, then nested maps.

    Both ``row.num = 5`` and ``row { num = 5 }`` answer ``lookup(o, "row.num")``.
    Returns :data:`MISSING` when absent.
    """
    if key in options:
        return options[key]
    if "." not in key:
        return MISSING
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:i])
        inner = options.get(head)
        if isinstance(inner, Mapping):
            found = lookup(inner, ".".join(parts[i:]))
            if found is not MISSING:
                return found
    return MISSING


def as_int(value: Any) -> int | None:
    """An int from an int or an integer string ("50"); None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return None  # 1.0 is written as a float: not an integer option value
    if isinstance(value, str) and _INT.match(value.strip()):
        return int(value.strip())
    return None


def as_list(value: Any) -> list[Any]:
    """A list option: a list element-wise; a string split on commas and trimmed."""
    if value is None or value is MISSING:
        return []
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [value]


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def checked_bool(value: Any, key: str, default: bool, error: Callable[[str], Exception]) -> bool:
    """``value`` as a boolean (``default`` when unset); ``error(message)`` is raised when it is not one."""
    if value is None:
        return default
    parsed = as_bool(value)
    if parsed is None:
        raise error(f"{key} must be true or false, found {value!r}")
    return parsed


def checked_int(value: Any, key: str, default: int, minimum: int, error: Callable[[str], Exception]) -> int:
    """``value`` as an integer >= ``minimum`` (``default`` when unset); else ``error(message)`` is raised."""
    if value is None:
        return default
    parsed = as_int(value)
    if parsed is None or parsed < minimum:
        raise error(f"{key} must be an integer >= {minimum}, found {value!r}")
    return parsed
