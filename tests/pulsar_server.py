"""A private Pulsar standalone for tests: Pulsar 4.0's ``PulsarStandaloneStarter`` from Maven Central's jars, in a
JVM of its own, on free loopback ports (the binary protocol, the admin HTTP port, one bookie), its data (RocksDB
metadata, one BookKeeper bookie) in a temporary directory removed at stop. No functions worker, no stream storage.

No distribution is installed: ``make test-deps`` fetches ``pulsar-broker`` and its dependencies
(``tests/pulsar/pom.xml``) into ``~/.m2`` and writes their class path to ``.cache/pulsar/classpath.txt`` (resolved
online then: the broker's dependencies have version ranges that Maven cannot resolve offline); :func:`start` runs
the standalone with it and waits until the admin API lists the ``public/default`` namespace. Tests produce and read with PyPI's
``pulsar-client`` (:meth:`PulsarServer.client`); ``python -m tests.pulsar_server`` starts one and prints its URLs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import servers
from .servers import free_port, stop_process

HERE = Path(__file__).resolve().parent
CLASSPATH = HERE.parent / ".cache" / "pulsar" / "classpath.txt"
START_TIMEOUT = 180.0
INSTALL_HINT = ("the Pulsar tests need Java 17 and Pulsar's jars: run `make test-deps` (it fetches "
                "org.apache.pulsar:pulsar-broker 4.0 and its dependencies into ~/.m2 and writes "
                ".cache/pulsar/classpath.txt; delete that file to fetch them again)")
JVM_OPTIONS = ("-Xms64m", "-Xmx512m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Djava.awt.headless=true", "--add-opens=java.base/jdk.internal.platform=ALL-UNNAMED",
               "--add-opens=java.management/sun.management=ALL-UNNAMED", "-Dpulsar.log.level=warn",
               "-Dlog4j2.level=warn")

#: the broker's settings: one bookie, transactions off, small caches, no inactive-topic deletion (a test's topic
#: stays while it runs)
CONF = """clusterName=standalone
bindAddress=127.0.0.1
advertisedAddress=127.0.0.1
brokerServicePort={broker}
webServicePort={web}
authenticationEnabled=false
authorizationEnabled=false
managedLedgerDefaultEnsembleSize=1
managedLedgerDefaultWriteQuorum=1
managedLedgerDefaultAckQuorum=1
allowAutoTopicCreation=true
allowAutoTopicCreationType=non-partitioned
brokerDeleteInactiveTopicsEnabled=false
functionsWorkerEnabled=false
loadBalancerEnabled=false
webSocketServiceEnabled=false
journalMaxSizeMB=64
dbStorage_writeCacheMaxSizeMb=16
dbStorage_readAheadCacheMaxSizeMb=16
dbStorage_rocksDB_blockCacheSize=8388608
"""


class PulsarUnavailable(RuntimeError):
    """No java, the jars not fetched, or the standalone did not start."""


@dataclass
class PulsarServer:
    root: Path
    broker_port: int
    web_port: int
    process: subprocess.Popen

    host = "127.0.0.1"

    @property
    def service_url(self) -> str:
        return f"pulsar://{self.host}:{self.broker_port}"

    @property
    def admin_url(self) -> str:
        return f"http://{self.host}:{self.web_port}"

    def options(self) -> str:
        """HOCON options of a Pulsar block connecting to this standalone."""
        return f'client.service-url = "{self.service_url}", admin.service-url = "{self.admin_url}"'

    def client(self) -> Any:
        import pulsar

        return pulsar.Client(self.service_url, logger=_quiet_logger())

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        """One admin REST call (``/admin/v2/...``); its JSON answer, or None for an empty one."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.admin_url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def create_topic(self, name: str, partitions: int = 0) -> str:
        """``persistent://public/default/<name>`` created with ``partitions`` partitions (0: non-partitioned)."""
        path = f"/admin/v2/persistent/public/default/{name}"
        if partitions:
            self.admin("PUT", path + "/partitions", partitions)
        else:
            self.admin("PUT", path)
        return f"persistent://public/default/{name}"

    def delete_topic(self, name: str) -> None:
        """Delete ``persistent://public/default/<name>`` (partitioned or not) and its subscriptions, if it exists."""
        import urllib.error

        path = f"/admin/v2/persistent/public/default/{name}"
        for suffix in ("/partitions?force=true", "?force=true"):
            try:
                self.admin("DELETE", path + suffix)
                return
            except urllib.error.HTTPError as e:
                if e.code not in (404, 409, 412):
                    raise

    def send(self, topic: str, bodies: list[str], partition_key: str | None = None) -> list[Any]:
        """Send ``bodies`` to ``topic``; their message ids."""
        client = self.client()
        try:
            producer = client.create_producer(topic, batching_enabled=False)
            return [producer.send(b.encode(), partition_key=partition_key) for b in bodies]
        finally:
            client.close()

    def read_all(self, topic: str) -> list[bytes]:
        """Every message body of ``topic`` (each partition of a partitioned one), oldest first per partition."""
        import pulsar

        client = self.client()
        out: list[bytes] = []
        try:
            for part in client.get_topic_partitions(topic):
                reader = client.create_reader(part, pulsar.MessageId.earliest)
                while reader.has_message_available():
                    out.append(reader.read_next(30_000).data())
                reader.close()
        finally:
            client.close()
        return out

    def stop(self) -> None:
        """Kill the standalone at once (its data directory goes with it: nothing to shut down cleanly)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(20)
        shutil.rmtree(self.root, ignore_errors=True)


def _quiet_logger() -> Any:
    import pulsar

    return pulsar.ConsoleLogger(pulsar.LoggerLevel.Error)


def _jars() -> str:
    jars = CLASSPATH.read_text().strip().split(os.pathsep) if CLASSPATH.is_file() else []
    if not any(Path(j).name.startswith("pulsar-broker-") for j in jars):
        raise PulsarUnavailable(f"no class path in {CLASSPATH}: {INSTALL_HINT}")
    missing = [j for j in jars if not Path(j).is_file()]
    if missing:
        raise PulsarUnavailable(f"{len(missing)} jar(s) of {CLASSPATH} are gone ({missing[0]}...): {INSTALL_HINT}")
    return os.pathsep.join(jars)


def _ready(admin_url: str) -> bool:
    try:
        with urllib.request.urlopen(admin_url + "/admin/v2/namespaces/public", timeout=5) as answer:
            return "public/default" in json.loads(answer.read())
    except (OSError, ValueError):
        return False


def start(timeout: float = START_TIMEOUT) -> PulsarServer:
    java = shutil.which("java")
    if java is None:
        raise PulsarUnavailable(f"no java on PATH: {INSTALL_HINT}")
    classpath = _jars()
    root = Path(tempfile.mkdtemp(prefix="st-pulsar-"))
    for _ in range(2):  # a port taken between free_port() and the bind: try another
        broker, web, bookie = free_port(), free_port(), free_port()
        (root / "standalone.conf").write_text(CONF.format(broker=broker, web=web))
        shutil.rmtree(root / "data", ignore_errors=True)
        log = open(root / "standalone.log", "wb")  # noqa: SIM115 - the standalone writes it while it runs
        process = subprocess.Popen([java, *JVM_OPTIONS, "-cp", classpath, "org.apache.pulsar.PulsarStandaloneStarter",
                                    "-c", str(root / "standalone.conf"), "-nfw", "-nss", "--bookkeeper-port",
                                    str(bookie), "--bookkeeper-dir", str(root / "data" / "bookkeeper"),
                                    "--metadata-dir", str(root / "data" / "metadata")],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        admin_url = f"http://127.0.0.1:{web}"
        while time.monotonic() < deadline and process.poll() is None:
            if _ready(admin_url):
                return PulsarServer(root, broker, web, process)
            time.sleep(0.5)
        stop_process(process, timeout=20.0)
    text = (root / "standalone.log").read_text(errors="replace")[-3000:]
    shutil.rmtree(root, ignore_errors=True)
    raise PulsarUnavailable(f"the Pulsar standalone did not start: {text}")


def running() -> contextlib.AbstractContextManager[PulsarServer]:
    """The server for the duration of the block (a test fails, never skips, when it cannot start)."""
    return servers.running(start, PulsarUnavailable)


if __name__ == "__main__":
    standalone = start()
    print(standalone.service_url, standalone.admin_url)
    try:
        standalone.process.wait()
    finally:
        standalone.stop()
