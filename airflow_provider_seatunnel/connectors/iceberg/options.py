"""Iceberg options, read once for both phases, named as SeaTunnel's Iceberg connector names them.

:func:`source_options` and :func:`sink_options` turn a block into :class:`SourceOptions` /
:class:`SinkOptions` or raise :class:`OptionError` naming the key (the compile-time check makes it a
located problem, the run a ``RuntimeConfigError``).

The table: ``catalog_name`` (``default``), ``namespace`` (``default``) and ``table``, in the catalog that
``iceberg.catalog.config`` describes (Iceberg's catalog properties: ``type`` = ``hadoop``, ``hive``,
``jdbc`` or ``rest``, or ``catalog-impl``; ``warehouse``, ``uri``, ``jdbc.*``, ``token``...). Its address
and credentials may come from an Airflow connection instead (``iceberg_conn_id``: the connection's
entries lie under the block's own, which win). Without either, ``catalog_name`` must name a Spark
catalog the job's ``env`` configures itself (``spark.sql.catalog.<catalog_name>``). ``hadoop.config``:
Hadoop settings for the catalog's file IO. A sink's ``namespace`` and ``table`` may hold the upstream
table's placeholders (``${database_name}``, ``${table_name}``...), expanded per table.

Both: ``case_sensitive`` (false): whether ``read_columns`` and the sink's keys match the table's
columns in case.

Source: ``read_columns`` (or ``schema``'s field names: a projection, in its order); BATCH time travel
``use_snapshot_id`` or ``use_snapshot_timestamp`` (epoch milliseconds), or an incremental read of the
appends after ``start_snapshot_id`` (exclusive) up to ``end_snapshot_id`` (inclusive, default: the
newest); STREAMING ``stream_scan_strategy`` (``FROM_LATEST_SNAPSHOT``, the default;
``FROM_EARLIEST_SNAPSHOT``, ``TABLE_SCAN_THEN_INCREMENTAL``, ``FROM_SNAPSHOT_ID`` with
``start_snapshot_id``, ``FROM_SNAPSHOT_TIMESTAMP`` with ``start_snapshot_timestamp``), where a new
stream starts; ``table_list``: several tables, each a block of these options.

Sink: ``iceberg.table.primary-keys`` (upserts: a row replaces the table's row of its key, DELETE rows
delete it), ``iceberg.table.upsert-mode-enabled`` (needs primary keys), ``iceberg.table.partition-keys``
(the partition columns of a table the sink creates), ``iceberg.table.auto-create-props`` (table
properties of a table the sink creates), ``iceberg.table.write-props`` (Iceberg write options of every
commit), ``iceberg.table.schema-evolution-enabled`` (new columns of the rows join the table),
``iceberg.table.commit-branch`` (the branch the commits land on, ``main`` by default),
``schema_save_mode``, ``data_save_mode``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi.options import (
    OptionError,
    as_int,
    bool_option,
    choice_option,
    names_option,
    text_option,
)
from ...spi.options import option as opt

__all__ = ["Catalog", "OptionError", "SinkOptions", "SourceOptions", "TableRef", "parse", "sink_options",
           "source_options"]

NAME = "Iceberg"
CONN_OPTION = "iceberg_conn_id"
CATALOG_CONFIG = "iceberg.catalog.config"
#: the catalog entries an Airflow connection supplies (set by this package only, at run time)
CONNECTION_CONFIG = "iceberg.catalog.connection"
HADOOP_CONFIG = "hadoop.config"
CATALOG_TYPES = ("hadoop", "hive", "jdbc", "rest")
SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")
STREAM_SCAN_STRATEGIES = ("FROM_LATEST_SNAPSHOT", "FROM_EARLIEST_SNAPSHOT", "TABLE_SCAN_THEN_INCREMENTAL",
                          "FROM_SNAPSHOT_ID", "FROM_SNAPSHOT_TIMESTAMP")
PRIMARY_KEYS, PARTITION_KEYS = "iceberg.table.primary-keys", "iceberg.table.partition-keys"
UPSERT, EVOLUTION = "iceberg.table.upsert-mode-enabled", "iceberg.table.schema-evolution-enabled"
WRITE_PROPS, CREATE_PROPS = "iceberg.table.write-props", "iceberg.table.auto-create-props"
BRANCH = "iceberg.table.commit-branch"
#: the placeholders a sink's table options may hold (the upstream table's names)
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Catalog:
    """The catalog: its name in the job, and Iceberg's catalog properties (empty: a Spark catalog the
    env configures), the connection's entries under the block's."""

    name: str = "default"
    config: Mapping[str, str] = field(default_factory=dict)
    hadoop: Mapping[str, str] = field(default_factory=dict)

    @property
    def type(self) -> str | None:
        return self.config.get("type")


@dataclass(frozen=True)
class TableRef:
    """A table of the catalog (names as written; a sink's may hold placeholders)."""

    namespace: str
    table: str


@dataclass(frozen=True)
class SourceOptions:
    catalog: Catalog
    tables: tuple[TableRef, ...]
    case_sensitive: bool = False
    read_columns: tuple[str, ...] = ()
    snapshot_id: int | None = None  # use_snapshot_id
    snapshot_timestamp: int | None = None  # use_snapshot_timestamp, epoch milliseconds
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    start_snapshot_timestamp: int | None = None
    stream_scan_strategy: str = "FROM_LATEST_SNAPSHOT"


@dataclass(frozen=True)
class SinkOptions:
    catalog: Catalog
    table: TableRef
    case_sensitive: bool = False
    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    schema_save_mode: str = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode: str = "APPEND_DATA"
    create_props: Mapping[str, str] = field(default_factory=dict)
    write_props: Mapping[str, str] = field(default_factory=dict)
    schema_evolution: bool = False
    upsert: bool = False
    branch: str = "main"










def _string_map(options: Mapping[str, Any], key: str, hint: str) -> dict[str, str]:
    value = opt(options, key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise OptionError(key, f"{key} must be a map of settings", hint)
    out: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, (Mapping, list)) or item is None:
            raise OptionError(key, f"{key}: '{name}' must be a single value", hint)
        out[str(name)] = ("true" if item else "false") if isinstance(item, bool) else str(item)
    return out


def _catalog(options: Mapping[str, Any]) -> Catalog:
    hint = f'{CATALOG_CONFIG} = {{ type = "hadoop", warehouse = "file:///data/iceberg" }}'
    config = {**_string_map(options, CONNECTION_CONFIG, hint), **_string_map(options, CATALOG_CONFIG, hint)}
    name = text_option(options, "catalog_name", "default") or "default"
    if not _NAME.match(name):
        raise OptionError("catalog_name", f"catalog_name '{name}' must be a name (letters, digits, _)")
    kind = config.get("type")
    if kind is not None:
        config["type"] = kind.strip().lower()
        if config["type"] not in CATALOG_TYPES:
            raise OptionError(CATALOG_CONFIG, f"{CATALOG_CONFIG}: unknown catalog type '{kind}'",
                              f"use one of {', '.join(CATALOG_TYPES)}, or catalog-impl = \"<class>\" without type")
    elif config and "catalog-impl" not in config:
        raise OptionError(CATALOG_CONFIG, f"{CATALOG_CONFIG} names no catalog type", hint)
    for need, kinds in (("warehouse", ("hadoop",)), ("uri", ("jdbc", "rest"))):
        if config.get("type") in kinds and not config.get(need):
            raise OptionError(CATALOG_CONFIG, f"{CATALOG_CONFIG}: a {config['type']} catalog needs {need}",
                              f"add {need} = \"...\" to {CATALOG_CONFIG} (or take it from {CONN_OPTION})")
    return Catalog(name, config, _string_map(options, HADOOP_CONFIG, f'{HADOOP_CONFIG} = {{ "fs.defaultFS" = "..." }}'))


def _table(options: Mapping[str, Any], placeholders: bool) -> TableRef:
    namespace, table = text_option(options, "namespace", "default") or "default", text_option(options, "table")
    if table is None:
        raise OptionError("table", "the table is not named: set table", 'table = "orders"')
    for key, value in (("namespace", namespace), ("table", table)):
        bare = PLACEHOLDER.sub("x", value)
        if not placeholders and bare != value:
            raise OptionError(key, f"{key} '{value}' holds a placeholder: only a sink's table options are expanded "
                                   "per upstream table")
        if "`" in bare or "/" in bare or not bare.strip("."):
            raise OptionError(key, f"{key} '{value}' must be a name")
    return TableRef(namespace, table)


def _long(options: Mapping[str, Any], key: str) -> int | None:
    value = opt(options, key)
    if value is None:
        return None
    number = as_int(value)
    if number is None or number < 0:
        raise OptionError(key, f"{key} must be an integer >= 0, found {value!r}")
    return number


def _exclusive(options: Mapping[str, Any], *keys: str) -> None:
    given = [k for k in keys if opt(options, k) is not None]
    if len(given) > 1:
        raise OptionError(given[-1], f"{' and '.join(given)} exclude each other", "keep one of them")


def _source_tables(options: Mapping[str, Any]) -> tuple[TableRef, ...]:
    listed = opt(options, "table_list")
    if listed is None:
        return (_table(options, False),)
    if not isinstance(listed, list) or not listed or not all(isinstance(t, Mapping) for t in listed):
        raise OptionError("table_list", "table_list must be a list of tables",
                          'table_list = [{ namespace = "db", table = "a" }, { namespace = "db", table = "b" }]')
    if opt(options, "table") is not None:
        raise OptionError("table", "set either table or table_list, not both", "keep one of them")
    default = {"namespace": opt(options, "namespace", "default")}
    return tuple(_table({**default, **t}, False) for t in listed)


def source_options(options: Mapping[str, Any]) -> SourceOptions:
    """A source block, checked."""
    catalog, tables = _catalog(options), _source_tables(options)
    columns = names_option(options, "read_columns")
    if not columns and isinstance(opt(options, "schema"), Mapping):
        fields = opt(opt(options, "schema"), "fields")
        columns = tuple(str(k) for k in fields) if isinstance(fields, Mapping) else ()
    _exclusive(options, "use_snapshot_id", "use_snapshot_timestamp", "start_snapshot_id")
    strategy = choice_option(options, "stream_scan_strategy", STREAM_SCAN_STRATEGIES, "FROM_LATEST_SNAPSHOT")
    for needs, key in (("FROM_SNAPSHOT_ID", "start_snapshot_id"),
                       ("FROM_SNAPSHOT_TIMESTAMP", "start_snapshot_timestamp")):
        if strategy == needs and opt(options, key) is None:
            raise OptionError(key, f"stream_scan_strategy {needs} needs {key}", f"{key} = ...")
    end = _long(options, "end_snapshot_id")
    if end is not None and opt(options, "start_snapshot_id") is None:
        raise OptionError("end_snapshot_id", "end_snapshot_id ends an incremental read: it needs start_snapshot_id")
    return SourceOptions(catalog, tables, bool_option(options, "case_sensitive", False), columns,
                         _long(options, "use_snapshot_id"), _long(options, "use_snapshot_timestamp"),
                         _long(options, "start_snapshot_id"), end, _long(options, "start_snapshot_timestamp"), strategy)


def sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """A sink block, checked."""
    catalog, table = _catalog(options), _table(options, True)
    keys, partitions = names_option(options, PRIMARY_KEYS), names_option(options, PARTITION_KEYS)
    upsert = bool_option(options, UPSERT, False)
    if upsert and not keys:
        raise OptionError(UPSERT, f"{UPSERT} needs {PRIMARY_KEYS}", f'{PRIMARY_KEYS} = "id"')
    branch = text_option(options, BRANCH, "main") or "main"
    if not _NAME.match(branch):
        raise OptionError(BRANCH, f"{BRANCH} '{branch}' must be a branch name (letters, digits, _)")
    props_hint = '{ "write.format.default" = "parquet" }'
    return SinkOptions(catalog, table, bool_option(options, "case_sensitive", False), keys, partitions,
                       choice_option(options, "schema_save_mode", SCHEMA_SAVE_MODES, "CREATE_SCHEMA_WHEN_NOT_EXIST"),
                       choice_option(options, "data_save_mode", DATA_SAVE_MODES, "APPEND_DATA"),
                       _string_map(options, CREATE_PROPS, f"{CREATE_PROPS} = {props_hint}"),
                       _string_map(options, WRITE_PROPS, f"{WRITE_PROPS} = {props_hint}"),
                       bool_option(options, EVOLUTION, False), upsert, branch)


def parse(options: Mapping[str, Any], section: str) -> SourceOptions | SinkOptions:
    return sink_options(options) if section == "sink" else source_options(options)
