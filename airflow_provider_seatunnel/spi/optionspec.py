"""Typed option specs: a connector declares each option once, and one engine reads them.

A connector's :class:`OptionSpec` lists its :class:`Option` declarations (key, type, default,
SeaTunnel's older key names, choices, when it is required, whether it is a secret or names the
plugin's external data) and the groups of which exactly one must be set. From that declaration
alone come:

* the compile-time problems of a block (:meth:`OptionSpec.problems`): a wrong type, a value outside
  the choices, a missing required option (also when another option's value requires it), a group
  with none or several set, and an unknown key (a warning with the closest known key, an error under
  the ``[seatunnel] strict`` setting);
* the typed options a task runs with (:meth:`OptionSpec.parse`): defaults and fallback keys applied,
  each value of its declared type; a value the compiler would refuse raises :class:`.options.OptionError`;
* the connector's ``required``, ``identity`` and ``secrets`` (:class:`.connector.Connector` derives
  them from the spec when it declares one), so masking and task ids follow the declaration;
* the option table of the docs (:meth:`OptionSpec.markdown`), which a test keeps equal to docs/.

Keys are read as SeaTunnel reads them: a dotted key ``a.b`` as written or nested (``a { b = 1 }``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config.hocon import MISSING
from ..config.options import as_bool, as_int, as_list, lookup
from .options import OptionError

if TYPE_CHECKING:
    from .options import JobConfig, PluginConfig, Problem

__all__ = ["COMMON_KEYS", "TYPES", "Option", "OptionSpec", "ParsedOptions"]

#: keys every block may set (wiring and parallelism), never "unknown"
COMMON_KEYS = frozenset({"plugin_name", "plugin_input", "plugin_output", "source_table_name", "result_table_name",
                         "parallelism", "multi_table_sink_replica"})

#: the option types and how a value is named in messages and docs
TYPES = {"string": "a string", "int": "an integer", "long": "an integer", "double": "a number",
         "bool": "true or false", "enum": "one of the choices", "list": "a list", "map": "a map", "any": "any value"}


@dataclass(frozen=True)
class Option:
    """One option of a plugin's block.

    ``fallback`` lists older names read when ``key`` is absent (the first set wins); ``choices`` are
    matched case-insensitively and parsed upper-case (``enum``); ``required_if`` maps another key to
    the values of it that make this option required; ``required_unless`` names keys whose presence
    lifts ``required`` (an Airflow connection option that supplies it); ``minimum``/``maximum`` bound
    an int/long/double; ``sections`` limits it to blocks of those sections (empty: every section); ``allow_blank``
    false refuses a string of spaces;
    ``identity``: the option names the external data (paths, tables), from which task ids derive;
    ``secret``: a credential, kept out of plans, logs and identities.
    """

    key: str
    type: str = "string"
    default: Any = None
    description: str = ""
    fallback: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    required: bool = False
    required_if: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    required_unless: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    sections: tuple[str, ...] = ()
    allow_blank: bool = True
    secret: bool = False
    identity: bool = False

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"option {self.key}: unknown type {self.type!r} (one of {', '.join(TYPES)})")
        if self.choices and self.type not in ("enum", "list"):
            raise ValueError(f"option {self.key}: choices need type enum or list")

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.fallback)

    def raw(self, options: Mapping[str, Any]) -> tuple[str, Any]:
        """The key found and its value as written (``MISSING`` when neither the key nor a fallback is set;
        a null counts as unset)."""
        for key in self.keys:
            value = lookup(options, key)
            if value is not MISSING and value is not None:
                return key, value
        return self.key, MISSING

    def applies_to(self, section: str | None) -> bool:
        return section is None or not self.sections or section in self.sections

    def coerce(self, key: str, value: Any) -> Any:
        """``value`` as this option's type; an :class:`OptionError` naming ``key`` when it is not one."""
        parsed = _coerce(self, key, value)
        low, high = self.minimum, self.maximum
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool) and (
                (low is not None and parsed < low) or (high is not None and parsed > high)):
            raise OptionError(key, f"{key} must be {_what(self)}, found {value!r}")
        if self.type == "string" and not self.allow_blank and not parsed.strip():
            raise OptionError(key, f"{key} must be a non-empty string, found {value!r}")
        return parsed


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _what(option: Option) -> str:
    """How a valid number is named: ``an integer between 1 and 65535``, ``a number >= 0``."""
    what = "a number" if option.type == "double" else "an integer"
    low, high = option.minimum, option.maximum
    if low is not None and high is not None:
        return f"{what} between {_number(low)} and {_number(high)}"
    if low is not None:
        return f"{what} >= {_number(low)}"
    if high is not None:
        return f"{what} <= {_number(high)}"
    return what


