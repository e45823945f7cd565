"""A ClickHouse stand-in: ClickHouse's HTTP interface on loopback, every query run by ClickHouse's own engine
in-process (chDB, PyPI's ``chdb``/``chdb-core``), in a persistent session directory of its own.

No ClickHouse server can be installed here (no Debian package; chDB is the engine as a library), so the
ClickHouse connector is tested against this real HTTP server. Tables, MergeTree parts, types, ``ALTER``
(``MOVE PARTITION``, mutations, lightweight ``DELETE``), ``INSERT ... FORMAT`` parsing and SQL errors are
ClickHouse's own; the HTTP layer is this file's, and follows ClickHouse's documented interface:

* ``GET /ping`` answers ``Ok.``;
* ``GET|POST /?query=...``: with a POST body the body continues the query (an ``INSERT ... FORMAT
  JSONEachRow``'s rows); a POST without ``query`` carries the query in its body;
* credentials as ``X-ClickHouse-User``/``X-ClickHouse-Key`` headers, basic auth, or ``user``/``password``
  parameters; wrong ones answer HTTP 401 with ``Code: 516. DB::Exception: ... (AUTHENTICATION_FAILED)``;
* ``database`` is the query's current database; ``default_format`` its output format (TabSeparated);
  ``query_id``, ``session_id`` and ``param_*`` are accepted and ignored; every other parameter is a setting,
  applied with ``SET`` for the one request (then set back);
* an error answers HTTP 500 with ClickHouse's text ``Code: N. DB::Exception: ...`` and the header
  ``X-ClickHouse-Exception-Code``; a success carries ``X-ClickHouse-Summary`` (``read_rows``, ``read_bytes``).

What differs from a ClickHouse server: one user; queries run one at a time (one chDB session, under a
lock); no compression, sessions, progress headers or HTTP status codes other than 200, 401 and 500.
Run as ``python -m tests.clickhouse_server <session dir>`` (user and password from the environment
``CH_USER``/``CH_PASSWORD``, never the command line); it prints ``READY <port>`` once listening.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .servers import stop_process

INSTALL_HINT = ("the ClickHouse tests need PyPI's chdb and chdb-core: the extra clickhouse-stand-in, which `make venv` "
                "installs (pip install -e '.[test,clickhouse-stand-in]')")
_IGNORED = {"query", "database", "default_format", "user", "password", "query_id", "session_id", "compress",
            "decompress", "wait_end_of_query", "buffer_size"}
_CODE = re.compile(r"Code: (\d+)\.")


class ClickHouseUnavailable(RuntimeError):
    """chDB is not installed, or the stand-in does not start."""


def _serve(path: str, user: str, password: str) -> None:
    from chdb import session

    db = session.Session(path)
    lock = threading.Lock()

    def run(sql: str, fmt: str, database: str, settings: dict[str, str]) -> tuple[bytes, int, int]:
        with lock:
            db.query(f"USE `{database}`" if database else "USE default", "TabSeparated")
            old = {}
            for key, value in settings.items():
                if not re.fullmatch(r"[A-Za-z0-9_]+", key):
                    raise RuntimeError(f"Code: 115. DB::Exception: Unknown setting '{key}'. (UNKNOWN_SETTING)")
                old[key] = db.query(f"SELECT toString(getSetting('{key}'))", "TabSeparated").bytes().decode().strip()
                db.query(f"SET {key} = '{value.replace(chr(39), chr(92) + chr(39))}'", "TabSeparated")
            try:
                result = db.query(sql, fmt)
                return result.bytes(), int(result.rows_read()), int(result.bytes_read())
            finally:
                for key, value in old.items():
                    db.query(f"SET {key} = '{value.replace(chr(39), chr(92) + chr(39))}'", "TabSeparated")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "text/plain; charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _credentials(self, params: dict[str, str]) -> tuple[str, str]:
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                name, _, key = base64.b64decode(auth[6:]).decode().partition(":")
                return name, key
            if self.headers.get("X-ClickHouse-User") is not None:
                return self.headers["X-ClickHouse-User"], self.headers.get("X-ClickHouse-Key", "")
            return params.get("user", "default"), params.get("password", "")

        def _handle(self, body: bytes) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/ping":
                self._answer(200, b"Ok.\n")
                return
            params = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
            name, key = self._credentials(params)
            if (name, key) != (user, password):
                self._answer(401, f"Code: 516. DB::Exception: {name}: Authentication failed: password is incorrect, "
                                  "or there is no user with such name. (AUTHENTICATION_FAILED)\n".encode(),
                             {"X-ClickHouse-Exception-Code": "516"})
                return
            query = params.get("query")
            sql = body.decode("utf-8") if query is None else query + ("\n" + body.decode("utf-8") if body else "")
            settings = {k: v for k, v in params.items() if k not in _IGNORED and not k.startswith("param_")}
            try:
                out, rows, size = run(sql, params.get("default_format", "TabSeparated"), params.get("database", ""),
                                      settings)
            except Exception as e:  # chDB's error text is ClickHouse's
                text = str(e)
                code = _CODE.search(text)
                self._answer(500, (text.strip() + "\n").encode(),
                             {"X-ClickHouse-Exception-Code": code.group(1) if code else "1001"})
                return
            summary = json.dumps({"read_rows": str(rows), "read_bytes": str(size)})
            self._answer(200, out, {"X-ClickHouse-Summary": summary, "X-ClickHouse-Format":
                                    params.get("default_format", "TabSeparated")})

        def do_GET(self) -> None:
            self._handle(b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._handle(self.rfile.read(length) if length else b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


@dataclass
class ClickHouseServer:
    """A running stand-in: its port, credentials and session directory."""

    root: Path
    port: int
    user: str
    password: str
    process: subprocess.Popen

    host = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def query(self, sql: str, body: bytes | None = None) -> str:
        """Run ``sql`` (the tests' own client, never the code under test); its output as text."""
        params = urllib.parse.urlencode({"query": sql})
        req = urllib.request.Request(f"{self.url}/?{params}", data=body if body is not None else b"", method="POST")
        req.add_header("X-ClickHouse-User", self.user)
        req.add_header("X-ClickHouse-Key", self.password)
        with urllib.request.urlopen(req, timeout=60) as response:
            return bytes(response.read()).decode()

    def rows(self, sql: str) -> list[dict[str, Any]]:
        """The rows of ``sql`` as dicts (JSONEachRow)."""
        return [json.loads(line) for line in self.query(sql + " FORMAT JSONEachRow").splitlines() if line]

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


def start(user: str = "seatunnel", password: str = "ch-Secret-1") -> ClickHouseServer:
    """Start the stand-in in a subprocess over a fresh session directory."""
    try:
        import chdb  # noqa: F401
    except ImportError as e:
        raise ClickHouseUnavailable(INSTALL_HINT) from e
    root = Path(tempfile.mkdtemp(prefix="clickhouse-standin-"))
    env = {**os.environ, "CH_USER": user, "CH_PASSWORD": password}
    process = subprocess.Popen([sys.executable, "-m", "tests.clickhouse_server", str(root / "session")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                               cwd=str(Path(__file__).resolve().parent.parent))
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("READY "):
        stop_process(process)
        shutil.rmtree(root, ignore_errors=True)
        raise ClickHouseUnavailable(f"the ClickHouse stand-in did not start: {line!r}")
    return ClickHouseServer(root, int(line.split()[1]), user, password, process)


@contextlib.contextmanager
def running() -> Iterator[ClickHouseServer]:
    server = start()
    try:
        yield server
    finally:
        server.stop()


if __name__ == "__main__":
    _serve(sys.argv[1], os.environ.get("CH_USER", "default"), os.environ.get("CH_PASSWORD", ""))
