"""StarRocks sink options as SeaTunnel names them, read once for both phases.

Names, defaults and required options are SeaTunnel's StarRocks sink rule: ``nodeUrls`` (the frontends' HTTP
addresses), ``base-url`` (the JDBC URL of the MySQL protocol), ``username``, ``password`` and ``database``
are required (an Airflow connection named by ``starrocks_conn_id`` may give all but ``database``); ``table``
(table placeholders allowed) else the upstream table's name. ``starrocks.config`` entries are the Stream Load
properties sent as request headers: ``format`` (``JSON``, the default, or ``CSV``), ``column_separator``
(default tab), ``row_delimiter`` (default newline) and any other. :func:`parse` turns a block into
:class:`StarRocksOptions` or raises :class:`OptionError` naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import SINK
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ..streamload.encode import unescape
from ..streamload.endpoint import Endpoint

CONN_OPTION = "starrocks_conn_id"
SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "CUSTOM_PROCESSING", "ERROR_WHEN_DATA_EXISTS")
FORMATS = ("csv", "json")
#: the column of each row's operation with enable_upsert_delete (0 upsert, 1 delete; a Primary Key table)
OP_COLUMN = "__op"
#: headers the sink sets itself: a ``starrocks.config`` entry of these names is refused
RESERVED_HEADERS = ("label", "db", "table", "authorization", "expect", "content-type", "txn_id", "txn_operation")
#: SeaTunnel's default table template (StarRocks DDL, a Primary Key table), with its placeholders
CREATE_TEMPLATE = (
    "CREATE TABLE IF NOT EXISTS `${database}`.`${table}` (\n${rowtype_primary_key},\n${rowtype_fields}\n"
    ") ENGINE=OLAP\n PRIMARY KEY (${rowtype_primary_key})\nDISTRIBUTED BY HASH (${rowtype_primary_key})"
    "PROPERTIES (\n    \"replication_num\" = \"1\" \n)")

SPEC = OptionSpec((
    Option("nodeUrls", "list", required=True, required_unless=(CONN_OPTION,), identity=True,
           description=f"The frontends' HTTP addresses, [\"fe:8030\", ...] (or from {CONN_OPTION})."),
    Option("base-url", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description="The frontends' MySQL protocol as a JDBC URL, jdbc:mysql://fe:9030[/db] (DDL, save modes, "
                       f"the commit log; or from {CONN_OPTION})."),
    Option("username", required=True, required_unless=(CONN_OPTION,), description=f"The user (or from {CONN_OPTION})."),
    Option("password", required=True, required_unless=(CONN_OPTION,), secret=True,
           description=f"The password, may be empty (or from {CONN_OPTION})."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type starrocks: host (a frontend), port (its HTTP port), login, "
                       "password, extra query_port (the MySQL-protocol port, default 9030)."),
    Option("database", required=True, allow_blank=False, identity=True,
           description="The target database (table placeholders allowed)."),
    Option("table", identity=True, description="The target table (table placeholders allowed); default: the "
                                               "upstream table's name."),
    Option("labelPrefix", description="The prefix of every Stream Load label."),
    Option("batch_max_rows", "int", 1024, "SeaTunnel's rows per flush (no effect here: one transaction per "
           "writer carries all its rows).", minimum=1),
    Option("batch_max_bytes", "long", 5 * 1024 * 1024, "SeaTunnel's bytes per flush (no effect here).", minimum=1),
    Option("max_retries", "int", None, "Retries of a Stream Load request that failed in transit (default 3).",
           minimum=0),
    Option("retry_backoff_multiplier_ms", "int", None, "The pause before a retry, multiplied by the attempt "
           "(default 200).", minimum=0),
    Option("max_retry_backoff_ms", "int", None, "The longest pause before a retry (default 2000).", minimum=0),
    Option("enable_upsert_delete", "bool", False,
           "Write each row's operation in the column __op (0 upsert, 1 delete): DELETE and UPDATE_BEFORE rows "
           "delete (a Primary Key table)."),
    Option("starrocks.config", "map", description="Stream Load properties sent as headers: format (JSON or "
                                                  "CSV), column_separator, row_delimiter..."),
    Option("http_socket_timeout_ms", "int", 3 * 60 * 1000, "The timeout of each HTTP request in ms.", minimum=1),
    Option("schema_save_mode", "enum", "CREATE_SCHEMA_WHEN_NOT_EXIST", "What to do with the table first.",
           choices=SCHEMA_SAVE_MODES),
    Option("data_save_mode", "enum", "APPEND_DATA", "What to do with the rows the table holds.",
           choices=DATA_SAVE_MODES),
    Option("custom_sql", required_if=(("data_save_mode", ("CUSTOM_PROCESSING",)),),
           description="The statement CUSTOM_PROCESSING runs first."),
    Option("save_mode_create_template", default=CREATE_TEMPLATE,
           description="The CREATE TABLE statement of CREATE_SCHEMA_WHEN_NOT_EXIST and RECREATE_SCHEMA "
                       "(${database}, ${table}, ${rowtype_fields}, ${rowtype_primary_key}...)."),
    Option("multi_table_sink_replica", "int", 1, "Writers per table of a multi-table sink (no effect here).",
           minimum=1),
))

DEVIATIONS = (
    "exactly-once: every writer loads its rows in one transaction of StarRocks's Stream Load transaction "
    "interface (begin, load, prepare) under a label of the commit, the attempt and its partition; the commit "
    "claims the attempt's token in the commit-log table (over the MySQL protocol) and then commits the prepared "
    "transactions by label (SeaTunnel loads batches with plain Stream Load under random labels: at least once)",
    "an attempt that loses the claim, or is superseded, rolls back its prepared transactions; a driver killed "
    "mid-write leaves prepared transactions that StarRocks aborts at its prepared-transaction timeout",
    "without enable_upsert_delete, a DELETE or UPDATE_BEFORE row fails the write (SeaTunnel writes it as an "
    "insert, corrupting the table)",
    "timestamps keep their microseconds (SeaTunnel cuts them to seconds); bytes that are not UTF-8 fail the write "
    "(SeaTunnel decodes them lossily)",
    "DROP_DATA and RECREATE_SCHEMA take effect at the first commit, before its transactions are committed",
    "batch_max_rows, batch_max_bytes and multi_table_sink_replica change nothing here",
)

_JDBC = re.compile(r"^jdbc:mysql://([^/:?]+)(?::(\d+))?(?:/([^?]*))?(?:\?.*)?$", re.IGNORECASE)


@dataclass(frozen=True)
class StarRocksOptions:
    """One sink block, checked; ``endpoint`` None at compile time when the connection gives it."""

    endpoint: Endpoint | None
    database: str
    table: str
    label_prefix: str
    enable_upsert_delete: bool
    max_retries: int
    backoff_ms: int
    max_backoff_ms: int
    timeout_ms: int
    headers: Mapping[str, str]
    schema_save_mode: str
    data_save_mode: str
    custom_sql: str
    create_template: str

    @property
    def format(self) -> str:
        return self.headers.get("format", "json").lower()

    @property
    def column_separator(self) -> str:
        return unescape(self.headers.get("column_separator", "\t"))

    @property
    def row_delimiter(self) -> str:
        return unescape(self.headers.get("row_delimiter", "\n"))

    def writer_spec(self) -> dict[str, Any]:
        """What each writer needs beyond the target: headers, format, separators, upserts, retries, timeout."""
        return {"headers": dict(self.headers), "format": self.format, "column_separator": self.column_separator,
                "row_delimiter": self.row_delimiter, "upsert_delete": self.enable_upsert_delete,
                "max_retries": self.max_retries, "backoff_ms": self.backoff_ms,
                "max_backoff_ms": self.max_backoff_ms, "timeout_ms": self.timeout_ms}


def _nodes(value: Any) -> tuple[str, ...]:
    nodes = tuple(str(n).strip() for n in value if str(n).strip())
    if not nodes:
        raise OptionError("nodeUrls", "nodeUrls names no frontend", "write nodeUrls = [\"fe1:8030\"]")
    for node in nodes:
        host, _, port = node.rpartition(":")
        if not host or not port.isdigit() or "/" in node:
            raise OptionError("nodeUrls", f"{node!r} is not host:port", "write nodeUrls = [\"fe1:8030\", \"fe2:8030\"]")
    return nodes


def base_url(value: str) -> tuple[str, int]:
    """The MySQL-protocol host and port of a ``jdbc:mysql://host[:port][/db]`` URL (port default 9030)."""
    m = _JDBC.match(value.strip())
    if not m:
        raise OptionError("base-url", f"{value!r} is not a JDBC URL jdbc:mysql://host:port[/database]",
                          "write base-url = \"jdbc:mysql://fe1:9030/\"")
    port = int(m.group(2) or 9030)
    if not 0 < port < 65536:
        raise OptionError("base-url", f"port {port} is out of range")
    return m.group(1), port


