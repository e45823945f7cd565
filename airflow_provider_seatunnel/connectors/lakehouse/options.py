"""The options Delta, Iceberg and Paimon declare alike, and the rules of their values a spec's types
cannot state.

* :func:`common_options`: ``case_sensitive`` and the sink's ``schema_save_mode`` / ``data_save_mode``,
  declared once for the three (SeaTunnel's names and defaults), and :class:`SinkKeys` their values with
  the sink's keys, the part of each connector's parsed sink options the three hold alike;
* :func:`column_names`: a declared ``list`` option naming columns: each a non-empty string (a string
  item may be a comma list), none twice in any case;
* :func:`settings_map`: a declared ``map`` option of single values (table or catalog properties) as
  strings, booleans spelled ``true``/``false``;
* :func:`exclusive`: options of which at most one may be set;
* :func:`placeholder_free`: only a sink's table options hold the upstream table's placeholders;
* :func:`checked`, :func:`save_mode_problems`, :func:`key_problems`: the compile-time reading of a
  block the three share (the first rule refused, the save mode that cannot run, the sink's keys
  against its input's fields).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Self

from ...spi import SINK
from ...spi.options import OptionError, key_field_problems
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import TableKeys

if TYPE_CHECKING:
    from ...spi.options import JobConfig, PluginConfig, Problem
    from ...spi.schema import Schema

__all__ = [
    "DATA_SAVE_MODES",
    "PLACEHOLDER",
    "SCHEMA_SAVE_MODES",
    "SinkKeys",
    "checked",
    "column_names",
    "common_options",
    "exclusive",
    "key_problems",
    "placeholder_free",
    "save_mode_problems",
    "settings_map",
]

SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")
#: the placeholders a sink's table options may hold (the upstream table's names)
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")


def common_options(keys_named: str) -> tuple[Option, ...]:
    """``case_sensitive`` (how ``keys_named`` match the table's columns) and the sink's save modes."""
    return (
        Option("case_sensitive", "bool", False, f"Whether {keys_named} match the table's columns in case."),
        Option("schema_save_mode", "enum", "CREATE_SCHEMA_WHEN_NOT_EXIST", "What the sink does with the table's "
               "schema before its first commit.", choices=SCHEMA_SAVE_MODES, sections=(SINK,)),
        Option("data_save_mode", "enum", "APPEND_DATA", "What the sink does with the table's rows before its "
               "first commit.", choices=DATA_SAVE_MODES, sections=(SINK,)),
    )


@dataclass(frozen=True, kw_only=True)
class SinkKeys:
    """The parsed sink options Delta, Iceberg and Paimon hold alike (by keyword): how the keys match the
    table's columns, the primary and partition keys, the save modes. A connector's ``SinkOptions``
    extends it with its table and its own settings."""

    case_sensitive: bool = False
    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    schema_save_mode: str = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode: str = "APPEND_DATA"

    def for_table(self, table: str, columns: list[str] | None, keys: TableKeys | None) -> Self:
        """These options for the upstream table ``table``: primary keys of one item ``${primary_key}``
        (``${unique_key}``, ``${field_names}``) become that table's columns (``keys``: its catalog keys)."""
        from ..files.placeholders import table_config

        expanded = tuple(table_config({"keys": list(self.primary_keys)}, table, columns, keys)["keys"])
        return self if expanded == self.primary_keys else replace(self, primary_keys=expanded)


def column_names(o: ParsedOptions, key: str) -> tuple[str, ...]:
    """The column names of the list option ``key`` (a list, or one comma-separated string); none when it
    is unset. Set but empty, a non-string name or a name given twice (in any case) is an :class:`OptionError`."""
    if not o.given(key):
        return ()
    value = o[key]
    names = [n for item in value for n in (item.split(",") if isinstance(item, str) else [item])]
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise OptionError(key, f"{key} must name columns (a list, or one comma-separated string), found "
                               f"{list(value)!r}", f'{key} = ["id"]')
    out = tuple(n.strip() for n in names)
    lowered = [n.lower() for n in out]
    twice = sorted({n for n in out if lowered.count(n.lower()) > 1})
    if twice:
        raise OptionError(key, f"{key} names {', '.join(twice)} twice")
    return out


def exclusive(o: ParsedOptions, *keys: str) -> None:
    """At most one of ``keys`` is set: an :class:`OptionError` at the last one set otherwise."""
    given = [k for k in keys if o.given(k)]
    if len(given) > 1:
        raise OptionError(given[-1], f"{' and '.join(given)} exclude each other", "keep one of them")


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def settings_map(value: Mapping[str, Any] | None, key: str, message: str, hint: str) -> dict[str, str]:
    """The map option ``key``'s entries as strings (none when unset); an entry that is a list, a map or
    null is an :class:`OptionError` (``message`` names the entry as ``{name}``)."""
    out: dict[str, str] = {}
    for name, item in (value or {}).items():
        if isinstance(item, (Mapping, list)) or item is None:
            raise OptionError(key, message.format(name=name), hint)
        out[str(name)] = _text(item)
    return out


def placeholder_free(key: str, value: str) -> str:
    """``value`` of a source's table option, refused when it holds a placeholder."""
    if PLACEHOLDER.search(value):
        raise OptionError(key, f"{key} '{value}' holds a placeholder: only a sink's table options are expanded "
                               "per upstream table")
    return value


def checked(spec: OptionSpec, parse: Callable[[Mapping[str, Any], str], Any], plugin: PluginConfig,
            job: JobConfig) -> tuple[Any, list[Problem]]:
    """A block read at compile time by ``parse`` (its connector's reader for both phases): ``(None, [])``
    when ``spec`` finds a problem (it reports them itself), ``(None, [problem])`` for the first rule
    ``parse`` refuses, else ``(options, [])``."""
    if spec.valid(plugin.options, plugin.section) is None:
        return None, []
    try:
        return parse(plugin.options, plugin.section), []
    except OptionError as e:
        return None, [job.problem(e.message, plugin, key=e.key, hint=e.hint)]


def save_mode_problems(name: str, options: Any, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """A sink's ``data_save_mode`` CUSTOM_PROCESSING plans but cannot run."""
    if getattr(options, "data_save_mode", None) != "CUSTOM_PROCESSING":
        return []
    return [job.cannot_run(f"data_save_mode CUSTOM_PROCESSING is not supported by the {name} sink", plugin,
                           key="data_save_mode", hint="use DROP_DATA, APPEND_DATA or ERROR_WHEN_DATA_EXISTS")]


def key_problems(spec: OptionSpec, parse: Callable[[Mapping[str, Any], str], Any], plugin: PluginConfig,
                 job: JobConfig, inputs: Sequence[Schema | None], keys: tuple[str, str]) -> list[Problem]:
    """A sink's primary and partition keys (``keys``: their option names) must name fields of its input,
    where the input's schema is known; none for a source or a block :func:`checked` refuses."""
    if plugin.section != SINK or not inputs or inputs[0] is None or not inputs[0].fields:
        return []
    options, _ = checked(spec, parse, plugin, job)
    if options is None:
        return []
    named = ((keys[0], options.primary_keys), (keys[1], options.partition_keys))
    return key_field_problems(plugin, job, inputs[0], named, options.case_sensitive)
