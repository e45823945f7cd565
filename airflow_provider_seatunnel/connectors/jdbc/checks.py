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
from ...spi.errors import RuntimeConfigError
from ...spi.options import MISSING, JobConfig, OptionError, PluginConfig, Problem, as_list
from ...spi.optionspec import ParsedOptions
from ...spi.schema import Schema
from ..sqlclient.dialects import NameProblem, single_name, split_name
from .options import SPEC, text, to_decimal
from .statements import values_clause


@dataclass
class _Checker:
    """The problems found in one block, and how each kind of option is checked."""

    plugin: PluginConfig
    job: JobConfig
    typed: ParsedOptions
    problems: list[Problem] = field(default_factory=list)

    @property
    def options(self) -> Mapping[str, Any]:
        return self.plugin.options

    def error(self, key: str | None, message: str, hint: str | None = None) -> None:
        self.problems.append(self.job.problem(message, self.plugin, key=key, hint=hint))

    def cannot_run(self, key: str | None, message: str, hint: str | None = None) -> None:
        """A warning that plans but fails validate (the job names what this package cannot run)."""
        self.problems.append(self.job.cannot_run(message, self.plugin, key=key, hint=hint))

    def item(self, block: Mapping[str, Any], key: str, prefix: str) -> Any:
        """A ``table_list`` item's option ``key`` typed as :data:`.options.SPEC` declares it (None when unset
        or wrong: an error at ``prefix + key`` says why)."""
        option = SPEC.get(key)
        raw = option.raw(block)[1]
        if raw is MISSING:
            return None
        try:
            return option.coerce(key, raw)
        except OptionError as e:
            self.error(prefix + key, e.message, e.hint)
            return None

    def name(self, value: str | None, key: str, prefix: str = "", parse: Any = split_name) -> None:
        """A table (or, with ``single_name``, database) name option that must be able to name one."""
        name = text(value)
        if name is None or "${" in name or "{{" in name:
            return
        try:
            parse(name)
        except NameProblem as e:
            self.error(prefix + key, f"{key} {name!r} is not a name: {e}",
                       hint='quote a part holding a dot or a quote: table = "schema.\\"my.table\\""')


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The rules across options (each option's own are :data:`.options.SPEC`'s): exclusive source options,
    ``table_list`` items, names, the sink's query form. What SeaTunnel rejects but existing configs rely on
    planning (no query) fails validate only."""
    typed = SPEC.valid(plugin.options, plugin.section)
    c = _Checker(plugin, job, typed or SPEC.parse({}, plugin.section))
    _check_connection(c)
    if typed is None:
        return c.problems  # a wrong option: the spec's problems say which
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
    if c.typed["use_kerberos"]:
        c.cannot_run("use_kerberos", "Kerberos authentication is not supported by this package")


def _check_source(c: _Checker) -> None:
    o = c.typed
    where = text(o["where_condition"])
    if where and not where.lower().startswith("where"):
        c.error("where_condition", f"where_condition must start with 'where', found {where!r}")
    items = o["table_list"]
    single = bool(text(o["table_path"]) or text(o["query"]))
    blocks: list[tuple[str, Mapping[str, Any]]] = [("", c.options)]
    if items is not None:
        if single:
            c.error("table_list", "Please configure either table_list or table_path/query, not both")
        if not isinstance(items, list) or not items or not all(isinstance(i, Mapping) for i in items):
            c.error("table_list", "table_list must be a non-empty list of {table_path, query, partition_*} blocks")
            return
        blocks = [(f"table_list[{i}].", item) for i, item in enumerate(items)]
        paths = [p for p in (text(c.item(i, "table_path", "")) for i in items) if p]
        for path in sorted({p for p in paths if paths.count(p) > 1}):
            c.error("table_list", f"table_list names the table_path '{path}' twice")
    elif not single:
        c.cannot_run(None, "the Jdbc source needs query, table_path or table_list",
                     hint='set query = "SELECT ..." or table_path = "db.schema.table"')
    for prefix, block in blocks:
        _check_source_table(c, prefix, block)


def _check_source_table(c: _Checker, prefix: str, block: Mapping[str, Any]) -> None:
    """One table of the source (the block, or a ``table_list`` item): what it reads and its splits."""
    if prefix:  # an item: its options typed here (the spec checks the block's own)
        path, query = c.item(block, "table_path", prefix), c.item(block, "query", prefix)
        c.item(block, "partition_num", prefix)
        if not (text(path) or text(query)):
            c.error(prefix.rstrip("."), "each table_list item needs table_path or query")
    else:
        path, query = c.typed["table_path"], c.typed["query"]
    c.name(path, "table_path", prefix)
    _check_params(c, prefix, block, query)
    bounds = []
    for key in ("partition_lower_bound", "partition_upper_bound"):
        raw = SPEC.get(key).raw(block)[1]
        raw = None if raw is MISSING else raw
        if raw is not None and to_decimal(raw) is None:
            c.error(prefix + key, f"{key} must be a number, found {raw!r}")
        bounds.append(to_decimal(raw))
    low, high = bounds
    if low is not None and high is not None and low > high:
        c.error(prefix + "partition_lower_bound", f"partition_lower_bound {low} is greater than "
                                                  f"partition_upper_bound {high}")


def _check_params(c: _Checker, prefix: str, block: Mapping[str, Any], query: Any) -> None:
    """``query_params``: a query to fill, one value per ``?`` placeholder (:mod:`.params`)."""
    from ..sqlclient.databases import dialect_of
    from .params import OPTION, bind_query

    params = c.item(block, OPTION, prefix) if prefix else c.typed[OPTION]
    if params is None:
        return
    if not text(query):
        c.error(prefix + OPTION, f"{OPTION} needs a query with ? placeholders")
        return
    dialect = dialect_of(text(c.options.get("url")) or "", text(c.options.get("dialect")),
                         text(c.options.get("compatible_mode")))
    try:
        bind_query(str(query), params, dialect)
    except RuntimeConfigError as e:
        c.error(prefix + OPTION, str(e.args[0] if e.args else e))


def _check_sink(c: _Checker) -> None:
    o = c.typed
    c.name(o["table"], "table")
    c.name(o["database"], "database", parse=single_name)
    c.name(o["schema"], "schema", parse=single_name)
    query = text(o["query"])
    if query:
        try:
            values_clause(query)
        except Exception as e:  # RuntimeConfigError: its cause is the message
            c.cannot_run("query", getattr(e, "cause", str(e)),
                         hint='write it as INSERT INTO t (a, b) VALUES (?, ?), or use generate_sink_sql = true')
    elif not o["generate_sink_sql"]:
        c.cannot_run(None, "the Jdbc sink needs query, or generate_sink_sql = true with database and table",
                     hint='set generate_sink_sql = true and table = "schema.table" (or query = "INSERT ...")')
    if o["data_save_mode"] == "CUSTOM_PROCESSING" and not text(o["custom_sql"]):
        c.error("custom_sql", "custom_sql is required when data_save_mode is CUSTOM_PROCESSING")


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
