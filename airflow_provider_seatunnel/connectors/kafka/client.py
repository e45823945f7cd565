"""The driver's Kafka client (``confluent-kafka``, extra ``kafka``): offsets, partitions, transactions.

Spark's Kafka source and sink run on the executors with the Java client; the driver uses
librdkafka through ``confluent-kafka`` to resolve where a read starts and ends, to count a
topic's partitions, and to commit the EXACTLY_ONCE sink's transactions. :func:`librdkafka_config`
maps ``kafka.config``'s Java client properties onto librdkafka's: the ones both name alike are
passed, ``sasl.jaas.config``'s PLAIN/SCRAM ``username``/``password`` become ``sasl.username`` /
``sasl.password``; properties librdkafka does not know (Java key stores) are left to Spark.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...spi.errors import PipelineError, RuntimeConfigError

log = logging.getLogger("seatunnel.kafka")

#: Java client properties librdkafka names alike (passed to the driver's client as they are)
SHARED_PROPERTIES = frozenset({
    "security.protocol", "sasl.mechanism", "sasl.mechanisms", "client.id", "ssl.endpoint.identification.algorithm",
    "socket.connection.setup.timeout.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "request.timeout.ms",
    "metadata.max.age.ms", "client.dns.lookup", "ssl.key.password", "ssl.cipher.suites",
})
_JAAS = re.compile(r'(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"')
TIMEOUT_S = 30.0
#: error codes worth another try whatever the client says (librdkafka names them by number)
_RETRIABLE = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


class KafkaUnavailable(PipelineError):
    """The brokers did not answer (transient: a retry may find them)."""

    kind = "kafka"


def require() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        raise RuntimeConfigError("the Kafka connector needs the confluent-kafka client on the Spark driver: "
                                 "pip install 'airflow-provider-seatunnel[kafka]'") from None
    return confluent_kafka


def librdkafka_config(bootstrap: str, client: Mapping[str, str]) -> dict[str, str]:
    """The driver client's settings: ``bootstrap.servers`` and what librdkafka shares of ``kafka.config``."""
    out = {"bootstrap.servers": bootstrap}
    for key, value in client.items():
        if key in SHARED_PROPERTIES:
            out["sasl.mechanisms" if key == "sasl.mechanism" else key] = value
        elif key == "sasl.jaas.config":
            for name, text in _JAAS.findall(value):
                out[f"sasl.{name}"] = text
    return out


def retrying(call: Callable[[], Any], deadline_s: float = TIMEOUT_S) -> Any:
    """``call()``, again while it fails with an error Kafka marks retriable (a coordinator still
    loading, a leader moving), until ``deadline_s`` has passed."""
    ck = require()
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return call()
        except ck.KafkaException as e:
            err = e.args[0] if e.args else None
            retriable = isinstance(err, ck.KafkaError) and (err.retriable() or err.code() in _RETRIABLE)
            if not retriable or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def admin(config: Mapping[str, str]) -> Any:
    require()
    from confluent_kafka.admin import AdminClient

    return AdminClient(dict(config))


def topics_of(config: Mapping[str, str], topics: Iterable[str], pattern: bool) -> dict[str, int]:
    """Each topic read (all matching the Java-style regex when ``pattern``) -> its partition count."""
    try:
        metadata = admin(config).list_topics(timeout=TIMEOUT_S)
    except Exception as e:
        raise KafkaUnavailable(f"cannot list the topics of {config['bootstrap.servers']}: {e}") from e
    names = list(topics)
    if pattern:
        regex = re.compile(names[0])
        chosen = [t for t in metadata.topics if regex.fullmatch(t) and not t.startswith("__")]
    else:
        chosen = names
    out: dict[str, int] = {}
    for t in sorted(chosen):
        meta = metadata.topics.get(t)
        if meta is None or meta.error is not None:
            continue
        out[t] = len(meta.partitions)
    return out


def partitions_of(config: Mapping[str, str], topic: str) -> int:
    found = topics_of(config, [topic], False)
    return found.get(topic, 0)


def consumer(config: Mapping[str, str], group: str | None = None) -> Any:
    """A consumer that commits nothing by itself and reads ``read_committed`` (``group``: a placeholder one)."""
    settings = {**config, "enable.auto.commit": "false", "isolation.level": "read_committed",
                "group.id": group or "seatunnel-offsets"}
    return require().Consumer(settings)


def watermarks(config: Mapping[str, str], partitions: Mapping[str, int]) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (low, high) offsets; high is what a read_committed reader may reach."""
    reader = consumer(config)
    try:
        return {(t, p): tuple(reader.get_watermark_offsets(require().TopicPartition(t, p), timeout=TIMEOUT_S))
                for t, n in partitions.items() for p in range(n)}
    except Exception as e:
        raise KafkaUnavailable(f"cannot read the offsets of {', '.join(partitions)}: {e}") from e
    finally:
        reader.close()


def group_offsets(config: Mapping[str, str], group: str, partitions: Mapping[str, int],
                  metadata: str | None = None) -> dict[tuple[str, int], int]:
    """The offsets ``group`` committed (partitions it never committed are left out; with ``metadata``,
    so are those it committed with other metadata)."""
    ck = require()
    reader = consumer(config, group)
    try:
        wanted = [ck.TopicPartition(t, p) for t, n in partitions.items() for p in range(n)]
        found = reader.committed(wanted, timeout=TIMEOUT_S) if wanted else []
    except Exception as e:
        raise KafkaUnavailable(f"cannot read the offsets consumer group {group!r} committed: {e}") from e
    finally:
        reader.close()
    return {(tp.topic, tp.partition): tp.offset for tp in found
            if tp.offset >= 0 and (metadata is None or tp.metadata == metadata)}


def offsets_for_time(config: Mapping[str, str], partitions: Mapping[str, int], ms: int) -> dict[tuple[str, int], int]:
    """The first offset at or after ``ms`` (epoch ms) per partition; -1 where none is (the end)."""
    ck = require()
    reader = consumer(config)
    try:
        wanted = [ck.TopicPartition(t, p, ms) for t, n in partitions.items() for p in range(n)]
        found = reader.offsets_for_times(wanted, timeout=TIMEOUT_S) if wanted else []
    except Exception as e:
        raise KafkaUnavailable(f"cannot look up offsets by time: {e}") from e
    finally:
        reader.close()
    return {(tp.topic, tp.partition): tp.offset for tp in found}


def commit_group(config: Mapping[str, str], group: str, offsets: Mapping[tuple[str, int], int],
                 metadata: str | None = None) -> None:
    """Commit ``offsets`` (the next offset to read per partition) for ``group``, each with ``metadata``."""
    if not offsets:
        return
    ck = require()
    reader = consumer(config, group)
    try:
        parts = [ck.TopicPartition(t, p, o) if metadata is None else ck.TopicPartition(t, p, o, metadata)
                 for (t, p), o in offsets.items()]
        reader.commit(offsets=parts, asynchronous=False)
    finally:
        reader.close()
