"""The Redis source's read and the sink's first phase, on the Spark driver.

``read``: one DataFrame of the Python data source (:mod:`.datasource`) in exactly
``vertex.parallelism`` partitions, with the row-kind column.

``prepare`` per table: the attempt token (``INCR``, atomically with the commit-record check); a
table this run committed already passes its rows once through Spark's ``noop`` sink and writes
nothing; otherwise the staging of older tokens is deleted and ONE Spark write stages the rows,
at the parallelism the engine hands them at (one write task, one staging list, per partition),
and the manifest Spark's commit left names the lists and their rows. A failure deletes what this
attempt staged before the error is raised (``Superseded`` when a newer attempt took over).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError, RuntimeConfigError
from ...spi.fencing import Superseded
from ...spi.pysources import register_once
from ...spi.rows import data_only, with_kind
from .client import connected
from .commit import discard, drop_older, newest_token, read_manifest, table_commit_key, take_token
from .options import OptionError, RedisOptions, parse

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


def prepare(ctx: RunContext, vertex: Vertex, data: Dataset) -> dict[str, Any]:
    options = options_of(vertex)
    entries: list[dict[str, Any]] = []
    for table, df in data.items():
        entries.append(prepare_table(ctx, vertex, options, table, df))
    return {"tables": entries}


def prepare_table(ctx: RunContext, vertex: Vertex, options: RedisOptions, table: str, df: Any) -> dict[str, Any]:
    """Stage one table (see the module's docstring); the entry ``commit`` publishes."""
    from .datasource import NAME, SPEC_OPTION

    endpoint = options.endpoint
    assert endpoint is not None
    k = table_commit_key(ctx, vertex, table)
    target = f"{endpoint.label} key {options.key!r}"
    entry: dict[str, Any] = {"table": table, "commit_key": k, "target": target, "data_type": options.data_type,
                             "redis_type": options.redis_type, "expire": options.expire}
    with connected(endpoint, f"cannot prepare {target}") as client:
        token, committed = take_token(client, k)
        dropped = drop_older(client, k, token)
    entry["token"] = token
    if committed:
        log.info("Redis %s: table %s of run %s already committed to %s; nothing to write", vertex.ref, table,
                 ctx.run_id, target)
        df.write.format("noop").mode("overwrite").save()  # the row counters count in this one pass
        return {**entry, "status": "committed"}
    if dropped:
        log.info("Redis %s: deleted %d staging list(s) of earlier attempts", vertex.ref, dropped)
    spec = {**_base_spec(options), "key": options.key, "field_delimiter": options.field_delimiter,
            "commit_key": k, "token": token}
    _register(ctx.spark)
    staged = ctx.with_write_faults(vertex, data_only(df))  # restore trials only
    try:
        staged.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
        with connected(endpoint, f"cannot read the staging manifest of {target}") as client:
            parts = read_manifest(client, k, token)
            newest = newest_token(client, k)
        if newest > token:
            raise Superseded(target, token, newest, vertex.ref)
    except BaseException:
        _discard_quietly(endpoint, k, token)
        raise
    rows = sum(p[1] for p in parts)
    log.info("Redis %s: staged %d rows for %s in %d list(s) (attempt token %d)", vertex.ref, rows, target,
             len(parts), token)
    return {**entry, "status": "staged", "parts": [list(p) for p in parts], "staged_rows": rows,
            "writers": len(parts)}


def _discard_quietly(endpoint: Any, k: str, token: int) -> None:
    try:
        with connected(endpoint, "cannot delete the staging") as client:
            discard(client, k, token)
    except PipelineError as e:
        log.warning("Redis: could not delete the staging of attempt token %d: %s", token, e)

