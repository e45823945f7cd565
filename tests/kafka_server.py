"""A private Apache Kafka broker for tests: one node in KRaft mode (broker and controller in one JVM, no
ZooKeeper), from the Kafka jars in Maven's local repository, on free loopback ports, in a temp directory.

The class path comes from Maven, not from a Kafka distribution: a small pom under ``.cache/kafka``
depends on ``kafka_2.13`` and log4j's SLF4J binding (without one the broker logs nothing, not even
why it died), and ``mvn -o dependency:build-classpath`` lists the jars, offline: ``make test-deps``
fetched them. The list is cached next to the pom and rebuilt when a jar in it has gone.

:func:`start` writes ``server.properties`` (both roles, node 1, a PLAINTEXT listener and a
CONTROLLER listener on two free ports, every internal topic with one partition and one replica so
that groups and transactions work on one node at once), formats the storage as a single-node
dynamic quorum (``kafka.tools.StorageTool format --standalone``), runs ``kafka.Kafka`` and returns
once a metadata request answers with the broker in it. :meth:`KafkaServer.stop` stops the process
and removes the directory. Tests talk to it through ``confluent_kafka`` (the helpers below), never
through the code under test. ``python -m tests.kafka_server`` starts one and prints its address.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import maven_jars, servers
from .servers import free_port, stop_process

KAFKA_VERSION = "4.2.0"
LOG4J_VERSION = "2.25.3"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "kafka"
START_TIMEOUT = 90.0
INSTALL_HINT = ("the Kafka tests need Maven (`mvn`) and Apache Kafka's jars in ~/.m2: run `make test-deps` "
                f"(it fetches org.apache.kafka:kafka_2.13:{KAFKA_VERSION} and its dependencies)")
JVM_OPTIONS = ("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.tests</groupId>
  <artifactId>kafka-broker-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{KAFKA_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId>
      <version>{LOG4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
"""

LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
"""


class KafkaUnavailable(RuntimeError):
    """No java, no mvn, Kafka's jars not fetched, or the broker did not start."""


def classpath() -> str:
    """The broker's class path, built offline by Maven once and cached while every jar in it exists."""
    return maven_jars.classpath(CACHE, POM, KAFKA_VERSION, "Kafka", KafkaUnavailable, INSTALL_HINT)


def _cluster_id() -> str:
    """A random cluster id in Kafka's form (a UUID in URL-safe base64), never starting with '-' (an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _properties(root: Path, port: int, controller_port: int) -> str:
    settings = {
        "process.roles": "broker,controller",
        "node.id": 1,
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": root / "data",
        "num.partitions": 1,
        "default.replication.factor": 1,
        "min.insync.replicas": 1,
        "auto.create.topics.enable": "true",
        # the internal topics: one partition, one replica (the defaults, 50 partitions and 3 replicas, cannot
        # be placed on one broker, or take seconds to create on the first group or transaction)
        "offsets.topic.replication.factor": 1,
        "offsets.topic.num.partitions": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "transaction.state.log.num.partitions": 1,
        "share.coordinator.state.topic.replication.factor": 1,
        "share.coordinator.state.topic.min.isr": 1,
        "share.coordinator.state.topic.num.partitions": 1,
        "group.initial.rebalance.delay.ms": 0,
        # few threads: the tests move kilobytes on a small machine
        "num.network.threads": 1,
        "num.io.threads": 2,
        "num.recovery.threads.per.data.dir": 1,
        "background.threads": 2,
        "log.cleaner.threads": 1,
    }
    return "".join(f"{k}={v}\n" for k, v in settings.items())


@dataclass
class KafkaServer:
    """A running broker: ``bootstrap`` is its ``host:port``; helpers create, write and read topics."""

    root: Path
    port: int
    controller_port: int
    process: subprocess.Popen
    _admin: Any = field(default=None, repr=False)

    host = "127.0.0.1"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def config(self, **extra: Any) -> dict[str, Any]:
        """A confluent_kafka client configuration for this broker (dots in keys as ``extra`` cannot spell
        them: pass a dict to the client instead)."""
        return {"bootstrap.servers": self.bootstrap, **extra}

    def log(self) -> str:
        path = self.root / "kafka.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        if self._admin is None:
            self._admin = AdminClient(self.config())
        return self._admin

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> str:
        """Create ``name`` (one replica); waits until the broker has it and returns the name."""
        from confluent_kafka.admin import NewTopic

        topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})
        self.admin().create_topics([topic], operation_timeout=30)[name].result(timeout=60)
        deadline = time.monotonic() + 30
        while len(self.partitions(name)) < partitions:  # metadata catches up with the controller
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name} has no {partitions} partitions in the metadata")
            time.sleep(0.05)
        return name

    def partitions(self, topic: str) -> list[int]:
        """The partition numbers of ``topic`` (empty when it does not exist)."""
        meta = self.admin().list_topics(topic=topic, timeout=30).topics.get(topic)
        return sorted(meta.partitions) if meta is not None and meta.error is None else []

    def produce(self, topic: str, values: Sequence[bytes | str | None], keys: Sequence[bytes | str | None] | None = None,
                partition: int | None = None) -> None:
        """Write ``values`` (with ``keys`` when given, one each) to ``topic``, acknowledged by the broker."""
        from confluent_kafka import Producer

        if keys is not None and len(keys) != len(values):
            raise ValueError(f"{len(keys)} keys for {len(values)} values")
        errors: list[Any] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err)

        producer = Producer(self.config(**{"acks": "all", "linger.ms": 0}))
        for i, value in enumerate(values):
            kwargs: dict[str, Any] = {"value": value, "on_delivery": delivered}
            if keys is not None:
                kwargs["key"] = keys[i]
            if partition is not None:
                kwargs["partition"] = partition
            producer.produce(topic, **kwargs)
        if producer.flush(60) or errors:
            raise RuntimeError(f"producing to {topic} failed: {errors or 'messages still queued after 60 s'}")

    def consume(self, topic: str, isolation: str = "read_committed",
                timeout: float = 60.0) -> list[tuple[bytes | None, bytes | None, int, int]]:
        """Every record of ``topic`` up to its current end, as ``(key, value, partition, offset)`` sorted by
        partition and offset. The end is the high watermark for ``read_uncommitted``, the last stable
        offset for ``read_committed`` (records of aborted transactions are left out). No group offsets
        are read or committed: the partitions are assigned from their beginning."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

        parts = self.partitions(topic)
        if not parts:
            raise ValueError(f"no topic {topic}")
        consumer = Consumer(self.config(**{"group.id": f"tests-{uuid.uuid4().hex}", "enable.auto.commit": False,
                                           "isolation.level": isolation, "enable.partition.eof": True,
                                           "fetch.wait.max.ms": 20}))
        rows: list[tuple[bytes | None, bytes | None, int, int]] = []
        try:
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
            pending, deadline = set(parts), time.monotonic() + timeout
            while pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{topic}: partitions {sorted(pending)} not read to their end in {timeout} s")
                msg = consumer.poll(0.5)
                if msg is None:
                    continue
                error, part = msg.error(), msg.partition() or 0
                if error is not None:
                    if error.code() != KafkaError._PARTITION_EOF:
                        raise RuntimeError(f"reading {topic}: {error}")
                    pending.discard(part)
                    continue
                rows.append((msg.key(), msg.value(), part, msg.offset() or 0))
        finally:
            consumer.close()
        return sorted(rows, key=lambda r: (r[2], r[3]))

    def stop(self) -> None:
        self._admin = None  # closes the client before the broker goes: it would log the lost connection
        stop_process(self.process, timeout=20)
        shutil.rmtree(self.root, ignore_errors=True)


