"""A private standalone HBase for the Hbase connector's tests: HBase 2.6 from Maven Central's jars in Maven's
local repository, in a JVM of its own, on free loopback ports, its root directory on the local file system.

No distribution is installed: the class path comes from a small pom under ``.cache/hbase``
(``org.apache.hbase:hbase-thrift``, which brings ``hbase-server`` and ``hbase-zookeeper``), resolved offline
by Maven (``make test-deps`` fetched them). A launcher, ``tests/hbase/StandaloneHBase.java``, compiled with
``javac`` once into the cache, starts HBase's own ZooKeeper, one master and one region server, then HBase's
Thrift 1 gateway, in that one JVM (Java 17, with the ``--add-opens`` HBase needs). Tests talk to it through
``happybase`` (:meth:`HBaseServer.connection`), never through the code under test.
``python -m tests.hbase_server`` starts one and prints its address and start-up time.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import maven_jars, servers
from .servers import free_port, on_a_free_port

HBASE_VERSION = "2.6.1"
HERE = Path(__file__).resolve().parent
CACHE = HERE.parent / ".cache" / "hbase"
LAUNCHER = HERE / "hbase" / "StandaloneHBase.java"
START_TIMEOUT = 180.0
INSTALL_HINT = ("the Hbase tests need Maven (`mvn`), `javac` and HBase's jars in ~/.m2: run `make test-deps` (it "
                f"fetches org.apache.hbase:hbase-thrift:{HBASE_VERSION})")
JVM_OPTIONS = ("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
               "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
               "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
               "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
               "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
               "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true")

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.tests</groupId>
  <artifactId>hbase-standalone-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.hbase</groupId><artifactId>hbase-thrift</artifactId>
      <version>{HBASE_VERSION}</version></dependency>
  </dependencies>
</project>
"""


class HBaseUnavailable(RuntimeError):
    """No java/javac/mvn, the jars not fetched, or HBase did not start."""


def classpath() -> str:
    """HBase's class path, resolved offline by Maven once and cached while every jar in it exists."""
    return maven_jars.classpath(CACHE, POM, HBASE_VERSION, "HBase", HBaseUnavailable, INSTALL_HINT)


def launcher(jars: str) -> Path:
    """The compiled launcher's directory (compiled again when the source changed)."""
    return maven_jars.compiled_launcher(CACHE, LAUNCHER, jars, HBaseUnavailable, INSTALL_HINT)


@dataclass
class HBaseServer:
    """A running HBase: ``port`` is its Thrift gateway's, ``zk_port`` its ZooKeeper's."""

    root: Path
    port: int
    zk_port: int
    process: subprocess.Popen
    started_in: float = 0.0

    host = "127.0.0.1"

    def connection(self) -> Any:
        import happybase

        return happybase.Connection(self.host, self.port, timeout=120_000)

    def options(self) -> str:
        """HOCON options of an Hbase block reaching this server (the quorum's host, the gateway's port)."""
        return (f'zookeeper_quorum = "{self.host}:{self.zk_port}", '
                f'hbase_extra_config = {{ "hbase.regionserver.thrift.port" = "{self.port}" }}')

    def rows(self, table: str) -> dict[bytes, dict[bytes, bytes]]:
        """Every row of ``table`` (its newest cells)."""
        conn = self.connection()
        try:
            return dict(conn.table(table).scan())
        finally:
            conn.close()

    def cells(self, table: str, row: bytes, column: bytes) -> list[tuple[bytes, int]]:
        """Every version of one cell, newest first, with its timestamp."""
        conn = self.connection()
        try:
            return list(conn.table(table).cells(row, column, versions=100, include_timestamp=True))
        finally:
            conn.close()

    def drop(self, *tables: str) -> None:
        conn = self.connection()
        try:
            existing = {t.decode() for t in conn.tables()}
            for table in tables:
                if table in existing:
                    conn.delete_table(table, disable=True)
        finally:
            conn.close()

    def stop(self) -> None:
        """Kill the JVM (its data is a temp directory: an orderly shutdown would only cost seconds)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        shutil.rmtree(self.root, ignore_errors=True)


def _answers(server: HBaseServer) -> bool:
    with contextlib.suppress(Exception):
        conn = server.connection()
        try:
            conn.tables()
            return True
        finally:
            conn.close()
    return False


def start() -> HBaseServer:
    """Start HBase on free ports; returns once its Thrift gateway answers."""
    return on_a_free_port(_start_once, HBaseUnavailable)


def _start_once() -> HBaseServer:
    """One try, on ports picked now."""
    java = shutil.which("java")
    if java is None:
        raise HBaseUnavailable("no java on PATH")
    began = time.monotonic()
    jars = classpath()
    compiled = launcher(jars)
    root = Path(tempfile.mkdtemp(prefix="st-hbase-"))
    port, zk_port = free_port(), free_port()
    log = (root / "hbase.log").open("wb")
    process = subprocess.Popen([java, *JVM_OPTIONS, "-cp", f"{compiled}{os.pathsep}{jars}", "StandaloneHBase",
                                str(root), str(zk_port), str(port)],
                               stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    log.close()
    server = HBaseServer(root, port, zk_port, process)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = (root / "hbase.log").read_text(errors="replace")[-3000:]
            shutil.rmtree(root, ignore_errors=True)
            raise HBaseUnavailable(f"HBase exited ({process.returncode}):\n{text}")
        if b"STARTED" in (root / "hbase.log").read_bytes() and _answers(server):
            server.started_in = time.monotonic() - began
            return server
        time.sleep(0.25)
    text = (root / "hbase.log").read_text(errors="replace")[-3000:]
    server.stop()
    raise HBaseUnavailable(f"HBase did not answer within {START_TIMEOUT:.0f}s:\n{text}")


def running() -> contextlib.AbstractContextManager[HBaseServer]:
    """The server for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, HBaseUnavailable)


if __name__ == "__main__":
    s = start()
    print(f"thrift gateway 127.0.0.1:{s.port}, zookeeper 127.0.0.1:{s.zk_port}, started in {s.started_in:.1f}s")
    s.stop()
