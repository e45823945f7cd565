"""Kafka options as SeaTunnel names them, read once for both phases.

:func:`source_options` and :func:`sink_options` turn a block into :class:`SourceOptions` /
:class:`SinkOptions` or raise :class:`OptionError` naming the key (the compile-time check makes it
a located problem, the run a ``RuntimeConfigError``). Names, defaults and rules are SeaTunnel's:

* source: ``topic`` (a comma list, or a Java regex with ``pattern = true``) or ``table_list``
  (one entry per topic, each with its own ``topic``, ``format``, ``schema``...), never both;
  ``bootstrap.servers``; ``consumer.group`` (``SeaTunnel-Consumer-Group``); ``start_mode``
  (``group_offsets``) with ``start_mode.offsets`` / ``start_mode.timestamp``; ``format``
  (``json``); ``format_error_handle_way`` (``fail``); ``field_delimiter`` (``,``);
  ``kafka.config``; ``schema`` (without it a row is the one text field ``content``);
* sink: ``topic`` (table placeholders ``${table_name}``... expanded per table);
  ``bootstrap.servers``; ``semantics`` (``NON``); ``partition_key_fields``; ``partition``;
  ``assign_partitions``; ``transaction_prefix``; ``format`` (``json``); ``field_delimiter``;
  ``kafka.config``.

``kafka_conn_id`` (this package's) names an Airflow connection giving ``bootstrap.servers`` and
client settings (:func:`connection_options`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError, as_int
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import Field, Schema, TypeError_, parse_type, schema_from_options

CONN_OPTION = "kafka_conn_id"
DEFAULT_GROUP = "SeaTunnel-Consumer-Group"
DEFAULT_DELIMITER = ","
START_MODES = ("earliest", "group_offsets", "latest", "specific_offsets", "timestamp")
SEMANTICS = ("NON", "AT_LEAST_ONCE", "EXACTLY_ONCE")
#: formats this package reads and writes
SOURCE_FORMATS = ("json", "text", "canal_json", "debezium_json", "ogg_json", "maxwell_json", "avro")
SINK_FORMATS = ("json", "text", "canal_json", "debezium_json", "ogg_json", "maxwell_json", "avro")
#: SeaTunnel formats that plan but cannot run here
LATER_FORMATS = ("protobuf", "native", "compatible_kafka_connect_json", "compatible_debezium_json")
#: formats whose records say the row kind (change logs): their rows may be UPDATE/DELETE
CHANGE_FORMATS = ("canal_json", "debezium_json", "ogg_json", "maxwell_json")
ERROR_WAYS = ("fail", "skip")
#: the one field of a source read without a schema (SeaTunnel's simple text table)
TEXT_FIELD = "content"


#: the client settings a block passes on (``kafka.config``) and the options SeaTunnel documents
SPEC = OptionSpec((
    Option("bootstrap.servers", required=True, required_unless=(CONN_OPTION,), identity=True,
           description=f"The brokers, host:port comma-separated (or from {CONN_OPTION})."),
    Option(CONN_OPTION, identity=True, description="An Airflow connection of type kafka: its extra holds the "
           "client settings, bootstrap.servers among them."),
    Option("topic", required=True, required_unless=("table_list",), identity=True,
           description="Source: a comma list of topics, or a regular expression with pattern = true; sink: the "
           "topic, table placeholders expanded per table (a ${field} left names each row's topic)."),
    Option("table_list", "any", identity=True, sections=(SOURCE,),
           description="One object per topic read, each with its own topic, format, schema...; never with topic."),
    Option("pattern", "bool", False, "topic is a regular expression.", identity=True, sections=(SOURCE,)),
    Option("format", "enum", "json", "How records are encoded; " + ", ".join(LATER_FORMATS)
           + " plan but cannot run here.", choices=SOURCE_FORMATS + LATER_FORMATS),
    Option("field_delimiter", default=DEFAULT_DELIMITER, description="Between fields with format text."),
    Option("kafka.config", "any", description="Kafka client properties, passed on as written."),
    Option("schema", "map", description="The records' fields (without it a row is the one text field content).",
           sections=(SOURCE,)),
    Option("format_error_handle_way", "enum", "fail", "What a record that cannot be decoded does.",
           choices=ERROR_WAYS, sections=(SOURCE,)),
    Option("debezium_record_include_schema", "bool", True, "debezium_json records carry the schema/payload "
           "envelope.", sections=(SOURCE,)),
    Option("consumer.group", default=DEFAULT_GROUP, description="The consumer group whose offsets a run reads "
           "from and commits.", sections=(SOURCE,)),
    Option("start_mode", "enum", "group_offsets", "Where reading starts.", choices=START_MODES, sections=(SOURCE,)),
    Option("start_mode.offsets", "any", description='"<topic>-<partition>" = offset per partition (start_mode = '
           "specific_offsets).", sections=(SOURCE,)),
    Option("start_mode.timestamp", "long", description="Epoch milliseconds (start_mode = timestamp).", minimum=0,
           sections=(SOURCE,)),
    Option("commit_on_checkpoint", "bool", True, "Commit the group's offsets once a run's rows are written.",
           sections=(SOURCE,)),
    Option("partition-discovery.interval-millis", "long", -1, "How often a stream looks for new partitions "
           "(-1: never).", sections=(SOURCE,)),
    Option("semantics", "enum", "NON", "NON, AT_LEAST_ONCE, or EXACTLY_ONCE (one transaction per run).",
           choices=SEMANTICS, sections=(SINK,)),
    Option("partition_key_fields", "list", description="The fields whose values make the record's key.",
           sections=(SINK,)),
    Option("partition", "int", description="The one partition every record goes to.", minimum=0,
           sections=(SINK,)),
    Option("assign_partitions", "list", description="A record whose value contains the i-th string goes to "
           "partition i.", sections=(SINK,)),
    Option("transaction_prefix", description="The prefix of the transactional id (EXACTLY_ONCE).",
           sections=(SINK,)),
))


@dataclass(frozen=True)
class TopicSpec:
    """One table of a source: the topics (or a pattern) it reads and how records are decoded."""

    topics: tuple[str, ...]
    pattern: bool
    format: str
    schema: Schema | None
    field_delimiter: str = DEFAULT_DELIMITER
    error_way: str = "fail"
    include_schema: bool = True  # debezium_json: records carry the schema/payload envelope

    @property
    def table_id(self) -> str:
        """The table the rows belong to: the topic (the pattern, a comma list as written)."""
        return ",".join(self.topics)

    def output_schema(self) -> Schema:
        if self.schema is not None and self.schema.fields:
            return self.schema
        return Schema((Field(TEXT_FIELD, parse_type("string")),))


@dataclass(frozen=True)
class SourceOptions:
    bootstrap: str
    tables: tuple[TopicSpec, ...]
    group: str = DEFAULT_GROUP
    start_mode: str = "group_offsets"
    offsets: Mapping[str, int] = field(default_factory=dict)  # "topic-partition" -> offset
    timestamp: int | None = None
    commit_on_checkpoint: bool = True
    discovery_ms: int = -1
    client: Mapping[str, str] = field(default_factory=dict)  # kafka.config


@dataclass(frozen=True)
class SinkOptions:
    bootstrap: str
    topic: str
    format: str = "json"
    semantics: str = "NON"
    key_fields: tuple[str, ...] = ()
    partition: int | None = None
    assign_partitions: tuple[str, ...] = ()
    transaction_prefix: str | None = None
    field_delimiter: str = DEFAULT_DELIMITER
    client: Mapping[str, str] = field(default_factory=dict)


#: the value of a declared option as written (its older names too): :meth:`OptionSpec.written` of :data:`SPEC`
written = SPEC.written


def client_config(options: Mapping[str, Any]) -> dict[str, str]:
    """``kafka.config``: Kafka client properties (strings), as written."""
    value = written(options, "kafka.config")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise OptionError("kafka.config", "kafka.config must be an object of Kafka client properties",
                          'kafka.config = { "max.poll.records" = "500" }')
    return {str(k): _scalar(v) for k, v in value.items()}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def bootstrap_of(o: ParsedOptions, required: bool = True) -> str:
    value = o["bootstrap.servers"]
    if value is None:
        if not required:
            return ""
        raise OptionError("bootstrap.servers", "the option 'bootstrap.servers' is required",
                          'set bootstrap.servers = "host:9092" (or kafka_conn_id = "<an Airflow connection>")')
    servers = [s.strip() for s in value.split(",") if s.strip()]
    for s in servers:
        if "{{" in s or "{%" in s:  # an Airflow template: checked once the task renders it
            continue
        host, _, port = s.rpartition(":")
        if not host or as_int(port) is None:
            raise OptionError("bootstrap.servers", f"broker {s!r} is not host:port", 'bootstrap.servers = "host:9092"')
    if not servers:
        raise OptionError("bootstrap.servers", "bootstrap.servers names no broker", 'bootstrap.servers = "host:9092"')
    return ",".join(servers)


def _schema(options: Mapping[str, Any]) -> Schema | None:
    try:
        return schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None


def _topic_spec(block: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> TopicSpec:
    merged = {**(defaults or {}), **block}
    o = SPEC.parse(merged, SOURCE)
    raw = o["topic"]
    if raw is None or not raw.strip():
        raise OptionError("topic", "the option 'topic' is required", 'set topic = "orders" (a comma list, or a '
                                                                     "regular expression with pattern = true)")
    pattern = o["pattern"]
    topics = (raw.strip(),) if pattern else tuple(t.strip() for t in raw.split(",") if t.strip())
    if pattern:
        try:
            re.compile(topics[0])
        except re.error as e:
            raise OptionError("topic", f"topic {topics[0]!r} is not a regular expression: {e}") from None
    fmt = o["format"]
    schema = _schema(merged)
    if (fmt in CHANGE_FORMATS or fmt == "avro") and (schema is None or not schema.fields):
        raise OptionError("schema", f"format {fmt} needs a schema (the fields of the records)",
                          "add schema = { fields { id = bigint, ... } }")
    return TopicSpec(topics, pattern, fmt, schema, o["field_delimiter"], o["format_error_handle_way"],
                     o["debezium_record_include_schema"])


def _offsets(o: ParsedOptions) -> dict[str, int]:
    value = o["start_mode.offsets"]
    if not isinstance(value, Mapping) or not value:
        raise OptionError("start_mode.offsets", "start_mode specific_offsets needs start_mode.offsets",
                          'start_mode.offsets = { "orders-0" = 70, "orders-1" = 10 }')
    out: dict[str, int] = {}
    for k, v in value.items():
        topic, _, part = str(k).rpartition("-")
        number = as_int(v)
        if not topic or as_int(part) is None or number is None or number < 0:
            raise OptionError("start_mode.offsets", f"start_mode.offsets entry {k} = {v!r} is not "
                                                    "<topic>-<partition> = <offset>", '"orders-0" = 70')
        out[str(k)] = number
    return out


def source_options(options: Mapping[str, Any], need_bootstrap: bool = True) -> SourceOptions:
    """A source block, checked (``need_bootstrap`` false: ``kafka_conn_id`` may give it later)."""
    o = SPEC.parse(options, SOURCE)
    bootstrap = bootstrap_of(o, required=need_bootstrap or o[CONN_OPTION] is None)
    table_list = o["table_list"]
    if table_list is not None and o["topic"] is not None:
        raise OptionError("table_list", "set either topic or table_list, not both", "keep one of them")
    if table_list is not None:
        if not isinstance(table_list, list) or not table_list or not all(isinstance(t, Mapping) for t in table_list):
            raise OptionError("table_list", "table_list must be a list of objects, each with its topic",
                              'table_list = [{ topic = "a", format = json, schema = {...} }]')
        shared = {k: v for k, v in options.items() if k in ("format", "field_delimiter", "format_error_handle_way")}
        tables = tuple(_topic_spec(t, shared) for t in table_list)
    else:
        tables = (_topic_spec(options),)
    mode = o["start_mode"]
    offsets = _offsets(o) if mode == "specific_offsets" else {}
    timestamp = o["start_mode.timestamp"]
    if mode == "timestamp" and timestamp is None:
        raise OptionError("start_mode.timestamp", "start_mode timestamp needs start_mode.timestamp (epoch ms)",
                          "start_mode.timestamp = 1667179890315")
    return SourceOptions(bootstrap, tables, o["consumer.group"], mode, offsets, timestamp, o["commit_on_checkpoint"],
                         o["partition-discovery.interval-millis"] or -1, client_config(options))


def sink_options(options: Mapping[str, Any], need_bootstrap: bool = True) -> SinkOptions:
    """A sink block, checked."""
    o = SPEC.parse(options, SINK)
    bootstrap = bootstrap_of(o, required=need_bootstrap or o[CONN_OPTION] is None)
    topic = o["topic"]
    if topic is None or not topic.strip():
        raise OptionError("topic", "the option 'topic' is required", 'set topic = "orders" (or "${table_name}")')
    fmt = o["format"]
    keys, partition = o["partition_key_fields"] or (), o["partition"]
    if partition is not None and keys:
        raise OptionError("partition", "partition and partition_key_fields exclude each other: every record "
                                       "goes to the partition", "keep one of them")
    return SinkOptions(bootstrap, topic.strip(), fmt, o["semantics"], tuple(str(k) for k in keys), partition,
                       tuple(str(a) for a in o["assign_partitions"] or ()), o["transaction_prefix"] or None,
                       o["field_delimiter"], client_config(options))


def parse(options: Mapping[str, Any], section: str, need_bootstrap: bool = True) -> SourceOptions | SinkOptions:
    if section == SINK:
        return sink_options(options, need_bootstrap)
    return source_options(options, need_bootstrap)
