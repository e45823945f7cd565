"""The LocalFile sink's commit: journal, drops, renames, marker; settling earlier attempts; abort;
retiring the markers of a stream's earlier micro-batches. Everything here that reads or changes
the commit bookkeeping runs under the target's commit lock (:mod:`.fencing`).

* :func:`commit` is conditional and roll-forward. Under the lock it first settles what dead
  attempts left (below), then checks the attempt's token is still the newest (else
  :class:`~...spi.fencing.Superseded`: nothing is published) and that every staged file is there
  with the size it was staged with (else :class:`~...spi.fencing.StagingMismatch`). It then writes
  the commit journal (JSON, atomically) ``<path>/.seatunnel-commits/.pending/<key>.json`` naming
  every step: when ``DROP_DATA`` (or ``RECREATE_SCHEMA``) is due, the target's current entries
  are first renamed into a hidden trash directory; then every staged file is renamed into place
  (each rename atomic: no reader ever sees a partly written file); then the drop is recorded
  (once per run and sink), and the commit is recorded by renaming the journal to the marker
  ``<path>/.seatunnel-commits/<run>/<pipeline>/<sink>/<table>.committed`` (one atomic step);
  the trash and the staging are deleted last.
* :func:`settle` runs before an attempt writes: under the lock every journal without marker
  belongs to an attempt that is gone (a live one would hold the lock); its remaining steps are
  finished idempotently and its commit recorded, or, its staged files lost, what it published is
  taken back (the dropped entries restored). Then a marker means the (run, pipeline, sink, table)
  already committed; otherwise the attempt takes its token and discards the staging of older
  tokens (they can never commit).
* :func:`abort` (a failure the driver survived) deletes the attempt's own staging; if its commit
  had started (its journal, no marker), what it moved is moved back first. An abort that is itself
  killed leaves the journal: the next attempt rolls it forward.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ...spi import SINK, RunContext, Vertex
from ...spi.fencing import StagingMismatch
from ...spi.twophase import Outcome, Published, Staged
from ..files.fencing import DEFAULT_LOCK_TIMEOUT, allocate, commit_lock, fence_path, newest_token
from ..files.options import BOOKKEEPING, COMMITS_DIR, PENDING_DIR, config_error, log
from ..files.optionspec import FILE_SPEC
from ..files.records import check_journal, read_record, record_name, write_record


def lock_timeout(vertex: Vertex) -> float:
    """The sink's ``commit_lock_timeout`` in seconds (checked when the config is compiled)."""
    o = FILE_SPEC.run_time(vertex.config, SINK)
    return float(o["commit_lock_timeout"]) if o.given("commit_lock_timeout") else DEFAULT_LOCK_TIMEOUT


def is_committed(target: str, marker: str, journal: str) -> bool:
    """Whether the commit marker is there; a marker this target did not seal (the journal it was
    renamed from) is refused (:class:`~...spi.journals.TamperedRecord`)."""
    return read_record(target, marker, record_name(target, journal)) is not None


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


def _record_commit(target: str, journal: str, record: Mapping[str, Any], **extra: Any) -> None:
    """Record a commit: the drop first (when the journal made one), then the journal becomes the
    marker (one atomic rename; rewritten first with ``extra``)."""
    if record.get("dropped_record"):
        write_record(target, record["dropped_record"], {"run_id": record.get("run_id"), "sink": record.get("sink"),
                                                        "entries": len(record.get("drops", ())),
                                                        "at": datetime.now().isoformat()})
    if extra:
        write_record(target, journal, {**record, **extra})
    marker = record["marker"]
    os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
    os.replace(journal, marker)
    drop_empty_dir(os.path.dirname(journal))
    if record.get("trash"):
        shutil.rmtree(record["trash"], ignore_errors=True)


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
# Drops: the target's entries set aside at commit time (DROP_DATA, RECREATE_SCHEMA)
# ---------------------------------------------------------------------------------------------

def planned_drops(target: str, trash: str) -> list[list[str]]:
    """(entry, place in the trash) for every entry of ``target`` but the sink's bookkeeping."""
    if not os.path.isdir(target):
        return []
    return [[os.path.join(target, name), os.path.join(trash, name)]
            for name in sorted(os.listdir(target)) if name not in BOOKKEEPING]


def _apply_drops(drops: list[list[str]]) -> None:
    for entry, trashed in drops:
        if os.path.lexists(entry):
            os.makedirs(os.path.dirname(trashed), exist_ok=True)
            os.replace(entry, trashed)


def _restore_drops(drops: list[list[str]]) -> None:
    for entry, trashed in drops:
        if os.path.lexists(trashed) and not os.path.lexists(entry):
            os.replace(trashed, entry)


# ---------------------------------------------------------------------------------------------
# Settling what earlier attempts left
# ---------------------------------------------------------------------------------------------

def _drop_journal_leftovers(folder: str) -> None:
    """Delete the temporary files journal writes killed half way left."""
    if os.path.isdir(folder):
        for entry in os.listdir(folder):
            if entry.startswith(".") and entry.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, entry))


