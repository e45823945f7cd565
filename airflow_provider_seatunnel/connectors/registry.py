"""Plugins by name (case-insensitive), extensible through an entry point.

Third-party packages register a :class:`~.base.Connector` under the entry-point group
``airflow_provider_seatunnel.connectors`` (the object itself, or a callable returning it).
Entry points are read only when a name is not a built-in, so parsing stays cheap.
"""

from __future__ import annotations

import importlib
import logging
from functools import lru_cache

from .base import SINK, SOURCE, TRANSFORM, Connector

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "airflow_provider_seatunnel.connectors"

#: Built-in plugin modules, each defining ``CONNECTOR``.
_BUILTIN_MODULES = (
    "fakesource", "localfile", "console", "assert_", "jdbc",
    "sql", "field_mapper", "filter", "copy", "replace", "split", "filter_row_kind",
    "row_kind_extractor", "json_path",
)

#: SeaTunnel plugins this package knows of but cannot run: they plan, with a warning.
_KNOWN_ELSEWHERE = {
    SOURCE: ("Kafka", "MySQL-CDC", "Postgres-CDC", "SqlServer-CDC", "Oracle-CDC", "MongoDB-CDC",
             "Elasticsearch", "Hive", "HdfsFile", "S3File", "OssFile", "FtpFile", "SftpFile", "Http",
             "Pulsar", "Socket", "Redis", "MongoDB", "Iceberg", "Paimon", "Hudi", "Doris", "StarRocks",
             "Clickhouse", "Kudu", "InfluxDB", "Cassandra", "Starrocks"),
    SINK: ("Kafka", "Elasticsearch", "Hive", "HdfsFile", "S3File", "OssFile", "FtpFile", "SftpFile",
           "Http", "Pulsar", "Socket", "Redis", "MongoDB", "Iceberg", "Paimon", "Hudi", "Doris",
           "StarRocks", "Clickhouse", "Kudu", "InfluxDB", "Cassandra", "Email", "Feishu", "DingTalk"),
    TRANSFORM: ("TableRename", "TableMerge", "DynamicCompile", "LLM", "Embedding", "Metadata",
                "FieldRename", "TableFilter"),
}


@lru_cache(maxsize=1)
def _builtins() -> dict[str, Connector]:
    table: dict[str, Connector] = {}
    for module in _BUILTIN_MODULES:
        connector = importlib.import_module(f"{__package__}.{module}").CONNECTOR
        table[connector.name.lower()] = connector
    merged: dict[str, set[str]] = {}
    for kind, names in _KNOWN_ELSEWHERE.items():
        for name in names:
            merged.setdefault(name, set()).add(kind)
    for name, kinds in merged.items():
        table.setdefault(name.lower(), Connector(name=name, kinds=frozenset(kinds)))
    return table


@lru_cache(maxsize=1)
def _plugins() -> dict[str, Connector]:
    from importlib.metadata import entry_points

    table: dict[str, Connector] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            connector = obj() if callable(obj) and not isinstance(obj, Connector) else obj
        except Exception as e:  # a broken third-party plugin must not break every job
            log.warning("cannot load SeaTunnel connector plugin %s: %s", ep.name, e)
            continue
        if isinstance(connector, Connector):
            table[connector.name.lower()] = connector
    return table


def get_connector(name: str) -> Connector | None:
    """The connector named ``name`` (any case), a built-in or a plugin's; None if unknown."""
    key = name.strip().lower()
    return _builtins().get(key) or _plugins().get(key)


def available(kind: str | None = None) -> list[str]:
    """Names of runnable connectors (optionally of one kind), sorted."""
    table = {**_builtins(), **_plugins()}
    kinds = [kind] if kind else [SOURCE, TRANSFORM, SINK]
    return sorted(c.name for c in table.values() if any(c.can_run(k) for k in kinds))