def _coerce(option: Option, key: str, value: Any) -> Any:
    kind = option.type
    if kind in ("int", "long"):
        parsed = as_int(value)
        if parsed is None:
            raise OptionError(key, f"{key} must be {_what(option)}, found {value!r}")
        return parsed
    if kind == "double":
        if isinstance(value, bool):
            raise OptionError(key, f"{key} must be {_what(option)}, found {value!r}")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise OptionError(key, f"{key} must be {_what(option)}, found {value!r}") from None
    if kind == "bool":
        flag = as_bool(value)
        if flag is None:
            raise OptionError(key, f"{key} must be true or false, found {value!r}")
        return flag
    if kind == "string":
        if isinstance(value, (Mapping, list)):
            raise OptionError(key, f"{key} must be a string, found {value!r}")
        return str(value)
    if kind == "enum":
        return _choice(option, key, value)
    if kind == "list":
        items = as_list(value) if not isinstance(value, Mapping) else None
        if items is None:
            raise OptionError(key, f"{key} must be a list, found {value!r}")
        return tuple(_choice(option, key, item) for item in items) if option.choices else tuple(items)
    if kind == "map":
        if not isinstance(value, Mapping):
            raise OptionError(key, f"{key} must be a map ({key} {{ name = value }}), found {value!r}")
        return dict(value)
    return value


def _choice(option: Option, key: str, value: Any) -> str:
    text = str(value).strip().upper()
    allowed = tuple(c.upper() for c in option.choices)
    if text in allowed:
        return option.choices[allowed.index(text)]
    close = difflib.get_close_matches(text, list(allowed), n=1, cutoff=0.5)
    raise OptionError(key, f"unknown {key} '{value}'",
                      f"did you mean '{option.choices[allowed.index(close[0])]}'?" if close
                      else f"use one of {', '.join(option.choices)}")


class ParsedOptions(Mapping[str, Any]):
    """A block's options as its spec types them: every declared key (by its current name), its value or
    default; read-only."""

    def __init__(self, values: Mapping[str, Any], given: frozenset[str]):
        self._values, self._given = dict(values), given

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def given(self, key: str) -> bool:
        """Whether the block set ``key`` (or one of its fallback names), rather than taking its default."""
        return key in self._given

    def __repr__(self) -> str:
        return f"ParsedOptions({self._values!r})"


