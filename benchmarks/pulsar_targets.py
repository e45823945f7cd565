"""Restore-trial targets on Pulsar (:mod:`restore_faults`): two topics of a private Pulsar standalone
(``tests/pulsar_server.py``, started once per benchmark run), written by two Pulsar sinks of one pipeline
(``rf_a``, ``rf_b``; each message a row's JSON), and ``Pulsar source``: a partitioned topic read in BATCH into
two LocalFile sinks.

Before every trial the sink topics are deleted and created again holding one message of an earlier run
(``(-1, "old", "g0")``); each trial has its own run id, so the commit records of earlier trials never apply.
A reader reads every message of a topic from the earliest.

The sink is **at least once** (docs/pulsar.md): a run killed while sending, or after it and before its commit
record, sends again on restore, so such trials show duplicates by design; a restore after the record sends
nothing; an overlapping attempt is refused while the other holds the run's fence. *Raw* counts the messages of
both topics.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
TOPICS = ("rf_a", "rf_b")
READING = (
    "The targets are two topics of a private Pulsar standalone (`tests/pulsar_server.py`, Pulsar 4.0.7 from Maven "
    "Central's jars), read from the earliest message. The Pulsar sink is at least once (docs/pulsar.md: the Python "
    "client has no transactions): a driver killed while sending or before its commit record leaves messages its "
    "restore sends again (duplicates, never losses); *visible after attempt 1* may be `PARTIAL` for the same reason "
    "(no staging). *Raw messages* counts both topics after attempt 1 → after the restore.")
#: the fault points of the sink: it fires sink.write (its write tasks) and sink.commit (before its record); the
#: engine fires sink.prepared and pipeline.committed
POINTS = ("sink.write", "sink.prepared", "sink.commit", "pipeline.committed")


def _server(resources: Any) -> Any:
    if getattr(resources, "pulsar", None) is None:
        from tests import pulsar_server

        resources.pulsar = pulsar_server.start()
        resources.callback(resources.pulsar.stop)
    return resources.pulsar


def _rows(server: Any, topic: str) -> list[Row]:
    return [(int(r["id"]), r["name"], r["grp"]) for r in map(json.loads, server.read_all(topic))]


def pulsar_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Pulsar's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seeder(topic: str) -> Callable[[], None]:
        def seed() -> None:
            server.delete_topic(topic)
            server.send(server.create_topic(topic), [json.dumps({"id": -1, "name": "old", "grp": "g0"})])
        return seed

    def reader(topic: str) -> Callable[[], list[Row]]:
        return lambda: _rows(server, topic)

    def raw() -> int:
        return sum(len(server.read_all(t)) for t in TOPICS)

    return [sink_cls(f"Pulsar {t}", f'Pulsar {{ plugin_input = "rows", {server.options()}, topic = "{t}" }}',
                     seeder(t), reader(t), raw if t == TOPICS[0] else None, list(OLD)) for t in TOPICS]


SOURCE_TOPIC = "rf_src"
SOURCE_READING = (
    "The input is a topic of three partitions of the private Pulsar standalone (`tests/pulsar_server.py`) holding "
    "the rows as JSON messages, deleted and filled again before each trial (the job does not write it). The job is "
    "BATCH: the Pulsar source (cursor.startup.mode SUBSCRIPTION, a new subscription at EARLIEST, stop LATEST) fixes "
    "each partition's range at its start and acknowledges the subscription only once both LocalFile sinks "
    "committed (docs/pulsar.md); a restore starts again from the unacknowledged subscription. *Visible after "
    "attempt 1* is as for LocalFile. *Raw* is the data files of the first sink, then the messages of the source "
    "topic after the subscription's position, after attempt 1 → after the restore (left unacknowledged: read again "
    "by the next run, a duplicate there, never a loss here).")


def pulsar_source(work: Any, expected: list[Row], resources: Any) -> tuple[str, str]:
    """The job's source reading :data:`SOURCE_TOPIC` (filled by :func:`fresh_topic`'s seed before each trial)."""
    server = _server(resources)
    block = (f'Pulsar {{ plugin_output = "rows", {server.options()}, topic = "{SOURCE_TOPIC}", '
             'subscription.name = "rf", cursor.startup.mode = SUBSCRIPTION, cursor.reset.mode = EARLIEST, '
             "cursor.stop.mode = LATEST, parallelism = 2, "
             "schema = { fields { id = bigint, name = string, grp = string } } }")
    return "", block


def _backlog(server: Any) -> int:
    """The messages of the source topic after the subscription ``rf`` (0 without one)."""
    total = 0
    for i in range(3):
        stats = server.admin("GET", f"/admin/v2/persistent/public/default/{SOURCE_TOPIC}-partition-{i}/stats")
        total += int(((stats.get("subscriptions") or {}).get("rf") or {}).get("msgBacklog", 0))
    return total


def fresh_topic(expected: list[Row], resources: Any, sinks: list[Any]) -> list[Any]:
    """``sinks`` (two LocalFile sinks) whose first seed also deletes the source topic and fills it with
    ``expected`` again, and whose second sink's raw count is the source's unacknowledged backlog."""
    import dataclasses

    server = _server(resources)
    bodies = [json.dumps({"id": i, "name": n, "grp": g}) for i, n, g in expected]
    first, second = sinks

    def seed() -> None:
        server.delete_topic(SOURCE_TOPIC)
        server.send(server.create_topic(SOURCE_TOPIC, partitions=3), list(bodies))
        first.seed()

    return [dataclasses.replace(first, seed=seed), dataclasses.replace(second, raw=lambda: _backlog(server))]
