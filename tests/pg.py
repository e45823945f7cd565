"""A private PostgreSQL server for tests: Debian's server binaries, a temp directory, a free port.

:func:`start` runs ``initdb`` into a new temp directory and ``pg_ctl start`` listening on
127.0.0.1 only (and a Unix socket inside that directory), creates a password-authenticated
user and a database it owns; :meth:`PgServer.stop` stops the server and removes the
directory. As root, the server runs as the ``postgres`` OS user (PostgreSQL refuses to run
as root) through ``runuser``. Tests talk to it through ``psql`` (:meth:`PgServer.sql`), never
through the code under test.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .servers import free_port

JDBC_JAR = "/usr/share/java/postgresql.jar"
PACKAGES = "postgresql libpostgresql-jdbc-java"
INSTALL_HINT = (f"the Jdbc tests need a PostgreSQL server and its JDBC driver: run `make test-deps`, or as root "
                f"`apt-get install -y --no-install-recommends {PACKAGES}`")


class PgUnavailable(RuntimeError):
    """PostgreSQL (or its JDBC driver) is not installed, or the server does not start."""


def bin_dir() -> Path:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding initdb and pg_ctl."""
    found = [Path(d) for d in glob.glob("/usr/lib/postgresql/*/bin")
             if os.access(os.path.join(d, "initdb"), os.X_OK) and os.access(os.path.join(d, "pg_ctl"), os.X_OK)]
    if not found:
        raise PgUnavailable(f"no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: {INSTALL_HINT}")
    return max(found, key=lambda p: [int(x) if x.isdigit() else 0 for x in p.parent.name.split(".")])


@dataclass
class PgServer:
    """A running private server: connection facts, ``psql`` (:meth:`sql`), and ``stop``."""

    bindir: Path
    root: Path  # temp directory: data/, the socket, the log
    port: int
    user: str
    password: str
    database: str
    os_user: str | None  # the OS user running the server (root → "postgres"), None = ourselves

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{self.database}"

    def _run(self, args: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
        cmd = ["runuser", "-u", self.os_user, "--", *args] if self.os_user else args
        result = subprocess.run(cmd, capture_output=True, text=True, **kw)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed ({result.returncode}): {result.stderr.strip()}")
        return result

    def sql(self, statement: str, database: str | None = None, admin: bool = False) -> list[list[str | None]]:
        """Run SQL through psql (the test user over TCP with its password, or with ``admin`` the
        superuser over the Unix socket); return the rows of the last statement as strings (None for NULL)."""
        if admin:
            args = [str(self.bindir / "psql"), "-h", str(self.root), "-p", str(self.port), "-U", "postgres"]
        else:
            args = [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user]
        args += ["-d", database or self.database, "-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv", "-t",
                 "-P", "null=\\N", "-c", statement]
        env = {**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"}
        result = self._run(args, check=False, env=env)
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr.strip()}\n{statement}")
        return [[None if v == "\\N" else v for v in row] for row in csv.reader(io.StringIO(result.stdout))]

    def session(self) -> subprocess.Popen:
        """An open psql session reading statements from its stdin (write them, then close stdin):
        what holds a lock while a test runs something else."""
        args = [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user,
                "-d", self.database, "-X", "-q", "-v", "ON_ERROR_STOP=1"]
        env = {**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"}
        cmd = ["runuser", "-u", self.os_user, "--", *args] if self.os_user else args
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                      check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def start(database: str = "seatunnel_test", user: str = "seatunnel") -> PgServer:
    """Start a private server with ``user`` (a random password) owning ``database``."""
    bindir = bin_dir()
    if not os.path.isfile(JDBC_JAR):
        raise PgUnavailable(f"the PostgreSQL JDBC driver {JDBC_JAR} is missing: {INSTALL_HINT}")
    os_user = None
    root = Path(tempfile.mkdtemp(prefix="seatunnel-pg-"))
    if os.geteuid() == 0:
        os_user = "postgres"
        try:
            entry = pwd.getpwnam(os_user)
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            raise PgUnavailable(f"running as root needs the 'postgres' OS user (the server package creates it): "
                                f"{INSTALL_HINT}") from None
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = PgServer(bindir, root, 0, user, "pw-" + secrets.token_hex(8), database, os_user)
    init = server._run([str(bindir / "initdb"), "-D", str(server.data), "-U", "postgres", "--auth-local=trust",
                        "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"], check=False)
    if init.returncode != 0:
        server.stop()
        raise PgUnavailable(f"initdb failed: {init.stderr.strip()}")
    options = ("-c listen_addresses=127.0.0.1 -c unix_socket_directories={sock} -c fsync=off "
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60 -c wal_level=logical "
               "-c max_replication_slots=20 -c max_wal_senders=20 -p {port}")
    for _ in range(5):  # the free port may be taken between the probe and the start
        server.port = free_port()
        started = server._run([str(bindir / "pg_ctl"), "-D", str(server.data), "-l", str(root / "server.log"),
                               "-w", "-t", "30", "-o", options.format(sock=root, port=server.port), "start"],
                              check=False)
        if started.returncode == 0:
            break
        time.sleep(0.2)
    else:
        log = (root / "server.log").read_text(errors="replace")[-2000:] if (root / "server.log").exists() else ""
        server.stop()
        raise PgUnavailable(f"pg_ctl start failed: {started.stderr.strip()}\n{log}")
    try:
        server.sql(f"CREATE USER {user} WITH REPLICATION PASSWORD '{server.password}'", database="postgres",
                   admin=True)
        server.sql(f"CREATE DATABASE {database} OWNER {user}", database="postgres", admin=True)
        server.sql(f"GRANT ALL ON SCHEMA public TO {user}", admin=True)
    except BaseException:
        server.stop()
        raise
    return server


def running(*setup_sql: str) -> contextlib.AbstractContextManager[PgServer]:
    """A private server for a test fixture, with ``setup_sql`` run first; stopped at exit. Without
    Debian's binaries the test fails (never skips)."""
    from .servers import running as running_server

    return running_server(start, PgUnavailable, *setup_sql)
