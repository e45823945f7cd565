"""Pulsar options as SeaTunnel names them, read once for both phases.

Source (SeaTunnel's option rule): ``subscription.name``, ``client.service-url`` and ``admin.service-url``
required; exactly one of ``topic`` (names split at commas, as SeaTunnel's reader splits them) and
``topic-pattern``; ``cursor.startup.mode`` (default LATEST) with ``cursor.startup.timestamp`` for TIMESTAMP and
``cursor.reset.mode`` for SUBSCRIPTION; ``cursor.stop.mode`` (default NEVER) with ``cursor.stop.timestamp`` for
TIMESTAMP; ``auth.plugin-class`` and ``auth.params`` together; ``format`` (json) and ``schema``.
Sink: ``topic``, ``client.service-url`` and ``admin.service-url`` required; ``format`` json or text with
``field_delimiter``; ``semantics``, ``transaction_timeout``, ``pulsar.config``, ``message.routing.mode``,
``partition_key_fields``. ``pulsar_conn_id`` names an Airflow connection instead of the URLs and the token.
:func:`parse` turns a block into :class:`PulsarOptions` or raises :class:`OptionError` naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import Schema, TypeError_, schema_from_options

CONN_OPTION = "pulsar_conn_id"
#: the one authentication plugin this package's client takes (a JWT); its ``auth.params`` is ``token:<jwt>``
TOKEN_PLUGIN = "org.apache.pulsar.client.impl.auth.AuthenticationToken"
#: the single field of a source without ``schema``, as SeaTunnel's simple text schema names it
TEXT_FIELD = "content"

START_MODES = ("EARLIEST", "LATEST", "SUBSCRIPTION", "TIMESTAMP")
STOP_MODES = ("NEVER", "LATEST", "TIMESTAMP")

SPEC = OptionSpec((
    Option("topic", allow_blank=False, identity=True,
           description="The topic (source: topics, separated by commas; sink: one topic)."),
    Option("topic-pattern", allow_blank=False, identity=True, sections=(SOURCE,),
           description="A regular expression of the topic names to read (tenant/namespace fixed by its prefix)."),
    Option("topic-discovery.interval", "long", -1, sections=(SOURCE,),
           description="Accepted: a read (BATCH or STREAMING) lists the topics once when it starts."),
    Option("subscription.name", required=True, allow_blank=False, sections=(SOURCE,),
           description="The durable subscription acknowledged once the pipeline committed (and read from in "
                       "the SUBSCRIPTION start mode)."),
    Option("client.service-url", required=True, required_unless=(CONN_OPTION,), allow_blank=False, identity=True,
           description="The broker's service URL, pulsar://host:6650."),
    Option("admin.service-url", required=True, required_unless=(CONN_OPTION,), allow_blank=False,
           description="The admin REST URL, http://host:8080 (partitions, last message ids, cursors)."),
    Option("auth.plugin-class", description=f"Authentication plugin; only {TOKEN_PLUGIN} (set with auth.params)."),
    Option("auth.params", secret=True, description="The plugin's parameters: token:<jwt> (a secret)."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection: host, port (default 6650), password (a token), extra admin_url."),
    Option("poll.timeout", "int", 100, minimum=1, sections=(SOURCE,),
           description="Milliseconds one read of a message waits at most (a read ends at its stop cursor)."),
    Option("poll.interval", "long", 50, minimum=0, sections=(SOURCE,), description="Accepted (no polling loop)."),
    Option("poll.batch.size", "int", 500, minimum=1, sections=(SOURCE,), description="Accepted (no polling loop)."),
    Option("cursor.startup.mode", "enum", "LATEST", choices=START_MODES, sections=(SOURCE,),
           description="Where a read starts in each partition."),
    Option("cursor.startup.timestamp", "long", sections=(SOURCE,),
           required_if=(("cursor.startup.mode", ("TIMESTAMP",)),),
           description="Epoch milliseconds of the TIMESTAMP start (a message's publish time)."),
    Option("cursor.reset.mode", "enum", choices=("EARLIEST", "LATEST"), sections=(SOURCE,),
           description="Where a new subscription starts (SUBSCRIPTION start mode); default LATEST."),
    Option("cursor.stop.mode", "enum", "NEVER", choices=STOP_MODES, sections=(SOURCE,),
           description="Where a read stops: LATEST, the last message when it starts; TIMESTAMP; NEVER "
                       "(STREAMING only)."),
    Option("cursor.stop.timestamp", "long", sections=(SOURCE,),
           required_if=(("cursor.stop.mode", ("TIMESTAMP",)),),
           description="Epoch milliseconds of the TIMESTAMP stop: the first message published at or after it "
                       "is the last one read."),
    Option("schema", "map", sections=(SOURCE,),
           description=f"The fields of the JSON messages (without it: one string field {TEXT_FIELD})."),
    Option("format", "enum", "json", choices=("json", "text", "canal_json"),
           description="json (source and sink) or text (sink: the fields joined by field_delimiter)."),
    Option("field_delimiter", default=",", sections=(SINK,), description="The text format's field separator."),
    Option("semantics", "enum", "AT_LEAST_ONCE", choices=("NON", "AT_LEAST_ONCE", "EXACTLY_ONCE"),
           sections=(SINK,),
           description="NON: sent once, no record; AT_LEAST_ONCE: fenced, with a commit record per run; "
                       "EXACTLY_ONCE: refused (see docs/pulsar.md)."),
    Option("transaction_timeout", "int", 600, minimum=1, sections=(SINK,),
           description="Accepted (no Pulsar transaction is used)."),
    Option("pulsar.config", "map", sections=(SINK,), description="Producer settings: sendTimeoutMs, "
                                                                 "batchingEnabled, compressionType are applied."),
    Option("message.routing.mode", "enum", "RoundRobinPartition",
           choices=("SinglePartition", "RoundRobinPartition"), sections=(SINK,),
           description="How messages without a key spread over a partitioned topic's partitions."),
    Option("partition_key_fields", "list", sections=(SINK,),
           description='Fields whose JSON object ({"name":"Jack"}) is the message key.'),
), bundled=(("auth.plugin-class", "auth.params"),))

DEVIATIONS = (
    "EXACTLY_ONCE is refused at compile time: PyPI's pulsar-client has no transactions; AT_LEAST_ONCE adds a "
    "commit record per run and a fence (a restore of a finished run sends nothing)",
    "cursor.stop.mode = TIMESTAMP reads cursor.stop.timestamp (SeaTunnel's reader takes cursor.startup.timestamp "
    "by mistake) and compares a message's publish time (SeaTunnel compares the event time, 0 when unset)",
    "format canal_json is not supported yet",
    "topic-discovery.interval is accepted and not applied: a stream lists its topics once, when it starts",
)

_PRODUCER_SETTINGS = {"sendtimeoutms": "send_timeout_millis", "batchingenabled": "batching_enabled",
                      "compressiontype": "compression_type"}


@dataclass(frozen=True)
class Endpoint:
    """Where the cluster is and the token (never shown: :attr:`label` has none)."""

    service_url: str
    admin_url: str
    token: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return self.service_url

    def to_json(self) -> dict[str, Any]:
        return {"service_url": self.service_url, "admin_url": self.admin_url, "token": self.token}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(str(d["service_url"]), str(d["admin_url"]), d.get("token"))


@dataclass(frozen=True)
class PulsarOptions:
    """One block, checked. ``endpoint`` is None at compile time when a connection gives it."""

    section: str
    endpoint: Endpoint | None
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    subscription: str = ""
    start: str = "LATEST"
    start_timestamp: int | None = None
    reset: str = "LATEST"
    stop: str = "NEVER"
    stop_timestamp: int | None = None
    poll_timeout_ms: int = 100
    schema: Schema | None = None
    format: str = "json"
    field_delimiter: str = ","
    semantics: str = "AT_LEAST_ONCE"
    routing: str = "RoundRobinPartition"
    key_fields: tuple[str, ...] = ()
    producer: Mapping[str, Any] = field(default_factory=dict)


def full_topic(name: str) -> str:
    """``persistent://public/default/<name>`` for a short name, ``persistent://<tenant>/<ns>/<name>`` for one
    with its namespace; a full name as it is."""
    if "://" in name:
        return name
    return "persistent://" + (name if "/" in name else "public/default/" + name)


def _urls(o: Mapping[str, Any]) -> tuple[str | None, str | None]:
    service, admin = o["client.service-url"], o["admin.service-url"]
    if service is not None:
        service = str(service).strip()
        if urlsplit(service).scheme not in ("pulsar", "pulsar+ssl"):
            raise OptionError("client.service-url", f"client.service-url must be pulsar://host:port, not "
                                                    f"{service!r}", 'set client.service-url = "pulsar://127.0.0.1:6650"')
    if admin is not None:
        admin = str(admin).strip()
        if urlsplit(admin).scheme not in ("http", "https"):
            raise OptionError("admin.service-url", f"admin.service-url must be http(s)://host:port, not {admin!r}",
                              'set admin.service-url = "http://127.0.0.1:8080"')
    return service, admin


def _token(o: Mapping[str, Any]) -> str | None:
    plugin, params = o["auth.plugin-class"], o["auth.params"]  # both or neither (SPEC's bundle)
    if plugin is None or params is None:
        return None
    if str(plugin).strip() != TOKEN_PLUGIN:
        raise OptionError("auth.plugin-class", f"the authentication plugin {plugin!r} is not supported here: only "
                                               f"{TOKEN_PLUGIN}", f'set auth.plugin-class = "{TOKEN_PLUGIN}"')
    text = str(params).strip()
    return text[len("token:"):] if text.startswith("token:") else text


#: a Pulsar tenant or namespace name, literally (no regular-expression syntax)
_NAME = re.compile(r"[\w.:=-]+")


def full_pattern(pattern: str) -> str:
    """``topic-pattern`` as a full topic name pattern (the default namespace ``public/default`` added)."""
    return pattern if "://" in pattern else "persistent://public/default/" + pattern


def pattern_namespace(pattern: str) -> tuple[str, str] | None:
    """The tenant and namespace ``topic-pattern`` fixes; None when it does not fix them literally."""
    parts = full_pattern(pattern).split("://", 1)[1].split("/")
    if len(parts) < 3 or not all(_NAME.fullmatch(p) for p in parts[:2]):
        return None
    return parts[0], parts[1]


def _source_fields(options: Mapping[str, Any], o: Mapping[str, Any]) -> dict[str, Any]:
    topic, pattern = o["topic"], o["topic-pattern"]
    if (topic is None) == (pattern is None):
        raise OptionError("topic", "exactly one of topic and topic-pattern must be set",
                          'set topic = "my-topic" (or topic-pattern = "persistent://public/default/my-.*")')
    if pattern is not None:
        try:
            re.compile(str(pattern))
        except re.error as e:
            raise OptionError("topic-pattern", f"topic-pattern is not a regular expression: {e}") from None
        if pattern_namespace(str(pattern)) is None:
            raise OptionError("topic-pattern", f"topic-pattern {pattern!r} must fix its tenant and namespace",
                              'write it as "persistent://<tenant>/<namespace>/<regex>"')
    try:
        schema = schema_from_options(options) if "schema" in options else None
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if "schema" in options and (schema is None or not schema.fields):
        raise OptionError("schema", "schema has no fields", "add schema = { fields { id = bigint } }")
    topics = tuple(full_topic(t.strip()) for t in str(topic).split(",") if t.strip()) if topic else ()
    return {"topics": topics, "pattern": str(pattern) if pattern is not None else None,
            "subscription": str(o["subscription.name"] or ""), "start": o["cursor.startup.mode"],
            "start_timestamp": o["cursor.startup.timestamp"], "reset": o["cursor.reset.mode"] or "LATEST",
            "stop": o["cursor.stop.mode"], "stop_timestamp": o["cursor.stop.timestamp"],
            "poll_timeout_ms": int(o["poll.timeout"]), "schema": schema}


def _sink_fields(o: Mapping[str, Any]) -> dict[str, Any]:
    if o["topic"] is None:
        raise OptionError("topic", "the option 'topic' is required", 'set topic = "my-topic"')
    if o["semantics"] == "EXACTLY_ONCE":
        raise OptionError("semantics", "EXACTLY_ONCE needs Pulsar transactions, which this package's client "
                                       "(PyPI's pulsar-client) does not offer",
                          "set semantics = AT_LEAST_ONCE (fenced, one commit record per run: docs/pulsar.md)")
    producer: dict[str, Any] = {}
    for key, value in dict(o["pulsar.config"] or {}).items():
        name = _PRODUCER_SETTINGS.get(str(key).lower())
        if name is not None:
            producer[name] = value
    return {"topics": (full_topic(str(o["topic"]).strip()),), "field_delimiter": str(o["field_delimiter"]),
            "semantics": o["semantics"],
            "routing": "SinglePartition" if str(o["message.routing.mode"]).upper() == "SINGLEPARTITION"
            else "RoundRobinPartition",
            "key_fields": tuple(str(f) for f in o["partition_key_fields"] or ()), "producer": producer}


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> PulsarOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint`` false:
    a block naming ``pulsar_conn_id`` may leave the URLs to the connection (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    service, admin = _urls(o)
    token = _token(o)
    endpoint = None
    if service and admin:
        endpoint = Endpoint(service, admin, token)
    elif need_endpoint or o[CONN_OPTION] is None:
        missing = "client.service-url" if not service else "admin.service-url"
        raise OptionError(missing, f"the option '{missing}' is required",
                          f'set {missing} = ... (or {CONN_OPTION} = "<an Airflow connection>")')
    fields = _source_fields(options, o) if section == SOURCE else _sink_fields(o)
    fmt = str(o["format"]).lower()
    if fmt == "canal_json":
        raise OptionError("format", "format canal_json is not supported by this package yet", "set format = json")
    if fmt == "text" and section == SOURCE:
        raise OptionError("format", "a Pulsar source reads json messages (SeaTunnel's reader: json or "
                                    "canal_json)", "set format = json")
    return PulsarOptions(section, endpoint, format=fmt, **fields)


def written_endpoint(options: Mapping[str, Any]) -> str | None:
    """The service URL as the block writes it (lineage: never a token); None when a connection gives it."""
    url = options.get("client.service-url")
    return str(url).strip() if url else None
