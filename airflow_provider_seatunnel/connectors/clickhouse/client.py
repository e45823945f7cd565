"""ClickHouse's HTTP interface over the standard library, and what its errors mean.

Every request is a ``POST /?query=...`` to one of the block's hosts (the first that answers; a host that
cannot be reached is skipped), with the database, the output format and the settings as URL parameters and
the credentials in ``X-ClickHouse-User``/``X-ClickHouse-Key`` headers, never in a URL (so never in a log). A
request body continues the query (an ``INSERT ... FORMAT JSONEachRow``'s rows). ClickHouse answers an error
with an HTTP error status and ``Code: N. DB::Exception: ...``: a refused login (516), a missing grant
(497), an unknown table, column, database or setting, a syntax error or a value that does not parse is
deterministic (:class:`~...spi.errors.RuntimeConfigError` or :class:`~...spi.errors.DataError`); an
unreachable server, a timeout, too many parts or queries, a memory limit or a network error is transient
(:class:`ClickhouseError`). Messages name the host only.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from .options import Endpoint

#: ClickHouse error codes a retry may cure: timeouts, network, too many parts/queries, memory, read-only
#: replicas, Keeper, an insert whose outcome is unknown
TRANSIENT = frozenset({3, 159, 160, 164, 173, 198, 202, 203, 209, 210, 241, 242, 252, 285, 319, 394, 425, 439,
                       999, 1000, 1001})
#: codes that say the configuration is wrong: unknown database/table/setting, access, authentication
CONFIG = frozenset({60, 81, 115, 192, 193, 194, 497, 516})
_CODE = re.compile(r"Code: (\d+)")
_FORMAT = re.compile(r"\bFORMAT\s+\w+\s*$", re.IGNORECASE)


class ClickhouseError(PipelineError):
    """A transient failure of a request (retried by Airflow)."""


def quote(name: str) -> str:
    """A quoted identifier."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def literal(text: str) -> str:
    """A quoted string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def error_of(status: int | None, text: str, host: str, doing: str) -> PipelineError:
    """The connector's error for a refused request while ``doing``."""
    m = _CODE.search(text)
    code = int(m.group(1)) if m else None
    first = text.strip().splitlines()[0][:800] if text.strip() else f"HTTP {status}"
    cause = f"{doing} at {host}: {first}"
    if code in CONFIG or status in (401, 403):
        return RuntimeConfigError(cause + " (check host, database, table, username and password, or the connection)")
    if code is None or code in TRANSIENT or (status is not None and status >= 502):
        return ClickhouseError(cause)
    return DataError(cause)


def _open(endpoint: Endpoint, sql: str, body: bytes | None, database: str | None, fmt: str | None,
          settings: Mapping[str, Any] | None, timeout: float, doing: str) -> Any:
    params: dict[str, str] = {**endpoint.settings, **{k: str(v) for k, v in (settings or {}).items()}}
    if endpoint.time_zone:
        params.setdefault("session_timezone", endpoint.time_zone)
    if database:
        params["database"] = database
    if fmt:
        params["default_format"] = fmt
    params["query"] = sql
    last: BaseException | None = None
    for host in endpoint.hosts:
        req = urllib.request.Request(f"http://{host}/?{urllib.parse.urlencode(params)}", data=body or b"",
                                     method="POST")
        req.add_header("X-ClickHouse-User", endpoint.username)
        req.add_header("X-ClickHouse-Key", endpoint.password)
        try:
            return urllib.request.urlopen(req, timeout=timeout)
        except urllib.error.HTTPError as e:
            raise error_of(e.code, e.read().decode("utf-8", "replace"), host, doing) from None
        except (urllib.error.URLError, OSError) as e:
            last = e
    raise ClickhouseError(f"{doing} at {endpoint.label}: {last}")


def execute(endpoint: Endpoint, sql: str, body: bytes | None = None, database: str | None = None,
            fmt: str | None = None, settings: Mapping[str, Any] | None = None, timeout: float = 600.0,
            doing: str = "cannot run a query") -> str:
    """Run one statement; its whole answer as text (for small answers: DDL, counts, metadata)."""
    with _open(endpoint, sql, body, database, fmt, settings, timeout, doing) as response:
        return str(response.read().decode("utf-8"))


def lines(endpoint: Endpoint, sql: str, database: str | None = None, fmt: str = "JSONCompactEachRow",
          settings: Mapping[str, Any] | None = None, timeout: float = 3600.0,
          doing: str = "cannot read the query's answer") -> Iterator[bytes]:
    """The answer of ``sql`` line by line, streamed (never whole in memory)."""
    response = _open(endpoint, sql, None, database, fmt, settings, timeout, doing)
    with response:
        try:
            for line in response:
                if line.strip():
                    yield line
        except OSError as e:
            raise ClickhouseError(f"{doing} at {endpoint.label}: {e}") from None


def rows(endpoint: Endpoint, sql: str, database: str | None = None,
         doing: str = "cannot run a query") -> list[list[Any]]:
    """A small answer as lists of values (JSONCompactEachRow)."""
    return [json.loads(line) for line in lines(endpoint, sql, database, doing=doing)]


def strip_format(sql: str) -> str:
    """``sql`` without a trailing ``FORMAT x`` (the client chooses the format)."""
    return _FORMAT.sub("", sql).rstrip()


__all__ = ["CONFIG", "TRANSIENT", "ClickhouseError", "error_of", "execute", "lines", "literal", "quote", "rows",
           "strip_format"]
