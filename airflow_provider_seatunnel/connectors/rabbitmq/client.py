"""Connections to the broker (``pika``, the package's extra ``rabbitmq``) and what their errors mean: a
refused login or an unknown virtual host is a configuration error, a queue declared with other arguments
a configuration error too, a lost or refused connection transient. Messages name
``amqp://host:port/vhost``, never the credentials."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ...spi.errors import PipelineError, RuntimeConfigError
from .options import Endpoint

INSTALL_HINT = "the RabbitMQ connector needs the pika client: pip install 'airflow-provider-seatunnel[rabbitmq]'"
#: AMQP reply codes that no retry can cure: access refused, not found (a vhost, an exchange), precondition failed
#: (a queue declared with other arguments), command invalid
DETERMINISTIC_CODES = frozenset({403, 404, 406, 503, 530})
#: the reply code of a queue another connection declared exclusive (the sink's fence)
RESOURCE_LOCKED = 405


def parameters(endpoint: Endpoint) -> Any:
    """``pika.ConnectionParameters`` of ``endpoint``: the timeout (ms) bounds the TCP connect and each socket
    wait; heartbeat, channel and frame maxima as asked."""
    try:
        import pika
    except ImportError:
        raise RuntimeConfigError(INSTALL_HINT) from None
    tuning: dict[str, Any] = {}
    if endpoint.timeout_ms is not None:
        seconds = endpoint.timeout_ms / 1000 if endpoint.timeout_ms > 0 else None
        tuning.update(socket_timeout=seconds, blocked_connection_timeout=seconds)
    if endpoint.heartbeat is not None:
        tuning["heartbeat"] = endpoint.heartbeat
    if endpoint.channel_max:
        tuning["channel_max"] = endpoint.channel_max
    if endpoint.frame_max:
        tuning["frame_max"] = endpoint.frame_max
    credentials = pika.PlainCredentials(endpoint.user or "guest", endpoint.password or "guest")
    return pika.ConnectionParameters(endpoint.host, int(endpoint.port), endpoint.vhost or "/", credentials,
                                     connection_attempts=1, **tuning)


def clean(text: Any, endpoint: Endpoint) -> str:
    """``text`` with the endpoint's credentials masked (pika's messages should hold none)."""
    out = str(text)
    for secret in (endpoint.password, endpoint.user):
        if secret and len(secret) >= 3:
            out = out.replace(secret, "******")
    return out


def reply_code(e: BaseException) -> int | None:
    """The AMQP reply code of a channel or connection closed by the broker, else None."""
    args = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def error_of(e: BaseException, endpoint: Endpoint, doing: str) -> PipelineError:
    """The connector's error for a client exception raised while ``doing``."""
    import pika.exceptions as pe

    cause = f"{doing} at {endpoint.label}: {clean(e, endpoint) or type(e).__name__}"
    if isinstance(e, (pe.ProbableAuthenticationError, pe.AuthenticationError, pe.ProbableAccessDeniedError)):
        return RuntimeConfigError(cause + " (check username and password, virtual_host, or the connection's login)")
    if isinstance(e, (pe.ChannelClosedByBroker, pe.ConnectionClosedByBroker)) and reply_code(e) in DETERMINISTIC_CODES:
        return RuntimeConfigError(cause)
    return PipelineError(cause)


def connect(endpoint: Endpoint, doing: str) -> Any:
    """A blocking connection, or the connector's error."""
    import pika
    import pika.exceptions as pe

    try:
        return pika.BlockingConnection(parameters(endpoint))
    except (pe.AMQPError, OSError) as e:
        raise error_of(e, endpoint, doing) from None


@contextlib.contextmanager
def connected(endpoint: Endpoint, doing: str) -> Iterator[Any]:
    """A connection, closed after the block; a client error in the block becomes :func:`error_of`'s."""
    import pika.exceptions as pe

    conn = connect(endpoint, doing)
    try:
        yield conn
    except pe.AMQPError as e:
        raise error_of(e, endpoint, doing) from None
    finally:
        with contextlib.suppress(Exception):
            if conn.is_open:
                conn.close()


def queue_exists(conn: Any, queue: str) -> bool:
    """Whether ``queue`` exists (a passive declaration on a channel of its own: a refusal closes it)."""
    import pika.exceptions as pe

    ch = conn.channel()
    try:
        ch.queue_declare(queue, passive=True)
    except pe.ChannelClosedByBroker as e:
        if reply_code(e) == 404:
            return False
        raise
    ch.close()
    return True
