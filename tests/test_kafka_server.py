"""The Kafka broker the connector tests start (tests/kafka_server.py, the session fixture ``kafka``): topics
are created with their partitions, records round-trip with keys and partitions, and transactions work on
the single node (the transaction log has one replica): a read_committed reader sees the committed
transaction and never the aborted one, a read_uncommitted reader sees both."""

from __future__ import annotations

import uuid

from confluent_kafka import Producer


def _topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_topics_are_created_with_their_partitions(kafka):
    one, three = kafka.create_topic(_topic("one")), kafka.create_topic(_topic("three"), partitions=3)

    assert kafka.partitions(one) == [0]
    assert kafka.partitions(three) == [0, 1, 2]
    assert kafka.partitions(_topic("missing")) == []
    assert kafka.consume(three) == []


def test_records_round_trip_with_keys_and_partitions(kafka):
    topic = kafka.create_topic(_topic("rows"), partitions=2)

    kafka.produce(topic, ["a", "b"], keys=["k1", None], partition=1)
    kafka.produce(topic, [b"c"], partition=0)

    assert kafka.consume(topic) == [(None, b"c", 0, 0), (b"k1", b"a", 1, 0), (None, b"b", 1, 1)]


def test_a_read_committed_reader_skips_aborted_transactions(kafka):
    topic = kafka.create_topic(_topic("txn"))
    producer = Producer(kafka.config(**{"transactional.id": _topic("tx")}))
    producer.init_transactions(60)
    for values, commit in ((["c1", "c2"], True), (["aborted"], False), (["c3"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value=value)
        if commit:
            producer.commit_transaction(60)
        else:
            producer.flush(60)  # the aborted records are in the log, then marked aborted
            producer.abort_transaction(60)

    committed = [value for _, value, _, _ in kafka.consume(topic)]
    everything = [value for _, value, _, _ in kafka.consume(topic, isolation="read_uncommitted")]

    assert committed == [b"c1", b"c2", b"c3"]
    assert everything == [b"c1", b"c2", b"aborted", b"c3"]
