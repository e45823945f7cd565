"""A private FerretDB server for tests: MongoDB's wire protocol over SQLite files in a temp directory,
on a free loopback port, with authentication (a random user and password).

:data:`SERVER` is the binary ``make test-deps`` builds from the Go module (``.cache/ferretdb``, the
Makefile's FERRETDB); :func:`start` runs it with ``--handler=sqlite --test-enable-new-auth`` and a setup
user, and waits until it answers; :meth:`FerretServer.stop` stops it and removes the directory. Tests talk
to it through ``pymongo`` (:meth:`FerretServer.client`), never through the code under test.

What FerretDB 1.24 lacks that MongoDB has (found against this server): multi-document transactions,
change streams (``$changeStream``), ``noCursorTimeout`` and the decimal128 type (a document holding
one closes the connection).
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .servers import free_port, stop_process

VERSION = "v1.24.2"
SERVER = Path(__file__).resolve().parent.parent / ".cache" / "ferretdb" / f"ferretdb-{VERSION}"
INSTALL_HINT = "the MongoDB tests need FerretDB built by `make test-deps` (Go and the Go module proxy)"


class FerretUnavailable(RuntimeError):
    """FerretDB is not built, or it does not start."""


@dataclass
class FerretServer:
    root: Path
    port: int
    user: str
    password: str
    process: subprocess.Popen

    host = "127.0.0.1"

    @property
    def uri(self) -> str:
        return f"mongodb://{self.user}:{self.password}@{self.host}:{self.port}/?authSource=admin"

    def client(self) -> Any:
        import pymongo

        return pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=5000, tz_aware=True)

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


def start(timeout: float = 30.0) -> FerretServer:
    if not SERVER.exists():
        raise FerretUnavailable(f"{SERVER} not found: {INSTALL_HINT}")
    root = Path(tempfile.mkdtemp(prefix="st-ferretdb-"))
    (root / "data").mkdir()
    user, password = "stu", "pw-" + secrets.token_hex(12)
    for _ in range(3):  # a port taken between free_port() and the bind: try another
        port = free_port()
        log = open(root / "ferretdb.log", "wb")  # noqa: SIM115 - the server writes it while it runs
        process = subprocess.Popen(
            [str(SERVER), "--handler=sqlite", f"--sqlite-url=file:{root / 'data'}/", f"--listen-addr=127.0.0.1:{port}",
             "--debug-addr=-", f"--state-dir={root}", "--telemetry=disable", "--log-level=warn",
             "--test-enable-new-auth", "--setup-database=admin", f"--setup-username={user}",
             f"--setup-password={password}"], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        server = FerretServer(root, port, user, password, process)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(Exception):
                client = server.client()
                try:
                    client.admin.command("ping")
                    client.test.list_collection_names()  # authenticated
                    return server
                finally:
                    client.close()
            time.sleep(0.1)
        process.kill()
        process.wait(10)
    text = (root / "ferretdb.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(root, ignore_errors=True)
    raise FerretUnavailable(f"FerretDB did not start: {text}")


@contextlib.contextmanager
def running() -> Iterator[FerretServer]:
    server = start()
    try:
        yield server
    finally:
        server.stop()
