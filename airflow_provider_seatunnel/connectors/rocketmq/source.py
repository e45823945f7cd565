"""The Rocketmq source in BATCH: bounded reads of every queue of ``topics``, the group's offsets committed
after the pipeline committed.

On the driver, :func:`plan_ranges` lists the topics' readable queues (their routes from the name servers)
and fixes each queue's range: the start by ``start.mode`` (the group's committed offset, else the first;
the first; the last; the first at ``start.mode.timestamp``; ``start.mode.offsets``, else the first), the
end the queue's max offset at that moment. A run's first read records its ranges at the broker (offsets of
two per-run consumer groups, ``SEATUNNEL_READ_S_<id>``/``SEATUNNEL_READ_E_<id>``, stored plus one so the
broker's zero for an unknown group means "none"); a restore of the run reads the recorded ranges, the same
messages, so a sink that recorded the run's commit skips exactly them.

The queues are dealt over the plan's parallelism (:mod:`.datasource`: one Spark partition per reader, each
pulling its queues' ranges, ``batch.size`` messages per pull), and the bodies become rows of ``schema``
with native expressions (:mod:`.formats`). With ``commit.on.checkpoint`` (the default) :func:`acknowledge`
commits each queue's end offset to ``consumer.group`` once every sink of the pipeline committed: a run
that fails commits nothing and its restore reads the same messages again. A driver killed between the
sinks' commit and this one leaves the group behind: the next run (another run id) reads those messages
again (at least once). With ``commit.on.checkpoint = false`` the offsets are committed as soon as the
ranges are fixed, as SeaTunnel's background commits do: a failed run's messages are then not read again
from the group's offsets.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.pysources import register_once
from ...spi.rows import with_kind
from ...spi.sessions import at_run_end, session_key
from .client import Client, Queue, error_of
from .options import SourceOptions
from .remoting import RemotingError

log = logging.getLogger("seatunnel.rocketmq")

START_RECORD = "SEATUNNEL_READ_S_"
END_RECORD = "SEATUNNEL_READ_E_"


@dataclass(frozen=True)
class Range:
    """Messages ``[start, end)`` of one queue, at the broker ``addr``."""

    queue: Queue
    addr: str
    start: int
    end: int

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.queue.topic, "broker": self.queue.broker, "queue": self.queue.queue_id,
                "addr": self.addr, "start": self.start, "end": self.end}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Range:
        return cls(Queue(str(d["topic"]), str(d["broker"]), int(d["queue"])), str(d["addr"]), int(d["start"]),
                   int(d["end"]))


#: (session, run id, pipeline, vertex ref) -> the ranges a read commits to the group once the pipeline committed
_PENDING: dict[tuple[str, str, str, str], tuple[SourceOptions, list[Range]]] = {}
_LOCK = threading.Lock()


def _key(ctx: RunContext, vertex: Vertex) -> tuple[str, str, str, str]:
    return session_key(ctx.spark), ctx.run_id, ctx.pipeline_key, vertex.ref


def _forget(spark: Any) -> None:
    """A run ended without its commit: its ranges are not committed (the next run reads them again)."""
    mine = session_key(spark)
    with _LOCK:
        for key in [k for k in _PENDING if k[0] == mine]:
            del _PENDING[key]


def record_id(ctx: RunContext, vertex: Vertex) -> str:
    text = json.dumps([ctx.run_id, ctx.pipeline_key, vertex.ref])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _start(client: Client, o: SourceOptions, q: Queue, addr: str, first: int, last: int) -> int:
    mode = o.start_mode
    if mode == "CONSUME_FROM_FIRST_OFFSET":
        return first
    if mode == "CONSUME_FROM_LAST_OFFSET":
        return last
    if mode == "CONSUME_FROM_TIMESTAMP":
        assert o.start_timestamp is not None
        return client.offset_at(q, addr, o.start_timestamp)
    if mode == "CONSUME_FROM_SPECIFIC_OFFSETS":
        return o.start_offsets.get((q.topic, q.queue_id), first)
    committed = client.group_offset(q, addr, o.group)
    return first if committed is None else committed


def _recorded(client: Client, q: Queue, addr: str, record: str) -> tuple[int, int] | None:
    start = client.group_offset(q, addr, START_RECORD + record)
    end = client.group_offset(q, addr, END_RECORD + record)
    if not start or not end:
        return None
    return start - 1, end - 1


def _record(client: Client, ranges: list[Range], record: str) -> None:
    """Keep the ranges at the broker: the groups are created by a pull first (the broker's auto-creation)."""
    for rg in ranges:
        for group, value in ((START_RECORD + record, rg.start), (END_RECORD + record, rg.end)):
            client.pull(rg.queue, rg.addr, group, rg.end, 1)
            client.commit_offset(rg.queue, rg.addr, group, value + 1)


def plan_ranges(client: Client, o: SourceOptions, record: str | None) -> list[Range]:
    """Each readable queue's range (recorded by an earlier attempt of the run, else fixed now and recorded)."""
    ranges: list[Range] = []
    fresh = False
    for topic in o.topics:
        route = client.route(topic)
        if route is None:
            raise RuntimeConfigError(f"Rocketmq: topic {topic!r} does not exist at {o.endpoint and o.endpoint.label}")
        for q in route.queues:
            addr = route.masters[q.broker]
            earlier = _recorded(client, q, addr, record) if record else None
            if earlier is not None:
                ranges.append(Range(q, addr, *earlier))
                continue
            fresh = True
            first, last = client.min_offset(q, addr), client.max_offset(q, addr)
            start = min(max(_start(client, o, q, addr, first, last), first), last)
            ranges.append(Range(q, addr, start, last))
    if record and fresh:
        _record(client, ranges, record)
    return ranges


def commit(o: SourceOptions, ranges: list[Range]) -> None:
    """Commit each queue's end offset to the consumer group."""
    assert o.endpoint is not None
    with Client(o.endpoint.name_servers, o.poll_timeout_ms / 1000) as client:
        for rg in ranges:
            client.commit_offset(rg.queue, rg.addr, o.group, rg.end)


def read(ctx: RunContext, vertex: Vertex, o: SourceOptions) -> Dataset:
    """The messages of every queue's range as rows, in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION, RocketMQDataSource
    from .formats import rows_of

    assert o.endpoint is not None and o.schema is not None
    try:
        with Client(o.endpoint.name_servers, o.poll_timeout_ms / 1000) as client:
            ranges = plan_ranges(client, o, record_id(ctx, vertex))
    except RemotingError as e:
        raise error_of(e, f"Rocketmq {vertex.ref}: cannot list the queues of {', '.join(o.topics)}") from None
    if o.commit_after_pipeline:
        with _LOCK:
            _PENDING[_key(ctx, vertex)] = (o, ranges)
        at_run_end(_forget)
    else:
        commit(o, ranges)
    readers = max(1, int(vertex.parallelism))
    spec = {"name_servers": list(o.endpoint.name_servers), "group": o.group, "tags": o.tags,
            "batch_size": o.batch_size, "timeout_ms": o.poll_timeout_ms, "parallelism": readers,
            "ranges": [rg.to_json() for rg in ranges]}
    register_once(ctx.spark, RocketMQDataSource)
    raw = ctx.spark.read.format(NAME).option(SPEC_OPTION, json.dumps(spec)).load()
    log.info("Rocketmq %s: reading %d message(s) of %d queue(s) of %s into %d partition(s)", vertex.ref,
             sum(rg.end - rg.start for rg in ranges), len(ranges), ",".join(o.topics), readers)
    return {"default": with_kind(rows_of(raw, o.format, o.delimiter, o.schema))}


def acknowledge(ctx: RunContext, vertex: Vertex) -> None:
    """Every sink committed: commit the read's end offsets to the consumer group."""
    with _LOCK:
        pending = _PENDING.pop(_key(ctx, vertex), None)
    if pending is None:
        return
    o, ranges = pending
    try:
        commit(o, ranges)
    except RemotingError as e:
        log.warning("Rocketmq %s: the group %r's offsets were not committed (the next run reads those messages "
                    "again): %s", vertex.ref, o.group, e)
        return
    log.info("Rocketmq %s: committed group %r's offsets of %d queue(s)", vertex.ref, o.group, len(ranges))
