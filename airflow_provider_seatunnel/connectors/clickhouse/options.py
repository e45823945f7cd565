"""Clickhouse options as SeaTunnel names them, read once for both phases.

:func:`parse` turns a block into :class:`ClickhouseOptions` or raises :class:`OptionError` naming the key.
Names, defaults and required options are SeaTunnel's: a source requires ``host``, ``database``, ``sql``,
``username`` and ``password``; a sink ``host``, ``database`` and ``table``, with ``username``/``password``
given together. ``host`` lists the servers' HTTP addresses as ``host:port`` (``h1:8123,h2:8123``); each
request goes to one of them. ``clickhouse.config`` entries are sent as the HTTP interface's settings (URL
parameters) of every query. What differs from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec

#: the block option naming an Airflow connection (host, port, schema = database, login, password)
CONN_OPTION = "clickhouse_conn_id"
DEFAULT_PORT = 8123
_SETTING = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: the URL parameters of the HTTP interface that are not settings (the client sets them itself)
RESERVED = frozenset({"query", "database", "default_format", "user", "password", "query_id", "session_id"})

SPEC = OptionSpec((
    Option("host", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The servers' HTTP addresses, host:port, comma-separated (or from {CONN_OPTION})."),
    Option("database", required=True, allow_blank=False, identity=True, description="The database."),
    Option("table", required=True, allow_blank=False, sections=(SINK,), identity=True,
           description="The table written."),
    Option("sql", required=True, allow_blank=False, sections=(SOURCE,), identity=True,
           description="The query read (a SELECT, run in database)."),
    Option("username", description="The user (required by a source; a sink's goes with password)."),
    Option("password", secret=True, description="The user's password (required by a source)."),
    Option(CONN_OPTION, identity=True, description="An Airflow connection: host, port (8123), schema (the "
           "database, when the block sets none), login, password."),
    Option("clickhouse.config", "map", {}, "Settings sent with every query (URL parameters of the HTTP "
           "interface), e.g. max_execution_time."),
    Option("server_time_zone", description="The time zone DateTime values are read and written in (default: "
           "the server's)."),
    Option("bulk_size", "int", 20000, "Rows per insert request.", minimum=1, sections=(SINK,)),
    Option("split_mode", "bool", False, "Write a Distributed table's shards directly (one node here: refused "
           "for a Distributed table).", sections=(SINK,)),
    Option("sharding_key", sections=(SINK,), description="The field split_mode shards by (one node here: no "
           "effect)."),
    Option("primary_key", sections=(SINK,), description="The table's key column(s), comma-separated: rows are "
           "then applied by key (INSERT, UPDATE, DELETE)."),
    Option("support_upsert", "bool", False, "Upsert rows by primary_key.", sections=(SINK,)),
    Option("allow_experimental_lightweight_delete", "bool", False, "Delete rows with lightweight DELETE (a "
           "*MergeTree table) instead of an ALTER TABLE ... DELETE mutation.", sections=(SINK,)),
), bundled=(("username", "password"),))

DEVIATIONS = (
    "the HTTP interface directly (queries as POST bodies, rows as JSONEachRow, credentials in X-ClickHouse-User/"
    "X-ClickHouse-Key headers), not clickhouse-jdbc; clickhouse.config entries are the interface's settings",
    "sink: exactly-once: each writer stages its rows into a table of its own (CREATE TABLE ... AS the target) "
    "in database _seatunnel, gathered into one table before the commit; the commit claims the attempt (CREATE "
    "TABLE of the claim: one attempt wins) and MOVEs the staged partitions into the target (one MOVE for an "
    "unpartitioned target), finished by a restore; SeaTunnel inserts each batch at once, at least once",
    "sink: the target must be a *MergeTree table (MOVE PARTITION); another engine is written by one INSERT ... "
    "SELECT under the claim, which a restore cannot finish (it fails rather than write twice)",
    "sink with primary_key: the rows of a commit are reduced to the last row of each key; the keys' rows in the "
    "table are deleted (ALTER TABLE ... DELETE, or lightweight DELETE), then the new rows moved in; an INSERT "
    "of a key the table holds replaces it (SeaTunnel inserts a second row)",
    "sink without primary_key: a DELETE or UPDATE_BEFORE row fails the write (SeaTunnel inserts it as a row)",
    "sink: split_mode on a Distributed table is refused (one node here); sharding_key changes nothing",
    "source: UInt64 values above 2^63-1 fail the read (SeaTunnel wraps them negative); Int128/UInt128/Int256/"
    "UInt256 read as strings, as SeaTunnel",
)


@dataclass(frozen=True)
class Endpoint:
    """The servers and the credentials (never shown: :attr:`label` has neither)."""

    hosts: tuple[str, ...]
    username: str = field(default="default", repr=False)
    password: str = field(default="", repr=False)
    settings: Mapping[str, str] = field(default_factory=dict)
    time_zone: str | None = None

    @property
    def label(self) -> str:
        return ",".join(self.hosts)

    def pinned(self) -> Endpoint:
        """This endpoint on its first host only: a sink's staging tables, attempt tokens, claim and commit
        record must live on one server for every attempt and restore, so its requests never move on to
        another host (an unreachable first host is a transient failure, retried by Airflow)."""
        return replace(self, hosts=self.hosts[:1])

    def to_json(self) -> dict[str, Any]:
        return {"hosts": list(self.hosts), "username": self.username, "password": self.password,
                "settings": dict(self.settings), "time_zone": self.time_zone}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(tuple(d["hosts"]), str(d.get("username") or "default"), str(d.get("password") or ""),
                   dict(d.get("settings") or {}), d.get("time_zone"))


@dataclass(frozen=True)
class ClickhouseOptions:
    """One block, checked: the endpoint (None at compile time when the connection gives it) and what it reads
    or writes."""

    section: str
    endpoint: Endpoint | None
    database: str
    table: str = ""
    sql: str = ""
    bulk_size: int = 20000
    primary_key: tuple[str, ...] = ()
    support_upsert: bool = False
    lightweight_delete: bool = False
    split_mode: bool = False


def hosts_of(value: Any) -> tuple[str, ...]:
    """``host`` as host:port addresses (a missing port is 8123); refuses a URL or a path."""
    out = []
    for node in (n.strip() for n in str(value).split(",")):
        if not node:
            continue
        host, colon, port = node.rpartition(":")
        if not colon:
            host, port = node, str(DEFAULT_PORT)
        if not host or not port.isdigit() or "/" in node or not 0 < int(port) < 65536:
            raise OptionError("host", f"{node!r} is not host:port", 'write host = "ch1:8123,ch2:8123"')
        out.append(f"{host}:{int(port)}")
    if not out:
        raise OptionError("host", "host names no server", 'write host = "ch1:8123"')
    return tuple(out)


def settings_of(value: Any) -> dict[str, str]:
    """``clickhouse.config`` as settings (names ClickHouse could know; not the interface's own parameters)."""
    out: dict[str, str] = {}
    for key, item in dict(value or {}).items():
        name = str(key).strip()
        if not _SETTING.fullmatch(name) or name.lower() in RESERVED:
            raise OptionError("clickhouse.config", f"{name!r} is not a setting the sink may send",
                              "give ClickHouse settings such as max_execution_time")
        out[name] = str(item).lower() if isinstance(item, bool) else str(item)
    return out


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> ClickhouseOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint``
    false: a block naming the connection may leave ``host`` to it (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    endpoint = None
    if o["host"]:
        endpoint = Endpoint(hosts_of(o["host"]), str(o["username"] or "default"), str(o["password"] or ""),
                            settings_of(o["clickhouse.config"]), o["server_time_zone"] or None)
    else:
        settings_of(o["clickhouse.config"])
        if need_endpoint or o[CONN_OPTION] is None:
            raise OptionError("host", "the option 'host' is required",
                              f'set host = "ch:8123" (or {CONN_OPTION} = "<an Airflow connection>")')
    database = str(o["database"]).strip()
    if section == SOURCE:
        for key in ("username", "password"):
            if o[key] is None and o[CONN_OPTION] is None:
                raise OptionError(key, f"the option '{key}' is required", f"set {key} (or {CONN_OPTION})")
        return ClickhouseOptions(SOURCE, endpoint, database, sql=str(o["sql"]).strip().rstrip(";").strip())
    keys = tuple(k.strip() for k in str(o["primary_key"] or "").split(",") if k.strip())
    if o["support_upsert"] and not keys:
        raise OptionError("primary_key", "support_upsert needs primary_key", 'set primary_key = "id"')
    return ClickhouseOptions(SINK, endpoint, database, table=str(o["table"]).strip(), bulk_size=int(o["bulk_size"]),
                             primary_key=keys, support_upsert=bool(o["support_upsert"]),
                             lightweight_delete=bool(o["allow_experimental_lightweight_delete"]),
                             split_mode=bool(o["split_mode"]))


__all__ = ["CONN_OPTION", "DEVIATIONS", "SPEC", "ClickhouseOptions", "Endpoint", "OptionError", "hosts_of", "parse",
           "settings_of"]
