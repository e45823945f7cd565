"""Restore-trial targets on Kafka (:mod:`restore_faults`): two topics of a private broker
(``tests/kafka_server.py``, one KRaft node started once per benchmark run), written by two Kafka
sinks of one pipeline with ``semantics = EXACTLY_ONCE``:

* ``rf_kafka_json``: json records keyed by ``id`` (``partition_key_fields``);
* ``rf_kafka_text``: text records ``id,name,grp`` without a key.

Both topics have 3 partitions. Before every trial each topic is deleted with what it holds
(records, aborted transactions' records, transaction markers) and created again, then given one
record of an earlier run, ``(-1, "old", "g0")``, outside any transaction.

A reader sees what a consumer reading ``read_committed`` sees: every partition from its
beginning to its last stable offset (records of aborted transactions left out; an open
transaction hides itself and everything after it). *Raw* counts the records a
``read_uncommitted`` consumer sees (aborted and open transactions' records included, the
earlier record too): what a careless reader would see.

The sink's commit publishes the records of one sink in one transaction from the driver, so
``sink.move`` (fired in the commit after each table's records were sent, before the transaction
commits) occurs once per table, here once per sink: :data:`MOVES`.

For overlap trials, the outside "lock" of a Kafka target is the broker itself: its JVM stopped
(SIGSTOP) around attempt 1's commit while attempt 2 starts, resumed once attempt 2 finished or
after a while (:meth:`_Broker.paused`). Kafka has no lock a client could hold; a broker that
stops answering is what holds a producer's commit up.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
PARTITIONS = 3
#: sink.move occurrences in one run: one per sink (each sink's commit sends its records, then fires it once)
MOVES = 2
#: topic -> record format
TOPICS = {"rf_kafka_json": "json", "rf_kafka_text": "text"}


class _Broker:
    """The benchmark run's broker and the topic helpers of the trials."""

    def __init__(self, resources: Any):
        from tests import kafka_server

        self.server = kafka_server.start()
        resources.callback(self.server.stop)
        self._load_group_coordinator()

    def _load_group_coordinator(self) -> None:
        """Make the broker create and load its group coordinator (``__consumer_offsets``) before any run.

        The sink's commit reads its commit record with the admin client's ListConsumerGroupOffsets;
        librdkafka (2.16) dereferences a NULL consumer group when that request is answered "not
        coordinator", which a fresh broker does while it creates the topic: the driver dies of
        SIGSEGV before the transaction begins (nothing written, a restore commits). That is the first
        run on a new cluster, not a restore: the trials start from a broker whose coordinator is up.
        A consumer of a group asks first, until the answer is no error (a consumer gets "not
        coordinator" as an exception)."""
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        topic = self.server.create_topic("rf_kafka_warmup")
        consumer = Consumer(self.server.config(**{"group.id": "rf-kafka-warmup", "enable.auto.commit": False}))
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    consumer.committed([TopicPartition(topic, 0)], timeout=30)
                    return
                except KafkaException:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            consumer.close()

    @property
    def bootstrap(self) -> str:
        return str(self.server.bootstrap)

    def reset(self, topic: str, partitions: int = PARTITIONS) -> None:
        """``topic`` deleted (when it exists) and created again, empty.

        Existence is asked of the full topic list: a metadata request naming a missing topic
        makes this broker (``auto.create.topics.enable``) create it with one partition."""
        from confluent_kafka import KafkaException

        admin = self.server.admin()
        deadline = time.monotonic() + 60
        while True:
            try:
                if topic in admin.list_topics(timeout=30).topics:
                    admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout=60)
                self.server.create_topic(topic, partitions)
                return
            except KafkaException:  # the deletion is not through yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def values(self, topic: str, isolation: str = "read_committed") -> list[bytes]:
        return [value for _key, value, _p, _o in self.server.consume(topic, isolation=isolation, timeout=60)
                if value is not None]

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The broker's JVM stopped (SIGSTOP) for the block: no client gets an answer meanwhile."""
        pid = self.server.process.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)


def broker(resources: Any) -> _Broker:
    """The broker of the benchmark run, started once."""
    if getattr(resources, "kafka", None) is None:
        resources.kafka = _Broker(resources)
    return resources.kafka


def encode(row: Row, fmt: str) -> str:
    """A row as the sink writes it: a json object, or ``id,name,grp``."""
    i, name, grp = row
    return json.dumps({"id": i, "name": name, "grp": grp}) if fmt == "json" else f"{i},{name},{grp}"


def decode(value: bytes, fmt: str) -> Row:
    if fmt == "json":
        r = json.loads(value)
        return (int(r["id"]), r["name"], r["grp"])
    i, name, grp = value.decode("utf-8").split(",")
    return (int(i), name, grp)