def _finish_interrupted(target: str, journal: str, bases: tuple[str, ...]) -> str | None:
    """Roll forward the commit a journal without marker describes (its owner is gone): its marker
    path; or, its staged files lost, take back what it published and restore what it dropped: None.

    The journal must be sealed by the target and name only the sink's own paths
    (:func:`.records.check_journal`); otherwise :class:`~...spi.journals.TamperedRecord` and nothing
    in it is acted on."""
    record = read_record(target, journal)
    if record is None:
        return None
    check_journal(target, record, journal, bases)
    if "marker" not in record:  # written by a version before fencing
        log.warning("LocalFile: the interrupted commit %s was written by an older version and is left as it is: "
                    "check the files it names, then delete it", journal)
        return None
    moves, drops = record.get("moves", []), record.get("drops", [])
    _drop_copy_leftovers(moves)
    label = f"{record.get('sink')} table {record.get('table')}"
    if _can_roll_forward(moves):
        _apply_drops(drops)
        moved = _apply_moves(moves)
        _record_commit(target, journal, record, recovered=True)
        if record.get("staging") and record.get("base"):
            remove_tree(record["staging"], record["base"])
        log.info("LocalFile %s: finished the interrupted commit of run %s (%d of %d files moved now)", label,
                 record.get("run_id"), moved, len(moves))
        return str(record["marker"])
    published = [dst for _, dst in moves if os.path.exists(dst)]
    for dst in published:
        os.remove(dst)
    _restore_drops(drops)
    os.remove(journal)
    if record.get("trash"):
        shutil.rmtree(record["trash"], ignore_errors=True)
    log.warning("LocalFile %s: the staged files of an interrupted commit of run %s are lost; removed the %d "
                "file(s) it had published, the data is written again", label, record.get("run_id"), len(published))
    return None


def settle_target(target: str, staging_bases: tuple[str, ...] = ()) -> set[str]:
    """Under the commit lock: finish (or take back) every commit a gone attempt left half way at
    ``target``; the markers recorded now. ``staging_bases``: the sink's ``tmp_path`` staging base,
    when it has one (a journal's staging must lie under the target's or that one)."""
    pending = os.path.join(target, COMMITS_DIR, PENDING_DIR)
    _drop_journal_leftovers(pending)
    recovered: set[str] = set()
    if os.path.isdir(pending):
        for name in sorted(os.listdir(pending)):
            if name.endswith(".json") and not name.startswith("."):
                marker = _finish_interrupted(target, os.path.join(pending, name), staging_bases)
                if marker:
                    recovered.add(marker)
    drop_empty_dir(pending)
    return recovered


def _discard_older_staging(root: str, base: str, token: int) -> None:
    """Delete the staging of tokens older than ``token`` (fenced out: they can never commit)."""
    if not os.path.isdir(root):
        return
    for name in os.listdir(root):
        number = name[len("token-"):] if name.startswith("token-") else ""
        if not number.isdigit() or int(number) < token:  # an older token, or an older layout
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    if not os.listdir(root):
        remove_tree(root, base)


def settle(ctx: RunContext, vertex: Vertex, target: str, slot: Mapping[str, str]) -> tuple[str | None, int]:
    """Before writing, under the commit lock: settle the target (:func:`settle_target`), then
    ("committed" or "recovered", 0) when the (run, pipeline, sink, table) has a marker, else
    (None, the attempt's new token)."""
    with commit_lock(target, vertex.ref, lock_timeout(vertex)):
        recovered = settle_target(target, (slot["base"],))
        if is_committed(target, slot["marker"], slot["journal"]):
            if os.path.exists(slot["root"]):
                remove_tree(slot["root"], slot["base"])
            return ("recovered" if slot["marker"] in recovered else "committed"), 0
        token = allocate(slot["marker"], int(ctx.attempt))
        _discard_older_staging(slot["root"], slot["base"], token)
    return None, token


# ---------------------------------------------------------------------------------------------
# Commit, abort, retire
# ---------------------------------------------------------------------------------------------

def _check_staged(vertex: Vertex, staged: Staged) -> None:
    """Every staged file is there with the size it was staged with."""
    for src, size in staged.parts:
        actual = os.path.getsize(src) if os.path.exists(src) else None
        if actual != size:
            raise StagingMismatch(f"the staged file {src} of table {staged.commit.table} is "
                                  + ("gone" if actual is None else f"{actual} bytes, staged as {size}")
                                  + ": nothing was committed", vertex.ref)


