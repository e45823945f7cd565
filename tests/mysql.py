"""A private MariaDB server for tests: Debian's ``mariadb-server``, a temp directory, a free port.

:func:`start` runs ``mariadb-install-db`` into a new temp directory and ``mariadbd`` listening on
127.0.0.1 only (and a Unix socket inside that directory), then creates a user with a random
password and a database it owns; :meth:`MyServer.stop` stops the server and removes the
directory. As root the server runs as root (``--user=root``). Tests talk to it through the
``mariadb`` client (:meth:`MyServer.sql`), never through the code under test.

The JDBC drivers the tests use: MySQL Connector/J from Maven's local repository (``make
test-deps`` fetches it with ``mvn dependency:get``), else Debian's MariaDB Connector/J.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .servers import free_port

MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = "/usr/bin/mariadb-install-db"
CLIENT = "/usr/bin/mariadb"
MARIADB_JAR = "/usr/share/java/mariadb-java-client.jar"
CONNECTOR_J = "com.mysql:mysql-connector-j:9.5.0"
PACKAGES = "mariadb-server libmariadb-java"
INSTALL_HINT = (f"the MySQL tests need a MariaDB server and a JDBC driver: run `make test-deps`, or as root "
                f"`apt-get install -y --no-install-recommends {PACKAGES}`")


class MyUnavailable(RuntimeError):
    """MariaDB (or a JDBC driver) is not installed, or the server does not start."""


def connector_j() -> str | None:
    """MySQL Connector/J in Maven's local repository (the highest version there, by its numbers:
    other tools fetch older ones later, so file times do not order them), if fetched."""
    group, artifact, _ = CONNECTOR_J.split(":")
    pattern = os.path.expanduser(f"~/.m2/repository/{group.replace('.', '/')}/{artifact}/*/{artifact}-*.jar")
    found = [p for p in glob.glob(pattern) if not p.endswith(("-sources.jar", "-javadoc.jar"))]
    return max(found, key=lambda p: [int(n) for n in re.findall(r"\d+", os.path.basename(p))]) if found else None


@dataclass
class MyServer:
    """A running private server: connection facts, the ``mariadb`` client (:meth:`sql`), and ``stop``."""

    root: Path  # temp directory: data/, the socket, the log
    port: int
    user: str
    password: str
    database: str
    process: subprocess.Popen | None = None

    @property
    def socket(self) -> Path:
        return self.root / "mysqld.sock"

    @property
    def url(self) -> str:
        return f"jdbc:mysql://127.0.0.1:{self.port}/{self.database}"

    def sql(self, statement: str, database: str | None = None, admin: bool = False) -> list[list[str | None]]:
        """Run SQL through the ``mariadb`` client (the test user over TCP with its password, or with
        ``admin`` root over the Unix socket); the rows of the output as strings (None for NULL)."""
        if admin:
            args = [CLIENT, "--no-defaults", f"--socket={self.socket}", "-uroot"]
        else:
            args = [CLIENT, "--no-defaults", "--protocol=TCP", "-h127.0.0.1", f"-P{self.port}", f"-u{self.user}"]
        args += ["--batch", "--skip-column-names", "--raw", "--connect-timeout=10",
                 f"--database={database or self.database}", "-e", statement]
        env = {**os.environ, "MYSQL_PWD": "" if admin else self.password}
        result = subprocess.run(args, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise RuntimeError(f"mariadb failed: {result.stderr.strip()}\n{statement}")
        return [[None if v == "NULL" else v for v in line.split("\t")] for line in result.stdout.splitlines()]

    def session(self) -> subprocess.Popen:
        """An open ``mariadb`` session reading statements from its stdin (write them, then close
        stdin): what holds a lock while a test runs something else."""
        args = [CLIENT, "--no-defaults", "--protocol=TCP", "-h127.0.0.1", f"-P{self.port}", f"-u{self.user}",
                "--batch", "--connect-timeout=10", f"--database={self.database}"]
        env = {**os.environ, "MYSQL_PWD": self.password}
        return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)  # a test server: nothing to keep
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def _wait_ready(server: MyServer, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.process is not None
        if server.process.poll() is not None:
            raise MyUnavailable(f"mariadbd exited ({server.process.returncode}): "
                                f"{log.read_text(errors='replace')[-2000:] if log.exists() else ''}")
        if server.socket.exists():
            with contextlib.suppress(RuntimeError):
                server.sql("SELECT 1", database="mysql", admin=True)
                return
        time.sleep(0.1)
    raise MyUnavailable(f"mariadbd did not become ready: {log.read_text(errors='replace')[-2000:]}")


def start(database: str = "seatunnel_test", user: str = "seatunnel") -> MyServer:
    """Start a private server with ``user`` (a random password, every privilege: the sink creates
    databases) and the database ``database``."""
    for binary in (MARIADBD, INSTALL_DB, CLIENT):
        if not os.access(binary, os.X_OK):
            raise MyUnavailable(f"{binary} is missing: {INSTALL_HINT}")
    if not os.path.isfile(MARIADB_JAR) and connector_j() is None:
        raise MyUnavailable(f"no MySQL JDBC driver ({MARIADB_JAR}, or {CONNECTOR_J} in ~/.m2): {INSTALL_HINT}")
    root = Path(tempfile.mkdtemp(prefix="seatunnel-my-"))
    server = MyServer(root, 0, user, "pw-" + secrets.token_hex(8), database)
    as_root = ["--user=root"] if os.geteuid() == 0 else []
    init = subprocess.run([INSTALL_DB, "--no-defaults", f"--datadir={root / 'data'}", "--auth-root-authentication-method=normal",
                           "--skip-test-db", "--skip-name-resolve", *as_root], capture_output=True, text=True)
    if init.returncode != 0:
        server.stop()
        raise MyUnavailable(f"mariadb-install-db failed: {init.stderr.strip()[-2000:]}")
    log = root / "server.log"
    for _ in range(5):  # the free port may be taken between the probe and the start
        server.port = free_port()
        server.process = subprocess.Popen(
            [MARIADBD, "--no-defaults", f"--datadir={root / 'data'}", f"--socket={server.socket}",
             f"--port={server.port}", "--bind-address=127.0.0.1", f"--pid-file={root / 'mysqld.pid'}",
             f"--log-error={log}", "--skip-name-resolve", f"--log-bin={root / 'binlog'}", "--binlog-format=ROW",
             "--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--server-id=1", "--innodb-buffer-pool-size=64M",
             "--innodb-log-file-size=32M", "--innodb-flush-log-at-trx-commit=0", "--max-connections=100",
             "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin", *as_root],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_ready(server, log)
            break
        except MyUnavailable:
            if "already in use" not in (log.read_text(errors="replace") if log.exists() else ""):
                server.stop()
                raise
            server.stop()
            root.mkdir(parents=True, exist_ok=True)
    else:
        server.stop()
        raise MyUnavailable("mariadbd could not bind a free port")
    try:
        server.sql(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{server.password}'; "
                   f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'127.0.0.1'; CREATE DATABASE `{database}`",
                   database="mysql", admin=True)
    except BaseException:
        server.stop()
        raise
    return server


def running(*setup_sql: str) -> contextlib.AbstractContextManager[MyServer]:
    """A private server for a test fixture, with ``setup_sql`` run first; stopped at exit. Without
    Debian's packages the test fails (never skips)."""
    from .servers import running as running_server

    return running_server(start, MyUnavailable, *setup_sql)
