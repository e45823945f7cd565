"""A private RocketMQ broker for tests: RocketMQ 5.3's broker from Maven Central's jars, with a minimal name
server in the same JVM (Maven Central serves no ``rocketmq-namesrv`` 5.x; tests/rocketmq/Server.java answers
a broker's registration and clients' route requests), on free loopback ports, its store in a temp directory
with small mapped files (8 MiB commit log files, sparse), topics auto-created with 4 queues.

No distribution is installed: ``make test-deps`` copies ``rocketmq-broker`` and its dependencies
(``tests/rocketmq/pom.xml``) into ``.cache/rocketmq/lib``; :func:`start` runs ``tests/rocketmq/Server.java`` in
Java's source-file mode with that class path and waits until the name server routes the broker's topics.
``python -m tests.rocketmq_server`` starts one and prints its name server address.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import servers
from .servers import free_port, stop_process

HERE = Path(__file__).resolve().parent
LIB = HERE.parent / ".cache" / "rocketmq" / "lib"
LAUNCHER = HERE / "rocketmq" / "Server.java"
START_TIMEOUT = 120.0
INSTALL_HINT = ("the Rocketmq tests need the broker's jars in .cache/rocketmq/lib and Java 17: run `make test-deps` "
                "(it copies org.apache.rocketmq:rocketmq-broker 5.3.1 and its dependencies there)")
JVM_OPTIONS = ("-Xms64m", "-Xmx320m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
               "-XX:MaxDirectMemorySize=256m")


class RocketMQUnavailable(RuntimeError):
    """No java, the jars not fetched, or the broker did not start."""


@dataclass
class RocketMQServer:
    root: Path
    namesrv_port: int
    broker_port: int
    process: subprocess.Popen

    host = "127.0.0.1"

    @property
    def name_srv_addr(self) -> str:
        return f"{self.host}:{self.namesrv_port}"

    @property
    def broker_addr(self) -> str:
        return f"{self.host}:{self.broker_port}"

    def client(self, client_id: str | None = None):  # type: ignore[no-untyped-def]
        from airflow_provider_seatunnel.connectors.rocketmq.client import Client

        return Client([self.name_srv_addr], timeout=10.0, client_id=client_id)

    def create_topic(self, topic: str, queues: int = 4) -> None:
        with self.client() as c:
            c.create_topic(self.broker_addr, topic, queues)
            _wait_route(c, topic)

    def send(self, topic: str, bodies: list[str], keys: list[str | None] | None = None,
             tags: list[str | None] | None = None, queue: int | None = None) -> None:
        """Send ``bodies`` to ``topic`` (queue ``queue``, else the queues in turn)."""
        from airflow_provider_seatunnel.connectors.rocketmq.client import Queue

        with self.client() as c:
            route = _wait_route(c, topic)
            n = len(route.write_queues)
            for i, body in enumerate(bodies):
                q = Queue(topic, route.write_queues[0].broker, queue if queue is not None else i % n)
                c.send(q, self.broker_addr, "test-producer", body.encode(),
                       keys=keys[i] if keys else None, tags=tags[i] if tags else None)

    def messages(self, topic: str):  # type: ignore[no-untyped-def]
        """Every message stored in ``topic``, queue by queue, in offset order."""
        with self.client() as c:
            route = c.route(topic)
            if route is None:
                return []
            out = []
            for q in route.queues:
                offset, end = 0, c.max_offset(q, self.broker_addr)
                while offset < end:
                    got, offset = c.pull(q, self.broker_addr, "test-reader", offset, 32)
                    if not got:
                        break
                    out.extend(got)
            return out

    def stop(self) -> None:
        # a test broker's store is thrown away: no orderly shutdown (its hooks take seconds)
        if self.process.poll() is None:
            self.process.kill()
        stop_process(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


def _wait_route(c, topic: str, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        route = c.route(topic)
        if route is not None and route.write_queues:
            return route
        if time.monotonic() > deadline:
            raise RocketMQUnavailable(f"the name server has no route for topic {topic!r}")
        time.sleep(0.1)


def _jars() -> str:
    jars = sorted(LIB.glob("*.jar")) if LIB.is_dir() else []
    if not any(j.name.startswith("rocketmq-broker-") for j in jars):
        raise RocketMQUnavailable(f"no broker jar in {LIB}: {INSTALL_HINT}")
    return os.pathsep.join(str(j) for j in jars)


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _broker_port() -> int:
    """A free port whose port - 2 (the broker's second, "fast" listener) is free too."""
    for _ in range(50):
        port = free_port()
        if port > 1026 and _free(port - 2):
            return port
    raise RocketMQUnavailable("no two free ports for the broker")


def _started(root: Path, server: RocketMQServer, process: subprocess.Popen, deadline: float) -> bool:
    from airflow_provider_seatunnel.connectors.rocketmq.remoting import RemotingError

    while time.monotonic() < deadline and process.poll() is None:
        if b"test name server and broker started" in (root / "broker.log").read_bytes():
            try:
                with server.client() as c:
                    if c.route("TBW102") is not None:
                        return True
            except RemotingError:
                pass
        time.sleep(0.2)
    return False


def start(timeout: float = START_TIMEOUT) -> RocketMQServer:
    java = shutil.which("java")
    if java is None:
        raise RocketMQUnavailable(f"no java on PATH: {INSTALL_HINT}")
    classpath = _jars()
    root = Path(tempfile.mkdtemp(prefix="st-rocketmq-"))
    for _ in range(2):  # a port taken between choosing it and the bind: try others
        namesrv, broker, ha = free_port(), _broker_port(), free_port()
        log = open(root / "broker.log", "wb")  # noqa: SIM115 - the JVM writes it while it runs
        # user.home: the broker's own logs go to <root>/logs, not the user's home
        process = subprocess.Popen([java, *JVM_OPTIONS, f"-Duser.home={root}", f"-Drocketmq.home.dir={root}",
                                    "-cp", classpath, str(LAUNCHER), str(namesrv), str(broker), str(ha), str(root)],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
        log.close()
        server = RocketMQServer(root, namesrv, broker, process)
        if _started(root, server, process, time.monotonic() + timeout):
            return server
        stop_process(process)
    text = (root / "broker.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(root, ignore_errors=True)
    raise RocketMQUnavailable(f"the RocketMQ broker did not start: {text}")


def running() -> contextlib.AbstractContextManager[RocketMQServer]:
    """The server for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, RocketMQUnavailable)


if __name__ == "__main__":
    broker = start()
    print(broker.name_srv_addr, broker.broker_addr)
    try:
        broker.process.wait()
    finally:
        broker.stop()
