"""A private ActiveMQ Classic broker for tests: ActiveMQ 5.18's broker from Maven Central's jars, in a JVM of its own,
on a free loopback port with the ``auto`` transport (OpenWire, SeaTunnel's protocol, and STOMP on one port), a
random user and password, messages in memory.

No distribution is installed: ``make test-deps`` copies ``activemq-broker``, ``activemq-stomp``, ``activemq-jaas``
and their dependencies (``tests/activemq/pom.xml``) into ``.cache/activemq/lib``; :func:`start` runs
``tests/activemq/Broker.java`` in Java's source-file mode with that class path (nothing from ``~/.m2`` at run
time) and waits for its "broker started" line. Tests look at queues through :meth:`ActiveMQServer.stomp` (the
STOMP client, whose own tests are in tests/unit), ``python -m tests.activemq_server`` starts one and prints its URI.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import servers
from .servers import free_port, stop_process

HERE = Path(__file__).resolve().parent
LIB = HERE.parent / ".cache" / "activemq" / "lib"
LAUNCHER = HERE / "activemq" / "Broker.java"
START_TIMEOUT = 120.0
INSTALL_HINT = ("the ActiveMQ tests need the broker's jars in .cache/activemq/lib and Java 17: run `make test-deps` "
                "(it copies org.apache.activemq:activemq-broker 5.18 and its dependencies there)")
JVM_OPTIONS = ("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


class ActiveMQUnavailable(RuntimeError):
    """No java, the jars not fetched, or the broker did not start."""


@dataclass
class ActiveMQServer:
    root: Path
    port: int
    user: str
    password: str
    process: subprocess.Popen

    host = "127.0.0.1"

    @property
    def uri(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    def options(self) -> str:
        """HOCON options of an ActiveMQ block connecting to this broker."""
        return f'uri = "{self.uri}", username = "{self.user}", password = "{self.password}"'

    def stomp(self, client_id: str | None = None):  # type: ignore[no-untyped-def]
        from airflow_provider_seatunnel.connectors.activemq.stomp import Stomp

        return Stomp(self.host, self.port, self.user, self.password, client_id, timeout=30.0)

    def browse(self, queue: str) -> list[bytes]:
        """The bodies of the messages in ``queue``, left there."""
        from airflow_provider_seatunnel.connectors.activemq.client import browse

        with self.stomp() as conn:
            return browse(conn, queue)

    def send(self, queue: str, bodies: list[str]) -> None:
        """Send ``bodies`` to ``queue`` in one transaction."""
        with self.stomp() as conn:
            tx = conn.begin()
            for body in bodies:
                conn.send("/queue/" + queue, body.encode(), tx, {"persistent": "true"})
            conn.commit(tx)

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


def _jars() -> str:
    jars = sorted(LIB.glob("*.jar")) if LIB.is_dir() else []
    if not any(j.name.startswith("activemq-broker-") for j in jars):
        raise ActiveMQUnavailable(f"no broker jar in {LIB}: {INSTALL_HINT}")
    return os.pathsep.join(str(j) for j in jars)


def start(timeout: float = START_TIMEOUT) -> ActiveMQServer:
    java = shutil.which("java")
    if java is None:
        raise ActiveMQUnavailable(f"no java on PATH: {INSTALL_HINT}")
    classpath = _jars()
    root = Path(tempfile.mkdtemp(prefix="st-activemq-"))
    user, password = "st-" + secrets.token_hex(4), "pw-" + secrets.token_hex(12)
    for _ in range(2):  # a port taken between free_port() and the bind: try another
        port = free_port()
        log = open(root / "broker.log", "wb")  # noqa: SIM115 - the broker writes it while it runs
        process = subprocess.Popen([java, *JVM_OPTIONS, "-cp", classpath, str(LAUNCHER), str(port), user, password,
                                    str(root / "data")], stdout=log, stderr=subprocess.STDOUT, cwd=root,
                                   start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if b"broker started" in (root / "broker.log").read_bytes():
                return ActiveMQServer(root, port, user, password, process)
            time.sleep(0.25)
        stop_process(process)
    text = (root / "broker.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(root, ignore_errors=True)
    raise ActiveMQUnavailable(f"the ActiveMQ broker did not start: {text}")


def running() -> contextlib.AbstractContextManager[ActiveMQServer]:
    """The server for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, ActiveMQUnavailable)


if __name__ == "__main__":
    broker = start()
    print(broker.uri, broker.user, broker.password)
    try:
        broker.process.wait()
    finally:
        broker.stop()
