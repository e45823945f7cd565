"""Connect mode in the restore trials (restore_faults.py): the LocalFile job's pipelines run as
sessions of a Spark Connect server (``runtime/connect_server.py``: ``local[2]``, a token, a free
loopback port), started once per benchmark run.

Two crashes: ``client`` SIGKILLs the command line's process, what a task whose worker dies is (the
pipeline ran in it); ``server`` kills the Connect server and starts it again on the same port, so
every session is lost in the middle of the pipeline. The restore runs against the server as it then is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_provider_seatunnel.runtime import connect_server

READING = ("The targets are LocalFile's (json + partitioned csv), as in the LocalFile trials, written by "
           "pipelines that run as Spark Connect sessions (`seatunnel-airflow run --remote`). *Visible after "
           "attempt 1* is what the LocalFile source reads per sink; *raw files* counts the data files a naive "
           "listing sees.")
JDBC_READING = (" The pipelines run as Spark Connect sessions (`seatunnel-airflow run --remote`): Spark's JDBC writes "
                "on the server, the staging tables' creation, save modes and commits through the Python driver "
                "(psycopg) in the killed process.")


@dataclass
class Server:
    """The trials' Connect server: where it is, and how to kill and restart it."""

    directory: Path
    port: int
    restarts: int = 0
    address: str = ""
    token: str = field(default="", repr=False)

    def start(self) -> None:
        started = connect_server.start(self.directory, port=self.port, master="local[2]")
        self.address, self.token = started.address, connect_server.token(self.directory)

    def restart(self) -> None:
        """SIGKILL the server's process group (no graceful stop), then start it again on the same port."""
        pid = connect_server.running(self.directory)
        if pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
        connect_server.stop(self.directory, timeout=5)
        self.start()
        self.restarts += 1


def server(resources: Any) -> Server:
    """The benchmark run's server, started on first use and stopped when the run ends."""
    if getattr(resources, "connect", None) is None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        running = Server(Path(tempfile.mkdtemp(prefix="restore-connect-")), port)
        running.start()
        resources.callback(connect_server.stop, running.directory)
        resources.connect = running
    return resources.connect


def crash(proc: subprocess.Popen, server: Server, kind: str) -> None:
    """A trial's crash: SIGKILL of the command line ``proc`` (``client``), or the server restarted (``server``)."""
    if kind == "client":
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
    else:
        server.restart()


def command(server: Server) -> tuple[list[str], dict[str, str]]:
    """The command line's arguments and environment that run on ``server``."""
    return ["--remote", server.address], {connect_server.TOKEN_ENV: server.token}
