"""Sessions of the DataStax Python driver (``cassandra-driver``, the package's extra ``cassandra``) and
what their errors mean: a refused login or an unknown keyspace/table is a configuration error, a query
Cassandra refuses a configuration error too, an unreachable or overloaded cluster transient. Messages
name ``cassandra://host:port/keyspace``, never the credentials."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from ...spi.errors import PipelineError, RuntimeConfigError
from .options import Endpoint

INSTALL_HINT = ("the Cassandra connector needs the DataStax driver: pip install "
                "'airflow-provider-seatunnel[cassandra]'")


def consistency(name: str) -> int:
    """The driver's value of a consistency level named as SeaTunnel names it."""
    from cassandra import ConsistencyLevel

    return int(getattr(ConsistencyLevel, name))


def cluster_of(endpoint: Endpoint, timeout: float = 30.0, metadata: bool = True) -> Any:
    """A driver ``Cluster`` of the endpoint's contact points, token-aware within its datacenter; without
    ``metadata`` (a Spark task's) it fetches no schema and no token map, which every connection would pay."""
    try:
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy
    except ImportError:
        raise RuntimeConfigError(INSTALL_HINT) from None
    profile = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(endpoint.datacenter)),
                               consistency_level=consistency(endpoint.consistency), request_timeout=timeout)
    auth = PlainTextAuthProvider(endpoint.username, endpoint.password) if endpoint.username is not None else None
    hosts = [h for h, _ in endpoint.hosts]
    ports = {p for _, p in endpoint.hosts}
    if len(ports) > 1:
        raise RuntimeConfigError(f"{endpoint.label}: the driver connects to every contact point on one port; "
                                 "give them the same port")
    return Cluster(hosts, port=ports.pop(), auth_provider=auth,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=10,
                   control_connection_timeout=10, schema_metadata_enabled=metadata, token_metadata_enabled=metadata)


def clean(text: Any, endpoint: Endpoint) -> str:
    """``text`` with the endpoint's credentials masked (the driver's messages should hold none)."""
    out = str(text)
    for secret in (endpoint.password, endpoint.username):
        if secret and len(secret) >= 3:
            out = out.replace(secret, "******")
    return out


def error_of(e: BaseException, endpoint: Endpoint, doing: str) -> PipelineError:
    """The connector's error for a driver exception raised while ``doing``."""
    from cassandra import AuthenticationFailed, InvalidRequest, Unauthorized
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import ConfigurationException, SyntaxException

    cause = f"{doing} at {endpoint.label}: {clean(e, endpoint)}"
    if isinstance(e, NoHostAvailable) and any(isinstance(x, AuthenticationFailed) for x in e.errors.values()):
        return RuntimeConfigError(cause + " (check username and password, or the cassandra_conn_id connection's "
                                          "login and password)")
    if isinstance(e, (AuthenticationFailed, Unauthorized)):
        return RuntimeConfigError(cause + " (check the user's credentials and permissions)")
    if isinstance(e, (InvalidRequest, SyntaxException, ConfigurationException)):
        return RuntimeConfigError(cause)
    return PipelineError(cause)


def is_driver_error(e: BaseException) -> bool:
    """Whether ``e`` comes from the driver (its exceptions have no common base class)."""
    return type(e).__module__.split(".")[0] == "cassandra"


@contextlib.contextmanager
def session_of(endpoint: Endpoint, doing: str, keyspace: bool = True, timeout: float = 30.0,
               metadata: bool = True) -> Iterator[Any]:
    """A session (in the endpoint's keyspace), shut down after the block; a driver error in the block
    becomes :func:`error_of`'s."""
    cluster = cluster_of(endpoint, timeout, metadata)
    try:
        session = cluster.connect(endpoint.keyspace if keyspace else None)
        yield session
    except Exception as e:
        if is_driver_error(e):
            raise error_of(e, endpoint, doing) from None
        raise
    finally:
        cluster.shutdown()


def quote(name: str) -> str:
    """A CQL identifier as written: lower-case words as they are, anything else double-quoted."""
    if re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'

