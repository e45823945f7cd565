"""The Kafka sink: records built by native expressions, written at least once or exactly once.

Each table's rows become records (:func:`records`): ``topic`` (the option with the table's
placeholders expanded; a ``${field}`` left then names a field whose value is each row's topic),
``value`` (``format``), ``key`` (``partition_key_fields``), and a partition
when ``partition`` or ``assign_partitions`` choose one. ``assign_partitions`` (SeaTunnel's message
content partitioner): a record whose value contains the i-th string goes to partition i, the others
are spread over the remaining partitions by a hash of the value.

``semantics`` (the engine's two phases drive :class:`KafkaSinkVerbs`):

* ``NON`` / ``AT_LEAST_ONCE``: staging a table computes its records once (Spark's cache, where the
  engine's row counters count) and writes them with Spark's Kafka sink (one task per partition of the
  data, the plan's parallelism): nothing is left to publish; a restore writes them again.
* ``EXACTLY_ONCE``: staging computes the records once and keeps them (Spark's cache); the commit
  (:func:`publish_all`) publishes every table's records in ONE Kafka transaction from the driver, under
  the transactional id ``<transaction_prefix>-<digest of the run (the stream), pipeline and sink>``.
  The transaction also commits, for the consumer group of that id, an offset whose metadata is the run
  id: that record of the commit becomes visible atomically with the rows. Consumers reading
  ``read_committed`` see every row once.

**The newest attempt wins.** The attempt token is the producer's epoch: an attempt takes it when the
engine takes its token, before it stages (:class:`EpochFence`: the transactional producer is created and
``init_transactions`` called then, and the attempt keeps that producer until its commit). Taking it fences
every older producer of the id: an older attempt's open transaction is aborted, and whatever it sends or
commits later fails (:class:`Fenced`), whether it resumes before the newer attempt commits or after.
The commit record is read with the attempt's producer: a run that committed already writes nothing, and
an attempt that finds the run committed by a newer one (its producer no longer holds the epoch, which
the transaction coordinator answers) is :class:`Fenced`, never a success.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import PipelineError
from ...spi.options import run_time_options
from ...spi.rows import data_columns, keys_in_arrival_order, quote
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from ..files.placeholders import expand_table_placeholders
from . import client as kc
from .formats import encode_key, encode_value
from .options import SinkOptions, parse
from .source import PROVIDER_CLASS, ensure_spark_kafka, spark_options

log = logging.getLogger("seatunnel.kafka")

EXACTLY_ONCE = "EXACTLY_ONCE"
DEFAULT_PREFIX = "seatunnel"
#: how long an open transaction may stay open before the broker aborts it (unless kafka.config says)
DEFAULT_TRANSACTION_TIMEOUT_MS = "120000"


#: a ``${field}`` left in the topic once the table placeholders are expanded: the row's field names the topic
COLUMN_TOPIC = re.compile(r"\$\{([^}:]+)\}")


class Fenced(PipelineError):
    """Another attempt took over the transactional id: this one committed nothing (transient)."""

    kind = "superseded"


def transactional_id(ctx: RunContext, vertex: Vertex, opts: SinkOptions) -> str:
    """Stable for the run (a stream: every micro-batch), the pipeline and the sink: attempts of one
    run share it and fence each other."""
    key = digest(ctx.save_mode_run_id, ctx.pipeline_key, vertex.ref, length=24)
    return f"{opts.transaction_prefix or DEFAULT_PREFIX}-{key}"


def records(df: Any, topic: str, opts: SinkOptions, partitions: int) -> Any:
    """``df``'s rows as Kafka records: topic, key (or none), value, partition (when chosen)."""
    from pyspark.sql import functions as F

    value = encode_value(df, opts.format, opts.field_delimiter)
    column = COLUMN_TOPIC.search(topic)
    if column is not None and column.group(1) in data_columns(df):  # ${field}: each row's value names its topic
        topic_col = F.col(quote(column.group(1))).cast("string")
    else:
        topic_col = F.lit(topic)
    columns = [topic_col.alias("topic"), value.alias("value")]
    key = encode_key(opts.key_fields, opts.format, opts.field_delimiter)
    if key is not None:
        columns.append(key.alias("key"))
    if opts.partition is not None:
        columns.append(F.lit(opts.partition).cast("int").alias("partition"))
        return df.select(*columns)
    if opts.assign_partitions:
        out = df.select(*columns)
        assigned = len(opts.assign_partitions)
        rest = max(partitions - assigned, 1)
        chosen = F.pmod(F.hash(F.col("value")), F.lit(rest)) + F.lit(assigned if partitions > assigned else 0)
        for i, text in reversed(list(enumerate(opts.assign_partitions))):
            chosen = F.when(F.instr(F.col("value"), text) > 0, F.lit(i)).otherwise(chosen)
        return out.withColumn("partition", chosen.cast("int"))
    return df.select(*columns)


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """One table's records, computed once into Spark's cache (the engine's row counters count in that
    pass: Spark's Kafka writer runs its job outside the query execution they observe). ``NON`` /
    ``AT_LEAST_ONCE`` write them at once with Spark's Kafka sink: nothing is left to publish
    (``committed``). ``EXACTLY_ONCE`` keeps them for :func:`publish_all`'s transaction."""
    opts = _options(vertex)
    topic = expand_table_placeholders(opts.topic, commit.table, data_columns(df))
    partitions = kc.partitions_of(kc.librdkafka_config(opts.bootstrap, opts.client), topic) \
        if opts.assign_partitions else 0
    ensure_spark_kafka(ctx.spark, ctx.plan.env, avro=opts.format == "avro")
    if opts.key_fields:  # a key's changes in one writer, in the order they arrived (the engine may have dealt them)
        df = keys_in_arrival_order(df, list(opts.key_fields), vertex.parallelism)
    recs = ctx.materialize(records(df, topic, opts, partitions))
    if opts.semantics != EXACTLY_ONCE:
        try:
            recs.write.format(PROVIDER_CLASS).options(**spark_options(opts)).save()
        finally:
            recs.unpersist()
        log.info("Kafka %s: wrote table %s to topic %s (%s)", vertex.ref, commit.table, topic, opts.semantics)
        return Staged(commit, token, topic, -1, committed=True)
    log.info("Kafka %s: table %s computed for topic %s; published by the commit's transaction", vertex.ref,
             commit.table, topic)
    return Staged(commit, token, topic, -1, cached=recs)


