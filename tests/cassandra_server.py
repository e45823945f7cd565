"""A private Cassandra node for the Cassandra connector's tests: Apache Cassandra 5.0 embedded in a JVM of its
own (``org.apache.cassandra.service.CassandraDaemon``), from Maven Central's ``cassandra-all`` and its
dependencies in Maven's local repository, on free loopback ports, in a temp directory.

No distribution is installed: the class path comes from a small pom under ``.cache/cassandra``, resolved offline
by Maven (``make test-deps`` fetched the jars). The generated ``cassandra.yaml`` listens on 127.0.0.1 only (native
transport and storage on free ports), keeps small memtables, requires passwords (``PasswordAuthenticator``; the
superuser ``cassandra``/``cassandra`` is created at once) and the JVM runs with ``-Xmx512m`` and the
``--add-opens``/``--add-exports`` Cassandra 5 needs on Java 17. Start-up takes about 30 s on a loaded 2-core
machine. ``python -m tests.cassandra_server`` starts one and prints its address.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import maven_jars
from .servers import free_port, on_a_free_port, stop_process

CASSANDRA_VERSION = "5.0.6"
HERE = Path(__file__).resolve().parent
CACHE = HERE.parent / ".cache" / "cassandra"
START_TIMEOUT = 180.0
USER = PASSWORD = "cassandra"
INSTALL_HINT = ("the Cassandra tests need Maven (`mvn`) and Cassandra's jars in ~/.m2: run `make test-deps` (it "
                f"fetches org.apache.cassandra:cassandra-all:{CASSANDRA_VERSION} and its dependencies)")
_OPENS = ("java.base/java.lang", "java.base/java.lang.module", "java.base/java.lang.reflect", "java.base/java.io",
          "java.base/java.nio", "java.base/java.net", "java.base/java.util", "java.base/java.util.concurrent",
          "java.base/java.util.concurrent.atomic", "java.base/sun.nio.ch", "java.base/sun.nio.fs",
          "java.base/jdk.internal.loader", "java.base/jdk.internal.ref", "java.base/jdk.internal.reflect",
          "java.base/jdk.internal.math", "java.base/jdk.internal.module", "java.base/jdk.internal.util.jar",
          "jdk.management/com.sun.management.internal")
_EXPORTS = ("java.base/jdk.internal.misc", "java.base/jdk.internal.ref", "java.base/sun.nio.ch",
            "java.management.rmi/com.sun.jmx.remote.internal.rmi", "java.rmi/sun.rmi.registry",
            "java.rmi/sun.rmi.server", "java.sql/java.sql", "java.base/jdk.internal.vm.annotation")
JVM_OPTIONS = ("-Xms256m", "-Xmx512m", "-XX:+UseSerialGC", "-Xss512k", "-XX:TieredStopAtLevel=1",
               "-Djava.awt.headless=true", "-Djdk.attach.allowAttachSelf=true", "-XX:+ExitOnOutOfMemoryError",
               *[f"--add-opens={p}=ALL-UNNAMED" for p in _OPENS],
               *[f"--add-exports={p}=ALL-UNNAMED" for p in _EXPORTS],
               "-Dcassandra-foreground=yes", "-Dcassandra.superuser_setup_delay_ms=0", "-Dcassandra.ring_delay_ms=0",
               "-Dcassandra.skip_wait_for_gossip_to_settle=0", "-Dcassandra.native.epoll.enabled=false")

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.tests</groupId>
  <artifactId>cassandra-node-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId>
      <version>{CASSANDRA_VERSION}</version></dependency>
  </dependencies>
</project>
"""

LOGBACK = """<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log}</file>
    <encoder><pattern>%-5level %date{{HH:mm:ss.SSS}} [%thread] %logger{{0}}: %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


class CassandraUnavailable(RuntimeError):
    """No java/mvn, the jars not fetched, or the node did not start."""


def classpath() -> str:
    """The node's class path, resolved offline by Maven once and cached while every jar in it exists."""
    return maven_jars.classpath(CACHE, POM, CASSANDRA_VERSION, "Cassandra", CassandraUnavailable, INSTALL_HINT)


