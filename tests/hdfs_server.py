"""A private HDFS for tests: one NameNode and one DataNode of Hadoop 2.10.2 in a JVM of its own, on loopback ports
the kernel picks, replication 1, permissions off, its storage in a temp directory.

No distribution is installed and no jar is fetched for it alone: Hadoop's HDFS (``hadoop-hdfs``,
``hadoop-common``, ``hadoop-hdfs-client`` 2.10.2) is part of the class path HBase's tests already resolve
(:func:`tests.hbase_server.classpath`: ``make test-deps`` fetches ``org.apache.hbase:hbase-thrift``, which
depends on them). A launcher, ``tests/hdfs/MiniHdfs.java``, compiled with ``javac`` once into
``.cache/hdfs``, formats the NameNode, starts it and a DataNode, and prints ``STARTED <rpc port>`` once the
DataNode has registered and safe mode is off. HDFS's web UIs look their pages up on the class path as
``webapps/<name>``, which the Maven jars do not hold: empty directories beside the launcher stand in (the UIs
serve nothing; nothing here uses them). Tests talk to it with ``hdfs-native`` (:meth:`HdfsServer.client`).
``python -m tests.hdfs_server`` starts one and prints its address and start-up time.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import hbase_server, maven_jars, servers

HERE = Path(__file__).resolve().parent
CACHE = HERE.parent / ".cache" / "hdfs"
LAUNCHER = HERE / "hdfs" / "MiniHdfs.java"
START_TIMEOUT = 120.0
JVM_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
               "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED")


class HdfsUnavailable(RuntimeError):
    """No java/javac/mvn, the jars not fetched, or HDFS did not start."""


@dataclass
class HdfsServer:
    """A running HDFS: ``port`` is its NameNode's RPC port."""

    root: Path
    port: int
    process: subprocess.Popen
    started_in: float = 0.0

    @property
    def uri(self) -> str:
        return f"hdfs://127.0.0.1:{self.port}"

    def client(self) -> Any:
        from hdfs_native import Client

        return Client(self.uri)

    def stop(self) -> None:
        """Kill the JVM (its data is a temp directory: an orderly shutdown would only cost seconds)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        shutil.rmtree(self.root, ignore_errors=True)


def launcher() -> tuple[Path, str]:
    """The compiled launcher's directory (with the web UIs' empty ``webapps``) and the class path."""
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        jars = hbase_server.classpath()
        compiled = maven_jars.compiled_launcher(CACHE, LAUNCHER, jars, hbase_server.HBaseUnavailable,
                                                hbase_server.INSTALL_HINT)
    except hbase_server.HBaseUnavailable as e:
        raise HdfsUnavailable(f"HDFS uses HBase's Hadoop jars: {e}") from e
    for name in ("hdfs", "datanode"):
        (compiled / "webapps" / name).mkdir(parents=True, exist_ok=True)
    return compiled, jars


def start() -> HdfsServer:
    """Start HDFS; returns once the DataNode has registered."""
    java = shutil.which("java")
    if java is None:
        raise HdfsUnavailable("no java on PATH")
    began = time.monotonic()
    compiled, jars = launcher()
    root = Path(tempfile.mkdtemp(prefix="st-hdfs-"))
    log_path = root / "hdfs.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([java, *JVM_OPTIONS, "-cp", f"{compiled}:{jars}", "MiniHdfs", str(root / "dfs")],
                                   stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = log_path.read_bytes()
        for line in text.splitlines():
            if line.startswith(b"STARTED "):
                return HdfsServer(root, int(line.split()[1]), process, time.monotonic() - began)
        if process.poll() is not None:
            tail = text.decode(errors="replace")[-3000:]
            shutil.rmtree(root, ignore_errors=True)
            raise HdfsUnavailable(f"HDFS exited ({process.returncode}):\n{tail}")
        time.sleep(0.1)
    tail = log_path.read_text(errors="replace")[-3000:]
    HdfsServer(root, 0, process).stop()
    raise HdfsUnavailable(f"HDFS did not start within {START_TIMEOUT:.0f}s:\n{tail}")


def running() -> contextlib.AbstractContextManager[HdfsServer]:
    """HDFS for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, HdfsUnavailable)


if __name__ == "__main__":
    s = start()
    print(f"{s.uri}, started in {s.started_in:.1f}s")
    s.stop()
