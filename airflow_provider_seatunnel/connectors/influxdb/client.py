"""InfluxDB 1.x's HTTP API (``/query``, ``/write``) over the standard library, and what its errors mean.

Credentials travel in a basic ``Authorization`` header, never in a URL (so never in a log). A refused
login, an unknown database or a query the server cannot parse is a configuration error; a point the server
refuses (a field type conflict, a bad value) a data error; an unreachable server, a timeout or a 5xx
transient (retried by ``write`` ``max_retries`` times, then by Airflow). Messages name the URL only.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from typing import Any

from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from .options import Endpoint

#: rows per chunk of a query's answer (the answer is read chunk by chunk, never whole)
CHUNK_SIZE = 10_000


class InfluxError(PipelineError):
    """A transient failure of a request (retried)."""


def _request(endpoint: Endpoint, path: str, params: dict[str, str], body: bytes | None,
             timeout: float) -> Any:
    url = f"{endpoint.label}{path}?{urllib.parse.urlencode(params)}"
    req = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    if endpoint.username or endpoint.password:
        token = base64.b64encode(f"{endpoint.username or ''}:{endpoint.password or ''}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    if body is not None:
        req.add_header("Content-Type", "application/x-www-form-urlencoded" if path == "/query"
                       else "text/plain; charset=utf-8")
    return urllib.request.urlopen(req, timeout=max(timeout, endpoint.connect_timeout))


def _error(e: BaseException, endpoint: Endpoint, doing: str) -> PipelineError:
    """The connector's error for a failed request while ``doing``."""
    where = f"{doing} at {endpoint.label}"
    if isinstance(e, urllib.error.HTTPError):
        try:
            text = json.loads(e.read().decode("utf-8", "replace") or "{}").get("error", "")
        except (ValueError, OSError):
            text = ""
        cause = f"{where}: HTTP {e.code} {text or e.reason}"
        if e.code in (401, 403):
            return RuntimeConfigError(cause + " (check username and password, or the connection's login)")
        if e.code == 404 or "database not found" in text:
            return RuntimeConfigError(cause + " (check database)")
        if e.code == 400:
            return DataError(cause)
        return InfluxError(cause)
    return InfluxError(f"{where}: {e}")


def _raise_result_error(result: dict[str, Any], endpoint: Endpoint, doing: str) -> None:
    if "error" in result:
        raise RuntimeConfigError(f"{doing} at {endpoint.label}: {result['error']}")


def query(endpoint: Endpoint, database: str, q: str, epoch: str = "n", timeout: float = 30.0,
          doing: str = "cannot query") -> Iterator[dict[str, Any]]:
    """The series of ``q``'s answer, chunk by chunk (each a dict with ``columns``, ``values``, ``tags``)."""
    params = {"db": database, "q": q, "epoch": epoch, "chunked": "true", "chunk_size": str(CHUNK_SIZE)}
    try:
        response = _request(endpoint, "/query", params, None, timeout)
    except (urllib.error.URLError, OSError) as e:
        raise _error(e, endpoint, doing) from None
    with response:
        try:
            for line in response:
                if not line.strip():
                    continue
                for result in json.loads(line).get("results", ()):
                    _raise_result_error(result, endpoint, doing)
                    yield from result.get("series", ())
        except (TimeoutError, OSError) as e:
            raise _error(e, endpoint, doing) from None


def execute(endpoint: Endpoint, statement: str, database: str | None = None, timeout: float = 30.0,
            doing: str = "cannot run a statement") -> list[dict[str, Any]]:
    """Run ``statement`` (POST, a statement that changes the server); the series it answers with."""
    params = {"db": database} if database else {}
    body = urllib.parse.urlencode({"q": statement}).encode()
    try:
        with _request(endpoint, "/query", params, body, timeout) as response:
            answer = json.loads(response.read() or b"{}")
    except (urllib.error.URLError, OSError) as e:
        raise _error(e, endpoint, doing) from None
    series: list[dict[str, Any]] = []
    for result in answer.get("results", ()):
        _raise_result_error(result, endpoint, doing)
        series.extend(result.get("series", ()))
    return series


def write(endpoint: Endpoint, database: str, lines: Sequence[str], rp: str | None = None, timeout: float = 5.0,
          retries: int = 0, backoff_ms: int = 0, max_backoff_ms: int = 0, doing: str = "cannot write") -> None:
    """Write ``lines`` (line protocol, nanosecond times) in one request; a transient failure is retried
    ``retries`` times, waiting ``min(backoff_ms * i, max_backoff_ms)`` ms before retry ``i`` (SeaTunnel's rule)."""
    if not lines:
        return
    params = {"db": database, "precision": "ns"}
    if rp:
        params["rp"] = rp
    body = "\n".join(lines).encode("utf-8")
    for attempt in range(retries + 1):
        try:
            with _request(endpoint, "/write", params, body, timeout) as response:
                response.read()
            return
        except (urllib.error.URLError, OSError) as e:
            error = _error(e, endpoint, doing)
            if not isinstance(error, InfluxError) or attempt >= retries:
                raise error from None
        time.sleep(min(backoff_ms * (attempt + 1), max_backoff_ms) / 1000.0)


def ensure_database(endpoint: Endpoint, database: str) -> None:
    """``CREATE DATABASE`` (a no-op when it exists)."""
    execute(endpoint, f"CREATE DATABASE {ident(database)}", doing=f"cannot create the database {database!r}")


def ident(name: str) -> str:
    """An InfluxQL identifier, double-quoted."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal(text: str) -> str:
    """An InfluxQL string literal, single-quoted."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
