"""The STREAMING read of a queue: a PySpark simple stream reader (``SimpleDataSourceStreamReader``) whose
methods Spark calls in one long-lived Python worker of the query, on the driver's side, so that the
channel that received a delivery is the one that acknowledges it.

Offsets count the messages the stream has taken (``{"n": ...}``). ``read(start)`` takes the messages ready
now (at most ``max_per_batch``, waiting ``delivery_timeout`` for the first), keeps their delivery tags by
offset and returns their bodies; ``commit(end)``, which Spark calls once the micro-batches up to ``end``
are committed (every sink's commit done), acknowledges them (one ``basic.ack`` with ``multiple``).
``readBetweenOffsets(start, end)`` replays a micro-batch Spark planned but did not commit: from memory while
the worker lives, else (a restarted query: the old connection died, the broker requeued its deliveries at
the head of the queue) by taking ``end - start`` messages again, the same ones while no other consumer
shares the queue. At least once: a crash between a sink's commit and the acknowledgement reads those
messages again in the next micro-batch.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pyspark.sql.datasource import SimpleDataSourceStreamReader

from .client import connect
from .options import Endpoint

#: messages one micro-batch takes at most (the rest waits for the next one)
MAX_PER_BATCH = 10_000


class QueueStreamReader(SimpleDataSourceStreamReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.endpoint = replace(Endpoint.from_json(spec["endpoint"]), heartbeat=0)
        self.conn: Any = None
        self.channel: Any = None
        self.pending: dict[int, tuple[int, list[bytes]]] = {}  # end offset -> (last delivery tag, bodies)

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
        """Up to ``limit`` bodies (waiting ``delivery_timeout`` for each when ``wait``, else only what is ready)."""
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

    def read(self, start: dict) -> tuple[Iterator[tuple], dict]:
        first = int(start["n"])
        last, bodies = self._take(int(self.spec.get("max_per_batch") or MAX_PER_BATCH), wait=False)
        end = first + len(bodies)
        if bodies and last is not None:
            self.pending[end] = (last, bodies)
        return iter([(b,) for b in bodies]), {"n": end}

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple]:
        first, stop = int(start["n"]), int(end["n"])
        if stop in self.pending:
            return iter([(b,) for b in self.pending[stop][1]])
        last, bodies = self._take(stop - first, wait=True)
        if last is not None:
            self.pending[stop] = (last, bodies)
        return iter([(b,) for b in bodies])

    def commit(self, end: dict) -> None:
        stop = int(end["n"])
        done = [n for n in self.pending if n <= stop]
        if not done or self.channel is None:
            return
        self.channel.basic_ack(max(self.pending[n][0] for n in done), multiple=True)
        for n in done:
            del self.pending[n]

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            if self.conn is not None and self.conn.is_open:
                self.conn.close()
