"""RabbitMQ options as SeaTunnel names them, read once for both phases.

SeaTunnel's option rule requires ``host``, ``port``, ``virtual_host`` and ``queue_name`` (a source
also ``schema``), ``username`` and ``password`` together; ``url`` (an AMQP URI) replaces the address
and the credentials when given. ``durable`` (default true), ``exclusive`` and ``auto_delete`` (default
false) declare the queue, in a source and a sink alike. :func:`parse` turns a block into
:class:`RabbitOptions` or raises :class:`OptionError` naming the key. What differs from SeaTunnel is
listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import Schema, TypeError_, schema_from_options

#: the block option naming an Airflow connection of type ``amqp`` (host, port, login, password, schema = vhost)
CONN_OPTION = "rabbitmq_conn_id"
DEFAULT_PORT = 5672
#: commit records of a BATCH run live this long (the restore window); a micro-batch's for an hour
RECORD_TTL_MS = 7 * 24 * 3600 * 1000
STREAM_RECORD_TTL_MS = 3600 * 1000
#: what a BATCH read keeps on the driver at most (message bodies): the rest stays in the queue for the next run
MAX_BATCH_BYTES = 256 * 1024 * 1024
#: how long a read waits for the next message when none has arrived (``delivery_timeout`` unset), ms
DEFAULT_DELIVERY_TIMEOUT_MS = 1000

SPEC = OptionSpec((
    Option("host", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The broker's host (or from {CONN_OPTION})."),
    Option("port", "int", required=True, required_unless=(CONN_OPTION,), minimum=1, maximum=65535, identity=True,
           description=f"The broker's AMQP port (or from {CONN_OPTION})."),
    Option("virtual_host", required=True, required_unless=(CONN_OPTION,), identity=True,
           description="The virtual host, e.g. \"/\"."),
    Option("username", description="The AMQP user (set with password)."),
    Option("password", description="The AMQP user's password (set with username).", secret=True),
    Option("url", description="An AMQP URI (amqp://user:password@host:port/vhost): replaces host, port, "
                              "virtual_host, username and password.", secret=True),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type amqp: host, port, login, password, schema (the vhost)."),
    Option("queue_name", required=True, allow_blank=False, identity=True,
           description="The queue read, or written into (by the default exchange unless routing_key is set)."),
    Option("routing_key", description="Sink: publish to exchange with this routing key instead of the queue."),
    Option("exchange", default="", description="Sink: the exchange routing_key publishes to (default: the "
                                               "default exchange)."),
    Option("durable", "bool", True, "Declare the queue durable (it survives a broker restart)."),
    Option("exclusive", "bool", False, "Declare the queue exclusive to the declaring connection."),
    Option("auto_delete", "bool", False, "Declare the queue auto-deleted when its last consumer leaves."),
    Option("schema", "map", description="The fields of the JSON messages read.", sections=(SOURCE,)),
    Option("prefetch_count", "int", description="Messages delivered ahead of their acknowledgement (unset: the "
                                                "broker's default, unlimited).", minimum=0, maximum=65535,
           sections=(SOURCE,)),
    Option("delivery_timeout", "long", description="How long a read waits for the next message, ms (unset: "
                                                   f"{DEFAULT_DELIVERY_TIMEOUT_MS}).", minimum=0,
           sections=(SOURCE,)),
    Option("use_correlation_id", "bool", False, "Source: skip a message whose correlation id was read already "
                                                "in this read (a redelivered duplicate)."),
    Option("for_e2e_testing", "bool", False, "Source: a STREAMING read stops once the queue is drained (bounded)."),
    Option("network_recovery_interval", "int", description="Accepted; the engine retries instead (no effect).",
           minimum=0),
    Option("automatic_recovery_enabled", "bool", fallback=("AUTOMATIC_RECOVERY_ENABLED",),
           description="Accepted; the engine retries instead (no effect)."),
    Option("topology_recovery_enabled", "bool", description="Accepted; the engine retries instead (no effect)."),
    Option("connection_timeout", "int", description="TCP connection and socket timeout, ms (0: none).", minimum=0),
    Option("requested_channel_max", "int", description="The channel maximum asked for.", minimum=0,
           maximum=65535),
    Option("requested_frame_max", "int", description="The frame size asked for, bytes (at least 4096).",
           minimum=0),
    Option("requested_heartbeat", "int", description="The heartbeat asked for, seconds.", minimum=0, maximum=65535),
    Option("rabbitmq.config", "any", description="Other client settings; SeaTunnel 2.3.8 reads none of them, "
                                                 "nor does this package.", sections=(SINK,)),
), bundled=(("username", "password"),))

DEVIATIONS = (
    "source in BATCH: a bounded read of the messages ready when the read starts (SeaTunnel refuses BATCH); "
    "they are acknowledged once every sink of the pipeline committed, so a failed run loses nothing",
    "source parallelism: one consumer on the Spark driver (acknowledgements belong to its channel) whose rows "
    "are dealt over the plan's parallelism; SeaTunnel runs one consumer per reader",
    "sink: publisher confirms per message and a commit record per run id (a durable, expiring queue "
    "seatunnel.commit.<id>): a restore of a committed run publishes nothing; an overlapping attempt is "
    "refused while another holds the run's fence (an exclusive queue seatunnel.fence.<id>); a run killed "
    "while publishing republishes on restore (at least once); SeaTunnel publishes without confirms",
    "sink messages are persistent (delivery mode 2) when the queue is durable; SeaTunnel sends them transient",
    "automatic_recovery_enabled, topology_recovery_enabled and network_recovery_interval have no effect: a lost "
    "connection fails the task and the engine retries it",
)


@dataclass(frozen=True)
class Endpoint:
    """Where the broker is and the credentials (never shown: :attr:`label` has none)."""

    host: str
    port: int
    vhost: str = "/"
    user: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    timeout_ms: int | None = None
    heartbeat: int | None = None
    channel_max: int | None = None
    frame_max: int | None = None

    @property
    def label(self) -> str:
        return f"amqp://{self.host}:{self.port}/{quote(self.vhost, safe='')}"

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("host", "port", "vhost", "user", "password", "timeout_ms", "heartbeat",
                                              "channel_max", "frame_max")}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        def number(key: str) -> int | None:
            return None if d.get(key) is None else int(d[key])

        return cls(str(d["host"]), int(d["port"]), str(d.get("vhost") or "/"), d.get("user"), d.get("password"),
                   number("timeout_ms"), number("heartbeat"), number("channel_max"), number("frame_max"))


@dataclass(frozen=True)
class RabbitOptions:
    """One block, checked: the endpoint (None at compile time when the connection gives it), the queue and
    how it is declared, what a source parses and a sink routes."""

    section: str
    endpoint: Endpoint | None
    queue: str
    durable: bool = True
    exclusive: bool = False
    auto_delete: bool = False
    routing_key: str | None = None
    exchange: str = ""
    schema: Schema | None = None
    prefetch_count: int | None = None
    delivery_timeout_ms: int = DEFAULT_DELIVERY_TIMEOUT_MS
    use_correlation_id: bool = False
    bounded_stream: bool = False

    def declare_args(self) -> dict[str, Any]:
        return {"durable": self.durable, "exclusive": self.exclusive, "auto_delete": self.auto_delete}


def _from_url(url: str, base: dict[str, Any]) -> dict[str, Any]:
    parts = urlsplit(url)
    if parts.scheme not in ("amqp", "amqps") or not parts.hostname:
        raise OptionError("url", "url must be an AMQP URI: amqp://user:password@host:port/vhost",
                          'set url = "amqp://user:password@127.0.0.1:5672/%2F", or remove it')
    if parts.scheme == "amqps":
        raise OptionError("url", "amqps (TLS) URIs are not supported by this package", "use an amqp:// URI")
    vhost = unquote(parts.path[1:]) if len(parts.path) > 1 else "/"
    return {**base, "host": parts.hostname, "port": parts.port or DEFAULT_PORT, "vhost": vhost,
            "user": unquote(parts.username) if parts.username else None,
            "password": unquote(parts.password) if parts.password else None}


def _endpoint(o: Any) -> Endpoint | None:
    tuning = {"timeout_ms": o["connection_timeout"], "heartbeat": o["requested_heartbeat"],
              "channel_max": o["requested_channel_max"], "frame_max": o["requested_frame_max"]}
    if o["requested_frame_max"] is not None and 0 < o["requested_frame_max"] < 4096:
        raise OptionError("requested_frame_max", "requested_frame_max must be 0 or at least 4096 bytes")
    if o["url"]:
        return Endpoint(**_from_url(str(o["url"]), tuning))
    if o["host"] is None and o["port"] is None:
        return None
    for key in ("host", "port"):
        if o[key] is None:
            raise OptionError(key, f"the option '{key}' is required",
                              f"set {key} = ... (or {CONN_OPTION} = \"<an Airflow connection>\")")
    return Endpoint(o["host"], o["port"], o["virtual_host"] or "/", o["username"] or None, o["password"] or None,
                    **tuning)


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> RabbitOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint``
    false: a block naming ``rabbitmq_conn_id`` may leave the address to the connection (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    endpoint = _endpoint(o)
    if endpoint is None and (need_endpoint or o[CONN_OPTION] is None):
        raise OptionError("host", "the option 'host' is required",
                          f'set host = "127.0.0.1" (or {CONN_OPTION} = "<an Airflow connection>")')
    common: dict[str, Any] = {"endpoint": endpoint, "queue": str(o["queue_name"]), "durable": bool(o["durable"]),
              "exclusive": bool(o["exclusive"]), "auto_delete": bool(o["auto_delete"])}
    if section == SINK:
        return RabbitOptions(section, routing_key=o["routing_key"] or None, exchange=str(o["exchange"] or ""),
                             **common)
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if schema is None or not schema.fields:
        raise OptionError("schema", "the option 'schema' is required (the messages are JSON rows of its fields)",
                          "add schema = { fields { id = bigint, name = string } }")
    timeout = o["delivery_timeout"]
    return RabbitOptions(section, schema=schema, prefetch_count=o["prefetch_count"],
                         delivery_timeout_ms=DEFAULT_DELIVERY_TIMEOUT_MS if not timeout else int(timeout),
                         use_correlation_id=bool(o["use_correlation_id"]),
                         bounded_stream=bool(o["for_e2e_testing"]), **common)


def written_endpoint(options: Mapping[str, Any]) -> str | None:
    """``amqp://host:port/<vhost>`` as the block writes it (lineage: never the credentials); None when a
    connection gives it."""
    try:
        o = SPEC.parse(options, SINK if "schema" not in options else SOURCE, complete=False)
        endpoint = _endpoint(o)
    except OptionError:
        return None
    return endpoint.label if endpoint is not None else None
