"""Restore trials of streams (:mod:`restore_faults`): a source that changes while SIGKILLs hit the pipeline.

Per pair (:data:`PAIRS`) — ``Postgres-CDC → Jdbc upsert``, ``MySQL-CDC → Jdbc upsert``,
``MySQL-CDC → Kafka debezium_json``, ``Postgres-CDC → Delta/Iceberg/Paimon upsert`` and
``Kafka → LocalFile`` — every trial is a new stream (fresh source table or topic, fresh target, fresh
checkpoint, a replication slot of its own) run two ways, alternating:

* **available_now**, a scheduled sync: ``seatunnel-airflow run`` of a job with
  ``streaming.trigger = "available_now"`` SIGKILLed (its spark-submit process, from outside) at a
  random moment, once or twice (each kill a further attempt of the same run id, resuming the
  checkpoint), while a writer thread makes random single-row inserts, updates and deletes on the
  source (appends to the topic for Kafka); the writer stops and a last attempt runs to its end.
* **processing_time**, a long-running stream (1 s micro-batches): the attempts are SIGKILLed the same
  way; the last attempt runs while the writer goes on for a few more seconds, then until the target
  equals the source, then it is stopped as the operator stops a stream (SIGTERM to its driver: the
  running micro-batch commits, the queries stop).

At the end the target must equal the source: full rows compared as multisets (a wrong value counts
as one row lost and one duplicated). A change-log target (Kafka ``debezium_json``) is replayed per
key in offset order, strictly: a ``c`` must create a missing key, a ``d`` must delete the row it
names with exactly its values; a record that breaks this (a change delivered twice, or out of order)
counts as duplicated, and the table the replay ends with must equal the source.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import cdc_databases
import delta_targets
import iceberg_targets
import kafka_targets
import paimon_targets

Row = tuple
PROCESSING = 'streaming.trigger = "processing_time", checkpoint.interval = 1000'
AVAILABLE_NOW = 'streaming.trigger = "available_now"'
MODES = ("available_now", "processing_time")
TABLE = "rf_cdc_src"
TARGET = "rf_cdc_dst"
TOPIC = "rf_cdc_changes"
STREAM_TOPIC = "rf_stream_src"
CAUGHT_UP_S = 240.0  # the last processing_time attempt: how long the target may take to catch up


def _cents(v: Any) -> Decimal | None:
    return None if v is None else Decimal(str(v)).quantize(Decimal("0.01"))


def _moment(v: Any) -> datetime | None:
    """A naive UTC wall-clock time (the source's timestamps are read as UTC; a reader may give an instant)."""
    if isinstance(v, datetime) and v.tzinfo is not None:
        return v.astimezone(UTC).replace(tzinfo=None)
    if v is None or isinstance(v, datetime):
        return v
    return datetime.fromisoformat(str(v).replace("T", " ").rstrip("Z"))


def normal(row: Row) -> Row:
    """``(id, name, score, at, ok)`` with one type per column, whoever read it."""
    i, name, score, at, ok = row
    return (int(i), name, _cents(score), _moment(at), None if ok is None else bool(ok))


class Writer:
    """Random single-row changes on a table, one transaction each, from a thread of its own; the ids it
    knows are the ones it created or found at the start (it is the table's only writer)."""

    def __init__(self, db: Any, table: str, ids: list[int], rng: random.Random):
        self.db, self.table, self.ids, self.rng = db, table, list(ids), rng
        self.next_id = max(ids, default=0) + 1
        self.done = threading.Event()
        self.changes = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def change(self, conn: Any) -> None:
        r, t, run = self.rng.random(), self.table, self.db.run
        if r < 0.45 or not self.ids:
            i, self.next_id = self.next_id, self.next_id + 1
            run(f"INSERT INTO {t} VALUES ({i}, 'n{i}', {self.rng.randint(0, 9999) / 100}, "
                f"TIMESTAMP '2024-05-01 10:00:00', {'TRUE' if i % 2 else 'FALSE'})", conn)
            self.ids.append(i)
        elif r < 0.8:
            i = self.rng.choice(self.ids)
            run(f"UPDATE {t} SET name = 'u{self.rng.randint(0, 999)}', score = score + 1 WHERE id = {i}", conn)
        else:
            i = self.ids.pop(self.rng.randrange(len(self.ids)))
            run(f"DELETE FROM {t} WHERE id = {i}", conn)
        self.changes += 1

    def _loop(self) -> None:
        conn = self.db.connect()  # its own connection: the trial reads the source meanwhile
        try:
            while not self.done.is_set():
                self.change(conn)
                time.sleep(self.rng.uniform(0.005, 0.08))
        finally:
            conn.close()

    def start(self) -> Writer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.done.set()
        self.thread.join(30)


class TopicWriter(Writer):
    """Appends to the source topic: batches of 1-20 new json records keyed by ``id``."""

    def __init__(self, kafka: Any, rng: random.Random, first_id: int):
        super().__init__(None, STREAM_TOPIC, [], rng)
        self.kafka, self.next_id, self.written = kafka, first_id, []

    def _loop(self) -> None:
        while not self.done.is_set():
            rows = [(i, f"name-{i}", f"g{i % 5}") for i in range(self.next_id, self.next_id + self.rng.randint(1, 20))]
            self.kafka.server.produce(STREAM_TOPIC, [kafka_targets.encode(r, "json") for r in rows],
                                      keys=[json.dumps({"id": r[0]}) for r in rows])
            self.next_id += len(rows)
            self.written += rows
            self.changes += len(rows)
            time.sleep(self.rng.uniform(0.02, 0.2))


# ------------------------------------------------------------------------------------------------
# the pairs
# ------------------------------------------------------------------------------------------------

@dataclass
class Stream:
    """One trial's stream: the source block, the sink blocks, and how to read both sides."""

    source: str
    sinks: list[str]
    writer: Callable[[random.Random], Writer]
    wanted: Callable[[Writer], list[Row]]  # what the target must hold once every change arrived
    got: Callable[[], tuple[list[Row], int]]  # what it holds, and the change-log anomalies (duplicates)
    leftovers: Callable[[], int] = lambda: 0  # staging objects a finished run must not leave
    drop: Callable[[], None] = lambda: None  # after the trial (a replication slot)


def _pg_source(db: Any, n: int, rows: int) -> str:
    db.run(f"DROP TABLE IF EXISTS {TABLE}; CREATE TABLE {TABLE} (id int PRIMARY KEY, name text, "
           f"score numeric(10,2), at timestamp, ok boolean)")
    db.run(f"INSERT INTO {TABLE} SELECT g, 'name-' || g, (g % 10000) / 100.0, "
           f"timestamp '2024-01-01' + g * interval '1 second', g % 2 = 0 FROM generate_series(1, {rows}) g")
    s = db.server
    return (f'Postgres-CDC {{ plugin_output = "c", base-url = "{s.url}", username = "{s.user}", '
            f'password = "{s.password}", table-names = ["{s.database}.public.{TABLE}"], slot.name = "rf_cdc_{n}" }}')


def _my_source(db: Any, n: int, rows: int) -> str:
    db.run(f"DROP TABLE IF EXISTS {TABLE}")
    db.run(f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, name VARCHAR(40), score DECIMAL(10,2), at DATETIME, "
           f"ok BOOLEAN)")
    db.run(f"INSERT INTO {TABLE} SELECT seq, CONCAT('name-', seq), (seq % 10000) / 100, "
           f"TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, seq % 2 = 0 FROM seq_1_to_{rows}")
    s = db.server
    return (f'MySQL-CDC {{ plugin_output = "c", base-url = "{s.url}", username = "{s.user}", '
            f'password = "{s.password}", table-names = ["{s.database}.{TABLE}"], server-id = "{5400 + n}" }}')


def _drop_slots(pg: Any) -> None:
    """Replication slots and publications of earlier trials (their streams are over)."""
    pg.run("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
           "WHERE slot_name LIKE 'rf\\_cdc\\_%' AND active_pid IS NOT NULL")
    for _ in range(50):
        try:
            pg.run("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                   "WHERE slot_name LIKE 'rf\\_cdc\\_%'")
            break
        except Exception:  # still active a moment after its backend was told to go
            time.sleep(0.2)
    for (name,) in pg.run("SELECT pubname FROM pg_publication WHERE pubname LIKE 'rf\\_cdc\\_%'"):
        pg.run(f"DROP PUBLICATION {name}")


_STAGING = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'st\\_stage\\_%'"


def _jdbc_target(pg: Any) -> tuple[str, Callable[[], tuple[list[Row], int]], Callable[[], int]]:
    """A PostgreSQL table keyed by id, upserted by the Jdbc sink (row kinds: -D deletes, +U replaces)."""
    staging = [r[0] for r in pg.run(_STAGING)]
    pg.run("".join(f"DROP TABLE IF EXISTS public.{t}; " for t in staging)
           + f"DROP TABLE IF EXISTS {TARGET}; CREATE TABLE {TARGET} (id int PRIMARY KEY, name text, "
             f"score numeric(10,2), at timestamp, ok boolean)")
    s = pg.server
    block = (f'Jdbc {{ plugin_input = "c", url = "{s.url}", driver = "org.postgresql.Driver", user = "{s.user}", '
             f'password = "{s.password}", generate_sink_sql = true, database = "{s.database}", '
             f'table = "public.{TARGET}", primary_keys = ["id"] }}')
    return block, lambda: ([normal(r) for r in pg.run(f"SELECT * FROM {TARGET}")], 0), lambda: len(pg.run(_STAGING))


def _source_rows(db: Any) -> Callable[[Writer], list[Row]]:
    return lambda _w: [normal(r) for r in db.run(f"SELECT id, name, score, at, ok FROM {TABLE}")]


def replay(records: list[tuple[Any, Any, int, int]]) -> tuple[list[Row], int]:
    """A debezium_json change log (``(key, value, partition, offset)`` in offset order per partition)
    applied strictly: the table it ends with, and the records that could not apply (a ``c`` for a key
    present, a ``d`` whose ``before`` is not the row held)."""
    table: dict[int, Row] = {}
    bad = 0
    for _key, value, _p, _o in records:
        if value is None:
            continue
        m = json.loads(value)
        m = m.get("payload", m)
        if m["op"] in ("c", "r"):
            row = normal(tuple(m["after"][k] for k in ("id", "name", "score", "at", "ok")))
            bad += row[0] in table
            table[row[0]] = row
        elif m["op"] == "d":
            row = normal(tuple(m["before"][k] for k in ("id", "name", "score", "at", "ok")))
            bad += table.get(row[0]) != row
            table.pop(row[0], None)
        else:  # "u": before and after in one record
            before = normal(tuple(m["before"][k] for k in ("id", "name", "score", "at", "ok")))
            after = normal(tuple(m["after"][k] for k in ("id", "name", "score", "at", "ok")))
            bad += table.get(before[0]) != before
            table[after[0]] = after
    return list(table.values()), bad


def pg_to_jdbc(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    pg = _pg(h)
    _drop_slots(pg)
    source = _pg_source(pg, n, rows)
    block, got, leftovers = _jdbc_target(pg)
    return Stream(source, [block], lambda rng: Writer(pg, TABLE, list(range(1, rows + 1)), rng),
                  _source_rows(pg), got, leftovers, lambda: _drop_slots(pg))


def my_to_jdbc(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    my, pg = _my(h), _pg(h)
    source = _my_source(my, n, rows)
    block, got, leftovers = _jdbc_target(pg)
    return Stream(source, [block], lambda rng: Writer(my, TABLE, list(range(1, rows + 1)), rng),
                  _source_rows(my), got, leftovers)


def my_to_kafka(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    my, kafka = _my(h), kafka_targets.broker(h["resources"])
    source = _my_source(my, n, rows)
    kafka.reset(TOPIC)
    block = (f'Kafka {{ plugin_input = "c", bootstrap.servers = "{kafka.bootstrap}", topic = "{TOPIC}", '
             'format = debezium_json, semantics = EXACTLY_ONCE, partition_key_fields = ["id"] }')
    return Stream(source, [block], lambda rng: Writer(my, TABLE, list(range(1, rows + 1)), rng),
                  _source_rows(my), lambda: replay(kafka.server.consume(TOPIC, timeout=60)))


def _lakehouse(h: dict[str, Any], n: int, rows: int, block: str, read: Callable[[], list[tuple]]) -> Stream:
    """Postgres-CDC into a primary-key table the sink creates; ``read`` gives its rows (id, name, score, at, ok)."""
    pg = _pg(h)
    _drop_slots(pg)
    source = _pg_source(pg, n, rows)
    return Stream(source, [block], lambda rng: Writer(pg, TABLE, list(range(1, rows + 1)), rng),
                  _source_rows(pg), lambda: ([normal(tuple(r)) for r in read()], 0), drop=lambda: _drop_slots(pg))


def pg_to_delta(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    """A Delta table created by the sink, upserted on ``id`` (one MERGE per micro-batch, deletes applied)."""
    spark, path = delta_targets.reader_session(h["resources"]), work / f"delta-{n}"
    shutil.rmtree(path, ignore_errors=True)

    def read() -> list[tuple]:
        if not (path / "_delta_log").is_dir():
            return []
        return spark.read.format("delta").load(str(path)).select("id", "name", "score", "at", "ok").collect()

    return _lakehouse(h, n, rows, f'Delta {{ plugin_input = "c", path = "{path}", primary_keys = ["id"] }}', read)


def pg_to_iceberg(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    """An Iceberg table (hadoop catalog) created by the sink, upserted on ``id``; PySpark 4.1 only."""
    spark, warehouse = iceberg_targets.reader_session(h["resources"]), f"file://{work / f'iceberg-{n}'}"
    catalog = f'catalog_name = "cdc{n}", iceberg.catalog.config = {{ type = "hadoop", warehouse = "{warehouse}" }}'
    name = iceberg_targets.register_catalog(spark, f"cdc{n}", warehouse, "bench", TARGET)

    def read() -> list[tuple]:
        if not spark.catalog.tableExists(name):
            return []
        spark.sql(f"REFRESH TABLE {name}")
        return spark.table(name).select("id", "name", "score", "at", "ok").collect()

    block = (f'Iceberg {{ plugin_input = "c", {catalog}, namespace = "bench", table = "{TARGET}", '
             'iceberg.table.primary-keys = "id", iceberg.table.upsert-mode-enabled = true }')
    return _lakehouse(h, n, rows, block, read)


def pg_to_paimon(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    """A Paimon primary-key table created by the sink, read through pypaimon at its newest snapshot."""
    warehouse = work / f"paimon-{n}"
    shutil.rmtree(warehouse, ignore_errors=True)
    block = (f'Paimon {{ plugin_input = "c", warehouse = "{warehouse}", database = "db", table = "{TARGET}", '
             'paimon.table.primary-keys = "id" }')
    return _lakehouse(h, n, rows, block, lambda: paimon_targets.read_rows(
        warehouse, f"db.{TARGET}", ("id", "name", "score", "at", "ok")))


def kafka_to_localfile(h: dict[str, Any], work: Path, n: int, rows: int) -> Stream:
    kafka = kafka_targets.broker(h["resources"])
    kafka.reset(STREAM_TOPIC)
    first = [(i, f"name-{i}", f"g{i % 5}") for i in range(rows)]
    kafka.server.produce(STREAM_TOPIC, [kafka_targets.encode(r, "json") for r in first],
                         keys=[json.dumps({"id": r[0]}) for r in first])
    sinks = h["localfile_sinks"](work / f"t{n}", rows, h["resources"])
    for s in sinks:
        s.seed()
    source = (f'Kafka {{ plugin_output = "rows", bootstrap.servers = "{kafka.bootstrap}", topic = "{STREAM_TOPIC}", '
              "start_mode = earliest, format = json, "
              "schema = { fields { id = bigint, name = string, grp = string } } }")
    writers: list[TopicWriter] = []

    def writer(rng: random.Random) -> Writer:
        writers.append(TopicWriter(kafka, rng, rows + 100_000 * (len(writers) + 1)))
        return writers[-1]

    def wanted(_w: Writer) -> list[Row]:
        return [r for s in sinks for r in s.final(first + [r for w in writers for r in w.written])]

    return Stream(source, [s.block for s in sinks], writer, wanted, lambda: ([r for s in sinks for r in s.read()], 0))


def _pg(h: dict[str, Any]) -> cdc_databases.Pg:
    """The benchmark run's PostgreSQL (started once by the harness), through psycopg."""
    res = h["resources"]
    if getattr(res, "pg_db", None) is None:
        res.pg_db = cdc_databases.Pg(h["postgres"](res))
    return res.pg_db


def _my(h: dict[str, Any]) -> cdc_databases.My:
    """The benchmark run's MariaDB (started once by the harness), through PyMySQL."""
    res = h["resources"]
    if getattr(res, "my_db", None) is None:
        res.my_db = cdc_databases.My(h["mysql"](res))
    return res.my_db


@dataclass(frozen=True)
class Pair:
    stream: Callable[[dict[str, Any], Path, int, int], Stream]
    rows: int
    reading: str


_DB_READING = ("Each trial starts from a new source table of {rows} rows, an empty target, a new checkpoint and "
               "(Postgres) a replication slot of its own. While the attempts run, a writer thread makes random "
               "single-row changes on the source, one transaction each, every 5-80 ms (45 % inserts, 35 % updates, "
               "20 % deletes). ")
PAIRS: dict[str, Pair] = {
    "Postgres-CDC → Jdbc upsert": Pair(pg_to_jdbc, 3_000, _DB_READING + (
        "Source and target are tables of the private PostgreSQL server (`tests/pg.py`, `wal_level = logical`); the "
        "Jdbc sink upserts on `id` (`primary_keys`). *Leftovers*: the sink's staging tables after the last attempt.")),
    "MySQL-CDC → Jdbc upsert": Pair(my_to_jdbc, 3_000, _DB_READING + (
        "The source is a table of the private MariaDB server (`tests/mysql.py`, row-based binlog); the target a "
        "PostgreSQL table upserted on `id`.")),
    "MySQL-CDC → Kafka debezium_json": Pair(my_to_kafka, 3_000, _DB_READING + (
        "The target is a topic of the private Kafka broker (3 partitions), written with `format = debezium_json`, "
        "`semantics = EXACTLY_ONCE`, keyed by `id`; it is read `read_committed` and replayed strictly per key "
        "(a change delivered twice or out of order counts as duplicated).")),
    "Postgres-CDC → Delta upsert": Pair(pg_to_delta, 3_000, _DB_READING + (
        "The source is a table of the private PostgreSQL server; the target a Delta table (Delta 4.4.0) the sink "
        "creates, upserted on `id` (`primary_keys`: one MERGE per micro-batch, deletes applied), read by a Spark "
        "session of the harness at its newest version.")),
    "Postgres-CDC → Iceberg upsert": Pair(pg_to_iceberg, 3_000, _DB_READING + (
        "The source is a table of the private PostgreSQL server; the target an Iceberg table of a hadoop catalog "
        "(Iceberg 1.12.0, PySpark 4.1: run with the lowest-versions venv's Python) the sink creates, upserted on "
        "`id` (one MERGE per micro-batch, published by fast-forward), read at `main` by a Spark session of the "
        "harness.")),
    "Postgres-CDC → Paimon upsert": Pair(pg_to_paimon, 3_000, _DB_READING + (
        "The source is a table of the private PostgreSQL server; the target a Paimon primary-key table the sink "
        "creates (pypaimon 2.1.0), read through pypaimon at its newest snapshot.")),
    "Kafka → LocalFile": Pair(kafka_to_localfile, 5_000, (
        "The source is a topic of the private Kafka broker (3 partitions) holding {rows} json records at the start; "
        "while the attempts run a writer appends batches of 1-20 records every 20-200 ms. The two LocalFile "
        "sinks of the `Kafka source` type (json files; csv partitioned by `grp`) each hold one row of an earlier "
        "run.")),
}


# ------------------------------------------------------------------------------------------------
# a trial
# ------------------------------------------------------------------------------------------------

def job(stream: Stream, mode: str, checkpoint: Path) -> str:
    trigger = AVAILABLE_NOW if mode == "available_now" else PROCESSING
    sinks = "\n  ".join(stream.sinks)
    return f"""
env {{ job.name = "restore_streams", job.mode = "STREAMING", parallelism = 2, spark.ui.enabled = false,
       spark.driver.extraJavaOptions = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC", {trigger},
       checkpoint.root = "{checkpoint}" }}
source {{
  {stream.source}
}}
sink {{
  {sinks}
}}
"""


def _stop_stream(h: dict[str, Any], run_id: str, proc: Any) -> None:
    """Stop a processing_time run as the operator does: SIGTERM to its Python driver(s)."""
    for pid in h["drivers_of"](run_id):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(Exception):
        proc.wait(120)
    if proc.poll() is None:
        proc.kill()


def stream_trial(n: int, name: str, mode: str, rng: random.Random, h: dict[str, Any], base_s: float) -> Any:
    """One trial: 1-2 killed attempts with the writer running, then the last attempt; scored."""
    pair, work = PAIRS[name], h["work"]
    stream = pair.stream(h, work, n, h["rows"])
    checkpoint = work / f"ck-{n}"
    conf = work / f"job-{n}.conf"
    conf.write_text(job(stream, mode, checkpoint))
    run_id = f"stream-{n:03d}"
    t = h["Trial"](n, "kill", mode)
    t0 = time.monotonic()
    writer = stream.writer(rng).start()
    kills, moments = 1 + (rng.random() < 0.35), []
    attempt = 0
    try:
        for _ in range(kills):
            attempt += 1
            at = rng.uniform(1.0, base_s * 0.9 if mode == "available_now" else base_s + 12)
            run = h["run_cli"](conf, work, run_id, attempt, kill=lambda ev, el, at=at: el >= at)
            if attempt == 1:
                t.first_code, t.stopped = run.code, h["stopped"](run)
                t.after_first = [f"{len(stream.got()[0])} rows"]
            moments.append(f"{run.killed_at:.1f}s" if run.killed_at is not None else "none (ended first)")
            orphans = h["drivers_of"](run_id)
            t.orphans += len(orphans)
            for pid in orphans:
                os.kill(pid, signal.SIGKILL)
        attempt += 1
        if mode == "available_now":
            writer.stop()
            last = h["run_cli"](conf, work, run_id, attempt)
        else:
            last = h["run_cli"](conf, work, run_id, attempt,
                                watch=lambda proc, ev: threading.Thread(
                                    target=_until_equal, args=(stream, writer, rng, h, run_id, proc, t),
                                    daemon=True).start())
    finally:
        writer.stop()
    t.what = f"{mode}: SIGKILL at " + ", ".join(moments) + f"; {writer.changes} changes"
    t.restore_code = last.code
    rows, anomalies = stream.got()
    lost, extra = h["difference"](rows, stream.wanted(writer))
    t.lost, t.duplicated = sum(lost.values()), sum(extra.values()) + anomalies
    if lost or extra or anomalies:
        t.details.append(f"lost {t.lost} [{h['sample'](lost)}], extra {sum(extra.values())} "
                         f"[{h['sample'](extra)}], change-log anomalies {anomalies}")
    t.raw_after_restore = [stream.leftovers()]
    t.seconds = time.monotonic() - t0
    stream.drop()
    shutil.rmtree(checkpoint, ignore_errors=True)
    if last.code != 0:
        print(last.stdout[-2000:], last.stderr[-2000:])
    return t


def _until_equal(stream: Stream, writer: Writer, rng: random.Random, h: dict[str, Any], run_id: str, proc: Any,
                 t: Any) -> None:
    """The last processing_time attempt: the writer goes on for 2-6 s, then the run is stopped once the
    target equals the source (or after :data:`CAUGHT_UP_S`)."""
    time.sleep(rng.uniform(2.0, 6.0))
    writer.stop()
    wanted = Counter(stream.wanted(writer))
    deadline = time.monotonic() + CAUGHT_UP_S
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(Exception):
            if Counter(stream.got()[0]) == wanted:
                break
        time.sleep(1.0)
    else:
        t.details.append("the target did not catch up before the stream was stopped")
    _stop_stream(h, run_id, proc)


def baseline(name: str, h: dict[str, Any]) -> float:
    """An undisturbed available_now run of a fresh stream (no writer): its seconds; its target must equal
    its source."""
    pair, work = PAIRS[name], h["work"]
    stream = pair.stream(h, work, 0, h["rows"])
    conf = work / "job-0.conf"
    conf.write_text(job(stream, "available_now", work / "ck-0"))
    run = h["run_cli"](conf, work, "stream-baseline", 1)
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows, anomalies = stream.got()
    assert Counter(rows) == Counter(stream.wanted(stream.writer(random.Random(0)))) and not anomalies, \
        f"{name}: the baseline run's target differs from its source"
    stream.drop()
    return run.seconds


def run_pair(name: str, trials: int, seed: int, rows: int | None, h: dict[str, Any]) -> dict[str, Any]:
    """``trials`` trials of one pair, alternating available_now and processing_time; the results entry."""
    rng = random.Random(f"{seed}:{name}")
    h["rows"] = rows or PAIRS[name].rows
    started = datetime.now(UTC)
    base_s = baseline(name, h)
    print(f"{name} baseline: {base_s:.1f}s", file=sys.stderr)
    done = []
    for i in range(trials):
        t = stream_trial(i + 1, name, MODES[i % 2], rng, h, base_s)
        done.append(t)
        print(f"{name} {t.n:3d} {t.what}: restore {t.restore_code} lost {t.lost} dup {t.duplicated} "
              f"orphans {t.orphans} {t.seconds:.0f}s" + "".join(f"\n    {d}" for d in t.details), file=sys.stderr)
    return {"generated": f"{started:%Y-%m-%d %H:%M}", "seed": seed, "rows": h["rows"], "cpus": os.cpu_count(),
            "python": sys.version.split()[0], "sinks": [name.split(" → ")[1]],
            "points": [], "baseline_seconds": round(base_s, 1), "writing_at": 0.0, "stream": True,
            "trials": [{**t.__dict__, "seconds": round(t.seconds, 1)} for t in done]}


def describe(name: str, meta: dict[str, Any]) -> str:
    """The report's paragraph on one pair (its trials' table follows)."""
    trials = meta["trials"]
    modes = Counter(t["what"].split(":")[0] for t in trials)
    twice = sum("," in t["what"].split(";")[0] for t in trials)
    return (f"Run on {meta['generated']} UTC; {meta['cpus']} CPUs, Python {meta['python']}, seed {meta['seed']}. "
            f"{modes.get('available_now', 0)} trials as a scheduled `available_now` sync, "
            f"{modes.get('processing_time', 0)} as a `processing_time` stream (1 s micro-batches); {twice} of them "
            f"killed twice. An undisturbed `available_now` run of a fresh stream takes "
            f"{meta['baseline_seconds']:.1f} s. " + PAIRS[name].reading.format(rows=f"{meta['rows']:,}"))
