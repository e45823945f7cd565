"""Plugins by name (case-insensitive), extensible through an entry point.

Third-party packages register a :class:`~.connector.Connector` under the entry-point group
``airflow_provider_seatunnel.connectors`` (an instance, or a class or callable returning one).
Entry points are read only when a name is not a built-in, so parsing stays cheap.

The built-in plugins are listed here as data, the module that defines each one's ``CONNECTOR``
by name, as an entry point names its object: this layer imports no connector, and a job loads
the modules of its own plugins only. (They are not entry points themselves so that a driver
that runs this package from a zip, without its distribution metadata, still finds them.)
"""

from __future__ import annotations

import importlib
import logging
from functools import cache, lru_cache

from .connector import SINK, SOURCE, TRANSFORM, Connector, KnownPlugin
from .secrets import SECRET_OPTIONS

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "airflow_provider_seatunnel.connectors"

#: The package holding the built-in connectors.
BUILTIN_PACKAGE = __package__.rsplit(".", 1)[0] + ".connectors"
#: Built-in plugins: lower-cased name -> the module (in :data:`BUILTIN_PACKAGE`) defining its
#: ``CONNECTOR`` (or ``module:NAME``, another object of the module), imported when the name is first asked for.
_BUILTIN_MODULES = {
    "fakesource": "fakesource", "localfile": "localfile", "console": "console", "assert": "assert_",
    "jdbc": "jdbc", "sql": "sql", "fieldmapper": "field_mapper", "filter": "filter", "copy": "copy",
    "replace": "replace", "split": "split", "filterrowkind": "filter_row_kind",
    "rowkindextractor": "row_kind_extractor", "jsonpath": "json_path",
    "redis": "redis",
    "rabbitmq": "rabbitmq",
    "rocketmq": "rocketmq",
    "http": "http",
    "github": "http.variants:GITHUB", "gitlab": "http.variants:GITLAB", "jira": "http.variants:JIRA",
    "klaviyo": "http.variants:KLAVIYO", "lemlist": "http.variants:LEMLIST", "notion": "http.variants:NOTION",
    "onesignal": "http.variants:ONESIGNAL", "persistiq": "http.variants:PERSISTIQ",
    "s3file": "s3file",
    "hive": "hive",
    "ossfile": "objectstores.ossfile", "cosfile": "objectstores.cosfile", "obsfile": "objectstores.obsfile",
    "ftpfile": "remotefile.ftp", "sftpfile": "remotefile.sftp", "hdfsfile": "hdfsfile",
    "kafka": "kafka",
    "elasticsearch": "elasticsearch", "easysearch": "elasticsearch.easysearch",
    "delta": "delta",
    "iceberg": "iceberg",
    "paimon": "paimon",
    "postgres-cdc": "postgres_cdc",
    "mysql-cdc": "mysql_cdc",
    "inmemory": "inmemory",
    "dynamiccompile": "dynamic_compile",
    "llm": "models.llm",
    "embedding": "models.embedding",
    "mongodb": "mongodb",
    "influxdb": "influxdb",
    "activemq": "activemq",
    "mongodb-cdc": "mongodb_cdc",
    "emailsink": "email",
    "doris": "doris",
    "starrocks": "starrocks",
    "selectdbcloud": "selectdb",
    "cassandra": "cassandra",
    "hbase": "hbase",
    "clickhouse": "clickhouse",
    "pulsar": "pulsar",
}

#: SeaTunnel plugins this package knows of but cannot run: they plan, with a warning.
_KNOWN_ELSEWHERE = {
    SOURCE: ("SqlServer-CDC", "Oracle-CDC",
             "S3File",
             "Socket", "Redis", "Hudi", "Doris", "StarRocks",
             "Kudu", "Starrocks"),
    SINK: ("S3File",
           "Socket", "Redis", "Hudi",
           "Kudu", "Feishu", "DingTalk"),
    TRANSFORM: ("TableRename", "TableMerge", "Metadata", "FieldRename", "TableFilter"),
}


@cache
def _builtin(key: str) -> Connector | None:
    """The built-in connector of a lower-cased name (its module imported now); None for other names."""
    module = _BUILTIN_MODULES.get(key)
    if module is None:
        return None
    module, _, attribute = module.partition(":")
    connector = getattr(importlib.import_module(f"{BUILTIN_PACKAGE}.{module}"), attribute or "CONNECTOR")
    return connector if isinstance(connector, Connector) else None


@lru_cache(maxsize=1)
def _known_elsewhere() -> dict[str, Connector]:
    merged: dict[str, set[str]] = {}
    for kind, names in _KNOWN_ELSEWHERE.items():
        for name in names:
            merged.setdefault(name, set()).add(kind)
    table: dict[str, Connector] = {}
    for name, kinds in merged.items():  # the first spelling of a name wins ("StarRocks" over "Starrocks")
        table.setdefault(name.lower(), KnownPlugin(name, frozenset(kinds)))
    return table


def _builtins() -> dict[str, Connector]:
    """Every built-in connector by lower-cased name (imports all their modules)."""
    loaded = {key: _builtin(key) for key in _BUILTIN_MODULES}
    return {**_known_elsewhere(), **{key: c for key, c in loaded.items() if c is not None}}


@lru_cache(maxsize=1)
def _plugins() -> dict[str, Connector]:
    from importlib.metadata import entry_points

    table: dict[str, Connector] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            connector = obj if isinstance(obj, Connector) else obj()
        except Exception as e:  # a broken third-party plugin must not break every job
            log.warning("cannot load SeaTunnel connector plugin %s: %s", ep.name, e)
            continue
        if isinstance(connector, Connector):
            table[connector.name.lower()] = connector
    return table


def get_connector(name: str, section: str | None = None) -> Connector | None:
    """The connector named ``name`` (any case): a built-in, else an installed plugin's, else a
    SeaTunnel plugin known to run elsewhere only (it plans, with a warning); None if unknown.
    Entry points are read only for names that are not built-ins. Given the ``section`` a block stands
    in, a connector that does not declare that section gives way to the SeaTunnel plugin of its name
    known to run elsewhere there (a connector here that covers other sections only)."""
    key = name.strip().lower()
    found = _builtin(key) or _plugins().get(key) or _known_elsewhere().get(key)
    if section is None or found is None or section in found.capabilities.sections:
        return found
    known = _known_elsewhere().get(key)
    return known if known is not None and section in known.capabilities.sections else found


def secret_options(name: str) -> frozenset[str]:
    """Option names whose values are secrets in a block of plugin ``name``: the common ones and
    those its connector declares (:attr:`.connector.Connector.secrets`)."""
    connector = get_connector(name)
    return SECRET_OPTIONS | connector.secrets if connector is not None else SECRET_OPTIONS


def available(kind: str | None = None) -> list[str]:
    """Names of runnable connectors (optionally of one kind), sorted."""
    table = {**_builtins(), **_plugins()}
    kinds = [kind] if kind else [SOURCE, TRANSFORM, SINK]
    return sorted(c.name for c in table.values() if any(c.can_run(k) for k in kinds))