def _run(cmd: list[str], root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def _answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait_ready(server: KafkaServer, deadline: float) -> bool:
    """Whether the broker answers a metadata request naming itself before ``deadline`` (the port first:
    a client made before it answers would log each refused connection)."""
    while not _answers(server.port):
        if server.process.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    admin = server.admin()
    while server.process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if 1 in admin.list_topics(timeout=2).brokers:
                return True
        time.sleep(0.1)
    return False


def _launch(java: str, jars: str, root: Path) -> KafkaServer:
    """Format the storage and start the broker on two new free ports; it may not be up yet."""
    port, controller_port = free_port(), free_port()
    (root / "server.properties").write_text(_properties(root, port, controller_port))
    (root / "log4j2.properties").write_text(LOG4J2)
    base = [java, *JVM_OPTIONS, f"-Dlog4j2.configurationFile={root / 'log4j2.properties'}", "-cp", jars]
    shutil.rmtree(root / "data", ignore_errors=True)
    formatted = _run([*base, "kafka.tools.StorageTool", "format", "--standalone", "--cluster-id", _cluster_id(),
                      "--config", str(root / "server.properties")], root)
    if formatted.returncode != 0:
        raise KafkaUnavailable(f"formatting Kafka's storage failed:\n{(formatted.stdout + formatted.stderr)[-3000:]}")
    with open(root / "kafka.log", "wb") as log:
        process = subprocess.Popen([*base, "kafka.Kafka", str(root / "server.properties")], cwd=root, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                   preexec_fn=_die_with_parent)
    return KafkaServer(root, port, controller_port, process)


def _die_with_parent() -> None:
    """In the broker's process before it runs Java: Linux sends it SIGTERM when the process that started it
    dies, so a test run killed half way (SIGKILL, a timeout) leaves no broker behind."""
    import ctypes

    with contextlib.suppress(OSError):  # not Linux: the fixture's stop() is the only clean-up
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start() -> KafkaServer:
    """Start a broker and wait until it serves metadata; raises :class:`KafkaUnavailable`."""
    java = shutil.which("java")
    if java is None:
        raise KafkaUnavailable("no java on PATH (Kafka's broker needs Java 17)")
    jars = classpath()
    root = Path(tempfile.mkdtemp(prefix="st-kafka-"))
    for _ in range(3):  # a port taken between free_port() and the bind: try two others
        try:
            server = _launch(java, jars, root)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        if _wait_ready(server, time.monotonic() + START_TIMEOUT):
            return server
        server._admin = None
        stop_process(server.process, timeout=20)
        text = server.log()
        if "Address already in use" not in text:
            break
    shutil.rmtree(root, ignore_errors=True)
    raise KafkaUnavailable(f"the Kafka broker did not start on 127.0.0.1:{server.port}:\n{text[-3000:]}")


def running() -> contextlib.AbstractContextManager[KafkaServer]:
    """A broker for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, KafkaUnavailable)


if __name__ == "__main__":  # python -m tests.kafka_server: start one, print its address, stop on Ctrl-C
    started = time.monotonic()
    k = start()
    print(f"{k.bootstrap} (up in {time.monotonic() - started:.1f} s, pid {k.process.pid}, {k.root})", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        k.stop()
        os._exit(0)
