"""The Kafka source on Spark's Kafka source (``spark-sql-kafka-0-10``), batch and streaming.

BATCH (:func:`read`): the driver resolves, per partition of the topics read (a pattern matched
against the topics that exist now), where the read starts (``start_mode``) and where it ends:
the offsets a ``read_committed`` reader could reach when the read started, as SeaTunnel's bounded
reader ends. Spark then reads exactly that range (``assign``, ``startingOffsets``,
``endingOffsets``), one task per partition, more when the plan's parallelism asks for more
(``minPartitions``), coalesced when it asks for fewer. Records written later are left for the
next run.

STREAMING (:func:`read_stream`): Spark's streaming Kafka source; ``start_mode`` decides where a
*new* stream starts (a checkpoint resumes where it stopped, so every record is read once across
runs), ``available_now`` runs read up to the end offsets seen at their start.

``start_mode``: ``earliest`` / ``latest``; ``group_offsets`` the offsets ``consumer.group``
committed (partitions it never committed start at ``auto.offset.reset`` of ``kafka.config``:
Kafka's default ``latest``, so a batch read of a new group reads nothing, as in SeaTunnel);
``specific_offsets`` ``start_mode.offsets`` (other partitions: earliest);
``timestamp`` the first record at or after ``start_mode.timestamp`` (epoch ms).

Records are read ``read_committed`` unless ``kafka.config`` sets ``isolation.level``: aborted
transactions are never read. Values become rows per ``format`` (:mod:`.formats`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from . import client as kc
from .formats import decode
from .options import SourceOptions, TopicSpec

log = logging.getLogger("seatunnel.kafka")

#: (run id, pipeline, vertex) -> the offsets a BATCH read ends at, per (topic, partition): committed to
#: ``consumer.group`` once the pipeline committed (:func:`acknowledge`)
_READ_TO: dict[tuple[str, str, str], dict[tuple[str, int], int]] = {}

#: Spark's Kafka data source; named by class so that a session given the jars late finds it too
PROVIDER_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
AVRO_CLASS = "org.apache.spark.sql.avro.functions"

#: Kafka client properties Spark's source manages itself (setting them is refused by Spark)
_SPARK_MANAGED = frozenset({"group.id", "auto.offset.reset", "key.deserializer", "value.deserializer",
                            "enable.auto.commit", "interceptor.classes"})


def spark_options(opts: SourceOptions | Any) -> dict[str, str]:
    """``kafka.*`` options of Spark's Kafka source and sink: the brokers and ``kafka.config``."""
    out = {"kafka.bootstrap.servers": opts.bootstrap}
    for key, value in opts.client.items():
        if key not in _SPARK_MANAGED:
            out[f"kafka.{key}"] = value
    return out


def ensure_spark_kafka(spark: Any, env: Mapping[str, Any], avro: bool = False) -> None:
    """Make Spark's Kafka source and sink (and with ``avro`` spark-avro) usable: a session started
    without them (a run started by the engine has them through ``spark.jars``) gets the jars added to
    the driver's class loader and shipped to the executors."""
    from py4j.protocol import Py4JError

    from .checks import missing_jars_hint, spark_avro_jar, spark_kafka_jars

    jvm = spark._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    wanted = [(PROVIDER_CLASS, spark_kafka_jars(env))]
    if avro:
        wanted.append((AVRO_CLASS, [j for j in [spark_avro_jar()] if j]))
    jars: list[str] = []
    for cls, candidates in wanted:
        try:
            jvm.java.lang.Class.forName(cls, False, loader)
        except Py4JError:
            if not candidates:
                raise RuntimeConfigError(missing_jars_hint()) from None
            jars.extend(candidates)
    if not jars:
        return
    for jar in jars:
        loader.addURL(jvm.java.io.File(jar).toURI().toURL())
        spark._jsc.sc().addJar(jar)
    log.info("Kafka: added Spark's Kafka source and sink (%d jars) to the session", len(jars))


def _reader_options(opts: SourceOptions) -> dict[str, str]:
    out = spark_options(opts)
    out.setdefault("kafka.isolation.level", "read_committed")
    return out


