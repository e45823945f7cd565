"""Rocketmq options as SeaTunnel names them, read once for both phases.

SeaTunnel's option rules: a source requires ``topics`` (comma-separated) and ``name.srv.addr``
(``host:port`` name servers separated by ``;``), with ``start.mode.timestamp`` when ``start.mode`` is
``CONSUME_FROM_TIMESTAMP`` (at most now) and ``start.mode.offsets`` (``<topic>-<queue> = offset``) when it
is ``CONSUME_FROM_SPECIFIC_OFFSETS``; a sink requires ``topic`` and ``name.srv.addr``. ``format`` is
``json`` (default) or ``text`` (fields joined by ``field.delimiter``, default ``,``). ``acl.enabled`` needs
``access.key`` and ``secret.key``. :func:`parse` turns a block into :class:`SourceOptions` or
:class:`SinkOptions`, or raises :class:`OptionError` naming the key; what differs from SeaTunnel is
:data:`DEVIATIONS`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import Schema, TypeError_, schema_from_options

#: the block option naming an Airflow connection (host and port of a name server; extra ``name_srv_addr``)
CONN_OPTION = "rocketmq_conn_id"
DEFAULT_PORT = 9876
START_MODES = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_GROUP_OFFSETS",
               "CONSUME_FROM_TIMESTAMP", "CONSUME_FROM_SPECIFIC_OFFSETS")
DEFAULT_CONSUMER_GROUP = "SeaTunnel-Consumer-Group"
DEFAULT_PRODUCER_GROUP = "SeaTunnel-producer-Group"
#: the largest message body the broker stores by default (``maxMessageSize``), SeaTunnel's default limit
DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024

SPEC = OptionSpec((
    Option("name.srv.addr", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The name servers, host:port separated by ';' (or from {CONN_OPTION})."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection: host and port of a name server (its extra's name_srv_addr: "
                       "several)."),
    Option("acl.enabled", "bool", False, "Sign requests with access.key and secret.key (refused here: no ACL "
                                         "signing; see docs/rocketmq.md)."),
    Option("access.key", description="The ACL access key (with acl.enabled)."),
    Option("secret.key", description="The ACL secret key (with acl.enabled).", secret=True),
    Option("format", "enum", "json", "How a message body holds a row: json or text.", choices=("json", "text")),
    Option("field.delimiter", default=",", description="The field separator of the text format."),
    Option("topics", required=True, allow_blank=False, identity=True, sections=(SOURCE,),
           description="The topics read, separated by ','."),
    Option("consumer.group", default=DEFAULT_CONSUMER_GROUP, sections=(SOURCE,),
           description="The consumer group whose offsets CONSUME_FROM_GROUP_OFFSETS starts from and a read commits."),
    Option("commit.on.checkpoint", "bool", True, sections=(SOURCE,),
           description="Commit the group's offsets once the pipeline committed (false: as soon as read)."),
    Option("schema", "map", description="The fields of the rows a message holds.", sections=(SOURCE,)),
    Option("start.mode", "enum", "CONSUME_FROM_GROUP_OFFSETS", choices=START_MODES, sections=(SOURCE,),
           description="Where each queue's read starts."),
    Option("start.mode.timestamp", "long", minimum=0, sections=(SOURCE,),
           required_if=(("start.mode", ("CONSUME_FROM_TIMESTAMP",)),),
           description="CONSUME_FROM_TIMESTAMP: the time (ms since the epoch) of the first message read."),
    Option("start.mode.offsets", "map", sections=(SOURCE,),
           required_if=(("start.mode", ("CONSUME_FROM_SPECIFIC_OFFSETS",)),),
           description="CONSUME_FROM_SPECIFIC_OFFSETS: <topic>-<queue id> = offset; other queues start at "
                       "their first offset."),
    Option("partition.discovery.interval.millis", "long", -1, sections=(SOURCE,),
           description="Accepted; queues are listed once when the read starts (no effect)."),
    Option("consumer.poll.timeout.millis", "long", 5000, minimum=1, sections=(SOURCE,),
           description="The timeout of one pull, ms."),
    Option("batch.size", "int", 100, minimum=1, sections=(SOURCE,),
           description="Messages asked for by one pull (a broker returns at most its own limit, 32 by default)."),
    Option("tags", sections=(SOURCE,), description="Read only messages with one of these tags ('a || b'; unset: "
                                                   "all)."),
    Option("topic", required=True, allow_blank=False, identity=True, sections=(SINK,),
           description="The topic written (created when the broker auto-creates topics)."),
    Option("producer.group", default=DEFAULT_PRODUCER_GROUP, sections=(SINK,), description="The producer group."),
    Option("partition.key.fields", "list", sections=(SINK,),
           description="Fields whose JSON (text: joined) value is the message key; a key picks the queue by "
                       "its hash."),
    Option("exactly.once", "bool", False, sections=(SINK,),
           description="Refused: transactional messages are not sent (the sink is at least once)."),
    Option("producer.send.sync", "bool", False, sections=(SINK,),
           description="Accepted; every message is sent synchronously (the broker's store acknowledged)."),
    Option("max.message.size", "int", DEFAULT_MAX_MESSAGE_SIZE, minimum=1, sections=(SINK,),
           description="The largest message body sent, bytes: a larger row fails the write."),
    Option("send.message.timeout", "int", 3000, minimum=1, sections=(SINK,),
           description="The timeout of one send, ms."),
))

DEVIATIONS = (
    "source in BATCH: each queue is read from the start mode's offset up to its end offset when the read started "
    "(as SeaTunnel); the group's offsets are committed once every sink of the pipeline committed",
    "STREAMING reads are not supported (the source plans as not runnable in STREAMING jobs)",
    "sink: at least once, with a commit record per run (a restore of a committed run sends nothing) and a fence "
    "(a broker queue lock) that refuses an overlapping attempt; exactly.once (transactional messages) is refused",
    "acl.enabled = true is refused: requests are not signed",
    "partition.discovery.interval.millis has no effect; producer.send.sync is always on",
)


@dataclass(frozen=True)
class Endpoint:
    """The name servers (no credentials: ACL is refused)."""

    name_servers: tuple[str, ...]

    @property
    def label(self) -> str:
        return "rocketmq://" + ";".join(self.name_servers)


@dataclass(frozen=True)
class SourceOptions:
    endpoint: Endpoint | None
    topics: tuple[str, ...]
    schema: Schema | None
    format: str = "json"
    delimiter: str = ","
    group: str = DEFAULT_CONSUMER_GROUP
    commit_after_pipeline: bool = True
    start_mode: str = "CONSUME_FROM_GROUP_OFFSETS"
    start_timestamp: int | None = None
    start_offsets: Mapping[tuple[str, int], int] = field(default_factory=dict)
    batch_size: int = 100
    poll_timeout_ms: int = 5000
    tags: str = "*"


@dataclass(frozen=True)
class SinkOptions:
    endpoint: Endpoint | None
    topic: str
    format: str = "json"
    delimiter: str = ","
    group: str = DEFAULT_PRODUCER_GROUP
    key_fields: tuple[str, ...] = ()
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    send_timeout_ms: int = 3000


def name_servers(text: str) -> tuple[str, ...]:
    """``host:port`` addresses of ``name.srv.addr`` (separated by ``;`` or ``,``)."""
    out = []
    for part in text.replace(",", ";").split(";"):
        part = part.strip()
        if not part:
            continue
        host, _, port = part.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise OptionError("name.srv.addr", f"name.srv.addr must list host:port addresses, found {part!r}",
                              'set name.srv.addr = "127.0.0.1:9876"')
        out.append(part)
    if not out:
        raise OptionError("name.srv.addr", "name.srv.addr names no name server", 'set name.srv.addr = "host:9876"')
    return tuple(out)


def _offsets(raw: Mapping[str, Any] | None, topics: tuple[str, ...]) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for key, value in (raw or {}).items():
        topic, sep, queue = str(key).rpartition("-")
        if not sep or not queue.isdigit() or topic not in topics:
            raise OptionError("start.mode.offsets", f"start.mode.offsets key {key!r} is not <topic>-<queue id> of a "
                                                    "topic read", f"write {topics[0]}-0 = 0")
        try:
            offset = int(value)
        except (TypeError, ValueError):
            raise OptionError("start.mode.offsets", f"start.mode.offsets {key} must be an integer") from None
        if offset < 0:
            raise OptionError("start.mode.offsets", f"start.mode.offsets {key} must be >= 0")
        out[(topic, int(queue))] = offset
    return out


def _common(o: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    if o["acl.enabled"]:
        for key in ("access.key", "secret.key"):
            if not options.get(key):
                raise OptionError(key, "when acl.enabled is true, access.key and secret.key must be set")
        raise OptionError("acl.enabled", "acl.enabled = true is not supported: this package does not sign "
                                         "RocketMQ requests", "use a broker without ACL, or remove acl.enabled")
    endpoint = Endpoint(name_servers(str(o["name.srv.addr"]))) if o["name.srv.addr"] else None
    delimiter = str(o["field.delimiter"])
    if o["format"] == "text" and not delimiter:
        raise OptionError("field.delimiter", "field.delimiter must not be empty")
    return {"endpoint": endpoint, "format": str(o["format"]), "delimiter": delimiter}


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> SourceOptions | SinkOptions:
    """The block's options, checked. ``need_endpoint`` false: a block naming ``rocketmq_conn_id`` may leave
    the name servers to the connection (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    common = _common(o, options)
    if common["endpoint"] is None and (need_endpoint or not o[CONN_OPTION]):
        raise OptionError("name.srv.addr", "the option 'name.srv.addr' is required",
                          f'set name.srv.addr = "127.0.0.1:9876" (or {CONN_OPTION} = "<an Airflow connection>")')
    if section == SINK:
        if o["exactly.once"]:
            raise OptionError("exactly.once", "exactly.once = true is not supported: the sink is at least once "
                                              "(a commit record per run and a fence; docs/rocketmq.md)",
                              "remove exactly.once")
        return SinkOptions(topic=str(o["topic"]).strip(), group=str(o["producer.group"]),
                           key_fields=tuple(str(f) for f in (o["partition.key.fields"] or ())),
                           max_message_size=int(o["max.message.size"]),
                           send_timeout_ms=int(o["send.message.timeout"]), **common)
    topics = tuple(t.strip() for t in str(o["topics"]).split(",") if t.strip())
    if not topics:
        raise OptionError("topics", "topics names no topic", 'set topics = "topic1,topic2"')
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if schema is None or not schema.fields:
        raise OptionError("schema", "the option 'schema' is required (the messages are rows of its fields)",
                          "add schema = { fields { id = bigint, name = string } }")
    mode = str(o["start.mode"])
    stamp = o["start.mode.timestamp"] if mode == "CONSUME_FROM_TIMESTAMP" else None
    if stamp is not None and stamp > time.time() * 1000:
        raise OptionError("start.mode.timestamp", "start.mode.timestamp is later than now")
    offsets = _offsets(o["start.mode.offsets"], topics) if mode == "CONSUME_FROM_SPECIFIC_OFFSETS" else {}
    return SourceOptions(topics=topics, schema=schema, group=str(o["consumer.group"]),
                         commit_after_pipeline=bool(o["commit.on.checkpoint"]), start_mode=mode,
                         start_timestamp=None if stamp is None else int(stamp), start_offsets=offsets,
                         batch_size=int(o["batch.size"]), poll_timeout_ms=int(o["consumer.poll.timeout.millis"]),
                         tags=str(o["tags"] or "*"), **common)


def written_endpoint(options: Mapping[str, Any]) -> str | None:
    """``rocketmq://host:port`` as the block writes it (lineage); None when a connection gives it."""
    try:
        return Endpoint(name_servers(str(options["name.srv.addr"]))).label
    except (KeyError, OptionError):
        return None
