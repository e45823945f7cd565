"""Pulsar: topics of an Apache Pulsar cluster as source and sink (PyPI's ``pulsar-client``, extra ``pulsar``).

SeaTunnel's options (:mod:`.options`), or ``pulsar_conn_id`` naming an Airflow connection (host, port, password:
a token; extra ``admin_url``).

* **Source** (:mod:`.source`): BATCH, each partition's range fixed on the driver by ``cursor.startup.mode`` and
  ``cursor.stop.mode``, read by ``parallelism`` Spark partitions, and ``subscription.name`` acknowledged up to the
  stops only once every sink of the pipeline committed (``cursor.stop.mode = NEVER``, the default, is refused in
  a BATCH job, as SeaTunnel refuses it); STREAMING, micro-batches up to each partition's last message, offsets in
  the checkpoint, the subscription acknowledged as Spark commits them.
* **Sink** (:mod:`.sink`): every row a message (json, or text with ``field_delimiter``), keyed by
  ``partition_key_fields``; AT_LEAST_ONCE fenced with a commit record per run; EXACTLY_ONCE refused.

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/pulsar.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    AcknowledgesRead,
    BatchSource,
    Capabilities,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    RunContext,
    SchemaInference,
    StreamingSource,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem, run_time_options
from ...spi.schema import DataType, Field, Schema
from .options import CONN_OPTION, DEVIATIONS, SPEC, TEXT_FIELD, OptionError, PulsarOptions, parse, written_endpoint

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "Pulsar"]


def _options(vertex: Vertex) -> PulsarOptions:
    return run_time_options(parse, vertex, PulsarOptions)


def _is_canal(plugin: PluginConfig) -> bool:
    return plugin.section == SOURCE and str(plugin.get("format") or "").strip().lower() == "canal_json"


def _compile_options(plugin: PluginConfig) -> dict[str, Any]:
    """The block's options as the compiler checks them: a canal_json source as a json one (it plans, its format
    not runnable yet)."""
    options = dict(plugin.options)
    if _is_canal(plugin):
        options["format"] = "json"
    return options


class Pulsar(Connector, SchemaInference, BatchSource, StreamingSource, AcknowledgesRead, Lineage, FromConnection):
    name = "Pulsar"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's Pulsar sink has a per-writer committer, no aggregated one (no coordinator slot)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC  # required, identity and secrets (auth.params) come from it
    description = "Reads or sends JSON messages of Pulsar topics (acknowledged after the commit; at least once)."

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """Beyond the option spec: SeaTunnel's rules a declaration cannot say, located at their keys."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            o = parse(_compile_options(plugin), plugin.section, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        conn = plugin.get(CONN_OPTION)
        if conn is not None and not str(conn).strip():
            return [job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION)]
        if plugin.section != SOURCE:
            return []
        if _is_canal(plugin):
            return [job.cannot_run("format canal_json: SeaTunnel's Canal decoding is not ported to the Pulsar source "
                                   "yet", plugin, key="format", hint="docs/pulsar.md")]
        mode = str(job.env_get("job.mode", "BATCH")).upper()
        if mode == "BATCH" and o.stop == "NEVER":
            return [job.problem("'Pulsar' source don't support off-line job: cursor.stop.mode NEVER is an unbounded "
                                "read (SeaTunnel refuses it in a BATCH job too)", plugin, key="cursor.stop.mode",
                                hint="set cursor.stop.mode = LATEST (or TIMESTAMP)")]
        interval = plugin.get("topic-discovery.interval")
        if o.pattern is not None and o.stop != "NEVER" and interval is not None and int(interval) > 0:
            return [job.problem("Bounded streams do not support dynamic partition discovery (topic-pattern with "
                                "topic-discovery.interval > 0 and a cursor.stop.mode)", plugin,
                                key="topic-discovery.interval", hint="remove topic-discovery.interval")]
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """A source's rows are its ``schema``'s fields (without one: the string field ``content``)."""
        if plugin.section != SOURCE:
            return None, []
        try:
            given = parse(_compile_options(plugin), plugin.section, need_endpoint=False).schema
        except OptionError:
            return None, []
        return given or Schema((Field(TEXT_FIELD, DataType("string")),)), []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``client.service-url`` (pulsar://host:port, default 6650), ``admin.service-url`` (the extra's
        ``admin_url``, else http://host:8080) and the token (the password) from a connection."""
        host = conn.host or "localhost"
        out: dict[str, Any] = {"client.service-url": f"pulsar://{host}:{int(conn.port or 6650)}",
                               "admin.service-url": str(conn.extra.get("admin_url") or f"http://{host}:8080")}
        if conn.password:
            out["auth.plugin-class"] = "org.apache.pulsar.client.impl.auth.AuthenticationToken"
            out["auth.params"] = "token:" + str(conn.password)
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "client.service-url" not in options

    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        """The topics, ``persistent://tenant/namespace/topic`` (never a token)."""
        topic = options.get("topic") or options.get("topic-pattern")
        if not topic:
            return []
        if written_endpoint(options) is None:
            return [Unnamed(f"topic {topic!r} of connection {options.get(CONN_OPTION)!r}")]
        from .options import full_topic

        return [full_topic(t.strip()) for t in str(topic).split(",") if t.strip()]

    # run time ----------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, _options(vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read_stream

        return read_stream(ctx, vertex, _options(vertex))

    def acknowledge(self, ctx: RunContext, vertex: Vertex) -> None:
        from .source import acknowledge

        acknowledge(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Send every row (:mod:`.sink`): at least once, fenced and recorded; nothing left to commit."""
        from .sink import write

        write(ctx, vertex, data, _options(vertex))
        return None


CONNECTOR = Pulsar()
