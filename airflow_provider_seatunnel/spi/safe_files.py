"""Writing into directories other users or earlier runs may have touched, without following symlinks.

The rule: a file the provider writes into an existing directory (logs, metrics, properties, commit
locks, journals, fence records) is opened with ``O_NOFOLLOW`` — a symlink planted at its name is
refused, never written through — and a file that must not exist yet is opened with ``O_EXCL``.
Atomic replacements write a fresh temporary file (``O_EXCL | O_NOFOLLOW``, a random name) and rename
it over the name: a rename replaces a planted symlink itself, never what it points to. New files
are private (0600) unless the caller says otherwise; directories made here are 0700.

``O_NOFOLLOW`` guards the last component of a path only: directories the provider creates are
made here (0700), and a directory found to be a symlink where a private one is wanted is refused.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import uuid
from collections.abc import Iterator, Mapping
from typing import IO, Any

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafePath(OSError):
    """A path the provider was to write is a symlink (or not a regular file): refused, nothing written."""


def _refuse(path: str, what: str) -> UnsafePath:
    return UnsafePath(errno.ELOOP, f"refusing to write {what} {path}: it is a symlink or not a regular "
                                   "file (a planted link would redirect the write); remove it and retry", path)


def open_fd(path: str, flags: int, mode: int = 0o600, what: str = "the file") -> int:
    """``os.open`` with ``O_NOFOLLOW`` (and close-on-exec); a symlink at ``path`` raises :class:`UnsafePath`.

    An existing file that is not a regular file (a FIFO, a device) is refused too, so a write never
    blocks on a planted FIFO."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), mode)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            raise _refuse(path, what) from e
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refuse(path, what)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def open_write(path: str, *, append: bool = False, exclusive: bool = False, mode: int = 0o600,
               text: bool = True, what: str = "the file") -> Iterator[IO[Any]]:
    """Open ``path`` for writing without following a symlink: truncate (default), append, or create
    only (``exclusive``: an existing file or link is an error)."""
    flags = os.O_WRONLY | os.O_CREAT
    flags |= os.O_EXCL if exclusive else (os.O_APPEND if append else os.O_TRUNC)
    fd = open_fd(path, flags, mode, what)
    kind = "a" if append else "w"
    fh: IO[Any] = os.fdopen(fd, kind, encoding="utf-8") if text else os.fdopen(fd, kind + "b")
    with fh:
        yield fh


def make_private_dir(path: str) -> None:
    """Create ``path`` (and its parents) with mode 0700; an existing symlink there is refused."""
    if os.path.islink(path):
        raise _refuse(path, "into the directory")
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.path.islink(path) or not os.path.isdir(path):
        raise _refuse(path, "into the directory")


def ensure_private_dir(path: str) -> None:
    """A directory only this user may enter: created 0700 when missing (as :func:`make_private_dir`),
    else accepted only when it is a real directory (not a symlink) owned by this user, and set to 0700.

    An existing directory someone else owns (planted in a shared parent) is refused, never written into."""
    make_private_dir(path)
    try:  # the checks and the chmod act on what was opened, so a swap of the name after the check is moot
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _refuse(path, "into the directory") from e
        raise
    try:
        info = os.fstat(fd)
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise UnsafePath(errno.EPERM, f"refusing to use the directory {path}: it belongs to another user "
                                          f"(uid {info.st_uid}); remove it or choose another directory", path)
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes | str, mode: int = 0o600, what: str = "the file") -> None:
    """Replace ``path`` by ``data`` in one rename: a fresh temporary file (``O_EXCL``, never a link)
    is written and synced beside it, then renamed over the name (a symlink there is replaced, not followed)."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex[:12]}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode, what)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_json_atomic(path: str, payload: Mapping[str, Any], mode: int = 0o600) -> None:
    """:func:`write_atomic` of ``payload`` as indented JSON."""
    write_atomic(path, json.dumps(payload, indent=1, default=str), mode, "the record")


def read_regular(path: str, limit: int | None = None, *, private: bool = False) -> bytes:
    """Read a regular file without following a symlink at ``path``; more than ``limit`` bytes is an error.

    ``private``: the file must also belong to this user and be closed to group and others (mode 0600 or
    narrower), as a secret such as a token must be; otherwise :class:`UnsafePath`, nothing read."""
    fd = open_fd(path, os.O_RDONLY, 0, "(read) the file")
    with os.fdopen(fd, "rb") as fh:
        if private:
            info = os.fstat(fh.fileno())
            if (hasattr(os, "getuid") and info.st_uid != os.getuid()) or info.st_mode & 0o077:
                raise UnsafePath(errno.EPERM, f"refusing to read {path}: a private file must belong to this user "
                                              f"and be readable by it only (mode 0600; it has "
                                              f"{stat.S_IMODE(info.st_mode):04o}, uid {info.st_uid}); remove it "
                                              "and retry", path)
        data = fh.read(-1 if limit is None else limit + 1)
    if limit is not None and len(data) > limit:
        raise OSError(errno.EFBIG, f"{path} is larger than {limit} bytes", path)
    return data
