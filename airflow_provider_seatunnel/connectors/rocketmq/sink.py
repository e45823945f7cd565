"""The Rocketmq sink: at least once, with a commit record and a fence per run.

A message once stored cannot be withdrawn, and RocketMQ's transactional (half) messages are resolved by
the producer group's check-back, which a restore of another process cannot answer for the messages of an
attempt that died: no staging here survives a restore intact. So the sink sends in ``prepare`` and keeps
the two guarantees the broker allows, per (run id, pipeline, sink, table), a digest named ``<id>`` below:

* **fence**: before sending, the driver locks the topic's first queue for the consumer group
  ``SEATUNNEL_FENCE_<id>`` under a client id of this attempt (the broker's queue lock, renewed every
  :data:`RENEW_S` seconds while the write runs). The broker refuses the lock to another client id while it
  is held and for 60 s after its holder's last renewal, so two attempts of one run never send at once: the
  later one waits up to :data:`FENCE_WAIT_S` (outliving the lock of an attempt that died without releasing
  it), then fails (transiently; Airflow retries it); once the earlier recorded its commit, it sends
  nothing. The lock is released when the attempt ends.
* **commit record**: once Spark's write finished (every message stored), the driver commits offset 1 of
  the consumer group ``SEATUNNEL_COMMIT_<id>`` on that queue. A restore of a run whose record exists sends
  nothing (its rows only pass through Spark's ``noop`` sink, to be counted).

A driver killed while sending, or after it and before the record, leaves messages the restore sends again:
duplicates of at most that run's rows, never a loss. The broker persists consumer offsets every few seconds
(``flushConsumerOffsetInterval``, 5 s by default): a broker killed right after a record may forget it, and
the restore then sends again. Both record groups are created by the broker's subscription-group
auto-creation (``autoCreateSubscriptionGroup``, on by default).

A topic that does not exist is created with the broker's default queue count when the broker creates topics
(it serves the auto-creation topic ``TBW102``), as SeaTunnel's producer relies on; otherwise the write fails
naming the topic.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
import uuid
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError, RuntimeConfigError
from ...spi.pysources import register_for_write
from ...spi.rows import keys_in_arrival_order
from .client import Client, Queue, Route, error_of
from .formats import body_of, key_of
from .options import SinkOptions
from .remoting import AUTO_CREATE_TOPIC, RemotingError

log = logging.getLogger("seatunnel.rocketmq")

FENCE_PREFIX = "SEATUNNEL_FENCE_"
COMMIT_PREFIX = "SEATUNNEL_COMMIT_"
#: how often the fence's lock is renewed (the broker lets an unrenewed lock expire after 60 s)
RENEW_S = 15.0
#: how long an attempt waits for a fence held by another before it is refused: a little more than the broker's
#: lock lifetime, so the lock of an attempt that died is outlived, and a live holder (which renews) still refuses
FENCE_WAIT_S = 65.0
#: queues of a topic created here when the auto-creation topic does not say
DEFAULT_QUEUES = 4


def commit_id(ctx: RunContext, vertex: Vertex, table: str) -> str:
    text = json.dumps([ctx.run_id, ctx.pipeline_key, vertex.ref, table, ctx.batch_id])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def topic_route(client: Client, topic: str) -> Route:
    """The topic's route, the topic created first when the broker auto-creates topics."""
    route = client.route(topic)
    if route is not None and route.write_queues:
        return route
    template = client.route(AUTO_CREATE_TOPIC)
    if template is None or not template.masters:
        raise RuntimeConfigError(f"Rocketmq: topic {topic!r} does not exist and the broker does not create topics "
                                 "(autoCreateTopicEnable is off): create it first")
    queues = min(DEFAULT_QUEUES, max(1, len(template.write_queues)))
    for addr in template.masters.values():
        client.create_topic(addr, topic, queues)
    for _ in range(50):  # the name server learns the topic from the broker's registration
        route = client.route(topic)
        if route is not None and route.write_queues:
            return route
        threading.Event().wait(0.1)
    raise PipelineError(f"Rocketmq: topic {topic!r} was created but the name server has no route for it yet")