def kafka_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Kafka's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    kafka = broker(resources)

    def seeder(topic: str, fmt: str) -> Callable[[], None]:
        def seed() -> None:
            kafka.reset(topic)
            keys = [json.dumps({"id": r[0]}) for r in OLD] if fmt == "json" else None
            kafka.server.produce(topic, [encode(r, fmt) for r in OLD], keys=keys)
        return seed

    def reader(topic: str, fmt: str) -> Callable[[], list[Row]]:
        return lambda: [decode(v, fmt) for v in kafka.values(topic)]

    def raw(topic: str) -> Callable[[], int]:
        return lambda: len(kafka.values(topic, "read_uncommitted"))

    def block(topic: str, fmt: str) -> str:
        key = ', partition_key_fields = ["id"]' if fmt == "json" else ""
        return (f'Kafka {{ plugin_input = "rows", bootstrap.servers = "{kafka.bootstrap}", topic = "{topic}", '
                f"format = {fmt}{key}, semantics = EXACTLY_ONCE }}")

    return [sink_cls(f"Kafka {fmt} {topic}", block(topic, fmt), seeder(topic, fmt), reader(topic, fmt), raw(topic),
                     list(OLD)) for topic, fmt in TOPICS.items()]


READING = ("The targets are two topics of a private Kafka broker (`tests/kafka_server.py`, Apache Kafka 4.2, one "
           "KRaft node), 3 partitions each, written by two sinks with `semantics = EXACTLY_ONCE`: `rf_kafka_json` "
           "(json, keyed by `id`) and `rf_kafka_text` (text `id,name,grp`, no key). Each topic is created anew "
           "before a trial and holds one record of an earlier run. *Visible after attempt 1* is what a "
           "`read_committed` consumer reads from each topic, from the beginning of every partition (`old`: only "
           "the earlier record, `all`: everything, `PARTIAL`: a half-committed topic); *raw records* counts what "
           "a `read_uncommitted` consumer reads per topic after attempt 1 → after the restore (records of aborted "
           "or still open transactions included). In overlap trials the outside lock is the broker stopped "
           "(SIGSTOP) around attempt 1's commit while attempt 2 starts.")


# ------------------------------------------------------------------------------------------------
# the source side: a topic read by a STREAMING job into LocalFile sinks
# ------------------------------------------------------------------------------------------------

SOURCE_TOPIC = "rf_kafka_source"
#: the fault points a STREAMING pipeline passes (``pipeline.committed`` is a batch pipeline's; ``batch.committed``:
#: a sink committed a micro-batch that Spark has not recorded yet)
STREAM_POINTS = ("sink.write", "sink.prepared", "sink.move", "sink.commit", "batch.committed")


def kafka_source(work: Any, expected: list[Row], resources: Any) -> tuple[str, str]:
    """The input rows as json records of a topic (3 partitions, keyed by ``id``, written once per benchmark
    run) and the job reading it: (env settings, source block). STREAMING with ``available_now``: a run reads
    what its checkpoint (under ``work/checkpoints``) has not read yet, up to the end offsets at its start."""
    kafka = broker(resources)
    kafka.reset(SOURCE_TOPIC)
    kafka.server.produce(SOURCE_TOPIC, [encode(r, "json") for r in expected],
                         keys=[json.dumps({"id": r[0]}) for r in expected])
    env = f'job.mode = "STREAMING", streaming.trigger = "available_now", checkpoint.root = "{work}/checkpoints"'
    block = (f'Kafka {{ plugin_output = "rows", bootstrap.servers = "{kafka.bootstrap}", topic = "{SOURCE_TOPIC}", '
             "start_mode = earliest, format = json, "
             "schema = { fields { id = bigint, name = string, grp = string } } }")
    return env, block


def fresh_stream(work: Any, sinks: list[Any]) -> list[Any]:
    """``sinks`` whose first seed also removes the stream's checkpoints: every trial is a new stream that
    reads the topic from its beginning (attempt 2 resumes attempt 1's checkpoint)."""
    import dataclasses
    import shutil

    first = sinks[0]

    def seed() -> None:
        shutil.rmtree(work / "checkpoints", ignore_errors=True)
        first.seed()

    return [dataclasses.replace(first, seed=seed), *sinks[1:]]


SOURCE_READING = ("The input is a topic of the private Kafka broker (`tests/kafka_server.py`): the rows as json "
                  "records keyed by `id`, 3 partitions, written once (not by the job). The job is STREAMING with "
                  "`streaming.trigger = available_now` (checkpoints under the trial's work directory, removed before "
                  "each trial: every trial is a new stream from the earliest offsets); each of the two LocalFile "
                  "sinks is a query of its own, committing each micro-batch with the sink's two-phase commit. The "
                  "restore resumes attempt 1's checkpoint. *Visible after attempt 1* and *raw files* are as for "
                  "LocalFile. No overlap trials: two drivers on one checkpoint are not supported (Spark fails one).")
