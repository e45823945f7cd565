"""Connections to the broker (:mod:`.stomp`) and what their errors mean: a refused login is a configuration
error, an ``ERROR`` frame the broker answers a deterministic failure, a lost or refused connection and a
client id in use transient. Messages name ``activemq://host:port``, never the credentials."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ...spi.errors import PipelineError, RuntimeConfigError
from .options import Endpoint
from .stomp import Stomp, StompError, queue

#: how long a connection waits for the broker's answer, seconds
TIMEOUT_S = 60.0
#: how long a drain waits for one more message before it takes the queue for empty, seconds
DRAIN_IDLE_S = 1.0


def clean(text: object, endpoint: Endpoint) -> str:
    """``text`` with the endpoint's credentials masked."""
    out = str(text)
    for secret in (endpoint.password, endpoint.user):
        if secret and len(secret) >= 3:
            out = out.replace(secret, "******")
    return out


def error_of(e: StompError, endpoint: Endpoint, doing: str) -> PipelineError:
    """The connector's error for a client failure while ``doing``."""
    cause = f"{doing} at {endpoint.label}: {clean(e, endpoint)}"
    if e.transient:
        return PipelineError(cause)
    if "password" in str(e).lower() or "user name" in str(e).lower():
        return RuntimeConfigError(cause + " (check username and password, or the connection's login)")
    return RuntimeConfigError(cause)


@contextlib.contextmanager
def connected(endpoint: Endpoint, doing: str, client_id: str | None = None) -> Iterator[Stomp]:
    """A connection for the block, closed after it (an open transaction is rolled back); a client failure
    becomes :func:`error_of`'s."""
    conn = Stomp(endpoint.host, endpoint.port, endpoint.user, endpoint.password, client_id, TIMEOUT_S)
    try:
        conn.connect()
        yield conn
    except StompError as e:
        raise error_of(e, endpoint, doing) from None
    finally:
        conn.close()


def browse(conn: Stomp, name: str) -> list[bytes]:
    """The bodies of the messages of queue ``name``, left in it (a queue browser)."""
    sub = "browse-" + name
    conn.subscribe(queue(name), sub, ack="auto", headers={"browser": "true"})
    out: list[bytes] = []
    while True:
        frame = conn.receive(TIMEOUT_S)
        if frame is None:
            raise StompError(f"no end of the browse of {name}", transient=True)
        if frame.headers.get("browser") == "end":
            conn.unsubscribe(sub)
            return out
        out.append(frame.body)


def drain(conn: Stomp, name: str) -> int:
    """Take every message of queue ``name`` off it (acknowledged); how many there were."""
    sub = "drain-" + name
    conn.subscribe(queue(name), sub, ack="auto")
    count = 0
    while conn.receive(DRAIN_IDLE_S) is not None:
        count += 1
    conn.unsubscribe(sub)
    return count
