"""SeaTunnel's SQL job format (``.sql``), read into the shape :func:`hocon.parse` gives.

A ``/* config ... */`` block of raw HOCON holds the ``env``; statements end at a line ending in ``;``:

* ``CREATE TABLE t WITH ('connector' = 'X', 'type' = 'source' | 'sink', ...)`` defines a
  source (``plugin_output = t``) or a sink template;
* ``CREATE TABLE t2 AS SELECT ... FROM t`` adds a ``Sql`` transform ``t`` → ``t2``;
* ``INSERT INTO sink SELECT ... FROM t`` adds a ``Sql`` transform ``t`` → ``t__temp<N>`` and a
  copy of the sink reading it; ``INSERT INTO sink SELECT t`` makes the copy read ``t`` directly.

Every ``CREATE TABLE ... WITH`` is read before the other statements, unused sink definitions
are dropped, and blocks, keys and errors carry their real ``.sql`` lines. Nothing is resolved:
``${...}`` in the env or in raw ``{...}``/``[...]`` values stays as ``Subst``/``Concat`` nodes.
"""

from __future__ import annotations

import copy
import re
from bisect import bisect_right
from dataclasses import replace
from typing import Any

from . import hocon
from .errors import ConfigError
from .hocon import ConfigList, ConfigObject, Pos

_NAME = r'(?:`[^`\n]+`|"[^"\n]+"|[A-Za-z_][\w$]*)'
_IDENT = rf"{_NAME}(?:\.{_NAME})*"
_CREATE = re.compile(rf"\s*CREATE\s+TABLE\s+({_IDENT})\s*", re.I)
_INSERT = re.compile(rf"\s*INSERT\s+INTO\s+({_IDENT})\s*", re.I)
_WITH = re.compile(r"WITH\s*\(", re.I)
_AS_SELECT = re.compile(r"AS\s+(?=SELECT\b)", re.I)
_SELECT = re.compile(r"SELECT\b", re.I)
_SELECT_ONE = re.compile(rf"SELECT\s+({_IDENT})\s*\Z", re.I)
_AFTER_FROM = re.compile(rf"\s*({_IDENT})", re.I)
_QUOTED = r"'(?:[^']|'')*'"
_OPTION = re.compile(rf"({_QUOTED}|[^\s=,)']+)\s*=\s*({_QUOTED}|[^\s,)']+)\s*(?=[,)])")
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|`[^`]*`|[A-Za-z_][\w$]*|\S")
_SET_OPS = {"UNION", "INTERSECT", "EXCEPT", "MINUS"}
_OUTPUT_KEYS = {"connector", "type", "plugin_output", "result_table_name"}  # never copied to a source
_SINK_DROPPED = _OUTPUT_KEYS | {"plugin_input", "source_table_name"}


class _Stmt:
    """One statement: its lines joined by newlines (``;`` dropped), and the file line of each."""

    def __init__(self, pieces: list[tuple[int, str]]):
        self.text = "\n".join(p for _, p in pieces)
        self.lines = [n for n, _ in pieces]
        self.starts = [0]
        for _, p in pieces[:-1]:
            self.starts.append(self.starts[-1] + len(p) + 1)

    def pos(self, offset: int) -> Pos:
        k = max(bisect_right(self.starts, offset) - 1, 0)
        return Pos(self.lines[k], offset - self.starts[k] + 1)

    @property
    def first(self) -> Pos:
        return self.pos(len(self.text) - len(self.text.lstrip()))

    def brief(self) -> str:
        text = " ".join(self.text.split())
        return text if len(text) <= 80 else text[:77] + "..."


def _err(message: str, file: str | None, pos: Pos | None, hint: str, key: str | None = None) -> ConfigError:
    return ConfigError.at(message, file=file, line=pos.line if pos else None,
                          col=pos.col if pos else None, key=key, hint=hint)


def _scan(text: str, file: str | None) -> tuple[list[_Stmt], str, Pos | None]:
    """Split the file into statements; return them, the env HOCON (at its real lines) and its Pos."""
    lines = re.split(r"\r?\n", text)
    env_lines = [""] * len(lines)
    env_pos: Pos | None = None
    stmts: list[_Stmt] = []
    pieces: list[tuple[int, str]] = []
    quoted = False
    block: tuple[str, int] | None = None  # ("config" | "comment", line it opened on)
    for no, raw in enumerate(lines, 1):
        s = raw.strip()
        if block:
            if (block[0] == "config" and s == "*/") or (block[0] == "comment" and s.endswith("*/")):
                block = None
            elif block[0] == "config":
                env_lines[no - 1] = raw
            continue
        if not quoted:
            if not s or s.startswith("--"):
                continue
            if s == "/* config":
                block, env_pos = ("config", no), env_pos or Pos(no, raw.index("/*") + 1)
                continue
            if s.startswith("/*"):
                if not (len(s) >= 4 and s.endswith("*/")):
                    block = ("comment", no)
                continue
        end = False
        for i, c in enumerate(raw):
            if c == "'":
                quoted = not quoted
            elif quoted:
                continue
            elif c.isspace() and raw.startswith("--", i + 1):
                raw = raw[:i]
                break
            elif c == ";":
                rest = raw[i + 1:].strip()
                if rest and not rest.startswith("--"):
                    raise _err("a ';' in the middle of a statement", file, Pos(no, i + 1),
                               "put each statement on its own lines and end it with ';' at a line end")
                raw, end = raw[:i], True
                break
        pieces.append((no, raw))
        if end:
            stmts.append(_Stmt(pieces))
            pieces = []
    if block:
        what = "/* config" if block[0] == "config" else "comment"
        raise _err(f"the {what} block opened here is never closed", file, Pos(block[1], 1),
                   "end it with a line holding only */")
    if pieces and "".join(p for _, p in pieces).strip():
        problem = "a quoted string is never closed" if quoted else "the last statement does not end with ';'"
        raise _err(problem, file, Pos(pieces[0][0], 1), "close every '...' and end each statement with ';'")
    return stmts, "\n".join(env_lines), env_pos


def _unquote(name: str) -> str:
    return name[1:-1] if len(name) >= 2 and name[0] in '`"' and name[-1] == name[0] else name