@dataclass(frozen=True)
class OptionSpec:
    """A plugin's options: ``options`` in the order the docs list them; ``exactly_one`` groups of keys of
    which exactly one must be set; ``bundled`` groups of keys set all together or not at all (SeaTunnel's
    bundled options: a username without its password); ``open_prefixes``: keys under these prefixes are
    passed on as written (a client's own settings such as ``kafka.``), never unknown; ``open``: any key is
    accepted (a plugin whose keys are data, such as a field map)."""

    options: tuple[Option, ...]
    exactly_one: tuple[tuple[str, ...], ...] = ()
    bundled: tuple[tuple[str, ...], ...] = ()
    open_prefixes: tuple[str, ...] = ()
    open: bool = False

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for option in self.options:
            for key in option.keys:
                if key in seen:
                    raise ValueError(f"option key {key!r} is declared twice")
                seen.add(key)
        for group in (*self.exactly_one, *self.bundled):
            for key in group:
                self.get(key)  # a KeyError names an undeclared key of a group

    def get(self, key: str) -> Option:
        for option in self.options:
            if key in option.keys:
                return option
        raise KeyError(key)

    def written(self, options: Mapping[str, Any], key: str, default: Any = None) -> Any:
        """The value of the declared option ``key`` as the block wrote it (its older names too; ``default``
        when unset), untyped: for what reads a block before or without parsing it (checks, lineage, jars)."""
        _, value = self.get(key).raw(options)
        return default if value is MISSING else value

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.options if o.required and not o.required_unless)

    @property
    def identity(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.options if o.identity)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(k for o in self.options if o.secret for k in o.keys)

    def known(self, key: str, section: str | None = None) -> bool:
        """Whether ``key`` (a top-level key of a block of ``section``) is declared for it, common, or under
        an open prefix."""
        if self.open or key in COMMON_KEYS or key.startswith(self.open_prefixes):
            return True
        return any(key == k or k.startswith(key + ".") or key.startswith(k + ".")
                   for o in self.options if o.applies_to(section) for k in o.keys)

    def parse(self, options: Mapping[str, Any], section: str | None = None, complete: bool = False) -> ParsedOptions:
        """The typed options of a block of ``section`` (defaults applied; None: every option); the first
        invalid value raises :class:`OptionError`, and with ``complete`` a missing required option too."""
        values: dict[str, Any] = {}
        given: set[str] = set()
        for option in self.options:
            if not option.applies_to(section):
                continue
            key, value = option.raw(options)
            if value is MISSING and complete:
                missing = _missing(option, options)
                if missing is not None:
                    raise OptionError(option.key, missing, f"set {option.key} = ...")
            if value is MISSING:
                values[option.key] = option.default
            else:
                values[option.key] = option.coerce(key, value)
                given.add(option.key)
        if complete:
            for group in self.bundled:
                broken = self._bundle_broken(group, options, section)
                if broken is not None:
                    why, unset = broken
                    raise OptionError(unset[0], why, f"set {unset[0]} too, or none of them")
        return ParsedOptions(values, frozenset(given))

    def _bundle_broken(self, group: tuple[str, ...], options: Mapping[str, Any],
                       section: str | None) -> tuple[str, list[str]] | None:
        """Why ``group``'s keys are not all set or all unset in a block of ``section`` (a null value counts
        as unset), and the unset ones; None when they are, or the group is not of that section."""
        if not all(self.get(k).applies_to(section) for k in group):
            return None
        given = [k for k in group if self.get(k).raw(options)[1] not in (MISSING, None)]
        if not given or len(given) == len(group):
            return None
        missing = [k for k in group if k not in given]
        return (f"{' and '.join(group)} go together: {', '.join(given)} "
                f"{'is' if len(given) == 1 else 'are'} set, {', '.join(missing)} not"), missing

    def valid(self, options: Mapping[str, Any], section: str | None = None) -> ParsedOptions | None:
        """The typed options of a block the spec finds nothing wrong with (required options included);
        None otherwise: :meth:`problems` reports why, so a connector's own checks stop there."""
        try:
            return self.parse(options, section, complete=True)
        except OptionError:
            return None

    def run_time(self, options: Mapping[str, Any], section: str | None = None) -> ParsedOptions:
        """The typed options of a block when its task runs (a hand-written plan skips the compiler): a
        missing required option or an invalid value is the deterministic :class:`.errors.RuntimeConfigError`."""
        try:
            return self.parse(options, section, complete=True)
        except OptionError as e:
            raise e.at_run_time() from None

    def problems(self, plugin: PluginConfig, job: JobConfig, strict: bool | None = None) -> list[Problem]:
        """Every problem the declaration finds in ``plugin``'s block, located at the key."""
        from .. import settings

        found: list[Problem] = []
        opts = plugin.options
        for option in self.options:
            if not option.applies_to(plugin.section):
                continue
            key, value = option.raw(opts)
            if value is MISSING:
                missing = _missing(option, opts)
                if missing is not None:
                    found.append(job.problem(missing, plugin, key=option.key,
                                             hint=f"set {option.key} = ... in the {plugin.name} block"))
                continue
            try:
                option.coerce(key, value)
            except OptionError as e:
                found.append(job.problem(e.message, plugin, key=e.key, hint=e.hint))
        found.extend(self._group_problems(plugin, job))
        strict = settings.strict() if strict is None else strict
        for key in opts:
            if not self.known(str(key), plugin.section):
                close = difflib.get_close_matches(str(key), [k for o in self.options for k in o.keys], n=1)
                found.append(job.problem(f"unknown option '{key}' of {plugin.name}" + ("" if strict else
                                         ": it is ignored"), plugin, key=str(key), code="unknown-option",
                                         hint=f"did you mean '{close[0]}'?" if close else None,
                                         severity="error" if strict else "warning"))
        return found

    def _group_problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        found = []
        for bundle in self.bundled:
            broken = self._bundle_broken(bundle, plugin.options, plugin.section)
            if broken is not None:
                found.append(job.problem(broken[0], plugin, key=broken[1][0],
                                         hint=f"set {broken[1][0]} too, or none of them"))
        for group in self.exactly_one:
            present = [key for key in group if self.get(key).raw(plugin.options)[1] is not MISSING]
            if len(present) == 1:
                continue
            names = ", ".join(group)
            what = "none of them is set" if not present else f"{' and '.join(present)} are all set"
            found.append(job.problem(f"exactly one of {names} must be set; {what}", plugin,
                                     key=present[-1] if present else None, hint=f"keep one of {names}"))
        return found

    def markdown(self) -> str:
        """The option table of the docs: name (older names), type, required, default, description."""
        rows = ["| name | type | required | default | description |", "| --- | --- | --- | --- | --- |"]
        for o in self.options:
            name = f"`{o.key}`" + (f" (or {', '.join(f'`{k}`' for k in o.fallback)})" if o.fallback else "") + (
                f" ({' and '.join(o.sections)} only)" if o.sections else "")
            kind = o.type + (f": {', '.join(o.choices)}" if o.choices else "")
            need = _need(o)
            default = "" if o.default is None else f"`{_shown(o.default)}`"
            notes = o.description + (" Secret: masked in plans and logs." if o.secret else "")
            rows.append(f"| {name} | {kind} | {need} | {default} | {notes.strip()} |".replace("\n", " "))
        for group in self.exactly_one:
            rows.append(f"\nExactly one of {', '.join(f'`{k}`' for k in group)} must be set.")
        for group in self.bundled:
            rows.append(f"\n{' and '.join(f'`{k}`' for k in group)} go together: all set or none.")
        return "\n".join(rows) + "\n"


