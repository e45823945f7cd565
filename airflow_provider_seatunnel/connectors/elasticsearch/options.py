"""Elasticsearch and Easysearch options as SeaTunnel names them, read once for both phases.

:func:`parse` turns a block into :class:`SearchOptions` or raises :class:`OptionError` naming the key:
the compile-time checks make it a located problem, the run a ``RuntimeConfigError``. Names, defaults and
required options are SeaTunnel's: ``hosts`` always; a source ``index`` or ``index_list`` (Easysearch:
``index``; ``source`` and ``schema`` exclusive); a sink ``index`` and, for Elasticsearch, the save modes
(defaults ``CREATE_SCHEMA_WHEN_NOT_EXIST`` and ``APPEND_DATA``). Easysearch has no ``index_list``,
``array_column``, ``index_type`` nor save modes.

What differs from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import Schema, TypeError_, schema_from_options

SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS")
DEFAULT_QUERY: Mapping[str, Any] = {"match_all": {}}
#: SeaTunnel's ``scroll_time``: a number and a unit of Elasticsearch's time values
_TIME_VALUE = re.compile(r"^\d+(d|h|m|s|ms|micros|nanos)$")
#: a ``${field}`` of an index name (SeaTunnel's per-row index); the table placeholders are expanded before
_ROW_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
TABLE_PLACEHOLDERS = ("database_name", "schema_name", "table_name", "schema_full_name", "table_full_name")


def _common(conn_option: str, conn_type: str) -> tuple[Option, ...]:
    return (
        Option("hosts", "list", required=True, required_unless=(conn_option,), identity=True,
               description=f'The cluster\'s HTTP addresses, e.g. ["http://127.0.0.1:9200"] (or from {conn_option}).'),
        Option("username", description="The user of HTTP basic authentication."),
        Option("password", description="Its password.", secret=True),
        Option(conn_option, identity=True,
               description=f"An Airflow connection of type {conn_type}: host (and scheme), port, login, password."),
        Option("tls_verify_certificate", "bool", True, "Verify the server's certificate (https)."),
        Option("tls_verify_hostname", "bool", True, "Verify that the certificate names the host (https)."),
        Option("tls_keystore_path", description="A client key store: plans, cannot run here (no JKS in Python)."),
        Option("tls_keystore_password", description="The key store's password.", secret=True),
        Option("tls_truststore_path", description="The certificates trusted (https): a PEM file here, where "
               "SeaTunnel reads a JKS trust store."),
        Option("tls_truststore_password", description="The trust store's password (unused for PEM).", secret=True),
    )


def _source(easysearch: bool) -> tuple[Option, ...]:
    index_list = () if easysearch else (
        Option("index_list", "list", sections=(SOURCE,), identity=True,
               description="Several indices, one table each: a list of maps of index, source, query..."),
        Option("array_column", "map", {}, "Fields read as arrays: field = SeaTunnel array type.", sections=(SOURCE,)),
    )
    return (
        Option("index", allow_blank=False, identity=True,
               description="The index read (a pattern with *) or written; a sink's may hold ${table_name}.",
               required=easysearch),
        *index_list,
        Option("source", "list", description="The fields read (_id: the document id); without it, every field "
               "of the index's mapping.", sections=(SOURCE,)),
        Option("schema", "map", description="The rows' fields and types (SeaTunnel deprecates it for source).",
               sections=(SOURCE,)),
        Option("query", "map", DEFAULT_QUERY, "The query DSL selecting the documents read.", sections=(SOURCE,)),
        Option("scroll_time", default="1m", description="How long a scroll's search context lives between pages.",
               sections=(SOURCE,)),
        Option("scroll_size", "int", 100, "Hits per scroll page.", minimum=1, sections=(SOURCE,)),
    )


def _sink(easysearch: bool) -> tuple[Option, ...]:
    modes = () if easysearch else (
        Option("index_type", description="Elasticsearch 6's mapping type: ignored (7 and later have none).",
               sections=(SINK,)),
        Option("schema_save_mode", "enum", "CREATE_SCHEMA_WHEN_NOT_EXIST", "What to do with the index first.",
               choices=SCHEMA_SAVE_MODES, sections=(SINK,)),
        Option("data_save_mode", "enum", "APPEND_DATA", "What to do with the documents the index holds.",
               choices=DATA_SAVE_MODES, sections=(SINK,)),
    )
    return (
        *modes,
        Option("primary_keys", "list", description="Fields whose values, joined by key_delimiter, are the "
               "document _id (writes are then upserts).", sections=(SINK,)),
        Option("key_delimiter", default="_", description="Between the primary key values of an _id.",
               sections=(SINK,)),
        Option("max_batch_size", "int", 10, "Documents per bulk request.", minimum=1, sections=(SINK,)),
        Option("max_retry_count", "int", 3, "Tries of one bulk request.", minimum=1, sections=(SINK,)),
    )


def spec(conn_option: str, conn_type: str, easysearch: bool) -> OptionSpec:
    return OptionSpec((*_common(conn_option, conn_type), *_source(easysearch), *_sink(easysearch)))


DEVIATIONS = (
    "sink: exactly-once: each attempt bulk-writes its rows into a hidden staging index; the commit claims the "
    "attempt's token in the cluster's commit-log index, copies the staging into the target with _reindex "
    "(document ids kept) and records the commit; a restore finishes a claimed copy. SeaTunnel writes each "
    "batch directly, at least once",
    "sink without primary_keys: each row gets an id derived from the commit, the attempt and its position, "
    "so a finished copy replays to the same documents (SeaTunnel lets the server generate ids)",
    "sink with primary_keys: each key's last change of a write task is staged and applied by the copy "
    "(merge with doc_as_upsert, delete, or a replace for a DELETE then INSERT of one key), so a key changed "
    "twice in one commit is written once; SeaTunnel sends every change",
    "sink without primary_keys: a DELETE row fails the write, nothing is committed (SeaTunnel's bulk request "
    "names no document id and fails too); UPDATE_BEFORE rows are skipped, UPDATE_AFTER rows added (as SeaTunnel)",
    "sink index with a ${field} of the row (one index per value): plans, cannot run here",
    "DROP_DATA and RECREATE_SCHEMA take effect when the commit copies the rows, not before the job writes",
    "index_type is ignored: Elasticsearch 7+, 8 and OpenSearch have no mapping types",
    "source: read with a sliced scroll, one slice per reader of the plan's parallelism; SeaTunnel reads one "
    "split per index shard",
    "tls_truststore_path is a PEM file of certificates here; tls_keystore_path (a client key store) plans but "
    "cannot run",
)


@dataclass(frozen=True)
class Endpoint:
    """The cluster's addresses and credentials (:attr:`label` shows neither credential)."""

    hosts: tuple[str, ...]
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    verify_certificate: bool = True
    verify_hostname: bool = True
    truststore: str | None = None

    @property
    def label(self) -> str:
        return ",".join(self.hosts)

    def to_json(self) -> dict[str, Any]:
        return {"hosts": list(self.hosts), "username": self.username, "password": self.password,
                "verify_certificate": self.verify_certificate, "verify_hostname": self.verify_hostname,
                "truststore": self.truststore}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(tuple(d["hosts"]), d.get("username"), d.get("password"), bool(d.get("verify_certificate", True)),
                   bool(d.get("verify_hostname", True)), d.get("truststore"))


