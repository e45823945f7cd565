"""Commit journals and fence records are trusted only when sealed by this target and naming only it.

A two-phase sink acts on what it finds in its target's commit log after a crash: it rolls a journal
forward (moves, drops, deletes) or back. Anyone who can write into the target could plant such a
record, so every sink's restore path follows two rules:

* **Sealed.** A record is written as ``{"v": 1, "body": ..., "mac": ...}``: ``mac`` is
  HMAC-SHA256 over the canonical JSON of ``body`` with the target's journal key, bound to the
  record's own name (a sealed record copied to another name, or from another target, fails).
  :func:`unseal` checks it before anything in the record is read; a record that fails is refused
  with :class:`TamperedRecord` (deterministic: a retry meets the same record) and nothing in it is
  acted on.
* **Contained.** Every path or key a record names is checked to lie inside the sink's own target
  (:func:`local_path_inside`, :func:`key_inside`) before it is acted on; ``..``, absolute paths
  elsewhere and symlinked escapes are refused the same way.

The journal key of a local (POSIX) target is 32 random bytes in ``<commit dir>/.journal-key``,
mode 0600, created once with ``O_EXCL`` and published by a hard link (no reader sees half a key);
a key file that is a symlink, not this user's, or readable by others is refused
(:func:`local_key`). A store without file modes (object stores, remote file systems) derives its key
from a secret only the job holds (:func:`derived_key`): the ``[seatunnel] journal_key`` setting when
set (one value for every worker), else the sink's own secret credential.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import posixpath
import secrets as _random
import stat
from collections.abc import Mapping
from typing import Any

from .errors import PipelineError
from .safe_files import UnsafePath, make_private_dir, open_fd, read_regular

KEY_FILE = ".journal-key"
_KEY_BYTES = 32
_VERSION = 1


class TamperedRecord(PipelineError):
    """A commit journal or fence record failed its seal or names something outside its target: it is
    refused and nothing in it is acted on. Deterministic: a retry finds the same record."""

    deterministic = True
    kind = "tampered"


def canonical(body: Any) -> bytes:
    """The bytes a seal covers: JSON with sorted keys, no whitespace, non-ASCII escaped."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str).encode()


def _mac(key: bytes, name: str, body: Any) -> str:
    return hmac.new(key, name.encode("utf-8") + b"\0" + canonical(body), hashlib.sha256).hexdigest()


def seal(body: Mapping[str, Any], key: bytes, name: str) -> dict[str, Any]:
    """The sealed form of ``body``, to be stored under ``name`` (a path or key relative to the target)."""
    return {"v": _VERSION, "body": dict(body), "mac": _mac(key, name, dict(body))}


def unseal(record: Any, key: bytes, name: str, where: str) -> dict[str, Any]:
    """The body of a sealed record stored under ``name``; :class:`TamperedRecord` unless its seal holds.

    ``where`` names the record for the error (its full path or URL)."""
    if not isinstance(record, Mapping) or record.get("v") != _VERSION or not isinstance(record.get("body"), Mapping) \
            or not isinstance(record.get("mac"), str):
        raise TamperedRecord(f"refusing the commit record {where}: it is not a sealed record of this provider "
                             "(planted or from an older release); nothing in it was acted on. Inspect it, then "
                             "remove it to let the run go on")
    body = dict(record["body"])
    if not hmac.compare_digest(record["mac"], _mac(key, name, body)):
        raise TamperedRecord(f"refusing the commit record {where}: its seal does not match this target's journal "
                             "key (edited, copied from elsewhere or planted); nothing in it was acted on. Inspect "
                             "it, then remove it to let the run go on")
    return body