class _Builder:
    def __init__(self, file: str | None):
        self.file = file
        self.kinds: dict[str, str] = {}  # table name -> "source" | "sink" | "transform"
        self.sink_defs: dict[str, ConfigObject] = {}
        self.sources: list[ConfigObject] = []
        self.transforms: list[ConfigObject] = []
        self.sinks: list[ConfigObject] = []
        self.temp_index = 1

    def error(self, message: str, pos: Pos | None, hint: str, key: str | None = None) -> ConfigError:
        return _err(message, self.file, pos, hint, key)

    # -- CREATE TABLE t WITH (...)
    def create_with(self, st: _Stmt) -> bool:
        m = _CREATE.match(st.text)
        if not m:
            return False
        w = _WITH.match(st.text, m.end())
        if not w:
            return False
        name, name_pos = _unquote(m.group(1)), st.pos(m.start(1))
        opts, end = self.options(st, w.end())
        if st.text[end:].strip():
            raise self.error(f"Unsupported SQL syntax: {st.brief()}", st.pos(end),
                             "nothing may follow the closing ')' of WITH (...)")
        lower = {k.lower(): k for k in opts}
        kind_value, kind_pos = opts.get(lower.get("type", ""), (None, st.first))
        kind = kind_value.lower() if isinstance(kind_value, str) else None
        if kind not in ("source", "sink"):
            found = "no 'type' option" if kind_value is None else f"the type {kind_value!r}"
            raise self.error(f"CREATE TABLE {name} has {found}", kind_pos,
                             "set 'type' = 'source' or 'type' = 'sink'", key="type")
        connector, connector_pos = opts.get(lower.get("connector", ""), (None, st.first))
        if not isinstance(connector, str) or not connector.strip():
            raise self.error(f"CREATE TABLE {name} has no 'connector' option", connector_pos,
                             "add 'connector' = '<plugin name>', e.g. 'connector' = 'FakeSource'",
                             key="connector")
        self.add_table(name, kind, name_pos)
        block = ConfigObject(pos=st.first)
        block["plugin_name"], block.key_pos["plugin_name"] = connector, connector_pos
        dropped = _SINK_DROPPED if kind == "sink" else _OUTPUT_KEYS
        for key, (value, pos) in opts.items():
            if key.lower() not in dropped:
                block[key], block.key_pos[key] = value, pos
        if kind == "source":
            block["plugin_output"], block.key_pos["plugin_output"] = name, name_pos
            self.sources.append(block)
        else:
            self.sink_defs[name] = block
        return True

    def options(self, st: _Stmt, i: int) -> tuple[dict[str, tuple[Any, Pos]], int]:
        """``'k' = 'v', ...)`` from offset ``i`` → ({key: (value, key pos)}, offset after ')')."""
        text, opts = st.text, dict[str, tuple[Any, Pos]]()
        while True:
            while i < len(text) and (text[i].isspace() or text[i] == ","):
                i += 1
            if text.startswith(")", i):
                return opts, i + 1
            m = _OPTION.match(text, i)
            if not m:
                where = "WITH ( is never closed" if i >= len(text) else "a malformed option"
                raise self.error(f"{where} in CREATE TABLE", st.pos(min(i, len(text) - 1)),
                                 "write 'key' = 'value' pairs separated by commas, close every quote "
                                 "(write '' for a quote inside a value) and end the list with ')'")
            key, value = (g[1:-1].replace("''", "'") if g[0] == "'" else g for g in m.groups())
            stripped = value.strip()
            if stripped[:1] + stripped[-1:] in ("{}", "[]"):
                at = m.start(2) + (m.group(2)[:1] == "'") + len(value) - len(value.lstrip())
                value = self.raw_hocon(stripped, st.pos(at), key)
            opts[key] = (value, st.pos(m.start(1)))
            i = m.end()

    def raw_hocon(self, raw: str, pos: Pos, key: str) -> Any:
        src = "\n" * (pos.line - 1) + " " * max(pos.col - 5, 0) + "v = " + raw
        try:
            return hocon.parse(src, self.file)["v"]
        except ConfigError as e:
            hint = "a value that starts with { or [ is read as HOCON; fix it or quote the text differently"
            raise ConfigError([replace(p, key=key, hint=p.hint or hint) for p in e.problems]) from None

    def add_table(self, name: str, kind: str, pos: Pos) -> None:
        if name in self.kinds:
            raise self.error(f"Table name duplicate: {name}", pos, "give every table its own name")
        self.kinds[name] = kind

    # -- CREATE TABLE t2 AS SELECT ..., INSERT INTO sink SELECT ...
    def statement(self, st: _Stmt) -> None:
        m = _CREATE.match(st.text)
        if m and (a := _AS_SELECT.match(st.text, m.end())):
            found = self.from_table(st, a.end())
            if not found:
                raise self.error(f"Unsupported SQL syntax: {st.brief()}", st.pos(a.end()),
                                 "the SELECT needs FROM <table>")
            name = _unquote(m.group(1))
            self.add_table(name, "transform", st.pos(m.start(1)))
            self.sql_transform(st, a.end(), *found, name)
            return
        m = _INSERT.match(st.text)
        if not m:
            raise self.error(f"Unsupported SQL syntax: {st.brief()}", st.first,
                             "write CREATE TABLE t WITH (...), CREATE TABLE t2 AS SELECT ... FROM t "
                             "or INSERT INTO sink SELECT ... FROM t, each ending with ';'")
        target, i = _unquote(m.group(1)), m.end()
        if st.text.startswith("(", i):
            raise self.error("Insert sql must not have columns", st.pos(i),
                             f"write INSERT INTO {target} SELECT ... without a column list")
        if not _SELECT.match(st.text, i):
            raise self.error(f"Unsupported SQL syntax: {st.brief()}", st.pos(i),
                             f"write INSERT INTO {target} SELECT ... FROM <table>")
        found = self.from_table(st, i)
        if found:
            output = f"{found[0]}__temp{self.temp_index}"
        elif direct := _SELECT_ONE.match(st.text, i):  # INSERT INTO sink SELECT table
            output = _unquote(direct.group(1))
            self.check_input(output, st.pos(direct.start(1)))
        else:
            raise self.error(f"Source table must be specified in SQL: {st.brief()}", st.pos(i),
                             "add FROM <table>, or write SELECT <table> to copy a table as is")
        if target not in self.sink_defs:
            raise self.error(f"The sink table[{target}] is not found", st.pos(m.start(1)),
                             f"define it first: CREATE TABLE {target} WITH ('type' = 'sink', ...)")
        if found:
            self.temp_index += 1
            self.sql_transform(st, i, *found, output)
        sink = copy.deepcopy(self.sink_defs[target])
        sink.pos = st.first
        sink["plugin_input"], sink.key_pos["plugin_input"] = output, st.first
        self.sinks.append(sink)

    def from_table(self, st: _Stmt, i: int) -> tuple[str, Pos] | None:
        """The first table after a top-level FROM in the SELECT starting at ``i`` (checked to exist)."""
        depth, found = 0, None
        for t in _TOKEN.finditer(st.text, i):
            tok = t.group()
            depth += {"(": 1, ")": -1}.get(tok, 0)
            if depth == 0 and tok.upper() in _SET_OPS:
                raise self.error(f"Unsupported SQL syntax: {tok.upper()} in {st.brief()}", st.pos(t.start()),
                                 "use one plain SELECT per statement")
            if depth == 0 and tok.upper() == "FROM" and not found:
                m = _AFTER_FROM.match(st.text, t.end())
                if not m:
                    raise self.error(f"Unsupported SQL syntax: {st.brief()}", st.pos(t.end()),
                                     "FROM must name a table; sub-queries are not supported")
                found = _unquote(m.group(1)), st.pos(m.start(1))
        if found:
            self.check_input(*found)
        return found

    def check_input(self, name: str, pos: Pos) -> None:
        if self.kinds.get(name) not in ("source", "transform"):
            why = " (it is a sink)" if name in self.kinds else ""
            raise self.error(f"The source table[{name}] is not found{why}", pos,
                             "read from a source table or a CREATE TABLE ... AS SELECT table")

    def sql_transform(self, st: _Stmt, i: int, source: str, source_pos: Pos, output: str) -> None:
        block = ConfigObject(pos=st.first)
        query = " ".join(line.strip() for line in st.text[i:].split("\n")).strip()
        for key, value in (("plugin_name", "Sql"), ("plugin_input", source),
                           ("plugin_output", output), ("query", query)):
            block[key] = value
            block.key_pos[key] = {"query": st.pos(i), "plugin_input": source_pos}.get(key, st.first)
        self.transforms.append(block)


