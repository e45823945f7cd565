"""Change data capture and Kafka on this machine: Postgres-CDC and MySQL-CDC throughput (the
snapshot run of a new stream, a run that applies a batch of changes) and end-to-end latency; the
Kafka sink's EXACTLY_ONCE against AT_LEAST_ONCE, and the Kafka source's read rate.

Every pipeline runs in this process on one local SparkSession (``local[2]``), as the tests run them
(``compile_job``, then ``run_streaming_pipeline`` or ``run_pipeline`` with a ``RunContext``), against
the private servers the tests start (tests/pg.py, tests/mysql.py, tests/kafka_server.py), one
server at a time (the databases' side: :mod:`cdc_databases`). Each CDC source first runs an untimed
small sync (the JVM and the Python workers warm). The CDC pipelines write to LocalFile (Parquet)
through a RowKindExtractor (the change log as files): the figures are the source's and the
runtime's, not a database sink's.

* **snapshot**: a table of ``--rows`` rows (six columns), the first ``available_now`` run of a new
  stream. Its wall time splits into the snapshot written before the query starts (from the run's
  start to its query start: slot or consistent snapshot, the table read and written as Parquet),
  the first micro-batch (Spark's trigger time: the snapshot files read, cast, written by the sink),
  and the rest (query start and stop).
* **changes**: ``--changes`` changes, a third each inserts, updates and deletes, committed in
  transactions of ``--txn-rows`` rows before an ``available_now`` run that applies them all. An
  update is two rows (-U, +U), so rows written = inserts + 2 × updates + deletes.
* **latency**: ``streaming.trigger = processing_time``, ``checkpoint.interval = 1000`` (ms) over a
  small table. A writer commits one row every 200 ms for ``--latency-seconds``, its commit time in a
  column (the server's clock when the row was inserted, its own autocommitted transaction); a
  poller lists the sink's files every 50 ms. Latency = when the file holding the row was first
  seen minus that commit time (same machine, same clock). The stream is then stopped with the stop
  event, as SIGTERM stops a driver.
* **Kafka sink**: a BATCH job FakeSource → Kafka (json, two partitions, ``parallelism = 2``) of
  ``--kafka-rows`` rows with ``semantics = AT_LEAST_ONCE`` and ``EXACTLY_ONCE``, ``--kafka-rounds``
  rounds, every other round in reverse order, after an untimed run of each (and of the source).
* **Kafka source**: the first EXACTLY_ONCE topic (read ``read_committed``) → LocalFile Parquet, BATCH.

The load average is recorded before each phase (the machine is shared); ``--wait-load`` waits for
a quiet machine first. Raw results: benchmarks/results/cdc.json; the tables are printed.

    python benchmarks/cdc.py [--rows 200000] [--changes 100000] [--txn-rows 25000] [--latency-seconds 60]
                             [--kafka-rows 200000] [--kafka-rounds 3] [--only pg,mysql,kafka]
                             [--wait-load 2.5 --wait-max 2400]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from cdc_databases import My, Pg  # noqa: E402

#: the interval of the latency stream (ms) and the writer's pace (s)
INTERVAL_MS = 1000
WRITE_EVERY_S = 0.2
POLL_S = 0.05


# ------------------------------------------------------------------------------------------------
# the run: session, load, timed pipelines
# ------------------------------------------------------------------------------------------------

@dataclass
class Bench:
    spark: Any
    work: Path
    progress: Progress
    loads: list[dict[str, Any]] = field(default_factory=list)

    def load(self, phase: str) -> list[float]:
        """Record (and print) the load average before ``phase``."""
        avg = [round(x, 2) for x in os.getloadavg()]
        self.loads.append({"phase": phase, "at": datetime.now(UTC).isoformat(timespec="seconds"),
                           "loadavg": avg})
        print(f"-- {phase} (load average {avg[0]:.2f} {avg[1]:.2f} {avg[2]:.2f})", flush=True)
        return avg

    def plan(self, text: str, name: str) -> Any:
        from airflow_provider_seatunnel.plan import compile_job

        path = self.work / f"{name}.conf"
        path.write_text(textwrap.dedent(text))
        return compile_job(path, None, use_cache=False)


class Progress:
    """Spark's progress report of every micro-batch (a StreamingQueryListener): its phases' times."""

    def __init__(self, spark: Any):
        from pyspark.sql.streaming import StreamingQueryListener

        reports = self.reports = {}

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None: ...
            def onQueryIdle(self, event: Any) -> None: ...
            def onQueryTerminated(self, event: Any) -> None: ...

            def onQueryProgress(self, event: Any) -> None:
                p = event.progress
                reports[(str(p.id), int(p.batchId))] = {k: int(v) for k, v in dict(p.durationMs).items()}

        spark.streams.addListener(Listener())

    def phases(self, timed: Timed) -> list[dict[str, int]]:
        """The phases (ms) of a run's micro-batches (reports arrive asynchronously: waits 5 s at most)."""
        ids = [q["stream_id"] for q in timed.metrics["streaming"]["queries"]]
        wanted = [(i, b["batch"]) for i in ids for b in timed.batches()]
        deadline = time.monotonic() + 5
        while any(w not in self.reports for w in wanted) and time.monotonic() < deadline:
            time.sleep(0.1)
        return [self.reports.get(w, {}) for w in wanted]


