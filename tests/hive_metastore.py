"""A private Hive metastore for tests: Hive 2.3's standalone metastore service from the jars PySpark
ships, an embedded Derby database in a temp directory, a free loopback port.

:func:`start` runs ``java -cp '<pyspark>/jars/*' org.apache.hadoop.hive.metastore.HiveMetaStore -p
<port>`` with its settings as Java system properties (HiveConf reads them): the Derby database
and the warehouse in the temp directory, the schema created on first use, no schema version
check, and Hive's asynchronous logging off (it needs the LMAX disruptor, which PySpark does not
ship: with it on, the service dies at start with ``NoClassDefFoundError:
com/lmax/disruptor/EventTranslatorVararg``). It returns once the port answers;
:meth:`Metastore.stop` ends the process and removes the directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .servers import free_port, on_a_free_port

MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
START_TIMEOUT = 120.0


class MetastoreUnavailable(RuntimeError):
    """No java, no Hive jars in PySpark, or the service did not come up."""


def pyspark_jars() -> Path:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    if not list(jars.glob("hive-metastore-*.jar")):
        raise MetastoreUnavailable(f"no hive-metastore jar in {jars}: PySpark without Hive support")
    return jars


@dataclass
class Metastore:
    """A running metastore: its thrift URI, its temp directory, the process."""

    root: Path
    port: int
    process: subprocess.Popen

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    def log(self) -> str:
        path = self.root / "metastore.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        shutil.rmtree(self.root, ignore_errors=True)


def _answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start() -> Metastore:
    """Start a metastore on a free loopback port; raises :class:`MetastoreUnavailable`."""
    return on_a_free_port(_start_once, MetastoreUnavailable)


def _start_once() -> Metastore:
    """One try, on ports picked now."""
    java = shutil.which("java")
    if java is None:
        raise MetastoreUnavailable("no java on PATH (PySpark needs one too)")
    jars = pyspark_jars()
    root = Path(tempfile.mkdtemp(prefix="hive-metastore-"))
    port = free_port()
    props = {
        "hive.async.log.enabled": "false",
        "derby.system.home": str(root),
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root}/metastore_db;create=true",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": f"file:{root}/warehouse",
    }
    cmd = [java, "-Xmx512m", *[f"-D{k}={v}" for k, v in props.items()], "-cp", f"{jars}/*", MAIN_CLASS,
           "-p", str(port)]
    with open(root / "metastore.log", "wb") as log:
        process = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    server = Metastore(root, port, process)
    deadline = time.monotonic() + START_TIMEOUT
    while not _answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            tail = server.log()[-3000:]
            server.stop()
            raise MetastoreUnavailable(f"the Hive metastore did not start on port {port}:\n{tail}")
        time.sleep(0.25)
    return server


@contextmanager
def running() -> Iterator[Metastore]:
    """A metastore for the duration of the block (a test fails, never skips, when it cannot start)."""
    import pytest

    try:
        server = start()
    except MetastoreUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


if __name__ == "__main__":  # python -m tests.hive_metastore: start one, print its URI, stop on Ctrl-C
    started = time.monotonic()
    m = start()
    print(f"{m.uri} (up in {time.monotonic() - started:.1f} s, pid {m.process.pid}, {m.root})", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        m.stop()
        os._exit(0)
