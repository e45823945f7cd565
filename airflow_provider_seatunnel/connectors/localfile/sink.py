"""The LocalFile sink as the engine's storage verbs (:class:`LocalSinkVerbs`): save modes, the
commit log, each table written into a hidden staging directory; :mod:`.commits` publishes it.

Taking a token (:class:`LocalCommitLog`) runs the save modes (:func:`handle_save_mode`, once per run,
sink and target: a marker keeps retries and split clones from running them again; the Airflow group's
``prepare`` task calls :func:`save_mode` first) and settles the target; ``stage`` runs one Spark
write per table into ``<path>/.seatunnel-staging/<run>/<pipeline>/<sink>/<table>/token-<n>/data``, or under
``<tmp_path>/seatunnel-staging/`` when ``tmp_path`` is set (staging on another file system is
published by a copy to a hidden temporary name, then an atomic rename). The staging directory is
hidden: Spark and the LocalFile source skip dot-directories.

The sink writes the partitions it is handed, one file per non-empty partition and partition
directory: the engine gives it its data at the parallelism the plan gives the sink. The staged
files get their final names, ``<file_name_expression>_<part>`` plus the suffixes (``.txt.gz``,
``.csv``, ``.snappy.parquet``...), ``<part>`` counting from 0 per directory and ``${transactionId}``
= ``T_<pipeline>_<run>_<sink>_<attempt>``: split clones of one sink (several pipelines writing one
path) never collide.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from ...spi import SINK, RunContext, Vertex
from ...spi.fencing import Superseded
from ...spi.rows import data_columns
from ...spi.twophase import CommitId, Prepared, Published, Staged
from ..files.documents import binary_moves
from ..files.fencing import newest_token
from ..files.options import (
    CODECS,
    COMMITS_DIR,
    FORMAT_SUFFIX,
    PART,
    PENDING_DIR,
    STAGING_DIR,
    TRASH_DIR,
    config_error,
    log,
    safe,
    target_path,
)
from ..files.optionspec import FILE_SPEC
from ..files.placeholders import (
    TABLE_PLACEHOLDER,
    file_base_name,
    partition_dir,
    sink_table_config,
    table_config,
    unescape_partition,
)
from ..files.records import read_record, write_record
from ..files.sinkoptions import DROP_AT_COMMIT, drops_at_commit, save_modes, sink_options
from ..files.writing import write_settings, writer
from .commits import discard, publish, remove_tree, retire, settle

# ---------------------------------------------------------------------------------------------
# Save modes: the file catalog
# ---------------------------------------------------------------------------------------------

def _schema_save_mode(mode: str, path: str) -> list[str]:
    exists = os.path.isdir(path)
    if mode == "RECREATE_SCHEMA":
        if exists:  # its content goes at commit time, with the new data
            return [f"{DROP_AT_COMMIT} {path}"]
        os.makedirs(path, exist_ok=True)
        return [f"created {path}"]
    if mode == "CREATE_SCHEMA_WHEN_NOT_EXIST" and not exists:
        os.makedirs(path, exist_ok=True)
        return [f"created {path}"]
    if mode == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise config_error(f"The sink table not exist: {path} (schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST)")
    return []


def _data_save_mode(mode: str, path: str) -> list[str]:
    exists = os.path.isdir(path)
    if mode == "DROP_DATA" and exists:  # at commit time, in the step that publishes the new data
        return [f"{DROP_AT_COMMIT} {path}"]
    if mode == "ERROR_WHEN_DATA_EXISTS" and exists and any(e.is_file() for e in os.scandir(path)):
        raise config_error(f"The target data source already has data: {path} "
                           "(data_save_mode = ERROR_WHEN_DATA_EXISTS)")
    if mode == "CUSTOM_PROCESSING":
        raise config_error("data_save_mode CUSTOM_PROCESSING is not supported by file sinks")
    return []


def handle_save_mode(vertex_config: Mapping[str, Any], table_key: str) -> list[str]:
    """Apply ``schema_save_mode`` then ``data_save_mode`` to the table's target directory.

    The file catalog: the table exists when ``path`` is a directory; create = mkdir; data exists
    when a file lies directly under ``path``. Dropping the table or its data (``RECREATE_SCHEMA``
    of an existing directory, ``DROP_DATA``) changes nothing now: it is reported as
    ``"drop at commit: <path>"`` and the first commit of the run sets the current content aside
    in the step that publishes the new data (the hidden bookkeeping stays). Returns what was done.
    Raises RuntimeConfigError for ERROR_WHEN_SCHEMA_NOT_EXIST / ERROR_WHEN_DATA_EXISTS.
    """
    config = table_config(vertex_config, table_key)
    path = target_path(config)
    schema_mode, data_mode = save_modes(config)
    if os.path.exists(path) and not os.path.isdir(path):
        raise config_error(f"the sink path {path} is a file, not a directory")
    done = _schema_save_mode(schema_mode, path)
    if drops_at_commit(done) and data_mode != "CUSTOM_PROCESSING":
        return done  # the content goes at commit: no data check
    return done + _data_save_mode(data_mode, path)


def _savemode_marker(target: str, run_id: str, sink_ref: str) -> str:
    """The marker saying this run already applied the sink's save modes to ``target``."""
    sink = safe(sink_ref.replace("[", "-").rstrip("]"))
    return os.path.join(target, COMMITS_DIR, safe(run_id), "savemode", f"{sink}.savemode")