@dataclass
class Timed:
    metrics: dict[str, Any]
    wall: float
    events: list[tuple[float, str]]  # (seconds since the run started, message)

    def at(self, needle: str) -> float | None:
        return next((t for t, m in self.events if needle in m), None)

    def batches(self) -> list[dict[str, Any]]:
        return list(self.metrics.get("streaming", {}).get("batches", []))


def _run(runner: Callable[..., dict[str, Any]], spark: Any, plan: Any, run_id: str, **kw: Any) -> Timed:
    from airflow_provider_seatunnel.runtime.executor import RunContext

    events: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    metrics = runner(RunContext(spark, plan, plan.pipelines[0], run_id),
                     on_event=lambda m: events.append((time.perf_counter() - t0, m)), **kw)
    return Timed(metrics, time.perf_counter() - t0, events)


def stream(spark: Any, plan: Any, run_id: str, stop: threading.Event | None = None) -> Timed:
    from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

    return _run(run_streaming_pipeline, spark, plan, run_id, stop=stop)


def batch(spark: Any, plan: Any, run_id: str) -> Timed:
    from airflow_provider_seatunnel.runtime.executor import run_pipeline

    return _run(run_pipeline, spark, plan, run_id)


def parquet_rows(directory: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in glob.glob(str(directory / "*.parquet")))


def rate(rows: float, seconds: float | None) -> float | None:
    return round(rows / seconds, 1) if seconds else None


# ------------------------------------------------------------------------------------------------
# CDC: snapshot, changes, latency
# ------------------------------------------------------------------------------------------------

PROCESSING = f', streaming.trigger = "processing_time", checkpoint.interval = {INTERVAL_MS}'


def cdc_job(source: str, checkpoint: Path, out: Path, trigger: str = "") -> str:
    return f"""
        env {{ job.mode = "STREAMING", job.name = "cdc_bench", checkpoint.root = "{checkpoint}", parallelism = 2
               {trigger} }}
        source {{ {source} }}
        transform {{ RowKindExtractor {{ plugin_input = "c", plugin_output = "k", transform_type = SHORT }} }}
        sink {{ LocalFile {{ plugin_input = "k", path = "{out}", file_format_type = "parquet" }} }}
    """


def run_split(bench: Bench, timed: Timed, rows: int) -> dict[str, Any]:
    """A stream run's wall time, split at its query start and its micro-batches' trigger times
    (with Spark's phases of each micro-batch: ``addBatch`` is the read and the sink's write)."""
    started = timed.at("query started")
    batch_s = sum((b["ms"] or 0) for b in timed.batches()) / 1000
    return {"wall_s": round(timed.wall, 2), "rows_written": timed.metrics.get("write_count"),
            "rows_per_s": rate(rows, timed.wall), "before_query_start_s": round(started or 0, 2),
            "micro_batches": len(timed.batches()), "micro_batch_s": round(batch_s, 2),
            "micro_batch_rows_per_s": rate(rows, batch_s),
            "rest_s": round(timed.wall - (started or 0) - batch_s, 2), "phases_ms": bench.progress.phases(timed)}


