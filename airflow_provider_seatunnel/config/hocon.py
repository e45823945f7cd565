"""A HOCON reader for SeaTunnel's dialect of it, with positions.

SeaTunnel ships a patched Typesafe Config; three of its rules differ from plain HOCON
(and from pyhocon), and every job config relies on them:

* dotted keys are flat: ``row.num = 5`` is the key ``"row.num"``, not ``row { num = 5 }``;
* the blocks under ``source``, ``transform`` and ``sink`` are ordered *lists*: two
  ``FakeSource { }`` blocks are two sources, never merged;
* key order is kept.

This module parses that dialect (and JSON, which is a subset) into :class:`ConfigObject`
and :class:`ConfigList`, plain ``dict``/``list`` subclasses that remember the line and
column of every key and element, so that errors can point at them. Unquoted
substitutions (``${name}``, ``${?name}``) are kept as :class:`Subst` nodes by
:func:`parse` and replaced by :func:`resolve`. The tokens come from :mod:`.hocon_lexer`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .hocon_lexer import Pos, Token, tokenize

PLUGIN_SECTIONS = ("source", "transform", "sink")

_MISSING = object()


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
    """An unquoted ``${path}`` (or ``${?path}``) awaiting resolution."""

    path: str
    optional: bool
    pos: Pos


@dataclass(frozen=True)
class Concat:
    """Adjacent value pieces on one line (``"a "${x}" b"``), joined at resolution."""

    parts: tuple
    pos: Pos


_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")


# ---------------------------------------------------------------------------
# Parser


class _Parser:
    def __init__(self, text: str, file: str | None, json_syntax: bool):
        self.file = file
        self.json = json_syntax
        self.toks = tokenize(text, file)
        self.i = 0

    # -- helpers
    def peek(self, skip_newlines: bool = False) -> Token:
        if skip_newlines:
            while self.toks[self.i].kind == "NEWLINE":
                self.i += 1
        return self.toks[self.i]

    def next(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, message: str, pos: Pos, hint: str | None = None) -> ConfigError:
        return ConfigError.at(message, file=self.file, line=pos.line, col=pos.col, hint=hint)

    @staticmethod
    def describe(t: Token) -> str:
        if t.kind == "EOF":
            return "the end of the file"
        if t.kind == "NEWLINE":
            return "the end of the line"
        if t.kind in ("STRING", "UNQUOTED"):
            return repr(t.value)
        if t.kind == "SUBST":
            return "${" + t.value[0] + "}"
        return f"'{t.value}'"

    # -- grammar
    def parse_root(self) -> ConfigObject:
        t = self.peek(skip_newlines=True)
        if t.kind == "LBRACE":
            self.next()
            obj = self.parse_fields(t.pos, closing="RBRACE", root=True)
        elif t.kind == "LBRACK":
            raise self.error("a job config must be an object, not a list", t.pos,
                             "write env { }, source { }, transform { } and sink { } blocks")
        else:
            obj = self.parse_fields(Pos(1, 1), closing="EOF", root=True)
        t = self.peek(skip_newlines=True)
        if t.kind != "EOF":
            raise self.error(f"unexpected {self.describe(t)} after the end of the config", t.pos,
                             "check for an extra closing brace")
        return obj

    def parse_key(self) -> tuple[str, Pos]:
        t = self.peek()
        if t.kind not in ("STRING", "UNQUOTED"):
            raise self.error(f"expected a key, found {self.describe(t)}", t.pos,
                             "each entry reads 'key = value' or 'Name { ... }'")
        start = t.pos
        parts = [t.value]
        self.next()
        while self.peek().kind in ("STRING", "UNQUOTED"):
            t = self.next()
            parts.append(t.space_before + t.value)
        key = "".join(parts).strip() if len(parts) > 1 else parts[0]
        if key == "include" and self.peek().kind == "STRING":
            raise self.error("'include' is not supported in job configs", start,
                             "inline the included settings or use variables (-i)")
        return key, start

    def parse_fields(self, pos: Pos, closing: str, root: bool = False) -> ConfigObject:
        obj = ConfigObject(pos=pos)
        while True:
            t = self.peek(skip_newlines=True)
            if t.kind == closing:
                if closing != "EOF":
                    self.next()
                return obj
            if t.kind == "COMMA":
                self.next()
                continue
            if t.kind == "EOF":
                raise self.error("missing '}': the block opened here is never closed", pos,
                                 "add the closing brace")
            if t.kind in ("RBRACE", "RBRACK"):
                raise self.error(f"unexpected '{t.value}': there is no block to close here", t.pos,
                                 "remove it, or check the braces above")
            key, kpos = self.parse_key()
            sep = self.peek()
            if sep.kind in ("EQUALS", "COLON", "PLUSEQ"):
                self.next()
                append = sep.kind == "PLUSEQ"
                nxt = self.peek()
                if nxt.kind in ("NEWLINE", "EOF", "COMMA", "RBRACE"):
                    # HOCON allows a newline after '=' only before an object or list
                    nxt = self.peek(skip_newlines=True)
                    if nxt.kind not in ("LBRACE", "LBRACK"):
                        raise self.error(f"the key '{key}' has no value", kpos,
                                         f"write {key} = <value>")
            elif sep.kind == "LBRACE":
                append = False
            else:
                raise self.error(f"expected '=' or ':' after the key '{key}', found {self.describe(sep)}",
                                 sep.pos, 'quote keys or values that contain spaces or special characters')
            if root and key in PLUGIN_SECTIONS and self.peek().kind == "LBRACE" and not self.json:
                value: Any = self.parse_plugin_section(key)
            else:
                value = self.parse_value()
            if root and key in obj and _refers_to(value, key):
                value = _replace_self(value, key, obj[key])
            if append:
                prev = obj.get(key, _MISSING)
                value = Concat(((ConfigList() if prev is _MISSING else prev), _as_list(value)), kpos)
                obj[key] = value
            elif root and key in PLUGIN_SECTIONS and isinstance(obj.get(key), ConfigList) \
                    and isinstance(value, ConfigList):
                obj[key].extend(value)  # two `source { }` sections: keep every block of both
                obj[key].item_pos.extend(value.item_pos)
                continue
            elif key in obj and isinstance(obj[key], ConfigObject) and isinstance(value, ConfigObject):
                _merge_into(obj[key], value)
            else:
                obj[key] = value
            obj.key_pos[key] = kpos
            end = self.peek()
            after_block = self.toks[self.i - 1].kind == "RBRACE"
            if end.kind not in ("NEWLINE", "COMMA", closing, "EOF", "RBRACE") and not after_block:
                raise self.error(f"unexpected {self.describe(end)} after the value of '{key}'", end.pos,
                                 "put one entry per line, or separate entries with commas; "
                                 "quote values that contain spaces")

    def parse_plugin_section(self, section: str) -> ConfigList:
        """``source { A { } B { } }`` → an ordered list of blocks; duplicates stay separate."""
        open_tok = self.next()
        blocks = ConfigList(pos=open_tok.pos)
        while True:
            t = self.peek(skip_newlines=True)
            if t.kind == "RBRACE":
                self.next()
                return blocks
            if t.kind == "COMMA":
                self.next()
                continue
            if t.kind == "EOF":
                raise self.error(f"missing '}}': the {section} block opened here is never closed",
                                 open_tok.pos, "add the closing brace")
            name, npos = self.parse_key()
            if self.peek().kind in ("EQUALS", "COLON"):
                self.next()
            if self.peek().kind != "LBRACE":
                raise self.error(f"'{name}' in the {section} block must be a plugin block "
                                 f"'{name} {{ ... }}'", npos,
                                 "options belong inside a plugin's braces")
            block = self.parse_value()
            if isinstance(block, ConfigObject):
                block.setdefault("plugin_name", name)
                block.pos = npos
            blocks.append(block)
            blocks.item_pos.append(npos)

    def parse_value(self) -> Any:
        parts: list[tuple[Token, Any]] = []
        v: Any
        while True:
            t = self.peek()
            if t.kind == "LBRACE":
                self.next()
                v = self.parse_fields(t.pos, closing="RBRACE")
            elif t.kind == "LBRACK":
                self.next()
                v = self.parse_list(t.pos)
            elif t.kind in ("STRING", "UNQUOTED"):
                self.next()
                v = t.value
            elif t.kind == "SUBST":
                self.next()
                name, optional = t.value
                v = Subst(name, optional, t.pos)
            elif t.kind in ("COLON", "EQUALS") and parts:
                # unquoted text such as  yyyy-MM-dd HH:mm:ss  (lenient: keep it as text)
                self.next()
                v = t.value
            else:
                break
            parts.append((t, v))
            if isinstance(v, ConfigObject) and self.peek().kind not in ("LBRACE", "SUBST"):
                break  # a block ends its value (unless objects concatenate): `A { } B { }` are two entries
        if not parts:
            t = self.peek()
            raise self.error(f"expected a value, found {self.describe(t)}", t.pos)
        first_tok, first = parts[0]
        if len(parts) == 1:
            if first_tok.kind == "UNQUOTED" or (first_tok.kind in ("COLON", "EQUALS")):
                return _unquoted_scalar(first)
            return first
        # A concatenation. Whitespace between pieces is kept (HOCON), except around objects/lists.
        pieces: list[Any] = []
        for k, (tok, v) in enumerate(parts):
            if k and tok.space_before and not isinstance(v, (ConfigObject, ConfigList)) \
                    and not isinstance(pieces[-1], (ConfigObject, ConfigList)):
                pieces.append(tok.space_before)
            pieces.append(v)
        if all(isinstance(p, str) for p in pieces):
            return "".join(pieces)
        return Concat(tuple(pieces), first_tok.pos)

    def parse_list(self, pos: Pos) -> ConfigList:
        out = ConfigList(pos=pos)
        while True:
            t = self.peek(skip_newlines=True)
            if t.kind == "RBRACK":
                self.next()
                return out
            if t.kind == "COMMA":
                self.next()
                continue
            if t.kind == "EOF":
                raise self.error("missing ']': the list opened here is never closed", pos,
                                 "add the closing bracket")
            out.append(self.parse_value())
            out.item_pos.append(t.pos)
            end = self.peek()
            if end.kind not in ("NEWLINE", "COMMA", "RBRACK"):
                raise self.error(f"unexpected {self.describe(end)} in a list", end.pos,
                                 "separate list elements with commas")


def _refers_to(value: Any, key: str) -> bool:
    if isinstance(value, Subst):
        return value.path == key
    if isinstance(value, Concat):
        return any(_refers_to(p, key) for p in value.parts)
    if isinstance(value, (list, dict)):
        return any(_refers_to(v, key) for v in (value.values() if isinstance(value, dict) else value))
    return False


def _replace_self(value: Any, key: str, previous: Any) -> Any:
    """``key = ${key} ...`` means the earlier value of ``key`` (HOCON self-reference)."""
    if isinstance(value, Subst) and value.path == key:
        return previous
    if isinstance(value, Concat):
        return Concat(tuple(_replace_self(p, key, previous) for p in value.parts), value.pos)
    if isinstance(value, ConfigList):
        value[:] = [_replace_self(v, key, previous) for v in value]
    elif isinstance(value, ConfigObject):
        for k in list(value):
            value[k] = _replace_self(value[k], key, previous)
    return value


def _as_list(value: Any) -> Any:
    return value if isinstance(value, (ConfigList, Subst, Concat)) else ConfigList([value])


def _unquoted_scalar(text: str) -> Any:
    if text == "true":
        return True
    if text == "false":
        return False
    if text == "null":
        return None
    if _NUMBER.match(text):
        if "." in text or "e" in text or "E" in text:
            return float(text)
        return int(text)
    return text


def _merge_into(target: ConfigObject, other: ConfigObject) -> None:
    for k, v in other.items():
        if k in target and isinstance(target[k], ConfigObject) and isinstance(v, ConfigObject):
            _merge_into(target[k], v)
        else:
            target[k] = v
        if k in other.key_pos:
            target.key_pos[k] = other.key_pos[k]


def parse(text: str, file: str | None = None, json_syntax: bool = False) -> ConfigObject:
    """Parse a job config (HOCON in SeaTunnel's dialect, or JSON) without resolving it."""
    return _Parser(text, file, json_syntax).parse_root()


def parse_value_text(text: str) -> Any:
    """Parse one HOCON value, as ``-i name=value`` gives it (``[a,b]`` is a list, ``10`` an int)."""
    try:
        obj = _Parser(f"v = {text}\n" if text.strip() else 'v = ""', None, False).parse_root()
        value = obj.get("v", "")
    except ConfigError:
        return text
    if isinstance(value, (Subst, Concat)):
        return text
    return value


# ---------------------------------------------------------------------------
# Substitution

Lookup = Callable[[str], Any]


class _Resolver:
    def __init__(self, root: ConfigObject, fallback: Lookup, file: str | None,
                 keep_literal: Callable[[str], bool]):
        self.root = root
        self.fallback = fallback
        self.file = file
        self.keep_literal = keep_literal
        self.active: list[str] = []

    def lookup_config(self, path: str) -> Any:
        node: Any = self.root
        if path in node:
            return node[path]
        # nested spelling: a.b.c → a → b → c (also the '->' separator SeaTunnel uses)
        parts = re.split(r"\.|->", path)
        for part in parts:
            if not isinstance(node, dict) or part not in node:
                return _MISSING
            node = node[part]
        return node

    def subst(self, s: Subst) -> Any:
        if ":" in s.path:
            name = s.path.split(":", 1)[0]
            raise ConfigError.at(f"'${{{s.path}}}': a default value only works inside a quoted string",
                                 file=self.file, line=s.pos.line, col=s.pos.col,
                                 hint=f'write "${{{s.path}}}" in quotes, or pass -i {name}=VALUE')
        if s.path in self.active:
            cycle = " -> ".join([*self.active[self.active.index(s.path):], s.path])
            raise ConfigError.at(f"substitution cycle: {cycle}", file=self.file,
                                 line=s.pos.line, col=s.pos.col, hint="break the cycle")
        value = self.lookup_config(s.path)
        if value is not _MISSING:
            self.active.append(s.path)
            try:
                return self.value(value)
            finally:
                self.active.pop()
        value = self.fallback(s.path)
        if value is not _MISSING:
            return value
        if s.optional:
            return _MISSING
        if self.keep_literal(s.path):
            return "${" + s.path + "}"
        raise ConfigError.at(f"unresolved variable ${{{s.path}}}", file=self.file,
                             line=s.pos.line, col=s.pos.col,
                             hint=f"pass -i {s.path}=VALUE, set it in the environment or in the config")

    def value(self, v: Any) -> Any:
        if isinstance(v, Subst):
            return self.subst(v)
        if isinstance(v, Concat):
            return self.concat(v)
        if isinstance(v, ConfigObject):
            for k in list(v.keys()):
                r = self.value(v[k])
                if r is _MISSING:
                    del v[k]
                else:
                    v[k] = r
            return v
        if isinstance(v, ConfigList):
            kept = [(self.value(x), p) for x, p in zip(v, v.item_pos or [None] * len(v), strict=False)]
            kept = [(x, p) for x, p in kept if x is not _MISSING]
            v[:] = [x for x, _ in kept]
            v.item_pos = [p for _, p in kept]
            return v
        return v

    def concat(self, c: Concat) -> Any:
        values = [self.value(p) for p in c.parts]
        values = [x for x in values if x is not _MISSING]
        if not values:
            return _MISSING
        if all(isinstance(x, list) or (isinstance(x, str) and not x.strip()) for x in values) \
                and any(isinstance(x, list) for x in values):
            out = ConfigList(pos=c.pos)
            for x in values:
                if isinstance(x, list):
                    out.extend(x)
                    out.item_pos.extend(getattr(x, "item_pos", None) or [c.pos] * len(x))
            return out
        if all(isinstance(x, dict) or (isinstance(x, str) and not x.strip()) for x in values) \
                and any(isinstance(x, dict) for x in values):
            out_obj = ConfigObject(pos=c.pos)
            for x in values:
                if isinstance(x, dict):
                    if not isinstance(x, ConfigObject):
                        x = ConfigObject(x)
                    _merge_into(out_obj, x)
            return out_obj
        text = []
        for x in values:
            if isinstance(x, (dict, list)):
                raise ConfigError.at("cannot join a list or object with text in one value",
                                     file=self.file, line=c.pos.line, col=c.pos.col,
                                     hint="quote the whole value or split it into separate options")
            text.append(_scalar_text(x))
        return "".join(text)


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

    A ``${path}`` is looked up in the config itself first (flat key, then nested), then
    through ``fallback`` (which returns ``MISSING`` when it has nothing). Names for which
    ``keep_literal`` is true and that nothing resolves stay as the text ``${name}``.
    """
    return _Resolver(root, fallback, file, keep_literal).value(root)


MISSING = _MISSING


def to_plain(value: Any) -> Any:
    """Drop positions: nested ``dict``/``list`` copies of a parsed value (for JSON)."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value