def _save_mode_once(ctx: RunContext, vertex: Vertex, config: Mapping[str, Any], table: str,
                    slot: Mapping[str, str]) -> None:
    """Run the save modes unless this run already did for this sink and target (a retry, a clone)."""
    target = target_path(config)
    if read_record(target, slot["savemode"]) is not None:
        return
    done = handle_save_mode(config, table)
    write_record(target, slot["savemode"], {"run_id": ctx.run_id, "sink": vertex.ref, "table": table,
                                         "actions": done, "drop": drops_at_commit(done),
                                         "at": datetime.now().isoformat()})
    for action in done:
        log.info("LocalFile %s: save mode %s", vertex.ref, action)


def save_mode(run_id: str, vertex: Vertex) -> list[str] | None:
    """Apply the sink's save modes for ``run_id`` before its pipelines run (the Airflow group's
    ``prepare`` task), leaving the marker that stops the pipelines (and their retries) from
    applying them again. None when the target depends on the data's tables (placeholders in
    ``path``): each pipeline then applies them once, as it meets each table."""
    path = FILE_SPEC.run_time(vertex.config, SINK)["path"]
    if path is None or TABLE_PLACEHOLDER.search(str(path)):
        return None
    config = table_config(vertex.config, "")
    target = target_path(config)
    marker = _savemode_marker(target, run_id, vertex.ref)
    if read_record(target, marker) is not None:
        return []
    done = handle_save_mode(config, "")
    write_record(target, marker, {"run_id": run_id, "sink": vertex.ref, "table": "", "actions": done,
                               "drop": drops_at_commit(done), "at": datetime.now().isoformat()})
    return done


# ---------------------------------------------------------------------------------------------
# Staging
# ---------------------------------------------------------------------------------------------

def _slot(ctx: RunContext, vertex: Vertex, table: str, target: str, config: Mapping[str, Any]) -> dict[str, str]:
    """Where one (run, pipeline, sink, table) keeps its staging (a ``token-<n>`` directory per
    attempt under ``root``), its commit journal, marker and token file."""
    run, pipeline = safe(str(ctx.run_id)), safe(str(ctx.pipeline_key))
    sink, table_dir = safe(vertex.ref.replace("[", "-").rstrip("]")), safe(table)
    tmp_path = FILE_SPEC.run_time(config, SINK)["tmp_path"]
    if tmp_path:
        base = os.path.join(os.path.abspath(os.path.expanduser(str(tmp_path))), "seatunnel-staging")
        root = os.path.join(base, hashlib.sha1(target.encode()).hexdigest()[:12], run, pipeline, sink, table_dir)
    else:
        base = os.path.join(target, STAGING_DIR)
        root = os.path.join(base, run, pipeline, sink, table_dir)
    key = hashlib.sha1(f"{run}/{pipeline}/{sink}/{table_dir}".encode()).hexdigest()[:24]
    return {
        "base": base, "root": root, "key": key,
        "marker": os.path.join(target, COMMITS_DIR, run, pipeline, sink, f"{table_dir}.committed"),
        "journal": os.path.join(target, COMMITS_DIR, PENDING_DIR, key + ".json"),
        # a STREAMING micro-batch applies save modes once per stream, not per batch
        "savemode": _savemode_marker(target, str(ctx.save_mode_run_id), vertex.ref),
    }