def snapshot_phase(bench: Bench, db: Pg | My, key: str, rows: int) -> tuple[dict[str, Any], Any, Path]:
    table, out = "bench_orders", bench.work / f"{key}_out"
    t0 = time.perf_counter()
    db.create(table, rows)
    loaded = time.perf_counter() - t0
    plan = bench.plan(cdc_job(db.block(table), bench.work / f"{key}_ck", out), f"{key}_sync")
    load = bench.load(f"{db.plugin}: snapshot run of {rows:,} rows")
    timed = stream(bench.spark, plan, f"{key}-snapshot")
    split = run_split(bench, timed, rows)
    split.update({"rows": rows, "table_load_s": round(loaded, 2), "rows_in_files": parquet_rows(out),
                  "snapshot_rows_per_s": rate(rows, split["before_query_start_s"]), "loadavg": load})
    print(f"   {split}", flush=True)
    return split, plan, out


def change_phase(bench: Bench, db: Pg | My, key: str, plan: Any, out: Path, rows: int, changes: int,
                 txn_rows: int) -> dict[str, Any]:
    """``changes`` changes (inserts above the table, updates then deletes from its low ids) in
    transactions of ``txn_rows`` rows, then one ``available_now`` run."""
    table = "bench_orders"
    updates = deletes = min(changes // 3, rows // 2)
    inserts = changes - updates - deletes
    before_files, before_log, t0, txns = parquet_rows(out), db.log_position(), time.perf_counter(), 0
    for kind, first, count in (("insert", rows + 1, inserts), ("update", 1, updates), ("delete", updates + 1, deletes)):
        for low in range(first, first + count, txn_rows):
            getattr(db, kind)(table, low, min(low + txn_rows, first + count) - 1)
            txns += 1
    dml_s, log_bytes = time.perf_counter() - t0, db.log_position() - before_log
    expected = inserts + 2 * updates + deletes
    load = bench.load(f"{db.plugin}: change run of {changes:,} changes ({expected:,} rows)")
    timed = stream(bench.spark, plan, f"{key}-changes")
    split = run_split(bench, timed, expected)
    split.update({"changes": changes, "inserts": inserts, "updates": updates, "deletes": deletes,
                  "transactions": txns, "expected_rows": expected, "rows_in_files": parquet_rows(out) - before_files,
                  "changes_per_s": rate(changes, timed.wall), "dml_s": round(dml_s, 2), "change_log_bytes": log_bytes,
                  "loadavg": load})
    print(f"   {split}", flush=True)
    return split


class Poller:
    """The rows of the sink's files, each with the time its file was first listed."""

    def __init__(self, out: Path):
        self.out, self.files, self.seen, self.committed = out, set(), {}, {}

    def poll(self) -> None:
        import pyarrow.parquet as pq

        now = time.time()
        for f in sorted(set(glob.glob(str(self.out / "*.parquet"))) - self.files):
            self.files.add(f)
            table = pq.read_table(f, columns=["id", "committed_at"]).to_pydict()
            for row_id, at in zip(table["id"], table["committed_at"], strict=True):
                self.seen.setdefault(row_id, now)
                self.committed[row_id] = at


def _writer(db: Pg | My, table: str, seconds: float, written: list[int]) -> None:
    conn = db.connect()
    try:
        due = time.monotonic()
        end = due + seconds
        while due < end:
            db.insert_latency(table, len(written) + 1, conn)
            written.append(len(written) + 1)
            due += WRITE_EVERY_S
            time.sleep(max(0.0, due - time.monotonic()))
    finally:
        conn.close()


def latency_phase(bench: Bench, db: Pg | My, key: str, seconds: float) -> dict[str, Any]:
    table, out = "bench_latency", bench.work / f"{key}_lat_out"
    db.create_latency(table)
    db.insert_latency(table, 0)  # the snapshot's row: seen once the stream runs
    plan = bench.plan(cdc_job(db.block(table), bench.work / f"{key}_lat_ck", out, PROCESSING), f"{key}_latency")
    stop, outcome = threading.Event(), {}

    def run() -> None:
        try:
            # MySQL-CDC reads SparkSession.getActiveSession(), which is per thread: None in a thread
            # the session was not built in (the report of this benchmark); make it this thread's
            spark = bench.spark
            spark.__class__._get_j_spark_session_class(spark._jvm).setActiveSession(spark._jsparkSession)
            outcome["timed"] = stream(spark, plan, f"{key}-latency", stop)
        except BaseException as e:  # reported below
            outcome["error"] = e

    poller = Poller(out)
    runner = threading.Thread(target=run, name="latency-stream")
    runner.start()
    try:
        deadline = time.monotonic() + 300
        while 0 not in poller.seen:  # the first micro-batch (the snapshot) is through
            if "error" in outcome or time.monotonic() > deadline:
                raise RuntimeError(f"the latency stream did not start: {outcome.get('error')}")
            time.sleep(POLL_S)
            poller.poll()
        load = bench.load(f"{db.plugin}: latency, one row every {WRITE_EVERY_S * 1000:.0f} ms for {seconds:.0f} s")
        written: list[int] = []
        writer = threading.Thread(target=_writer, args=(db, table, seconds, written), name="latency-writer")
        writer.start()
        deadline = time.monotonic() + seconds + 120
        while (writer.is_alive() or any(i not in poller.seen for i in written)) and time.monotonic() < deadline:
            if "error" in outcome:
                raise RuntimeError(f"the latency stream failed: {outcome['error']}")
            time.sleep(POLL_S)
            poller.poll()
        writer.join()
    finally:
        stop.set()
        runner.join(180)
    if "error" in outcome:
        raise RuntimeError(f"the latency stream failed: {outcome['error']}")
    lat = sorted(poller.seen[i] - float(poller.committed[i]) for i in written if i in poller.seen)
    timed = outcome["timed"]
    batch_ms = [b["ms"] for b in timed.batches() if b["ms"] is not None]
    q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else lat * 99
    result = {"rows_committed": len(written), "rows_seen": len(lat), "p50_s": round(statistics.median(lat), 3),
              "p95_s": round(q[94], 3), "max_s": round(lat[-1], 3), "min_s": round(lat[0], 3),
              "mean_s": round(statistics.fmean(lat), 3), "micro_batches": timed.metrics["streaming"]["micro_batches"],
              "micro_batch_ms_median": statistics.median(batch_ms) if batch_ms else None,
              "micro_batch_ms_max": max(batch_ms) if batch_ms else None,
              "stopped": timed.metrics["streaming"].get("stopped"), "seconds": seconds, "loadavg": load}
    print(f"   {result}", flush=True)
    return result


def warm_up(bench: Bench, db: Pg | My, key: str) -> dict[str, Any]:
    """An untimed sync of a small table (snapshot run, 300 changes, change run): the session's JVM
    and Python workers warm. Its wall times are what a fresh driver pays (recorded, not compared)."""
    table, out = "bench_warmup", bench.work / f"{key}_warm_out"
    db.create(table, 1000)
    plan = bench.plan(cdc_job(db.block(table), bench.work / f"{key}_warm_ck", out), f"{key}_warmup")
    bench.load(f"{db.plugin}: untimed warm-up sync (1,000 rows, then 300 changes)")
    first = stream(bench.spark, plan, f"{key}-warm-1")
    db.insert(table, 1001, 1100), db.update(table, 1, 100), db.delete(table, 101, 200)
    second = stream(bench.spark, plan, f"{key}-warm-2")
    return {"snapshot_run_s": round(first.wall, 2), "change_run_s": round(second.wall, 2)}


def cdc(bench: Bench, db: Pg | My, key: str, args: argparse.Namespace) -> dict[str, Any]:
    warm = warm_up(bench, db, key)
    snapshot, plan, out = snapshot_phase(bench, db, key, args.rows)
    changes = change_phase(bench, db, key, plan, out, args.rows, args.changes, args.txn_rows)
    latency = latency_phase(bench, db, key, args.latency_seconds)
    return {"sink": "LocalFile parquet (via RowKindExtractor)", "warm_up": warm, "snapshot": snapshot,
            "changes": changes, "latency": latency}


# ------------------------------------------------------------------------------------------------
# Kafka
# ------------------------------------------------------------------------------------------------

FAKE_FIELDS = "id = bigint, name = string, score = double, at = timestamp"


def kafka_sink_job(server: Any, topic: str, semantics: str, rows: int) -> str:
    return f"""
        env {{ job.mode = "BATCH", job.name = "kafka_bench", parallelism = 2 }}
        source {{ FakeSource {{ plugin_output = "f", row.num = {rows // 2}, string.length = 16,
                               schema = {{ fields {{ {FAKE_FIELDS} }} }} }} }}
        sink {{ Kafka {{ plugin_input = "f", bootstrap.servers = "{server.bootstrap}", topic = "{topic}",
                        format = json, semantics = {semantics} }} }}
    """


def kafka_source_job(server: Any, topic: str, out: Path) -> str:
    return f"""
        env {{ job.mode = "BATCH", job.name = "kafka_read_bench", parallelism = 2 }}
        source {{ Kafka {{ plugin_output = "k", bootstrap.servers = "{server.bootstrap}", topic = "{topic}",
                          start_mode = earliest, format = json, schema = {{ fields {{ {FAKE_FIELDS} }} }} }} }}
        sink {{ LocalFile {{ plugin_input = "k", path = "{out}", file_format_type = "parquet" }} }}
    """


def warm_coordinator(server: Any) -> None:
    """Have the broker load its group coordinator before the first EXACTLY_ONCE commit (a fresh
    broker answers "not coordinator" while it creates ``__consumer_offsets``)."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    topic = server.create_topic("bench_warmup")
    consumer = Consumer(server.config(**{"group.id": "bench-warmup", "enable.auto.commit": False}))
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


def end_offsets(server: Any, topic: str) -> int:
    """The sum of the topic's high watermarks (EXACTLY_ONCE: records plus a commit marker per
    partition and transaction)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(server.config(**{"group.id": "bench-offsets"}))
    try:
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
                   for p in server.partitions(topic))
    finally:
        consumer.close()


