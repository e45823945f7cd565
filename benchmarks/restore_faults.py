"""Restores are exactly-once: crash a run, restore it with the same run id, compare the sinks with the expected rows.

Per sink type (:data:`SINK_TYPES`: ``LocalFile``, ``Jdbc``, ``Jdbc MySQL``, ``Jdbc upsert``, ``Redis``, and the
store types of :mod:`store_targets`: ``S3File``, ``FtpFile``, ``SftpFile``, ``HdfsFile``; ``Hive``:
:mod:`hive_targets`; ``Kafka``: :mod:`kafka_targets`; ``Delta``: :mod:`delta_targets`; ``Iceberg``:
:mod:`iceberg_targets`; ``Paimon``, ``Paimon on HDFS``: :mod:`paimon_targets`; ``MongoDB``: :mod:`mongodb_targets`;
``Elasticsearch``: :mod:`elasticsearch_targets`; ``Hbase``: :mod:`hbase_targets`; ``InfluxDB``:
:mod:`influxdb_targets`; ``Clickhouse`` (against its chDB stand-in): :mod:`clickhouse_targets`; ``Doris``:
:mod:`doris_targets`, ``StarRocks`` and ``SelectDBCloud``:
:mod:`starrocks_targets`, against the Stream Load stand-in; ``RabbitMQ`` (at least once): :mod:`rabbitmq_targets`;
``ActiveMQ``: :mod:`activemq_targets`; ``Rocketmq`` and ``Rocketmq source`` (at least once):
:mod:`rocketmq_targets`; ``Pulsar`` (at least once): :mod:`pulsar_targets`;
``Cassandra`` (at least once, idempotent replays): :mod:`cassandra_targets`;
``Http``, ``Email``: :mod:`delivery_targets`), one pipeline with two sinks of that type, and two kinds of trial,
each on fresh targets that already hold rows of an earlier run:

* **kill**: ``seatunnel-airflow run`` in a subprocess, and SIGKILL of its spark-submit process
  (the driver's JVM; the Python driver dies with it; for the Connect-mode types of connect_targets.py,
  of the command line itself, or the Spark Connect server killed and restarted) from outside at a random moment: a
  third of the trials anywhere in the run, a third during the writes (a random delay after
  the first sink starts writing, within the baseline run's sink phase), a third around the
  commit phase (0-150 ms after the last sink reported its data prepared).
* **fault**: ``SEATUNNEL_FAULTS`` with a random point of the sink type, action (raise or kill)
  and offset (rows of a write task, files of a commit, sinks).

Then the restore: the same command with the same ``--run-id`` and ``--attempt 2``, no faults.
A third kind, **overlap** (:mod:`overlap`), runs attempts 1 and 2 of one run id at the same time.
Per trial: where attempt 1 stopped, what a reader saw after it (each sink must show either
nothing new or everything), the restore's exit code, and the rows lost and duplicated
(multisets over the full rows, per sink). Sinks whose store takes no part in a commit (Http, EmailSink) are
at least once (:attr:`SinkType.guarantee`): their trials pass when the restore succeeds and no row is lost, and
the duplicates are recorded; they run no overlap trials.

The Jdbc types write tables of a private PostgreSQL server (``tests/pg.py``) read back with
``psql``: ``Jdbc`` plain INSERTs into tables without a key, ``Jdbc upsert`` with
``primary_keys = ["id"]`` into tables keyed by ``id`` that also hold a stale version of one
input row (the restore must leave each id once, with the input's values).

``Kafka source`` turns the job around: the input rows are records of a Kafka topic, read by a
STREAMING job (``available_now``) into the two LocalFile sinks; the restore resumes attempt 1's
checkpoint (:data:`SinkType`'s ``source``; its progress events are queries and micro-batches).
``RabbitMQ source`` does the same in BATCH: the rows are JSON messages of a RabbitMQ queue, filled again before
each trial (:mod:`rabbitmq_targets`), acknowledged only after both LocalFile sinks committed; ``Pulsar source``
likewise from a Pulsar topic's subscription (:mod:`pulsar_targets`).

The stream pairs of :mod:`stream_trials` (``Postgres-CDC → Jdbc upsert``, ``MySQL-CDC → Jdbc upsert``,
``MySQL-CDC → Kafka debezium_json``, ``Kafka → LocalFile``) run ``--kill-trials`` trials each: a new stream
per trial whose source changes while SIGKILLs hit it, as an ``available_now`` sync or a
``processing_time`` stream, the target compared with the source at the end.

    python benchmarks/restore_faults.py [--sink TYPE ...] [--kill-trials 20] [--fault-trials 20]
                                        [--overlap-trials 20] [--seed 7] [--rows N]

Each run of a type replaces that type's entry in benchmarks/results/restore_faults.json (all
types by default; the kinds of trial given a count of 0 keep their recorded trials);
benchmarks/results/restore_faults.md is rendered from every type recorded there.

The harness (running the command line, killing it, scoring a trial: ``run_cli``, ``Trial``, ``score``…) is
:mod:`restore_harness`, importable from here too; the report's rendering is :mod:`restore_report`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import activemq_targets  # noqa: E402
import basic_targets  # noqa: E402
import cassandra_targets  # noqa: E402
import clickhouse_targets  # noqa: E402
import connect_targets  # noqa: E402
import delivery_targets  # noqa: E402
import delta_targets  # noqa: E402
import doris_targets  # noqa: E402
import elasticsearch_targets  # noqa: E402
import hbase_targets  # noqa: E402
import hive_targets  # noqa: E402
import iceberg_targets  # noqa: E402
import influxdb_targets  # noqa: E402
import kafka_targets  # noqa: E402
import mongodb_targets  # noqa: E402
import overlap  # noqa: E402
import paimon_targets  # noqa: E402
import pulsar_targets  # noqa: E402
import rabbitmq_targets  # noqa: E402
import restore_report  # noqa: E402
import rocketmq_targets  # noqa: E402
import starrocks_targets  # noqa: E402
import store_targets  # noqa: E402
import stream_trials  # noqa: E402
from basic_targets import (  # noqa: E402
    JDBC_READING,
    LOCALFILE_READING,
    MYSQL_READING,
    REDIS_READING,
    Resources,
    Row,
    Sink,
    jdbc_sinks,
    localfile_sinks,
    mysql_sinks,
    redis_sinks,
)
from restore_harness import (  # noqa: E402  (the harness's names stay importable from here)
    Run,
    Trial,
    _children,
    _difference,
    _drivers_of,
    _sample,
    _state,
    _stopped,
    run_cli,
    score,
)

_postgres, _mysql = basic_targets._postgres, basic_targets._mysql

#: short-lived drivers: C1 only and a serial GC halve the CPU a spark-submit costs on 2 cores
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
POINTS = ("sink.write", "sink.prepared", "sink.move", "sink.commit", "pipeline.committed")
#: the Jdbc sink has no file moves: its commit is one database transaction
JDBC_POINTS = ("sink.write", "sink.prepared", "sink.commit", "pipeline.committed")


# ------------------------------------------------------------------------------------------------
# sink types
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SinkType:
    """A kind of target: its sinks, its fault points, and how the report describes it."""

    build: Callable[[Path, int, contextlib.ExitStack], list[Sink]]
    points: tuple[str, ...]
    rows: int  # default --rows
    raw_label: str
    reading: str  # what "visible" and the raw count mean
    moves: int | None = None  # sink.move occurrences per run, when not the first sink's raw count
    #: a job reading something else than the CSV files: ``(work, expected rows, resources)`` -> (env settings,
    #: source block writing the dataset "rows"); then the progress events that mark the first write and the
    #: last sink's data staged (a STREAMING job reports queries and micro-batches)
    source: Callable[[Path, list[Row], contextlib.ExitStack], tuple[str, str]] | None = None
    writing: str = r": writing$"
    prepared: str = "prepared"
    #: Connect mode (connect_targets.py): what a SIGKILL trial kills, "client" (the command line) or "server"
    connect: str | None = None
    #: "exactly-once", or "at-least-once" for a store that takes no part in a commit (duplicates allowed, counted)
    guarantee: str = "exactly-once"


SINK_TYPES: dict[str, SinkType] = {
    "LocalFile": SinkType(localfile_sinks, POINTS, 20_000, "raw files", LOCALFILE_READING),
    "Jdbc": SinkType(jdbc_sinks, JDBC_POINTS, 5_000, "staging tables", JDBC_READING),
    "Jdbc MySQL": SinkType(mysql_sinks, JDBC_POINTS, 5_000, "staging tables", MYSQL_READING),
    "Jdbc upsert": SinkType(lambda work, rows, res: jdbc_sinks(work, rows, res, upsert=True), JDBC_POINTS, 5_000,
                            "staging tables", JDBC_READING + " The upsert targets also hold a stale row with id 0, "
                            "which the input replaces: the expected table is the earlier row (id -1) plus the "
                            "input, each id once with the input's values."),
    "Redis": SinkType(redis_sinks, POINTS, 5_000, "staging lists", REDIS_READING),
    "Elasticsearch": SinkType(lambda work, rows, res: elasticsearch_targets.elasticsearch_sinks(rows, res, Sink),
                              POINTS, 5_000, "staging indices", elasticsearch_targets.READING,
                              moves=elasticsearch_targets.MOVES),
    "Doris": SinkType(lambda work, rows, res: doris_targets.doris_sinks(rows, res, Sink), POINTS, 5_000,
                      "prepared transactions", doris_targets.READING, moves=doris_targets.MOVES),
    "StarRocks": SinkType(lambda work, rows, res: starrocks_targets.starrocks_sinks(rows, res, Sink), POINTS, 5_000,
                          "open transactions", starrocks_targets.READING, moves=starrocks_targets.MOVES),
    "SelectDBCloud": SinkType(lambda work, rows, res: starrocks_targets.selectdb_sinks(rows, res, Sink), POINTS,
                              5_000, "staged files", starrocks_targets.SELECTDB_READING,
                              moves=starrocks_targets.MOVES),
    "Hbase": SinkType(lambda work, rows, res: hbase_targets.hbase_sinks(rows, res, Sink), POINTS, 2_000,
                      "staging rows", hbase_targets.READING, moves=hbase_targets.MOVES),
    "MongoDB": SinkType(lambda work, rows, res: mongodb_targets.mongodb_sinks(rows, res, Sink), POINTS, 5_000,
                        "staging collections", mongodb_targets.READING),
    "InfluxDB": SinkType(lambda work, rows, res: influxdb_targets.influxdb_sinks(rows, res, Sink), POINTS, 5_000,
                         "staged points", influxdb_targets.READING, moves=influxdb_targets.MOVES),
    "Clickhouse": SinkType(lambda work, rows, res: clickhouse_targets.clickhouse_sinks(rows, res, Sink), POINTS, 5_000,
                           "staging rows", clickhouse_targets.READING, moves=clickhouse_targets.MOVES),
    "RabbitMQ": SinkType(lambda work, rows, res: rabbitmq_targets.rabbitmq_sinks(rows, res, Sink),
                         rabbitmq_targets.POINTS, 2_000, "raw messages", rabbitmq_targets.READING,
                         guarantee="at-least-once"),
    "Cassandra": SinkType(lambda work, rows, res: cassandra_targets.cassandra_sinks(rows, res, Sink),
                          cassandra_targets.POINTS, 2_000, "commit records", cassandra_targets.READING,
                          guarantee="at-least-once"),
    "ActiveMQ": SinkType(lambda work, rows, res: activemq_targets.activemq_sinks(rows, res, Sink), POINTS, 2_000,
                         "raw messages", activemq_targets.READING),
    "RabbitMQ source": SinkType(
        lambda work, rows, res: rabbitmq_targets.fresh_queue(make_input(work / "input", rows), res,
                                                             localfile_sinks(work, rows, res)),
        POINTS, 500, "raw files / messages left in the queue", rabbitmq_targets.SOURCE_READING,
        source=rabbitmq_targets.rabbitmq_source, guarantee="at-least-once"),
    "Rocketmq": SinkType(lambda work, rows, res: rocketmq_targets.rocketmq_sinks(rows, res, Sink),
                         rocketmq_targets.POINTS, 2_000, "raw messages", rocketmq_targets.READING,
                         guarantee="at-least-once"),
    "Rocketmq source": SinkType(
        lambda work, rows, res: rocketmq_targets.fresh_topic(make_input(work / "input", rows), res,
                                                             localfile_sinks(work, rows, res)),
        POINTS, 500, "raw files / messages the group has not committed", rocketmq_targets.SOURCE_READING,
        source=rocketmq_targets.rocketmq_source, guarantee="at-least-once"),
    "Pulsar": SinkType(lambda work, rows, res: pulsar_targets.pulsar_sinks(rows, res, Sink), pulsar_targets.POINTS,
                       2_000, "raw messages", pulsar_targets.READING, guarantee="at-least-once"),
    "Pulsar source": SinkType(
        lambda work, rows, res: pulsar_targets.fresh_topic(make_input(work / "input", rows), res,
                                                           localfile_sinks(work, rows, res)),
        POINTS, 500, "raw files / messages left unacknowledged", pulsar_targets.SOURCE_READING,
        source=pulsar_targets.pulsar_source, guarantee="at-least-once"),
    "Http": SinkType(lambda work, rows, res: delivery_targets.http_sinks(rows, res, Sink), POINTS, 1_000, "requests",
                     delivery_targets.HTTP_READING, moves=1, guarantee="at-least-once"),
    "Email": SinkType(lambda work, rows, res: delivery_targets.email_sinks(rows, res, Sink), POINTS, 1_000, "mails",
                      delivery_targets.EMAIL_READING, moves=1, guarantee="at-least-once"),
    **{plugin: SinkType(lambda work, rows, res, plugin=plugin: store_targets.store_sinks(plugin, rows, res, Sink),
                        POINTS, 5_000, "raw files", store_targets.READING)
       for plugin in ("S3File", "FtpFile", "SftpFile", "HdfsFile")},
    "Hive": SinkType(lambda work, rows, res: hive_targets.hive_sinks(rows, res, Sink), POINTS, 5_000, "raw files",
                     hive_targets.READING),
    "Kafka": SinkType(lambda work, rows, res: kafka_targets.kafka_sinks(rows, res, Sink), POINTS, 5_000,
                      "raw records", kafka_targets.READING, moves=kafka_targets.MOVES),
    "Delta": SinkType(lambda work, rows, res: delta_targets.delta_sinks(work, rows, res, Sink), POINTS, 5_000,
                      "raw files", delta_targets.READING, moves=delta_targets.MOVES),
    "Iceberg": SinkType(lambda work, rows, res: iceberg_targets.iceberg_sinks(work, rows, res, Sink), POINTS, 5_000,
                        "staging branches", iceberg_targets.READING, moves=iceberg_targets.MOVES),
    "Paimon": SinkType(lambda work, rows, res: paimon_targets.paimon_sinks(work, rows, res, Sink), POINTS, 5_000,
                       "raw files", paimon_targets.READING, moves=paimon_targets.MOVES),
    "Paimon on HDFS": SinkType(lambda work, rows, res: paimon_targets.paimon_sinks(work, rows, res, Sink, hdfs=True),
                               POINTS, 5_000, "raw files", paimon_targets.HDFS_READING, moves=paimon_targets.MOVES),
    **{f"LocalFile on Spark Connect, {crash} killed": SinkType(
        localfile_sinks, POINTS, 5_000, "raw files", connect_targets.READING, connect=crash)
       for crash in ("client", "server")},
    **{f"Jdbc on Spark Connect, {crash} killed": SinkType(
        jdbc_sinks, JDBC_POINTS, 5_000, "staging tables", JDBC_READING + connect_targets.JDBC_READING, connect=crash)
       for crash in ("client", "server")},
    "Kafka source": SinkType(lambda work, rows, res: kafka_targets.fresh_stream(work, localfile_sinks(work, rows, res)),
                             kafka_targets.STREAM_POINTS, 5_000, "raw files", kafka_targets.SOURCE_READING,
                             source=kafka_targets.kafka_source, writing="query started", prepared=": micro-batch"),
}


# ------------------------------------------------------------------------------------------------
# the job
# ------------------------------------------------------------------------------------------------

def make_input(folder: Path, rows: int, files: int = 4) -> list[Row]:
    folder.mkdir(parents=True, exist_ok=True)
    expected = []
    for f in range(files):
        lines = []
        for i in range(f, rows, files):
            row = (i, f"name-{i}", f"g{i % 5}")
            expected.append(row)
            lines.append(",".join(map(str, row)))
        (folder / f"part-{f}.csv").write_text("\n".join(lines) + "\n")
    return expected


def job_text(source: Path, sinks: list[Sink], other: tuple[str, str] | None = None) -> str:
    """The CSV files of ``source`` → ``sinks``; ``other``: (env settings, source block) instead of the CSV files."""
    blocks = "\n  ".join(s.block for s in sinks)
    env, block = other or ("", f"""LocalFile {{
    plugin_output = "rows", path = "{source}", file_format_type = "csv"
    schema = {{ fields {{ id = bigint, name = string, grp = string }} }}
  }}""")
    return f"""