def config(root: Path, native: int, storage: int) -> str:
    """A single node's cassandra.yaml: loopback, the given ports, small memtables, passwords required."""
    dirs = {name: str(root / name) for name in ("data", "commitlog", "saved_caches", "hints", "cdc_raw")}
    return f"""cluster_name: seatunnel-tests
num_tokens: 16
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 8MiB
data_file_directories: [{dirs['data']}]
commitlog_directory: {dirs['commitlog']}
saved_caches_directory: {dirs['saved_caches']}
hints_directory: {dirs['hints']}
cdc_raw_directory: {dirs['cdc_raw']}
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:{storage}"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: {storage}
native_transport_port: {native}
start_native_transport: true
endpoint_snitch: SimpleSnitch
authenticator: PasswordAuthenticator
authorizer: AllowAllAuthorizer
memtable_heap_space: 32MiB
memtable_offheap_space: 32MiB
concurrent_reads: 4
concurrent_writes: 4
concurrent_counter_writes: 4
concurrent_compactors: 1
dynamic_snitch: false
"""


@dataclass
class CassandraServer:
    """A running node: ``port`` is its native transport; ``session()`` a driver session as the superuser
    (the tests' own reads and writes, never through the code under test)."""

    root: Path
    port: int
    process: subprocess.Popen
    started_in: float = 0.0

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def options(self, keyspace: str) -> str:
        """The HOCON options of a block reaching this node's ``keyspace``."""
        return f'host = "{self.host}", keyspace = "{keyspace}", username = "{USER}", password = "{PASSWORD}"'

    def cluster(self) -> Any:
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from cassandra.policies import RoundRobinPolicy

        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=60)
        return Cluster(["127.0.0.1"], port=self.port, auth_provider=PlainTextAuthProvider(USER, PASSWORD),
                       connect_timeout=10, protocol_version=5, execution_profiles={EXEC_PROFILE_DEFAULT: profile})

    def execute(self, *statements: str, params: Sequence[Sequence[Any]] = ()) -> list[list[Any]]:
        """Run CQL statements (each with its parameters, by position); the rows of each."""
        cluster = self.cluster()
        try:
            session = cluster.connect()
            out = []
            for i, cql in enumerate(statements):
                args = params[i] if i < len(params) else None
                out.append([tuple(r) for r in session.execute(cql, args)])
            return out
        finally:
            cluster.shutdown()

    def keyspace(self, name: str) -> None:
        """A fresh keyspace (dropped first)."""
        self.execute(f"DROP KEYSPACE IF EXISTS {name}",
                     f"CREATE KEYSPACE {name} WITH replication = {{'class': 'SimpleStrategy', "
                     "'replication_factor': 1}")

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        return sorted(self.execute(f"SELECT * FROM {table}")[0], key=repr)

    def stop(self) -> None:
        stop_process(self.process, timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def _answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _logs(root: Path) -> str:
    """The ends of the node's output and system log (a port taken shows there)."""
    return "".join(path.read_text(errors="replace")[-1500:] for path in (root / "out.log", root / "system.log")
                   if path.exists())


def start() -> CassandraServer:
    """Start a node on free ports; returns once it accepts a login."""
    return on_a_free_port(_start_once, CassandraUnavailable)


def _start_once() -> CassandraServer:
    """One try, on ports picked now."""
    java = shutil.which("java")
    if java is None:
        raise CassandraUnavailable("no java on PATH")
    began = time.monotonic()
    jars = classpath()
    root = Path(tempfile.mkdtemp(prefix="cassandra-"))
    native, storage = free_port(), free_port()
    (root / "cassandra.yaml").write_text(config(root, native, storage))
    (root / "logback.xml").write_text(LOGBACK.format(log=root / "system.log"))
    log = (root / "out.log").open("wb")
    process = subprocess.Popen([java, *JVM_OPTIONS, f"-Dcassandra.config=file://{root}/cassandra.yaml",
                                f"-Dcassandra.storagedir={root}", f"-Dlogback.configurationFile={root}/logback.xml",
                                "-cp", jars, "org.apache.cassandra.service.CassandraDaemon"],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = CassandraServer(root, native, process)
    deadline = began + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = _logs(root)
            shutil.rmtree(root, ignore_errors=True)
            raise CassandraUnavailable(f"the Cassandra node exited ({process.returncode}):\n{text}")
        if _answers(native):
            try:
                server.execute("SELECT release_version FROM system.local")
                server.started_in = time.monotonic() - began
                return server
            except Exception:  # the superuser may not exist yet
                pass
        time.sleep(0.3)
    text = _logs(root)
    server.stop()
    raise CassandraUnavailable(f"the Cassandra node did not answer within {START_TIMEOUT} s:\n{text}")


def running() -> Iterator[CassandraServer]:
    """A node for a fixture: started, yielded, stopped."""
    server = start()
    try:
        yield server
    finally:
        server.stop()


if __name__ == "__main__":
    node = start()
    print(node.host, f"(started in {node.started_in:.1f} s)", flush=True)
    try:
        node.process.wait()
    finally:
        node.stop()
