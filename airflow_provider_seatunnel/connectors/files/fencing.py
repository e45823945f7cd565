"""The LocalFile sink's fencing: the target's commit lock and the attempt tokens.

* The **commit lock** is an exclusive ``flock`` on ``<path>/.seatunnel-commits/.lock``, held while
  an attempt settles earlier attempts and takes its token, and for the whole of a commit (journal,
  drops, renames, marker) or of a roll-back. The kernel releases it when its holder dies, so a
  journal found by the lock's holder belongs to an attempt that is gone: rolling it forward is
  safe. A holder that is paused (SIGSTOP) keeps it; the others wait, logging whom they wait for,
  at most the sink's ``commit_lock_timeout`` (:class:`CommitLockTimeout`, transient). The lock file
  is 0600 in the 0700 commit directory and never a followed symlink.
  ``flock`` works on local file systems and on NFSv4 (Linux maps it to a byte-range lock).
* The **attempt token** of a (run, pipeline, sink, table) is kept in the ``.fence`` file next to
  its commit marker; :func:`allocate` (under the lock) writes the next number. The commit, under
  the lock, proceeds only while the file still holds the attempt's token. The file is sealed
  (:mod:`.records`): one the target did not seal is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ...spi.errors import PipelineError
from ...spi.safe_files import ensure_private_dir, open_fd
from .options import COMMITS_DIR, log
from .records import read_record, write_record

LOCK_FILE = ".lock"
#: how often a waiting attempt says whom it waits for
_WAIT_LOG_SECONDS = 30.0
#: how long an attempt waits for the commit lock by default (the sink's ``commit_lock_timeout``)
DEFAULT_LOCK_TIMEOUT = 600.0


class CommitLockTimeout(PipelineError):
    """The target's commit lock stayed held longer than ``commit_lock_timeout``: nothing was
    committed by this attempt. Transient: a retry waits again (the holder may have finished)."""

    kind = "lock-timeout"


def lock_path(target: str) -> str:
    return os.path.join(target, COMMITS_DIR, LOCK_FILE)


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        raw = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
        if raw:
            return raw
    return "another attempt"


def _acquire(fd: int, target: str, label: str, timeout: float) -> None:
    started = last_log = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            now = time.monotonic()
            if now - started >= timeout:
                raise CommitLockTimeout(f"gave up after {timeout:g} s waiting for the commit lock of {target}, "
                                        f"held by {_holder(fd)}: nothing was committed by this attempt; a retry "
                                        "waits again (raise commit_lock_timeout if commits are that long, or end "
                                        "a stuck holder)", label) from None
            if now - last_log >= _WAIT_LOG_SECONDS:
                log.info("LocalFile %s: waiting %.0f s (of at most %g s) for the commit lock of %s, held by %s",
                         label, now - started, timeout, target, _holder(fd))
                last_log = now
            time.sleep(0.05)


@contextlib.contextmanager
def commit_lock(target: str, label: str, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the target's commit lock, waiting at most ``timeout`` seconds (then
    :class:`CommitLockTimeout` naming the holder). The commit directory is 0700 and the lock file
    0600, opened without following a symlink (a link planted at ``.lock`` is refused); both are made
    private when an older release left them open, and a commit directory of another user is refused."""
    path = lock_path(target)
    ensure_private_dir(os.path.dirname(path))
    fd = open_fd(path, os.O_RDWR | os.O_CREAT, 0o600, "the commit lock")
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:  # left by an older release: made private now
            os.fchmod(fd, 0o600)
        _acquire(fd, target, label, timeout)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def target_of(record_path: str) -> str:
    """The target a record under ``<target>/.seatunnel-commits/`` belongs to."""
    marker = os.sep + COMMITS_DIR + os.sep
    at = record_path.rfind(marker)
    if at < 0:
        raise ValueError(f"{record_path} is not under a {COMMITS_DIR} directory")
    return record_path[:at] or os.sep


def fence_path(marker: str) -> str:
    """The token file of the (run, pipeline, sink, table) whose commit marker is ``marker``."""
    return marker[: -len(".committed")] + ".fence" if marker.endswith(".committed") else marker + ".fence"


def newest_token(marker: str) -> int:
    """The newest attempt token handed out for the marker's key (0: none yet); a token file not
    sealed by the target is refused (:class:`~...spi.journals.TamperedRecord`)."""
    record = read_record(target_of(marker), fence_path(marker))
    return 0 if record is None else int(record.get("token", 0))


def allocate(marker: str, attempt: int) -> int:
    """Take the next attempt token for the marker's key (call under the commit lock)."""
    token = newest_token(marker) + 1
    record: dict[str, Any] = {"token": token, "attempt": attempt, "pid": os.getpid(),
                              "host": socket.gethostname(), "at": datetime.now().isoformat()}
    write_record(target_of(marker), fence_path(marker), record)
    return token
