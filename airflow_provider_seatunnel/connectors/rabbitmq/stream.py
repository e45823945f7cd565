"""The STREAMING read of a queue: a PySpark stream reader (``DataSourceStreamReader``) whose planning methods
Spark calls in one long-lived Python worker of the query, on the driver's side, so that the channel that
received a delivery is the one that acknowledges it. The executors only get the bodies, inside the
partitions.

Offsets count the messages the stream has taken (``{"n": ...}``). ``latestOffset`` takes the messages ready
now (at most :data:`MAX_PER_BATCH`) and keeps them with their last delivery tag by end offset;
``partitions(start, end)`` deals the bodies of that range over ``parallelism`` partitions; ``commit(end)``,
which Spark calls once the micro-batches up to ``end`` are committed (the sink's commit done), acknowledges
them (one ``basic.ack`` with ``multiple``); so does a watcher thread as soon as the query's commit log (a
local checkpoint) records a micro-batch, since Spark commits a source only when it plans the next
micro-batch, which an ``available_now`` query never does after its last one. A range Spark replays after a
restart (planned, not committed: the old connection died and the broker requeued its deliveries at the head
of the queue) is taken again, ``end - start`` messages, the same ones while no other consumer shares the
queue. At least once: a crash between a sink's commit and the acknowledgement reads those messages again in
the next micro-batch.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from .client import connect
from .options import Endpoint

#: messages one micro-batch takes at most (the rest waits for the next one)
MAX_PER_BATCH = 10_000
#: how long the watcher waits, once the query's planning thread is gone, for the commit of a last micro-batch
LINGER = 10.0


@dataclass
class Bodies(InputPartition):
    bodies: list[bytes]


class QueueStreamReader(DataSourceStreamReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.endpoint = replace(Endpoint.from_json(spec["endpoint"]), heartbeat=0)
        self.conn: Any = None
        self.channel: Any = None
        self.pending: dict[int, tuple[int, int, list[bytes]]] = {}  # end offset -> (start, last tag, bodies)
        self.lock = threading.RLock()  # the watcher and Spark's calls share the one connection, one at a time
        self.watcher: threading.Thread | None = None

    def __getstate__(self) -> dict[str, Any]:
        """What Spark ships to the executors (``read`` needs nothing else): the spec, no connection or lock."""
        return {"spec": self.spec}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["spec"])  # type: ignore[misc]

    def _channel(self) -> Any:
        if self.channel is None or not self.channel.is_open:
            self.conn = connect(self.endpoint, f"cannot read queue {self.spec['queue']!r}")
            self.channel = self.conn.channel()
            self.channel.queue_declare(self.spec["queue"], **self.spec["declare"])
            if self.spec.get("prefetch_count"):
                self.channel.basic_qos(prefetch_count=int(self.spec["prefetch_count"]))
            self.pending.clear()
        return self.channel

    def initialOffset(self) -> dict:
        return {"n": 0}

    def _take(self, limit: int, wait: bool) -> tuple[int | None, list[bytes]]:
        """Up to ``limit`` bodies: those ready now, or with ``wait`` waiting up to ``delivery_timeout`` for more."""
        ch = self._channel()
        bodies: list[bytes] = []
        last: int | None = None
        deadline = time.monotonic() + float(self.spec["delivery_timeout_ms"]) / 1000 if wait else 0.0
        while len(bodies) < limit:
            method, _, body = ch.basic_get(self.spec["queue"], auto_ack=False)
            if method is None:
                if time.monotonic() >= deadline:
                    break
                self.conn.sleep(0.05)
                continue
            last = method.delivery_tag
            bodies.append(body)
        return last, bodies

    def latestOffset(self, start: dict, limit: Any) -> dict:
        with self.lock:
            return self._latest(start)

    def _latest(self, start: dict) -> dict:
        first = int(start["n"])
        if self.pending and max(self.pending) > first:
            return {"n": max(self.pending)}  # taken already, not planned yet
        last, bodies = self._take(MAX_PER_BATCH, wait=False)
        if last is None:
            return {"n": first}
        end = first + len(bodies)
        self.pending[end] = (first, last, bodies)
        return {"n": end}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        with self.lock:
            out = self._partitions(start, end)
        self._watch()
        return out

    def _partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        first, stop = int(start["n"]), int(end["n"])
        bodies = [b for n in sorted(self.pending) if first < n <= stop for b in self.pending[n][2]]
        if len(bodies) != stop - first:  # a replay after a restart: the requeued deliveries come first
            last, bodies = self._take(stop - first, wait=True)
            if last is not None:
                self.pending[stop] = (first, last, bodies)
        readers = max(1, int(self.spec.get("parallelism") or 1))
        size, extra = divmod(len(bodies), readers)
        out, at = [], 0
        for i in range(readers):
            n = size + (1 if i < extra else 0)
            out.append(Bodies(bodies[at:at + n]))
            at += n
        return out

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        for body in getattr(partition, "bodies", []):
            yield (body,)

    def commit(self, end: dict) -> None:
        with self.lock:
            self._ack(int(end["n"]))

    def _ack(self, stop: int) -> None:
        done = [n for n in self.pending if n <= stop]
        if not done or self.channel is None or not self.channel.is_open:
            return
        self.channel.basic_ack(max(self.pending[n][1] for n in done), multiple=True)
        for n in done:
            del self.pending[n]

    def _committed_end(self) -> int | None:
        """The end offset of the newest micro-batch the pipeline's query committed (its checkpoint's commit
        log), or None when the checkpoint is not a local directory or holds no commit."""
        root = self.spec.get("queries")
        if not root:
            return None
        best: int | None = None
        for commits in glob.glob(os.path.join(glob.escape(root), "*", "*", "commits")):
            ids = [int(n) for n in os.listdir(commits) if n.isdigit()]
            if not ids:
                continue
            with contextlib.suppress(OSError, ValueError, IndexError, KeyError, TypeError):
                with open(os.path.join(os.path.dirname(commits), "offsets", str(max(ids)))) as f:
                    end = int(json.loads(f.read().splitlines()[2])["n"])
                best = end if best is None else max(best, end)
        return best

    def _watch(self) -> None:
        """Start the watcher of the commit log once (a thread of this worker)."""
        if self.watcher is None and self.spec.get("queries"):
            self.watcher = threading.Thread(target=self._watching, name="rabbitmq-commit-watcher")
            self.watcher.start()

    def _watching(self) -> None:
        """Acknowledge each micro-batch as soon as the query's commit log records it (Spark's own ``commit``
        comes only when it plans the next micro-batch, never after an ``available_now`` query's last one).
        Once Spark's thread is gone, wait :data:`LINGER` seconds for a last commit, then close: the broker
        requeues what no commit recorded."""
        gone: float | None = None
        while True:
            end = self._committed_end()
            with self.lock:
                if end is not None:
                    with contextlib.suppress(Exception):
                        self._ack(end)
                idle = not self.pending
            if gone is None and not threading.main_thread().is_alive():
                gone = time.monotonic()
            if gone is not None and (idle or time.monotonic() - gone > LINGER):
                self.stop()
                return
            time.sleep(0.1)

    def stop(self) -> None:
        """Close the connection (the broker requeues what was not acknowledged)."""
        with self.lock, contextlib.suppress(Exception):
            if self.conn is not None and self.conn.is_open:
                self.conn.close()
