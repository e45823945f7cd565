"""The JSONPath subset ``custom_response_parse`` is written in: ``$``, ``.name``, ``['name']``, ``[n]``
(negative from the end), ``[*]`` and ``.*``. A path with a wildcard selects a list of every match (as
Jayway's JsonPath, which SeaTunnel uses, reads an indefinite path); a path without one selects the one
value it names (None when absent)."""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(r"\.(?P<name>[A-Za-z_$][\w$-]*)|\.(?P<dotstar>\*)|\[(?P<index>-?\d+)\]|\[(?P<star>\*)\]"
                   r"|\[\s*'(?P<quoted>[^']*)'\s*\]|\[\s*\"(?P<dquoted>[^\"]*)\"\s*\]")
#: the longest path read (a config value, bounded)
MAX_PATH = 1000


def steps(path: str) -> list[tuple[str, Any]]:
    """The steps of ``path`` as ``(kind, arg)``: ``("key", name)``, ``("index", n)``, ``("all", None)``;
    raises ValueError for what the subset does not read."""
    text = path.strip()
    if len(text) > MAX_PATH or not text.startswith("$"):
        raise ValueError(f"{path[:80]!r} is not a JSONPath starting with $")
    out: list[tuple[str, Any]] = []
    at = 1
    while at < len(text):
        m = _STEP.match(text, at)
        if m is None:
            raise ValueError(f"{path!r}: cannot read {text[at:at + 20]!r} (this package reads $, .name, ['name'], "
                             "[n], [*] and .*)")
        if m.group("name") is not None:
            out.append(("key", m.group("name")))
        elif m.group("quoted") is not None or m.group("dquoted") is not None:
            out.append(("key", m.group("quoted") if m.group("quoted") is not None else m.group("dquoted")))
        elif m.group("index") is not None:
            out.append(("index", int(m.group("index"))))
        else:
            out.append(("all", None))
        at = m.end()
    return out


def select(document: Any, path: str) -> Any:
    """What ``path`` selects in ``document`` (see the module)."""
    parsed = steps(path)
    matches = [document]
    for kind, arg in parsed:
        found: list[Any] = []
        for node in matches:
            named = kind == "key" and isinstance(node, dict) and arg in node
            if named or (kind == "index" and isinstance(node, list) and -len(node) <= arg < len(node)):
                found.append(node[arg])
            elif kind == "all" and isinstance(node, list):
                found.extend(node)
            elif kind == "all" and isinstance(node, dict):
                found.extend(node.values())
        matches = found
    if any(kind == "all" for kind, _ in parsed):
        return matches
    return matches[0] if matches else None