def _options(vertex: Vertex) -> SinkOptions:
    return run_time_options(parse, vertex, SinkOptions)


def _producer(config: Mapping[str, str], opts: SinkOptions, txn_id: str) -> Any:
    settings = {**config, "transactional.id": txn_id, "enable.idempotence": "true", "partitioner": "murmur2_random",
                "transaction.timeout.ms": opts.client.get("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS),
                "linger.ms": "20", "queue.buffering.max.messages": "200000"}
    return kc.require().Producer(settings)


def committed_runs(config: Mapping[str, str], group: str, topics: Collection[str]) -> list[str]:
    """The run ids the committed transactions of ``group`` recorded on partition 0 of ``topics`` (the
    last one per topic: a stream writing per-row topics may leave its record on several), empty when
    none committed.

    Read after ``init_transactions``: the broker finishes (or aborts) the id's earlier transaction
    before it hands out the new epoch, so its record is in place by then. The record is on partition 0
    of the first record's topic, one of ``topics``. Asked by a consumer of ``group`` reading
    ``read_committed`` (which makes the broker answer with stable offsets only): a "not coordinator"
    answer (a coordinator still loading, or moving) is an error it raises and :func:`kc.retrying`
    retries; an admin client's offset request answered so crashes librdkafka's thread instead."""
    ck = kc.require()
    if not topics:
        return []
    reader = kc.consumer(config, group)
    try:
        wanted = [ck.TopicPartition(t, 0) for t in sorted(set(topics))]
        found = kc.retrying(lambda: reader.committed(wanted, timeout=kc.TIMEOUT_S))
    finally:
        reader.close()
    return [tp.metadata for tp in found if tp.offset >= 0 and tp.metadata]


def _send(producer: Any, row: Any) -> None:
    kwargs: dict[str, Any] = {"value": row["value"]}
    fields = row.__fields__
    if "key" in fields and row["key"] is not None:
        kwargs["key"] = row["key"]
    if "partition" in fields and row["partition"] is not None:
        kwargs["partition"] = int(row["partition"])
    while True:
        try:
            producer.produce(row["topic"], **kwargs)
            return
        except BufferError:  # the local queue is full: let deliveries drain it
            producer.poll(0.05)


def _code(e: BaseException) -> int | None:
    err = e.args[0] if e.args and isinstance(e.args[0], kc.require().KafkaError) else None
    return None if err is None else int(err.code())


def _fail(e: BaseException, what: str) -> PipelineError:
    ck = kc.require()
    err = e.args[0] if e.args and isinstance(e.args[0], ck.KafkaError) else None
    if err is not None and err.code() in (ck.KafkaError._FENCED, ck.KafkaError.PRODUCER_FENCED,
                                          ck.KafkaError.INVALID_PRODUCER_EPOCH):
        return Fenced(f"{what}: another attempt of the same run took over the transactional id (fenced): this "
                      "attempt committed nothing")
    return kc.KafkaUnavailable(f"{what}: {e}")


#: the producer each attempt took its epoch with, kept from its token to its commit: (transactional id, the
#: attempt's run context) -> producer (several attempts may run in one process)
_HELD: dict[tuple[str, int], Any] = {}
_HELD_LOCK = threading.Lock()


def _held_key(ctx: RunContext, vertex: Vertex) -> tuple[str, int]:
    return transactional_id(ctx, vertex, _options(vertex)), id(ctx)


def take_epoch(ctx: RunContext, vertex: Vertex) -> None:
    """EXACTLY_ONCE: the attempt's transactional producer, created and initialised once per attempt (the
    first table's token): ``init_transactions`` gives it the id's next epoch, which fences every older
    producer of the id and aborts its open transaction."""
    opts = _options(vertex)
    if opts.semantics != EXACTLY_ONCE:
        return
    key = _held_key(ctx, vertex)
    with _HELD_LOCK:
        if key in _HELD:
            return
        producer = _producer(kc.librdkafka_config(opts.bootstrap, opts.client), opts, key[0])
        try:
            producer.init_transactions(kc.TIMEOUT_S)
        except Exception as e:
            raise _fail(e, f"Kafka transaction {key[0]} of run {ctx.run_id}") from e
        _HELD[key] = producer


def _release(ctx: RunContext, vertex: Vertex) -> Any:
    """The attempt's producer, no longer kept (None: the attempt took no epoch)."""
    with _HELD_LOCK:
        return _HELD.pop(_held_key(ctx, vertex), None)


@dataclass(frozen=True)
class EpochFence:
    """The Kafka sink's commit log: the attempt token is the producer's epoch, taken with the token
    (:func:`take_epoch`). The broker compares epochs, not the engine: every attempt holds token 0, and an
    overtaken one learns it from the broker (:class:`Fenced`) when it sends, commits or reads the run's
    commit record. No table is found committed at prepare (the commit record is read by the commit)."""

    ctx: Any
    vertex: Any

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        take_epoch(self.ctx, self.vertex)
        return 0, False

    def newest_token(self, commit: CommitId) -> int:
        return 0


def _check_epoch(txn: _Transaction, config: Mapping[str, str], group: str, topic: str) -> None:
    """Raises (fenced) unless the attempt's producer still holds the id's epoch: the transaction
    coordinator is asked to add an offset of the commit group to a transaction, then that is aborted."""
    ck = kc.require()
    txn.begin()
    consumer = kc.consumer(config, group)
    try:
        txn.producer.send_offsets_to_transaction([ck.TopicPartition(topic, 0, 0)],
                                                 consumer.consumer_group_metadata(), kc.TIMEOUT_S)
    finally:
        consumer.close()
    txn.abort()


def publish_all(ctx: RunContext, vertex: Vertex, staged: Sequence[Staged]) -> list[Published]:
    """EXACTLY_ONCE: publish every table's records in one transaction (see the module's docstring);
    ALREADY for every table when the run's commit record is there, unless a newer attempt wrote it."""
    ck = kc.require()
    opts = _options(vertex)
    config = kc.librdkafka_config(opts.bootstrap, opts.client)
    txn_id = transactional_id(ctx, vertex, opts)
    what = f"Kafka transaction {txn_id} of run {ctx.run_id}"
    producer = _release(ctx, vertex)
    fresh = producer is None  # an attempt that took no epoch (a commit outside the engine's prepare) takes it now
    if producer is None:
        producer = _producer(config, opts, txn_id)
    txn = _Transaction(producer)
    try:
        if fresh:
            producer.init_transactions(kc.TIMEOUT_S)  # fences older producers, aborts their open transaction
        group = f"{txn_id}-commits"
        topics = {r["topic"] for s in staged for r in s.cached.select("topic").distinct().collect()}
        if ctx.run_id in committed_runs(config, group, topics):
            _check_epoch(txn, config, group, min(topics))  # a newer attempt committed it: this one is fenced
            log.info("Kafka %s: %s committed already: nothing to write", vertex.ref, what)
            return [Published(Outcome.ALREADY) for _ in staged]
        t0 = time.monotonic()
        sent, marker_topic = _send_tables(ctx, vertex, txn, staged)
        if marker_topic is None:  # nothing to publish: no transaction, no record
            txn.abort()
            log.info("Kafka %s: no rows to publish (%s)", vertex.ref, what)
            return [Published(Outcome.PUBLISHED, rows=0) for _ in staged]
        left = producer.flush(kc.TIMEOUT_S)
        if left:
            raise kc.KafkaUnavailable(f"{what}: {left} record(s) not delivered within {kc.TIMEOUT_S:.0f} s")
        txn.commit(config, group, ck.TopicPartition(marker_topic, 0, sum(sent), metadata=ctx.run_id))
        log.info("Kafka %s: committed %d record(s) in %.1f s (%s)", vertex.ref, sum(sent), time.monotonic() - t0,
                 what)
        return [Published(Outcome.PUBLISHED, rows=n) for n in sent]
    except PipelineError:
        raise
    except Exception as e:
        if txn.open and _code(e) == ck.KafkaError._FATAL:  # produce() hides why; the transaction's next call says
            try:
                txn.abort()
            except Exception as cause:
                raise _fail(cause, what) from e
        raise _fail(e, what) from e
    finally:
        if txn.open:
            try:
                txn.abort()
            except Exception as e:  # best effort: the next init_transactions aborts it too
                log.warning("Kafka %s: could not abort %s: %s", vertex.ref, what, e)


class _Transaction:
    """The producer's open transaction: begun lazily, committed with the run's commit record (an offset
    of the commit group whose metadata is the run id), or aborted."""

    def __init__(self, producer: Any) -> None:
        self.producer, self.open = producer, False

    def begin(self) -> None:
        if not self.open:
            self.producer.begin_transaction()
            self.open = True

    def commit(self, config: Mapping[str, str], group: str, record: Any) -> None:
        consumer = kc.consumer(config, group)
        try:
            self.producer.send_offsets_to_transaction([record], consumer.consumer_group_metadata(), kc.TIMEOUT_S)
            self.producer.commit_transaction(kc.TIMEOUT_S)
            self.open = False
        finally:
            consumer.close()

    def abort(self) -> None:
        self.open = False
        self.producer.abort_transaction(kc.TIMEOUT_S)


def _send_tables(ctx: RunContext, vertex: Vertex, txn: _Transaction,
                 staged: Sequence[Staged]) -> tuple[list[int], str | None]:
    """Every table's records into the open transaction; ``sink.move`` after each table's (the transaction
    still open). The records sent per table, and the first record's topic (None: nothing sent)."""
    txn.begin()
    sent: list[int] = []
    marker_topic = None
    for table in staged:
        rows = 0
        for row in table.cached.toLocalIterator(prefetchPartitions=True):
            _send(txn.producer, row)
            marker_topic = marker_topic or row["topic"]
            rows += 1
        sent.append(rows)
        ctx.fault_point("sink.move", vertex)
    return sent, marker_topic


class KafkaSinkVerbs:
    """The Kafka sink as storage verbs: the transactional id fences attempts (its producer epoch, taken
    with the attempt's token: :class:`EpochFence`) and one transaction publishes every table of the run
    with its commit record (:func:`publish_all`), read only under that fence: no table skipped at prepare.
    ``sink.move`` fires after each table's records were sent, the transaction still open."""

    moves_in_steps = True
    stage = staticmethod(stage_table)
    publish_all = staticmethod(publish_all)

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> EpochFence:
        return EpochFence(ctx, vertex)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        """One table alone (the engine calls :meth:`publish_all` with every table): its own transaction."""
        (answer,) = publish_all(ctx, vertex, [staged])
        return answer

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        """Drop the cached records and the attempt's producer (an open transaction was aborted by
        ``publish_all`` already; a producer that only took the epoch has none)."""
        _release(ctx, vertex)
        if staged.cached is not None:
            with contextlib.suppress(Exception):  # the session may be gone
                staged.cached.unpersist()
