"""A real Spark Connect server for Connect-mode tests: the package's own launcher
(``runtime/connect_server.py``), on a free loopback port, clients authenticated by a token."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_provider_seatunnel.runtime import connect_server
from airflow_provider_seatunnel.runtime.remote import connect_mode

from .servers import free_port, on_a_free_port


@dataclass(frozen=True)
class ConnectServer:
    address: str  # sc://localhost:PORT
    port: int
    token: str
    log: Path
    directory: Path


@contextmanager
def connect_server_running(directory: Path, master: str = "local[2]",
                           conf: dict[str, str] | None = None) -> Iterator[ConnectServer]:
    def start_once() -> tuple[int, Any]:
        port = free_port()
        return port, connect_server.start(directory, port=port, master=master, conf=conf)

    port, server = on_a_free_port(start_once, RuntimeError)
    try:
        yield ConnectServer(server.address, port, connect_server.token(directory), server.log, directory)
    finally:
        connect_server.stop(directory)


def connect_session(url: str) -> Any:
    """A Connect session of ``url`` for a test to look at the server with; PySpark's Connect switch is
    not left on in the test process (a classic session may follow in it)."""
    from pyspark.sql.connect.session import SparkSession

    with connect_mode():
        return SparkSession.builder.remote(url).create()
