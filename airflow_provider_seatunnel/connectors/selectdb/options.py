"""SelectDB Cloud sink options as SeaTunnel names them (its ``SelectDBCloud`` plugin), read once for both phases.

Required as SeaTunnel checks them: ``load-url`` (a warehouse's HTTP address, ``host:port``), ``jdbc-url`` (its
MySQL-protocol address, ``host:port``), ``cluster-name``, ``username`` and ``table.identifier``
(``database.table``); ``password`` may be empty. An Airflow connection named by ``selectdb_conn_id`` may give
the addresses and the user. ``selectdb.config`` entries are the ``COPY INTO`` properties, their keys lower-cased
as SeaTunnel does: ``file.type`` (``csv``, the default, or ``json``), ``file.column_separator`` (tab),
``file.line_delimiter`` (newline) and any other. :func:`parse` turns a block into :class:`SelectDBOptions` or
raises :class:`OptionError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import SINK
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ..streamload.encode import unescape
from ..streamload.endpoint import Endpoint

CONN_OPTION = "selectdb_conn_id"
FORMATS = ("csv", "json")
#: COPY INTO properties the sink sets itself
RESERVED = ("copy.async", "copy.use_delete_sign")

SPEC = OptionSpec((
    Option("load-url", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The warehouse's HTTP address, host:port (or from {CONN_OPTION})."),
    Option("jdbc-url", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description="The warehouse's MySQL-protocol address, host:port (the commit log; or from "
                       f"{CONN_OPTION})."),
    Option("cluster-name", required=True, allow_blank=False, identity=True,
           description="The cluster COPY INTO runs on."),
    Option("username", required=True, required_unless=(CONN_OPTION,), description=f"The user (or from {CONN_OPTION})."),
    Option("password", default="", secret=True, description=f"The password, may be empty (or from {CONN_OPTION})."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type selectdb: host (the warehouse), port (its HTTP port), login, "
                       "password, extra query_port (the MySQL-protocol port, default 9030)."),
    Option("table.identifier", required=True, allow_blank=False, identity=True,
           description="The target as database.table."),
    Option("sink.enable-2pc", "bool", True, "SeaTunnel's switch for copying at the checkpoint; this sink always "
           "copies at the commit (exactly once)."),
    Option("sink.enable-delete", "bool", False,
           "Write DELETE and UPDATE_BEFORE rows as deletes (__DORIS_DELETE_SIGN__, copy.use_delete_sign; a "
           "Unique model table)."),
    Option("sink.max-retries", "int", 3, "Retries of an upload or COPY INTO request that failed in transit.",
           minimum=0),
    Option("sink.buffer-size", "int", 10 * 1024 * 1024, "SeaTunnel's file size in bytes (no effect here: each "
           "writer uploads one file).", minimum=1),
    Option("sink.buffer-count", "int", 10000, "SeaTunnel's rows per file (no effect here).", minimum=1),
    Option("sink.label-prefix", description="The prefix of every staged file's name."),
    Option("sink.flush.queue-size", "int", 1, "SeaTunnel's upload queue (no effect here).", minimum=1),
    Option("selectdb.config", "map", description="COPY INTO properties: file.type (csv or json), "
                                                 "file.column_separator, file.line_delimiter..."),
))

DEVIATIONS = (
    "exactly-once always: each writer uploads one file to the internal stage under a name of the commit, the "
    "attempt and its partition; the commit claims the attempt's token in the commit-log table (over the MySQL "
    "protocol) and then copies the claimed files (COPY INTO, one per file); a file copied before is not copied "
    "again (SelectDB's loaded-file record), so a restore finishing the commit loads each file once",
    "sink.enable-2pc = false copies the same way (SeaTunnel then copies each file at once, at least once)",
    "without sink.enable-delete, a DELETE or UPDATE_BEFORE row fails the write (SeaTunnel writes it as an insert)",
    "sink.buffer-size, sink.buffer-count and sink.flush.queue-size change nothing here",
)


@dataclass(frozen=True)
class SelectDBOptions:
    """One sink block, checked; ``endpoint`` None at compile time when the connection gives it."""

    endpoint: Endpoint | None
    cluster: str
    database: str
    table: str
    label_prefix: str
    enable_delete: bool
    max_retries: int
    properties: Mapping[str, str]

    #: SelectDB's sink has no save modes in SeaTunnel 2.3.8: the table must exist
    schema_save_mode = "IGNORE"
    data_save_mode = "APPEND_DATA"
    custom_sql = ""
    create_template = ""

    @property
    def format(self) -> str:
        return self.properties.get("file.type", "csv").lower()

    def writer_spec(self) -> dict[str, Any]:
        """What each writer needs beyond the target: the format, separators, deletes, retries, the cluster and
        the COPY INTO properties (each staged file's decision carries them)."""
        return {"format": self.format, "cluster": self.cluster, "properties": dict(self.properties),
                "column_separator": unescape(self.properties.get("file.column_separator", "\t")),
                "line_delimiter": unescape(self.properties.get("file.line_delimiter", "\n")),
                "enable_delete": self.enable_delete, "max_retries": self.max_retries}


def host_port(key: str, value: Any) -> tuple[str, int]:
    text = str(value).strip()
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or "/" in text or not 0 < int(port) < 65536:
        raise OptionError(key, f"{text!r} is not host:port", f"write {key} = \"warehouse.example:8080\"")
    return host, int(port)


def _properties(value: Any, enable_delete: bool) -> dict[str, str]:
    props: dict[str, str] = {}
    for key, item in dict(value or {}).items():
        name = str(key).strip().lower()
        if name in RESERVED:
            raise OptionError("selectdb.config", f"{name!r} is set by the sink itself",
                              "remove it from selectdb.config")
        props[name] = str(item).lower() if isinstance(item, bool) else str(item)
    fmt = props.get("file.type", "csv").lower()
    if fmt not in FORMATS:
        raise OptionError("selectdb.config", f"file.type {fmt!r} is not csv or json", "set file.type = \"csv\"")
    props["copy.async"] = "false"
    if enable_delete:
        props["copy.use_delete_sign"] = "true"
    return props


def parse(options: Mapping[str, Any], need_endpoint: bool = True) -> SelectDBOptions:
    """The block's options, typed and checked (raises :class:`OptionError` naming the key)."""
    o = SPEC.parse(options, SINK, complete=need_endpoint)
    identifier = str(o["table.identifier"] or "").strip()
    database, dot, table = identifier.partition(".")
    if not dot or not database or not table:
        raise OptionError("table.identifier", f"{identifier!r} is not database.table",
                          "write table.identifier = \"db.table\"")
    endpoint = None
    if o["load-url"] and o["jdbc-url"]:
        host_port("load-url", o["load-url"])
        query_host, query_port = host_port("jdbc-url", o["jdbc-url"])
        endpoint = Endpoint((str(o["load-url"]).strip(),), query_port, str(o["username"] or ""),
                            str(o["password"] or ""), query_host)
    elif need_endpoint:
        raise OptionError("load-url", "the options 'load-url' and 'jdbc-url' are required",
                          f"set load-url and jdbc-url, or {CONN_OPTION}")
    enable_delete = bool(o["sink.enable-delete"])
    return SelectDBOptions(endpoint, str(o["cluster-name"] or ""), database, table, str(o["sink.label-prefix"] or ""),
                           enable_delete, int(o["sink.max-retries"]), _properties(o["selectdb.config"], enable_delete))
