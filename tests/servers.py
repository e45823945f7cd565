"""What the private database servers of the tests share: start one for a fixture, fail (never skip)
when it cannot run here, run its setup statements, stop it at exit."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: What a server's log says when another process bound its port first.
PORT_TAKEN = ("Address already in use", "BindException", "address already in use", "EADDRINUSE")


def free_port() -> int:
    """A TCP port free on the loopback interface right now (a server may still lose it to another
    before it binds: callers retry)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_was_taken(text: str) -> bool:
    """Whether a server's failure text says another process held its port."""
    return any(marker in text for marker in PORT_TAKEN)


def on_a_free_port(start_once: Callable[[], T], unavailable: type[Exception], tries: int = 4) -> T:
    """``start_once()``, started again (it picks fresh free ports each call) when it failed because
    another process bound a port it had picked: :func:`free_port` closes its socket before the server
    binds, and parallel test workers start servers at the same time. ``start_once`` raises
    ``unavailable`` with the server's log in the message; any other failure is raised at once."""
    for attempt in range(1, tries + 1):
        try:
            return start_once()
        except unavailable as e:
            if attempt == tries or not port_was_taken(str(e)):
                raise
    raise AssertionError("unreachable")


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
