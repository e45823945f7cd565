"""A Spark Connect server from the installed PySpark, for Connect mode (:mod:`.remote`) on this
machine or on a standalone cluster: ``make connect-server`` / ``make connect-server-stop``.

    python -m airflow_provider_seatunnel.runtime.connect_server start --dir DIR [--port 15002]
        [--host 127.0.0.1] [--master local[*]] [--conf KEY=VALUE ...] [--no-token]
    python -m airflow_provider_seatunnel.runtime.connect_server stop --dir DIR

The server runs in the background (its pid, log and token under ``DIR``), bound to ``--host``
(loopback by default). Unless ``--no-token``, clients must present a token: a random one is
written to ``DIR/token`` (0600) on first start and handed to the server through its environment
(``SPARK_CONNECT_AUTHENTICATE_TOKEN``), never on a command line. PySpark's client sends a token
without TLS only to ``localhost``: a server on another host needs TLS in front of it
(docs/deployment.md). The server's Python workers (for the connectors' Python code in Spark's
tasks) are this Python, so this package must be installed where the server runs.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..spi.safe_files import ensure_private_dir, open_write, read_regular, write_atomic

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
STARTED = "Spark Connect server started"


@dataclass(frozen=True)
class Server:
    """A started server: its pid, where clients connect (``address``, ``sc://...``) and its log."""

    pid: int
    address: str
    log: Path
    token_file: Path | None


def token(directory: Path) -> str:
    """The server's token: ``directory/token``, made (0600, random, ``O_EXCL``) when missing. An existing
    one is used only when it is a regular file of this user that no one else may read or write: a
    symlink there (which would hand the server a token someone else chose or knows) is refused."""
    path = directory / "token"
    if not os.path.lexists(path):
        with open_write(str(path), exclusive=True, mode=stat.S_IRUSR | stat.S_IWUSR, what="the token") as f:
            f.write(secrets.token_urlsafe(32))
    return read_regular(str(path), 4096, private=True).decode("utf-8").strip()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie (our own child, not reaped yet) is not a server
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def running(directory: Path) -> int | None:
    """The pid of the server started from ``directory`` while it runs, else None."""
    try:  # never through a symlink: a planted pid file must not make stop() signal another process
        pid = int(read_regular(str(directory / "server.pid"), 64))
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def start(directory: Path, port: int = 15002, host: str = "127.0.0.1", master: str = "local[*]",
          conf: Mapping[str, str] | None = None, use_token: bool = True, wait: float = 180.0) -> Server:
    """Start a server in the background and wait until it accepts connections (RuntimeError, with
    its log's end, when it does not within ``wait`` seconds). Its Spark settings go to a 0600
    properties file, not to the command line."""
    from .launcher import pyspark_home, submit_environment, write_properties_file

    ensure_private_dir(str(directory))  # 0700, this user's, not a symlink
    env = submit_environment()
    if use_token:
        env[TOKEN_ENV] = token(directory)
    settings = {"spark.connect.grpc.binding.address": host, "spark.connect.grpc.binding.port": str(port),
                "spark.sql.timeType.enabled": "true", "spark.sql.session.timeZone": "UTC", **(conf or {})}
    properties = write_properties_file(settings, directory / "server.properties", env)
    log = directory / "server.log"
    cmd = [str(pyspark_home() / "bin" / "spark-submit"), "--master", master, "--name", "Spark Connect server",
           "--class", SERVER_CLASS, "--properties-file", str(properties), "spark-internal"]
    with open_write(str(log), what="the server's log") as out:  # a symlink at its name is refused
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    write_atomic(str(directory / "server.pid"), str(proc.pid), 0o600, "the pid file")
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if STARTED in log.read_text(errors="replace") and _listening(host, port):
            shown = "localhost" if host in ("127.0.0.1", "localhost") else host
            return Server(proc.pid, f"sc://{shown}:{port}", log, directory / "token" if use_token else None)
        time.sleep(0.5)
    stop(directory)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    raise RuntimeError(f"the Spark Connect server did not start within {wait:.0f} s; the end of {log}:\n{tail}")


def stop(directory: Path, timeout: float = 30.0) -> int | None:
    """Stop the server started from ``directory`` (SIGTERM, then SIGKILL); its pid, or None if none ran."""
    pid = running(directory)
    (directory / "server.pid").unlink(missing_ok=True)
    if pid is None:
        return None
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pid, sig)
        except OSError:
            return pid
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if not _alive(pid):
            break
    return pid


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="connect_server", description="A Spark Connect server for Connect mode.")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start")
    s.add_argument("--dir", required=True, type=Path)
    s.add_argument("--port", type=int, default=15002)
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    s.add_argument("--master", default="local[*]")
    s.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    s.add_argument("--no-token", action="store_true", help="accept clients without a token")
    t = sub.add_parser("stop")
    t.add_argument("--dir", required=True, type=Path)
    args = ap.parse_args(argv)
    if args.command == "stop":
        pid = stop(args.dir)
        print(f"stopped the Spark Connect server (pid {pid})" if pid else "no Spark Connect server was running")
        return 0
    pid = running(args.dir)
    if pid is not None:
        print(f"a Spark Connect server is already running (pid {pid}); make connect-server-stop stops it")
        return 0
    conf = dict(item.split("=", 1) for item in args.conf if "=" in item)
    try:
        server = start(args.dir, args.port, args.host, args.master, conf, use_token=not args.no_token)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"Spark Connect server: {server.address} (master {args.master}; pid {server.pid}; log {server.log})")
    host, port = server.address[len("sc://"):].rsplit(":", 1)
    password = f', "password": "\'"$(cat {server.token_file})"\'"' if server.token_file else ""
    print(f"Airflow connection: export AIRFLOW_CONN_SPARK_CONNECT='{{\"conn_type\": \"spark_connect\", "
          f"\"host\": \"{host}\", \"port\": {port}{password}}}'")
    if server.token_file:
        print(f"command line: export {TOKEN_ENV}=\"$(cat {server.token_file})\"; "
              f"seatunnel-airflow run JOB.conf --remote {server.address}")
    print("stop: make connect-server-stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
