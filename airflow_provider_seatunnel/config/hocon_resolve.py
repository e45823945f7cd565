"""Resolving the substitutions of a parsed config.

A ``${path}`` is looked up in the config first (the flat key, then the nested spelling with
``.`` or SeaTunnel's ``->``), then through the caller's fallback (the environment, ``-i``
variables). Each reference gets its own copy of the value it names. An optional ``${?path}``
that nothing answers is undefined: the field it sets is not set (an earlier value of that
field stays), an element it is in is dropped. Every unresolved reference and every cycle is
reported in one :class:`ConfigError`, each at its file, line and column.

Resolution is bounded (:class:`.limits.Limits`): what substitutions and concatenations produce
is counted (``max_resolved_size``: a "billion laughs" of doubling substitutions stops early, with
a located error), substitutions may lead through at most ``2 * max_depth`` nested values and
references, and the resolved config nests at most ``max_depth`` deep.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import ConfigError, Problem
from .hocon_lexer import Pos
from .hocon_nodes import MISSING, Concat, ConfigList, ConfigObject, Layered, Subst, copy_value, merged
from .limits import DEFAULT_LIMITS, Limits

Lookup = Callable[[str], Any]


class _Resolver:
    def __init__(self, root: ConfigObject, fallback: Lookup, file: str | None,
                 keep_literal: Callable[[str], bool], limits: Limits = DEFAULT_LIMITS):
        self.limits = limits
        self.size = 0  # what substitutions and concatenations produced so far
        self.nesting = 0  # values and references being resolved, one inside the other
        self.root = root
        self.at: Subst | Concat = Concat((), root.pos or Pos(1, 1))  # the reference being resolved
        self.fallback = fallback
        self.file = file
        self.keep_literal = keep_literal
        self.active: list[str] = []
        self.problems: dict[tuple, Problem] = {}
        self.failed: set[str] = set()  # paths whose resolution was reported: not reported again

    def fatal(self, message: str, s: Subst | Concat, hint: str) -> ConfigError:
        """A bound crossed at ``s``: the error, with what was found before it."""
        self.problem(message, s, hint)
        return ConfigError(sorted(self.problems.values(), key=lambda p: (p.file or "", p.line or 0, p.col or 0)))

    def charge(self, amount: int, s: Subst | Concat) -> None:
        """Count ``amount`` more of resolved size; past ``max_resolved_size``, a located error."""
        self.size += amount
        if self.size > self.limits.max_resolved_size:
            raise self.fatal(f"substitutions expand the config past {self.limits.max_resolved_size} characters", s,
                             "a value that refers to another several times, again and again, grows exponentially: "
                             "write the value out")

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
                self.charge(_size(found), s)
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
        if not isinstance(v, (Subst, Concat, Layered, ConfigObject, ConfigList)):
            return v
        self.nesting += 1
        try:
            if self.nesting > 2 * self.limits.max_depth:
                at = v if isinstance(v, (Subst, Concat)) else self.at
                raise self.fatal(f"values and substitutions nest deeper than {2 * self.limits.max_depth} levels", at,
                                 "shorten the chain of substitutions (a = ${b}, b = ${c}, ...) or the nesting")
            if isinstance(v, (Subst, Concat)):
                self.at = v
            return self._value(v)
        finally:
            self.nesting -= 1

    def _value(self, v: Any) -> Any:
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
        text = [_scalar_text(x) for x in values]
        self.charge(sum(map(len, text)), c)
        return "".join(text)


#: what one object, list or value weighs against ``max_resolved_size``, besides its text: about what
#: it costs in memory over a character
NODE_WEIGHT = 128


def _size(value: Any) -> int:
    """What a resolved value weighs: :data:`NODE_WEIGHT` per object, list and scalar, plus the
    characters of its text (counted without recursion)."""
    total, stack = 0, [value]
    while stack:
        v = stack.pop()
        total += NODE_WEIGHT
        if isinstance(v, dict):
            total += sum(len(k) for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            total += len(v)
    return total


def _too_deep(root: ConfigObject, max_depth: int) -> str | None:
    """The top-level key under which the resolved ``root`` nests deeper than ``max_depth``, if any
    (walked without recursion)."""
    for key, value in root.items():
        stack = [(value, 1)]
        while stack:
            v, depth = stack.pop()
            if isinstance(v, (dict, list)):
                if depth > max_depth:
                    return key
                stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return None


def _scalar_text(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return repr(x)
    return str(x)


def resolve(root: ConfigObject, fallback: Lookup, file: str | None = None,
            keep_literal: Callable[[str], bool] = lambda name: False,
            limits: Limits = DEFAULT_LIMITS) -> ConfigObject:
    """Replace every unquoted substitution in ``root`` (in place) and return it.

    ``fallback`` answers what the config does not (``MISSING`` when it has nothing). Names
    for which ``keep_literal`` is true and that nothing resolves stay as the text ``${name}``.
    Raises one :class:`ConfigError` listing every unresolved reference and cycle, in order.
    """
    resolver = _Resolver(root, fallback, file, keep_literal, limits)
    resolver.value(root)
    if resolver.problems:
        raise ConfigError(sorted(resolver.problems.values(),
                                 key=lambda p: (p.file or "", p.line or 0, p.col or 0)))
    deep = _too_deep(root, limits.max_depth)
    if deep is not None:
        pos = root.key_pos.get(deep) or root.pos
        raise ConfigError.at(f"after substitution, '{deep}' nests deeper than {limits.max_depth} levels",
                             file=getattr(pos, "file", None) or file, line=pos.line if pos else None,
                             col=pos.col if pos else None, key=deep,
                             hint="a substitution inside the value it names, again and again, deepens it")
    return root
