"""What the private database servers of the tests share: start one for a fixture, fail (never skip)
when it cannot run here, run its setup statements, stop it at exit."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any


def free_port() -> int:
    """A TCP port free on the loopback interface right now (a server may still lose it to another
    before it binds: callers retry)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """Stop a server process: SIGTERM, then SIGKILL when it has not exited within ``timeout``."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)


@contextlib.contextmanager
def running(start: Callable[[], Any], unavailable: type[Exception], *setup_sql: str) -> Iterator[Any]:
    """The server ``start()`` gives, with ``setup_sql`` run first; stopped at exit. A server that
    cannot start (``unavailable``) fails the test: the packages are part of ``make test-deps``."""
    import pytest

    try:
        server = start()
    except unavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        for statement in setup_sql:
            server.sql(statement)
        yield server
    finally:
        server.stop()
