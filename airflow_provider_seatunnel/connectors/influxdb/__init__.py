"""InfluxDB 1.x: an InfluxQL query as a source, points written as a sink (HTTP API, standard library only).

SeaTunnel's options (:mod:`.options`: ``url``, ``database``, ``username``, ``password``, ``sql``,
``schema``, ``split_column``/``lower_bound``/``upper_bound``/``partition_num``, ``epoch``,
``measurement``, ``key_time``, ``key_tags``, ``batch_size``, ``max_retries``...), or ``influxdb_conn_id``
naming an Airflow connection that gives the URL and the credentials.

* **Source** (:mod:`.runtime`, :mod:`.datasource`): the query, cut into split queries on
  ``split_column``, dealt over exactly ``vertex.parallelism`` partitions; each answer's columns become
  the declared fields (:mod:`.points`).
* **Sink**, exactly-once in effect through the engine's two phases over :class:`.runtime.InfluxSinkVerbs`:
  ``stage`` writes each row's point into the staging of the bookkeeping database ``_seatunnel``
  (:mod:`.staging`); ``publish`` (:mod:`.commit`) claims the commit, writes the staged points into the
  target ``batch_size`` a request and records it; a restore rolls a claimed publish forward with the same
  points (InfluxDB replaces a point of the same measurement, tag set and time). SeaTunnel's InfluxDB has no
  save modes: nor has this one.

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/influxdb.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    RunContext,
    SchemaInference,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .options import CONN_OPTION, DEVIATIONS, FIELD_TYPES, SPEC, TIME_TYPES, OptionError, parse
from .runtime import InfluxSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "InfluxDB"]


def _problems_against(plugin: PluginConfig, job: JobConfig, schema: Schema) -> list[Problem]:
    """A sink's key_time and key_tags against its input's fields, and the fields' types."""
    o = SPEC.valid(plugin.options, plugin.section)
    if o is None:
        return []
    types = {f.name: f.type.name.lower() for f in schema.fields}
    key_time, tags = o["key_time"], [str(t) for t in (o["key_tags"] or ())]
    problems = [job.problem(f"key_tags names '{t}', which is not an input field ({', '.join(types)})", plugin,
                            key="key_tags") for t in tags if t not in types]
    if key_time and key_time not in types:
        problems.append(job.problem(f"key_time names '{key_time}', which is not an input field", plugin,
                                    key="key_time"))
    elif key_time and types[key_time] not in TIME_TYPES:
        problems.append(job.problem(f"key_time '{key_time}' is a {types[key_time]}: it must be one of "
                                    f"{', '.join(TIME_TYPES)}", plugin, key="key_time"))
    for name, kind in types.items():
        if name not in tags and name != key_time and kind not in FIELD_TYPES:
            problems.append(job.problem(f"the field '{name}' is a {kind}, which the InfluxDB sink does not write "
                                        f"({', '.join(FIELD_TYPES)})", plugin, key="key_tags",
                                        hint="cast it (Sql transform), or make it a tag"))
    return problems


class InfluxDB(Connector, SchemaInference, BatchSource, InfluxSinkVerbs, FromConnection, Lineage):
    name = "InfluxDB"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's InfluxDB sink has no aggregated committer (no coordinator slot)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC  # required, identity and secrets (password) come from it
    description = "Reads an InfluxQL query's answer, or writes points, of an InfluxDB 1.x server."

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """What the spec cannot say: bundled options, the split range, the source's types, the url."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            parse(plugin.options, plugin.section, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems: list[Problem] = []
        epoch = plugin.get("epoch")
        if plugin.section == SINK and epoch is not None and str(epoch) not in ("NS", "U", "MS", "S", "M", "H"):
            problems.append(job.problem(f"epoch {epoch!r} is read as nanoseconds by the sink (it knows NS, U, MS, "
                                        "S, M, H exactly)", plugin, key="epoch", severity="warning"))
        return problems

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """A source's rows are its ``schema``; a sink's key fields are checked against its input's."""
        if plugin.section == SINK:
            if inputs and inputs[0] is not None:
                return None, _problems_against(plugin, job, inputs[0])
            return None, []
        try:
            return parse(plugin.options, plugin.section, need_endpoint=False).schema, []
        except OptionError:
            return None, []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``url``, ``username`` and ``password`` from a connection: the host (a URL, or a host name with the
        schema http or https, default http), port (default 8086), login, password."""
        host = str(conn.host or "localhost")
        if "://" not in host:
            scheme = str(conn.schema or "http") if str(conn.schema or "").lower() in ("http", "https") else "http"
            host = f"{scheme}://{host}:{int(conn.port or 8086)}"
        out: dict[str, Any] = {"url": host}
        out.update(conn.credentials())  # both or neither: the options bundle them
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "url" not in options

    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        url, database = options.get("url"), options.get("database")
        if not url or not database or "${" in str(options.get("measurement", "")):
            return [Unnamed("InfluxDB", at_run_time=True)]
        measurement = options.get("measurement")
        tail = f"/{measurement}" if measurement else ""
        host = str(url).split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]  # never the user info
        return [f"influxdb://{host}/{database}{tail}"]

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)


CONNECTOR = InfluxDB()
