"""A small REST client of the Elasticsearch API (the standard library's HTTP; pure Python, used on the
driver and inside Spark's Python workers).

Requests go to the first of ``hosts`` that answers (a host refusing the connection is skipped); a
request is tried ``tries`` times when the server is busy (429, 502-504) or unreachable. Credentials
travel in the ``Authorization`` header only, never in a URL, a message or a log. Answers are JSON; an
error answer raises :class:`SearchError` with the server's reason (status, type and reason; never the
request body, which may hold data).
"""

from __future__ import annotations

import base64
import decimal
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from ...spi.errors import RuntimeConfigError
from .options import Endpoint

TRANSIENT = frozenset({429, 502, 503, 504})
#: an answer larger than this is refused (a hostile or broken server cannot exhaust the worker's memory)
MAX_ANSWER = 256 * 1024 * 1024


class SearchError(RuntimeError):
    """An error answer (or no answer) of the cluster; ``status`` 0 when no host answered."""

    def __init__(self, message: str, status: int = 0, kind: str = ""):
        super().__init__(message)
        self.status, self.kind = status, kind


def _base(host: str) -> str:
    text = host.rstrip("/")
    return text if text.startswith(("http://", "https://")) else f"http://{text}"


def _context(endpoint: Endpoint) -> ssl.SSLContext | None:
    if not any(_base(h).startswith("https://") for h in endpoint.hosts):
        return None
    if endpoint.truststore and endpoint.truststore.lower().endswith((".jks", ".p12", ".pfx")):
        raise RuntimeConfigError(f"tls_truststore_path {endpoint.truststore!r}: a Java key store cannot be read "
                                 "here; give the CA certificates as a PEM file")
    context = ssl.create_default_context(cafile=endpoint.truststore or None)
    if not endpoint.verify_hostname or not endpoint.verify_certificate:
        context.check_hostname = False
    if not endpoint.verify_certificate:
        context.verify_mode = ssl.CERT_NONE
    return context


class Client:
    """One cluster's REST API; thread-safe (no state but settings)."""

    def __init__(self, endpoint: Endpoint, tries: int = 3, timeout: float | None = 120.0, exact: bool = False):
        """``exact``: JSON fractions read as ``Decimal`` (a copy that writes them again keeps every digit)."""
        self.endpoint, self.tries, self.timeout, self.exact = endpoint, max(1, tries), timeout, exact
        self._context = _context(endpoint)
        self._auth = None
        if endpoint.username is not None:
            pair = f"{endpoint.username}:{endpoint.password or ''}".encode()
            self._auth = "Basic " + base64.b64encode(pair).decode("ascii")

    def request(self, method: str, path: str, body: Any = None, params: Mapping[str, Any] | None = None,
                ok: tuple[int, ...] = ()) -> tuple[int, Any]:
        """``(status, JSON answer)``; a status >= 400 not in ``ok`` raises :class:`SearchError`. ``body``:
        a JSON value, or ``bytes`` sent as NDJSON (bulk)."""
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        data, ctype = (body, "application/x-ndjson") if isinstance(body, bytes) else (
            None if body is None else json.dumps(body).encode(), "application/json")
        last: SearchError | None = None
        for attempt in range(self.tries):
            if attempt:
                time.sleep(min(5.0, 0.2 * 2 ** attempt))
            for host in self.endpoint.hosts:
                try:
                    return self._once(method, _base(host) + path + query, data, ctype, ok)
                except SearchError as e:
                    if e.status and e.status not in TRANSIENT:
                        raise
                    last = e
        assert last is not None
        raise last

    def _once(self, method: str, url: str, data: bytes | None, ctype: str, ok: tuple[int, ...]) -> tuple[int, Any]:
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Content-Type", ctype)
        if self._auth:
            req.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._context) as answer:
                return answer.status, _json(answer.read(MAX_ANSWER + 1), self.exact)
        except urllib.error.HTTPError as e:
            found = _json(e.read(MAX_ANSWER + 1))
            if e.code in ok:
                return e.code, found
            raise SearchError(_reason(method, url, e.code, found), e.code, _kind(found)) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise SearchError(f"{method} {_where(url)}: no answer ({reason})") from None

    # -- the calls the connector makes ------------------------------------------------------------

    def exists(self, index: str) -> bool:
        status, _ = self.request("HEAD", "/" + quote(index), ok=(404,))
        return status == 200

    def refresh(self, index: str) -> None:
        self.request("POST", f"/{quote(index)}/_refresh", params={"expand_wildcards": "all"})

    def count(self, index: str) -> int:
        _, found = self.request("GET", f"/{quote(index)}/_count", params={"expand_wildcards": "all"})
        return int(found.get("count", 0))

    def delete_index(self, index: str) -> None:
        self.request("DELETE", "/" + quote(index), params={"expand_wildcards": "all"}, ok=(404,))

    def bulk(self, lines: list[bytes]) -> list[str]:
        """Send one bulk request; the errors of its items (their reasons)."""
        _, found = self.request("POST", "/_bulk", b"".join(lines))
        if not found.get("errors"):
            return []
        out = []
        for item in found.get("items", []):
            for result in item.values():
                if isinstance(result, Mapping) and result.get("error"):
                    err = result["error"]
                    out.append(f"{err.get('type')}: {err.get('reason')}" if isinstance(err, Mapping) else str(err))
        return out


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="*,")


def _json(raw: bytes, exact: bool = False) -> Any:
    if len(raw) > MAX_ANSWER:
        raise SearchError(f"an answer of more than {MAX_ANSWER} bytes was refused")
    if not raw:
        return {}
    try:
        return json.loads(raw, parse_float=decimal.Decimal) if exact else json.loads(raw)
    except ValueError:
        return {"error": raw[:200].decode("utf-8", "replace")}


def _where(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port or ''}{parts.path}"


def _kind(found: Any) -> str:
    err = found.get("error") if isinstance(found, Mapping) else None
    return str(err.get("type", "")) if isinstance(err, Mapping) else ""


def _reason(method: str, url: str, status: int, found: Any) -> str:
    err = found.get("error") if isinstance(found, Mapping) else found
    if isinstance(err, Mapping):
        root = (err.get("root_cause") or [err])[0]
        text = f"{root.get('type', '')}: {root.get('reason', '')}" if isinstance(root, Mapping) else str(root)
    else:
        text = str(err)[:300]
    return f"{method} {_where(url)} answered {status}: {text}"
