"""Iceberg options, declared once (:data:`SPEC`) and read once for both phases, named as SeaTunnel's
Iceberg connector names them.

:func:`source_options` and :func:`sink_options` turn a block, typed by :data:`SPEC`, into
:class:`SourceOptions` / :class:`SinkOptions` or raise :class:`OptionError` naming the key for a rule
the declaration cannot state (the compile-time check makes it a located problem, the run a
``RuntimeConfigError``).

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

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ..lakehouse.options import (
    PLACEHOLDER,
    SinkKeys,
    column_names,
    common_options,
    exclusive,
    placeholder_free,
    settings_map,
)

__all__ = ["SPEC", "Catalog", "OptionError", "SinkOptions", "SourceOptions", "TableRef", "parse", "sink_options",
           "source_options"]

NAME = "Iceberg"
CONN_OPTION = "iceberg_conn_id"
CATALOG_CONFIG = "iceberg.catalog.config"
#: the catalog entries an Airflow connection supplies (set by this package only, at run time)
CONNECTION_CONFIG = "iceberg.catalog.connection"
HADOOP_CONFIG = "hadoop.config"
CATALOG_TYPES = ("hadoop", "hive", "jdbc", "rest")
STREAM_SCAN_STRATEGIES = ("FROM_LATEST_SNAPSHOT", "FROM_EARLIEST_SNAPSHOT", "TABLE_SCAN_THEN_INCREMENTAL",
                          "FROM_SNAPSHOT_ID", "FROM_SNAPSHOT_TIMESTAMP")
PRIMARY_KEYS, PARTITION_KEYS = "iceberg.table.primary-keys", "iceberg.table.partition-keys"
UPSERT, EVOLUTION = "iceberg.table.upsert-mode-enabled", "iceberg.table.schema-evolution-enabled"
WRITE_PROPS, CREATE_PROPS = "iceberg.table.write-props", "iceberg.table.auto-create-props"
BRANCH = "iceberg.table.commit-branch"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: a branch name: Iceberg takes any text; this package quotes it as an identifier and in a string literal
_BRANCH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def _snapshot(key: str, what: str) -> Option:
    return Option(key, "long", description=what, minimum=0, sections=(SOURCE,))


SPEC = OptionSpec((
    Option("catalog_name", default="default", identity=True, allow_blank=False, description="The catalog's name in "
           "the job (without a catalog config: a Spark catalog the env configures)."),
    Option(CONN_OPTION, identity=True, description="An Airflow connection giving the catalog's address and "
           "credentials (the block's catalog config wins)."),
    Option("namespace", default="default", identity=True, allow_blank=False, description="The table's namespace."),
    Option("table", identity=True, allow_blank=False, description="The table (or table_list)."),
    Option("table_list", "any", identity=True, sections=(SOURCE,), description="Several tables, each a block of "
           "namespace and table."),
    Option(CATALOG_CONFIG, "map", description="Iceberg's catalog properties: type (hadoop, hive, jdbc, rest) or "
           "catalog-impl, warehouse, uri..."),
    Option(CONNECTION_CONFIG, "map", secret=True, description=f"The catalog entries {CONN_OPTION}'s connection "
           "gives (set by this package at run time)."),
    Option(HADOOP_CONFIG, "map", description="Hadoop settings of the catalog's file IO."),
    Option("iceberg.hadoop-conf-path", description="Not supported here: put the Hadoop files in HADOOP_CONF_DIR."),
    Option("kerberos_principal", description="Not supported here."),
    Option("kerberos_keytab_path", description="Not supported here."),
    *common_options("read_columns and the sink's keys"),
    Option("read_columns", "list", description="The columns read, in their order.", sections=(SOURCE,)),
    Option("schema", "map", description="The columns read (its fields' names), without read_columns.",
           sections=(SOURCE,)),
    _snapshot("use_snapshot_id", "BATCH time travel: the snapshot read."),
    _snapshot("use_snapshot_timestamp", "BATCH time travel: the table as of epoch milliseconds."),
    _snapshot("start_snapshot_id", "The snapshot after which an incremental read (or FROM_SNAPSHOT_ID) starts."),
    _snapshot("end_snapshot_id", "The last snapshot of an incremental read (default: the newest)."),
    _snapshot("start_snapshot_timestamp", "STREAMING FROM_SNAPSHOT_TIMESTAMP: where a new stream starts."),
    Option("stream_scan_strategy", "enum", "FROM_LATEST_SNAPSHOT", "STREAMING: where a new stream starts.",
           choices=STREAM_SCAN_STRATEGIES, sections=(SOURCE,)),
    Option("increment.scan-interval", "long", description="STREAMING: milliseconds between scans.", minimum=0,
           sections=(SOURCE,)),
    Option(PRIMARY_KEYS, "list", description="Upserts: a row replaces the table's row of its key, DELETE rows "
           "delete it.", sections=(SINK,)),
    Option(UPSERT, "bool", False, "Upsert by the primary keys.", sections=(SINK,)),
    Option(PARTITION_KEYS, "list", description="The partition columns of a table the sink creates.",
           sections=(SINK,)),
    Option(CREATE_PROPS, "map", description="Table properties of a table the sink creates.", sections=(SINK,)),
    Option(WRITE_PROPS, "map", description="Iceberg write options of every commit.", sections=(SINK,)),
    Option(EVOLUTION, "bool", False, "New columns of the rows join the table.", sections=(SINK,)),
    Option(BRANCH, default="main", allow_blank=False, description="The branch the commits land on.", sections=(SINK,)),
))


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
class SinkOptions(SinkKeys):
    catalog: Catalog
    table: TableRef
    create_props: Mapping[str, str] = field(default_factory=dict)
    write_props: Mapping[str, str] = field(default_factory=dict)
    schema_evolution: bool = False
    upsert: bool = False
    branch: str = "main"


def _string_map(o: ParsedOptions, key: str, hint: str) -> dict[str, str]:
    return settings_map(o[key], key, f"{key}: '{{name}}' must be a single value", hint)


def _catalog(o: ParsedOptions) -> Catalog:
    hint = f'{CATALOG_CONFIG} = {{ type = "hadoop", warehouse = "file:///data/iceberg" }}'
    config = {**_string_map(o, CONNECTION_CONFIG, hint), **_string_map(o, CATALOG_CONFIG, hint)}
    name = o["catalog_name"].strip()
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
    return Catalog(name, config, _string_map(o, HADOOP_CONFIG, f'{HADOOP_CONFIG} = {{ "fs.defaultFS" = "..." }}'))


def _table(o: ParsedOptions, placeholders: bool) -> TableRef:
    namespace, table = o["namespace"].strip(), o["table"]
    if table is None:
        raise OptionError("table", "the table is not named: set table", 'table = "orders"')
    table = table.strip()
    for key, value in (("namespace", namespace), ("table", table)):
        if not placeholders:
            placeholder_free(key, value)
        bare = PLACEHOLDER.sub("x", value)
        if "`" in bare or "/" in bare or not bare.strip("."):
            raise OptionError(key, f"{key} '{value}' must be a name")
    return TableRef(namespace, table)


def _source_tables(o: ParsedOptions) -> tuple[TableRef, ...]:
    listed = o["table_list"]
    if listed is None:
        return (_table(o, False),)
    if not isinstance(listed, list) or not listed or not all(isinstance(t, Mapping) for t in listed):
        raise OptionError("table_list", "table_list must be a list of tables",
                          'table_list = [{ namespace = "db", table = "a" }, { namespace = "db", table = "b" }]')
    if o["table"] is not None:
        raise OptionError("table", "set either table or table_list, not both", "keep one of them")
    return tuple(_table(SPEC.parse({"namespace": o["namespace"], **t}, SOURCE), False) for t in listed)


def _schema_columns(o: ParsedOptions) -> tuple[str, ...]:
    fields = (o["schema"] or {}).get("fields")
    return tuple(str(k) for k in fields) if isinstance(fields, Mapping) else ()


def source_options(options: Mapping[str, Any]) -> SourceOptions:
    """A source block, checked."""
    o = SPEC.parse(options, SOURCE)
    catalog, tables = _catalog(o), _source_tables(o)
    columns = column_names(o, "read_columns") or _schema_columns(o)
    exclusive(o, "use_snapshot_id", "use_snapshot_timestamp", "start_snapshot_id")
    strategy = o["stream_scan_strategy"]
    for needs, key in (("FROM_SNAPSHOT_ID", "start_snapshot_id"),
                       ("FROM_SNAPSHOT_TIMESTAMP", "start_snapshot_timestamp")):
        if strategy == needs and o[key] is None:
            raise OptionError(key, f"stream_scan_strategy {needs} needs {key}", f"{key} = ...")
    if o["end_snapshot_id"] is not None and o["start_snapshot_id"] is None:
        raise OptionError("end_snapshot_id", "end_snapshot_id ends an incremental read: it needs start_snapshot_id")
    return SourceOptions(catalog, tables, o["case_sensitive"], columns, o["use_snapshot_id"],
                         o["use_snapshot_timestamp"], o["start_snapshot_id"], o["end_snapshot_id"],
                         o["start_snapshot_timestamp"], strategy)


def sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """A sink block, checked."""
    o = SPEC.parse(options, SINK)
    catalog, table = _catalog(o), _table(o, True)
    keys, partitions = column_names(o, PRIMARY_KEYS), column_names(o, PARTITION_KEYS)
    if o[UPSERT] and not keys:
        raise OptionError(UPSERT, f"{UPSERT} needs {PRIMARY_KEYS}", f'{PRIMARY_KEYS} = "id"')
    branch = o[BRANCH].strip() or "main"
    if not _BRANCH.match(branch):
        raise OptionError(BRANCH, f"{BRANCH} '{branch}' must be a branch name (letters, digits, _, - and .)")
    props_hint = '{ "write.format.default" = "parquet" }'
    return SinkOptions(catalog, table, _string_map(o, CREATE_PROPS, f"{CREATE_PROPS} = {props_hint}"),
                       _string_map(o, WRITE_PROPS, f"{WRITE_PROPS} = {props_hint}"), o[EVOLUTION], o[UPSERT], branch,
                       case_sensitive=o["case_sensitive"], primary_keys=keys, partition_keys=partitions,
                       schema_save_mode=o["schema_save_mode"], data_save_mode=o["data_save_mode"])


def parse(options: Mapping[str, Any], section: str) -> SourceOptions | SinkOptions:
    return sink_options(options) if section == SINK else source_options(options)
