"""Connections to the server (the ``redis`` client, the package's extra ``redis``) and what their
errors mean: a refused password is a configuration error, a key of the wrong type a data error,
an unreachable server transient. Messages name ``redis://host:port/db``, never the credentials."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from .options import Endpoint

INSTALL_HINT = "the Redis connector needs the redis client: pip install 'airflow-provider-seatunnel[redis]'"


def client_of(endpoint: Endpoint, timeout: float | None = 30.0) -> Any:
    """A client of ``endpoint`` (bytes in and out: values are binary-safe), without retries. ``timeout``
    bounds each reply (None: wait, as the commit's script may run long)."""
    try:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise RuntimeConfigError(INSTALL_HINT) from None
    # no silent retries: a staging RPUSH sent twice would stage its rows twice (the engine retries instead)
    return redis.Redis(host=endpoint.host, port=endpoint.port, db=endpoint.db, username=endpoint.user,
                       password=endpoint.password, socket_timeout=timeout, socket_connect_timeout=10,
                       decode_responses=False, retry=Retry(NoBackoff(), 0))


def clean(text: Any, endpoint: Endpoint) -> str:
    """``text`` with the endpoint's credentials masked (the client's messages should hold none)."""
    out = str(text)
    for secret in (endpoint.password, endpoint.user):
        if secret and len(secret) >= 3:
            out = out.replace(secret, "******")
    return out


def error_of(e: BaseException, endpoint: Endpoint, doing: str) -> PipelineError:
    """The connector's error for a client exception raised while ``doing``."""
    import redis

    cause = f"{doing} at {endpoint.label}: {clean(e, endpoint)}"
    if isinstance(e, (redis.exceptions.AuthenticationError, redis.exceptions.AuthorizationError)) or \
            "NOAUTH" in str(e) or "WRONGPASS" in str(e) or "NOPERM" in str(e):
        return RuntimeConfigError(cause + " (check auth and user, or the redis_conn_id connection's login and "
                                          "password)")
    if isinstance(e, redis.exceptions.ResponseError) and "WRONGTYPE" in str(e):
        return DataError(cause)
    if isinstance(e, redis.exceptions.ResponseError) and "DB index is out of range" in str(e):
        return RuntimeConfigError(cause + " (check db_num)")
    return PipelineError(cause)


@contextlib.contextmanager
def connected(endpoint: Endpoint, doing: str, timeout: float | None = 30.0) -> Iterator[Any]:
    """A client, closed after the block; a client error in the block becomes :func:`error_of`'s."""
    import redis

    client = client_of(endpoint, timeout)
    try:
        yield client
    except redis.exceptions.RedisError as e:
        raise error_of(e, endpoint, doing) from None
    finally:
        client.close()
