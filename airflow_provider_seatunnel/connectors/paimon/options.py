"""Paimon options, declared once (:data:`SPEC`) and read once for both phases, named as SeaTunnel's
Paimon connector names them.

:func:`source_options` and :func:`sink_options` turn a block, typed by :data:`SPEC`, into
:class:`SourceOptions` / :class:`SinkOptions` or raise :class:`OptionError` naming the key for a rule
the declaration cannot state (the compile-time check makes it a located problem, the run a
``RuntimeConfigError``).

Both sections: ``warehouse`` (the catalog's root: an absolute path, a ``file://`` URI, or an ``hdfs://`` /
``viewfs://`` URI), ``database``, ``table``, ``catalog_type`` (``filesystem`` or ``hive``: the tables stay in
the warehouse's layout, registered in the Hive metastore ``catalog_uri`` names), ``catalog_name`` (a label
only), ``hdfs_site_path`` (an ``hdfs-site.xml``), ``paimon.hadoop.conf`` (Hadoop settings) and
``paimon.hadoop.conf-path`` (a directory of ``core-site.xml``, ``hdfs-site.xml``, ``hive-site.xml``): the
Hadoop settings of an HDFS warehouse (:mod:`.hadoop`). An HDFS warehouse needs ``fs.defaultFS`` in them, as
SeaTunnel requires. A sink's ``database`` and ``table`` may hold the upstream table's placeholders.

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

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ..lakehouse.options import PLACEHOLDER, SinkKeys, column_names, common_options, placeholder_free, settings_map

__all__ = ["SPEC", "OptionError", "SinkOptions", "SourceOptions", "Table", "parse", "sink_options", "source_options"]

NAME = "Paimon"
CATALOG_TYPES = ("filesystem", "hive")
PRIMARY_KEYS, PARTITION_KEYS = "paimon.table.primary-keys", "paimon.table.partition-keys"
WRITE_PROPS, HADOOP_CONF = "paimon.table.write-props", "paimon.hadoop.conf"
CONF_PATH = "paimon.hadoop.conf-path"
#: the warehouse URI schemes that can run: local paths and HDFS (pypaimon's HDFS client, :mod:`.hadoop`)
LOCAL_SCHEMES, HDFS_SCHEMES = ("file",), ("hdfs", "viewfs")

SPEC = OptionSpec((
    Option("warehouse", identity=True, allow_blank=False, description="The catalog's root: an absolute path, a "
           "file:// URI or an hdfs:// (viewfs://) URI."),
    Option("database", identity=True, allow_blank=False, description="The table's database."),
    Option("table", identity=True, allow_blank=False, description="The table's name."),
    Option("catalog_type", "enum", "filesystem", "filesystem, or hive: the tables in the warehouse's layout, "
           "registered in the Hive metastore of catalog_uri.", choices=CATALOG_TYPES),
    Option("catalog_name", description="A label only."),
    Option("catalog_uri", description="The Hive metastore's thrift URI (catalog_type hive)."),
    Option("hdfs_site_path", description="An hdfs-site.xml of an HDFS warehouse's settings (read on the driver)."),
    Option(HADOOP_CONF, "map", description="Hadoop settings of an HDFS warehouse (fs.defaultFS, name services); "
           "they win over the files'."),
    Option(CONF_PATH, description="A directory of core-site.xml, hdfs-site.xml and hive-site.xml (read on the "
           "driver)."),
    *common_options("read_columns and the sink's keys"),
    Option("query", allow_blank=False, description="SELECT <columns or *> FROM <table> [WHERE <condition>]: a "
           "projection and a filter.", sections=(SOURCE,)),
    Option("read_columns", "list", description="The columns read (when query lists none).", sections=(SOURCE,)),
    Option(PRIMARY_KEYS, "list", description="Upserts: a row replaces the table's row of its key, DELETE rows "
           "delete it.", sections=(SINK,)),
    Option(PARTITION_KEYS, "list", description="The partition columns of a table the sink creates (among the "
           "primary keys when both are set).", sections=(SINK,)),
    Option(WRITE_PROPS, "map", description="Table options of a table the sink creates (bucket, "
           "changelog-producer...).", sections=(SINK,)),
))


@dataclass(frozen=True)
class Table:
    """The table: ``<warehouse>/<database>.db/<table>`` (as written; a sink's database and table may hold
    placeholders), the catalog it is found through, and the Hadoop settings of an HDFS warehouse."""

    warehouse: str
    database: str
    table: str
    catalog_type: str = "filesystem"
    catalog_uri: str | None = None
    hadoop: Mapping[str, str] = field(default_factory=dict)  # paimon.hadoop.conf
    hdfs_site_path: str | None = None
    conf_path: str | None = None

    def scheme(self) -> str:
        """The warehouse's URI scheme, lower case (``file`` for a path)."""
        found = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", self.warehouse)
        return found.group(1).lower() if found else "file"

    def is_local(self) -> bool:
        return self.scheme() in LOCAL_SCHEMES

    def is_hdfs(self) -> bool:
        return self.scheme() in HDFS_SCHEMES

    def root(self) -> str:
        """The warehouse as a local directory (``file://`` stripped), or its URI without a trailing ``/``."""
        return local_path(self.warehouse).rstrip("/") or "/"

    def uri(self) -> str:
        """The warehouse as a URI (``file:///data/paimon``, ``hdfs://ns/paimon``)."""
        return "file://" + self.root() if self.is_local() else self.root()

@dataclass(frozen=True)
class SourceOptions:
    table: Table
    case_sensitive: bool = False
    read_columns: tuple[str, ...] = ()
    where: str | None = None  # the query's WHERE condition, Spark SQL text