def _offsets_json(offsets: Mapping[tuple[str, int], int]) -> str:
    nested: dict[str, dict[str, int]] = {}
    for (topic, part), offset in sorted(offsets.items()):
        nested.setdefault(topic, {})[str(part)] = int(offset)
    return json.dumps(nested)


def start_offsets(opts: SourceOptions, config: Mapping[str, str], parts: Mapping[str, int],
                  marks: Mapping[tuple[str, int], tuple[int, int]]) -> dict[tuple[str, int], int]:
    """Where the read of each partition starts, per ``start_mode`` (within its low..high offsets)."""
    low = {tp: lo for tp, (lo, _hi) in marks.items()}
    high = {tp: hi for tp, (_lo, hi) in marks.items()}
    if opts.start_mode == "earliest":
        chosen = dict(low)
    elif opts.start_mode == "latest":
        chosen = dict(high)
    elif opts.start_mode == "group_offsets":
        committed = kc.group_offsets(config, opts.group, parts)
        fallback = high if opts.client.get("auto.offset.reset", "latest").lower() != "earliest" else low
        chosen = {tp: committed.get(tp, fallback[tp]) for tp in marks}
    elif opts.start_mode == "specific_offsets":
        given = {}
        for key, offset in opts.offsets.items():
            topic, _, part = key.rpartition("-")
            given[(topic, int(part))] = offset
        chosen = {tp: given.get(tp, low[tp]) for tp in marks}
    else:  # timestamp
        assert opts.timestamp is not None
        found = kc.offsets_for_time(config, parts, opts.timestamp)
        chosen = {tp: found[tp] if found.get(tp, -1) >= 0 else high[tp] for tp in marks}
    return {tp: min(max(offset, low[tp]), high[tp]) for tp, offset in chosen.items()}


def _empty(ctx: RunContext, spec: TopicSpec) -> Any:
    from pyspark.sql import types as T

    raw = ctx.spark.createDataFrame([], T.StructType([T.StructField("value", T.BinaryType())]))
    return decode(raw, spec)


