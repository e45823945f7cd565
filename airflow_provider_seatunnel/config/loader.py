"""Load a job config (HOCON, JSON or SQL) into a :class:`JobConfig`.

The result is plain, ordered data: ``env`` and one :class:`PluginConfig` per plugin
block, each remembering its section, position, name and the line of every key.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import hocon
from .errors import NOT_RUNNABLE, ConfigError, Problem
from .limits import DEFAULT_LIMITS, Limits
from .options import lookup
from .variables import backfill, is_connector_placeholder, normalize_variables

FORMATS = ("hocon", "json", "sql")


@dataclass(frozen=True)
class PluginConfig:
    """One plugin block: ``source[1] FakeSource { ... }``."""

    section: str  # source | transform | sink
    index: int  # 0-based position in its section
    name: str  # plugin_name as written
    options: Mapping[str, Any]
    line: int | None = None
    col: int | None = None
    key_lines: Mapping[str, int] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.section}[{self.index}]"

    @property
    def label(self) -> str:
        return f"{self.ref} {self.name}"

    def get(self, key: str, default: Any = None) -> Any:
        """An option by SeaTunnel's lookup: flat key first (``row.num``), then nested."""
        value = lookup(self.options, key)
        return default if value is hocon.MISSING else value

    def has(self, key: str) -> bool:
        return lookup(self.options, key) is not hocon.MISSING

    def line_of(self, key: str | None) -> int | None:
        if key is not None:
            if key in self.key_lines:
                return self.key_lines[key]
            head = key.split(".", 1)[0]
            if head in self.key_lines:
                return self.key_lines[head]
        return self.line


@dataclass(frozen=True)
class JobConfig:
    """A loaded, variable-resolved job config."""

    file: str | None
    format: str
    env: Mapping[str, Any]
    sources: tuple[PluginConfig, ...]
    transforms: tuple[PluginConfig, ...]
    sinks: tuple[PluginConfig, ...]
    env_lines: Mapping[str, int] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()

    @property
    def plugins(self) -> tuple[PluginConfig, ...]:
        return self.sources + self.transforms + self.sinks

    def env_get(self, key: str, default: Any = None) -> Any:
        value = lookup(self.env, key)
        return default if value is hocon.MISSING else value

    def problem(self, message: str, plugin: PluginConfig | None = None, key: str | None = None,
                hint: str | None = None, severity: str = "error", code: str | None = None) -> Problem:
        """A :class:`Problem` located at ``plugin``'s ``key`` (or at ``env``'s ``key``)."""
        if plugin is None:
            line = self.env_lines.get(key) if key else None
            return Problem(message, file=self.file, line=line, plugin="env" if key else None,
                           key=key, hint=hint, severity=severity, code=code)
        return Problem(message, file=self.file, line=plugin.line_of(key), plugin=plugin.label,
                       key=key, hint=hint, severity=severity, code=code)

    def cannot_run(self, message: str, plugin: PluginConfig, key: str | None = None,
                   hint: str | None = None) -> Problem:
        """What ``plugin`` is asked for that this package cannot do (yet): a warning that plans,
        but fails ``validate`` and ``run`` (code ``not-runnable``)."""
        return self.problem(message + ": it plans, but validate fails", plugin, key=key, hint=hint,
                            severity="warning", code=NOT_RUNNABLE)


def detect_format(path: str | None, text: str) -> str:
    suffix = Path(path).suffix.lower() if path else ""
    if suffix == ".sql":
        return "sql"
    if suffix == ".json":
        return "json"
    if not path:
        stripped = text.lstrip()
        if stripped.startswith("[") or (stripped.startswith("{") and stripped[1:].lstrip().startswith('"')):
            return "json"
        if "create table" in text.lower() and "insert into" in text.lower():
            return "sql"
    return "hocon"


def read_config_text(config: str | os.PathLike) -> tuple[str | None, str]:
    """``(path, text)`` of a config given as a path or as inline text."""
    s = os.fspath(config)
    if "\n" not in s and ("{" not in s) and len(s) < 4096:
        try:
            return s, Path(s).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError.at(f"config file not found: {s}", file=s,
                                 hint="check the path (relative paths start at the working directory)") \
                from None
        except UnicodeDecodeError as e:
            line = e.object[:e.start].count(b"\n") + 1
            col = e.start - (e.object.rfind(b"\n", 0, e.start) + 1) + 1
            raise ConfigError.at(f"the config file is not UTF-8: byte 0x{e.object[e.start]:02x} cannot be read",
                                 file=s, line=line, col=col, hint="save the file as UTF-8") from None
        except (IsADirectoryError, PermissionError) as e:
            raise ConfigError.at(f"cannot read the config file: {e}", file=s) from None
    return None, s


