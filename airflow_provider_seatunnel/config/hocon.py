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

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import reads
from .errors import ConfigError, Problem
from .hocon_lexer import Pos, Token, tokenize
from .hocon_nodes import (
    MISSING,
    Concat,
    ConfigList,
    ConfigObject,
    Layered,
    Subst,
    assign,
    copy_value,
    merge_into,
)
from .hocon_resolve import Lookup, resolve
from .limits import DEFAULT_LIMITS, Limits, include_roots

__all__ = ["MISSING", "PLUGIN_SECTIONS", "Concat", "ConfigList", "ConfigObject", "Layered", "Lookup", "Pos",
           "Subst", "parse", "parse_value_text", "resolve", "to_plain"]

PLUGIN_SECTIONS = ("source", "transform", "sink")

_MISSING = MISSING
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
_INCLUDE = re.compile(r'(?:(required)\()?(?:(file|classpath|url)\()?"((?:[^"\\]|\\.)*)"(\)*)\Z')


@dataclass
class _Reading:
    """What one read of a config (its file and every include) shares: its bounds, where includes may
    read from (``roots``; None: from the config's directory tree only) and the includes read so far."""

    limits: Limits = DEFAULT_LIMITS
    roots: tuple[Path, ...] | None = None
    includes: int = 0
    include_dirs: tuple[str, ...] = ()  # besides the config's folder and the include_paths setting


# ---------------------------------------------------------------------------
# Parser

_VALUE_END = ("NEWLINE", "COMMA", "RBRACE", "RBRACK", "EOF")


