"""A real HTTP server for the Http source's tests: the standard library's ``ThreadingHTTPServer`` on a
free loopback port, in a daemon thread.

Tests give it routes (``server.route("/path", handler)``): a handler gets the :class:`Seen` request
and returns ``(status, body)`` or ``(status, body, headers)``, where a body that is not a string is
sent as JSON. Every request is recorded in ``server.seen`` (method, path, query, headers, body,
form) so that a test can check what the connector sent. Requests to an unknown path answer 404.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .servers import free_port


@dataclass(frozen=True)
class Seen:
    """One request as the server received it (a query or form parameter given once is a string)."""

    method: str
    path: str
    query: dict[str, Any]
    headers: dict[str, str]
    body: str
    form: dict[str, Any] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


Handler = Callable[[Seen], tuple]


def _flat(parsed: dict[str, list[str]]) -> dict[str, Any]:
    return {k: v[0] if len(v) == 1 else v for k, v in parsed.items()}


@dataclass
class HttpServer:
    server: ThreadingHTTPServer
    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    host = "127.0.0.1"

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def reset(self) -> None:
        with self.lock:
            self.routes.clear()
            self.seen.clear()

    def requests_to(self, path: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.path == path]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler_class(state: list[HttpServer]) -> type[BaseHTTPRequestHandler]:
    class Handle(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _serve(self) -> None:
            server = state[0]
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            form = _flat(parse_qs(body)) if "form-urlencoded" in (self.headers.get("Content-Type") or "") else {}
            seen = Seen(self.command, parts.path, _flat(parse_qs(parts.query, keep_blank_values=True)),
                        dict(self.headers.items()), body, form)
            with server.lock:
                server.seen.append(seen)
                handler = server.routes.get(parts.path)
            try:
                answer = handler(seen) if handler else (404, {"error": f"no route {parts.path}"})
            except Exception as e:  # a broken test handler: say so rather than drop the connection
                answer = (500, f"test handler failed: {e!r}")
            status, payload = answer[0], answer[1]
            headers = dict(answer[2]) if len(answer) > 2 else {}
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
            self.send_response(status)
            headers.setdefault("Content-Type", "application/json" if not isinstance(payload, str) else "text/plain")
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

    return Handle


@contextlib.contextmanager
def running() -> Iterator[HttpServer]:
    """A started server; stopped at exit. A port lost to another process between choosing and
    binding it is retried."""
    state: list[HttpServer] = []
    for attempt in range(5):
        try:
            httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), _handler_class(state))
            break
        except OSError:
            if attempt == 4:
                raise
    httpd.daemon_threads = True
    server = HttpServer(httpd)
    state.append(server)
    thread = threading.Thread(target=httpd.serve_forever, name="test-http-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
