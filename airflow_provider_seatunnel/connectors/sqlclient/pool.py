"""Connection pools for the statements a job runs on the driver (split bounds, catalog keys, save modes,
tokens, commits): one pool per database and login (URL, user, password, properties) and Spark session,
shared by every table and thread of the job and closed when the pipeline run ends.

Rules:

* **Bounded.** At most ``connection.pool.size`` connections of one pool are open at once (SeaTunnel's
  CDC connectors' option name, default 20); a borrower beyond that waits for one to come back, at most
  ``connection_check_timeout_sec`` seconds, then fails naming the option. Idle connections stay open
  for the next borrower.
* **Thread-safe.** Borrowing and returning take the pool's lock; a connection serves one borrower at a
  time (tables running concurrently in threads get a connection each).
* **Checked when it idled.** A connection idle for more than :data:`CHECK_AFTER_SEC` seconds is checked
  before it is handed out (``isValid``); a dead one (the server restarted, a proxy cut it) is closed and a
  new one opened.
* **Clean on return.** A connection comes back with its open transaction rolled back and auto-commit
  on, as a new one is; one whose borrower failed is closed instead (it may be broken or mid-statement),
  as before pools existed.
* **Job facts.** :attr:`Pool.memo` holds what the job learned about the database through the pool
  (tables listed per schema, catalog keys per schema, bookkeeping tables ensured): one catalog query
  per schema instead of one per table. It lives as long as the pool, so a new run asks again.
  :meth:`Pool.once` does a job's one-time work for a key (a schema and its bookkeeping tables created)
  in one thread while the tables running at once that need it wait.
* **Closed at the end.** :func:`close_pools` closes every pool of a session; it is registered with
  :func:`...spi.sessions.at_run_end`, which the engine calls when a pipeline run ends.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from ...spi.sessions import at_run_end, session_key
from .options import DEFAULT_POOL_SIZE, POOL_SIZE_OPTION, config_error

log = logging.getLogger("seatunnel.jdbc")

#: seconds a connection may idle before it is checked when borrowed
CHECK_AFTER_SEC = 5.0


@dataclass(frozen=True)
class PoolKey:
    """What makes two connections interchangeable: the session, the URL and the login (the password and
    properties as a digest, never kept in clear)."""

    session: str
    url: str
    user: str | None
    login: str


def pool_key(session: str, url: str, user: str | None, properties: dict[str, str]) -> PoolKey:
    login = hashlib.sha256(repr(sorted(properties.items())).encode()).hexdigest()
    return PoolKey(session, url, user, login)


class Pool:
    """Up to ``size`` connections made by ``opener``, handed to one borrower at a time."""

    def __init__(self, opener: Callable[[], Any], size: int, wait_sec: float, closer: Callable[[Any], None],
                 check: Callable[[Any], bool] = lambda c: True) -> None:
        self._opener, self._closer, self._check = opener, closer, check
        self.size, self.wait_sec = max(1, int(size)), float(wait_sec)
        self._idle: list[tuple[Any, float]] = []  # (connection, when it came back)
        self._busy = 0
        self._cond = threading.Condition()
        self.closed = False
        self.opened = 0  # connections opened over the pool's life
        self.borrowed = 0  # borrows served
        self.memo: dict[Any, Any] = {}
        self.memo_lock = threading.RLock()
        self._once: dict[Any, threading.Lock] = {}

    def borrow(self) -> Any:
        with self._cond:
            if not self._cond.wait_for(lambda: self._idle or self._busy < self.size, timeout=self.wait_sec):
                raise config_error(f"all {self.size} connections of the pool are in use after {self.wait_sec:g} s: "
                                   f"raise {POOL_SIZE_OPTION}")
            self._busy += 1
            self.borrowed += 1
            found = self._idle.pop() if self._idle else None
        if found is not None:
            connection, since = found
            if time.monotonic() - since <= CHECK_AFTER_SEC or self._alive(connection):
                return connection
            self._closer(connection)
        try:
            connection = self._opener()
        except BaseException:
            with self._cond:
                self._busy -= 1
                self._cond.notify()
            raise
        with self._cond:
            self.opened += 1
        return connection

    def once(self, key: Any, work: Callable[[], None]) -> None:
        """Run ``work`` once for ``key`` in the pool's life, then record ``key`` in :attr:`memo`. Threads
        asking for the same key meanwhile wait for the one running it (then find it done); a failed
        ``work`` records nothing, so the next caller runs it again. Different keys run at once."""
        if key in self.memo:
            return
        with self.memo_lock:
            lock = self._once.setdefault(key, threading.Lock())
        with lock:
            if key not in self.memo:
                work()
                self.memo[key] = True

    def _alive(self, connection: Any) -> bool:
        try:
            return bool(self._check(connection))
        except Exception:
            return False

    def give_back(self, connection: Any, reusable: bool) -> None:
        with self._cond:
            self._busy -= 1
            keep = reusable and not self.closed
            if keep:
                self._idle.append((connection, time.monotonic()))
            self._cond.notify()
        if not keep:
            self._closer(connection)

    @property
    def idle(self) -> int:
        with self._cond:
            return len(self._idle)

    def close(self) -> None:
        with self._cond:
            self.closed = True
            idle, self._idle = self._idle, []
        for connection, _ in idle:
            self._closer(connection)


_POOLS: dict[PoolKey, Pool] = {}
_LOCK = threading.Lock()


def pool_for(key: PoolKey, opener: Callable[[], Any], size: int, wait_sec: float, closer: Callable[[Any], None],
             check: Callable[[Any], bool]) -> Pool:
    """The open pool of ``key``, made on first use (``size`` as the first borrower asked)."""
    with _LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool.closed:
            pool = _POOLS[key] = Pool(opener, size, wait_sec, closer, check)
        return pool


@contextmanager
def borrowed(pool: Pool, reset: Callable[[Any], None]) -> Iterator[Any]:
    """A connection of ``pool`` for the block; ``reset`` makes it as new on a clean exit (a failure in
    ``reset`` closes it instead)."""
    connection = pool.borrow()
    reusable = False
    try:
        yield connection
        try:
            reset(connection)
            reusable = True
        except Exception as e:
            log.debug("Jdbc: a pooled connection could not be reset and is closed: %s", e)
    finally:
        pool.give_back(connection, reusable)


def pools_of(spark: Any) -> list[Pool]:
    """The open pools of ``spark``'s session."""
    session = session_key(spark)
    with _LOCK:
        return [p for k, p in _POOLS.items() if k.session == session and not p.closed]


def close_pools(spark: Any) -> int:
    """Close every pool of ``spark``'s session (idle connections closed now, borrowed ones when they come
    back); how many pools were closed."""
    session = session_key(spark)
    with _LOCK:
        keys = [k for k in _POOLS if k.session == session]
        pools = [_POOLS.pop(k) for k in keys]
    for pool in pools:
        with suppress(Exception):
            pool.close()
    return len(pools)


at_run_end(close_pools)

__all__ = ["DEFAULT_POOL_SIZE", "POOL_SIZE_OPTION", "Pool", "PoolKey", "borrowed", "close_pools", "pool_for",
           "pool_key", "pools_of"]
