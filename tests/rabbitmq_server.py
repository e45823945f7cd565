"""A private RabbitMQ node for tests: Debian's ``rabbitmq-server`` run unprivileged, without systemd,
on free loopback ports, with its own data, logs, config, Erlang cookie and port mapper (epmd).

:func:`start` writes a ``rabbitmq.conf`` (the AMQP listener on ``127.0.0.1:<free>``, a random user and
password, no guest), starts ``epmd`` on a free port of its own (so that no system-wide epmd is started or
reused) and the node with ``RABBITMQ_NODENAME``, ``RABBITMQ_MNESIA_BASE``, ``RABBITMQ_LOG_BASE``,
``RABBITMQ_DIST_PORT`` and ``HOME`` under a temp directory, and waits until an AMQP login succeeds.
:meth:`RabbitMQServer.stop` kills the node's process group and the port mapper, and removes the directory.
Tests look at queues through ``pika`` (:meth:`RabbitMQServer.channel`), never through the code under test.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import servers
from .servers import free_port

SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
EPMD_GLOB = "/usr/lib/erlang/erts-*/bin/epmd"
INSTALL_HINT = ("the RabbitMQ tests need Debian's rabbitmq-server: run `make test-deps`, or as root "
                "`apt-get install -y --no-install-recommends rabbitmq-server`")


class RabbitMQUnavailable(RuntimeError):
    """rabbitmq-server is not installed, or the node does not start."""


def _epmd() -> str | None:
    import glob

    found = sorted(glob.glob(EPMD_GLOB))
    return found[-1] if found else None


@dataclass
class RabbitMQServer:
    root: Path
    port: int
    user: str
    password: str
    node: subprocess.Popen
    epmd: subprocess.Popen

    host = "127.0.0.1"

    def connection(self) -> Any:
        import pika

        return pika.BlockingConnection(pika.ConnectionParameters(
            self.host, self.port, "/", pika.PlainCredentials(self.user, self.password), connection_attempts=3))

    @contextlib.contextmanager
    def channel(self) -> Iterator[Any]:
        conn = self.connection()
        try:
            yield conn.channel()
        finally:
            with contextlib.suppress(Exception):
                conn.close()

    def options(self) -> str:
        """HOCON options of a RabbitMQ block connecting to this node."""
        return (f'host = "{self.host}", port = {self.port}, virtual_host = "/", username = "{self.user}", '
                f'password = "{self.password}"')

    def publish(self, queue: str, bodies: list[bytes | str]) -> None:
        """Declare ``queue`` (durable, as the connector's default) and publish ``bodies`` with confirms."""
        with self.channel() as ch:
            ch.queue_declare(queue, durable=True)
            ch.confirm_delivery()
            for body in bodies:
                ch.basic_publish("", queue, body.encode() if isinstance(body, str) else body)

    def drain(self, queue: str) -> list[bytes]:
        """Every message ready in ``queue``, acknowledged (the queue is left empty)."""
        out: list[bytes] = []
        with self.channel() as ch:
            while True:
                method, _, body = ch.basic_get(queue, auto_ack=True)
                if method is None:
                    return out
                out.append(body)

    def count(self, queue: str) -> int:
        """Messages ready in ``queue`` (0 when it does not exist)."""
        import pika

        try:
            with self.channel() as ch:
                return int(ch.queue_declare(queue, passive=True).method.message_count)
        except pika.exceptions.ChannelClosedByBroker:
            return 0

    def delete(self, *queues: str) -> None:
        with self.channel() as ch:
            for queue in queues:
                ch.queue_delete(queue)

    def stop(self) -> None:
        for process in (self.node, self.epmd):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


def _environment(root: Path, port: int, dist: int, epmd_port: int) -> dict[str, str]:
    name = f"st{port}@localhost"
    return {**os.environ, "HOME": str(root), "RABBITMQ_NODENAME": name, "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(port), "RABBITMQ_DIST_PORT": str(dist), "ERL_EPMD_PORT": str(epmd_port),
            "ERL_EPMD_ADDRESS": "127.0.0.1", "RABBITMQ_MNESIA_BASE": str(root / "mnesia"),
            "RABBITMQ_LOG_BASE": str(root / "log"), "RABBITMQ_CONFIG_FILE": str(root / "rabbitmq"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(root / "enabled_plugins"), "RABBITMQ_PID_FILE": str(root / "pid"),
            "RABBITMQ_LOGS": "-", "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "+S 2:2 +sbwt none",
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(root / "advanced.config")}


def _try_start(root: Path, timeout: float) -> RabbitMQServer | None:
    epmd_bin = _epmd()
    if epmd_bin is None:
        raise RabbitMQUnavailable(f"epmd not found ({EPMD_GLOB}): {INSTALL_HINT}")
    port, dist, epmd_port = free_port(), free_port(), free_port()
    user, password = "st-" + secrets.token_hex(4), "pw-" + secrets.token_hex(12)
    (root / "rabbitmq.conf").write_text(
        f"listeners.tcp.default = 127.0.0.1:{port}\nloopback_users = none\ndefault_user = {user}\n"
        f"default_pass = {password}\n")
    (root / "enabled_plugins").write_text("[].\n")
    (root / "advanced.config").write_text("[].\n")
    env = _environment(root, port, dist, epmd_port)
    epmd = subprocess.Popen([epmd_bin, "-port", str(epmd_port), "-address", "127.0.0.1"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    log = open(root / "node.log", "wb")  # noqa: SIM115 - the node writes it while it runs
    node = subprocess.Popen([SERVER], env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    server = RabbitMQServer(root, port, user, password, node, epmd)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and node.poll() is None:
        with contextlib.suppress(Exception):
            server.connection().close()
            return server
        time.sleep(0.25)
    for process in (node, epmd):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    return None


def start(timeout: float = 120.0) -> RabbitMQServer:
    if not os.access(SERVER, os.X_OK):
        raise RabbitMQUnavailable(f"{SERVER} not found: {INSTALL_HINT}")
    root = Path(tempfile.mkdtemp(prefix="st-rabbitmq-"))
    for _ in range(2):  # a port taken between free_port() and the bind: try others
        server = _try_start(root, timeout)
        if server is not None:
            return server
    text = (root / "node.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(root, ignore_errors=True)
    raise RabbitMQUnavailable(f"rabbitmq-server did not start: {text}")


def running() -> contextlib.AbstractContextManager[RabbitMQServer]:
    """The server for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, RabbitMQUnavailable)