@dataclass(frozen=True)
class SinkOptions(SinkKeys):
    table: Table
    properties: Mapping[str, str] = field(default_factory=dict)


def local_path(warehouse: str) -> str:
    """``file:///x`` and ``file:/x`` as ``/x``; a path as it is."""
    if warehouse.startswith("file://"):
        return "/" + warehouse[len("file://"):].lstrip("/")
    if warehouse.startswith("file:"):
        return "/" + warehouse[len("file:"):].lstrip("/")
    return warehouse


def _name(o: ParsedOptions, key: str, placeholders: bool) -> str:
    value = o[key]
    if value is None:
        raise OptionError(key, f"{key} is required (the table is <warehouse>/<database>.db/<table>)",
                          f'{key} = "..."')
    value = value.strip()
    if not placeholders:
        placeholder_free(key, value)
    if "/" in value or value in (".", "..") or "." in PLACEHOLDER.sub("x", value):
        raise OptionError(key, f"{key} '{value}' must be a name (no '/' or '.')")
    return value


def table_of(o: ParsedOptions, placeholders: bool = False) -> Table:
    """``warehouse`` + ``database`` + ``table``, and the catalog they are read through."""
    warehouse = o["warehouse"]
    if warehouse is None:
        raise OptionError("warehouse", "warehouse is required: the Paimon warehouse's directory",
                          'warehouse = "/data/paimon"')
    warehouse = warehouse.strip()
    bare = PLACEHOLDER.sub("x", warehouse)
    if "{{" not in bare and "{%" not in bare and not re.match(r"^([A-Za-z][A-Za-z0-9+.-]*:|/)", bare):
        raise OptionError("warehouse", f"warehouse '{warehouse}' must be an absolute path or a URI",
                          'warehouse = "/data/paimon" (or "file:///data/paimon")')
    if o["catalog_type"] == "hive" and (o["catalog_uri"] is None or not o["catalog_uri"].strip()):
        raise OptionError("catalog_uri", "catalog_type hive needs catalog_uri (the metastore's thrift URI)",
                          'catalog_uri = "thrift://metastore:9083"')
    hadoop = settings_map(o[HADOOP_CONF], HADOOP_CONF, f"{HADOOP_CONF}: {{name}} must be a string, number or "
                          "boolean", f'{HADOOP_CONF} = {{ fs.defaultFS = "hdfs://namenode:8020" }}')
    table = Table(warehouse, _name(o, "database", placeholders), _name(o, "table", placeholders), o["catalog_type"],
                  (o["catalog_uri"] or "").strip() or None, hadoop, _path(o, "hdfs_site_path"), _path(o, CONF_PATH))
    if table.catalog_uri is not None and o["catalog_type"] == "hive":
        uris = [u.strip() for u in table.catalog_uri.split(",")]
        if any(not re.fullmatch(r"thrift://[^/:\s]+:\d{1,5}/?", u) for u in uris):
            raise OptionError("catalog_uri", f"catalog_uri '{table.catalog_uri}' must be thrift://host:port (a "
                                             "comma-separated list for several metastores)",
                              'catalog_uri = "thrift://metastore:9083"')
    return table


def _path(o: ParsedOptions, key: str) -> str | None:
    value = o[key]
    if value is None or not value.strip():
        return None
    return value.strip()


_SELECT = re.compile(r"^\s*select\s+(?P<cols>.+?)\s+from\s+(?P<table>[`\"\w.]+)(\s+where\s+(?P<where>.+?))?\s*;?\s*$",
                     re.IGNORECASE | re.DOTALL)
_REFUSED = re.compile(r"\b(group\s+by|order\s+by|having|limit|join|union)\b", re.IGNORECASE)


def _query(text: str | None, table: str) -> tuple[tuple[str, ...], str | None]:
    """``query``'s projection (empty: ``*``) and WHERE condition."""
    if text is None:
        return (), None
    text = text.strip()
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
    o = SPEC.parse(options, SOURCE)
    table = table_of(o)
    columns, where = _query(o["query"], table.table)
    read_columns = column_names(o, "read_columns")
    if columns and read_columns:
        raise OptionError("read_columns", "read_columns and query's column list exclude each other",
                          "keep one of them")
    return SourceOptions(table, o["case_sensitive"], columns or read_columns, where)


def sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """A sink block, checked."""
    o = SPEC.parse(options, SINK)
    table = table_of(o, placeholders=True)
    keys, partitions = column_names(o, PRIMARY_KEYS), column_names(o, PARTITION_KEYS)
    if keys and partitions:
        lowered = {k.lower() for k in keys}
        outside = [p for p in partitions if p.lower() not in lowered]
        if outside:
            raise OptionError(PARTITION_KEYS, f"{PARTITION_KEYS}: {', '.join(outside)} is not a primary key "
                                              "(a keyed Paimon table's partition keys are among its primary keys)")
    properties = settings_map(o[WRITE_PROPS], WRITE_PROPS, f"{WRITE_PROPS} must be a map of Paimon table options",
                              f'{WRITE_PROPS} = {{ bucket = "2" }}')
    return SinkOptions(table, properties, case_sensitive=o["case_sensitive"], primary_keys=keys,
                       partition_keys=partitions, schema_save_mode=o["schema_save_mode"],
                       data_save_mode=o["data_save_mode"])


def parse(options: Mapping[str, Any], section: str) -> SourceOptions | SinkOptions:
    return sink_options(options) if section == SINK else source_options(options)
