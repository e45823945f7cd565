"""The Redis source's read and the sink's storage verbs, on the Spark driver.

``read``: one DataFrame of the Python data source (:mod:`.datasource`) in exactly
``vertex.parallelism`` partitions, with the row-kind column.

:class:`RedisSinkVerbs`: the attempt token (``INCR``, atomically with the commit-record check) in
:class:`RedisCommitLog`; ``stage`` is ONE Spark write into per-task staging lists; ``publish`` the
commit script (:mod:`.commit`). The engine (``runtime/twophase.py``) takes the token, passes a
committed table's rows through ``noop``, deletes older staging, discards on a failure and raises
``Superseded``/``StagingMismatch``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.pysources import register_for_write, register_once
from ...spi.rows import data_only, keys_in_arrival_order, with_kind
from ...spi.twophase import CommitId, Prepared, Published, Staged
from .client import connected
from .commit import discard, drop_older, newest_token, publish, read_manifest, retire_table, take_token
from .options import Endpoint, OptionError, RedisOptions, parse

log = logging.getLogger("seatunnel.redis")



def options_of(vertex: Vertex) -> RedisOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        options = parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None
    if options.mode == "cluster":
        raise RuntimeConfigError("mode cluster is not supported by this package (use mode = single)")
    assert options.endpoint is not None  # parse() with need_endpoint
    return options


def _register(spark: Any) -> None:
    from .datasource import RedisDataSource

    register_once(spark, RedisDataSource)


def _base_spec(options: RedisOptions) -> dict[str, Any]:
    assert options.endpoint is not None
    return {"endpoint": options.endpoint.to_json(), "redis_type": options.redis_type,
            "batch_size": options.batch_size, "format": options.format}


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The keys matching ``keys`` as rows, in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION

    options = options_of(vertex)
    schema = options.output_schema()
    spec = {**_base_spec(options), "keys": options.keys, "parallelism": max(1, int(vertex.parallelism)),
            "hash_key_parse_mode": options.hash_key_parse_mode,
            "schema": schema.to_json() if options.format == "json" else None}
    _register(ctx.spark)
    df = ctx.spark.read.format(NAME).schema(schema.to_spark()).option(SPEC_OPTION, json.dumps(spec)).load()
    assert options.endpoint is not None
    log.info("Redis %s: reading keys %r (%s) from %s with %d reader(s)", vertex.ref, options.keys,
             options.data_type, options.endpoint.label, vertex.parallelism)
    return {"default": with_kind(df)}


class RedisCommitLog:
    """Attempt tokens and commit records in the target server (``fence:K``, ``commit:K``)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        with connected(self.endpoint, f"cannot take an attempt token in {self.endpoint.label}") as client:
            return take_token(client, commit.key)

    def newest_token(self, commit: CommitId) -> int:
        with connected(self.endpoint, f"cannot read the attempt token in {self.endpoint.label}") as client:
            return newest_token(client, commit.key)


def _endpoint(vertex: Vertex) -> Endpoint:
    endpoint = options_of(vertex).endpoint
    assert endpoint is not None
    return endpoint


class RedisSinkVerbs:
    """The sink's storage verbs (``spi/twophase.py``); the engine runs the two phases over them."""

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> RedisCommitLog:
        return RedisCommitLog(_endpoint(vertex))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        """ONE Spark write at the parallelism the engine hands the rows at (one write task, one staging
        list, per partition); the manifest Spark's commit left names the lists and their rows."""
        from .datasource import NAME, SPEC_OPTION, RedisDataSource

        options = options_of(vertex)
        endpoint = options.endpoint
        assert endpoint is not None
        target = f"{endpoint.label} key {options.key!r}"
        spec = {**_base_spec(options), "key": options.key, "field_delimiter": options.field_delimiter,
                "commit_key": commit.key, "token": token}
        register_for_write(ctx.spark, df, RedisDataSource)
        # a key field's rows in one write task, in arrival order (the engine may have dealt them over the writers)
        keyed = data_only(keys_in_arrival_order(df, [options.key] if options.key else [], vertex.parallelism))
        keyed.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
        with connected(endpoint, f"cannot read the staging manifest of {target}") as client:
            parts = read_manifest(client, commit.key, token)
        return Staged(commit, token, target, sum(p[1] for p in parts), tuple((p[0], p[1]) for p in parts),
                      {"data_type": options.data_type, "redis_type": options.redis_type, "expire": options.expire,
                       "partitions": [p[2] for p in parts]})

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        with connected(_endpoint(vertex), f"cannot commit into {staged.target}", timeout=None) as client:
            return publish(client, ctx, vertex, staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        with connected(_endpoint(vertex), "cannot delete the staging") as client:
            discard(client, staged.commit.key, staged.token)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        with connected(_endpoint(vertex), "cannot delete older staging") as client:
            return drop_older(client, commit.key, token)


    def retire(self, ctx: RunContext, vertex: Vertex, info: Prepared) -> None:
        """STREAMING: drop the commit records of the stream's micro-batches before ``ctx.batch_id``."""
        stream = getattr(ctx, "stream_id", "")
        if stream:
            for staged in info.tables:
                retire_table(ctx, vertex, _endpoint(vertex), staged.commit.table, stream)