def _journal_record(ctx: RunContext, vertex: Vertex, staged: Staged, target: str,
                    slot: Mapping[str, str]) -> dict[str, Any]:
    drop = staged.detail.get("drop") or {}  # {"record": path, "trash": dir} when this commit drops the target's data
    due = bool(drop) and read_record(target, drop["record"]) is None
    moves = [list(m) for m in staged.detail["moves"]]
    return {"run_id": ctx.run_id, "pipeline": ctx.pipeline_key, "sink": vertex.ref, "table": staged.commit.table,
            "attempt": ctx.attempt, "token": staged.token, "transaction": staged.detail.get("transaction"),
            "files": [dst for _, dst in moves], "bytes": sum(n for _, n in staged.parts),
            "at": datetime.now().isoformat(), "moves": moves, "marker": slot["marker"],
            "staging": staging_dir(slot, staged.token), "base": slot["base"],
            "drops": planned_drops(target, drop["trash"]) if due else [],
            "dropped_record": drop["record"] if due else None, "trash": drop["trash"] if due else None}


def staging_dir(slot: Mapping[str, str], token: int) -> str:
    """The staging directory of the attempt holding ``token``."""
    return os.path.join(slot["root"], f"token-{token}")


def publish(ctx: RunContext, vertex: Vertex, staged: Staged, target: str, slot: Mapping[str, str]) -> Published:
    """Publish the staged files if the attempt's token is still the newest (else SUPERSEDED: nothing
    is published). Fault points (restore trials; nothing happens in production): ``sink.move`` before
    each rename, ``sink.commit`` between the last rename and the marker."""
    with commit_lock(target, vertex.ref, lock_timeout(vertex)):
        settle_target(target, (slot["base"],))
        newest = newest_token(slot["marker"])
        if newest != staged.token or is_committed(target, slot["marker"], slot["journal"]):
            return Published(Outcome.SUPERSEDED, newest=newest)
        _check_staged(vertex, staged)
        record = _journal_record(ctx, vertex, staged, target, slot)
        write_record(target, slot["journal"], record)
        _apply_drops(record["drops"])
        for src, dst in record["moves"]:
            ctx.fault_point("sink.move", vertex)
            _move(src, dst)
        ctx.fault_point("sink.commit", vertex)
        _record_commit(target, slot["journal"], record)
    remove_tree(record["staging"], slot["base"])
    if record["drops"]:
        log.info("LocalFile %s: dropped the %d earlier entries of %s (data_save_mode)", vertex.ref,
                 len(record["drops"]), target)
    log.info("LocalFile %s: committed %d files (%d bytes) of table %s to %s", vertex.ref, len(record["moves"]),
             record["bytes"], staged.commit.table, target)
    return Published(Outcome.PUBLISHED, rows=-1)


def _roll_back(target: str, slot: Mapping[str, str], token: int) -> None:
    """Under the lock: undo this attempt's own unrecorded commit (its journal, no marker)."""
    journal = slot["journal"]
    if not os.path.isfile(journal) or os.path.exists(slot["marker"]):
        return
    record = read_record(target, journal)
    if record is None:
        return
    check_journal(target, record, journal, (slot["base"],))
    if record.get("token") != token:
        return  # another attempt's journal: the attempt that settles the target finishes it
    for src, dst in record.get("moves", ()):
        if not os.path.exists(src) and os.path.exists(dst):
            _rename(dst, src)
    _restore_drops(record.get("drops", []))
    os.remove(journal)
    drop_empty_dir(os.path.dirname(journal))
    if record.get("trash"):
        shutil.rmtree(record["trash"], ignore_errors=True)


def discard(vertex: Vertex, token: int, target: str, slot: Mapping[str, str]) -> None:
    """Discard the attempt's staging; its commit, if it had started and is not recorded, is rolled back first."""
    if os.path.isfile(slot["journal"]):
        with commit_lock(target, vertex.ref, lock_timeout(vertex)):
            _roll_back(target, slot, token)
    remove_tree(staging_dir(slot, token), slot["base"])


def _drop_marker(old: str, commits: str) -> None:
    """Delete a commit marker, its token file and the directories they leave empty (up to the commit directory)."""
    for path in (old, fence_path(old)):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    parent = os.path.dirname(old)
    while os.path.normpath(parent).startswith(commits + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = os.path.dirname(parent)


def retire(ctx: RunContext, vertex: Vertex, slots: Iterable[tuple[str, Mapping[str, str]]]) -> None:
    """STREAMING: micro-batch ``ctx.batch_id`` of stream ``ctx.stream_id`` committed (``slots``: the
    target and slot of each of its tables); drop the commit markers of the stream's earlier micro-batches,
    which Spark will never replay."""
    batch_id, stream = getattr(ctx, "batch_id", None), getattr(ctx, "stream_id", "")
    if batch_id is None or not stream:
        return
    earlier = re.compile(re.escape(stream) + r"_batch-(\d+)-[0-9a-f]{6}")  # safe() of "<stream>:batch-<n>"
    for target, slot in slots:
        commits = os.path.normpath(os.path.join(target, COMMITS_DIR))
        run_dir = os.path.relpath(slot["marker"], commits).split(os.sep, 1)
        if len(run_dir) != 2 or not os.path.isdir(commits):
            continue
        for name in os.listdir(commits):
            m = earlier.fullmatch(name)
            if m is None or int(m.group(1)) >= batch_id:
                continue
            old = os.path.join(commits, name, run_dir[1])
            if os.path.exists(old):
                _drop_marker(old, commits)
