"""The values a parsed HOCON config is made of, and the merge rules between them.

Objects and lists are plain ``dict``/``list`` subclasses that remember where they stand.
What the parser cannot decide alone stays a node until :mod:`.hocon_resolve` resolves it:

* :class:`Subst`: an unquoted ``${path}`` (``${?path}`` when optional);
* :class:`Concat`: adjacent pieces of one value (``"a "${x}``, ``${a} ${b}``);
* :class:`Layered`: a key set twice where the later value may still turn out to be an
  object (merged with the earlier one) or undefined (an optional substitution without a
  value: the earlier value stays).

The merge rule (HOCON's): a later object merges into an earlier object, key by key and
recursively; any other later value replaces the earlier one. Merges copy, so two values
that came from the same substitution never share (and so never change each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .hocon_lexer import Pos

MISSING: Any = object()


class ConfigObject(dict):
    """An ordered object that remembers where it and each of its keys stand."""

    __slots__ = ("key_pos", "pos")

    def __init__(self, *args: Any, pos: Pos | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.pos = pos
        self.key_pos: dict[str, Pos] = {}

    def line_of(self, key: str) -> int | None:
        p = self.key_pos.get(key)
        return p.line if p else (self.pos.line if self.pos else None)


class ConfigList(list):
    """A list that remembers where it and each of its elements stand."""

    __slots__ = ("item_pos", "pos")

    def __init__(self, *args: Any, pos: Pos | None = None):
        super().__init__(*args)
        self.pos = pos
        self.item_pos: list[Pos | None] = []


@dataclass(frozen=True)
class Subst:
    """An unquoted ``${path}`` (or ``${?path}``) awaiting resolution. ``external``: a field's
    reference to itself with no earlier value, which only the environment can answer."""

    path: str
    optional: bool
    pos: Pos
    external: bool = False


@dataclass(frozen=True)
class Concat:
    """Adjacent value pieces (``"a "${x}" b"``, ``${a} ${b}``), joined at resolution."""

    parts: tuple
    pos: Pos


@dataclass(frozen=True)
class Layered:
    """``earlier`` overridden by ``later``, decided at resolution: objects merge; an undefined
    ``later`` keeps ``earlier``; anything else replaces."""

    earlier: Any
    later: Any
    pos: Pos | None = None


def copy_value(value: Any) -> Any:
    """A deep copy of a (parsed or resolved) value, positions included."""
    if isinstance(value, ConfigObject):
        out = ConfigObject(((k, copy_value(v)) for k, v in value.items()), pos=value.pos)
        out.key_pos = dict(value.key_pos)
        return out
    if isinstance(value, dict):
        return ConfigObject((k, copy_value(v)) for k, v in value.items())
    if isinstance(value, ConfigList):
        items = ConfigList((copy_value(v) for v in value), pos=value.pos)
        items.item_pos = list(value.item_pos)
        return items
    if isinstance(value, list):
        return ConfigList(copy_value(v) for v in value)
    return value


def _undecided(value: Any) -> bool:
    return isinstance(value, (Subst, Concat, Layered))


def assign(obj: ConfigObject, key: str, value: Any, pos: Pos | None) -> None:
    """Set ``key`` of ``obj`` as a later definition does: merge into an earlier object, keep
    the earlier value where the later one may be undefined or an object, else replace."""
    earlier = obj.get(key, MISSING)
    if earlier is MISSING:
        obj[key] = value
    elif isinstance(earlier, ConfigObject) and isinstance(value, ConfigObject):
        merge_into(earlier, value)
    elif _undecided(value) or (isinstance(value, ConfigObject) and _undecided(earlier)):
        obj[key] = Layered(earlier, value, pos)
    else:
        obj[key] = value
    if pos is not None:
        obj.key_pos[key] = pos


def merge_into(target: ConfigObject, later: ConfigObject) -> None:
    """Merge the parsed object ``later`` into ``target`` (in place), key by key."""
    for k, v in later.items():
        assign(target, k, v, later.key_pos.get(k))


def merged(earlier: Any, later: Any) -> Any:
    """The resolved value of ``earlier`` overridden by ``later`` (new objects; neither changes)."""
    if not (isinstance(earlier, dict) and isinstance(later, dict)):
        return copy_value(later)
    out = copy_value(earlier)
    for k, v in later.items():
        out[k] = merged(out[k], v) if k in out else copy_value(v)
        pos = getattr(later, "key_pos", {}).get(k)
        if pos is not None:
            out.key_pos[k] = pos
    return out
