"""The LocalFile sink's records on disk, sealed and contained (:mod:`...spi.journals`).

Every record the sink writes under ``<path>/.seatunnel-commits`` — commit journals, commit markers,
attempt tokens (``.fence``), save-mode markers and drop records — is sealed with the target's
journal key (``<path>/.seatunnel-commits/.journal-key``, 0600) and bound to its path relative to
the target; the commit directory is 0700. A record is read back only through :func:`read_record`,
which refuses (:class:`~...spi.journals.TamperedRecord`) anything not sealed by this target under
this name: a planted record, an edited one, one copied from another target or another name.

A journal is also checked before any of its steps runs (:func:`check_journal`): the files it
publishes, the entries it drops and the trash they go to, its marker and drop record lie inside
the target; its staging lies inside the sink's own staging root (``<path>/.seatunnel-staging``, or
``<tmp_path>/seatunnel-staging/<target hash>`` when the sink sets ``tmp_path``), and every staged
file inside that staging. A journal that fails is refused whole: nothing in it is acted on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ...spi import journals
from ...spi.safe_files import make_private_dir, write_json_atomic
from .options import COMMITS_DIR, STAGING_DIR

TamperedRecord = journals.TamperedRecord


def commit_dir(target: str) -> str:
    return os.path.join(target, COMMITS_DIR)


def target_key(target: str) -> bytes:
    """The target's journal key (made, 0600, with a 0700 commit directory, on first use)."""
    return journals.local_key(commit_dir(target))


def record_name(target: str, path: str) -> str:
    """The name a record is sealed under: its path relative to the target."""
    return os.path.relpath(path, target)


def _make_dirs(target: str, folder: str) -> None:
    """``folder`` and its parents up to the commit directory, each 0700 (no symlink followed)."""
    base = commit_dir(target)
    make_private_dir(base)
    rel = os.path.relpath(folder, base)
    if rel == "." or rel.startswith(".."):
        return
    current = base
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        make_private_dir(current)


def write_record(target: str, path: str, body: Mapping[str, Any]) -> None:
    """Write ``body`` at ``path`` (under the target's commit directory) sealed, atomically, 0600."""
    journals.local_path_inside(commit_dir(target), path, path)
    _make_dirs(target, os.path.dirname(path))
    write_json_atomic(path, journals.seal(body, target_key(target), record_name(target, path)))


def read_record(target: str, path: str, name: str | None = None) -> dict[str, Any] | None:
    """The body of the sealed record at ``path`` (None when there is none); ``name`` is the name it
    was sealed under when it was renamed since (a journal recorded as its marker)."""
    if not os.path.lexists(path):
        return None
    try:
        return journals.read_sealed(path, target_key(target), name or record_name(target, path))
    except FileNotFoundError:
        return None


def existing_key(target: str) -> bytes | None:
    """The target's journal key when it exists and is readable by this user (a reader never makes one)."""
    path = os.path.join(commit_dir(target), journals.KEY_FILE)
    if not os.path.lexists(path):
        return None
    try:
        return journals.local_key(commit_dir(target))
    except (OSError, TamperedRecord):
        return None


def staging_roots(target: str, bases: Iterable[str] = ()) -> list[str]:
    """Where the target's staging may lie: under the target, and under each configured ``tmp_path``
    staging base, in the target's own directory there."""
    digest = hashlib.sha1(target.encode()).hexdigest()[:12]
    roots = [os.path.join(target, STAGING_DIR)]
    for base in bases:
        if os.path.normpath(base) != os.path.normpath(roots[0]):
            roots.append(os.path.join(base, digest))
    return roots


def _inside_any(roots: list[str], path: Any, where: str) -> str:
    last: TamperedRecord | None = None
    for root in roots:
        try:
            return journals.local_path_inside(root, path, where)
        except TamperedRecord as e:
            last = e
    assert last is not None
    raise last


def _pairs(value: Any, where: str, what: str) -> list[list[Any]]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 for p in value):
        raise TamperedRecord(f"refusing the commit record {where}: its {what} are not a list of pairs")
    return value


def _not_bookkeeping(target: str, path: str, where: str) -> None:
    if os.path.relpath(path, target).split(os.sep)[0] in (COMMITS_DIR, STAGING_DIR):
        raise TamperedRecord(f"refusing the commit record {where}: it names the sink's bookkeeping ({path}); "
                             "nothing in it was acted on")


def check_journal(target: str, record: Mapping[str, Any], where: str, bases: Iterable[str] = ()) -> None:
    """Every path ``record`` names lies where the sink's own files lie; :class:`TamperedRecord` otherwise."""
    commits = commit_dir(target)
    roots = staging_roots(target, bases)
    staging = record.get("staging")
    if staging is not None:
        _inside_any(roots, staging, where)
    base = record.get("base")
    if base is not None and not any(os.path.normpath(base) == os.path.normpath(os.path.dirname(r))
                                    or os.path.normpath(base) == os.path.normpath(r) for r in roots):
        raise TamperedRecord(f"refusing the commit record {where}: it names the staging base {base}, not this "
                             f"sink's; nothing in it was acted on")
    for src, dst in _pairs(record.get("moves", []), where, "moves"):
        _inside_any([staging] if staging else roots, src, where)
        _not_bookkeeping(target, journals.local_path_inside(target, dst, where), where)
    trash = record.get("trash")
    if trash is not None:
        journals.local_path_inside(commits, trash, where)
    for entry, trashed in _pairs(record.get("drops", []), where, "drops"):
        _not_bookkeeping(target, journals.local_path_inside(target, entry, where), where)
        journals.local_path_inside(trash or commits, trashed, where)
    for key in ("marker", "dropped_record"):
        if record.get(key) is not None:
            journals.local_path_inside(commits, record[key], where)
