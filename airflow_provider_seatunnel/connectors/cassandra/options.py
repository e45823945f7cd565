"""Cassandra options as SeaTunnel 2.3.8 names them, read once for both phases.

:func:`parse` turns a block into :class:`CassandraOptions` or raises :class:`OptionError` naming the key
(compile time: a located problem; run time: ``RuntimeConfigError``). Names and defaults are SeaTunnel's:
``host`` (``host:port[,host:port...]``), ``keyspace``, ``username``/``password`` (both or neither),
``datacenter`` (``datacenter1``), ``consistency_level`` (``LOCAL_ONE``); a source's ``cql``; a sink's
``table``, ``fields``, ``batch_size`` (5000), ``batch_type`` (``UNLOGGED``) and ``async_write`` (true).
What differs from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec

#: the block option naming an Airflow connection of type ``cassandra`` (host, port, login, password, schema)
CONN_OPTION = "cassandra_conn_id"
DEFAULT_PORT = 9042
CONSISTENCY_LEVELS = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "SERIAL",
                      "LOCAL_SERIAL", "LOCAL_ONE")
BATCH_TYPES = ("LOGGED", "UNLOGGED", "COUNTER")

SPEC = OptionSpec((
    Option("host", required=True, allow_blank=False, required_unless=(CONN_OPTION,),
           description=f"The contact points, host:port[,host:port...] (or from {CONN_OPTION})."),
    Option("keyspace", required=True, allow_blank=False, identity=True, required_unless=(CONN_OPTION,),
           description="The keyspace read or written (or the connection's schema)."),
    Option("table", allow_blank=False, identity=True, sections=(SINK,), required=True,
           description="The table written (sink)."),
    Option("cql", allow_blank=False, identity=True, sections=(SOURCE,), required=True,
           description="The query whose rows the source reads (split over the plan's readers by token range "
                       "when it is a plain SELECT of one table)."),
    Option("username", description="The user (with password; both or neither)."),
    Option("password", secret=True, description="The user's password (masked everywhere)."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type cassandra: host(s), port, login, password, schema (keyspace), "
                       "extra datacenter."),
    Option("datacenter", default="datacenter1", allow_blank=False,
           description="The local datacenter of the driver's load balancing."),
    Option("consistency_level", "enum", "LOCAL_ONE", choices=CONSISTENCY_LEVELS,
           description="The consistency level of every read and write."),
    Option("fields", "list", sections=(SINK,),
           description="The columns written, each an input field of the same name (default: every column of the "
                       "table)."),
    Option("batch_size", "int", 5000, minimum=1, sections=(SINK,),
           description="Rows per batch statement (async_write = false), or in flight per writer (async_write = "
                       "true)."),
    Option("batch_type", "enum", "UNLOGGED", choices=BATCH_TYPES, sections=(SINK,),
           description="The batch statements' type (async_write = false)."),
    Option("async_write", "bool", True, sections=(SINK,),
           description="Write each row as its own asynchronous INSERT (true), or in batches (false)."),
), bundled=(("username", "password"),))

DEVIATIONS = (
    "source: a plain SELECT of one table (no LIMIT, GROUP BY, ORDER BY, aggregates or restriction of the "
    "partition key) is split into the plan's parallelism token ranges, one reader each; SeaTunnel reads it in "
    "one reader. Any other cql is read by the first reader",
    "source: the row type comes from the query's metadata (a prepared statement), so an empty result is zero rows; "
    "SeaTunnel takes it from the first row and fails on an empty result",
    "source: timestamp values are read in UTC; SeaTunnel converts them in its JVM's time zone",
    "sink: async_write = true waits for every write and fails the task on an error; SeaTunnel only logs a failed "
    "asynchronous write (the row is lost)",
    "sink: with fields, each value is bound with its own column's type; SeaTunnel binds the i-th field with the "
    "type of the table's i-th column",
    "sink: at least once, with idempotent replays (every INSERT upserts its primary key), a commit record and a "
    "fenced attempt token per run in the keyspace's table seatunnel_sink_commits; SeaTunnel has neither",
    "host: a contact point without a port takes 9042 (SeaTunnel fails); every contact point is given to the driver "
    "(SeaTunnel picks one at random)",
)

_HOST = re.compile(r"^\s*(\[[0-9A-Fa-f:.]+\]|[^\s:,\[\]]+)(?::(\d{1,5}))?\s*$")


@dataclass(frozen=True)
class Endpoint:
    """Where and as whom to connect: contact points, credentials (never in messages), datacenter."""

    hosts: tuple[tuple[str, int], ...]
    keyspace: str
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    datacenter: str = "datacenter1"
    consistency: str = "LOCAL_ONE"

    @property
    def label(self) -> str:
        """How messages name the cluster and keyspace: no credentials."""
        return "cassandra://" + ",".join(f"{h}:{p}" for h, p in self.hosts) + f"/{self.keyspace}"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Endpoint:
        data = json.loads(text)
        data["hosts"] = tuple((str(h), int(p)) for h, p in data["hosts"])
        return cls(**data)


@dataclass(frozen=True)
class CassandraOptions:
    """One block, checked. ``endpoint`` is None at compile time when ``cassandra_conn_id`` gives it."""

    section: str
    endpoint: Endpoint | None
    keyspace: str | None
    table: str | None = None
    cql: str | None = None
    fields: tuple[str, ...] | None = None
    batch_size: int = 5000
    batch_type: str = "UNLOGGED"
    async_write: bool = True
    consistency: str = "LOCAL_ONE"


def parse_hosts(text: str) -> tuple[tuple[str, int], ...]:
    """``host:port[,host:port...]`` as pairs; a host without a port takes 9042."""
    out = []
    for part in str(text).split(","):
        m = _HOST.match(part)
        if m is None:
            raise OptionError("host", f"host: {part.strip()!r} is not host:port",
                              'host = "cassandra1:9042,cassandra2:9042"')
        port = int(m.group(2)) if m.group(2) else DEFAULT_PORT
        if not 0 < port < 65536:
            raise OptionError("host", f"host: port {port} is out of range", 'host = "localhost:9042"')
        out.append((m.group(1).strip("[]"), port))
    return tuple(out)


def _blank(value: Any) -> str | None:
    return None if value is None or str(value) == "" else str(value)


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> CassandraOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint``
    false: a block naming ``cassandra_conn_id`` may leave ``host`` and ``keyspace`` to the connection."""
    o = SPEC.parse(options, section, complete=True)
    user = _blank(o["username"])  # given with its password (SPEC's bundle); a blank user: no login
    password = str(o["password"] or "") if user is not None else None
    endpoint = None
    if o["host"] is not None and o["keyspace"] is not None:
        endpoint = Endpoint(parse_hosts(o["host"]), str(o["keyspace"]), user, password, str(o["datacenter"]),
                            str(o["consistency_level"]))
    elif need_endpoint or o[CONN_OPTION] is None:
        key = "host" if o["host"] is None else "keyspace"
        raise OptionError(key, f"the option '{key}' is required",
                          f'set {key} (or {CONN_OPTION} = "<an Airflow connection>")')
    elif o["host"] is not None:
        parse_hosts(o["host"])
    common: dict[str, Any] = {"endpoint": endpoint, "keyspace": o["keyspace"], "consistency": o["consistency_level"]}
    if section == SINK:
        fields = tuple(str(f) for f in o["fields"]) if o["fields"] else None
        if fields is not None and len(set(fields)) != len(fields):
            raise OptionError("fields", "fields names a column twice", "name each column once")
        if o["batch_type"] == "COUNTER":
            raise OptionError("batch_type", "batch_type COUNTER is for counter updates; the sink writes INSERTs, "
                                            "which counter tables refuse", "use UNLOGGED or LOGGED")
        return CassandraOptions(SINK, table=str(o["table"]), fields=fields, batch_size=o["batch_size"],
                                batch_type=o["batch_type"], async_write=o["async_write"], **common)
    return CassandraOptions(SOURCE, cql=str(o["cql"]), **common)