env {{ job.name = "restore_faults", parallelism = 2, spark.ui.enabled = false,
       spark.driver.extraJavaOptions = "{QUICK_JVM}"{", " + env if env else ""} }}
source {{
  {block}
}}
sink {{
  {blocks}
}}
"""




# ------------------------------------------------------------------------------------------------
# trials
# ------------------------------------------------------------------------------------------------

def trial(n: int, run_id: str, kind: str, what: str, conf: Path, work: Path, sinks: list[Sink],
          expected: list[Row], faults: str | None = None, kill: Callable | None = None,
          connect: tuple[connect_targets.Server, str] | None = None) -> Trial:
    t = Trial(n, kind, what)
    for s in sinks:
        s.seed()
    t0 = time.monotonic()
    first = run_cli(conf, work, run_id, 1, faults=faults, kill=kill, connect=connect)
    t.first_code = first.code
    t.stopped = _stopped(first)
    if first.killed_at is not None:
        t.what += f" at {first.killed_at:.1f}s"
    orphans = _drivers_of(run_id)
    t.orphans = len(orphans)
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    t.after_first = [_state(s.read(), s, expected) for s in sinks]
    t.raw_after_first = [s.raw() for s in sinks if s.raw]
    restore = run_cli(conf, work, run_id, 2, connect=connect)
    t.restore_code = restore.code
    score(t, sinks, expected)
    t.raw_after_restore = [s.raw() for s in sinks if s.raw]
    t.seconds = time.monotonic() - t0
    if restore.code != 0:
        print(restore.stdout[-2000:], restore.stderr[-2000:], file=sys.stderr)
    return t


def kill_moment(i: int, rng: random.Random, base: Run, writing: float, sinks: list[Sink],
                marks: tuple[str, str] = (r": writing$", "prepared")) -> tuple[str, Callable]:
    """Trial ``i``'s SIGKILL: (description, ``kill(events, elapsed)``); ``marks``: the events of the first
    write (a regular expression) and of a sink's data staged (:class:`SinkType`'s ``writing``, ``prepared``)."""
    if i % 3 == 0:  # anywhere in the run
        at = rng.uniform(0.5, base.seconds)

        def kill(events, elapsed, at=at):
            return elapsed >= at
        return "SIGKILL spark-submit, anywhere", kill
    if i % 3 == 1:  # during the writes: a delay after the first "writing" event
        delay = rng.uniform(0.0, max(0.5, base.seconds - writing))

        def kill(events, elapsed, delay=delay):
            start = next((t for t, e in events if re.search(marks[0], e)), None)
            return start is not None and elapsed >= start + delay
        return f"SIGKILL spark-submit, {delay:.2f}s after writing starts", kill
    delay = rng.uniform(0.0, 0.15)  # around the commit phase: a short delay after the last sink reported "prepared"

    def kill(events, elapsed, delay=delay):
        done = [t for t, e in events if f"sink[{len(sinks) - 1}]" in e and marks[1] in e]
        return bool(done) and elapsed >= done[0] + delay
    return f"SIGKILL spark-submit, {delay * 1000:.0f}ms after the last sink prepared", kill


def run_type(name: str, args: argparse.Namespace, resources: Resources) -> dict[str, Any]:
    """Every trial of one sink type; the type's entry of the results file."""
    kind = SINK_TYPES[name]
    rows = args.rows or kind.rows
    rng = random.Random(f"{args.seed}:{name}")  # each type its own schedule of moments and faults
    slug = re.sub(r"\W+", "-", name.lower())
    started = datetime.now(UTC)
    work = Path(tempfile.mkdtemp(prefix=f"restore-faults-{slug}-"))
    try:
        expected = make_input(work / "input", rows)
        sinks = kind.build(work, rows, resources)
        conf = work / "job.conf"
        other = kind.source(work, expected, resources) if kind.source else None
        conf.write_text(job_text(work / "input", sinks, other))

        # baseline: an undisturbed run, for the moments to kill at
        for s in sinks:
            s.seed()
        connect = (connect_targets.server(resources), kind.connect) if kind.connect else None
        if connect:  # the server's first runs are slow (its JIT is cold): the baseline is a warm run
            run_cli(conf, work, f"{slug}-warmup", 1, connect=connect)
            for s in sinks:
                s.seed()
        base = run_cli(conf, work, f"{slug}-baseline", 1, connect=connect)
        assert base.code == 0, base.stdout + base.stderr
        for s in sinks:
            lost, extra = _difference(s.read(), s.final(expected))
            assert not lost and not extra, f"{s.name}: the baseline run lost {lost} and added {extra}"
        writing = next(t for t, e in base.events if re.search(kind.writing, e))
        print(f"{name} baseline: {base.seconds:.1f}s, first sink writes at {writing:.1f}s", file=sys.stderr)
        files = kind.moves or (max(1, sinks[0].raw() - 1) if sinks[0].raw else 1)

        trials: list[Trial] = []

        def record(t: Trial) -> None:
            trials.append(t)
            print(f"{name} {t.n:3d} {t.what}: {t.stopped} -> {t.after_first} restore {t.restore_code} "
                  f"lost {t.lost} dup {t.duplicated}" + "".join(f"\n    {d}" for d in t.details), file=sys.stderr)

        for i in range(args.kill_trials):
            what, kill = kill_moment(i, rng, base, writing, sinks, (kind.writing, kind.prepared))
            if kind.connect:
                what = what.replace("SIGKILL spark-submit", {"client": "SIGKILL of the client process",
                                                             "server": "Spark Connect server killed and restarted"}
                                    [kind.connect])
            n = len(trials) + 1
            record(trial(n, f"{slug}-trial{n:03d}", "kill", what, conf, work, sinks, expected, kill=kill,
                         connect=connect))
        for _ in range(args.fault_trials):
            point, action = rng.choice(kind.points), rng.choice(("raise", "kill"))
            count = {"sink.write": rng.randrange(0, rows // 4), "sink.move": rng.randrange(0, files),
                     "sink.prepared": rng.randrange(0, len(sinks)), "sink.commit": rng.randrange(0, len(sinks)),
                     "pipeline.committed": 0, "batch.committed": 0}[point]
            spec = f"{point}={action}" + (f"+{count}" if count else "")
            n = len(trials) + 1
            record(trial(n, f"{slug}-trial{n:03d}", "fault", spec, conf, work, sinks, expected, faults=spec,
                         connect=connect))
        harness = {"Trial": Trial, "run_cli": run_cli, "state": _state, "score": score,
                   "sinks": sinks, "expected": expected, "conf": conf, "work": work, "base": base,
                   "children": _children, "drivers_of": _drivers_of, "sink_type": name, "resources": resources}
        modes = overlap.modes_for(name)
        overlaps = args.overlap_trials if not kind.connect and kind.guarantee == "exactly-once" else 0
        for i in range(overlaps):  # overlap trials drive spark-submit
            n = len(trials) + 1
            record(overlap.overlap_trial(n, f"{slug}-overlap{n:03d}", modes[i % len(modes)], rng,
                                         harness))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"generated": f"{started:%Y-%m-%d %H:%M}", "seed": args.seed, "rows": rows, "cpus": os.cpu_count(),
            "python": sys.version.split()[0], "sinks": [s.name for s in sinks], "points": list(kind.points),
            "baseline_seconds": round(base.seconds, 1), "writing_at": round(writing, 1),
            "trials": [{**t.__dict__, "seconds": round(t.seconds, 1), "guarantee": kind.guarantee} for t in trials]}


