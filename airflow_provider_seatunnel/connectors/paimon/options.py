"""Paimon options, read once for both phases, named as SeaTunnel's Paimon connector names them.

:func:`source_options` and :func:`sink_options` turn a block into :class:`SourceOptions` /
:class:`SinkOptions` or raise :class:`OptionError` naming the key (the compile-time check makes it a
located problem, the run a ``RuntimeConfigError``).

Both sections: ``warehouse`` (the file-system catalog's root: an absolute path or ``file://`` URI),
``database``, ``table``, ``catalog_type`` (``filesystem``; ``hive`` is refused: pypaimon has no Hive
catalog), ``catalog_name`` (a label only), ``catalog_uri`` (with ``hive``), ``hdfs_site_path``,
``paimon.hadoop.conf`` and ``paimon.hadoop.conf-path`` (Hadoop settings: read, not used, since a local
warehouse needs none). A sink's ``database`` and ``table`` may hold the upstream table's placeholders.

Source: ``query``, a ``SELECT`` of the table: its column list projects, its ``WHERE`` filters (any
condition Spark SQL evaluates); ``read_columns`` projects too (when ``query`` does not).

Sink: ``paimon.table.primary-keys`` and ``paimon.table.partition-keys`` (a comma-separated string or a
list; the partition keys must be among the primary keys when both are set, as Paimon requires),
``paimon.table.write-props`` (table options of a table the sink creates: ``bucket``,
``changelog-producer``...), ``schema_save_mode``, ``data_save_mode``, ``case_sensitive``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi.options import OptionError, bool_option, choice_option, names_option, text_option
from ...spi.options import option as opt

__all__ = ["OptionError", "SinkOptions", "SourceOptions", "Table", "parse", "sink_options", "source_options"]

NAME = "Paimon"
SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")
CATALOG_TYPES = ("filesystem", "hive")
PRIMARY_KEYS, PARTITION_KEYS = "paimon.table.primary-keys", "paimon.table.partition-keys"
WRITE_PROPS, HADOOP_CONF = "paimon.table.write-props", "paimon.hadoop.conf"
#: the placeholders a sink's table options may hold (the upstream table's names)
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")


@dataclass(frozen=True)
class Table:
    """The table: ``<warehouse>/<database>.db/<table>`` in a file-system catalog (as written; a sink's
    database and table may hold placeholders)."""

    warehouse: str
    database: str
    table: str
    catalog_type: str = "filesystem"

    def is_local(self) -> bool:
        return local_path(self.warehouse).startswith("/")

    def root(self) -> str:
        """The warehouse as a local directory (``file://`` stripped)."""
        return local_path(self.warehouse)


@dataclass(frozen=True)
class SourceOptions:
    table: Table
    case_sensitive: bool = False
    read_columns: tuple[str, ...] = ()
    where: str | None = None  # the query's WHERE condition, Spark SQL text


@dataclass(frozen=True)
class SinkOptions:
    table: Table
    case_sensitive: bool = False
    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    schema_save_mode: str = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode: str = "APPEND_DATA"
    properties: Mapping[str, str] = field(default_factory=dict)




def local_path(warehouse: str) -> str:
    """``file:///x`` and ``file:/x`` as ``/x``; a path as it is."""
    if warehouse.startswith("file://"):
        return "/" + warehouse[len("file://"):].lstrip("/")
    if warehouse.startswith("file:"):
        return "/" + warehouse[len("file:"):].lstrip("/")
    return warehouse








def _name(options: Mapping[str, Any], key: str, placeholders: bool) -> str:
    value = text_option(options, key)
    if value is None:
        raise OptionError(key, f"{key} is required (the table is <warehouse>/<database>.db/<table>)",
                          f'{key} = "..."')
    if not placeholders and PLACEHOLDER.search(value):
        raise OptionError(key, f"{key} '{value}' holds a placeholder: only a sink's table options are expanded "
                               "per upstream table")
    if "/" in value or value in (".", "..") or "." in PLACEHOLDER.sub("x", value):
        raise OptionError(key, f"{key} '{value}' must be a name (no '/' or '.')")
    return value


def table_of(options: Mapping[str, Any], placeholders: bool = False) -> Table:
    """``warehouse`` + ``database`` + ``table``, and the catalog they are read through."""
    warehouse = text_option(options, "warehouse")
    if warehouse is None:
        raise OptionError("warehouse", "warehouse is required: the Paimon warehouse's directory",
                          'warehouse = "/data/paimon"')
    bare = PLACEHOLDER.sub("x", warehouse)
    if "{{" not in bare and "{%" not in bare and not re.match(r"^([A-Za-z][A-Za-z0-9+.-]*:|/)", bare):
        raise OptionError("warehouse", f"warehouse '{warehouse}' must be an absolute path or a URI",
                          'warehouse = "/data/paimon" (or "file:///data/paimon")')
    kind = str(opt(options, "catalog_type", "filesystem")).strip().lower()
    if kind not in CATALOG_TYPES:
        raise OptionError("catalog_type", f"unknown catalog_type '{kind}'", "use filesystem")
    if kind == "hive" and opt(options, "catalog_uri") is None:
        raise OptionError("catalog_uri", "catalog_type hive needs catalog_uri (the metastore's thrift URI)")
    map_value = opt(options, HADOOP_CONF)
    if map_value is not None and not isinstance(map_value, Mapping):
        raise OptionError(HADOOP_CONF, f"{HADOOP_CONF} must be a map of Hadoop settings")
    return Table(warehouse, _name(options, "database", placeholders), _name(options, "table", placeholders), kind)


_SELECT = re.compile(r"^\s*select\s+(?P<cols>.+?)\s+from\s+(?P<table>[`\"\w.]+)(\s+where\s+(?P<where>.+?))?\s*;?\s*$",
                     re.IGNORECASE | re.DOTALL)
_REFUSED = re.compile(r"\b(group\s+by|order\s+by|having|limit|join|union)\b", re.IGNORECASE)


def _query(options: Mapping[str, Any], table: str) -> tuple[tuple[str, ...], str | None]:
    """``query``'s projection (empty: ``*``) and WHERE condition."""
    text = text_option(options, "query")
    if text is None:
        return (), None
    found = _SELECT.match(text)
    hint = f"query = \"select id, name from {table} where id > 100\""
    if found is None or _REFUSED.search(text):
        raise OptionError("query", "query must be SELECT <columns or *> FROM <table> [WHERE <condition>] (no "
                                   "GROUP BY, ORDER BY, HAVING, LIMIT, JOIN or UNION)", hint)
    named = found.group("table").strip('`"').split(".")[-1]
    if named.lower() != table.lower() and not PLACEHOLDER.search(table):
        raise OptionError("query", f"query reads '{named}', the block's table is '{table}'", hint)
    cols = found.group("cols").strip()
    columns = () if cols == "*" else tuple(c.strip().strip('`"') for c in cols.split(","))
    if any(not re.fullmatch(r"[\w$]+", c) for c in columns):
        raise OptionError("query", f"query's columns must be plain column names, found '{cols}'", hint)
    return columns, found.group("where")


def source_options(options: Mapping[str, Any]) -> SourceOptions:
    """A source block, checked."""
    table = table_of(options)
    columns, where = _query(options, table.table)
    read_columns = names_option(options, "read_columns")
    if columns and read_columns:
        raise OptionError("read_columns", "read_columns and query's column list exclude each other",
                          "keep one of them")
    return SourceOptions(table, bool_option(options, "case_sensitive", False), columns or read_columns, where)


def _properties(options: Mapping[str, Any]) -> dict[str, str]:
    value = opt(options, WRITE_PROPS)
    if value is None:
        return {}
    if not isinstance(value, Mapping) or any(isinstance(v, (Mapping, list)) for v in value.values()):
        raise OptionError(WRITE_PROPS, f"{WRITE_PROPS} must be a map of Paimon table options",
                          f'{WRITE_PROPS} = {{ bucket = "2" }}')
    return {str(k): ("true" if v else "false") if isinstance(v, bool) else str(v) for k, v in value.items()}


def sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """A sink block, checked."""
    table = table_of(options, placeholders=True)
    keys, partitions = names_option(options, PRIMARY_KEYS), names_option(options, PARTITION_KEYS)
    if keys and partitions:
        lowered = {k.lower() for k in keys}
        outside = [p for p in partitions if p.lower() not in lowered]
        if outside:
            raise OptionError(PARTITION_KEYS, f"{PARTITION_KEYS}: {', '.join(outside)} is not a primary key "
                                              "(a keyed Paimon table's partition keys are among its primary keys)")
    return SinkOptions(table, bool_option(options, "case_sensitive", False), keys, partitions,
                       choice_option(options, "schema_save_mode", SCHEMA_SAVE_MODES, "CREATE_SCHEMA_WHEN_NOT_EXIST"),
                       choice_option(options, "data_save_mode", DATA_SAVE_MODES, "APPEND_DATA"), _properties(options))


def parse(options: Mapping[str, Any], section: str) -> SourceOptions | SinkOptions:
    return sink_options(options) if section == "sink" else source_options(options)
