"""The LocalFile sink's commit: journal, renames, marker; settling earlier attempts; abort; retiring
the markers of a stream's earlier micro-batches.

* :func:`commit` is roll-forward: it first writes the commit journal (JSON, atomically)
  ``<path>/.seatunnel-commits/.pending/<key>.json`` naming every move (staged file → final file),
  then renames every file into place (creating partition directories; each rename is atomic, so
  no reader ever sees a partly written file), then records the commit by renaming the journal to
  the marker ``<path>/.seatunnel-commits/<run>/<pipeline>/<sink>/<table>.committed`` (one atomic
  step), then deletes the staging. The journal and the marker live with the target, not with the
  staging: a retry on another machine whose ``tmp_path`` staging is gone still finds them.
* :func:`settle` runs before an attempt writes anything: a marker means the (run, pipeline, sink,
  table) already committed; a journal without a marker is a commit that stopped half way (a killed
  driver): its remaining moves are finished idempotently (a move whose staged file is gone and
  whose final file exists is done) and the commit is recorded. Should that be impossible (the
  staged files are lost), the files the journal published are deleted and the data is written
  afresh. Staging without a journal (a write that never reached its commit) is discarded.
* :func:`abort` (a failure the driver survived) deletes the attempt's staging; if a commit had
  started (journal, no marker), the files it moved are moved back first, then the journal is
  removed. An abort that is itself killed leaves the journal: the retry rolls forward.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...spi import RunContext, Vertex
from .options import COMMITS_DIR, config_error, log


def write_json_atomic(path: str, payload: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _move(src: str, dst: str) -> None:
    """Publish ``src`` as ``dst`` atomically (an existing ``dst`` is replaced, as SeaTunnel does)."""
    _rename(src, dst)


def _rename(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.replace(src, dst)
    except OSError as e:
        if e.errno != 18:  # EXDEV: staging on another file system
            raise
        tmp = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.{uuid.uuid4().hex[:8]}.copying")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        os.remove(src)


def _can_roll_forward(moves: list[list[str]]) -> bool:
    """Every move is done (final file there, staged file gone) or can still be done (staged file there)."""
    return all(os.path.exists(src) or os.path.exists(dst) for src, dst in moves)


def _apply_moves(moves: list[list[str]]) -> int:
    """Finish the moves of a journal, skipping those already done; the number moved now."""
    moved = 0
    for src, dst in moves:
        if os.path.exists(src):
            _move(src, dst)
            moved += 1
        elif not os.path.exists(dst):
            raise config_error(f"staged file {src} is missing and {dst} was never published")
    return moved


def _drop_copy_leftovers(moves: list[list[str]]) -> None:
    """Delete the hidden ``.<name>.<hex>.copying`` files a copy killed half way left next to final files."""
    for _, dst in moves:
        folder, name = os.path.split(dst)
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            if entry.startswith(f".{name}.") and entry.endswith(".copying"):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, entry))


def _record_commit(journal: str, marker: str, **extra: Any) -> None:
    """Record a commit: the journal becomes the marker (one atomic rename; rewritten first with ``extra``)."""
    if extra:
        with open(journal, encoding="utf-8") as fh:
            write_json_atomic(journal, {**json.load(fh), **extra})
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    os.replace(journal, marker)
    drop_empty_dir(os.path.dirname(journal))


def drop_empty_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


def remove_tree(path: str, stop: str) -> None:
    """Delete ``path`` and its empty parents up to (and including, if empty) ``stop``."""
    shutil.rmtree(path, ignore_errors=True)
    parent = os.path.dirname(path)
    stop = os.path.normpath(stop)
    while parent.startswith(stop) and len(parent) >= len(stop):
        try:
            os.rmdir(parent)
        except OSError:
            break
        if os.path.normpath(parent) == stop:
            break
        parent = os.path.dirname(parent)


# ---------------------------------------------------------------------------------------------
# Settling earlier attempts
# ---------------------------------------------------------------------------------------------

def _drop_journal_leftovers(journal: str) -> None:
    """Delete the temporary files a journal write killed half way left."""
    folder, name = os.path.split(journal)
    if os.path.isdir(folder):
        for entry in os.listdir(folder):
            if entry.startswith(f".{name}.") and entry.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, entry))


def _finish_interrupted(vertex: Vertex, table: str, journal: str, marker: str) -> str | None:
    """Roll forward the commit a journal without marker describes: "recovered"; or, its staged files
    lost, take back what it published: None (the data is written again)."""
    with open(journal, encoding="utf-8") as fh:
        recorded = json.load(fh)
    moves = recorded.get("moves", [])
    _drop_copy_leftovers(moves)
    if _can_roll_forward(moves):
        moved = _apply_moves(moves)
        _record_commit(journal, marker, recovered=True)
        log.info("LocalFile %s: finished the interrupted commit of table %s (%d of %d files moved now)",
                 vertex.ref, table, moved, len(moves))
        return "recovered"
    # the staging is gone (tmp_path on a lost disk): take back what was published, write again
    published = [dst for _, dst in moves if os.path.exists(dst)]
    for dst in published:
        os.remove(dst)
    os.remove(journal)
    drop_empty_dir(os.path.dirname(journal))
    log.warning("LocalFile %s: the staged files of an interrupted commit of table %s are lost; removed the "
                "%d file(s) it had published, writing the data again", vertex.ref, table, len(published))
    return None


def settle(vertex: Vertex, table: str, slot: Mapping[str, str]) -> str | None:
    """Settle the earlier attempts of this (run, pipeline, sink, table) before writing: "committed"
    (a marker: nothing to do), "recovered" (a journal without marker: the interrupted commit is
    finished now), or None (write the data; staging of failed attempts is discarded)."""
    marker, journal = slot["marker"], slot["journal"]
    status = None
    _drop_journal_leftovers(journal)
    if os.path.exists(marker):
        status = "committed"
    elif os.path.isfile(journal):
        status = _finish_interrupted(vertex, table, journal, marker)
    if os.path.exists(slot["root"]):  # staging of failed attempts, or of a commit finished above
        remove_tree(slot["root"], slot["base"])
    drop_empty_dir(os.path.dirname(journal))
    return status


# ---------------------------------------------------------------------------------------------
# Commit, abort, retire
# ---------------------------------------------------------------------------------------------

def commit(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any]) -> None:
    """Publish the staged files: journal, renames, marker (the journal renamed), then drop the staging.

    Fault points (restore trials; nothing happens in production): ``sink.move`` before each rename,
    ``sink.commit`` between the last rename and the marker."""
    for entry in info.get("tables", ()):
        if entry.get("status") != "staged":
            continue
        record = {"run_id": ctx.run_id, "pipeline": ctx.pipeline_key, "sink": vertex.ref, "table": entry["table"],
                  "attempt": ctx.attempt, "transaction": entry.get("transaction"),
                  "files": [dst for _, dst in entry["moves"]], "at": datetime.now().isoformat(),
                  "moves": entry["moves"]}
        write_json_atomic(entry["journal"], record)
        for src, dst in entry["moves"]:
            ctx.fault_point("sink.move", vertex)
            _move(src, dst)
        ctx.fault_point("sink.commit", vertex)
        _record_commit(entry["journal"], entry["marker"])
        remove_tree(entry["staging"], entry["base"])
        log.info("LocalFile %s: committed %d files of table %s to %s", vertex.ref, len(entry["moves"]),
                 entry["table"], entry["target"])


def abort(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any] | None) -> None:
    """Discard the attempt's staging; a commit that had started (journal, no marker) is rolled back first."""
    for entry in (info or {}).get("tables", ()):
        if entry.get("status") != "staged":
            continue
        journal = entry.get("journal")
        if journal and os.path.isfile(journal) and not os.path.exists(entry["marker"]):
            for src, dst in entry["moves"]:
                if not os.path.exists(src) and os.path.exists(dst):
                    _rename(dst, src)
            os.remove(journal)
            drop_empty_dir(os.path.dirname(journal))
        remove_tree(entry["staging"], entry["base"])


