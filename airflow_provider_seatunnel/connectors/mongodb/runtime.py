"""The MongoDB source's read and the sink's storage verbs, on the Spark driver.

``read``: one DataFrame of the Python data source (:mod:`.datasource`) in exactly
``vertex.parallelism`` partitions, with the row-kind column.

:class:`MongoSinkVerbs`: the attempt token in :class:`MongoCommitLog` (the target database's
``__seatunnel_commits``); ``stage`` is ONE Spark write into the attempt's staging collection;
``publish`` the claimed commit of :mod:`.commit`. The engine (``runtime/twophase.py``) takes the token,
passes a committed table's rows through ``noop``, deletes older staging, discards on a failure and
raises ``Superseded``/``StagingMismatch``.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.pysources import register_for_write, register_once
from ...spi.rows import ROW_KIND, data_columns, keys_in_arrival_order, quote, with_kind
from ...spi.twophase import CommitId, Prepared, Published, Staged
from . import commit as log_
from .client import connected
from .options import MongoOptions, OptionError, parse

log = logging.getLogger("seatunnel.mongodb")


def options_of(vertex: Vertex) -> MongoOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        options = parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None
    assert options.uri is not None  # parse() with need_uri
    return options


def _register(spark: Any) -> None:
    from .datasource import MongoDataSource

    register_once(spark, MongoDataSource)


def _base(options: MongoOptions) -> dict[str, Any]:
    return {"uri": options.uri, "database": options.database, "collection": options.collection,
            "label": options.label}


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The documents ``match.query`` selects as rows, in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION

    options = options_of(vertex)
    schema = options.output_schema()
    spec = {**_base(options), "schema": schema.to_json(), "flat": options.flat,
            "query": json.dumps(options.match_query) if options.match_query is not None else None,
            "projection": json.dumps(options.projection) if options.projection is not None else None,
            "split_key": options.split_key, "fetch_size": options.fetch_size, "max_time_ms": options.max_time_ms,
            "no_timeout": options.no_timeout, "parallelism": max(1, int(vertex.parallelism))}
    _register(ctx.spark)
    df = ctx.spark.read.format(NAME).schema(schema.to_spark()).option(SPEC_OPTION, json.dumps(spec)).load()
    log.info("MongoDB %s: reading %s with %d reader(s)", vertex.ref, options.label, vertex.parallelism)
    return {"default": with_kind(df)}


class MongoCommitLog:
    """Attempt tokens and commit records in the target database's ``__seatunnel_commits``."""

    def __init__(self, options: MongoOptions) -> None:
        self.options = options

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        o = self.options
        assert o.uri is not None
        with connected(o.uri, f"cannot take an attempt token in {o.label}") as client:
            return log_.take_token(client[o.database], commit.key, o.collection, o.batch)

    def newest_token(self, commit: CommitId) -> int:
        o = self.options
        assert o.uri is not None
        with connected(o.uri, f"cannot read the attempt token in {o.label}") as client:
            return log_.newest_token(client[o.database], commit.key)


def _record_fields(ctx: RunContext, vertex: Vertex, table: str) -> dict[str, Any]:
    return {"run_id": ctx.run_id, "pipeline": ctx.pipeline_key, "sink": vertex.ref, "table": table,
            "attempt": ctx.attempt, "claimed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}


class MongoSinkVerbs:
    """The sink's storage verbs (``spi/twophase.py``); the engine runs the two phases over them."""

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> MongoCommitLog:
        return MongoCommitLog(options_of(vertex))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        """ONE Spark write at the parallelism the engine hands the rows at (one write task per partition,
        each staging its operations); the manifest Spark's commit left names the task attempts and rows."""
        from pyspark.sql import functions as F

        from .datasource import NAME, SPEC_OPTION, MongoDataSource

        options = options_of(vertex)
        stage = log_.stage_name(commit.key, token)
        spec = {**_base(options), "stage": stage, "primary_key": list(options.primary_key),
                "upsert": options.upsert, "batch": options.batch}
        register_for_write(ctx.spark, df, MongoDataSource)
        # changes the engine shuffled: each key's in one write task, in order (publish applies task by task)
        df = keys_in_arrival_order(df, options.primary_key, int(vertex.parallelism))
        columns = [F.col(quote(c)) for c in data_columns(df)]
        kind = [F.col(ROW_KIND)] if ROW_KIND in df.columns else []
        df.select(*columns, *kind).write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
        assert options.uri is not None
        with connected(options.uri, f"cannot read the staging manifest of {options.label}") as client:
            parts = log_.manifest(client[options.database], commit.key, token)
        return Staged(commit, token, options.label, sum(p[1] for p in parts), tuple((p[0], p[1]) for p in parts),
                      {"stage": stage, "partitions": [p[2] for p in parts]})

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        o = options_of(vertex)
        assert o.uri is not None
        with connected(o.uri, f"cannot commit into {staged.target}") as client:
            return log_.publish(client[o.database], staged.commit.key, staged.token, staged.parts, o.collection,
                                o.batch, _record_fields(ctx, vertex, staged.commit.table))

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        o = options_of(vertex)
        assert o.uri is not None
        with connected(o.uri, f"cannot delete the staging of {o.label}") as client:
            log_.discard(client[o.database], staged.commit.key, staged.token)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        o = options_of(vertex)
        assert o.uri is not None
        with connected(o.uri, f"cannot delete older staging of {o.label}") as client:
            return log_.drop_older(client[o.database], commit.key, token)

    def retire(self, ctx: RunContext, vertex: Vertex, info: Prepared) -> None:
        """STREAMING: drop the commit records of the stream's micro-batches before ``ctx.batch_id``."""
        stream = getattr(ctx, "stream_id", "")
        if not stream:
            return
        o = options_of(vertex)
        assert o.uri is not None
        with connected(o.uri, f"cannot retire commit records of {o.label}") as client:
            for staged in info.tables:
                log_.retire(client[o.database], ctx.pipeline_key, vertex.ref, staged.commit.table, stream, ctx.run_id)
