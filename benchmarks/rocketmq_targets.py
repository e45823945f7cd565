"""Restore-trial targets on RocketMQ (:mod:`restore_faults`): a private RocketMQ broker (``tests/rocketmq_server.py``,
started once per benchmark run).

``Rocketmq``: two topics written by two Rocketmq sinks of one pipeline (``rf_a``, ``rf_b``; each message a row's
JSON). A topic cannot be emptied, so before every trial each queue's end offset is taken as the trial's start and one
message of an earlier run (``(-1, "old", "g0")``) is sent; a reader sees every message from those offsets. Each trial
has its own run id, so the commit records of earlier trials never apply.

``Rocketmq source``: the input rows are JSON messages of the topic ``rf_src``, sent again before each trial after the
job's consumer group was moved to the topic's end (what an emptied queue is for a group), read in BATCH into the two
LocalFile sinks and committed to the group only once both committed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
TOPICS = ("rf_a", "rf_b")
GROUP = "rf-group"
READING = (
    "The targets are two topics of a private RocketMQ broker (`tests/rocketmq_server.py`, Maven Central's broker jars "
    "with a test name server), read by pulling every message stored since the trial began. The Rocketmq sink is at "
    "least once (docs/rocketmq.md): a driver killed while sending or before its commit record leaves messages its "
    "restore sends again (duplicates, never losses); *visible after attempt 1* may be `PARTIAL` for the same reason "
    "(no staging: a message is visible once stored). *Raw messages* counts both topics' messages of the trial after "
    "attempt 1 → after the restore.")
#: the sink fires sink.write (its write tasks) and sink.commit (before its record); the engine fires sink.prepared
#: and pipeline.committed
POINTS = ("sink.write", "sink.prepared", "sink.commit", "pipeline.committed")


def _server(resources: Any) -> Any:
    if getattr(resources, "rocketmq", None) is None:
        from tests import rocketmq_server

        resources.rocketmq = rocketmq_server.start()
        resources.callback(resources.rocketmq.stop)
    return resources.rocketmq


def _ends(server: Any, topic: str) -> dict[int, int]:
    with server.client() as c:
        route = c.route(topic)
        return {} if route is None else {q.queue_id: c.max_offset(q, server.broker_addr) for q in route.queues}


def _since(server: Any, topic: str, starts: dict[int, int]) -> list[bytes]:
    """The bodies stored in ``topic`` from ``starts`` (queue id -> offset) on."""
    from airflow_provider_seatunnel.connectors.rocketmq.client import Queue

    out: list[bytes] = []
    with server.client() as c:
        route = c.route(topic)
        for q in route.queues if route else ():
            offset, end = starts.get(q.queue_id, 0), c.max_offset(q, server.broker_addr)
            while offset < end:
                got, offset = c.pull(Queue(topic, q.broker, q.queue_id), server.broker_addr, "rf-reader", offset, 32)
                if not got:
                    break
                out += [m.body for m in got]
    return out


def rocketmq_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Rocketmq's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)
    starts: dict[str, dict[int, int]] = {}

    def seeder(topic: str) -> Callable[[], None]:
        def seed() -> None:
            server.create_topic(topic)
            starts[topic] = _ends(server, topic)
            server.send(topic, [json.dumps({"id": -1, "name": "old", "grp": "g0"})])
        return seed

    def reader(topic: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(r["id"]), r["name"], r["grp"]) for r in map(json.loads, _since(server, topic, starts[topic]))]
        return read

    def raw() -> int:
        return sum(len(_since(server, t, starts.get(t, {}))) for t in TOPICS)

    return [sink_cls(f"Rocketmq {t}", f'Rocketmq {{ plugin_input = "rows", name.srv.addr = "{server.name_srv_addr}", '
                                      f'topic = "{t}" }}', seeder(t), reader(t), raw if t == TOPICS[0] else None,
                     list(OLD)) for t in TOPICS]


SOURCE_TOPIC = "rf_src"
SOURCE_READING = (
    "The input is the topic `rf_src` of the private RocketMQ broker (`tests/rocketmq_server.py`) holding the rows as "
    "JSON messages: before each trial the job's consumer group is moved to the topic's end and the rows are sent "
    "again. The job is BATCH: the Rocketmq source reads each queue up to its end at start and commits the group's "
    "offsets only once both LocalFile sinks committed (docs/rocketmq.md); the restore (same run id) reads the ranges "
    "attempt 1 recorded at the broker. *Visible after attempt 1* is as for LocalFile. *Raw* is the data files of the "
    "first sink, then the messages the group has not committed, after attempt 1 → after the restore: messages left "
    "uncommitted after the restore would be read again by the next run (a duplicate there, never a loss here). The "
    "guarantee scored is at least once (the source's promise).")


def rocketmq_source(work: Any, expected: list[Row], resources: Any) -> tuple[str, str]:
    """The job's source reading :data:`SOURCE_TOPIC` from the group's offsets: (env settings, source block)."""
    server = _server(resources)
    block = (f'Rocketmq {{ plugin_output = "rows", name.srv.addr = "{server.name_srv_addr}", '
             f'topics = "{SOURCE_TOPIC}", consumer.group = "{GROUP}", '
             'schema = { fields { id = bigint, name = string, grp = string } } }')
    return "", block


def _lag(server: Any) -> int:
    from airflow_provider_seatunnel.connectors.rocketmq.client import Queue

    with server.client() as c:
        route = c.route(SOURCE_TOPIC)
        total = 0
        for q in route.queues if route else ():
            queue = Queue(SOURCE_TOPIC, q.broker, q.queue_id)
            total += c.max_offset(queue, server.broker_addr) - (c.group_offset(queue, server.broker_addr, GROUP) or 0)
        return total


def fresh_topic(expected: list[Row], resources: Any, sinks: list[Any]) -> list[Any]:
    """``sinks`` (two LocalFile sinks) whose first seed also moves the group to the topic's end and sends
    ``expected`` again, and whose second sink's raw count is the messages the group has not committed."""
    import dataclasses

    from airflow_provider_seatunnel.connectors.rocketmq.client import Queue

    server = _server(resources)
    bodies = [json.dumps({"id": i, "name": n, "grp": g}) for i, n, g in expected]
    first, second = sinks

    def seed() -> None:
        server.create_topic(SOURCE_TOPIC)
        with server.client() as c:
            for queue_id, end in _ends(server, SOURCE_TOPIC).items():
                q = Queue(SOURCE_TOPIC, "broker-a", queue_id)
                c.pull(q, server.broker_addr, GROUP, end, 1)  # the group exists once it pulled
                c.commit_offset(q, server.broker_addr, GROUP, end)
        server.send(SOURCE_TOPIC, bodies)
        first.seed()

    return [dataclasses.replace(first, seed=seed), dataclasses.replace(second, raw=lambda: _lag(server))]