def run_pair(name: str, args: argparse.Namespace, resources: Resources) -> dict[str, Any]:
    """The kill trials of one stream pair (:mod:`stream_trials`); the pair's entry of the results file."""
    work = Path(tempfile.mkdtemp(prefix="restore-streams-"))
    harness = {"Trial": Trial, "run_cli": run_cli, "stopped": _stopped, "drivers_of": _drivers_of,
               "difference": _difference, "sample": _sample, "work": work, "resources": resources,
               "postgres": _postgres, "mysql": _mysql, "localfile_sinks": localfile_sinks}
    try:
        return stream_trials.run_pair(name, args.kill_trials, args.seed, args.rows, harness)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sink", action="append", choices=[*SINK_TYPES, *stream_trials.PAIRS],
                    help="sink type or stream pair to run (repeatable; default: every one)")
    ap.add_argument("--kill-trials", type=int, default=20)
    ap.add_argument("--fault-trials", type=int, default=20)
    ap.add_argument("--overlap-trials", type=int, default=20,
                    help="two attempts of one run id at once (benchmarks/overlap.py)")
    ap.add_argument("--rows", type=int, default=None, help="input rows (default per type: "
                    + ", ".join(f"{k} {v.rows:,}" for k, v in SINK_TYPES.items()) + ")")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(HERE / "results" / "restore_faults.md"))
    args = ap.parse_args()
    data_file = Path(args.out).with_suffix(".json")
    recorded = json.loads(data_file.read_text()) if data_file.exists() else {}
    ok = True
    with Resources() as resources:
        for name in args.sink or [*SINK_TYPES, *stream_trials.PAIRS]:
            entry = (run_type(name, args, resources) if name in SINK_TYPES
                     else run_pair(name, args, resources))
            ran = {k for k, count in (("kill", args.kill_trials), ("fault", args.fault_trials),
                                      ("overlap", args.overlap_trials)) if count}
            ok = ok and all(Trial(**{**t, "seconds": 0}).ok for t in entry["trials"])
            kept = [t for t in recorded.get(name, {}).get("trials", []) if t["kind"] not in ran]
            if kept:  # the kinds of trial not rerun stay as recorded (renumbered after the new ones)
                entry["trials"] += [{**t, "n": len(entry["trials"]) + i + 1} for i, t in enumerate(kept)]
            recorded[name] = entry
            data_file.parent.mkdir(parents=True, exist_ok=True)
            data_file.write_text(json.dumps(recorded, indent=1) + "\n")
            Path(args.out).write_text(render(recorded))
            print(f"wrote {args.out} ({name})", file=sys.stderr)
    return 0 if ok else 1


def render(recorded: dict[str, Any]) -> str:
    """The Markdown report of ``recorded`` (:func:`restore_report.render` over :data:`SINK_TYPES`)."""
    return restore_report.render(recorded, SINK_TYPES)


if __name__ == "__main__":
    sys.exit(main())