@dataclass(frozen=True)
class ReadTable:
    """One index a source reads: its fields (None: the mapping's, known at run time) and query."""

    index: str
    source: tuple[str, ...] | None
    schema: Schema | None
    query: Mapping[str, Any]
    scroll_time: str
    scroll_size: int
    array_column: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchOptions:
    """One block, checked; ``endpoint`` None at compile time when the connection option gives it."""

    section: str
    endpoint: Endpoint | None
    tables: tuple[ReadTable, ...] = ()
    index: str = ""
    primary_keys: tuple[str, ...] = ()
    key_delimiter: str = "_"
    max_batch_size: int = 10
    max_retry_count: int = 3
    schema_save_mode: str = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode: str = "APPEND_DATA"

    def row_placeholders(self) -> list[str]:
        """The ``${field}`` names of the sink's index other than the table placeholders."""
        return [p for p in _ROW_PLACEHOLDER.findall(self.index) if p not in TABLE_PLACEHOLDERS]


def endpoint_of(o: ParsedOptions) -> Endpoint | None:
    hosts = tuple(str(h).strip() for h in (o["hosts"] or ()))
    if not hosts:
        return None
    for host in hosts:
        if not re.match(r"^(https?://)?[^\s/:]+(:\d+)?/?$", host):
            raise OptionError("hosts", f"host {host!r} is not [http[s]://]host[:port]",
                              'set hosts = ["http://127.0.0.1:9200"]')
    return Endpoint(hosts, o["username"] or None, o["password"] or None, bool(o["tls_verify_certificate"]),
                    bool(o["tls_verify_hostname"]), o["tls_truststore_path"] or None)