def _drop_due(slot: Mapping[str, str], target: str, token: int) -> dict[str, str] | None:
    """Where the commit records and sets aside the drop the save modes left to it (None: no drop)."""
    record = read_record(target, slot["savemode"])
    if record is None or not record.get("drop"):
        return None
    return {"record": slot["savemode"][: -len(".savemode")] + ".dropped",
            "trash": os.path.join(target, COMMITS_DIR, TRASH_DIR, f"{slot['key']}-{token}")}


def _transaction_id(ctx: RunContext, vertex: Vertex, table: str, several_tables: bool) -> str:
    sink = re.sub(r"\D", "", vertex.ref) or safe(vertex.ref)
    middle = f"_{safe(table)}" if several_tables else ""
    return f"T_{safe(str(ctx.pipeline_key))}_{safe(str(ctx.run_id))}_{sink}{middle}_{int(ctx.attempt)}"


def _staged_files(data_dir: str, fmt: str) -> list[str]:
    """The data files Spark wrote under ``data_dir`` (no hidden or marker files, no empty text files)."""
    staged = []
    for dirpath, dirnames, filenames in os.walk(data_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            empty = os.path.getsize(full) == 0 and fmt in ("text", "csv", "json", "xml", "excel")
            if name.startswith((".", "_")) or empty:
                continue
            staged.append(full)
    return sorted(staged)


def _staged_moves(data_dir: str, target: str, opts: Mapping[str, Any], partitions: list[str],
                  base_name: str) -> list[list[str]]:
    """(staged file, final file) pairs: partition directories mapped through the expression,
    names ``<base>_<part>`` numbered from 0 per final directory, with the suffixes."""
    codec_suffix, format_suffix = CODECS[opts["format"]][opts["codec"]][1], FORMAT_SUFFIX[opts["format"]]
    # readers pick a text codec by the last extension: x.txt.gz (SeaTunnel: x.gz.txt, unreadable)
    line_formats = ("text", "csv", "json", "xml")
    suffix = format_suffix + codec_suffix if opts["format"] in line_formats else codec_suffix + format_suffix
    counters: dict[str, int] = {}
    moves = []
    root = os.path.normpath(target)
    for full in _staged_files(data_dir, opts["format"]):
        rel_dir = os.path.relpath(os.path.dirname(full), data_dir)
        values: list[str | None] = [None] * len(partitions)
        if rel_dir != ".":
            for segment in rel_dir.split(os.sep):
                key, _, raw = segment.partition("=")
                values[int(key[len(PART):])] = unescape_partition(raw)
        final_dir = partition_dir(opts["partition_dir_expression"], partitions, values) if partitions else ""
        final_dir = os.path.normpath(os.path.join(root, final_dir))
        if final_dir != root and not final_dir.startswith(root + os.sep):
            raise config_error(f"the partition directory {final_dir} is outside the sink path {root}")
        index = counters.get(final_dir, 0)
        counters[final_dir] = index + 1
        moves.append([full, os.path.join(final_dir, f"{base_name}_{index}{suffix}")])
    return moves


class LocalCommitLog:
    """The commit markers and token files of each table's slot under the target, as the engine's
    commit log. Taking a token runs the save modes first (unless the slot committed), then settles the
    target under its commit lock (:func:`.commits.settle`): a marker means committed (an interrupted
    commit finished now counts so too), otherwise the attempt's token."""

    def __init__(self, ctx: RunContext, vertex: Vertex) -> None:
        self.ctx, self.vertex = ctx, vertex

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        ctx, vertex = self.ctx, self.vertex
        config = sink_table_config(vertex, commit.table)
        target, slot = slot_of(ctx, vertex, commit)
        if not os.path.exists(slot["marker"]):
            _save_mode_once(ctx, vertex, config, commit.table, slot)
        status, token = settle(ctx, vertex, target, slot)
        if status == "committed":
            log.info("LocalFile %s: table %s of run %s already committed to %s; nothing to write",
                     vertex.ref, commit.table, ctx.run_id, target)
        elif status == "recovered":
            log.info("LocalFile %s: finished the interrupted commit of table %s of run %s", vertex.ref, commit.table,
                     ctx.run_id)
        return token, status is not None

    def newest_token(self, commit: CommitId) -> int:
        return newest_token(slot_of(self.ctx, self.vertex, commit)[1]["marker"])


def slot_of(ctx: RunContext, vertex: Vertex, commit: CommitId) -> tuple[str, dict[str, str]]:
    """The target directory of the table ``commit`` writes and its slot there."""
    config = sink_table_config(vertex, commit.table)
    target = target_path(config)
    return target, _slot(ctx, vertex, commit.table, target, config)


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any,
                tables: tuple[str, ...] = ()) -> Staged:
    """One Spark write of the table's rows (the action that also counts them) into the staging
    directory of ``token``; the staged files (with their sizes) are the parts, their (staged, final)
    paths the ``moves`` of the detail."""
    table = commit.table
    config = sink_table_config(vertex, table, data_columns(df))
    opts = sink_options(config)
    target, slot = slot_of(ctx, vertex, commit)
    if not opts["transactional"]:
        log.info("LocalFile %s: is_enable_transaction = false; files are still staged and committed", vertex.ref)
    staging = os.path.join(slot["root"], f"token-{token}")
    out, partitions = writer(ctx, vertex, df, opts)
    data_dir = os.path.join(staging, "data")
    try:
        with write_settings(ctx.spark, opts):
            out.save("file://" + data_dir)
        transaction = _transaction_id(ctx, vertex, table, len(tables) > 1)
        base_name = file_base_name(opts, transaction, datetime.now(), str(uuid.uuid4()))
        moves = (binary_moves(data_dir, target) if opts["format"] == "binary"
                 else _staged_moves(data_dir, target, opts, partitions, base_name))
        sizes = [os.path.getsize(src) for src, _ in moves]
    except BaseException:
        remove_tree(staging, slot["base"])
        newest = newest_token(slot["marker"])
        if newest > token:  # a newer attempt took over and discarded this attempt's staging mid-write
            raise Superseded(f"table {table} at {target}", token, newest, vertex.ref) from None
        raise
    parts = tuple((src, size) for (src, _), size in zip(moves, sizes, strict=True))
    return Staged(commit, token, f"table {table} at {target}", -1, parts,
                  {"moves": moves, "transaction": transaction, "drop": _drop_due(slot, target, token),
                   "staging": staging, "marker": slot["marker"], "journal": slot["journal"]})


class LocalSinkVerbs:
    """The LocalFile sink as the engine's storage verbs: tokens and markers (:class:`LocalCommitLog`),
    staging (:func:`stage_table`), the journaled publish under the commit lock, renaming file by file
    and firing ``sink.move`` itself (:func:`.commits.publish`), discard (a started commit rolled back
    first), and STREAMING's retirement of earlier micro-batches' markers (:func:`.commits.retire`)."""

    moves_in_steps: ClassVar[bool] = True
    stages_among_tables: ClassVar[bool] = True
    stage = staticmethod(stage_table)

    commit_log = staticmethod(LocalCommitLog)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        return publish(ctx, vertex, staged, *slot_of(ctx, vertex, staged.commit))

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        discard(vertex, staged.token, *slot_of(ctx, vertex, staged.commit))

    def retire(self, ctx: RunContext, vertex: Vertex, info: Prepared | None) -> None:
        """``info``: what the engine prepared for the micro-batch that committed."""
        retire(ctx, vertex, (slot_of(ctx, vertex, staged.commit) for staged in (info.tables if info else ())))