def load_job(config: str | os.PathLike, variables: Mapping[str, Any] | None = None, *,
             text: str | None = None, format: str | None = None,
             environ: Mapping[str, str] | None = None, limits: Limits = DEFAULT_LIMITS,
             include_dirs: Iterable[str | os.PathLike] = ()) -> JobConfig:
    """Load, resolve variables and split plugin blocks; raises :class:`ConfigError`.

    ``config`` is a file path or the config text itself (or pass ``text`` with a
    display name in ``config``). ``variables`` are ``-i`` values; ``environ`` defaults
    to the process environment. Reading is bounded by ``limits``; an ``include`` reads only
    under the config's folder, ``include_dirs`` and the include_paths setting (:mod:`.limits`).
    """
    if text is None:
        path, text = read_config_text(config)
    else:
        path = os.fspath(config) if config else None
    fmt = (format or detect_format(path, text)).lower()
    if fmt not in FORMATS:
        raise ConfigError.at(f"unknown config format '{fmt}'", file=path, hint=f"use one of {FORMATS}")
    env_vars = os.environ if environ is None else environ
    variables = normalize_variables(variables)

    parse_warnings: list[Problem] = []
    if fmt == "sql":
        from .sqlformat import parse_sql_job

        root = parse_sql_job(text, path)
    else:
        root = hocon.parse(text, path, json_syntax=(fmt == "json"), warnings=parse_warnings, limits=limits,
                           include_dirs=include_dirs)

    def fallback(name: str) -> Any:
        if name in env_vars:
            return env_vars[name]
        if name in variables:
            return variables[name]
        return hocon.MISSING

    if not root and fmt != "sql":
        lines = text.count("\n") + (not text.endswith("\n"))
        raise ConfigError.at("the config holds no settings, only comments and blank lines"
                             + (f" ({lines} lines): is the file truncated?" if lines > 1 else ""),
                             file=path, line=max(lines, 1), hint="write env { }, source { } and sink { } blocks")
    try:
        hocon.resolve(root, fallback, path, keep_literal=is_connector_placeholder, limits=limits)
    except ConfigError as e:
        raise e.with_warnings(parse_warnings) from None
    return _build(root, path, fmt, variables, parse_warnings)


def _build(root: hocon.ConfigObject, path: str | None, fmt: str, variables: Mapping[str, Any],
           parse_warnings: list[Problem]) -> JobConfig:
    problems: list[Problem] = []
    warnings: list[Problem] = list(parse_warnings)
    unresolved: set[str] = set()

    env = root.get("env", hocon.ConfigObject())
    if not isinstance(env, dict):
        problems.append(Problem("'env' must be a block: env { ... }", file=path,
                                line=root.line_of("env"), key="env"))
        env = hocon.ConfigObject()
    backfill(env, variables, unresolved)

    known = {"env", *hocon.PLUGIN_SECTIONS}
    for key in root:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            warnings.append(Problem(f"top-level key '{key}' is ignored", file=path, line=root.line_of(key),
                                    key=key, hint=f"did you mean '{close[0]}'?" if close else None,
                                    severity="warning"))

    sections: dict[str, list[PluginConfig]] = {}
    for section in hocon.PLUGIN_SECTIONS:
        blocks = root.get(section, hocon.ConfigList())
        plugins: list[PluginConfig] = []
        if isinstance(blocks, dict):  # JSON object form or `source = { A {...} }` resolved late
            blocks = _object_to_blocks(blocks)
        if not isinstance(blocks, list):
            problems.append(Problem(f"'{section}' must be a block of plugins or a list of plugin objects",
                                    file=path, line=root.line_of(section), key=section,
                                    hint=f"write {section} {{ PluginName {{ ... }} }}"))
            continue
        item_pos = getattr(blocks, "item_pos", None) or []
        for index, block in enumerate(blocks):
            pos = item_pos[index] if index < len(item_pos) else getattr(block, "pos", None)
            line = pos.line if pos else root.line_of(section)
            ref = f"{section}[{index}]"
            if not isinstance(block, dict):
                problems.append(Problem(f"{ref} must be a plugin block, found {type(block).__name__}",
                                        file=path, line=line, plugin=ref,
                                        hint="each plugin is an object with a plugin_name"))
                continue
            name = block.get("plugin_name")
            if not isinstance(name, str) or not name.strip():
                problems.append(Problem("the 'plugin_name' option is not configured", file=path, line=line,
                                        plugin=ref, key="plugin_name",
                                        hint='set plugin_name = "FakeSource" (or write FakeSource { ... })'))
                continue
            unresolved_here: set[str] = set()
            backfill(block, variables, unresolved_here)
            for var in sorted(unresolved_here):
                warnings.append(Problem(f"variable ${{{var}}} in a quoted string has no value and stays as "
                                        "written", file=path, line=line, plugin=f"{ref} {name}",
                                        hint=f"pass -i {var}=VALUE or give a default: ${{{var}:default}}",
                                        severity="warning"))
            key_pos = getattr(block, "key_pos", {}) or {}
            options = {k: hocon.to_plain(v) for k, v in block.items() if k != "plugin_name"}
            plugins.append(PluginConfig(section=section, index=index, name=name.strip(), options=options,
                                        line=line, col=pos.col if pos else None,
                                        key_lines={k: p.line for k, p in key_pos.items()}))
        sections[section] = plugins
    for var in sorted(unresolved):
        warnings.append(Problem(f"variable ${{{var}}} in a quoted string has no value and stays as written",
                                file=path, plugin="env", hint=f"pass -i {var}=VALUE", severity="warning"))
    if problems:
        raise ConfigError(problems, warnings)
    env_lines = {k: p.line for k, p in (getattr(env, "key_pos", {}) or {}).items()}
    return JobConfig(file=path, format=fmt, env=hocon.to_plain(env),
                     sources=tuple(sections.get("source", ())),
                     transforms=tuple(sections.get("transform", ())),
                     sinks=tuple(sections.get("sink", ())),
                     env_lines=env_lines, warnings=tuple(warnings))


def _object_to_blocks(obj: Mapping[str, Any]) -> hocon.ConfigList:
    out = hocon.ConfigList(pos=getattr(obj, "pos", None))
    key_pos = getattr(obj, "key_pos", {})
    for name, value in obj.items():
        if isinstance(value, dict):
            block = value if isinstance(value, hocon.ConfigObject) else hocon.ConfigObject(value)
            block.setdefault("plugin_name", name)
            out.append(block)
        else:
            out.append(value)
        out.item_pos.append(key_pos.get(name))
    return out
