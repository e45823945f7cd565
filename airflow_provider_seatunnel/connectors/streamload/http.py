"""The HTTP side of Stream Load, shared by its family: basic auth, a frontend's redirect to a backend followed
(credentials and body sent again), bounded requests retried when they fail in transit, and failures
classified. Refused credentials are :class:`AccessDenied`; a refusal a retry repeats (the rows, the table)
is :class:`StreamLoadRefused` (a ``DataError``); the rest is transient :class:`StreamLoadError`. No
credential reaches an error text or a log.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import random
import re
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from ...spi.errors import AccessDenied, DataError, PipelineError

TIMEOUT = 600.0
MAX_REDIRECTS = 3


class StreamLoadError(PipelineError):
    """A Stream Load request failed in a way a retry may mend (the network, a busy or restarting node)."""


class StreamLoadRefused(DataError):
    """The store refused a load or a transaction's decision for a reason a retry repeats (the rows, the table)."""


#: a refusal whose cause may pass: a retry may succeed
_PASSING = re.compile(r"timeout|timed out|unavailable|no available|too busy|try again|not ready", re.IGNORECASE)


def refused(message: str) -> PipelineError:
    """The error of a refusal: transient when its text says the cause may pass, else deterministic."""
    return StreamLoadError(message) if _PASSING.search(message) else StreamLoadRefused(message)


class HttpClient:
    """Requests to the frontends ``fenodes`` (one picked at random per request, as SeaTunnel does).
    ``backoff_ms`` and ``max_backoff_ms`` shape the pause before a retry (multiplied by the attempt)."""

    def __init__(self, fenodes: tuple[str, ...], username: str, password: str, max_retries: int = 3,
                 timeout: float = TIMEOUT, backoff_ms: int = 200, max_backoff_ms: int = 2000):
        self.fenodes = fenodes
        self._auth = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_ms, self.max_backoff_ms = backoff_ms, max_backoff_ms

    def _once(self, method: str, url: str, headers: Mapping[str, str],
              body: bytes | str) -> tuple[int, dict[str, Any]]:
        for _ in range(MAX_REDIRECTS + 1):
            parts = urllib.parse.urlsplit(url)
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port or 80, timeout=self.timeout)
            try:
                size = os.path.getsize(body) if isinstance(body, str) else len(body)
                with open(body, "rb") if isinstance(body, str) else contextlib.nullcontext(body) as data:
                    conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body=data,
                                 headers={**headers, "Authorization": self._auth, "Content-Length": str(size)})
                    response = conn.getresponse()
                text = response.read(16 * 1024 * 1024)
                if response.status in (301, 302, 307, 308):
                    location = response.getheader("Location") or ""
                    url = urllib.parse.urljoin(url, location)
                    continue
            finally:
                conn.close()
            try:
                answer = json.loads(text or b"{}")
            except ValueError:
                answer = {"status": "Fail", "msg": text[:300].decode(errors="replace")}
            return response.status, answer if isinstance(answer, dict) else {"msg": str(answer)[:300]}
        raise StreamLoadRefused(f"more than {MAX_REDIRECTS} redirects from {self.fenodes[0]}")

    def _pause(self, attempt: int) -> None:
        time.sleep(min(self.max_backoff_ms, self.backoff_ms * (attempt + 1)) / 1000.0)

    def request(self, method: str, path: str, headers: Mapping[str, str], body: bytes | str = b"") -> dict[str, Any]:
        """One request to a frontend, retried when it fails in transit or answers 5xx; the JSON answer."""
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            node = random.choice(self.fenodes)
            try:
                status, answer = self._once(method, f"http://{node}{path}", headers, body)
            except (OSError, http.client.HTTPException) as e:
                last = e
                self._pause(attempt)
                continue
            if status == 401 or status == 403:
                raise AccessDenied(f"{node} refused the credentials (HTTP {status}): check username and password")
            if status >= 500:
                last = StreamLoadError(f"HTTP {status} from {node}: {str(answer)[:300]}")
                self._pause(attempt)
                continue
            if status >= 400:
                raise refused(f"HTTP {status} from {node}{path}: {str(answer)[:300]}")
            return answer
        raise StreamLoadError(f"Stream Load to {','.join(self.fenodes)} failed: {last}")

    def put(self, path: str, headers: Mapping[str, str], body: bytes | str = b"") -> dict[str, Any]:
        return self.request("PUT", path, headers, body)


def message(answer: Mapping[str, Any]) -> str:
    """The human part of an answer (Doris's ``Message``/``msg``)."""
    return str(answer.get("Message") or answer.get("msg") or "")[:500]


def seg(name: str) -> str:
    """A name as one URL path segment."""
    return urllib.parse.quote(name, safe="")


__all__ = ["HttpClient", "StreamLoadError", "StreamLoadRefused", "message", "refused", "seg"]
