"""Redis options as SeaTunnel names them, read once for both phases.

:func:`parse` turns a block's options into :class:`RedisOptions` or raises :class:`OptionError`
naming the key: the compile-time checks make it a located problem, the run a
``RuntimeConfigError``. Names, defaults and required options are SeaTunnel's (its option rule
requires ``host``, ``port``, ``data_type`` and, for a source, ``keys``, for a sink, ``key``).

What differs from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError, as_int
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import Schema, TypeError_, schema_from_options

#: SeaTunnel's ``data_type`` values (``key`` and ``string`` are one Redis type)
DATA_TYPES = ("key", "string", "hash", "list", "set", "zset")
#: the Redis type (as ``TYPE`` answers) each ``data_type`` reads and writes
REDIS_TYPES = {"key": "string", "string": "string", "hash": "hash", "list": "list", "set": "set", "zset": "zset"}
FORMATS = ("json", "text")
MODES = ("single", "cluster")
HASH_KEY_PARSE_MODES = ("all", "kv")
DEFAULT_BATCH_SIZE = 10
DEFAULT_EXPIRE = -1
DEFAULT_DB = 0
DEFAULT_DELIMITER = ","
#: the one field of a source read without a schema (SeaTunnel's simple text table)
TEXT_FIELD = "content"
#: the field a hash row gets the Redis key's name in (``hash_key_parse_mode = all``)
HASH_KEY_FIELD = "hash_key"
#: the block option naming an Airflow connection of type ``redis`` (host, port, login, password, extra ``db``)
CONN_OPTION = "redis_conn_id"
#: sink options of later SeaTunnel versions that change what is written: they plan, but cannot run
LATER_SINK_OPTIONS = ("support_custom_key", "value_field", "hash_key_field", "hash_value_field")

SPEC = OptionSpec((
    Option("host", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The server's host (or from {CONN_OPTION})."),
    Option("port", "int", required=True, required_unless=(CONN_OPTION,), minimum=1, maximum=65535, identity=True,
           description=f"The server's port (or from {CONN_OPTION})."),
    Option("db_num", "int", DEFAULT_DB, "The database number.", minimum=0, identity=True),
    Option("user", description="The ACL user (Redis 6 and later)."),
    Option("auth", description="The password.", secret=True),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type redis: host, port, login, password, extra db."),
    Option("mode", "enum", "single", "single; cluster plans but cannot run here.", choices=MODES),
    Option("nodes", "list", description="host:port of each cluster node.", required_if=(("mode", ("cluster",)),)),
    Option("data_type", "enum", description="The Redis type read or written.", required=True, choices=DATA_TYPES,
           identity=True),
    Option("batch_size", "int", DEFAULT_BATCH_SIZE, "Keys per SCAN (source) or values per call (sink).",
           minimum=1),
    Option("format", "enum", description="json or text; a source without it reads each value as the text field "
           "content, a sink writes json.", choices=FORMATS),
    Option("keys", required=True, allow_blank=False, sections=(SOURCE,), identity=True,
           description="The key pattern read."),
    Option("hash_key_parse_mode", "enum", "all", "all: a row per hash; kv: a row per hash field.",
           choices=HASH_KEY_PARSE_MODES, sections=(SOURCE,)),
    Option("schema", "map", description="The rows' fields (format json).", sections=(SOURCE,)),
    Option("key", required=True, allow_blank=False, sections=(SINK,), identity=True,
           description="A field whose value is the key, or a literal key."),
    Option("expire", "long", DEFAULT_EXPIRE, "Seconds a written key lives (-1: for ever).",
           minimum=-(2 ** 63), maximum=2 ** 63 - 1, sections=(SINK,)),
    Option("field_delimiter", default=DEFAULT_DELIMITER, description="Between fields with format text.",
           sections=(SINK,)),
    *(Option(key, "any", description="A later SeaTunnel version's option: plans, cannot run here.",
             sections=(SINK,)) for key in LATER_SINK_OPTIONS),
))

DEVIATIONS = (
    "parallelism: the source's keys are listed once (SCAN with MATCH, COUNT batch_size and TYPE) and dealt "
    "over the plan's parallelism, one Spark partition each; SeaTunnel reads with a single split",
    "sink: exactly-once (staged per attempt, published by one atomic Lua script that also records the commit); "
    "SeaTunnel writes each batch directly, at least once",
    "expire: applied once per written key when the commit publishes it (SeaTunnel sets it after each write)",
    "format text for the sink joins the fields with field_delimiter (default ','), as later SeaTunnel "
    "versions do; SeaTunnel 2.3.8 writes json only",
    "hash_key_parse_mode follows SeaTunnel's documentation: all = one row per hash (the hash's fields "
    "are the row's, parsed by the schema, plus hash_key = the Redis key), kv = one row per hash field "
    "(the schema's first field gets the field's name, the others come from its JSON value)",
    "mode = cluster plans but cannot run here (the atomic commit needs every key on one server)",
    "a source reading a key whose type is not data_type skips it (SCAN's TYPE filter), as SeaTunnel 2.3.8 "
    "does on Redis 6 and later",
)


@dataclass(frozen=True)
class Endpoint:
    """Where the server is and the credentials (never shown: :meth:`label` has neither)."""

    host: str
    port: int
    db: int = DEFAULT_DB
    user: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "db": self.db, "user": self.user, "password": self.password}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(str(d["host"]), int(d["port"]), int(d.get("db") or 0), d.get("user"), d.get("password"))


@dataclass(frozen=True)
class RedisOptions:
    """One block, checked: the endpoint (None at compile time when ``redis_conn_id`` gives it),
    what it reads or writes, and how values are (de)serialized."""

    section: str
    endpoint: Endpoint | None
    data_type: str
    batch_size: int = DEFAULT_BATCH_SIZE
    format: str = "text"  # source: text unless ``format`` is set; sink: json unless set
    keys: str | None = None  # source: the key pattern
    key: str | None = None  # sink: a field name or a literal key
    hash_key_parse_mode: str = "all"
    expire: int = DEFAULT_EXPIRE
    field_delimiter: str = DEFAULT_DELIMITER
    schema: Schema | None = None  # source with format json
    mode: str = "single"

    @property
    def redis_type(self) -> str:
        return REDIS_TYPES[self.data_type]

    def output_schema(self) -> Schema:
        """The rows a source produces: the declared schema (format json), else ``content string``."""
        from ...spi.schema import Field, parse_type

        if self.format == "json" and self.schema is not None:
            return self.schema
        return Schema((Field(TEXT_FIELD, parse_type("string")),))


def endpoint_of(o: ParsedOptions) -> Endpoint | None:
    """``host``, ``port``, ``db_num``, ``user``, ``auth``; None when ``host`` and ``port`` are unset
    (``redis_conn_id`` gives them when the task runs)."""
    if o["host"] is None and o["port"] is None:
        return None
    for key in ("host", "port"):
        if o[key] is None:
            raise OptionError(key, f"the option '{key}' is required",
                              f"set {key} = ... (or {CONN_OPTION} = \"<an Airflow connection>\")")
    user, auth = o["user"], o["auth"]
    return Endpoint(o["host"], o["port"], o["db_num"], user or None, auth or None)


def _nodes(o: ParsedOptions) -> None:
    if o["mode"] != "cluster":
        return
    if not o["nodes"]:
        raise OptionError("nodes", "the option 'nodes' is required when mode = cluster",
                          'set nodes = ["host1:6379", "host2:6379"]')
    for node in o["nodes"]:
        host, _, port = str(node).rpartition(":")
        if not host or as_int(port) is None:
            raise OptionError("nodes", f"redis node {node!r} is not host:port", 'set nodes = ["host1:6379"]')


def _source_format(options: Mapping[str, Any], o: ParsedOptions) -> tuple[str, Schema | None]:
    """SeaTunnel's rule: without ``format`` the rows are one text field; ``format = json`` needs ``schema``."""
    if o["format"] in (None, "text"):
        return "text", None
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if schema is None or not schema.fields:
        raise OptionError("format", "format json needs a schema (SeaTunnel: 'Must config schema when format "
                                    "parameter been config')", "add schema = { fields { name = string, ... } }, "
                                                               "or remove format to read each value as text")
    return "json", schema


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> RedisOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint``
    false: a block naming ``redis_conn_id`` may leave ``host``/``port`` to the connection (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    endpoint = endpoint_of(o)
    if endpoint is None and (need_endpoint or o[CONN_OPTION] is None):
        raise OptionError("host", "the option 'host' is required",
                          f'set host = "127.0.0.1" (or {CONN_OPTION} = "<an Airflow connection>")')
    _nodes(o)
    common = {"endpoint": endpoint, "data_type": o["data_type"], "batch_size": o["batch_size"], "mode": o["mode"]}
    if section == SINK:
        return RedisOptions(section, format=o["format"] or "json", key=o["key"], expire=o["expire"],
                            field_delimiter=str(o["field_delimiter"]), **common)
    fmt, schema = _source_format(options, o)
    if fmt == "json" and o["data_type"] == "hash" and o["hash_key_parse_mode"] == "kv" and schema is not None and \
            len(schema.fields) < 2:
        raise OptionError("schema", "hash_key_parse_mode kv needs a schema of two or more fields (the first one "
                                    "gets each hash field's name)", "schema = { fields { hash_key = string, ... } }")
    return RedisOptions(section, format=fmt, keys=o["keys"], hash_key_parse_mode=o["hash_key_parse_mode"],
                        schema=schema, **common)