def _pinned_end(ctx: RunContext, vertex: Vertex, opts: SourceOptions, config: Mapping[str, str],
                parts: Mapping[str, int], start: Mapping[tuple[str, int], int],
                end: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Where this run's read ends: where an earlier attempt of the same run ended it, else ``end`` (the
    offsets seen now), recorded before anything is read. A restore whose sinks find the run committed
    writes nothing, then acknowledges what it read: reading further than the attempt that committed would
    move ``consumer.group`` past records no sink wrote. The record: a side consumer group of this source
    (``<consumer.group>.seatunnel-read-to.<pipeline and source>``) committed at the end offsets, tagged with
    the run (a hash: no run id reaches the broker)."""
    import hashlib

    which = hashlib.sha256(f"{ctx.pipeline_key}\0{vertex.id}".encode()).hexdigest()[:12]
    side = f"{opts.group}.seatunnel-read-to.{which}"
    tag = hashlib.sha256(f"{ctx.run_id}\0{ctx.pipeline_key}\0{vertex.id}".encode()).hexdigest()[:32]
    pinned = kc.group_offsets(config, side, parts, metadata=tag)
    if pinned:
        log.info("Kafka %s: an earlier attempt of this run read up to %s: reading the same range", vertex.ref,
                 _offsets_json(pinned))
        return {tp: pinned.get(tp, start[tp]) for tp in end}  # a partition new since then: none of it
    kc.commit_group(config, side, end, metadata=tag)
    return end


def _read_table(ctx: RunContext, vertex: Vertex, opts: SourceOptions, spec: TopicSpec) -> Any:
    config = kc.librdkafka_config(opts.bootstrap, opts.client)
    parts = kc.topics_of(config, spec.topics, spec.pattern)
    missing = [t for t in spec.topics if t not in parts] if not spec.pattern else []
    if missing:
        log.warning("Kafka %s: topic(s) %s do not exist on %s: nothing to read from them", vertex.ref,
                    ", ".join(missing), opts.bootstrap)
    if not parts:
        return _empty(ctx, spec)
    marks = kc.watermarks(config, parts)
    start = start_offsets(opts, config, parts, marks)
    end = {tp: hi for tp, (_lo, hi) in marks.items()}
    if opts.commit_on_checkpoint:
        end = _pinned_end(ctx, vertex, opts, config, parts, start, end)
        start = {tp: min(offset, end[tp]) for tp, offset in start.items()}
    _READ_TO.setdefault((ctx.run_id, ctx.pipeline_key, vertex.id), {}).update(end)
    total = sum(end[tp] - start[tp] for tp in marks)
    log.info("Kafka %s: reading %s (%d partition(s), start_mode %s): offsets %s to %s, at most %d record(s)",
             vertex.ref, ", ".join(parts), len(marks), opts.start_mode, _offsets_json(start), _offsets_json(end), total)
    if total == 0:
        return _empty(ctx, spec)
    parallelism = max(1, int(vertex.parallelism))
    ensure_spark_kafka(ctx.spark, ctx.plan.env, avro=spec.format == "avro")
    reader = (ctx.spark.read.format(PROVIDER_CLASS).options(**_reader_options(opts))
              .option("assign", json.dumps({t: list(range(n)) for t, n in parts.items()}))
              .option("startingOffsets", _offsets_json(start)).option("endingOffsets", _offsets_json(end)))
    if parallelism > len(marks):
        reader = reader.option("minPartitions", str(parallelism))
    raw = reader.load()
    if parallelism < len(marks):
        raw = raw.coalesce(parallelism)
    return decode(raw, spec)


def table_ids(opts: SourceOptions) -> list[str]:
    """The table id of each topic spec: ``default`` for one, the topic (list) for a ``table_list``."""
    if len(opts.tables) == 1:
        return ["default"]
    return [spec.table_id for spec in opts.tables]


def read(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    return {tid: _read_table(ctx, vertex, opts, spec) for tid, spec in zip(table_ids(opts), opts.tables, strict=True)}


def acknowledge(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> None:
    """BATCH, after the pipeline committed: with ``commit_on_checkpoint`` (the default) commit the offsets
    the read ended at for ``consumer.group``, so that a later ``group_offsets`` run starts after them. A
    run killed between its commit and this one leaves the group behind: the next run reads those records
    again (SeaTunnel's Kafka source commits the same way, after its checkpoint)."""
    end = _READ_TO.pop((ctx.run_id, ctx.pipeline_key, vertex.id), {})
    if not opts.commit_on_checkpoint or not end:
        return
    kc.commit_group(kc.librdkafka_config(opts.bootstrap, opts.client), opts.group, end)
    log.info("Kafka %s: committed the offsets read (%d partition(s)) for consumer group %s", vertex.ref, len(end),
             opts.group)


def _stream_table(ctx: RunContext, vertex: Vertex, opts: SourceOptions, spec: TopicSpec) -> Any:
    ensure_spark_kafka(ctx.spark, ctx.plan.env, avro=spec.format == "avro")
    reader = ctx.spark.readStream.format(PROVIDER_CLASS).options(**_reader_options(opts))
    if spec.pattern:
        reader = reader.option("subscribePattern", spec.topics[0])
    else:
        reader = reader.option("subscribe", ",".join(spec.topics))
    if opts.start_mode in ("earliest", "latest"):
        reader = reader.option("startingOffsets", opts.start_mode)
    elif opts.start_mode == "timestamp":
        reader = reader.option("startingTimestamp", str(opts.timestamp))
    else:
        config = kc.librdkafka_config(opts.bootstrap, opts.client)
        parts = kc.topics_of(config, spec.topics, spec.pattern)
        if not parts:
            raise RuntimeConfigError(f"start_mode {opts.start_mode} needs the topics to exist: "
                                     f"{', '.join(spec.topics)} not found on {opts.bootstrap}")
        marks = kc.watermarks(config, parts)
        reader = reader.option("startingOffsets", _offsets_json(start_offsets(opts, config, parts, marks)))
    if opts.discovery_ms > 0:
        log.info("Kafka %s: new partitions and topics are found at every micro-batch (Spark's Kafka source); "
                 "partition-discovery.interval-millis is not needed", vertex.ref)
    parallelism = max(1, int(vertex.parallelism))
    if parallelism > 1:
        reader = reader.option("minPartitions", str(parallelism))
    return decode(reader.load(), spec)


def read_stream(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    return {tid: _stream_table(ctx, vertex, opts, spec) for tid, spec in zip(table_ids(opts), opts.tables, strict=True)}
