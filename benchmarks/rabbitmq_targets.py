"""Restore-trial targets on RabbitMQ (:mod:`restore_faults`): two queues of a private RabbitMQ node
(``tests/rabbitmq_server.py``, started once per benchmark run), written by two RabbitMQ sinks of one pipeline
(``rf_a``, ``rf_b``; each message a row's JSON).

Before every trial both queues are deleted and declared again holding one message of an earlier run
(``(-1, "old", "g0")``); each trial has its own run id, so the commit records of earlier trials never apply.

A reader sees every message ready in the queue (taken without acknowledgement, then returned). The sink is **at
least once** (docs/rabbitmq.md): a run killed while publishing, or after it and before its commit record,
republishes on restore, so such trials show duplicates by design; a restore after the record publishes nothing;
an overlapping attempt is refused while the other holds the run's fence. *Raw* counts the messages of both
queues.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
QUEUES = ("rf_a", "rf_b")
READING = (
    "The targets are two queues of a private RabbitMQ node (`tests/rabbitmq_server.py`, Debian's rabbitmq-server), "
    "read by taking every ready message without acknowledging it. The RabbitMQ sink is at least once "
    "(docs/rabbitmq.md): a driver killed while publishing or before its commit record leaves messages its restore "
    "publishes again (duplicates, never losses); *visible after attempt 1* may be `PARTIAL` for the same reason "
    "(no staging: a message is visible once confirmed). *Raw messages* counts both queues after attempt 1 → after "
    "the restore.")
#: the fault points of the sink: it fires sink.write (its write tasks) and sink.commit (before its record); the
#: engine fires sink.prepared and pipeline.committed; it has no sink.move (nothing moves at a commit)
POINTS = ("sink.write", "sink.prepared", "sink.commit", "pipeline.committed")


def _server(resources: Any) -> Any:
    if getattr(resources, "rabbitmq", None) is None:
        from tests import rabbitmq_server

        resources.rabbitmq = rabbitmq_server.start()
        resources.callback(resources.rabbitmq.stop)
    return resources.rabbitmq


def _peek(server: Any, queue: str) -> list[bytes]:
    """Every ready message of ``queue``, left in it (taken unacknowledged; closing the channel requeues them)."""
    out: list[bytes] = []
    with server.channel() as ch:
        while True:
            method, _, body = ch.basic_get(queue, auto_ack=False)
            if method is None:
                return out
            out.append(body)


def rabbitmq_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of RabbitMQ's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seeder(queue: str) -> Callable[[], None]:
        def seed() -> None:
            server.delete(queue)
            server.publish(queue, [json.dumps({"id": -1, "name": "old", "grp": "g0"})])
        return seed

    def reader(queue: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(r["id"]), r["name"], r["grp"]) for r in map(json.loads, _peek(server, queue))]
        return read

    def raw() -> int:
        return sum(server.count(q) for q in QUEUES)

    return [sink_cls(f"RabbitMQ {q}", f'RabbitMQ {{ plugin_input = "rows", {server.options()}, queue_name = "{q}" }}',
                     seeder(q), reader(q), raw if q == QUEUES[0] else None, list(OLD)) for q in QUEUES]



SOURCE_QUEUE = "rf_src"
SOURCE_READING = (
    "The input is a durable queue of the private RabbitMQ node (`tests/rabbitmq_server.py`) holding the rows as JSON "
    "messages, emptied and published again before each trial (the job does not write it). The job is BATCH: the "
    "RabbitMQ source takes the messages ready at its start and acknowledges them only once both LocalFile sinks "
    "committed (docs/rabbitmq.md); a run's first read records how many it took, and its restore takes as many "
    "again (the requeued ones, at the head of the queue). *Visible after attempt 1* is as for LocalFile. *Raw* is "
    "the data files of the first sink, then the messages left in the source queue, after attempt 1 → after the "
    "restore: a message left after the restore would be read again by the next run (a duplicate there, never a "
    "loss here). The guarantee scored is at least once (the source's promise); the restore of the same run id "
    "is expected to show no duplicate in the targets, since the sinks skip a committed run.")


def rabbitmq_source(work: Any, expected: list[Row], resources: Any) -> tuple[str, str]:
    """The job's source reading the queue :data:`SOURCE_QUEUE`: (env settings, source block). The queue is
    filled by :func:`fresh_queue`'s seed before each trial."""
    server = _server(resources)
    block = (f'RabbitMQ {{ plugin_output = "rows", {server.options()}, queue_name = "{SOURCE_QUEUE}", '
             "schema = { fields { id = bigint, name = string, grp = string } } }")
    return "", block


def fresh_queue(expected: list[Row], resources: Any, sinks: list[Any]) -> list[Any]:
    """``sinks`` (two LocalFile sinks) whose first seed also empties the source queue and publishes ``expected``
    again, and whose second sink's raw count is the messages left in the source queue."""
    import dataclasses

    server = _server(resources)
    bodies = [json.dumps({"id": i, "name": n, "grp": g}) for i, n, g in expected]
    first, second = sinks

    def seed() -> None:
        server.delete(SOURCE_QUEUE)
        server.publish(SOURCE_QUEUE, list(bodies))
        first.seed()

    return [dataclasses.replace(first, seed=seed),
            dataclasses.replace(second, raw=lambda: server.count(SOURCE_QUEUE))]
