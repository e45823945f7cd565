"""The Jdbc block at compile time (no database, no Spark): option checks, the sink's
``primary_keys`` against its input's fields (the tables it reads or writes: :mod:`.lineage`).

What SeaTunnel rejects but existing configs rely on planning (a source without a query or
table, a sink without a query or ``generate_sink_sql``) plans, with a warning that fails validate.

A ``table_path``, ``table`` or ``database`` that cannot be a name at all (an empty part, a NUL
character, an unclosed quote, more than three parts: :func:`..sqlclient.dialects.split_name`) is an error;
a name a database can hold, however hostile it looks, is not: every statement quotes it. Values
with placeholders (``${table_name}``, ``{{ … }}``) are checked at run time, once expanded.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import JobConfig, PluginConfig, Problem, as_bool, as_int, as_list
from ...spi.schema import Schema
from ..sqlclient.dialects import NameProblem, single_name, split_name
from .options import DATA_SAVE_MODES, FIELD_IDE, SCHEMA_SAVE_MODES, opt, opt_text, to_decimal
from .statements import values_clause

_SINK_FLAGS = ("generate_sink_sql", "is_exactly_once", "enable_upsert", "support_upsert_by_insert_only",
               "is_primary_key_updated", "support_upsert_by_query_primary_key_exist", "create_index", "auto_commit",
               "use_copy_statement")


@dataclass
class _Checker:
    """The problems found in one block, and how each kind of option is checked."""

    plugin: PluginConfig
    job: JobConfig
    problems: list[Problem] = field(default_factory=list)

    @property
    def options(self) -> Mapping[str, Any]:
        return self.plugin.options

    def error(self, key: str | None, message: str, hint: str | None = None) -> None:
        self.problems.append(self.job.problem(message, self.plugin, key=key, hint=hint))

    def cannot_run(self, key: str | None, message: str, hint: str | None = None) -> None:
        """A warning that plans but fails validate (the job names what this package cannot run)."""
        self.problems.append(self.job.cannot_run(message, self.plugin, key=key, hint=hint))

    def integer(self, block: Mapping[str, Any], key: str, minimum: int, prefix: str = "") -> None:
        value = opt(block, key)
        number = as_int(value) if value is not None else None
        if value is not None and (number is None or number < minimum):
            self.error(prefix + key, f"{key} must be an integer >= {minimum}, found {value!r}")

    def boolean(self, key: str) -> None:
        value = opt(self.options, key)
        if value is not None and as_bool(value) is None:
            self.error(key, f"{key} must be true or false, found {value!r}")

    def name(self, block: Mapping[str, Any], key: str, prefix: str = "", parse: Any = split_name) -> None:
        """A table (or, with ``single_name``, database) name option that must be able to name one."""
        text = opt_text(block, key)
        if text is None or "${" in text or "{{" in text:
            return
        try:
            parse(text)
        except NameProblem as e:
            self.error(prefix + key, f"{key} {text!r} is not a name: {e}",
                       hint='quote a part holding a dot or a quote: table = "schema.\\"my.table\\""')

    def enum(self, key: str, allowed: tuple[str, ...]) -> None:
        value = opt(self.options, key)
        if value is None:
            return
        given = str(value).strip()
        if given.upper() in allowed:
            return
        close = difflib.get_close_matches(given.upper(), list(allowed), n=1, cutoff=0.5)
        self.error(key, f"unknown {key} '{given}'",
                   hint=f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(allowed)}")


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Option checks: exclusive source options, numbers, enums, the sink's query form. What
    SeaTunnel rejects but existing configs rely on planning (no query) fails validate only."""
    c = _Checker(plugin, job)
    _check_connection(c)
    if plugin.section == SOURCE:
        _check_source(c)
    else:
        _check_sink(c)
    return c.problems


def _check_connection(c: _Checker) -> None:
    """What the source and the sink share: the connection options and ``field_ide``."""
    if not c.plugin.has("url") and not c.plugin.has("jdbc_conn_id"):
        c.error(None, "the option 'url' is required",
                hint='set url = "jdbc:postgresql://host:5432/db", or jdbc_conn_id = "<an Airflow connection>"')
    if not c.plugin.has("driver") and not c.plugin.has("jdbc_conn_id"):
        c.error(None, "the option 'driver' is required",
                hint='set driver = "org.postgresql.Driver" (the JDBC driver class), or jdbc_conn_id = "<an Airflow '
                     'connection>": its driver_class extra, else the usual class of its database')
    c.integer(c.options, "connection_check_timeout_sec", 1)
    c.boolean("use_kerberos")
    if as_bool(opt(c.options, "use_kerberos")) is True:
        c.cannot_run("use_kerberos", "Kerberos authentication is not supported by this package")
    if opt(c.options, "properties") is not None and not isinstance(opt(c.options, "properties"), Mapping):
        c.error("properties", "properties must be a map of JDBC connection properties")
    c.enum("field_ide", FIELD_IDE)


