"""One request of the Http source: what is sent for a page, and sending it with SeaTunnel's retries
(``requests``; runs in Spark's Python workers).

What is sent (SeaTunnel 2.3.9's rules, and the later options where a block sets them):

* headers: the connection's extra headers, then the block's ``headers`` (which win), and the
  connection's ``Authorization`` unless the block sets one;
* GET: ``params`` in the query string (a parameter of the URL's own query with the same name is
  replaced); no body;
* POST: ``params`` as a form (``application/x-www-form-urlencoded``), and then no ``body``, as
  SeaTunnel 2.3.9 does; ``keep_params_as_form = false`` sends them in the query string instead.
  Without a form, ``body`` goes as ``application/json`` (empty when unset) unless the block sets
  its own ``Content-Type``;
* the page number (``pageing``): into ``params`` under ``page_field`` (2.3.9), unless
  ``keep_page_param_as_http_param = false`` or ``use_placeholder_replacement = true`` (later
  versions): then ``${<page_field>}`` in header values, parameter values and the body is replaced
  (placeholders), or (``keep_page_param_as_http_param = false`` without placeholders) a header, a
  parameter or a body member of that name, at any depth, gets the number.

Sending: up to ``retry`` attempts in all (one when ``retry`` < 1) with a Fibonacci backoff of
``retry_backoff_multiplier_ms`` × fib(n) ms capped at ``retry_backoff_max_ms``, retrying connection
failures, timeouts and answers 5xx, 408 and 429, which then fail as a transient
:class:`PipelineError`. A status outside 200–207 otherwise fails at once as a deterministic
:class:`RuntimeConfigError` (SeaTunnel's HTTP-02). Messages show the URL without its query string.

Redirects: a redirect to another origin (scheme, host or port differ, which covers an https->http
downgrade) drops every credential-bearing header before the request is sent there: ``Authorization``,
``Proxy-Authorization``, ``Cookie`` and every header the connection's extra or the block's ``headers``
set (``X-Api-Key`` and the like). A redirect within the same origin keeps them.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...spi.errors import PipelineError, RuntimeConfigError
from .options import HttpOptions

#: statuses SeaTunnel accepts as success
OK_STATUSES = range(200, 208)
#: statuses retried like a connection failure (besides 5xx)
RETRY_STATUSES = (408, 429)
_SNIPPET = 300
#: a query string inside a client's message (it may carry a token)
_QUERY = re.compile(r"\?[^\s)'\"]*")
#: headers dropped on a redirect to another origin whatever the config sets
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_DEFAULT_PORTS = {"http": 80, "https": 443}

log = logging.getLogger("seatunnel.http")


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    form: Mapping[str, str] | None = None
    body: str | None = None


def _has(headers: Mapping[str, str], name: str) -> bool:
    return any(k.lower() == name.lower() for k in headers)


def _with_query(url: str, params: Mapping[str, str]) -> str:
    if not params:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query.extend(params.items())
    return urlunsplit(parts._replace(query=urlencode(query)))


def _replace_in(tree: Any, name: str, value: int) -> Any:
    """A JSON value with every member called ``name`` (at any depth) set to ``value``."""
    if isinstance(tree, dict):
        return {k: value if k == name else _replace_in(v, name, value) for k, v in tree.items()}
    return tree


def _page_body(body: str | None, name: str, page: int) -> str | None:
    if not body:
        return body
    try:
        parsed = json.loads(body)
    except ValueError:
        return body
    if not isinstance(parsed, dict):
        return body
    return json.dumps(_replace_in(parsed, name, page), separators=(",", ":"), ensure_ascii=False)


def _place_page(o: HttpOptions, headers: dict[str, str], params: dict[str, str], body: str | None,
                page: int) -> str | None:
    """Put ``page`` where the options say (see the module's docstring); the body it leaves."""
    assert o.paging is not None
    name = o.paging.page_field
    placeholders = o.paging.use_placeholder_replacement
    if o.keep_page_param or (o.keep_page_param is None and not placeholders):
        params[name] = str(page)
        return body
    if placeholders:
        mark = "${" + name + "}"
        for mapping in (headers, params):
            for k, v in mapping.items():
                mapping[k] = v.replace(mark, str(page))
        return body.replace(mark, str(page)) if body else body
    for mapping in (headers, params):
        if name in mapping:
            mapping[name] = str(page)
    return _page_body(body, name, page)


def build(o: HttpOptions, page: int | None) -> Request:
    """The request for ``page`` (None: without paging)."""
    headers = {**o.conn_headers, **o.headers}
    if o.authorization and not _has(headers, "Authorization"):
        headers["Authorization"] = o.authorization
    params = dict(o.params)
    body = o.body
    if page is not None and o.paging is not None:
        body = _place_page(o, headers, params, body, page)
    url = o.full_url()
    if o.method == "GET":
        return Request("GET", _with_query(url, params), headers)
    if params and o.keep_params_as_form is not False:
        return Request("POST", url, headers, form=params)
    if not _has(headers, "Content-Type"):
        headers["Content-Type"] = "application/json"
    return Request("POST", _with_query(url, params), headers, body=body or "")


def _fib(n: int) -> int:
    a, b = 1, 1
    for _ in range(n - 1):
        a, b = b, a + b
    return a


def backoff_ms(o: HttpOptions, attempt: int) -> int:
    """The wait after failed attempt ``attempt`` (1, 2, ...): multiplier × fib(attempt), capped."""
    return min(o.backoff_max_ms, o.backoff_multiplier_ms * _fib(attempt))


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port (the scheme's default when the URL names none), lower-cased."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


def guarded_names(o: HttpOptions) -> frozenset[str]:
    """The (lower-cased) header names a cross-origin redirect drops: the credential headers and every
    header the connection or the block sets."""
    return CREDENTIAL_HEADERS | {k.lower() for k in (*o.conn_headers, *o.headers)}


def strip_on_redirect(headers: MutableMapping[str, str], old_url: str, new_url: str,
                      names: frozenset[str]) -> list[str]:
    """Remove the ``names`` from ``headers`` when ``new_url`` is of another origin than ``old_url``;
    the names removed."""
    if origin(old_url) == origin(new_url):
        return []
    dropped = [k for k in list(headers) if k.lower() in names]
    for k in dropped:
        del headers[k]
    return dropped


def session(o: HttpOptions) -> Any:
    """A ``requests`` session that drops :func:`guarded_names` on a redirect to another origin."""
    import requests

    names = guarded_names(o)

    class GuardedSession(requests.Session):
        def rebuild_auth(self, prepared_request: Any, response: Any) -> None:
            super().rebuild_auth(prepared_request, response)
            dropped = strip_on_redirect(prepared_request.headers, response.request.url, prepared_request.url,
                                        names)
            if dropped:
                log.info("Http %s: redirected to another origin; headers %s not sent there", o.label,
                         ", ".join(sorted(dropped)))

    return GuardedSession()


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[:_SNIPPET - 3] + "..."


def _text(response: Any) -> str:
    """The body as text: the charset the response names, else UTF-8 (as SeaTunnel decodes)."""
    content_type = response.headers.get("Content-Type", "")
    charset = response.encoding if "charset=" in content_type.lower() else "utf-8"
    return bytes(response.content).decode(charset or "utf-8", "replace")


def send(o: HttpOptions, request: Request, session: Any, what: str = "") -> str:
    """The body of the answer to ``request``, after the retries (see the module's docstring)."""
    import requests

    attempts = max(1, o.retry)
    timeout = (o.connect_timeout_ms / 1000 or None, o.socket_timeout_ms / 1000 or None)
    where = f"{request.method} {o.label}{what}"
    failure = ""
    for attempt in range(1, attempts + 1):
        try:
            response = session.request(request.method, request.url, headers=dict(request.headers),
                                       data=dict(request.form) if request.form is not None else
                                       (request.body.encode("utf-8") if request.body is not None else None),
                                       timeout=timeout)
        except (requests.ConnectionError, requests.Timeout) as e:
            failure = f"{type(e).__name__}: {_snippet(_QUERY.sub('', str(e)))}"
        else:
            status = response.status_code
            if status in OK_STATUSES:
                return _text(response)
            message = (f"HTTP-02 the request failed: {where} answered {status} {response.reason or ''}".rstrip()
                       + f": {_snippet(_text(response))}")
            if not (status >= 500 or status in RETRY_STATUSES):
                raise RuntimeConfigError(message + " (a retry gets the same answer: check url, method, params, "
                                                   "headers and credentials)")
            failure = message
        if attempt < attempts:
            time.sleep(backoff_ms(o, attempt) / 1000)
    tried = f" after {attempts} attempts" if attempts > 1 else " (set retry to try again)"
    raise PipelineError(f"{failure}{tried}" if failure.startswith("HTTP-02") else
                        f"HTTP-02 the request failed: {where}: {failure}{tried}")
