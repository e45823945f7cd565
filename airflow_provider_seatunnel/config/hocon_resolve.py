"""Resolving the substitutions of a parsed config.

A ``${path}`` is looked up in the config first (the flat key, then the nested spelling with
``.`` or SeaTunnel's ``->``), then through the caller's fallback (the environment, ``-i``
variables). Each reference gets its own copy of the value it names. An optional ``${?path}``
that nothing answers is undefined: the field it sets is not set (an earlier value of that
field stays), an element it is in is dropped. Every unresolved reference and every cycle is
reported in one :class:`ConfigError`, each at its file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import ConfigError, Problem
from .hocon_nodes import MISSING, Concat, ConfigList, ConfigObject, Layered, Subst, copy_value, merged

Lookup = Callable[[str], Any]


class _Resolver:
    def __init__(self, root: ConfigObject, fallback: Lookup, file: str | None,
                 keep_literal: Callable[[str], bool]):
        self.root = root
        self.fallback = fallback
        self.file = file
        self.keep_literal = keep_literal
        self.active: list[str] = []
        self.problems: dict[tuple, Problem] = {}
        self.failed: set[str] = set()  # paths whose resolution was reported: not reported again

    def problem(self, message: str, s: Subst | Concat, hint: str | None = None) -> Any:
        file = getattr(s.pos, "file", None) or self.file
        key = (file, s.pos.line, s.pos.col, message)
        self.problems.setdefault(key, Problem(message, file=file, line=s.pos.line, col=s.pos.col, hint=hint))
        return MISSING

    def lookup_config(self, path: str) -> Any:
        node: Any = self.root
        if path in node:
            return node[path]
        for part in re.split(r"\.|->", path):  # nested spelling: a.b.c → a → b → c (also '->')
            if not isinstance(node, dict):
                node = self.value(node)
            if not isinstance(node, dict) or part not in node:
                return MISSING
            node = node[part]
        return node

    def subst(self, s: Subst) -> Any:
        if ":" in s.path:
            name = s.path.split(":", 1)[0]
            return self.problem(f"'${{{s.path}}}': a default value only works inside a quoted string", s,
                                f'write "${{{s.path}}}" in quotes, or pass -i {name}=VALUE')
        if s.path in self.failed:
            return MISSING
        if s.path in self.active:
            self.failed.update(self.active[self.active.index(s.path):])
            cycle = " -> ".join([*self.active[self.active.index(s.path):], s.path])
            return self.problem(f"substitution cycle: {cycle}", s,
                                "break the cycle (a field may refer to its own earlier value only)")
        value = MISSING if s.external else self.lookup_config(s.path)
        if value is not MISSING:
            self.active.append(s.path)
            reported = len(self.problems)
            try:
                found = self.value(value)
            finally:
                self.active.pop()
            if found is not MISSING:
                return copy_value(found)
            if len(self.problems) > reported:
                self.failed.add(s.path)
                return MISSING  # reported already: no second error for the same reference
        value = self.fallback(s.path)
        if value is not MISSING:
            return value
        if s.optional:
            return MISSING
        if self.keep_literal(s.path):
            return "${" + s.path + "}"
        return self.problem(f"unresolved variable ${{{s.path}}}", s,
                            f"pass -i {s.path}=VALUE, set it in the environment or in the config")

    def value(self, v: Any) -> Any:
        if isinstance(v, Subst):
            return self.subst(v)
        if isinstance(v, Concat):
            return self.concat(v)
        if isinstance(v, Layered):
            later = self.value(v.later)
            if later is MISSING:
                return self.value(v.earlier)
            if isinstance(later, dict):
                earlier = self.value(v.earlier)
                if isinstance(earlier, dict):
                    return merged(earlier, later)
            return later
        if isinstance(v, ConfigObject):
            for k in list(v.keys()):
                r = self.value(v[k])
                if r is MISSING:
                    del v[k]
                else:
                    v[k] = r
            return v
        if isinstance(v, ConfigList):
            kept = [(self.value(x), p) for x, p in zip(v, v.item_pos or [None] * len(v), strict=False)]
            kept = [(x, p) for x, p in kept if x is not MISSING]
            v[:] = [x for x, _ in kept]
            v.item_pos = [p for _, p in kept]
            return v
        return v

    def concat(self, c: Concat) -> Any:
        values = [x for x in (self.value(p) for p in c.parts) if x is not MISSING]
        if not values:
            return MISSING
        def only(kind: type) -> bool:  # pieces of that kind, with blanks between them
            return any(isinstance(x, kind) for x in values) and all(
                isinstance(x, kind) or (isinstance(x, str) and not x.strip()) for x in values)

        if only(list):
            out = ConfigList(pos=c.pos)
            for x in values:
                if isinstance(x, list):
                    out.extend(copy_value(e) for e in x)
                    out.item_pos.extend(getattr(x, "item_pos", None) or [c.pos] * len(x))
            return out
        if only(dict):
            result: Any = ConfigObject(pos=c.pos)
            for x in values:
                if isinstance(x, dict):
                    result = merged(result, x)  # fresh objects: the operands stay as they were
            result.pos = c.pos
            return result
        if any(isinstance(x, (dict, list)) for x in values):
            return self.problem("cannot join a list or object with text in one value", c,
                                "quote the whole value or split it into separate options")
        return "".join(_scalar_text(x) for x in values)


def _scalar_text(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return repr(x)
    return str(x)


def resolve(root: ConfigObject, fallback: Lookup, file: str | None = None,
            keep_literal: Callable[[str], bool] = lambda name: False) -> ConfigObject:
    """Replace every unquoted substitution in ``root`` (in place) and return it.

    ``fallback`` answers what the config does not (``MISSING`` when it has nothing). Names
    for which ``keep_literal`` is true and that nothing resolves stay as the text ``${name}``.
    Raises one :class:`ConfigError` listing every unresolved reference and cycle, in order.
    """
    resolver = _Resolver(root, fallback, file, keep_literal)
    resolver.value(root)
    if resolver.problems:
        raise ConfigError(sorted(resolver.problems.values(),
                                 key=lambda p: (p.file or "", p.line or 0, p.col or 0)))
    return root
