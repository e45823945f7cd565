"""Elasticsearch and Easysearch: indices of a cluster as source and sink, over the REST API.

SeaTunnel's options (:mod:`.options`: ``hosts``, ``username``/``password``, the ``tls_*`` options,
``index``/``index_list``, ``source``/``schema``, ``query``, ``scroll_time``/``scroll_size``, ``array_column``;
``primary_keys``, ``key_delimiter``, ``max_batch_size``, ``max_retry_count``, ``index_type``, the save
modes), or ``elasticsearch_conn_id`` / ``easysearch_conn_id`` naming an Airflow connection. Easysearch
speaks the same REST dialect; its plugin has fewer options (no ``index_list``, ``array_column``,
``index_type`` nor save modes).

* **Source** (:mod:`.datasource`): a PySpark Python data source, one sliced-scroll slice per reader of
  the plan's parallelism; types from ``schema`` or, with ``source`` only, the index's mapping.
* **Sink**, exactly-once by the engine's two-phase protocol over :class:`ElasticsearchSinkVerbs`
  (:mod:`.sink`): staging index, fenced claim in the cluster's commit-log index, ``_reindex`` copy.

The user's docs: docs/elasticsearch.md; deviations from SeaTunnel: :data:`.options.DEVIATIONS`.
"""

from __future__ import annotations

import json
import logging
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
    RunContext,
    SchemaInference,
    Vertex,
)
from ...spi.errors import RuntimeConfigError
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.schema import Schema
from ...spi.twophase import CommitId, Published, Staged
from . import checks
from .options import DEVIATIONS, SearchOptions, parse, spec

__all__ = ["CONNECTOR", "DEVIATIONS", "Easysearch", "Elasticsearch"]

log = logging.getLogger("seatunnel.elasticsearch")


class Elasticsearch(Connector, SchemaInference, BatchSource, FromConnection):
    name = "Elasticsearch"
    connection_option = "elasticsearch_conn_id"
    conn_type = "elasticsearch"
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True, deletes=True)
    option_spec = spec("elasticsearch_conn_id", "elasticsearch", easysearch=False)
    description = "Reads documents of indices (a sliced scroll), or writes them exactly once (bulk, then _reindex)."
    #: the copy and its reset are steps after the claim: ``sink.move`` fires before the claim and the copy
    moves_in_steps = True

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return checks.check(plugin, job, self.option_spec, self.connection_option)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return checks.schema(plugin, self.option_spec, self.connection_option), []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``hosts``, ``username`` and ``password`` from a connection (host with or without a scheme, port,
        login, password; extra ``scheme``, ``verify_certs``, ``ca_certs``: a PEM file, ``tls_truststore_path``)."""
        extra = conn.extra or {}
        host = str(conn.host or "localhost")
        scheme = str(extra.get("scheme") or ("https" if conn.conn_type.endswith("s") else "http"))
        if "://" not in host:
            host = f"{scheme}://{host}"
        out: dict[str, Any] = {"hosts": [f"{host}:{int(conn.port)}" if conn.port else host]}
        if conn.login:
            out["username"] = str(conn.login)
        if conn.password:
            out["password"] = str(conn.password)
        if str(extra.get("verify_certs", "true")).lower() == "false":
            out["tls_verify_certificate"] = False
        if extra.get("ca_certs"):
            out["tls_truststore_path"] = str(extra["ca_certs"])
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "hosts" not in options

    # both phases -------------------------------------------------------------------------------

    def options_of(self, vertex: Vertex) -> SearchOptions:
        """The block's options, checked again (a hand-written plan skips the compiler)."""
        try:
            options = parse(vertex.config, vertex.kind, self.option_spec, self.connection_option)
        except OptionError as e:
            raise e.at_run_time() from None
        if options.row_placeholders():
            raise RuntimeConfigError("an index named by a field of each row is not supported by this package")
        return options

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from ...spi.pysources import register_once
        from ...spi.rows import with_kind
        from .client import Client, quote
        from .datasource import NAME, SPEC_OPTION, ElasticsearchDataSource
        from .mapping import fields_of_mapping, read_schema

        options = self.options_of(vertex)
        assert options.endpoint is not None
        register_once(ctx.spark, ElasticsearchDataSource)
        out: dict[str, Any] = {}
        client = Client(options.endpoint)
        for table in options.tables:
            schema = table.schema
            if schema is None:
                _, answer = client.request("GET", f"/{quote(table.index)}/_mapping")
                try:
                    schema = read_schema(fields_of_mapping(answer), table.source, table.array_column)
                except KeyError as e:
                    raise RuntimeConfigError(f"source field {e.args[0]!r} is not in the mapping of index "
                                             f"{table.index!r}") from None
            body = {"endpoint": options.endpoint.to_json(), "index": table.index, "query": dict(table.query),
                    "schema": schema.to_json(), "scroll_time": table.scroll_time, "scroll_size": table.scroll_size,
                    "parallelism": max(1, int(vertex.parallelism))}
            df = ctx.spark.read.format(NAME).schema(schema.to_spark()).option(SPEC_OPTION, json.dumps(body)).load()
            log.info("%s %s: reading index %r from %s with %d reader(s)", self.name, vertex.ref, table.index,
                     options.endpoint.label, vertex.parallelism)
            out[table.index if len(options.tables) > 1 else "default"] = with_kind(df)
        return out

    # sink: the storage verbs ---------------------------------------------------------------------

    def _endpoint(self, vertex: Vertex) -> Any:
        endpoint = self.options_of(vertex).endpoint
        assert endpoint is not None
        return endpoint

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> Any:
        from .client import Client
        from .sink import CommitLog

        return CommitLog(Client(self._endpoint(vertex)))

    def apply_save_modes(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> None:
        from .client import Client
        from .sink import apply_save_modes, marker_key, target_index

        options = self.options_of(vertex)
        target = target_index(options, commit.table)
        apply_save_modes(Client(self._endpoint(vertex)), options, target, marker_key(ctx, vertex, target))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        from .sink import stage

        return stage(ctx, vertex, self.options_of(vertex), commit, token, df)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        from .sink import publish

        return publish(ctx, vertex, self._endpoint(vertex), staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        from .sink import discard

        discard(self._endpoint(vertex), staged)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        from .sink import discard_older

        return discard_older(self._endpoint(vertex), commit, token)


class Easysearch(Elasticsearch):
    """INFINI Easysearch: the same REST dialect, SeaTunnel's smaller option set (no save modes: the index is
    created by the first write, the data appended)."""

    name = "Easysearch"
    connection_option = "easysearch_conn_id"
    conn_type = "easysearch"
    option_spec = spec("easysearch_conn_id", "easysearch", easysearch=True)
    description = "Reads documents of an Easysearch index, or writes them exactly once (bulk, then _reindex)."


CONNECTOR = Elasticsearch()
EASYSEARCH = Easysearch()
