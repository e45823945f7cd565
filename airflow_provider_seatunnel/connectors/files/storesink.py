"""The S3File sink: save modes once per run, each table written by Spark (through ``s3a://``) into
a staging prefix named by the attempt's token, then published by the fenced commit of
:mod:`.commits`. The entry points take the plugin's :class:`.options.Dialect` (S3File's by default):
how its blocks read as S3 settings; everything else is shared.

The files are LocalFile's (:func:`..files.sinkoptions.sink_options`, :func:`..files.formats.writer`):
one object per non-empty partition (and partition directory), named ``<file_name_expression>_<part>``
plus the suffixes, ``<part>`` counting from 0 per final directory.
"""

from __future__ import annotations

import posixpath
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.fencing import Superseded
from ...spi.rows import data_columns
from . import storecommits as commits
from .bucket import Conflict
from .options import (
    CODECS,
    COMMITS_DIR,
    DATA_SAVE_MODES,
    FORMAT_SUFFIX,
    PART,
    SCHEMA_SAVE_MODES,
    STAGING_DIR,
    flag,
    opt,
    safe,
)
from .placeholders import TABLE_PLACEHOLDER, file_base_name, partition_dir, table_config, unescape_partition
from .s3options import S3, Dialect, S3Settings, config_error, log
from .sinkoptions import DROP_AT_COMMIT, drops_at_commit, sink_options
from .store import Store

# ---------------------------------------------------------------------------------------------
# Save modes: the object catalog
# ---------------------------------------------------------------------------------------------


def _mode(config: Mapping[str, Any], key: str, default: str, allowed: tuple[str, ...], plugin: str) -> str:
    value = str(opt(config, key, default)).strip().upper()
    if value not in allowed:
        raise config_error(f"unknown {key} {value!r}: use one of {', '.join(allowed)}", plugin)
    return value


def handle_save_mode(bucket: Store, s: S3Settings, config: Mapping[str, Any]) -> list[str]:
    """Apply ``schema_save_mode`` then ``data_save_mode`` to the prefix. An object store has no
    directories: the table exists, and has data, when an object (not the sink's bookkeeping) lies
    under the prefix; creating it is nothing. Dropping (``RECREATE_SCHEMA`` of an existing table,
    ``DROP_DATA``) is reported as ``"drop at commit: ..."``: the first commit of the run deletes the
    earlier objects in the step that publishes the new data."""
    plugin = s.traits.plugin
    schema_mode = _mode(config, "schema_save_mode", "CREATE_SCHEMA_WHEN_NOT_EXIST", SCHEMA_SAVE_MODES, plugin)
    data_mode = _mode(config, "data_save_mode", "APPEND_DATA", DATA_SAVE_MODES, plugin)
    root = s.key("") if s.prefix else ""
    bookkeeping = (root + STAGING_DIR + "/", root + COMMITS_DIR + "/")
    exists = any(not k.startswith(bookkeeping) for k, _ in _first(bucket, root, 50))
    where = bucket.uri(s.prefix)
    if data_mode == "CUSTOM_PROCESSING":
        raise config_error("data_save_mode CUSTOM_PROCESSING is not supported by file sinks", plugin)
    if schema_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise config_error(f"The sink table not exist: {where} (schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST)",
                           plugin)
    if exists and (schema_mode == "RECREATE_SCHEMA" or data_mode == "DROP_DATA"):
        return [f"{DROP_AT_COMMIT} {where}"]
    if data_mode == "ERROR_WHEN_DATA_EXISTS" and exists:
        raise config_error(f"The target data source already has data: {where} "
                           "(data_save_mode = ERROR_WHEN_DATA_EXISTS)", plugin)
    return []


def _first(bucket: Store, prefix: str, n: int) -> list[tuple[str, int]]:
    out = []
    for item in bucket.objects(prefix):
        out.append(item)
        if len(out) >= n:
            break
    return out


def _save_mode_once(bucket: Store, s: S3Settings, config: Mapping[str, Any], marker: str, run_id: str,
                    ref: str) -> list[str]:
    """The save modes, unless a marker says this run applied them to this sink and target; the
    marker is created only if absent (the first of two racing attempts wins)."""
    if commits.read_record(bucket, s.prefix, marker) is not None:
        return []
    done = handle_save_mode(bucket, s, config)
    try:
        commits.write_record(bucket, s.prefix, marker,
                             {"run_id": run_id, "sink": ref, "actions": done,
                              "drop": drops_at_commit(done),
                              "at": datetime.now().isoformat()}, None)
    except Conflict:
        return []
    for action in done:
        log.info("%s %s: save mode %s", s.traits.plugin, ref, action)
    return done


