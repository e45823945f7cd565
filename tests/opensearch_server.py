"""A private OpenSearch node for the Elasticsearch connector's tests: OpenSearch 2.19 embedded in a JVM of its
own, from Maven Central's jars in Maven's local repository, on a free loopback port, in a temp directory.

OpenSearch speaks the Elasticsearch REST API the connector uses (``_bulk``, ``_search`` with a sliced scroll,
``_mapping``, ``_count``, ``_reindex``, ``_delete_by_query``, documents written with ``if_seq_no`` /
``op_type=create``, hidden indices). No distribution is installed: the class path comes from a small pom under
``.cache/opensearch`` (``org.opensearch:opensearch`` with the Netty 4 HTTP transport and the reindex module,
both plugins of a distribution's ``modules/``, and log4j's core), resolved offline by Maven (``make test-deps``
fetched them). A ten-line launcher, ``tests/opensearch/EmbeddedNode.java``, compiled with ``javac`` once into
the cache, starts a single-node cluster with those two plugins loaded from the class path (a distribution's
bootstrap would want its home's ``modules/`` directory and a security policy). Start-up takes a few seconds.
``python -m tests.opensearch_server`` starts one and prints its address.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import maven_jars
from .servers import free_port, on_a_free_port, stop_process

OPENSEARCH_VERSION = "2.19.6"
LOG4J_VERSION = "2.25.4"
HERE = Path(__file__).resolve().parent
CACHE = HERE.parent / ".cache" / "opensearch"
LAUNCHER = HERE / "opensearch" / "EmbeddedNode.java"
START_TIMEOUT = 120.0
INSTALL_HINT = ("the Elasticsearch tests need Maven (`mvn`), `javac` and OpenSearch's jars in ~/.m2: run `make "
                f"test-deps` (it fetches org.opensearch:opensearch:{OPENSEARCH_VERSION} and its modules)")
JVM_OPTIONS = ("-Xms256m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
               "-Dlog4j2.level=WARN")

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.tests</groupId>
  <artifactId>opensearch-node-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.opensearch</groupId><artifactId>opensearch</artifactId>
      <version>{OPENSEARCH_VERSION}</version></dependency>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>transport-netty4-client</artifactId>
      <version>{OPENSEARCH_VERSION}</version></dependency>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>reindex-client</artifactId>
      <version>{OPENSEARCH_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId>
      <version>{LOG4J_VERSION}</version></dependency>
  </dependencies>
</project>
"""


class OpenSearchUnavailable(RuntimeError):
    """No java/javac/mvn, the jars not fetched, or the node did not start."""


def classpath() -> str:
    """The node's class path, resolved offline by Maven once and cached while every jar in it exists."""
    return maven_jars.classpath(CACHE, POM, OPENSEARCH_VERSION, "OpenSearch", OpenSearchUnavailable, INSTALL_HINT)


def launcher(jars: str) -> Path:
    """The compiled launcher's directory (compiled again when the source changed)."""
    return maven_jars.compiled_launcher(CACHE, LAUNCHER, jars, OpenSearchUnavailable, INSTALL_HINT)


@dataclass
class OpenSearchServer:
    """A running node: ``url`` is its HTTP address; helpers index, read and list documents (through the REST
    API with the standard library, never through the code under test)."""

    root: Path
    port: int
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = ()) -> Any:
        data = body if isinstance(body, bytes) else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/x-ndjson" if isinstance(body, bytes) else "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as e:
            if e.code in ok:
                return json.loads(e.read() or b"{}")
            raise RuntimeError(f"{method} {path}: {e.code} {e.read()[:500]!r}") from None
        return json.loads(raw) if raw else {}

    def index_docs(self, index: str, docs: list[dict[str, Any]], ids: list[str] | None = None) -> None:
        lines = []
        for i, doc in enumerate(docs):
            meta: dict[str, Any] = {"_index": index}
            if ids is not None:
                meta["_id"] = ids[i]
            lines.append(json.dumps({"index": meta}) + "\n" + json.dumps(doc) + "\n")
        answer = self.request("POST", "/_bulk?refresh=true", "".join(lines).encode())
        if answer.get("errors"):
            raise RuntimeError(f"bulk into {index} failed: {answer}")

    def docs(self, index: str) -> dict[str, dict[str, Any]]:
        """Every document of ``index`` by id (after a refresh)."""
        self.request("POST", f"/{index}/_refresh")
        found = self.request("POST", f"/{index}/_search", {"size": 10000, "query": {"match_all": {}}})
        return {h["_id"]: h["_source"] for h in found["hits"]["hits"]}

    def indices(self, pattern: str = "*") -> list[str]:
        """The indices matching ``pattern``, hidden ones included."""
        found = self.request("GET", f"/_cat/indices/{pattern}?format=json&h=index&expand_wildcards=all", ok=(404,))
        return sorted(r["index"] for r in found) if isinstance(found, list) else []

    def delete(self, index: str) -> None:
        self.request("DELETE", f"/{index}?expand_wildcards=all", ok=(404,))

    def stop(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # the launcher closes the node and exits
        stop_process(self.process, timeout=20)
        shutil.rmtree(self.root, ignore_errors=True)


def start() -> OpenSearchServer:
    """Start a node on a free port; returns once it answers."""
    return on_a_free_port(_start_once, OpenSearchUnavailable)


def _start_once() -> OpenSearchServer:
    """One try, on ports picked now."""
    java = shutil.which("java")
    if java is None:
        raise OpenSearchUnavailable("no java on PATH")
    jars = classpath()
    compiled = launcher(jars)
    root = Path(tempfile.mkdtemp(prefix="opensearch-"))
    (root / "config").mkdir()
    port, transport = free_port(), free_port()
    log = (root / "node.log").open("wb")
    process = subprocess.Popen([java, *JVM_OPTIONS, "-cp", f"{compiled}{os.pathsep}{jars}", "EmbeddedNode",
                                str(root), str(port), str(transport)],
                               stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = OpenSearchServer(root, port, process)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = (root / "node.log").read_text(errors="replace")[-3000:]
            shutil.rmtree(root, ignore_errors=True)
            raise OpenSearchUnavailable(f"the OpenSearch node exited ({process.returncode}):\n{text}")
        try:
            health = server.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=1s", ok=(408,))
            if health.get("status") in ("green", "yellow"):
                return server
        except (OSError, RuntimeError):
            pass
        time.sleep(0.2)
    text = (root / "node.log").read_text(errors="replace")[-3000:]
    server.stop()
    raise OpenSearchUnavailable(f"the OpenSearch node did not answer within {START_TIMEOUT} s:\n{text}")


if __name__ == "__main__":
    node = start()
    print(node.url, flush=True)
    try:
        node.process.wait()
    except KeyboardInterrupt:
        node.stop()
