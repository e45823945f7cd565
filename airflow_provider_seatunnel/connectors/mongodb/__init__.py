"""MongoDB: a collection as source and sink (the ``pymongo`` driver, extra ``mongodb``).

SeaTunnel's options (:mod:`.options`: ``uri``, ``database``, ``collection``, ``schema``,
``match.query``, ``match.projection``, ``partition.split-key``, ``fetch.size``, ``flat.sync-string``,
``buffer-flush.max-rows``, ``upsert-enable``, ``primary-key``, ``transaction``...), or
``mongo_conn_id`` naming an Airflow connection of type ``mongo`` that gives the uri.

* **Source** (:mod:`.runtime`, :mod:`.datasource`): the documents ``match.query`` selects, cut in
  the order of ``partition.split-key`` into exactly ``vertex.parallelism`` runs, one Spark partition
  each, converted to the schema's fields as SeaTunnel converts BSON (:mod:`.bsonrows`).
* **Sink**, exactly-once by the engine's two-phase protocol over the storage verbs of
  :class:`.runtime.MongoSinkVerbs`: ``stage`` writes the rows' operations (insert, update, upsert,
  delete by ``primary-key``, as SeaTunnel's writer maps row kinds) into a staging collection of the
  attempt; ``publish`` (:mod:`.commit`) claims the commit in the fenced commit log
  ``__seatunnel_commits`` and applies the operations, replayably: an attempt killed while applying is
  completed by the next one, never duplicated. SeaTunnel's MongoDB sink has no save modes: nor has this.

Compile-time checks with located errors and the source's schema: :func:`check`, :func:`schema`;
deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/mongodb.md.
"""

from __future__ import annotations

import urllib.parse
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
    RetiresCommits,
    RunContext,
    SchemaInference,
    Vertex,
)
from ...spi.contract import Unnamed
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .options import CONN_OPTION, DEVIATIONS, SPEC, MongoOptions, OptionError, parse
from .runtime import MongoSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "MongoDB"]


def _parsed(plugin: PluginConfig) -> MongoOptions:
    return parse(plugin.options, plugin.section, need_uri=False)


def uri_of(conn: ConnectionInfo) -> str:
    """The connection string of an Airflow ``mongo`` connection: host, port, login, password, the
    database (``schema``) as authSource unless extra says, ``srv`` for ``mongodb+srv``, other extra
    fields as URI options."""
    extra = dict(conn.extra or {})
    srv = str(extra.pop("srv", "")).lower() in ("true", "1", "yes")
    scheme = "mongodb+srv" if srv else "mongodb"
    auth = ""
    if conn.login:
        auth = urllib.parse.quote(str(conn.login), safe="")
        if conn.password:
            auth += ":" + urllib.parse.quote(str(conn.password), safe="")
        auth += "@"
    host = str(conn.host or "localhost") + ("" if srv or not conn.port else f":{int(conn.port)}")
    query = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in extra.items()
             if isinstance(v, (str, int, float, bool))}
    if conn.login and conn.schema and "authSource" not in query:
        query["authSource"] = str(conn.schema)
    return f"{scheme}://{auth}{host}/" + (f"?{urllib.parse.urlencode(query)}" if query else "")


class MongoDB(Connector, SchemaInference, BatchSource, MongoSinkVerbs, RetiresCommits, FromConnection, Lineage):
    name = "MongoDB"
    connection_option = CONN_OPTION
    #: a committer only with transaction = true, as SeaTunnel counts it (has_committer)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), deletes=True)
    option_spec = SPEC  # required, identity and secrets (uri) come from it
    description = "Reads or writes the documents of a MongoDB collection (exactly once through a fenced commit log)."

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """Beyond the spec: the first rule SeaTunnel would refuse that a declaration cannot say,
        located at its key; options this package reads differently (warnings)."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            options = _parsed(plugin)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems: list[Problem] = []
        if plugin.section == SOURCE and options.schema is None:
            problems.append(job.problem("schema is not set: each document's field 'content' is read as the one "
                                        "string field (SeaTunnel's option rule requires schema)", plugin,
                                        key="schema", severity="warning",
                                        hint="declare schema = { fields { ... } }"))
        if plugin.section == SOURCE and plugin.has("partition.split-size"):
            problems.append(job.problem("partition.split-size is ignored: the plan's parallelism sets the readers",
                                        plugin, key="partition.split-size", severity="warning",
                                        hint="set parallelism on the block instead"))
        return problems

    def has_committer(self, options: Mapping[str, Any]) -> bool:
        """SeaTunnel's MongoDB sink has an aggregated committer only with ``transaction = true``."""
        try:
            return bool(SPEC.parse(options, SINK)["transaction"])
        except OptionError:
            return False

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """A source's rows: its ``schema`` or ``content string``; a sink has none."""
        if plugin.section == SINK:
            return None, []
        try:
            return _parsed(plugin).output_schema(), []
        except OptionError:
            return None, []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``uri`` from a connection of type ``mongo`` (:func:`uri_of`); ``database`` from its schema."""
        out: dict[str, Any] = {"uri": uri_of(conn)}
        if conn.schema:
            out["database"] = str(conn.schema)
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "uri" not in options

    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        """``mongodb://host:port/<database>.<collection>`` (OpenLineage's MongoDB naming), no credentials."""
        uri, db, coll = options.get("uri"), options.get("database"), options.get("collection")
        if not uri or not db or not coll:
            return [Unnamed(f"the collection of connection {options.get(CONN_OPTION)!r}", True)]
        parts = urllib.parse.urlsplit(str(uri))
        hosts = parts.netloc.rpartition("@")[2]
        return [f"{parts.scheme}://{hosts}/{db}.{coll}"]

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)


CONNECTOR = MongoDB()