def kafka_sink_run(bench: Bench, server: Any, semantics: str, rows: int, name: str) -> dict[str, Any]:
    topic = server.create_topic(f"bench_{name}", partitions=2)
    plan = bench.plan(kafka_sink_job(server, topic, semantics, rows), f"kafka_{name}")
    timed = batch(bench.spark, plan, f"kafka-{name}")
    writing, prepared, committed = timed.at(": writing"), timed.at(": prepared"), timed.at(": committed")
    return {"topic": topic, "semantics": semantics, "wall_s": round(timed.wall, 2),
            "rows_per_s": rate(rows, timed.wall), "rows_written": timed.metrics.get("write_count"),
            "end_offsets": end_offsets(server, topic),
            "prepare_s": round(prepared - writing, 2) if prepared and writing else None,
            "commit_s": round(committed - prepared, 2) if committed and prepared else None}


def kafka(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    from tests import kafka_server

    server = kafka_server.start()
    try:
        warm_coordinator(server)
        warm = kafka_warm_up(bench, server, min(50_000, args.kafka_rows))
        runs: dict[str, list[dict[str, Any]]] = {"AT_LEAST_ONCE": [], "EXACTLY_ONCE": []}
        for r in range(args.kafka_rounds):
            order = ["AT_LEAST_ONCE", "EXACTLY_ONCE"] if r % 2 == 0 else ["EXACTLY_ONCE", "AT_LEAST_ONCE"]
            for semantics in order:
                load = bench.load(f"Kafka sink {semantics}, round {r + 1}: {args.kafka_rows:,} rows")
                run = {**kafka_sink_run(bench, server, semantics, args.kafka_rows, f"{semantics.lower()}_{r}"),
                       "loadavg": load}
                runs[semantics].append(run)
                print(f"   {run}", flush=True)
        medians = {s: statistics.median(r["wall_s"] for r in v) for s, v in runs.items()}
        source = kafka_source(bench, server, runs["EXACTLY_ONCE"][0]["topic"], args)
    finally:
        server.stop()
    return {"rows": args.kafka_rows, "warm_up": warm, "sink": runs, "sink_median_wall_s": medians,
            "sink_median_rows_per_s": {s: rate(args.kafka_rows, m) for s, m in medians.items()},
            "exactly_once_over_at_least_once": round(medians["EXACTLY_ONCE"] / medians["AT_LEAST_ONCE"], 3),
            "source": source}


def kafka_warm_up(bench: Bench, server: Any, rows: int = 50_000) -> dict[str, float]:
    """Untimed runs of each side (the first large run of each is slower: the JVM compiles the Kafka
    clients' code); their wall times are recorded, not compared."""
    bench.load(f"Kafka: untimed warm-up runs ({rows:,} rows each)")
    out = {s: kafka_sink_run(bench, server, s, rows, f"warmup_{s.lower()}")["wall_s"]
           for s in ("AT_LEAST_ONCE", "EXACTLY_ONCE")}
    plan = bench.plan(kafka_source_job(server, "bench_warmup_exactly_once", bench.work / "kafka_read_warm"),
                      "kafka_read_warm")
    out["source"] = round(batch(bench.spark, plan, "kafka-read-warm").wall, 2)
    return out


def kafka_source(bench: Bench, server: Any, topic: str, args: argparse.Namespace) -> dict[str, Any]:
    runs = []
    for r in range(args.kafka_rounds):
        out = bench.work / f"kafka_read_{r}"
        plan = bench.plan(kafka_source_job(server, topic, out), f"kafka_read_{r}")
        load = bench.load(f"Kafka source, round {r + 1}: topic {topic} -> LocalFile parquet")
        timed = batch(bench.spark, plan, f"kafka-read-{r}")
        rows = parquet_rows(out)
        runs.append({"wall_s": round(timed.wall, 2), "rows_in_files": rows, "rows_per_s": rate(rows, timed.wall),
                     "loadavg": load})
        print(f"   {runs[-1]}", flush=True)
    median = statistics.median(r["wall_s"] for r in runs)
    return {"topic": topic, "runs": runs, "median_wall_s": median, "median_rows_per_s": rate(args.kafka_rows, median)}


# ------------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------------

def wait_for_load(limit: float | None, longest: float) -> None:
    if limit is None:
        return
    deadline = time.monotonic() + longest
    while (one := os.getloadavg()[0]) >= limit and time.monotonic() < deadline:
        print(f"load average {one:.2f} >= {limit}: waiting", flush=True)
        time.sleep(60)


def session(jars: list[str]) -> Any:
    from airflow_provider_seatunnel.runtime.session import get_session

    spark = get_session("cdc-bench", {"spark.ui.enabled": "false"}, "local[2]", jars)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def session_jars(only: set[str]) -> list[str]:
    """The jars a run started by the engine would have in ``spark.jars``: PostgreSQL's JDBC driver,
    Spark's Kafka source and sink."""
    from airflow_provider_seatunnel.connectors.kafka.checks import spark_kafka_jars
    from tests import pg

    return ([pg.JDBC_JAR] if "pg" in only else []) + (spark_kafka_jars({}) if "kafka" in only else [])


def run_all(bench: Bench, args: argparse.Namespace, only: set[str]) -> dict[str, Any]:
    from tests import mysql, pg

    out: dict[str, Any] = {}
    if "pg" in only:
        server = pg.start()
        try:
            out["postgres_cdc"] = cdc(bench, Pg(server), "pg", args)
        finally:
            server.stop()
    if "mysql" in only:
        server = mysql.start()
        try:
            out["mysql_cdc"] = cdc(bench, My(server), "my", args)
        finally:
            server.stop()
    if "kafka" in only:
        out["kafka"] = kafka(bench, args)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows of the snapshot table")
    ap.add_argument("--changes", type=int, default=100_000, help="changes before the change run")
    ap.add_argument("--txn-rows", type=int, default=25_000, help="rows changed per transaction")
    ap.add_argument("--latency-seconds", type=float, default=60.0)
    ap.add_argument("--kafka-rows", type=int, default=200_000)
    ap.add_argument("--kafka-rounds", type=int, default=3)
    ap.add_argument("--only", default="pg,mysql,kafka", help="a comma list of pg, mysql, kafka")
    ap.add_argument("--wait-load", type=float, help="first wait until the 1-minute load average is below this")
    ap.add_argument("--wait-max", type=float, default=2400.0, help="seconds to wait for --wait-load at most")
    ap.add_argument("--output", type=Path, default=HERE / "results" / "cdc.json")
    args = ap.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SEATUNNEL_PLAN_CACHE", "off")

    wait_for_load(args.wait_load, args.wait_max)
    import pyspark

    work = Path(tempfile.mkdtemp(prefix="st-cdc-bench-"))
    t0 = time.perf_counter()
    spark = session(session_jars(only))
    bench = Bench(spark, work, Progress(spark))
    bench.load("start")
    try:
        results = run_all(bench, args, only)
    finally:
        bench.spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    bench.load("end")
    report = {"generated": datetime.now(UTC).isoformat(timespec="seconds"),
              "command": " ".join(["python benchmarks/cdc.py", *sys.argv[1:]]),
              "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "pyspark": pyspark.__version__,
                          "master": "local[2]", "shared": True},
              "params": {k: v for k, v in vars(args).items() if k != "output"} | {"output": _shown(args.output)},
              "commit": _git("rev-parse", "HEAD"),
              "uncommitted": _git("status", "--porcelain", "--", "airflow_provider_seatunnel").splitlines(),
              "total_s": round(time.perf_counter() - t0, 1), "loadavg": bench.loads, **results}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(tables(report))
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(resolved)


