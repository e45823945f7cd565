"""Restore-trial targets on ActiveMQ (:mod:`restore_faults`): two queues of a private ActiveMQ Classic broker
(``tests/activemq_server.py``, started once per benchmark run), written by two ActiveMQ sinks of one pipeline
(``rf_a``, ``rf_b``; each message a row's JSON text).

Before every trial both queues are drained and hold one message of an earlier run again (``(-1, "old", "g0")``);
each trial has its own run id, so the commit records of earlier trials never apply. A reader browses the queue
(messages left in place). The sink is exactly once (docs/activemq.md): write tasks stage in broker transactions,
the commit moves the staged messages and writes the run's record in one broker transaction under the run's
fence. *Raw* counts the messages of both queues.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
QUEUES = ("rf_a", "rf_b")
READING = (
    "The targets are two queues of a private ActiveMQ Classic broker (`tests/activemq_server.py`, ActiveMQ 5.18 from "
    "Maven Central, messages in memory), read by browsing. The ActiveMQ sink stages each write task's rows in one "
    "broker transaction and commits a table by moving its staged messages into the queue with the run's commit "
    "record in ONE broker transaction, under a fence (a client id the broker grants one connection at a time); "
    "*visible after attempt 1* is `PARTIAL` only if a reader saw part of a commit. *Raw messages* counts both "
    "queues after attempt 1 → after the restore.")


def _server(resources: Any) -> Any:
    if getattr(resources, "activemq", None) is None:
        from tests import activemq_server

        resources.activemq = activemq_server.start()
        resources.callback(resources.activemq.stop)
    return resources.activemq


def activemq_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of ActiveMQ's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    from airflow_provider_seatunnel.connectors.activemq.client import drain

    server = _server(resources)

    def seeder(queue: str) -> Callable[[], None]:
        def seed() -> None:
            with server.stomp() as conn:
                drain(conn, queue)
            server.send(queue, [json.dumps({"id": -1, "name": "old", "grp": "g0"})])
        return seed

    def reader(queue: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(r["id"]), r["name"], r["grp"]) for r in map(json.loads, server.browse(queue))]
        return read

    def raw() -> int:
        return sum(len(server.browse(q)) for q in QUEUES)

    return [sink_cls(f"ActiveMQ {q}", f'ActiveMQ {{ plugin_input = "rows", {server.options()}, queue_name = "{q}" }}',
                     seeder(q), reader(q), raw if q == QUEUES[0] else None, list(OLD)) for q in QUEUES]
