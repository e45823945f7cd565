"""The Pulsar client (PyPI's ``pulsar-client``) and the admin REST API, and what their errors mean: a refused
token or an unknown topic is a configuration error, a lost or refused connection and a producer fenced by another
attempt transient. Messages name the service URL, never the token. Run time only (imports ``pulsar``)."""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

from ...spi.errors import PipelineError, RuntimeConfigError
from .options import Endpoint

#: seconds an admin call or a client operation waits for the broker
TIMEOUT_S = 60
#: the broker's error names that are deterministic (a retry meets them again)
_DETERMINISTIC = ("AuthenticationError", "AuthorizationError", "TopicNotFound", "InvalidConfiguration",
                  "InvalidTopicName", "NotAllowedError", "IncompatibleSchema")


def error_of(e: BaseException, endpoint: Endpoint, doing: str) -> PipelineError:
    """The connector's error for a client failure while ``doing``."""
    text = str(e)
    if endpoint.token:
        text = text.replace(endpoint.token, "******")
    cause = f"{doing} at {endpoint.label}: {type(e).__name__}: {text}"
    if any(name in type(e).__name__ or name in text for name in _DETERMINISTIC):
        return RuntimeConfigError(cause)
    return PipelineError(cause)


@contextlib.contextmanager
def connected(endpoint: Endpoint, doing: str) -> Iterator[Any]:
    """A client for the block, closed after it; a client failure becomes :func:`error_of`'s."""
    import pulsar

    auth = pulsar.AuthenticationToken(endpoint.token) if endpoint.token else None
    try:
        client = pulsar.Client(endpoint.service_url, authentication=auth, operation_timeout_seconds=TIMEOUT_S,
                               logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    except Exception as e:
        raise error_of(e, endpoint, doing) from None
    try:
        yield client
    except PipelineError:
        raise
    except Exception as e:
        if type(e).__module__.split(".")[0] in ("pulsar", "_pulsar"):
            raise error_of(e, endpoint, doing) from None
        raise
    finally:
        with contextlib.suppress(Exception):
            client.close()


def topic_path(topic: str) -> str:
    """``persistent/<tenant>/<namespace>/<topic>`` of a full topic name (the admin API's path)."""
    scheme, _, rest = topic.partition("://")
    return f"{scheme}/" + "/".join(urllib.parse.quote(p, safe="") for p in rest.split("/"))


def admin(endpoint: Endpoint, method: str, path: str, doing: str, missing_ok: bool = False) -> Any:
    """One admin REST call (``/admin/v2/<path>``): its JSON answer (None when empty, or 404 with ``missing_ok``)."""
    headers = {"Accept": "application/json"}
    if endpoint.token:
        headers["Authorization"] = "Bearer " + endpoint.token
    request = urllib.request.Request(endpoint.admin_url.rstrip("/") + "/admin/v2/" + path, method=method,
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            body = answer.read()
    except urllib.error.HTTPError as e:
        if e.code == 404 and missing_ok:
            return None
        reason = e.read()[:300].decode(errors="replace")
        cause = f"{doing} at {endpoint.admin_url}: HTTP {e.code} {reason}"
        raise (RuntimeConfigError(cause) if e.code in (401, 403, 404, 412) else PipelineError(cause)) from None
    except OSError as e:
        raise PipelineError(f"{doing} at {endpoint.admin_url}: {e}") from None
    return json.loads(body) if body else None


def namespace_topics(endpoint: Endpoint, tenant: str, namespace: str) -> list[str]:
    """The persistent topics of a namespace, partitioned ones by their own name (not their partitions')."""
    names = admin(endpoint, "GET", f"namespaces/{tenant}/{namespace}/topics", "cannot list the topics") or []
    out = set()
    for name in names:
        if not str(name).startswith("persistent://"):
            continue
        base, sep, index = str(name).rpartition("-partition-")
        out.add(base if sep and index.isdigit() else str(name))
    return sorted(out)
