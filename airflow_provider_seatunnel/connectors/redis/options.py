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

from ...spi import SINK
from ...spi.options import MISSING, OptionError, as_int, lookup
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


def opt(options: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = lookup(options, key)
    return default if value is MISSING or value is None else value


def _enum(options: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str | None) -> str:
    value = opt(options, key)
    if value is None:
        if default is None:
            raise OptionError(key, f"the option '{key}' is required", f"set {key} = \"{allowed[0]}\" (one of "
                                                                      f"{', '.join(allowed)})")
        return default
    text = str(value).strip().lower()
    if text not in allowed:
        import difflib

        close = difflib.get_close_matches(text, list(allowed), n=1, cutoff=0.5)
        raise OptionError(key, f"unknown {key} '{value}'",
                          f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(allowed)}")
    return text


def _int(options: Mapping[str, Any], key: str, default: int | None, minimum: int, maximum: int | None = None) -> int:
    value = opt(options, key)
    if value is None:
        if default is None:
            raise OptionError(key, f"the option '{key}' is required", f"set {key} = <an integer>")
        return default
    number = as_int(value)
    if number is None or number < minimum or (maximum is not None and number > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise OptionError(key, f"{key} must be an integer {bound}, found {value!r}")
    return number


def _text(options: Mapping[str, Any], key: str, hint: str) -> str:
    value = opt(options, key)
    if value is None:
        raise OptionError(key, f"the option '{key}' is required", hint)
    if isinstance(value, (Mapping, list)) or not str(value).strip():
        raise OptionError(key, f"{key} must be a non-empty string, found {value!r}", hint)
    return str(value)


def endpoint_of(options: Mapping[str, Any], required: bool = True) -> Endpoint | None:
    """``host``, ``port``, ``db_num``, ``user``, ``auth``; None when ``required`` is false and
    ``host`` is unset (``redis_conn_id`` gives it when the task runs)."""
    if not required and opt(options, "host") is None and opt(options, "port") is None:
        return None
    host = _text(options, "host", 'set host = "127.0.0.1" (or redis_conn_id = "<an Airflow connection>")')
    port = _int(options, "port", None, 1, 65535)
    db = _int(options, "db_num", DEFAULT_DB, 0)
    user, auth = opt(options, "user"), opt(options, "auth")
    return Endpoint(host, port, db, str(user) if user not in (None, "") else None,
                    str(auth) if auth not in (None, "") else None)


def _nodes(options: Mapping[str, Any], mode: str) -> None:
    nodes = opt(options, "nodes")
    if mode != "cluster":
        return
    if not isinstance(nodes, list) or not nodes:
        raise OptionError("nodes", "the option 'nodes' is required when mode = cluster",
                          'set nodes = ["host1:6379", "host2:6379"]')
    for node in nodes:
        host, _, port = str(node).rpartition(":")
        if not host or as_int(port) is None:
            raise OptionError("nodes", f"redis node {node!r} is not host:port", 'set nodes = ["host1:6379"]')


def _source_format(options: Mapping[str, Any]) -> tuple[str, Schema | None]:
    """SeaTunnel's rule: without ``format`` the rows are one text field; ``format = json`` needs ``schema``."""
    if opt(options, "format") is None:
        return "text", None
    fmt = _enum(options, "format", FORMATS, "json")
    if fmt == "text":
        return fmt, None
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if schema is None or not schema.fields:
        raise OptionError("format", "format json needs a schema (SeaTunnel: 'Must config schema when format "
                                    "parameter been config')", "add schema = { fields { name = string, ... } }, "
                                                               "or remove format to read each value as text")
    return fmt, schema


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> RedisOptions:
    """The block's options, checked. ``need_endpoint`` false: a block naming ``redis_conn_id`` may
    leave ``host``/``port`` to the connection (compile time)."""
    conn = opt(options, CONN_OPTION)
    endpoint = endpoint_of(options, required=need_endpoint or conn is None)
    mode = _enum(options, "mode", MODES, "single")
    _nodes(options, mode)
    data_type = _enum(options, "data_type", DATA_TYPES, None)
    batch_size = _int(options, "batch_size", DEFAULT_BATCH_SIZE, 1)
    if section == SINK:
        key = _text(options, "key", 'set key = "<a field name, or a literal key>"')
        fmt = _enum(options, "format", FORMATS, "json")
        expire = _int(options, "expire", DEFAULT_EXPIRE, -(2 ** 63), 2 ** 63 - 1)
        delimiter = opt(options, "field_delimiter", DEFAULT_DELIMITER)
        return RedisOptions(section, endpoint, data_type, batch_size, fmt, key=key, expire=expire,
                            field_delimiter=str(delimiter), mode=mode)
    keys = _text(options, "keys", 'set keys = "prefix:*" (a Redis key pattern)')
    parse_mode = _enum(options, "hash_key_parse_mode", HASH_KEY_PARSE_MODES, "all")
    fmt, schema = _source_format(options)
    if fmt == "json" and data_type == "hash" and parse_mode == "kv" and schema is not None and \
            len(schema.fields) < 2:
        raise OptionError("schema", "hash_key_parse_mode kv needs a schema of two or more fields (the first one "
                                    "gets each hash field's name)", "schema = { fields { hash_key = string, ... } }")
    return RedisOptions(section, endpoint, data_type, batch_size, fmt, keys=keys, hash_key_parse_mode=parse_mode,
                        schema=schema, mode=mode)