class _Parser:
    def __init__(self, text: str, file: str | None, json_syntax: bool,
                 warnings: list[Problem] | None = None, including: tuple[str, ...] = (),
                 reading: _Reading | None = None):
        self.file = file
        self.json = json_syntax
        self.reading = reading if reading is not None else _Reading()
        if len(text) > self.reading.limits.max_file_bytes:
            raise ConfigError.at(f"the config is larger than {self.reading.limits.max_file_bytes} characters",
                                 file=file, line=1, hint="split it, or raise Limits.max_file_bytes")
        self.toks = tokenize(text, file)
        self.i = 0
        self.warnings = warnings if warnings is not None else []
        self.including = including  # the files whose includes led here (cycle check)
        self.substs = 0  # substitutions read so far
        self.depth = 0  # objects and lists open around the current token

    def enter(self, pos: Pos, path: tuple[str, ...]) -> None:
        """One more object or list opens at ``pos``: a located error past ``max_depth`` levels."""
        self.depth += 1
        if self.depth > self.reading.limits.max_depth:
            raise ConfigError.at(f"objects and lists nest deeper than {self.reading.limits.max_depth} levels",
                                 file=self.file, line=pos.line, col=pos.col, key=".".join(path) or None,
                                 hint="flatten the value; no job config needs this depth")

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

    def skip_newlines_before(self, kinds: tuple[str, ...]) -> Token:
        """The next token, past newlines when what follows them is one of ``kinds`` (a key
        and its ``=`` or ``{`` may stand on separate lines)."""
        j = self.i
        while self.toks[j].kind == "NEWLINE":
            j += 1
        if self.toks[j].kind in kinds:
            self.i = j
        return self.toks[self.i]

    def error(self, message: str, pos: Pos, hint: str | None = None) -> ConfigError:
        """A located error on one line: text quoted from the config (a key, a value) shows its line
        breaks as ``\\n``, so every line of the output starts with the error's location."""
        one_line = (message.replace("\r", "\\r").replace("\n", "\\n"),
                    hint.replace("\r", "\\r").replace("\n", "\\n") if hint is not None else None)
        return ConfigError.at(one_line[0], file=self.file, line=pos.line, col=pos.col, hint=one_line[1])

    @staticmethod
    def show_key(key: str, limit: int = 60) -> str:
        """A key as an error message quotes it: cut to ``limit`` characters."""
        return key if len(key) <= limit else key[:limit] + "..."

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
            obj = self.parse_fields(Pos(1, 1, self.file), closing="EOF", root=True)
        t = self.peek(skip_newlines=True)
        if t.kind != "EOF":
            raise self.error(f"unexpected {self.describe(t)} after the end of the config", t.pos,
                             "check for an extra closing brace")
        return obj

    def at_include(self) -> bool:
        t, nxt = self.toks[self.i], self.toks[self.i + 1]
        return (not self.json and t.kind == "UNQUOTED" and t.value == "include" and bool(nxt.space_before)
                and (nxt.kind == "STRING" or (nxt.kind == "UNQUOTED"
                                              and re.match(r"(required|file|classpath|url)\(", nxt.value) is not None)))

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
        return key, start

    def parse_fields(self, pos: Pos, closing: str, root: bool = False, path: tuple[str, ...] = (),
                     earlier: ConfigObject | None = None) -> ConfigObject:
        """The entries of an object up to ``closing``. ``path``: the object's place from the
        root; ``earlier``: the object this one will merge into (what self-references see)."""
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
            if self.at_include():
                included = self.parse_include(path)
                if root:  # plugin sections of an included file add their blocks, as a second section does
                    for section in PLUGIN_SECTIONS:
                        if isinstance(obj.get(section), ConfigList) and isinstance(included.get(section), ConfigList):
                            obj[section].extend(included[section])
                            obj[section].item_pos.extend(included[section].item_pos)
                            del included[section]
                merge_into(obj, included)
            else:
                self.parse_field(obj, root, path, earlier)
            end = self.peek()
            after_block = self.toks[self.i - 1].kind == "RBRACE"
            if end.kind not in ("NEWLINE", "COMMA", closing, "EOF", "RBRACE") and not after_block:
                raise self.error(f"unexpected {self.describe(end)} after the value of "
                                 f"'{list(obj)[-1] if obj else 'include'}'", end.pos,
                                 "put one entry per line, or separate entries with commas; "
                                 "quote values that contain spaces")

    def parse_field(self, obj: ConfigObject, root: bool, path: tuple[str, ...],
                    earlier: ConfigObject | None) -> None:
        """One ``key = value`` (``key { }``, ``key += value``) of ``obj``, merged as HOCON merges
        a key set twice; ``${key}`` in its value means the key's earlier value."""
        key, kpos = self.parse_key()
        sep = self.skip_newlines_before(("EQUALS", "COLON", "PLUSEQ", "LBRACE"))
        append = sep.kind == "PLUSEQ"
        if sep.kind in ("EQUALS", "COLON", "PLUSEQ"):
            self.next()
            if self.peek(skip_newlines=True).kind in _VALUE_END:
                raise self.error(f"the key '{self.show_key(key)}' has no value", kpos,
                                 f"write {self.show_key(key)} = <value>")
        elif sep.kind != "LBRACE":
            raise self.error(f"expected '=' or ':' after the key '{self.show_key(key)}', "
                             f"found {self.describe(sep)}",
                             sep.pos, 'quote keys or values that contain spaces or special characters')
        before = obj[key] if key in obj else (earlier.get(key, MISSING) if earlier is not None else MISSING)
        if root and key in PLUGIN_SECTIONS and self.peek().kind == "LBRACE" and not self.json:
            blocks = self.parse_plugin_section(key)
            if isinstance(obj.get(key), ConfigList):  # two `source { }` sections: every block of both
                obj[key].extend(blocks)
                obj[key].item_pos.extend(blocks.item_pos)
            else:
                obj[key] = blocks
                obj.key_pos[key] = kpos
            return
        substs = self.substs
        value = self.parse_value((*path, key), before if isinstance(before, ConfigObject) else None)
        if self.substs != substs:  # only a value with a substitution can refer to itself
            value = _replace_self(value, _spellings((*path, key)), before)
        if append:  # a chain of appends stays one flat Concat (not one nested in the next)
            earlier_parts = before.parts if isinstance(before, Concat) else \
                (ConfigList() if before is MISSING else before,)
            value = Concat((*earlier_parts, _as_list(value)), kpos)
            obj[key] = value
            obj.key_pos[key] = kpos
        else:
            assign(obj, key, value, kpos)

    def parse_include(self, path: tuple[str, ...]) -> ConfigObject:
        """``include "f"``, ``include file("f")``, ``include required(file("f"))``: the named
        file's entries, merged here; its path is relative to the including file. A missing
        file is skipped (with a warning) unless ``required``."""
        start = self.next().pos
        raw, last = "", self.toks[self.i]
        while self.peek().kind in ("STRING", "UNQUOTED"):
            last = self.next()
            raw += '"' + last.value.replace('"', '\\"') + '"' if last.kind == "STRING" else last.value.strip()
        m = _INCLUDE.match(raw)
        if not m or m.group(4).count(")") != bool(m.group(1)) + bool(m.group(2)):
            raise self.error(f"cannot read the include {raw!r}", start,
                             'write include "file.conf", include file("file.conf") or include required(...)')
        required, kind, name = bool(m.group(1)), m.group(2) or "file", m.group(3).replace('\\"', '"')
        if kind != "file":
            raise self.error(f"include {kind}(...) is not supported here", start,
                             'copy the file next to the job config and write include file("...")')
        return self.read_include(name, required, start, path)

    def read_include(self, name: str, required: bool, pos: Pos, path: tuple[str, ...]) -> ConfigObject:
        """The entries of the included file ``name`` (relative to the including file). It must be a
        regular file under one of the reading's include roots (symlinks followed); at most
        ``max_includes`` includes are read in all, nested at most ``max_include_depth`` deep."""
        reading, limits = self.reading, self.reading.limits
        reading.includes += 1
        if reading.includes > limits.max_includes:
            raise self.error(f"more than {limits.max_includes} includes", pos,
                             "merge the included files, or raise Limits.max_includes")
        if len(self.including) >= limits.max_include_depth:
            raise self.error(f"includes nest deeper than {limits.max_include_depth} files", pos,
                             "include the files from one place, or raise Limits.max_include_depth")
        base = Path(self.file).parent if self.file else Path(os.getcwd())
        target = base / name
        candidates = [target] if target.suffix or not target.name else \
            [target, target.with_suffix(".conf"), target.with_suffix(".json")]
        found = next((c for c in candidates if c.is_file()), None) or next((c for c in candidates if c.exists()), None)
        for c in candidates[:candidates.index(found) if found is not None else None]:
            reads.file_read(str(c.absolute()), None)  # a file that appears there later changes the config
        if found is None:
            if required:
                raise self.error(f"included file not found: {target}", pos,
                                 "the path is relative to the file that includes it")
            self.warnings.append(Problem(f"included file not found, skipped: {target}", file=self.file,
                                         line=pos.line, col=pos.col, severity="warning",
                                         hint='write include required("...") to make it an error'))
            return ConfigObject(pos=pos)
        resolved = found.resolve()
        if reading.roots is None:  # the first include is the top file's (nested ones come later)
            reading.roots = include_roots(self.file, reading.include_dirs)
        if not any(resolved.is_relative_to(root) for root in reading.roots):
            raise self.error(f"include {name!r} leads out of the folders includes may read ({resolved})", pos,
                             "include files under the config's folder, or add their folder to the "
                             "[seatunnel] include_paths setting")
        if str(resolved) in self.including:
            raise self.error(f"include cycle: {found} includes itself", pos, "remove one of the includes")
        data, text = self.read_included_file(resolved, pos)
        reads.file_read(str(found.absolute()), data)
        sub = _Parser(text, str(found), found.suffix.lower() == ".json", self.warnings,
                      (*self.including, str(resolved)), reading)
        sub.depth = self.depth
        t = sub.peek(skip_newlines=True)
        if t.kind == "LBRACE":
            sub.next()
            included = sub.parse_fields(t.pos, closing="RBRACE", root=not path, path=path)
        else:
            included = sub.parse_fields(Pos(1, 1, str(found)), closing="EOF", root=not path, path=path)
        if sub.peek(skip_newlines=True).kind != "EOF":
            t = sub.peek()
            raise sub.error(f"unexpected {sub.describe(t)} after the end of the included file", t.pos)
        return included

    def read_included_file(self, path: Path, pos: Pos) -> tuple[bytes, str]:
        """The bytes and text (newlines as ``read_text`` reads them) of the included regular file
        ``path``, opened without following a symlink put in its place since it was resolved and without
        blocking on a FIFO; a located error for a directory, a device, a FIFO, an unreadable or too
        large file."""
        limit = self.reading.limits.max_file_bytes
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise self.error(f"cannot read the included file {path}: {e.strerror}", pos) from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise self.error(f"the included {path} is {kind}", pos, "include a .conf or .json file")
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise self.error(f"the included file {path} is larger than {limit} bytes", pos,
                             "split it, or raise Limits.max_file_bytes")
        try:
            return data, data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as e:
            raise self.error(f"cannot read the included file {path}: {e}", pos) from None

    def parse_plugin_section(self, section: str) -> ConfigList:
        """``source { A { } B { } }`` → an ordered list of blocks; duplicates stay separate."""
        open_tok = self.next()
        blocks = ConfigList(pos=open_tok.pos)
        self.enter(open_tok.pos, (section,))
        while True:
            t = self.peek(skip_newlines=True)
            if t.kind == "RBRACE":
                self.next()
                self.depth -= 1
                return blocks
            if t.kind == "COMMA":
                self.next()
                continue
            if t.kind == "EOF":
                raise self.error(f"missing '}}': the {section} block opened here is never closed",
                                 open_tok.pos, "add the closing brace")
            if self.at_include():
                raise self.error(f"an include directly in the {section} block is not read (SeaTunnel "
                                 "ignores it too)", t.pos, "put the include inside a plugin's braces")
            name, npos = self.parse_key()
            if self.skip_newlines_before(("EQUALS", "COLON", "LBRACE")).kind in ("EQUALS", "COLON"):
                self.next()
                self.peek(skip_newlines=True)
            if self.peek().kind != "LBRACE":
                raise self.error(f"'{name}' in the {section} block must be a plugin block "
                                 f"'{name} {{ ... }}'", npos,
                                 "options belong inside a plugin's braces")
            block = self.parse_value(())
            if isinstance(block, ConfigObject):
                block.setdefault("plugin_name", name)
                block.pos = npos
            blocks.append(block)
            blocks.item_pos.append(npos)

    def parse_value(self, path: tuple[str, ...], earlier: ConfigObject | None = None,
                    located: tuple[str, ...] | None = None) -> Any:
        """One value (a concatenation of pieces); ``located``: the value's place for error messages,
        where it differs from ``path`` (a list element)."""
        where = path if located is None else located
        parts: list[tuple[Token, Any]] = []
        v: Any
        while True:
            t = self.peek()
            if t.kind == "LBRACE":
                self.next()
                self.enter(t.pos, where)
                v = self.parse_fields(t.pos, closing="RBRACE", path=path, earlier=None if parts else earlier)
                self.depth -= 1
            elif t.kind == "LBRACK":
                self.next()
                self.enter(t.pos, where)
                v = self.parse_list(t.pos, where)
                self.depth -= 1
            elif t.kind in ("STRING", "UNQUOTED"):
                self.next()
                v = t.value
            elif t.kind == "SUBST":
                self.next()
                name, optional = t.value
                v = Subst(name, optional, t.pos)
                self.substs += 1
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

    def parse_list(self, pos: Pos, path: tuple[str, ...] = ()) -> ConfigList:
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
            # an element's own path (``a.[0]``): its object's keys are not root keys, so ``${x}`` in
            # ``a = [{x = ${x}}]`` names the root's ``x``, not the key itself
            out.append(self.parse_value((*path, f"[{len(out)}]")))
            out.item_pos.append(t.pos)
            end = self.peek()
            if end.kind not in ("NEWLINE", "COMMA", "RBRACK"):
                raise self.error(f"unexpected {self.describe(end)} in a list", end.pos,
                                 "separate list elements with commas")


