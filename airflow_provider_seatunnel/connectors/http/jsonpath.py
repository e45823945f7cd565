"""JSONPath as the Http source reads ``json_field`` and ``content_field`` (pure Python: it runs in
Spark's Python workers and at compile time).

The subset of Jayway JsonPath that SeaTunnel's configs use: the root ``$`` (a path without it gets
``$.`` in front, as Jayway does), children ``.name``, ``['name']``, ``["name"]`` and unions
``['a','b']``, wildcards ``.*`` and ``[*]``, indexes ``[0]``, ``[-1]`` and unions ``[0,2]``, slices
``[1:3]``, ``[:2]``, ``[-2:]`` and deep scans ``..name``, ``..*``, ``..[0]``. Filters (``[?(...)]``)
and functions (``.length()``) are refused by :func:`compile_path` with :class:`UnsupportedPath`: such a
block plans but cannot run.

Evaluation follows the reader's settings (always a list, exceptions suppressed, a missing leaf as
null): every match in document order; a missing last member or index gives one null, a missing
member earlier on drops that branch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class PathError(ValueError):
    """A path that is not JSONPath at all."""


class UnsupportedPath(PathError):
    """A JSONPath feature this reader does not evaluate (filters, functions)."""


@dataclass(frozen=True)
class Step:
    """One step: ``kind`` is ``names``, ``indexes``, ``slice`` or ``wild``; ``scan`` applies it at
    every depth (``..``)."""

    kind: str
    names: tuple[str, ...] = ()
    indexes: tuple[int, ...] = ()
    bounds: tuple[int | None, int | None, int | None] = (None, None, None)
    scan: bool = False

    @property
    def definite(self) -> bool:
        return not self.scan and ((self.kind == "names" and len(self.names) == 1)
                                  or (self.kind == "indexes" and len(self.indexes) == 1))


@dataclass(frozen=True)
class JsonPath:
    text: str
    steps: tuple[Step, ...]

    @property
    def definite(self) -> bool:
        """Whether the path names at most one value (no wildcard, scan, slice or union)."""
        return all(s.definite for s in self.steps)


_NAME = re.compile(r"[^.\[\]()\s]+")
_INT = re.compile(r"-?\d+")


def compile_path(text: str) -> JsonPath:
    """The steps of ``text``; :class:`PathError` when it is not a path, :class:`UnsupportedPath` for
    a filter or a function."""
    if not isinstance(text, str) or not text.strip():
        raise PathError("a JSONPath must be a non-empty string such as \"$.data[*].name\"")
    s = text.strip()
    if s.startswith("@"):
        raise UnsupportedPath(f"{text!r}: a path relative to @ is only valid inside a filter")
    if not s.startswith("$"):
        s = "$" + (s if s.startswith("[") else "." + s)
    steps: list[Step] = []
    i, n = 1, len(s)
    while i < n:
        scan = s.startswith("..", i)
        if scan:
            i += 2
            if i < n and s[i] == "[":
                step, i = _bracket(s, i, text)
                steps.append(Step(step.kind, step.names, step.indexes, step.bounds, scan=True))
                continue
        elif s[i] == ".":
            i += 1
        elif s[i] == "[":
            step, i = _bracket(s, i, text)
            steps.append(step)
            continue
        else:
            raise PathError(f"{text!r}: unexpected {s[i]!r} at position {i + 1}")
        if i < n and s[i] == "*":
            steps.append(Step("wild", scan=scan))
            i += 1
            continue
        m = _NAME.match(s, i)
        if not m:
            raise PathError(f"{text!r}: a member name is missing at position {i + 1}")
        if m.end() < n and s[m.end()] == "(":
            raise UnsupportedPath(f"{text!r}: functions ({m.group()}()) are not supported")
        steps.append(Step("names", names=(m.group(),), scan=scan))
        i = m.end()
    return JsonPath(text, tuple(steps))


def _bracket(s: str, i: int, text: str) -> tuple[Step, int]:
    """The step of the bracket at ``s[i]`` and the position after it."""
    close = _closing(s, i, text)
    inner = s[i + 1:close].strip()
    after = close + 1
    if inner.startswith("?"):
        raise UnsupportedPath(f"{text!r}: filters ({inner}) are not supported")
    if inner == "*":
        return Step("wild"), after
    if inner.startswith(("'", '"')):
        names = []
        for part in _split_quoted(inner, text):
            if len(part) < 2 or part[0] not in "'\"" or part[-1] != part[0]:
                raise PathError(f"{text!r}: {part!r} is not a quoted member name")
            names.append(part[1:-1])
        return Step("names", names=tuple(names)), after
    if ":" in inner:
        parts = [p.strip() for p in inner.split(":")]
        if len(parts) > 3 or any(p and not _INT.fullmatch(p) for p in parts):
            raise PathError(f"{text!r}: [{inner}] is not a slice")
        values = [int(p) if p else None for p in parts] + [None] * (3 - len(parts))
        if values[2] == 0:
            raise PathError(f"{text!r}: a slice step cannot be 0")
        return Step("slice", bounds=(values[0], values[1], values[2])), after
    parts = [p.strip() for p in inner.split(",")]
    if not all(_INT.fullmatch(p) for p in parts):
        raise PathError(f"{text!r}: [{inner}] is neither an index, a quoted name, a slice nor *")
    return Step("indexes", indexes=tuple(int(p) for p in parts)), after


def _closing(s: str, i: int, text: str) -> int:
    quote = None
    for j in range(i + 1, len(s)):
        c = s[j]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "]":
            return j
    raise PathError(f"{text!r}: an unclosed [ at position {i + 1}")


def _split_quoted(inner: str, text: str) -> list[str]:
    parts, quote, start = [], None, 0
    for j, c in enumerate(inner):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == ",":
            parts.append(inner[start:j].strip())
            start = j + 1
    parts.append(inner[start:].strip())
    return parts


# ------------------------------------------------------------------------------------------------
# evaluation
# ------------------------------------------------------------------------------------------------

_ABSENT = object()


def _children(node: Any) -> list[Any]:
    if isinstance(node, Mapping):
        return list(node.values())
    if isinstance(node, list):
        return list(node)
    return []


def _apply(step: Step, node: Any, leaf: bool) -> list[Any]:
    """The values ``step`` selects in ``node`` (no scan); a missing leaf is ``_ABSENT``."""
    if step.kind == "wild":
        return _children(node)
    if step.kind == "names":
        if not isinstance(node, Mapping):
            return []
        return [node.get(name, _ABSENT) for name in step.names if name in node or leaf]
    if not isinstance(node, list):
        return []
    if step.kind == "slice":
        start, stop, stride = step.bounds
        return node[slice(start, stop, stride)]
    out = []
    for index in step.indexes:
        if -len(node) <= index < len(node):
            out.append(node[index])
        elif leaf:
            out.append(_ABSENT)
    return out


def _scan(step: Step, node: Any) -> list[Any]:
    """``..step``: the matches of ``step`` in ``node`` and in every value below it, in document order."""
    out = [v for v in _apply(step, node, leaf=False) if v is not _ABSENT]
    for child in _children(node):
        out.extend(_scan(step, child))
    return out


def evaluate(path: JsonPath, document: Any) -> list[Any]:
    """Every value ``path`` selects in ``document`` (parsed JSON), as a list; a missing leaf is null."""
    nodes = [document]
    last = len(path.steps) - 1
    for at, step in enumerate(path.steps):
        found: list[Any] = []
        for node in nodes:
            found.extend(_scan(step, node) if step.scan else _apply(step, node, leaf=at == last))
        nodes = found
    return [None if v is _ABSENT else v for v in nodes]
