"""The Clickhouse source's read and the sink's storage verbs, on the Spark driver.

``read``: the query's columns and types from ``DESCRIBE TABLE (sql)`` (SeaTunnel's source asks the server
the same way), then one DataFrame of the Python data source (:mod:`.datasource`) in exactly
``vertex.parallelism`` partitions, with the row-kind column. :class:`ClickhouseSinkVerbs`: the commit log,
``stage`` (ONE Spark write into per-partition staging tables), ``publish`` (:mod:`.commit`), ``discard``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.pysources import register_for_write, register_once
from ...spi.rows import ROW_KIND, data_columns, last_per_key, quote, with_kind
from ...spi.schema import Field, Schema, parse_type
from ...spi.twophase import CommitId, Published, Staged
from . import client, commit, staging
from .client import literal
from .options import ClickhouseOptions, Endpoint, OptionError, parse
from .types import seatunnel_type

log = logging.getLogger("seatunnel.clickhouse")


def options_of(vertex: Vertex) -> ClickhouseOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        options = parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None
    assert options.endpoint is not None
    return options


def _endpoint(options: ClickhouseOptions) -> Endpoint:
    assert options.endpoint is not None
    return options.endpoint


def _sink_endpoint(options: ClickhouseOptions) -> Endpoint:
    """A sink's endpoint: its first host only (:meth:`Endpoint.pinned`)."""
    return _endpoint(options).pinned()


def describe(endpoint: Endpoint, database: str, sql: str) -> list[tuple[str, str]]:
    """The columns of ``sql``'s answer: (name, ClickHouse type)."""
    found = client.rows(endpoint, f"DESCRIBE TABLE ({client.strip_format(sql)})", database,
                        doing="cannot describe the query's columns")
    return [(str(r[0]), str(r[1])) for r in found]


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The query's answer as rows of its columns' SeaTunnel types, in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION, ClickhouseDataSource

    options = options_of(vertex)
    endpoint = _endpoint(options)
    columns = describe(endpoint, options.database, options.sql)
    schema = Schema(tuple(Field(n, parse_type(seatunnel_type(t))) for n, t in columns))
    spec = {"endpoint": endpoint.to_json(), "database": options.database, "sql": client.strip_format(options.sql),
            "types": [t for _, t in columns], "parallelism": max(1, int(vertex.parallelism))}
    register_once(ctx.spark, ClickhouseDataSource)
    df = ctx.spark.read.format(NAME).schema(schema.to_spark()).option(SPEC_OPTION, json.dumps(spec)).load()
    log.info("Clickhouse %s: one query of %s, %d reader(s)", vertex.ref, endpoint.label, vertex.parallelism)
    return {"default": with_kind(df)}


def target_of(endpoint: Endpoint, options: ClickhouseOptions) -> tuple[str, list[str], list[str]]:
    """The target's engine, columns and sorting key (deterministic errors when it is missing or unusable)."""
    where = f"database = {literal(options.database)} AND name = {literal(options.table)}"
    found = client.rows(endpoint, f"SELECT engine, sorting_key FROM system.tables WHERE {where}",
                        doing="cannot read the target table")
    if not found:
        raise RuntimeConfigError(f"the table {options.database}.{options.table} does not exist at {endpoint.label} "
                                 "(SeaTunnel's Clickhouse sink creates no table: create it first)")
    engine, sorting = str(found[0][0]), str(found[0][1])
    columns = client.rows(endpoint, "SELECT name FROM system.columns WHERE database = "
                                    f"{literal(options.database)} AND table = {literal(options.table)} "
                                    "AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position",
                          doing="cannot read the target's columns")
    return engine, [str(c[0]) for c in columns], [k.strip() for k in sorting.split(",") if k.strip()]


def _check_target(options: ClickhouseOptions, engine: str, names: list[str]) -> None:
    if options.split_mode and engine == "Distributed":
        raise RuntimeConfigError(f"split_mode writes the shards of the Distributed table {options.table}; this "
                                 "connector writes one node: write the shards' local table instead")
    if options.primary_key and not engine.endswith("MergeTree"):
        raise RuntimeConfigError(f"primary_key needs a *MergeTree table ({options.table} is {engine}): its rows "
                                 "are deleted by key")
    missing = [k for k in options.primary_key if k not in names]
    if missing:
        raise RuntimeConfigError(f"primary_key names {', '.join(missing)}, which the input and the table do not "
                                 "both hold")


class ClickhouseSinkVerbs:
    """The sink's storage verbs (``spi/twophase.py``); the engine runs the two phases over them."""

    #: the publish moves the staged partitions one at a time and fires ``sink.move`` before each itself
    moves_in_steps = True

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> commit.ClickhouseCommitLog:
        return commit.ClickhouseCommitLog(_sink_endpoint(options_of(vertex)))

    def stage(self, ctx: RunContext, vertex: Vertex, commit_id: CommitId, token: int, df: Any) -> Staged:
        """ONE Spark write of the table's rows into per-partition staging tables (the manifest Spark's commit
        left gives their rows), gathered into one table (the publish then moves one table's partitions: an
        unpartitioned target's in ONE step)."""
        from .datasource import NAME, SPEC_OPTION, ClickhouseDataSource

        options = options_of(vertex)
        endpoint = _sink_endpoint(options)
        engine, table_columns, sorting = target_of(endpoint, options)
        columns = [c for c in data_columns(df) if c in table_columns]  # SeaTunnel's projection
        _check_target(options, engine, columns)
        data = with_kind(df)
        if options.primary_key:
            data = last_per_key(data, list(options.primary_key))
        data = data.select(*[quote(c) for c in columns], ROW_KIND)
        staging.ensure(endpoint)
        spec = {"endpoint": endpoint.to_json(), "commit_key": commit_id.key, "token": token,
                "database": options.database, "table": options.table, "columns": columns,
                "kind_index": len(columns), "primary_key": list(options.primary_key), "bulk_size": options.bulk_size,
                "move": engine.endswith("MergeTree"),
                "replacing": engine.endswith("ReplacingMergeTree") and sorting == list(options.primary_key)}
        register_for_write(ctx.spark, data, ClickhouseDataSource)
        data.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
        manifest = staging.tables(endpoint, commit_id.key).get(staging.name("man", commit_id.key, token), {})
        parts = [tuple(p) for p in manifest.get("parts", [])]
        gathered = [staging.gather(endpoint, kind, commit_id.key, token, [(p[0], p[at]) for p in parts])
                    for kind, at in (("stg", 1), ("del", 2))]
        staged = [g for g in gathered if g is not None]
        detail = {"database": options.database, "table": options.table, "columns": columns,
                  "mode": "move" if spec["move"] else "insert",
                  "primary_key": list(options.primary_key), "lightweight_delete": options.lightweight_delete}
        return Staged(commit_id, token, f"clickhouse {endpoint.label} {options.database}.{options.table}",
                      sum(p[1] for p in parts), tuple(staged), detail)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        return commit.publish(_sink_endpoint(options_of(vertex)), ctx, vertex, staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        commit.discard(_sink_endpoint(options_of(vertex)), staged.commit.key, staged.token)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit_id: CommitId, token: int) -> int:
        return commit.discard_older(_sink_endpoint(options_of(vertex)), commit_id.key, token)


__all__ = ["ClickhouseSinkVerbs", "describe", "options_of", "read", "target_of"]