def _check_source(c: _Checker) -> None:
    options = c.options
    c.integer(options, "fetch_size", 0)
    c.integer(options, "split.size", 1)
    where = opt_text(options, "where_condition")
    if where and not where.lower().startswith("where"):
        c.error("where_condition", f"where_condition must start with 'where', found {where!r}")
    items = opt(options, "table_list")
    single = bool(opt_text(options, "table_path") or opt_text(options, "query"))
    blocks: list[tuple[str, Mapping[str, Any]]] = [("", options)]
    if items is not None:
        if single:
            c.error("table_list", "Please configure either table_list or table_path/query, not both")
        if not isinstance(items, list) or not items or not all(isinstance(i, Mapping) for i in items):
            c.error("table_list", "table_list must be a non-empty list of {table_path, query, partition_*} blocks")
            return
        blocks = [(f"table_list[{i}].", item) for i, item in enumerate(items)]
        paths = [str(opt_text(i, "table_path")) for i in items if opt_text(i, "table_path")]
        for path in sorted({p for p in paths if paths.count(p) > 1}):
            c.error("table_list", f"table_list names the table_path '{path}' twice")
    elif not single:
        c.cannot_run(None, "the Jdbc source needs query, table_path or table_list",
                     hint='set query = "SELECT ..." or table_path = "db.schema.table"')
    for prefix, block in blocks:
        _check_source_table(c, prefix, block)


def _check_source_table(c: _Checker, prefix: str, block: Mapping[str, Any]) -> None:
    """One table of the source (the block, or a ``table_list`` item): what it reads and its splits."""
    if prefix and not (opt_text(block, "table_path") or opt_text(block, "query")):
        c.error(prefix.rstrip("."), "each table_list item needs table_path or query")
    c.name(block, "table_path", prefix)
    c.integer(block, "partition_num", 1, prefix)
    bounds = []
    for key in ("partition_lower_bound", "partition_upper_bound"):
        raw = opt(block, key)
        if raw is not None and to_decimal(raw) is None:
            c.error(prefix + key, f"{key} must be a number, found {raw!r}")
        bounds.append(to_decimal(raw))
    low, high = bounds
    if low is not None and high is not None and low > high:
        c.error(prefix + "partition_lower_bound", f"partition_lower_bound {low} is greater than "
                                                  f"partition_upper_bound {high}")


def _check_sink(c: _Checker) -> None:
    options = c.options
    for key in _SINK_FLAGS:
        c.boolean(key)
    c.integer(options, "batch_size", 1)
    c.integer(options, "max_retries", 0)
    c.integer(options, "max_commit_attempts", 1)
    c.name(options, "table")
    c.name(options, "database", parse=single_name)
    c.name(options, "schema", parse=single_name)
    query = opt_text(options, "query")
    if query:
        try:
            values_clause(query)
        except Exception as e:  # RuntimeConfigError: its cause is the message
            c.cannot_run("query", getattr(e, "cause", str(e)),
                         hint='write it as INSERT INTO t (a, b) VALUES (?, ?), or use generate_sink_sql = true')
    elif as_bool(opt(options, "generate_sink_sql")) is not True:
        c.cannot_run(None, "the Jdbc sink needs query, or generate_sink_sql = true with database and table",
                     hint='set generate_sink_sql = true and table = "schema.table" (or query = "INSERT ...")')
    c.enum("schema_save_mode", SCHEMA_SAVE_MODES)
    c.enum("data_save_mode", DATA_SAVE_MODES)
    if str(opt(options, "data_save_mode", "")).strip().upper() == "CUSTOM_PROCESSING" and not opt_text(
            options, "custom_sql"):
        c.error("custom_sql", "custom_sql is required when data_save_mode is CUSTOM_PROCESSING")
    keys = opt(options, "primary_keys")
    if keys is not None and not isinstance(keys, (list, str)):
        c.error("primary_keys", "primary_keys must be a list of field names")


def key_problems(plugin: PluginConfig, job: JobConfig, inputs: list[Schema | None]) -> list[Problem]:
    """A sink's ``primary_keys`` that are not among its input's fields (when they are known)."""
    known = inputs[0] if plugin.section == SINK and inputs and all(i is not None for i in inputs) else None
    if known is None:
        return []
    names = {n.lower(): n for n in known.names}
    problems = []
    for key in as_list(plugin.get("primary_keys")):
        key = str(key).strip()
        if "${" in key or key.lower() in names:
            continue
        close = difflib.get_close_matches(key.lower(), list(names), n=1)
        problems.append(job.problem(f"primary_keys names '{key}', which is not among the input fields", plugin,
                                    key="primary_keys", hint=f"did you mean '{names[close[0]]}'?" if close
                                    else "fields: " + ", ".join(known.names)))
    return problems
