"""The InfluxDB source's read and the sink's storage verbs, on the Spark driver.

``read``: one DataFrame of the Python data source (:mod:`.datasource`) in exactly ``vertex.parallelism``
partitions, with the row-kind column. :class:`InfluxSinkVerbs`: the commit log, ``stage`` (ONE Spark write
into the bookkeeping database's staging), ``publish`` (:mod:`.commit`), ``discard``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.pysources import register_for_write, register_once
from ...spi.rows import data_only, keys_in_arrival_order, with_kind
from ...spi.twophase import CommitId, Published, Staged
from ..files.placeholders import expand_table_placeholders
from . import commit, staging
from .options import FIELD_TYPES, TIME_TYPES, Endpoint, InfluxOptions, OptionError, parse

log = logging.getLogger("seatunnel.influxdb")

#: Spark's type names -> SeaTunnel's
_KINDS = {"boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "int", "bigint": "bigint",
          "float": "float", "double": "double", "string": "string", "timestamp": "timestamp",
          "timestamp_ntz": "timestamp"}


def options_of(vertex: Vertex) -> InfluxOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        options = parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None
    assert options.endpoint is not None
    return options


def _endpoint(options: InfluxOptions) -> Endpoint:
    assert options.endpoint is not None
    return options.endpoint


def _register(spark: Any) -> None:
    from .datasource import InfluxDataSource

    register_once(spark, InfluxDataSource)


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The query's answer as rows of the declared schema, in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION

    options = options_of(vertex)
    assert options.schema is not None
    queries = options.queries()
    spec = {"endpoint": _endpoint(options).to_json(), "database": options.database, "queries": queries,
            "epoch": options.epoch, "timeout": options.query_timeout,
            "parallelism": max(1, int(vertex.parallelism)),
            "names": [f.name for f in options.schema.fields],
            "kinds": [f.type.name.lower() for f in options.schema.fields]}
    _register(ctx.spark)
    df = ctx.spark.read.format(NAME).schema(options.schema.to_spark()).option(SPEC_OPTION, json.dumps(spec)).load()
    log.info("InfluxDB %s: %d split query(ies) of %s over %d reader(s)", vertex.ref, len(queries),
             _endpoint(options).label, vertex.parallelism)
    return {"default": with_kind(df)}


def kinds_of(df: Any) -> list[str]:
    """Each column's SeaTunnel type name."""
    return [_KINDS.get(f.dataType.simpleString(), f.dataType.simpleString()) for f in df.schema.fields]


def _check_columns(options: InfluxOptions, names: list[str], kinds: list[str]) -> None:
    """key_time and key_tags name columns; the fields are of types the sink writes (deterministic)."""
    for name in (*([options.key_time] if options.key_time else []), *options.key_tags):
        if name not in names:
            raise RuntimeConfigError(f"the field '{name}' (key_time or key_tags) is not a column of the input "
                                     f"({', '.join(names)})")
    skip = {*options.key_tags, options.key_time}
    for name, kind in zip(names, kinds, strict=True):
        if name == options.key_time and kind not in TIME_TYPES:
            raise RuntimeConfigError(f"key_time '{name}' is a {kind}: it must be one of {', '.join(TIME_TYPES)}")
        if name not in skip and kind not in FIELD_TYPES:
            raise RuntimeConfigError(f"the field '{name}' is a {kind}, which the InfluxDB sink does not write "
                                     f"({', '.join(FIELD_TYPES)}): cast it, or make it a tag")


class InfluxSinkVerbs:
    """The sink's storage verbs (``spi/twophase.py``); the engine runs the two phases over them."""

    #: the publish writes in several requests and fires ``sink.move`` before each itself
    moves_in_steps = True

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> commit.InfluxCommitLog:
        options = options_of(vertex)
        return commit.InfluxCommitLog(_endpoint(options), options)

    def stage(self, ctx: RunContext, vertex: Vertex, commit_id: CommitId, token: int, df: Any) -> Staged:
        """ONE Spark write of the table's points into the staging, at the parallelism the rows arrive at;
        the manifest Spark's commit left gives the parts and their rows."""
        from .datasource import NAME, SPEC_OPTION, InfluxDataSource, now_ns

        options = options_of(vertex)
        endpoint = _endpoint(options)
        if options.key_time:  # a point's (time and tags) rows in one write task, in arrival order
            df = keys_in_arrival_order(df, [options.key_time, *options.key_tags], vertex.parallelism)
        data = data_only(df)
        names, kinds = list(data.columns), kinds_of(data)
        _check_columns(options, names, kinds)
        measurement = expand_table_placeholders(options.measurement, commit_id.table, names)
        staging.ensure(endpoint)
        base = now_ns()
        spec = {"endpoint": endpoint.to_json(), "commit_key": commit_id.key, "token": token,
                "measurement": measurement, "kinds": kinds, "key_time": options.key_time,
                "key_tags": list(options.key_tags), "unit_ns": options.precision_ns, "base_ns": base,
                "partitions": data.rdd.getNumPartitions(), "batch_size": options.batch_size,
                "write_timeout": options.write_timeout, "max_retries": options.max_retries,
                "backoff_ms": options.backoff_ms, "max_backoff_ms": options.max_backoff_ms}
        register_for_write(ctx.spark, data, InfluxDataSource)
        data.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
        parts = staging.read_manifest(endpoint, commit_id.key, token) or []
        target = f"{endpoint.label}/{options.database} measurement {measurement!r}"
        skip = {*options.key_tags, options.key_time}
        detail = {**commit.detail_of(options), "measurement": measurement,
                  "field_kinds": {n: k for n, k in zip(names, kinds, strict=True) if n not in skip}}
        return Staged(commit_id, token, target, sum(p[1] for p in parts),
                      tuple((f"part-{p[0]}", p[1]) for p in parts), detail)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        return commit.publish(_endpoint(options_of(vertex)), ctx, vertex, staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        commit.discard(_endpoint(options_of(vertex)), staged.commit.key, staged.token)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit_id: CommitId, token: int) -> int:
        return commit.discard_older(_endpoint(options_of(vertex)), commit_id.key, token)
