"""The test servers' shared start-up: a server that lost its free port to another process is started
again on fresh ports; any other failure is raised at once."""

from __future__ import annotations

import socket

import pytest

from tests.servers import free_port, on_a_free_port, port_was_taken


class Unavailable(RuntimeError):
    pass


def test_a_server_that_lost_its_port_is_started_on_another():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        picks = iter([taken, taken])
        tried: list[int] = []

        def start_once() -> int:
            port = next(picks, None) or free_port()
            tried.append(port)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError as e:
                    raise Unavailable(f"the server exited:\njava.net.BindException: {e.strerror}") from e
            return port

        port = on_a_free_port(start_once, Unavailable)
    assert tried[:2] == [taken, taken] and port == tried[2] != taken and len(tried) == 3


def test_other_failures_and_the_last_try_are_raised():
    calls: list[str] = []

    def broken() -> None:
        calls.append("x")
        raise Unavailable("no java on PATH")

    with pytest.raises(Unavailable, match="no java"):
        on_a_free_port(broken, Unavailable)
    assert calls == ["x"]

    def always_taken() -> None:
        calls.append("y")
        raise Unavailable("Address already in use")

    with pytest.raises(Unavailable, match="already in use"):
        on_a_free_port(always_taken, Unavailable, tries=3)
    assert calls.count("y") == 3
    with pytest.raises(KeyError):  # not the server's failure type: never retried
        on_a_free_port(lambda: {}["k"], Unavailable)


def test_the_markers_of_a_taken_port():
    assert port_was_taken("Caused by: java.net.BindException: Address already in use")
    assert port_was_taken("OSError: [Errno 98] Address already in use")
    assert not port_was_taken("Connection refused")
