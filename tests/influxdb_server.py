"""A private InfluxDB 1.x server for tests: Debian's ``influxd`` on free loopback ports, authentication on,
its own data, meta and WAL directories in a temp directory.

:func:`start` writes a config (HTTP and RPC bound to 127.0.0.1 on free ports, reporting, monitoring and
continuous queries off), starts ``/usr/bin/influxd -config <file>``, waits for ``/ping`` and creates an
admin user with a random password (the first user may be created without credentials);
:meth:`InfluxServer.stop` stops it and removes the directory. Tests talk to it through plain HTTP
(:meth:`InfluxServer.query`, :meth:`InfluxServer.write`), never through the code under test.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .servers import free_port, stop_process

SERVER = "/usr/bin/influxd"
INSTALL_HINT = ("the InfluxDB tests need Debian's influxdb: run `make test-deps`, or as root "
                "`apt-get install -y --no-install-recommends influxdb`")


class InfluxUnavailable(RuntimeError):
    """influxd is not installed, or it does not start."""


@dataclass
class InfluxServer:
    root: Path
    port: int
    user: str
    password: str
    process: subprocess.Popen

    host = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _call(self, path: str, params: dict[str, str], body: bytes | None = None, auth: bool = True) -> bytes:
        req = urllib.request.Request(f"{self.url}{path}?{urllib.parse.urlencode(params)}", data=body,
                                     method="POST" if body is not None else "GET")
        if auth:
            token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
            req.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(req, timeout=30) as response:
            return bytes(response.read())

    def execute(self, statement: str, db: str | None = None, auth: bool = True) -> Any:
        params = {"db": db} if db else {}
        return json.loads(self._call("/query", params, urllib.parse.urlencode({"q": statement}).encode(), auth)
                          or b"{}")

    def query(self, q: str, db: str) -> list[dict[str, Any]]:
        """The rows of ``q`` as dicts (time in ns)."""
        answer = json.loads(self._call("/query", {"db": db, "q": q, "epoch": "n"}))
        rows = []
        for result in answer.get("results", ()):
            assert "error" not in result, result
            for series in result.get("series", ()):
                for values in series["values"]:
                    rows.append({**(series.get("tags") or {}), **dict(zip(series["columns"], values, strict=True))})
        return rows

    def write(self, db: str, lines: list[str]) -> None:
        self._call("/write", {"db": db, "precision": "ns"}, "\n".join(lines).encode())

    def reset(self, *dbs: str) -> None:
        for db in dbs:
            self.execute(f'DROP DATABASE "{db}"')
            self.execute(f'CREATE DATABASE "{db}"')

    def options(self) -> str:
        """HOCON options of an InfluxDB block connecting to this server."""
        return f'url = "{self.url}", username = "{self.user}", password = "{self.password}"'

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


def _config(root: Path, port: int, rpc: int) -> Path:
    path = root / "influxdb.conf"
    path.write_text(f"""reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"
[meta]
  dir = "{root}/meta"
[data]
  dir = "{root}/data"
  wal-dir = "{root}/wal"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:{port}"
  auth-enabled = true
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
""")
    return path


def start(timeout: float = 30.0) -> InfluxServer:
    if not os.access(SERVER, os.X_OK):
        raise InfluxUnavailable(f"{SERVER} not found: {INSTALL_HINT}")
    root = Path(tempfile.mkdtemp(prefix="st-influx-"))
    password = "pw-" + secrets.token_hex(12)
    for _ in range(3):  # a port taken between free_port() and the bind: try another
        port, rpc = free_port(), free_port()
        log = open(root / "influxd.log", "wb")  # noqa: SIM115 - the server writes it while it runs
        process = subprocess.Popen([SERVER, "-config", str(_config(root, port, rpc))], stdout=log,
                                   stderr=subprocess.STDOUT, env={**os.environ, "HOME": str(root)})
        log.close()
        server = InfluxServer(root, port, "admin", password, process)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(Exception):
                server._call("/ping", {}, auth=False)
                server.execute(f"CREATE USER admin WITH PASSWORD '{password}' WITH ALL PRIVILEGES", auth=False)
                return server
            time.sleep(0.05)
        process.kill()
        process.wait(10)
    text = (root / "influxd.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(root, ignore_errors=True)
    raise InfluxUnavailable(f"influxd did not start: {text}")


@contextlib.contextmanager
def running() -> Iterator[InfluxServer]:
    server = start()
    try:
        yield server
    finally:
        server.stop()
