"""The commit lock and the attempt tokens of one Paimon target, on the warehouse's own file system.

Both live beside the warehouse's databases, in ``<warehouse>/.seatunnel-paimon/<database>.db/<table>/`` (the
catalog lists only ``*.db`` directories; never inside a table's directory, where Paimon's orphan-file cleaning
could remove them). :func:`fence_of` picks the kind by the directory:

* a local directory (:class:`LocalFence`): the LocalFile sink's ``flock`` and sealed token files
  (:mod:`..files.fencing`); the kernel drops the lock when its holder dies.
* an HDFS directory (:class:`HdfsFence`), where the NameNode makes two things atomic: creating a file that
  must not exist, and a rename. The **lock** is the file ``.lock``, created without overwrite: one creator
  wins, the others wait. It records its holder (an id, host, pid) and a lease (:data:`LEASE_SECONDS`). A
  waiter may break a lock whose holder is gone: a process of this host that no longer exists, or any holder
  whose lease ended. Breaking is itself claimed by creating ``.lock.broken-<holder id>`` without overwrite,
  so of two waiters only one removes that holder's lock, never a newer one. The **attempt tokens** of a
  (commit user, batch) are empty files ``.seatunnel-commits/<user>-<batch>/<token, 12 digits>``, each
  created without overwrite under the lock: a token is taken once, and the newest is the largest name.
  A holder checks before the commit that the lock is still its own (:meth:`HdfsFence.lock` yields a check):
  only a holder paused past its lease can lose it meanwhile, the limit every lease-based lock has.

A waiter waits at most the lock timeout (:class:`..files.fencing.CommitLockTimeout`, transient), logging whom
it waits for.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from ..files import fencing
from ..files.options import log

FENCE_DIR = ".seatunnel-paimon"
#: how long an HDFS lock's holder may keep it before a waiter may break it
LEASE_SECONDS = 300.0
_POLL_SECONDS = 0.2
_MAX_LOCK_BYTES = 4096


class Fence(Protocol):
    """A target's commit lock and attempt tokens."""

    def lock(self, label: str) -> contextlib.AbstractContextManager[Callable[[], None]]:
        """Hold the lock; the value raises when the lock is no longer held (call it before committing)."""
        ...

    def allocate(self, key: str, attempt: int) -> int:
        """The next attempt token of ``key`` (call under the lock)."""
        ...

    def newest(self, key: str) -> int:
        """The newest token of ``key`` (0: none)."""
        ...


def fence_root(warehouse: str, database: str, name: str) -> str:
    """The directory of one target's commit lock and tokens (``warehouse``: a local path or a URI)."""
    return f"{warehouse.rstrip('/')}/{FENCE_DIR}/{database}.db/{name}"


def fence_of(root: str, hadoop: Mapping[str, str]) -> Fence:
    """The fence of the directory ``root``: HDFS for an ``hdfs://``/``viewfs://`` URI, else local."""
    if root.startswith(("hdfs://", "viewfs://")):
        return HdfsFence(root, hadoop)
    return LocalFence(root)


def _nothing() -> None:
    return None


class LocalFence:
    def __init__(self, root: str) -> None:
        self.root = root

    def _marker(self, key: str) -> str:
        return os.path.join(self.root, ".seatunnel-commits", f"{key}.committed")

    @contextlib.contextmanager
    def lock(self, label: str) -> Iterator[Callable[[], None]]:
        with fencing.commit_lock(self.root, label):
            yield _nothing

    def allocate(self, key: str, attempt: int) -> int:
        return fencing.allocate(self._marker(key), attempt)

    def newest(self, key: str) -> int:
        return fencing.newest_token(self._marker(key))


class LockLost(fencing.CommitLockTimeout):
    """The HDFS commit lock was broken while held (its holder outlived its lease): transient."""