def _need(option: Option) -> str:
    """The docs' "required" cell: yes (unless ...), if k = v, or no."""
    if option.required:
        unless = " or ".join(option.required_unless)
        return "yes" + (f" unless {unless} is set" if unless else "")
    if option.required_if:
        unless = " or ".join(option.required_unless)
        return ("if " + "; ".join(f"{k} = {' or '.join(_shown(x).lower() for x in v)}" for k, v in option.required_if)
                + (f" (unless {unless} is set)" if unless else ""))
    return "no"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _missing(option: Option, options: Mapping[str, Any]) -> str | None:
    """Why an unset ``option`` is a problem (None: it may stay unset; ``required_unless`` lifts ``required`` and
    ``required_if`` alike)."""
    if any(lookup(options, k) not in (MISSING, None) for k in option.required_unless):
        return None
    if option.required:
        return f"the option '{option.key}' is required"
    key = _trigger(option, options)
    if key is not None:
        return f"the option '{option.key}' is required when {key} = {_shown(lookup(options, key)).lower()}"
    return None


def _trigger(option: Option, options: Mapping[str, Any]) -> str | None:
    """The key whose value makes ``option`` required, if any."""
    return next((key for key, values in option.required_if if _value_is(options, key, values)), None)


def _value_is(options: Mapping[str, Any], key: str, values: tuple[Any, ...]) -> bool:
    value = lookup(options, key)
    if value is MISSING or value is None:
        return False
    return str(value).strip().upper() in {str(v).upper() for v in values}
