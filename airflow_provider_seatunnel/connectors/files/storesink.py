"""The sink of the file stores on S3File's code, as the engine's storage verbs (``runtime/twophase.py``
runs the two phases): :class:`StoreCommitLog` (save modes once per run, then the slot's fence hands
out tokens) and :class:`StoreSinkVerbs`: ``stage`` (each table written by Spark, through ``s3a://`` or
the store's own path, into a staging prefix named by the attempt's token), ``publish`` (the fenced
commit of :mod:`.storecommits`, rolled forward object by object) and ``discard``. They run with the
plugin's :class:`.s3options.Dialect`: how its blocks read as S3 settings; everything else is shared.

The files are LocalFile's (:func:`..files.sinkoptions.sink_options`, :func:`..files.writing.writer`):
one object per non-empty partition (and partition directory), named ``<file_name_expression>_<part>``
plus the suffixes, ``<part>`` counting from 0 per final directory.
"""

from __future__ import annotations

import posixpath
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from ...spi import SINK, RunContext, Vertex
from ...spi.fencing import Superseded
from ...spi.rows import data_columns
from ...spi.twophase import CommitId, Outcome, Published, Staged
from . import storecommits as commits
from .bucket import Conflict
from .options import (
    CODECS,
    COMMITS_DIR,
    FORMAT_SUFFIX,
    PART,
    STAGING_DIR,
    safe,
)
from .optionspec import FILE_SPEC
from .placeholders import (
    TABLE_PLACEHOLDER,
    file_base_name,
    partition_dir,
    sink_table_config,
    table_config,
    unescape_partition,
)
from .s3options import S3, Dialect, S3Settings, config_error, log
from .sinkoptions import DROP_AT_COMMIT, drops_at_commit, save_modes, sink_options
from .store import Store

# ---------------------------------------------------------------------------------------------
# Save modes: the object catalog
# ---------------------------------------------------------------------------------------------


def handle_save_mode(bucket: Store, s: S3Settings, config: Mapping[str, Any]) -> list[str]:
    """Apply ``schema_save_mode`` then ``data_save_mode`` to the prefix. An object store has no
    directories: the table exists, and has data, when an object (not the sink's bookkeeping) lies
    under the prefix; creating it is nothing. Dropping (``RECREATE_SCHEMA`` of an existing table,
    ``DROP_DATA``) is reported as ``"drop at commit: ..."``: the first commit of the run deletes the
    earlier objects in the step that publishes the new data."""
    plugin = s.traits.plugin
    schema_mode, data_mode = save_modes(config, lambda message: config_error(message, plugin))
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
    path = FILE_SPEC.run_time(vertex.config, SINK)["path"]
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


class StoreCommitLog:
    """The fence objects of each table's slot (:mod:`.storecommits`) as the engine's commit log.
    Taking a token first checks the store's conditional writes (plugins whose store may ignore them),
    runs the save modes on the slot's first attempt, and settles the slot: a commit a killed attempt
    recorded is rolled forward, and the table then counts as committed (no token, nothing written)."""

    def __init__(self, ctx: RunContext, vertex: Vertex, dialect: Dialect) -> None:
        self.ctx, self.vertex, self.dialect = ctx, vertex, dialect

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        bucket, s, keys = slot_of(self.ctx, self.vertex, commit, self.dialect)
        if s.traits.verify_conditional_writes:
            bucket.verify_conditional_writes(s.key(COMMITS_DIR))  # type: ignore[attr-defined]  # S3 API stores
        if commits.read_record(bucket, s.prefix, keys["fence"]) is None:
            _save_mode_once(bucket, s, sink_table_config(self.vertex, commit.table), keys["savemode"],
                            str(self.ctx.save_mode_run_id), self.vertex.ref)
        status, token = commits.take_token(bucket, keys)  # "recovered": a killed attempt's commit rolled forward
        if status:
            log.info("%s %s: table %s of run %s already committed to %s; nothing to write", s.traits.plugin,
                     self.vertex.ref, commit.table, commit.run_id, bucket.uri(s.prefix))
        return token, status is not None

    def newest_token(self, commit: CommitId) -> int:
        bucket, _, keys = slot_of(self.ctx, self.vertex, commit, self.dialect)
        return commits.newest_token(bucket, keys)