class Fence:
    """The run's fence: a broker lock on one queue, renewed in a thread while held."""

    def __init__(self, client: Client, addr: str, group: str, queue: Queue, target: str):
        self.client, self.addr, self.group, self.queue, self.target = client, addr, group, queue, target
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _take(self) -> bool:
        with self._lock:
            return self.queue in self.client.lock(self.addr, self.group, [self.queue])

    def __enter__(self) -> Fence:
        deadline = time.monotonic() + FENCE_WAIT_S
        while not self._take():
            if time.monotonic() >= deadline:
                raise PipelineError(f"another attempt of this run is sending to {self.target} (it holds the fence "
                                    f"{self.group}): retry once it ended")
            log.info("Rocketmq: the fence %s is held by another attempt: waiting for it to end or expire", self.group)
            time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))
        self._thread = threading.Thread(target=self._renew, name="rocketmq-fence", daemon=True)
        self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(RENEW_S):
            with contextlib.suppress(RemotingError):
                if not self._take():
                    log.warning("Rocketmq: the fence %s was lost (another attempt took it)", self.group)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock, contextlib.suppress(RemotingError):
            self.client.unlock(self.addr, self.group, [self.queue])


def committed(client: Client, addr: str, queue: Queue, key: str) -> bool:
    return (client.group_offset(queue, addr, COMMIT_PREFIX + key) or 0) >= 1


def record_commit(client: Client, addr: str, queue: Queue, key: str) -> None:
    group = COMMIT_PREFIX + key
    client.pull(queue, addr, group, 0, 1)  # creates the group (the broker's auto-creation)
    client.commit_offset(queue, addr, group, 1)


def _spec(options: SinkOptions, route: Route) -> dict[str, Any]:
    assert options.endpoint is not None
    return {"name_servers": list(options.endpoint.name_servers), "topic": options.topic, "group": options.group,
            "queues": [{"broker": q.broker, "queue": q.queue_id} for q in route.write_queues],
            "masters": route.masters, "max_message_size": options.max_message_size,
            "send_timeout_ms": options.send_timeout_ms}


def write(ctx: RunContext, vertex: Vertex, data: Dataset, options: SinkOptions) -> None:
    """Send every table's rows as messages, once per run id (fenced, recorded)."""
    from .datasource import NAME, SPEC_OPTION, RocketMQDataSource

    assert options.endpoint is not None
    target = f"{options.endpoint.label} topic {options.topic!r}"
    client = Client(options.endpoint.name_servers, options.send_timeout_ms / 1000 + 5,
                    client_id=f"seatunnel-{uuid.uuid4().hex}")
    try:
        route = topic_route(client, options.topic)
        first = route.write_queues[0]
        addr = route.masters[first.broker]
        for table, df in data.items():
            key = commit_id(ctx, vertex, table)
            with Fence(client, addr, FENCE_PREFIX + key, first, target):
                if committed(client, addr, first, key):
                    log.info("Rocketmq %s: table %s of run %s was sent already: nothing sent", vertex.ref, table,
                             ctx.run_id)
                    df.write.format("noop").mode("overwrite").save()
                    continue
                # a key's rows in one writer, in arrival order: its messages reach its queue in order
                rows = ctx.with_write_faults(vertex, keys_in_arrival_order(df, list(options.key_fields),
                                                                           vertex.parallelism))
                register_for_write(ctx.spark, rows, RocketMQDataSource)
                out = rows.select(body_of(rows, options.format, options.delimiter).alias("body"),
                                  key_of(rows, options.key_fields).alias("key"))
                out.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(_spec(options, route))).save()
                ctx.fault_point("sink.commit", vertex)
                record_commit(client, addr, first, key)
                log.info("Rocketmq %s: table %s sent to %s (every message stored)", vertex.ref, table, target)
    except RemotingError as e:
        raise error_of(e, f"Rocketmq {vertex.ref}: cannot send to {target}") from None
    finally:
        client.close()
