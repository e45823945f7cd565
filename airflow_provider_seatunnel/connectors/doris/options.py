"""Doris sink options as SeaTunnel names them, read once for both phases.

Names, defaults and required options are SeaTunnel's Doris sink rule: ``fenodes``, ``username``,
``password``, ``sink.label-prefix`` and ``doris.config`` are required (an Airflow connection named by
``doris_conn_id`` may give the first three); the target is ``table.identifier`` (``db.table``) or
``database`` and ``table`` (each may hold table placeholders such as ``${table_name}``), else the upstream
table's own names. ``doris.config`` is passed to Stream Load as request headers (``format`` csv or json,
``read_json_by_line``, ``column_separator``...). :func:`parse` turns a block into :class:`DorisOptions` or
raises :class:`OptionError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import SINK
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ..streamload.encode import unescape as _unescape
from ..streamload.endpoint import Endpoint

CONN_OPTION = "doris_conn_id"
SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "CUSTOM_PROCESSING", "ERROR_WHEN_DATA_EXISTS")
FORMATS = ("csv", "json")
#: Stream Load headers the sink sets itself: a ``doris.config`` entry of these names is refused
RESERVED_HEADERS = ("label", "two_phase_commit", "txn_id", "txn_operation", "hidden_columns", "authorization",
                    "expect", "content-type")
#: SeaTunnel's default table template (Doris DDL), with its placeholders
CREATE_TEMPLATE = (
    "CREATE TABLE IF NOT EXISTS `${database}`.`${table}` (\n${rowtype_primary_key},\n${rowtype_fields}\n"
    ") ENGINE=OLAP\n UNIQUE KEY (${rowtype_primary_key})\nDISTRIBUTED BY HASH (${rowtype_primary_key})\n "
    "PROPERTIES (\n\"replication_allocation\" = \"tag.location.default: 1\",\n\"in_memory\" = \"false\",\n"
    "\"storage_format\" = \"V2\",\n\"disable_auto_compaction\" = \"false\"\n)")

SPEC = OptionSpec((
    Option("fenodes", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The frontends' HTTP addresses, host:port, comma-separated (or from {CONN_OPTION})."),
    Option("query-port", "int", 9030, "The frontends' MySQL-protocol port (DDL, save modes, the commit log).",
           minimum=1, maximum=65535),
    Option("username", required=True, required_unless=(CONN_OPTION,),
           description=f"The user (or from {CONN_OPTION})."),
    Option("password", required=True, required_unless=(CONN_OPTION,), secret=True,
           description=f"The password, may be empty (or from {CONN_OPTION})."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type doris: host (the frontend), port (its HTTP port), login, "
                       "password, extra query_port."),
    Option("table.identifier", identity=True, description="The target as database.table."),
    Option("database", identity=True, description="The target database (table placeholders allowed)."),
    Option("table", identity=True, description="The target table (table placeholders allowed)."),
    Option("sink.label-prefix", required=True, description="The prefix of every Stream Load label."),
    Option("sink.enable-2pc", "bool", False,
           "SeaTunnel's switch for two-phase commit; this sink always loads with two_phase_commit (exactly once)."),
    Option("sink.enable-delete", "bool", False,
           "Write DELETE and UPDATE_BEFORE rows as deletes (the hidden column __DORIS_DELETE_SIGN__; a Unique "
           "Key table)."),
    Option("sink.check-interval", "int", 10000, "SeaTunnel's load check interval in ms (no effect here).",
           minimum=0),
    Option("sink.max-retries", "int", 3, "Retries of a Stream Load or commit request that failed in transit.",
           minimum=0),
    Option("sink.buffer-size", "int", 256 * 1024, "SeaTunnel's load buffer in bytes (no effect here: each writer "
           "spools its rows to a local file).", minimum=1),
    Option("sink.buffer-count", "int", 3, "SeaTunnel's buffer count (no effect here).", minimum=1),
    Option("doris.batch.size", "int", 1024, "SeaTunnel's rows per flush (no effect here: one transaction per "
           "writer carries all its rows).", minimum=1),
    Option("doris.config", "map", required=True,
           description="Stream Load headers: format (csv or json), read_json_by_line, column_separator..."),
    Option("schema_save_mode", "enum", "CREATE_SCHEMA_WHEN_NOT_EXIST", "What to do with the table first.",
           choices=SCHEMA_SAVE_MODES),
    Option("data_save_mode", "enum", "APPEND_DATA", "What to do with the rows the table holds.",
           choices=DATA_SAVE_MODES),
    Option("custom_sql", required_if=(("data_save_mode", ("CUSTOM_PROCESSING",)),),
           description="The statement CUSTOM_PROCESSING runs first."),
    Option("save_mode_create_template", default=CREATE_TEMPLATE,
           description="The CREATE TABLE statement of CREATE_SCHEMA_WHEN_NOT_EXIST and RECREATE_SCHEMA "
                       "(${database}, ${table}, ${rowtype_fields}, ${rowtype_primary_key}...)."),
    Option("needs_unsupported_type_casting", "bool", False, "SeaTunnel's cast of types Doris lacks (no effect "
           "here: the created table's types are Doris's already)."),
    Option("multi_table_sink_replica", "int", 1, "Writers per table of a multi-table sink (no effect here).",
           minimum=1),
    Option("default-database", default="information_schema", description="The catalog's default database."),
))

DEVIATIONS = (
    "exactly-once always: every writer loads with two_phase_commit under a label of the commit, the attempt and "
    "its partition; the commit claims the attempt's token in the commit-log table (over the MySQL protocol) and "
    "then commits the prepared transactions; sink.enable-2pc = false loads the same way (SeaTunnel then "
    "commits each load at once, at least once)",
    "an attempt that loses the claim, or is superseded, aborts its prepared transactions; a driver killed "
    "mid-write leaves prepared transactions that Doris aborts at its transaction timeout (never visible)",
    "without sink.enable-delete, a DELETE or UPDATE_BEFORE row fails the write (SeaTunnel writes it as an "
    "insert, corrupting the table)",
    "DROP_DATA and RECREATE_SCHEMA take effect at the first commit, before its transactions are committed",
    "sink.check-interval, sink.buffer-size, sink.buffer-count, doris.batch.size, needs_unsupported_type_casting "
    "and multi_table_sink_replica change nothing here",
)


@dataclass(frozen=True)
class DorisOptions:
    """One sink block, checked; ``endpoint`` None at compile time when the connection gives it."""

    endpoint: Endpoint | None
    database: str
    table: str
    label_prefix: str
    enable_delete: bool
    max_retries: int
    batch_size: int
    headers: Mapping[str, str]
    schema_save_mode: str
    data_save_mode: str
    custom_sql: str
    create_template: str

    @property
    def format(self) -> str:
        return self.headers.get("format", "csv").lower()

    @property
    def column_separator(self) -> str:
        return _unescape(self.headers.get("column_separator", "\t"))

    @property
    def line_delimiter(self) -> str:
        return _unescape(self.headers.get("line_delimiter", "\n"))

    def writer_spec(self) -> dict[str, Any]:
        """What each writer needs beyond the target: the headers, the format and separators, deletes, retries."""
        return {"headers": dict(self.headers), "format": self.format, "column_separator": self.column_separator,
                "line_delimiter": self.line_delimiter, "enable_delete": self.enable_delete,
                "max_retries": self.max_retries}


def _fenodes(value: Any) -> tuple[str, ...]:
    nodes = tuple(n.strip() for n in str(value).split(",") if n.strip())
    for node in nodes:
        host, _, port = node.rpartition(":")
        if not host or not port.isdigit() or "/" in node:
            raise OptionError("fenodes", f"{node!r} is not host:port", "write the frontends as fe1:8030,fe2:8030")
    return nodes


def _headers(value: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, item in dict(value or {}).items():
        name = str(key).strip()
        if name.lower() in RESERVED_HEADERS:
            raise OptionError("doris.config", f"{name!r} is set by the sink itself",
                              "remove it from doris.config")
        headers[name] = str(item).lower() if isinstance(item, bool) else str(item)
    fmt = headers.get("format", "csv").lower()
    if fmt not in FORMATS:
        raise OptionError("doris.config", f"format {fmt!r} is not csv or json", "set format = \"json\" or \"csv\"")
    return headers


def parse(options: Mapping[str, Any], need_endpoint: bool = True) -> DorisOptions:
    """The block's options, typed and checked (raises :class:`OptionError` naming the key)."""
    o = SPEC.parse(options, SINK, complete=need_endpoint)
    identifier = str(o["table.identifier"] or "").strip()
    database, table = str(o["database"] or "").strip(), str(o["table"] or "").strip()
    if identifier:
        db, dot, tb = identifier.partition(".")
        if not dot or not db or not tb:
            raise OptionError("table.identifier", f"{identifier!r} is not database.table",
                              "write table.identifier = \"db.table\"")
        database, table = db, tb
    endpoint = None
    if o["fenodes"]:
        endpoint = Endpoint(_fenodes(o["fenodes"]), int(o["query-port"]), str(o["username"] or ""),
                            str(o["password"] or ""))
    elif need_endpoint:
        raise OptionError("fenodes", "the option 'fenodes' is required", f"set fenodes or {CONN_OPTION}")
    return DorisOptions(endpoint, database, table, str(o["sink.label-prefix"] or ""), bool(o["sink.enable-delete"]),
                        int(o["sink.max-retries"]), int(o["doris.batch.size"]), _headers(o["doris.config"]),
                        str(o["schema_save_mode"]), str(o["data_save_mode"]), str(o["custom_sql"] or ""),
                        str(o["save_mode_create_template"]))
