"""Hbase options as SeaTunnel names them, read once for both phases.

:func:`parse` turns a block's options into :class:`HbaseOptions` or raises :class:`OptionError` naming the
key: the compile-time checks make it a located problem, the run a ``RuntimeConfigError``. Names, defaults
and required options are SeaTunnel's (a source needs ``zookeeper_quorum``, ``table`` and a ``schema`` whose
fields are ``rowkey`` or ``family:qualifier``; a sink ``zookeeper_quorum``, ``table``, ``rowkey_column`` and
``family_name``).

The client talks to HBase's Thrift gateway, never to ZooKeeper (Spark's Python workers have no HBase
client): the gateway is found as :func:`gateway_of` says. What differs from SeaTunnel: :data:`DEVIATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError, as_bool, as_int
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import Schema, TypeError_, schema_from_options

#: the block option naming an Airflow connection of type ``hbase`` (the Thrift gateway's host and port)
CONN_OPTION = "hbase_conn_id"
#: this package's option naming the Thrift gateway, host:port (an ``hbase_conn_id`` connection sets it)
GATEWAY_OPTION = "thrift_gateway"
#: HBase's own keys for its Thrift gateway, read from ``hbase_extra_config``
THRIFT_HOST_KEY = "hbase.regionserver.thrift.ipaddress"
THRIFT_PORT_KEY = "hbase.regionserver.thrift.port"
THRIFT_FRAMED_KEY = "hbase.regionserver.thrift.framed"
THRIFT_COMPACT_KEY = "hbase.regionserver.thrift.compact"
#: HBase's default Thrift gateway port
DEFAULT_THRIFT_PORT = 9090
#: the field a source reads the row key into
ROWKEY_FIELD = "rowkey"
#: ``family_name``'s key giving every column's family
ALL_COLUMNS = "all_columns"
#: the family of a column ``family_name`` does not name (SeaTunnel's default)
DEFAULT_FAMILY = "value"
NULL_MODES = ("skip", "empty")
ENCODINGS = ("utf8", "gbk")
SCHEMA_SAVE_MODES = ("CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "RECREATE_SCHEMA", "IGNORE")
DATA_SAVE_MODES = ("APPEND_DATA", "DROP_DATA", "ERROR_WHEN_DATA_EXISTS")
DEFAULT_BUFFER = 8 * 1024 * 1024
#: rows fetched per scanner round trip when ``caching`` is -1 (HBase's own default scanner caching is 100)
DEFAULT_CACHING = 100
#: at most this many rows a round trip, whatever ``caching`` says (a reader's memory stays bounded)
MAX_CACHING = 10_000
#: the types a sink writes (SeaTunnel's sink refuses the others); a source also reads these as strings
SINK_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string", "array")
SOURCE_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string", "bytes",
                "decimal", "date", "time", "timestamp")

SPEC = OptionSpec((
    Option("zookeeper_quorum", required=True, allow_blank=False, identity=True,
           description="HBase's ZooKeeper quorum, host:port,...; its first reachable host runs the Thrift gateway "
                       f"unless hbase_extra_config or {CONN_OPTION} names it."),
    Option("table", required=True, allow_blank=False, identity=True,
           description="The table, optionally namespace:table."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type hbase: the Thrift gateway's host and port."),
    Option(GATEWAY_OPTION, description="host:port of HBase's Thrift gateway (this package's option; "
           f"{CONN_OPTION} sets it)."),
    Option("hbase_extra_config", "map", description="HBase client settings; "
           f"{THRIFT_HOST_KEY}, {THRIFT_PORT_KEY}, {THRIFT_FRAMED_KEY} and {THRIFT_COMPACT_KEY} address the gateway."),
    # source
    Option("schema", "map", description="The fields read: rowkey and family:qualifier columns with their types.",
           sections=(SOURCE,), required=True),
    Option("caching", "int", -1, f"Rows per scanner round trip (-1: {DEFAULT_CACHING}; at most {MAX_CACHING}).",
           sections=(SOURCE,)),
    Option("batch", "int", -1, "Cells per scanner result (-1: whole rows).", sections=(SOURCE,)),
    Option("query_columns", "list", description="Older configs' column list: the schema's fields decide what is "
           "read (as in SeaTunnel 2.3.8).", sections=(SOURCE,)),
    Option("cache_blocks", "bool", False, "Whether the scan fills the region servers' block cache.",
           sections=(SOURCE,)),
    # sink
    Option("rowkey_column", "list", description="The fields joined into the row key.", required=True,
           sections=(SINK,)),
    Option("family_name", "map", description="field -> column family; all_columns = family for every field.",
           required=True, sections=(SINK,)),
    Option("rowkey_delimiter", default="", description="Between the row key's fields.", sections=(SINK,)),
    Option("version_column", description="A bigint field whose value is the cells' timestamp.", sections=(SINK,)),
    Option("null_mode", "enum", "skip", "skip: a null writes no cell; empty: an empty cell.", choices=NULL_MODES,
           sections=(SINK,)),
    Option("wal_write", "bool", False, "Whether the puts go through the write-ahead log.", sections=(SINK,)),
    Option("write_buffer_size", "int", DEFAULT_BUFFER, "Bytes of puts buffered per request.", minimum=1,
           sections=(SINK,)),
    Option("encoding", "enum", "utf8", "The charset of string values.", choices=ENCODINGS, sections=(SINK,)),
    Option("ttl", "long", -1, "Milliseconds a written cell lives (-1: the table's TTL).", sections=(SINK,)),
    Option("schema_save_mode", "enum", "CREATE_SCHEMA_WHEN_NOT_EXIST", "What to do with the table first.",
           choices=SCHEMA_SAVE_MODES, sections=(SINK,)),
    Option("data_save_mode", "enum", "APPEND_DATA", "What to do with the rows the table holds.",
           choices=DATA_SAVE_MODES, sections=(SINK,)),
))

DEVIATIONS = (
    "the client is HBase's Thrift 1 gateway, not ZooKeeper: its address comes from thrift_gateway (set by "
    "hbase_conn_id), else "
    f"hbase_extra_config's {THRIFT_HOST_KEY}/{THRIFT_PORT_KEY}, else each zookeeper_quorum host at port "
    f"{DEFAULT_THRIFT_PORT} in turn",
    "sink: exactly-once (staged per attempt in the table seatunnel_staging, claimed in seatunnel_commits by a "
    "checkAndPut on the attempt token, then copied with the staged cell timestamps, so a copy repeated by a "
    "restore lands the same cells once); SeaTunnel puts each row directly, at least once",
    "sink: without version_column a write task stamps its cells with one timestamp, taken when it starts "
    "(SeaTunnel: the time of each put)",
    "sink: array values are written as their elements joined by ',' (SeaTunnel 2.3.8 writes Java's text of the "
    "array object, e.g. [Ljava.lang.String;@1b2c3d, losing the values)",
    "sink: DROP_DATA and RECREATE_SCHEMA empty the table when the first commit publishes (a failed run leaves it "
    "as it was); SeaTunnel truncates before writing",
    "source: the table's regions are dealt over the plan's parallelism in contiguous runs (SeaTunnel hashes split "
    "ids to readers); cache_blocks is not sent (the Thrift 1 scan has no such field): it changes no row",
    "source: a cell whose bytes do not fit the declared type (an int of 3 bytes) fails the read naming the "
    "row and column (SeaTunnel: an exception from Bytes without them)",
)


@dataclass(frozen=True)
class Gateway:
    """Where the Thrift gateway listens: hosts tried in order, the port, the transport and protocol."""

    hosts: tuple[str, ...]
    port: int = DEFAULT_THRIFT_PORT
    framed: bool = False
    compact: bool = False

    @property
    def label(self) -> str:
        return f"hbase-thrift://{self.hosts[0]}:{self.port}" if self.hosts else "hbase-thrift://?"

    def to_json(self) -> dict[str, Any]:
        return {"hosts": list(self.hosts), "port": self.port, "framed": self.framed, "compact": self.compact}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Gateway:
        return cls(tuple(str(h) for h in d["hosts"]), int(d["port"]), bool(d.get("framed")), bool(d.get("compact")))


@dataclass(frozen=True)
class HbaseOptions:
    """One block, checked: the gateway, the table and what is read or written."""

    section: str
    gateway: Gateway
    table: str
    schema: Schema | None = None  # source
    caching: int = DEFAULT_CACHING
    batch: int = -1
    rowkey_columns: tuple[str, ...] = ()
    family_names: tuple[tuple[str, str], ...] = ()
    rowkey_delimiter: str = ""
    version_column: str | None = None
    null_mode: str = "skip"
    wal_write: bool = False
    write_buffer_size: int = DEFAULT_BUFFER
    encoding: str = "utf8"
    ttl: int = -1
    schema_save_mode: str = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode: str = "APPEND_DATA"

    @property
    def thrift_table(self) -> str:
        return thrift_name(self.table)

    def family_of(self, field: str) -> str:
        """The family a field is written to: its own entry, else ``all_columns`` when that is the only
        entry, else ``value`` (SeaTunnel's rule)."""
        names = dict(self.family_names)
        default = names.get(ALL_COLUMNS, DEFAULT_FAMILY) if len(names) == 1 else DEFAULT_FAMILY
        return names.get(field, default)

    def families(self, fields: list[str]) -> list[str]:
        """Every family the sink writes for ``fields`` (the columns that are not key or version)."""
        skip = {*self.rowkey_columns, *((self.version_column,) if self.version_column else ())}
        return sorted({self.family_of(f) for f in fields if f not in skip})


def thrift_name(table: str) -> str:
    """A table as the Thrift gateway names it (``namespace:table``; ``default:`` dropped)."""
    ns, sep, name = table.partition(":")
    return name if sep and ns == "default" else table


def gateway_of(o: ParsedOptions) -> Gateway:
    """The gateway: ``thrift_gateway`` (host:port; an ``hbase_conn_id`` connection sets it), else
    ``hbase_extra_config``'s HBase Thrift keys, else every ``zookeeper_quorum`` host (its port dropped) at 9090,
    tried in turn."""
    extra = {str(k): v for k, v in (o["hbase_extra_config"] or {}).items()}
    framed = bool(as_bool(extra.get(THRIFT_FRAMED_KEY, False)))
    compact = bool(as_bool(extra.get(THRIFT_COMPACT_KEY, False)))
    if o[GATEWAY_OPTION]:
        host, _, port_text = str(o[GATEWAY_OPTION]).strip().rpartition(":")
        given = as_int(port_text)
        if not host or given is None or not 0 < given < 65536:
            raise OptionError(GATEWAY_OPTION, f"{GATEWAY_OPTION} must be host:port", 'thrift_gateway = "hb1:9090"')
        return Gateway((host.strip("[]"),), given, framed, compact)
    port = as_int(extra.get(THRIFT_PORT_KEY, DEFAULT_THRIFT_PORT))
    if port is None or not 0 < port < 65536:
        raise OptionError("hbase_extra_config", f"{THRIFT_PORT_KEY} must be a port number",
                          f'hbase_extra_config = {{ "{THRIFT_PORT_KEY}" = "9090" }}')
    host = str(extra.get(THRIFT_HOST_KEY) or "").strip()
    hosts = (host,) if host else _quorum_hosts(str(o["zookeeper_quorum"] or ""))
    if not hosts:
        raise OptionError("zookeeper_quorum", "zookeeper_quorum names no host", 'zookeeper_quorum = "zk1:2181"')
    return Gateway(hosts, port, framed, compact)


def _quorum_hosts(quorum: str) -> tuple[str, ...]:
    hosts = []
    for item in quorum.split(","):
        item = item.strip()
        if item.startswith("["):  # [ipv6]:port
            host = item[1:].partition("]")[0]
        else:
            host = item.rpartition(":")[0] if item.count(":") == 1 else item
        if host and host not in hosts:
            hosts.append(host)
    return tuple(hosts)


def _source_schema(options: Mapping[str, Any]) -> Schema:
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if schema is None or not schema.fields:
        raise OptionError("schema", "the Hbase source needs a schema", 'schema = { columns = [{ name = "rowkey", '
                          'type = string }, { name = "cf:col", type = string }] }')
    for f in schema.fields:
        if f.name != ROWKEY_FIELD:
            family, sep, qualifier = f.name.partition(":")
            if not sep or not family.strip() or not qualifier.strip() or ":" in qualifier:
                raise OptionError("schema", f"field {f.name!r} is not rowkey nor family:qualifier (SeaTunnel: "
                                  "'Invalid column names, it should be [ColumnFamily:Column] format')",
                                  'name the cells "family:qualifier", the row key "rowkey"')
        kind = f.type.name.lower()
        if kind not in SOURCE_TYPES:
            raise OptionError("schema", f"field {f.name!r}: type {f.type.name} cannot be read from HBase "
                              "(SeaTunnel: 'Unsupported data type')", "one of " + ", ".join(SOURCE_TYPES))
    return schema


def _sink_rules(o: ParsedOptions) -> None:
    if not o["rowkey_column"]:
        raise OptionError("rowkey_column", "rowkey_column names no field", 'rowkey_column = ["id"]')
    families = o["family_name"] or {}
    if not families:
        raise OptionError("family_name", "family_name maps no field", "family_name { all_columns = info }")
    for name, family in families.items():
        if not str(family).strip() or ":" in str(family):
            raise OptionError("family_name", f"family {family!r} of {name!r} is not a column family name",
                              "a family name without ':'")


def parse(options: Mapping[str, Any], section: str) -> HbaseOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare)."""
    o = SPEC.parse(options, section, complete=True)
    common: dict[str, Any] = {"gateway": gateway_of(o), "table": str(o["table"]).strip()}
    if common["table"].count(":") > 1:
        raise OptionError("table", f"table {common['table']!r} is not [namespace:]table", 'table = "ns:name"')
    if section == SOURCE:
        caching = o["caching"] if o["caching"] and o["caching"] > 0 else DEFAULT_CACHING
        return HbaseOptions(section, schema=_source_schema(options), caching=min(caching, MAX_CACHING),
                            batch=o["batch"], **common)
    _sink_rules(o)
    return HbaseOptions(
        section, rowkey_columns=tuple(str(c) for c in o["rowkey_column"]),
        family_names=tuple((str(k), str(v)) for k, v in (o["family_name"] or {}).items()),
        rowkey_delimiter=str(o["rowkey_delimiter"] or ""), version_column=o["version_column"] or None,
        null_mode=str(o["null_mode"]).lower(), wal_write=bool(o["wal_write"]),
        write_buffer_size=int(o["write_buffer_size"]), encoding=str(o["encoding"]).lower(), ttl=int(o["ttl"]),
        schema_save_mode=str(o["schema_save_mode"]), data_save_mode=str(o["data_save_mode"]), **common)