def _alive_here(holder: Mapping[str, Any]) -> bool:
    """False when the holder was a process of this host that no longer exists."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(holder.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError):
        return True
    return True


class HdfsFence:
    """The lock file and token files on HDFS (see the module docstring)."""

    def __init__(self, root: str, hadoop: Mapping[str, str]) -> None:
        from urllib.parse import urlparse

        from hdfs_native import Client

        parsed = urlparse(root)
        self.uri = root
        self.path = parsed.path.rstrip("/") or "/"
        config = {k: str(v) for k, v in hadoop.items() if k.startswith(("fs.", "dfs.", "hadoop.", "ipc.", "io."))}
        url = f"{parsed.scheme}://{parsed.netloc}" if parsed.netloc else None
        self.client = Client(url, config) if url else Client(config=config)
        self.lock_path = f"{self.path}/.lock"

    # -- the lock ------------------------------------------------------------------------------------------
    def _read_holder(self) -> dict[str, Any] | None:
        """The lock's holder; None when there is no lock; ``{}`` when it is unreadable (being written)."""
        try:
            with self.client.read(self.lock_path) as f:
                data = f.read(_MAX_LOCK_BYTES)
        except FileNotFoundError:
            return None
        try:
            holder = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return {}
        return holder if isinstance(holder, dict) else {}

    def _try_create(self, path: str, data: bytes) -> bool:
        from hdfs_native import WriteOptions

        try:
            with self.client.create(path, WriteOptions(overwrite=False, create_parent=True)) as f:
                f.write(data)
        except FileExistsError:
            return False
        return True

    def _stale(self, holder: Mapping[str, Any]) -> bool:
        if not holder:  # being written, or garbage: stale only once its file is older than a lease
            with contextlib.suppress(FileNotFoundError):
                status = self.client.get_file_info(self.lock_path)
                return time.time() - int(status.modification_time) / 1000.0 > LEASE_SECONDS
            return False
        try:
            until = float(holder.get("until", 0))
        except (TypeError, ValueError):
            until = 0.0
        return time.time() > until or not _alive_here(holder)

    def _break(self, holder: Mapping[str, Any]) -> None:
        """Remove the stale ``holder``'s lock, once (the breaker claims it by a file named after it)."""
        ident = str(holder.get("id") or f"unreadable-{int(time.time() // LEASE_SECONDS)}")
        ident = "".join(c for c in ident if c.isalnum() or c in "-_")[:64]
        if not self._try_create(f"{self.path}/.lock.broken-{ident}", b""):
            return
        current = self._read_holder()
        if current is not None and (current.get("id") == holder.get("id")):
            log.warning("Paimon: breaking the commit lock of %s held by %s (gone or past its lease)", self.uri,
                        {k: holder.get(k) for k in ("host", "pid", "label")})
            with contextlib.suppress(FileNotFoundError):
                self.client.delete(self.lock_path, False)

    @contextlib.contextmanager
    def lock(self, label: str, timeout: float = fencing.DEFAULT_LOCK_TIMEOUT) -> Iterator[Callable[[], None]]:
        me: dict[str, Any] = {"id": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid(),
                              "label": label}
        began = logged = time.monotonic()
        while True:
            until = me["until"] = time.time() + LEASE_SECONDS  # the lease runs from the taking, not the wait
            if self._try_create(self.lock_path, json.dumps(me).encode()):
                break
            holder = self._read_holder()
            if holder is not None and self._stale(holder):
                self._break(holder)
                continue
            now = time.monotonic()
            if now - began > timeout:
                raise fencing.CommitLockTimeout(f"{label}: the commit lock {self.lock_path} on {self.uri} was not "
                                                f"free within {timeout:.0f}s (held by {holder})")
            if now - logged > 30:
                log.info("%s: waiting for the commit lock of %s, held by %s", label, self.uri, holder)
                logged = now
            time.sleep(_POLL_SECONDS)

        def still_held() -> None:
            holder = self._read_holder()
            if holder is None or holder.get("id") != me["id"] or time.time() > until:
                raise LockLost(f"{label}: the commit lock of {self.uri} was lost (held past its lease)")

        try:
            yield still_held
        finally:
            current = self._read_holder()
            if current is not None and current.get("id") == me["id"]:
                with contextlib.suppress(FileNotFoundError):
                    self.client.delete(self.lock_path, False)

    # -- the tokens ----------------------------------------------------------------------------------------
    def _tokens_dir(self, key: str) -> str:
        return f"{self.path}/.seatunnel-commits/{key}"

    def newest(self, key: str) -> int:
        try:
            names = [s.path.rsplit("/", 1)[-1] for s in self.client.list_status(self._tokens_dir(key))]
        except FileNotFoundError:
            return 0
        return max((int(n) for n in names if n.isdigit() and len(n) == 12), default=0)

    def allocate(self, key: str, attempt: int) -> int:
        token = self.newest(key) + 1
        while not self._try_create(f"{self._tokens_dir(key)}/{token:012d}", str(attempt).encode()):
            token += 1
        return token
