"""A private Redis server for tests: Debian's ``redis-server`` on a free loopback port, a password,
no persistence, a temp directory.

:func:`start` runs ``/usr/bin/redis-server --port <free> --bind 127.0.0.1 --save '' --appendonly no
--dir <tmp> --requirepass <random>`` and waits until it answers; :meth:`RedisServer.stop` stops it
and removes the directory. Tests talk to it through the ``redis`` client (:meth:`RedisServer.client`),
never through the code under test.
"""

from __future__ import annotations

import contextlib
import os
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

SERVER = "/usr/bin/redis-server"
INSTALL_HINT = ("the Redis tests need Debian's redis-server: run `make test-deps`, or as root "
                "`apt-get install -y --no-install-recommends redis-server`")


class RedisUnavailable(RuntimeError):
    """redis-server is not installed, or it does not start."""


@dataclass
class RedisServer:
    root: Path
    port: int
    password: str
    process: subprocess.Popen

    host = "127.0.0.1"

    def client(self, db: int = 0) -> Any:
        import redis

        return redis.Redis(host=self.host, port=self.port, db=db, password=self.password, decode_responses=True)

    def options(self, db: int = 0) -> str:
        """HOCON options of a Redis block connecting to this server."""
        return f'host = "{self.host}", port = {self.port}, auth = "{self.password}", db_num = {db}'

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


def start(timeout: float = 20.0) -> RedisServer:
    if not os.access(SERVER, os.X_OK):
        raise RedisUnavailable(f"{SERVER} not found: {INSTALL_HINT}")
    root = Path(tempfile.mkdtemp(prefix="st-redis-"))
    password = "pw-" + secrets.token_hex(12)
    for _ in range(3):  # a port taken between free_port() and the bind: try another
        port = free_port()
        log = open(root / "redis.log", "wb")  # noqa: SIM115 - the server writes it while it runs
        process = subprocess.Popen([SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                    "no", "--dir", str(root), "--requirepass", password, "--daemonize", "no",
                                    "--logfile", ""], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        server = RedisServer(root, port, password, process)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(Exception):
                if server.client().ping():
                    return server
            time.sleep(0.05)
        process.kill()
        process.wait(10)
    text = (root / "redis.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(root, ignore_errors=True)
    raise RedisUnavailable(f"redis-server did not start: {text}")


@contextlib.contextmanager
def running() -> Iterator[RedisServer]:
    server = start()
    try:
        yield server
    finally:
        server.stop()