def save_mode(run_id: str, vertex: Vertex, dialect: Dialect = S3) -> list[str] | None:
    """The save modes for ``run_id`` before the pipelines run (the Airflow group's ``prepare`` task);
    None when ``path`` depends on the data's tables."""
    path = opt(vertex.config, "path")
    if path is None or TABLE_PLACEHOLDER.search(str(path)):
        return None
    config = table_config(vertex.config, "")
    s = dialect.settings(config)
    keys = commits.slot_keys(s, run_id, "", vertex.ref, "", run_id)
    return _save_mode_once(dialect.open(s), s, config, keys["savemode"], run_id, vertex.ref)


# ---------------------------------------------------------------------------------------------
# Staging
# ---------------------------------------------------------------------------------------------

def _transaction_id(ctx: RunContext, vertex: Vertex, table: str, several_tables: bool) -> str:
    sink = re.sub(r"\D", "", vertex.ref) or safe(vertex.ref)
    middle = f"_{safe(table)}" if several_tables else ""
    return f"T_{safe(str(ctx.pipeline_key))}_{safe(str(ctx.run_id))}_{sink}{middle}_{int(ctx.attempt)}"


def staged_moves(objects: list[tuple[str, int]], data: str, s: S3Settings, opts: Mapping[str, Any],
                 partitions: list[str], base_name: str) -> tuple[list[list[str]], list[int]]:
    """(staged key, final key) pairs and sizes: Spark's data objects under ``data`` (no
    ``_SUCCESS``, ``_temporary`` or hidden objects, no empty text objects), partition directories
    mapped through the expression, names numbered from 0 per final directory."""
    fmt = opts["format"]
    codec_suffix, format_suffix = CODECS[fmt][opts["codec"]][1], FORMAT_SUFFIX[fmt]
    suffix = format_suffix + codec_suffix if fmt in ("text", "csv", "json") else codec_suffix + format_suffix
    counters: dict[str, int] = {}
    moves, sizes = [], []
    for key, size in sorted(objects):
        *dirs, name = key[len(data):].split("/")
        if name.startswith((".", "_")) or any(not d.startswith(PART) or "=" not in d for d in dirs):
            continue
        if size == 0 and fmt in ("text", "csv", "json", "excel"):  # excel: Spark's file of an empty first task
            continue
        values: list[str | None] = [None] * len(partitions)
        for segment in dirs:
            part, _, raw = segment.partition("=")
            values[int(part[len(PART):])] = unescape_partition(raw)
        final_dir = partition_dir(opts["partition_dir_expression"], partitions, values) if partitions else ""
        final_dir = posixpath.normpath(posixpath.join("/", final_dir)).lstrip("/")
        if final_dir.startswith(".."):
            raise config_error(f"the partition directory {final_dir} is outside the sink path")
        index = counters.get(final_dir, 0)
        counters[final_dir] = index + 1
        moves.append([key, s.key(final_dir, f"{base_name}_{index}{suffix}") if final_dir
                      else s.key(f"{base_name}_{index}{suffix}")])
        sizes.append(size)
    return moves, sizes