def parse_sql_job(text: str, file: str | None = None) -> ConfigObject:
    """Read a SeaTunnel SQL job into ``{env, source, transform, sink}`` like :func:`hocon.parse`.

    Raises :class:`ConfigError` (with file, line and a hint) for anything SeaTunnel rejects.
    """
    stmts, env_text, env_pos = _scan(text, file)
    root = ConfigObject(pos=Pos(1, 1))
    env: Any = ConfigObject(pos=env_pos)
    if env_pos is not None:
        head = hocon.parse(env_text, file)
        for key in hocon.PLUGIN_SECTIONS:
            if key in head:
                raise _err(f"'{key}' is not allowed in the /* config */ block", file, head.key_pos.get(key),
                           "define plugins with CREATE TABLE statements; the block holds env { }", key=key)
        env = head.get("env", env)
        if not isinstance(env, ConfigObject):
            raise _err("env must be an object", file, head.key_pos.get("env"), "write env { key = value }")
        root.key_pos["env"] = head.key_pos.get("env", env_pos)
    root["env"] = env
    b = _Builder(file)
    rest = [st for st in stmts if not b.create_with(st)]
    for st in rest:
        b.statement(st)
    if not b.sources:
        raise _err("The SQL config must contain at least one source table", file, Pos(1, 1),
                   "add CREATE TABLE <name> WITH ('connector' = '...', 'type' = 'source', ...);")
    if not b.sinks:
        raise _err("The SQL config must contain `INSERT INTO ... SELECT ...` syntax", file,
                   Pos(text.rstrip().count("\n") + 1, 1),
                   "add INSERT INTO <sink table> SELECT ... FROM <table>;")
    for section, blocks in (("source", b.sources), ("transform", b.transforms), ("sink", b.sinks)):
        items = ConfigList(blocks, pos=blocks[0].pos if blocks else None)
        items.item_pos = [blk.pos for blk in blocks]
        root[section] = items
        if items.pos:
            root.key_pos[section] = items.pos
    return root