def _drop_marker(old: str, commits: str) -> None:
    """Delete a commit marker and the directories it leaves empty (up to the commit directory)."""
    os.remove(old)
    parent = os.path.dirname(old)
    while os.path.normpath(parent).startswith(commits + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = os.path.dirname(parent)


def retire(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any] | None) -> None:
    """STREAMING: micro-batch ``ctx.batch_id`` of stream ``ctx.stream_id`` committed (``info``: its ``prepare``
    result); drop the commit markers of the stream's earlier micro-batches, which Spark will never replay."""
    batch_id, stream = getattr(ctx, "batch_id", None), getattr(ctx, "stream_id", "")
    if batch_id is None or not stream:
        return
    earlier = re.compile(re.escape(stream) + r"_batch-(\d+)-[0-9a-f]{6}")  # safe() of "<stream>:batch-<n>"
    for entry in (info or {}).get("tables", ()):
        marker = entry.get("marker")
        if not marker:
            continue
        commits = os.path.normpath(os.path.join(entry["target"], COMMITS_DIR))
        run_dir = os.path.relpath(marker, commits).split(os.sep, 1)
        if len(run_dir) != 2 or not os.path.isdir(commits):
            continue
        for name in os.listdir(commits):
            m = earlier.fullmatch(name)
            if m is None or int(m.group(1)) >= batch_id:
                continue
            old = os.path.join(commits, name, run_dir[1])
            if os.path.exists(old):
                _drop_marker(old, commits)
