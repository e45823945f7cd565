"""Kafka: topics as source (batch and streaming) and sink, on Spark's Kafka source and sink.

SeaTunnel's options (:mod:`.options`), or ``kafka_conn_id`` naming an Airflow connection (type
``kafka``: its extra holds the client settings, ``bootstrap.servers`` among them).

* **Source** (:mod:`.source`): BATCH reads every partition from ``start_mode`` up to the offsets a
  ``read_committed`` reader could reach when the read started; STREAMING reads on, resuming from
  the pipeline's checkpoint. Records become rows per ``format`` (:mod:`.formats`: json, text,
  and the change logs canal_json, debezium_json, ogg_json, maxwell_json with their row kinds).
* **Sink** (:mod:`.sink`, storage verbs the engine's two phases drive): ``NON``/``AT_LEAST_ONCE``
  write with Spark's Kafka sink when the table is staged; ``EXACTLY_ONCE`` publishes in the commit,
  one Kafka transaction over every table of a run (per micro-batch in STREAMING) that also records
  the run id, fenced by its transactional id: consumers reading ``read_committed`` see every row
  once, across restores and overlapping attempts.

Spark needs ``spark-sql-kafka-0-10`` for its version (:func:`.checks.spark_kafka_jars`); the driver
needs ``confluent-kafka`` (extra ``kafka``). The user's docs: docs/kafka.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ...spi import (
    SINK,
    SOURCE,
    AcknowledgesRead,
    BatchSource,
    Capabilities,
    ChangeEmitter,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    NeedsJars,
    RunContext,
    SchemaInference,
    SourceTables,
    StreamingSource,
    Unnamed,
    Vertex,
)
from ...spi.options import run_time_options
from . import checks
from .options import CHANGE_FORMATS, CONN_OPTION, SPEC, SourceOptions, parse, written
from .sink import KafkaSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "Kafka"]

log = logging.getLogger("seatunnel.kafka")


def _source(vertex: Vertex) -> SourceOptions:
    return run_time_options(parse, vertex, SourceOptions)


class Kafka(Connector, SchemaInference, SourceTables, BatchSource, StreamingSource, AcknowledgesRead, ChangeEmitter,
            KafkaSinkVerbs, NeedsJars, Lineage, FromConnection):
    name = "Kafka"
    connection_option = CONN_OPTION
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}))
    option_spec = SPEC  # required (none always), identity; secrets besides the client's below
    secrets = frozenset({"sasl.jaas.config", "sasl.password", "ssl.key.password", "ssl.keystore.password",
                         "ssl.truststore.password"})
    description = "Reads topics (batch or streaming) or writes records of a Kafka cluster, exactly once on request."

    # compile time ------------------------------------------------------------------------------

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)
    tables = staticmethod(checks.tables)

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """Only the change-log formats carry UPDATE/DELETE rows."""
        if vertex.kind != SOURCE:
            return inputs_change
        tables = written(vertex.config, "table_list")
        blocks = tables if isinstance(tables, list) else [vertex.config]
        default = str(written(vertex.config, "format", "json")).lower()
        return any(str(written(b, "format", default)).lower() in CHANGE_FORMATS
                   for b in blocks if isinstance(b, Mapping))

    def jars(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
        """Spark's Kafka source and sink; ``spark-avro`` too for ``format = avro``."""
        jars = checks.spark_kafka_jars(env)
        avro = checks.spark_avro_jar() if checks.uses_avro(options) else None
        named = str(env.get("spark.jars", "")) + "," + str(env.get("spark.jars.packages", ""))
        return jars + ([avro] if avro and "spark-avro" not in named else [])

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``kafka://<first broker>/<topic>`` per topic, as OpenLineage names Kafka datasets."""
        servers = written(options, "bootstrap.servers")
        if servers is None:
            conn = written(options, CONN_OPTION)
            return [Unnamed(f"the brokers of connection {conn!r}")] if conn else []
        broker = str(servers).split(",")[0].strip()
        tables = written(options, "table_list")
        blocks = tables if isinstance(tables, list) else [options]
        out: list[str | Unnamed] = []
        for block in blocks:
            topic = str(written(block, "topic", "")).strip() if isinstance(block, Mapping) else ""
            pattern = str(written(block, "pattern", "false")).lower() == "true" if isinstance(block, Mapping) else False
            if not topic:
                continue
            if pattern or "${" in topic or "{{" in topic:
                out.append(Unnamed(f"topic {topic!r}", at_run_time=not pattern))
                continue
            out.extend(f"kafka://{broker}/{quote(t.strip(), safe='')}" for t in topic.split(",") if t.strip())
        return out

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``bootstrap.servers`` and ``kafka.config`` from a connection of type ``kafka`` (its extra
        holds client settings, as the Apache Kafka provider's connections do; else host:port)."""
        extra = dict(conn.extra or {})
        servers = extra.pop("bootstrap.servers", None) or (f"{conn.host}:{conn.port or 9092}" if conn.host else None)
        out: dict[str, Any] = {}
        if servers:
            out["bootstrap.servers"] = str(servers)
        extra.pop("group.id", None)
        config = {str(k): str(v) for k, v in extra.items() if not isinstance(v, (dict, list))}
        if conn.login and conn.password and "sasl.jaas.config" not in config:
            config["sasl.jaas.config"] = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
                                          f'username="{conn.login}" password="{conn.password}";')
        if config:
            out["kafka.config"] = config
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "bootstrap.servers" not in options

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, _source(vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read_stream

        return read_stream(ctx, vertex, _source(vertex))

    def acknowledge(self, ctx: RunContext, vertex: Vertex) -> None:
        from .source import acknowledge

        acknowledge(ctx, vertex, _source(vertex))


CONNECTOR = Kafka()