def slot_of(ctx: RunContext, vertex: Vertex, commit: CommitId, dialect: Dialect) -> tuple[Store, S3Settings,
                                                                                          dict[str, str]]:
    """The store of the table ``commit`` writes, its settings, and the keys of its slot there."""
    s = dialect.settings(sink_table_config(vertex, commit.table))
    keys = commits.slot_keys(s, str(commit.run_id), str(commit.pipeline), commit.sink, commit.table,
                             str(ctx.save_mode_run_id))
    return dialect.open(s), s, keys


def _writer(ctx: RunContext, vertex: Vertex, df: Any, opts: Mapping[str, Any]) -> tuple[Any, list[str]]:
    from .writing import writer

    return writer(ctx, vertex, df, opts)


def write_settings(spark: Any, opts: Mapping[str, Any]) -> Any:
    from .writing import write_settings as settings

    return settings(spark, opts)


class StoreSinkVerbs:
    """The sink of a plugin on S3File's code as the engine's storage verbs, run with the plugin's
    ``dialect``; its publish copies object by object, firing ``sink.move`` itself."""

    dialect: ClassVar[Dialect]
    moves_in_steps: ClassVar[bool] = True
    stages_among_tables: ClassVar[bool] = True

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> StoreCommitLog:
        return StoreCommitLog(ctx, vertex, self.dialect)

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any,
              tables: tuple[str, ...] = ()) -> Staged:
        """One Spark write of the table's rows into the staging prefix of ``token``; the staged objects
        (with their sizes) are the parts, their (staged, final) keys the ``moves`` of the detail."""
        table = commit.table
        config = sink_table_config(vertex, table, data_columns(df))
        opts = sink_options(config)
        bucket, s, keys = slot_of(ctx, vertex, commit, self.dialect)
        self.dialect.reach(ctx.spark, s)
        if not opts["transactional"]:
            log.info("%s %s: is_enable_transaction = false; objects are still staged and committed", s.traits.plugin,
                     vertex.ref)
        staging = commits.staging_prefix(keys, token)
        out, partitions = _writer(ctx, vertex, df, opts)
        try:
            with write_settings(ctx.spark, opts):
                self.dialect.stage(ctx.spark, out, bucket, s, staging + "data")
            base_name = file_base_name(opts, _transaction_id(ctx, vertex, table, len(tables) > 1), datetime.now(),
                                       str(uuid.uuid4()))
            moves, sizes = staged_moves(list(bucket.objects(staging + "data/")), staging + "data/", s, opts,
                                        partitions, base_name)
        except BaseException:
            bucket.delete_prefix(staging)
            newest = commits.newest_token(bucket, keys)
            if newest > token:  # a newer attempt took over meanwhile
                raise Superseded(f"table {table} at {bucket.uri(s.prefix)}", token, newest, vertex.ref) from None
            raise
        parts = tuple((src, size) for (src, _), size in zip(moves, sizes, strict=True))
        return Staged(commit, token, f"table {table} at {bucket.uri(s.prefix)}", -1, parts, {"moves": moves})

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        """Record the commit in the slot's fence, then roll it forward (:func:`.storecommits.commit_table`).
        Fault points (restore trials): ``sink.move`` before each copy, ``sink.commit`` before the commit is
        marked done."""
        bucket, s, keys = slot_of(ctx, vertex, staged.commit, self.dialect)
        answer, size = commits.commit_table(bucket, s, staged, keys, vertex.ref,
                                            on_move=lambda: ctx.fault_point("sink.move", vertex),
                                            on_commit=lambda: ctx.fault_point("sink.commit", vertex))
        if answer.outcome is Outcome.PUBLISHED:
            log.info("%s %s: committed %d objects (%d bytes) of table %s to %s", self.dialect.plugin, vertex.ref,
                     len(staged.parts), size, staged.commit.table, bucket.uri(s.prefix))
        return answer

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        """Discard the attempt's staging (a recorded commit is left for the next attempt to finish)."""
        bucket, _, keys = slot_of(ctx, vertex, staged.commit, self.dialect)
        commits.abort_table(bucket, keys, staged.token, staged.commit.table)