def _headers(value: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, item in dict(value or {}).items():
        name = str(key).strip()
        if name.lower() in RESERVED_HEADERS:
            raise OptionError("starrocks.config", f"{name!r} is set by the sink itself",
                              "remove it from starrocks.config")
        headers[name.lower() if name.lower() == "format" else name] = (
            str(item).lower() if isinstance(item, bool) else str(item))
    fmt = headers.get("format", "json").lower()
    if fmt not in FORMATS:
        raise OptionError("starrocks.config", f"format {fmt!r} is not CSV or JSON", "set format = \"JSON\" or \"CSV\"")
    headers["format"] = fmt
    return headers


def parse(options: Mapping[str, Any], need_endpoint: bool = True) -> StarRocksOptions:
    """The block's options, typed and checked (raises :class:`OptionError` naming the key)."""
    o = SPEC.parse(options, SINK, complete=need_endpoint)
    endpoint = None
    if o["nodeUrls"] and o["base-url"]:
        host, port = base_url(str(o["base-url"]))
        endpoint = Endpoint(_nodes(o["nodeUrls"]), port, str(o["username"] or ""), str(o["password"] or ""), host)
    elif o["base-url"]:
        base_url(str(o["base-url"]))
    if endpoint is None and need_endpoint:
        raise OptionError("nodeUrls", "the options 'nodeUrls' and 'base-url' are required",
                          f"set nodeUrls and base-url, or {CONN_OPTION}")

    def given(key: str, default: int) -> int:
        return default if o[key] is None else int(o[key])

    return StarRocksOptions(
        endpoint, str(o["database"] or "").strip(), str(o["table"] or "").strip(), str(o["labelPrefix"] or ""),
        bool(o["enable_upsert_delete"]), given("max_retries", 3), given("retry_backoff_multiplier_ms", 200),
        given("max_retry_backoff_ms", 2000), int(o["http_socket_timeout_ms"]), _headers(o["starrocks.config"]),
        str(o["schema_save_mode"]), str(o["data_save_mode"]), str(o["custom_sql"] or ""),
        str(o["save_mode_create_template"]))
