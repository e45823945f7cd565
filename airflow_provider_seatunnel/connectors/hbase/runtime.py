"""The Hbase source's read and the sink's storage verbs, on the Spark driver.

``read``: one DataFrame of the Python data source (:mod:`.datasource`) in exactly ``vertex.parallelism``
partitions, with the row-kind column. :class:`HbaseSinkVerbs`: the attempt token and commit records in
:class:`.commit.HbaseCommitLog`; ``stage`` applies the save modes once per run and target, then ONE Spark
write into the staging table; ``publish`` the fenced claim and copy (:mod:`.commit`). The engine
(``runtime/twophase.py``) takes the token, passes a committed table's rows through ``noop``, deletes older
staging, discards on a failure and raises ``Superseded``/``StagingMismatch``.
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
from .client import connected
from .commit import HbaseCommitLog, apply_save_modes, discard, discard_older, marker_key, publish, staged_parts
from .options import SINK_TYPES, HbaseOptions, OptionError, parse, thrift_name

log = logging.getLogger("seatunnel.hbase")

_SPARK_TYPES = {"ByteType": "tinyint", "ShortType": "smallint", "IntegerType": "int", "LongType": "bigint",
                "FloatType": "float", "DoubleType": "double", "BooleanType": "boolean", "StringType": "string"}


def options_of(vertex: Vertex) -> HbaseOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        return parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The table's rows in the declared schema, in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION, HbaseDataSource

    options = options_of(vertex)
    schema = options.schema
    assert schema is not None
    spec = {"gateway": options.gateway.to_json(), "table": options.thrift_table,
            "fields": [(f.name, str(f.type)) for f in schema.fields], "caching": options.caching,
            "batch": options.batch, "parallelism": max(1, int(vertex.parallelism))}
    register_once(ctx.spark, HbaseDataSource)
    df = ctx.spark.read.format(NAME).schema(schema.to_spark()).option(SPEC_OPTION, json.dumps(spec)).load()
    log.info("Hbase %s: reading table %r from %s with %d reader(s)", vertex.ref, options.table,
             options.gateway.label, vertex.parallelism)
    return {"default": with_kind(df)}


def _type_name(spark_type: Any) -> str:
    name = type(spark_type).__name__
    if name == "ArrayType":
        return f"array<{_type_name(spark_type.elementType)}>"
    return _SPARK_TYPES.get(name, spark_type.simpleString())


def _fields(options: HbaseOptions, df: Any) -> list[tuple[str, str]]:
    """The rows' fields and SeaTunnel types, checked as SeaTunnel's sink checks them."""
    fields = [(f.name, _type_name(f.dataType)) for f in df.schema.fields]
    names = [n for n, _ in fields]
    for key in options.rowkey_columns:
        if key not in names:
            raise RuntimeConfigError(f"rowkey_column field {key!r} is not in the input (fields: {', '.join(names)})")
    if options.version_column is not None and options.version_column not in names:
        raise RuntimeConfigError(f"version_column field {options.version_column!r} is not in the input")
    skip = {*options.rowkey_columns, options.version_column}
    for name, kind in fields:
        if name not in skip and kind.partition("<")[0] not in SINK_TYPES:
            raise RuntimeConfigError(f"field {name!r}: Hbase connector does not support this column type [{kind}]")
    return fields


class HbaseSinkVerbs:
    """The sink's storage verbs (``spi/twophase.py``); the engine runs the two phases over them."""

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> Any:
        return _Log(options_of(vertex))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        """The save modes once per run and target, then ONE Spark write at the parallelism the engine hands
        the rows at (one write task per partition); the parts its commit recorded name the staged rows."""
        from .datasource import NAME, SPEC_OPTION, HbaseDataSource

        options = options_of(vertex)
        rows = data_only(df)
        fields = _fields(options, rows)
        names = [n for n, _ in fields]
        families = {n: options.family_of(n) for n in names}
        written = options.families(names) or [options.family_of("")]
        target = thrift_name(expand_table_placeholders(options.table, commit.table, names))
        marker = marker_key(ctx, vertex, target)
        with connected(options.gateway, f"cannot apply the save modes of {target!r}") as h:
            apply_save_modes(h, target, written, options.schema_save_mode, options.data_save_mode, marker)
        spec = {"gateway": options.gateway.to_json(), "fields": fields, "families": families,
                "rowkey_columns": list(options.rowkey_columns), "version_column": options.version_column,
                "rowkey_delimiter": options.rowkey_delimiter, "null_mode": options.null_mode,
                "encoding": options.encoding, "write_buffer_size": options.write_buffer_size,
                "commit_key": commit.key, "token": token}
        register_for_write(ctx.spark, df, HbaseDataSource)
        # a row key's puts in one write task, in arrival order (the engine may have dealt them over the writers)
        rows = data_only(keys_in_arrival_order(df, list(options.rowkey_columns), vertex.parallelism))
        rows.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
        with connected(options.gateway, f"cannot read the staged parts of {target!r}") as h:
            parts = staged_parts(h, commit.key, token)
        return Staged(commit, token, target, sum(p[1] for p in parts), tuple((p[0], p[1]) for p in parts),
                      {"families": written, "wal": options.wal_write, "ttl": options.ttl, "marker": marker})

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        options = options_of(vertex)
        ctx.fault_point("sink.move", vertex)
        with connected(options.gateway, f"cannot commit into {staged.target!r}") as h:
            return publish(ctx, vertex, h, staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        with connected(options_of(vertex).gateway, "cannot delete the staging") as h:
            discard(h, staged)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        with connected(options_of(vertex).gateway, "cannot delete older staging") as h:
            return discard_older(h, commit, token)


class _Log:
    """The commit log over a connection opened per call (the engine may call it from several threads)."""

    def __init__(self, options: HbaseOptions):
        self.options = options

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        with connected(self.options.gateway, "cannot take an attempt token") as h:
            return HbaseCommitLog(h).take_token(commit)

    def newest_token(self, commit: CommitId) -> int:
        with connected(self.options.gateway, "cannot read the attempt token") as h:
            return HbaseCommitLog(h).newest_token(commit)