def loads(raw: bytes, where: str) -> Any:
    """Parse a record's JSON; unparsable bytes are a :class:`TamperedRecord` (a crash never leaves
    half a record: records are written by an atomic rename)."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise TamperedRecord(f"refusing the commit record {where}: it is not JSON ({e})") from e


def local_key(commit_dir: str) -> bytes:
    """The journal key of the local target whose commit log is ``commit_dir`` (made on first use)."""
    make_private_dir(commit_dir)
    path = os.path.join(commit_dir, KEY_FILE)
    with contextlib.suppress(FileNotFoundError):
        return _read_key(path)
    tmp = f"{path}.{_random.token_hex(8)}.new"
    fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, "the journal key")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_random.token_bytes(_KEY_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # the first writer wins; everyone reads the one published
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)
    return _read_key(path)


def _read_key(path: str) -> bytes:
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise TamperedRecord(f"refusing the journal key {path}: it must be a regular file of this user with mode "
                             "0600 (a planted or shared key would let others forge commit journals)")
    try:
        key = read_regular(path, _KEY_BYTES)
    except UnsafePath as e:
        raise TamperedRecord(str(e)) from e
    if len(key) != _KEY_BYTES:
        raise TamperedRecord(f"refusing the journal key {path}: it is not {_KEY_BYTES} bytes")
    return key


def derived_key(secret: str | bytes | None, target: str, what: str) -> bytes:
    """The journal key of a store without file modes: HMAC of ``target`` under the job's secret.

    ``secret`` is the ``[seatunnel] journal_key`` setting when set, else the sink's own secret
    credential; with neither, the store's records cannot be authenticated and the run refuses to
    act on them (:class:`TamperedRecord` naming ``what``)."""
    if not secret:
        raise TamperedRecord(f"{what}: no secret to authenticate its commit records with: set the [seatunnel] "
                             "journal_key setting (AIRFLOW__SEATUNNEL__JOURNAL_KEY), the same on every worker")
    raw = secret.encode("utf-8") if isinstance(secret, str) else secret
    return hmac.new(raw, b"seatunnel-journal\0" + target.encode("utf-8"), hashlib.sha256).digest()


def local_path_inside(root: str, path: str, where: str) -> str:
    """``path`` (absolute, or relative to ``root``) made absolute, if it lies inside ``root``.

    The check resolves symlinks of every existing parent: a link inside the target pointing out of
    it is an escape too. :class:`TamperedRecord` otherwise."""
    if not isinstance(path, str) or not path or "\0" in path:
        raise TamperedRecord(f"refusing the commit record {where}: it names an invalid path {path!r}")
    full = os.path.normpath(os.path.join(root, path))
    real_root = os.path.realpath(root)
    real = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
    if os.path.commonpath([real_root, real]) != real_root or real == real_root:
        raise TamperedRecord(f"refusing the commit record {where}: it names {path}, outside its target {root}; "
                             "nothing in it was acted on")
    return full


def key_inside(prefix: str, key: str, where: str) -> str:
    """An object-store ``key`` if it lies under ``prefix`` (a key prefix, ``""`` for a whole bucket)
    once normalised; :class:`TamperedRecord` otherwise (``..`` segments, another prefix)."""
    if not isinstance(key, str) or not key or "\0" in key:
        raise TamperedRecord(f"refusing the commit record {where}: it names an invalid key {key!r}")
    norm = posixpath.normpath("/" + key).lstrip("/")
    base = prefix.strip("/")
    if norm != key.lstrip("/") or (base and not norm.startswith(base + "/")):
        raise TamperedRecord(f"refusing the commit record {where}: it names {key}, outside its target "
                             f"{prefix or '(the bucket)'}; nothing in it was acted on")
    return key


def read_sealed(path: str, key: bytes, name: str, limit: int = 16 << 20) -> dict[str, Any]:
    """Read and unseal the local record at ``path`` (no symlink followed, at most ``limit`` bytes)."""
    try:
        raw = read_regular(path, limit)
    except UnsafePath as e:
        raise TamperedRecord(str(e)) from e
    except OSError as e:
        if e.errno == errno.EFBIG:
            raise TamperedRecord(f"refusing the commit record {path}: larger than {limit} bytes") from e
        raise
    return unseal(loads(raw, path), key, name, path)