def _git(*args: str) -> str:
    import subprocess

    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def tables(r: dict[str, Any]) -> str:
    """The Markdown tables of a report (the README's)."""
    lines = []
    cdc_keys = [k for k in ("postgres_cdc", "mysql_cdc") if k in r]
    if cdc_keys:
        names = {"postgres_cdc": "Postgres-CDC", "mysql_cdc": "MySQL-CDC"}
        lines += ["| LocalFile Parquet sink | " + " | ".join(names[k] for k in cdc_keys) + " |",
                  "|---|" + "---:|" * len(cdc_keys)]

        def row(label: str, fmt: Callable[[dict[str, Any]], str]) -> None:
            lines.append(f"| {label} | " + " | ".join(fmt(r[k]) for k in cdc_keys) + " |")

        row(f"snapshot run, {r['params']['rows']:,} rows: wall (rows/s)",
            lambda d: f"{d['snapshot']['wall_s']:.1f} s ({d['snapshot']['rows_per_s']:,.0f})")
        row("… snapshot written before the query starts",
            lambda d: f"{d['snapshot']['before_query_start_s']:.1f} s")
        row("… first micro-batch", lambda d: f"{d['snapshot']['micro_batch_s']:.1f} s")
        row(f"change run, {r['params']['changes']:,} changes: wall (changes/s)",
            lambda d: f"{d['changes']['wall_s']:.1f} s ({d['changes']['changes_per_s']:,.0f})")
        row("… rows written (rows/s)",
            lambda d: f"{d['changes']['rows_written']:,} ({d['changes']['rows_per_s']:,.0f})")
        row(f"latency, `processing_time` {INTERVAL_MS} ms: p50 / p95 / max",
            lambda d: f"{d['latency']['p50_s']:.2f} / {d['latency']['p95_s']:.2f} / {d['latency']['max_s']:.2f} s")
    if "kafka" in r:
        k = r["kafka"]
        lines += ["", f"| Kafka, {k['rows']:,} rows, BATCH | median wall | rows/s |", "|---|---:|---:|"]
        for s in ("AT_LEAST_ONCE", "EXACTLY_ONCE"):
            lines.append(f"| FakeSource → Kafka `{s}` | {k['sink_median_wall_s'][s]:.1f} s "
                         f"| {k['sink_median_rows_per_s'][s]:,.0f} |")
        lines.append(f"| Kafka (json) → LocalFile Parquet | {k['source']['median_wall_s']:.1f} s "
                     f"| {k['source']['median_rows_per_s']:,.0f} |")
        lines.append(f"\nEXACTLY_ONCE / AT_LEAST_ONCE (median wall): {k['exactly_once_over_at_least_once']:.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