def _table(options: Mapping[str, Any], o: ParsedOptions, key: str = "index") -> ReadTable:
    if options.get("schema") is not None and options.get("source") is not None:
        raise OptionError("source", "source and schema are exclusive (SeaTunnel's option rule)",
                          "keep source = [...] (fields and types from the index's mapping) or schema")
    try:
        schema = schema_from_options(options) if options.get("schema") is not None else None
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    scroll = str(o["scroll_time"])
    if not _TIME_VALUE.match(scroll):
        raise OptionError("scroll_time", f"scroll_time {scroll!r} is not a time value", 'e.g. scroll_time = "1m"')
    query = o["query"]
    if not isinstance(query, Mapping) or not query:
        raise OptionError("query", "query must be a query DSL object", "e.g. query = {match_all = {}}")
    source = tuple(str(s) for s in o["source"]) if o["source"] else None
    array_column = {str(k): str(v) for k, v in dict(o.get("array_column") or {}).items()}
    return ReadTable(str(o["index"] or "").strip(), source, schema, dict(query), scroll, int(o["scroll_size"]),
                     array_column)


def parse(options: Mapping[str, Any], section: str, the_spec: OptionSpec, conn_option: str,
          need_endpoint: bool = True) -> SearchOptions:
    """The block's options, checked (the spec, then the rules it cannot declare)."""
    o = the_spec.parse(options, section, complete=True)
    endpoint = endpoint_of(o)
    if endpoint is None and (need_endpoint or o[conn_option] is None):
        raise OptionError("hosts", "the option 'hosts' is required",
                          f'set hosts = ["http://127.0.0.1:9200"] (or {conn_option} = "<an Airflow connection>")')
    if section == SINK:
        if not o["index"]:
            raise OptionError("index", "the option 'index' is required", 'set index = "my_index"')
        pk = tuple(str(k) for k in (o["primary_keys"] or ()))
        return SearchOptions(section, endpoint, index=str(o["index"]).strip(), primary_keys=pk,
                             key_delimiter=str(o["key_delimiter"]), max_batch_size=int(o["max_batch_size"]),
                             max_retry_count=int(o["max_retry_count"]),
                             schema_save_mode=str(o.get("schema_save_mode") or "CREATE_SCHEMA_WHEN_NOT_EXIST"),
                             data_save_mode=str(o.get("data_save_mode") or "APPEND_DATA"))
    items = o.get("index_list")
    if items:
        tables = []
        for n, item in enumerate(items):
            if not isinstance(item, Mapping) or not item.get("index"):
                raise OptionError("index_list", f"index_list[{n}] must be a map with an index",
                                  'index_list = [{index = "a", source = ["f"]}]')
            merged = {k: v for k, v in options.items() if k in ("scroll_time", "scroll_size", "hosts")}
            merged.update(item)
            tables.append(_table(item, the_spec.parse(merged, section)))
        return SearchOptions(section, endpoint, tables=tuple(tables))
    if not o["index"]:
        raise OptionError("index", "the option 'index' or 'index_list' is required", 'set index = "my_index"')
    return SearchOptions(section, endpoint, tables=(_table(options, o),))
