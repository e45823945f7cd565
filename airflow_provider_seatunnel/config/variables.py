"""Variables as SeaTunnel resolves them: ``-i name=value`` and quoted ``"${name:default}"``.

Two mechanisms, as in SeaTunnel (see README, "Variables"):

* unquoted ``${name}`` is a HOCON substitution, resolved from the config itself, then
  the environment, then the variables (:mod:`.hocon` does that);
* inside quoted strings, ``${name}``, ``${name:default}`` and ``${name:}`` are replaced
  from the variables only; an unknown one stays as written (and ``validate`` warns).

Connector placeholders (``${table_name}``, ``${k0}``, ``${transactionId}``…) are left
for the sinks to expand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigError
from .hocon import parse_value_text

#: Names SeaTunnel reserves for table placeholders; ``-i`` may not set them.
SYSTEM_PLACEHOLDERS = frozenset({
    "database_name", "schema_name", "schema_full_name", "table_name", "table_full_name",
    "primary_key", "unique_key", "field_names",
})
#: What a sink fills into its save-mode SQL templates (``save_mode_create_template``).
SAVE_MODE_PLACEHOLDERS = frozenset({
    "rowtype_primary_key", "rowtype_unique_key", "rowtype_duplicate_key", "rowtype_fields", "table", "database",
    "table_name",
})
_CONNECTOR_PLACEHOLDER = re.compile(r"(?:k|v)\d+|transactionId|uuid|now")
_QUOTED = re.compile(r"\$\{([^:{}]+)(?::([^}]*))?\}")


def is_connector_placeholder(name: str) -> bool:
    """True for names that sinks expand themselves (``table_name``, ``k0``, ``now``…)."""
    base = name.split(":", 1)[0].strip()
    return base in SYSTEM_PLACEHOLDERS or bool(_CONNECTOR_PLACEHOLDER.fullmatch(base))


def split_cli_variables(args: Iterable[str]) -> dict[str, str]:
    """``-i`` arguments → raw ``name: text``. One argument may hold ``a=1,b=[x,y]``.

    Items split on commas outside ``"…"`` and ``[…]``, then at the first ``=``.
    """
    out: dict[str, str] = {}
    for arg in args:
        for item in _split_top_level(arg):
            if "=" not in item:
                raise ConfigError.at(f"variable '{item}' has no value", key=item,
                                     hint="write -i name=value")
            name, value = item.split("=", 1)
            out[name.strip()] = value
    return out


def _split_top_level(text: str) -> list[str]:
    items: list[str] = []
    cur: list[str] = []
    depth, quoted = 0, False
    for c in text:
        if c == '"':
            quoted = not quoted
        elif not quoted and c == "[":
            depth += 1
        elif not quoted and c == "]":
            depth = max(0, depth - 1)
        elif c == "," and not quoted and depth == 0:
            items.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    items.append("".join(cur))
    return [i for i in items if i.strip()]


def normalize_variables(variables: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check names and parse string values as HOCON values (``10`` → 10, ``[a,b]`` → list)."""
    out: dict[str, Any] = {}
    for name, value in (variables or {}).items():
        name = str(name).strip()
        if not name:
            raise ConfigError.at("a variable has an empty name", hint="write -i name=value")
        if name in SYSTEM_PLACEHOLDERS:
            raise ConfigError.at(f"'{name}' is a system placeholder and cannot be set as a variable",
                                 key=name, hint="choose another variable name")
        out[name] = parse_value_text(value) if isinstance(value, str) else value
    return out


def variable_text(value: Any) -> str:
    """How a variable's value reads inside a quoted string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(variable_text(v) for v in value) + "]"
    return "" if value is None else str(value)


def replace_quoted(text: str, variables: Mapping[str, Any], unresolved: set[str],
                   template: bool = False) -> str:
    """Replace ``${name}``, ``${name:default}`` and ``${name:}`` inside one string.

    Names with no value and no default stay as written and are added to ``unresolved``
    unless they are connector placeholders (or, in a save-mode SQL ``template``, the
    placeholders a sink fills into it).
    """
    if "${" not in text:
        return text

    def sub(m: re.Match) -> str:
        name, default = m.group(1).strip(), m.group(2)
        value = variables.get(name)
        if value is not None and variable_text(value) != "":
            return variable_text(value)
        if default is not None:
            return default.strip()
        if not is_connector_placeholder(name) and not (template and name in SAVE_MODE_PLACEHOLDERS):
            unresolved.add(name)
        return m.group(0)

    return _QUOTED.sub(sub, text)


def backfill(node: Any, variables: Mapping[str, Any], unresolved: set[str]) -> Any:
    """Apply :func:`replace_quoted` to the strings of a plugin block or ``env``, in place.

    As SeaTunnel does: nested maps are walked; in lists only string elements are.
    """
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str):
                node[k] = replace_quoted(v, variables, unresolved, template=_is_template(k))
            elif isinstance(v, dict):
                backfill(v, variables, unresolved)
            elif isinstance(v, list):
                _backfill_list(v, variables, unresolved)
    return node


def _is_template(key: Any) -> bool:
    """Options that hold a save-mode SQL template (``save_mode_create_template``, ``custom_sql``)."""
    return isinstance(key, str) and (key.endswith("template") or key == "custom_sql")


def _backfill_list(items: list, variables: Mapping[str, Any], unresolved: set[str]) -> None:
    for i, v in enumerate(items):
        if isinstance(v, str):
            items[i] = replace_quoted(v, variables, unresolved)
