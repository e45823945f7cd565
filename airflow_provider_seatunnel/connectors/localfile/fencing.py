"""The LocalFile sink's fencing: the target's commit lock and the attempt tokens.

* The **commit lock** is an exclusive ``flock`` on ``<path>/.seatunnel-commits/.lock``, held while
  an attempt settles earlier attempts and takes its token, and for the whole of a commit (journal,
  drops, renames, marker) or of a roll-back. The kernel releases it when its holder dies, so a
  journal found by the lock's holder belongs to an attempt that is gone: rolling it forward is
  safe. A holder that is paused (SIGSTOP) keeps it; the others wait, logging whom they wait for.
  ``flock`` works on local file systems and on NFSv4 (Linux maps it to a byte-range lock).
* The **attempt token** of a (run, pipeline, sink, table) is kept in the ``.fence`` file next to
  its commit marker; :func:`allocate` (under the lock) writes the next number. The commit, under
  the lock, proceeds only while the file still holds the attempt's token.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from .options import COMMITS_DIR, log

LOCK_FILE = ".lock"
#: how often a waiting attempt says whom it waits for
_WAIT_LOG_SECONDS = 30.0


def write_json_atomic(path: str, payload: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def lock_path(target: str) -> str:
    return os.path.join(target, COMMITS_DIR, LOCK_FILE)


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        raw = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
        if raw:
            return raw
    return "another attempt"


@contextlib.contextmanager
def commit_lock(target: str, label: str) -> Iterator[None]:
    """Hold the target's commit lock (waiting for it as long as it takes)."""
    path = lock_path(target)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        started = last_log = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                now = time.monotonic()
                if now - last_log >= _WAIT_LOG_SECONDS:
                    log.info("LocalFile %s: waiting %.0f s for the commit lock of %s, held by %s", label,
                             now - started, target, _holder(fd))
                    last_log = now
                time.sleep(0.05)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def fence_path(marker: str) -> str:
    """The token file of the (run, pipeline, sink, table) whose commit marker is ``marker``."""
    return marker[: -len(".committed")] + ".fence" if marker.endswith(".committed") else marker + ".fence"


def newest_token(marker: str) -> int:
    """The newest attempt token handed out for the marker's key (0: none yet)."""
    try:
        with open(fence_path(marker), encoding="utf-8") as fh:
            return int(json.load(fh).get("token", 0))
    except FileNotFoundError:
        return 0


def allocate(marker: str, attempt: int) -> int:
    """Take the next attempt token for the marker's key (call under the commit lock)."""
    token = newest_token(marker) + 1
    record: dict[str, Any] = {"token": token, "attempt": attempt, "pid": os.getpid(),
                              "host": socket.gethostname(), "at": datetime.now().isoformat()}
    write_json_atomic(fence_path(marker), record)
    return token