def _prepare_table(ctx: RunContext, vertex: Vertex, table: str, df: Any, several: bool,
                   dialect: Dialect) -> dict[str, Any]:
    config = table_config(vertex.config, table, data_columns(df))
    opts = sink_options(config)
    s = dialect.settings(config)
    dialect.reach(ctx.spark, s)
    bucket = dialect.open(s)
    if s.traits.verify_conditional_writes:
        bucket.verify_conditional_writes(s.key(COMMITS_DIR))  # type: ignore[attr-defined]  # S3 API stores
    keys = commits.slot_keys(s, str(ctx.run_id), str(ctx.pipeline_key), vertex.ref, table, str(ctx.save_mode_run_id))
    entry: dict[str, Any] = {"table": table, "run_id": str(ctx.run_id), "prefix": s.prefix, "keys": keys}
    if commits.read_record(bucket, s.prefix, keys["fence"]) is None:
        _save_mode_once(bucket, s, config, keys["savemode"], str(ctx.save_mode_run_id), vertex.ref)
    status, token = commits.take_token(bucket, keys)
    if status:
        log.info("%s %s: table %s of run %s already committed to %s; nothing to write", s.traits.plugin,
                 vertex.ref, table, ctx.run_id, bucket.uri(s.prefix))
        df.write.format("noop").mode("overwrite").save()  # the executor counts the rows in this action
        return {**entry, "status": status}
    if flag(config, "is_enable_transaction", True) is False:
        log.info("%s %s: is_enable_transaction = false; objects are still staged and committed", s.traits.plugin,
                 vertex.ref)
    staging = commits.staging_prefix(keys, token)
    entry.update(token=token, staging=staging, pending=commits.pending_key(keys, token))
    out, partitions = _writer(ctx, vertex, df, opts)
    try:
        dialect.stage(ctx.spark, out, bucket, s, staging + "data")
        base_name = file_base_name(opts, _transaction_id(ctx, vertex, table, several), datetime.now(),
                                   str(uuid.uuid4()))
        moves, sizes = staged_moves(list(bucket.objects(staging + "data/")), staging + "data/", s, opts,
                                    partitions, base_name)
    except BaseException:
        bucket.delete_prefix(staging)
        newest = commits.newest_token(bucket, keys)
        if newest > token:  # a newer attempt took over meanwhile
            raise Superseded(f"table {table} at {bucket.uri(s.prefix)}", token, newest, vertex.ref) from None
        raise
    return {**entry, "status": "staged", "moves": moves, "sizes": sizes}


def _writer(ctx: RunContext, vertex: Vertex, df: Any, opts: Mapping[str, Any]) -> tuple[Any, list[str]]:
    from .formats import writer

    return writer(ctx, vertex, df, opts)


def _bucket_of(vertex: Vertex, entry: Mapping[str, Any], dialect: Dialect) -> tuple[Store, S3Settings]:
    s = dialect.settings(table_config(vertex.config, entry["table"]))
    return dialect.open(s), s


def prepare(ctx: RunContext, vertex: Vertex, data: Mapping[str, Any], dialect: Dialect = S3) -> dict[str, Any]:
    """Save modes, then one Spark write per table into its staging prefix; what commit publishes.
    A plugin whose store may ignore conditional writes has them checked first
    (:meth:`.bucket.Bucket.verify_conditional_writes`)."""
    entries: list[dict[str, Any]] = []
    try:
        for table, df in data.items():
            entries.append(_prepare_table(ctx, vertex, table, df, len(data) > 1, dialect))
    except BaseException:
        abort(ctx, vertex, {"tables": entries}, dialect)
        raise
    return {"tables": entries}


def commit(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any], dialect: Dialect = S3) -> None:
    """Publish each staged table while the attempt's token is the newest. Fault points (restore
    trials): ``sink.move`` before each copy, ``sink.commit`` before the commit is marked done."""
    for entry in info.get("tables", ()):
        if entry.get("status") != "staged":
            continue
        bucket, s = _bucket_of(vertex, entry, dialect)
        size = commits.commit_table(bucket, s, entry, vertex.ref,
                                    on_move=lambda: ctx.fault_point("sink.move", vertex),
                                    on_commit=lambda: ctx.fault_point("sink.commit", vertex))
        log.info("%s %s: committed %d objects (%d bytes) of table %s to %s", dialect.plugin, vertex.ref,
                 len(entry["moves"]), size, entry["table"], bucket.uri(s.prefix))


def abort(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any] | None, dialect: Dialect = S3) -> None:
    """Discard each table's staging (a recorded commit is left for the next attempt to finish)."""
    first: BaseException | None = None
    for entry in (info or {}).get("tables", ()):
        if entry.get("status") != "staged":
            continue
        try:
            commits.abort_table(_bucket_of(vertex, entry, dialect)[0], entry)
        except Exception as e:  # best effort: the next attempt discards older tokens' staging
            log.warning("%s %s: could not discard the staging of table %s: %s", dialect.plugin, vertex.ref,
                        entry["table"], e)
            first = first or e
    if first is not None:
        log.warning("%s %s: abort left staging behind", dialect.plugin, vertex.ref)