def _spellings(path: tuple[str, ...]) -> frozenset[str]:
    """How a substitution names the field at ``path`` (``a.b``, SeaTunnel's ``a->b``)."""
    return frozenset({".".join(path), "->".join(path)})


def _replace_self(value: Any, names: frozenset[str], earlier: Any) -> Any:
    """A field's value with its self-references (``${key}`` inside the value of ``key``)
    replaced by a copy of the key's earlier value; without one, only the environment can
    answer them (HOCON's self-referential fields)."""
    if isinstance(value, Subst) and value.path in names:
        if earlier is MISSING:
            return Subst(value.path, value.optional, value.pos, external=True)
        return copy_value(earlier)
    if isinstance(value, Concat):
        return Concat(tuple(_replace_self(p, names, earlier) for p in value.parts), value.pos)
    if isinstance(value, Layered):
        return Layered(_replace_self(value.earlier, names, earlier), _replace_self(value.later, names, earlier),
                       value.pos)
    if isinstance(value, ConfigList):
        value[:] = [_replace_self(v, names, earlier) for v in value]
    elif isinstance(value, ConfigObject):
        for k in list(value):
            value[k] = _replace_self(value[k], names, earlier)
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


def parse(text: str, file: str | None = None, json_syntax: bool = False,
          warnings: list[Problem] | None = None, *, limits: Limits = DEFAULT_LIMITS,
          include_dirs: Iterable[str | os.PathLike] = ()) -> ConfigObject:
    """Parse a job config (HOCON in SeaTunnel's dialect, or JSON) without resolving it.
    Warnings (an optional include that names no file) are appended to ``warnings``. Includes read
    only from the config's folder tree, ``include_dirs`` and the include_paths setting
    (:func:`.limits.include_roots`), within ``limits``."""
    reading = _Reading(limits, include_dirs=tuple(os.fspath(d) for d in include_dirs))
    return _Parser(text, file, json_syntax, warnings, reading=reading).parse_root()


def parse_value_text(text: str) -> Any:
    """Parse one HOCON value, as ``-i name=value`` gives it (``[a,b]`` is a list, ``10`` an int). A value
    that parses to a string is never cut at ``//`` or ``#``: in a ``-i`` value they are text, not a comment
    (``url=jdbc:postgresql://host/db``), as SeaTunnel reads them."""
    if not text.lstrip().startswith(('"', "[", "{")) and ("//" in text or "#" in text):
        return text
    try:
        obj = _Parser(f"v = {text}\n" if text.strip() else 'v = ""', None, False).parse_root()
        value = obj.get("v", "")
    except ConfigError:
        return text
    if isinstance(value, (Subst, Concat, Layered)):
        return text
    return value


def to_plain(value: Any) -> Any:
    """Drop positions: nested ``dict``/``list`` copies of a parsed value (for JSON)."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
