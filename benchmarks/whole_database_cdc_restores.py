"""Restores of a whole-database CDC stream: SIGKILL a Postgres-CDC or MySQL-CDC stream of N tables (one capture
for all of them) while changes arrive, restore it, and check that every table holds each row exactly once.

The stream is :mod:`whole_database_cdc`'s job (``processing_time``), but into Jdbc PostgreSQL with plain INSERTs
(no ``primary_keys``) and an insert-only change load: a micro-batch applied twice shows its rows twice, one
skipped shows none. Per trial, on fresh source tables (``--rows`` each), a fresh target database and a fresh
checkpoint:

1. attempt 1 starts; a writer thread inserts ``--rate`` rows a second spread over all tables, each its own
   transaction; attempt 1's whole process tree is SIGKILLed at a random moment, alternating: **snapshot**, 0 to
   ``--snapshot-window`` s after its start (the slot or consistent snapshot taken, the snapshot being written
   or its first micro-batch being committed); **stream**, 0 to ``--stream-window`` s after its first
   micro-batch was logged (change micro-batches being written and committed);
2. the writer goes on for ``--after`` s, then stops;
3. the restore: the same command on the same checkpoint; once every target table equals its source (count and
   ordered checksum), it is stopped (SIGTERM to its driver, as ``SeaTunnelOperator.on_kill`` stops a stream:
   :func:`whole_database_cdc.stop`), and the seconds until the command exited and its exit code recorded
   (0: stopped cleanly; SIGKILLed, -9, after 180 s);
4. recorded: whether every table was equal, how many showed doubled or missing rows, the readers seen (the
   most replication slots of the source database at once), and the seconds each phase took.

Results: benchmarks/results/whole_database_cdc_restores.json (appended) and .md (rendered from all).

    python benchmarks/whole_database_cdc_restores.py [--source postgres|mariadb] [--tables 50] [--trials 4]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import whole_database as wd  # noqa: E402
import whole_database_cdc as wc  # noqa: E402


def config(source: Any, target: wd.Target, tables: list[str], checkpoint: Path, interval_ms: int) -> str:
    """The stream into keyless targets (plain INSERTs)."""
    text = wc.config(source, target, tables, checkpoint, interval_ms)
    return text.replace(wd.sink_block(target), wd.sink_block(target, keyed=False))


def inserter(source: Any, tables: list[str], rows: int, rate: float, stop: threading.Event,
             rng: random.Random) -> list[int]:
    """Insert new rows (ids above ``rows``) at ``rate`` a second over ``tables`` until ``stop``; the count is
    kept in the returned list's first item as it goes."""
    done = [0]

    def run() -> None:
        with source.connect() as conn:
            due, n = time.monotonic(), 0
            while not stop.is_set():
                n += 1
                change = wc.Change(rng.choice(tables), "insert", rows + n, f"ins-{n}")
                with contextlib.suppress(Exception):
                    wc.apply(source, conn, change)
                    done[0] += 1
                due += 1.0 / rate
                time.sleep(max(0.0, due - time.monotonic()))

    threading.Thread(target=run, daemon=True).start()
    return done


def kill_tree(proc: Any) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(60)


def first_batch_at(w: wc.Watch) -> float | None:
    return next((at for at, line in w.lines if wc.BATCH_LINE.search(line)), None)


def trial(n: int, kind: str, rng: random.Random, args: argparse.Namespace, source: Any, target: wd.Target,
          tables: list[str]) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"whole-cdc-restore-{n}-"))
    wc.prepare(source, tables)
    target.fresh()
    conf = work / "job.conf"
    conf.write_text(config(source, target, tables, work / "checkpoints", args.interval_ms))
    load = os.getloadavg()[0]
    delay = rng.uniform(0, args.snapshot_window if kind == "snapshot" else args.stream_window)
    stop_writer = threading.Event()
    w1 = wc.Watch()
    t0 = time.monotonic()
    proc = wc.start("ours", conf, work, None, w1)
    threading.Thread(target=wc.sample, args=(proc, source, w1), daemon=True).start()
    inserted = inserter(source, tables, args.rows, args.rate, stop_writer, rng)
    killed_at = None
    while proc.poll() is None and time.monotonic() - t0 < args.limit:
        base = 0.0 if kind == "snapshot" else first_batch_at(w1)
        if base is not None and time.monotonic() - t0 >= base + delay:
            killed_at = round(time.monotonic() - t0, 1)
            kill_tree(proc)
            break
        time.sleep(0.1)
    batches_before_kill = sum(1 for _, line in w1.lines if wc.BATCH_LINE.search(line))
    w1.stop.set()
    if killed_at is None:
        kill_tree(proc)
    time.sleep(args.after)
    stop_writer.set()
    time.sleep(1.0)
    w2 = wc.Watch()
    t1 = time.monotonic()
    restore = wc.start("ours", conf, work, None, w2)
    threading.Thread(target=wc.sample, args=(restore, source, w2), daemon=True).start()
    equal = wc.wait_equal(source, target, tables, restore, args.limit)
    restore_s = round(time.monotonic() - t1, 1)
    w2.stop.set()
    stop_s = wc.stop("ours", restore)
    expected, got = source.checksums(tables), target.checksums(tables)
    wrong = sorted(t for t in tables if got[t] != expected[t])
    doubled = sorted(t for t in wrong if got[t] is not None and expected[t] is not None and got[t][0] > expected[t][0])
    missing = sorted(t for t in wrong if got[t] is None or (expected[t] is not None and got[t][0] < expected[t][0]))
    out = {"trial": n, "source": args.source, "tables": len(tables), "kind": kind, "delay_s": round(delay, 1),
           "killed_at_s": killed_at, "batches_logged_before_kill": batches_before_kill, "inserted": inserted[0],
           "restore_s": restore_s, "restore_exit": restore.returncode, "stop_s": stop_s,
           "tables_equal": len(tables) - len(wrong),
           "tables_doubled": len(doubled), "tables_missing": len(missing),
           "slots_max": max(w1.slots_max, w2.slots_max), "dumps_max": max(w1.dumps_max, w2.dumps_max),
           "exactly_once": equal and not wrong,
           "load_before": round(load, 2), "unequal": wrong[:5], "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    wd.tidy(work, out["exactly_once"])
    if not out["exactly_once"]:
        out["log_tail"] = "\n".join(line for _, line in w2.lines[-30:])[-2500:]
    print(json.dumps({k: v for k, v in out.items() if k != "log_tail"}), flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=("postgres", "mariadb"), default="postgres")
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--rate", type=float, default=10.0, help="rows inserted per second while attempt 1 runs")
    ap.add_argument("--interval-ms", type=int, default=2000)
    ap.add_argument("--snapshot-window", type=float, default=60.0)
    ap.add_argument("--stream-window", type=float, default=30.0)
    ap.add_argument("--after", type=float, default=5.0, help="seconds the writer goes on after the kill")
    ap.add_argument("--limit", type=float, default=900.0, help="seconds a phase may take at most")
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rng = random.Random(args.seed)
    tables = [f"r{i:04d}" for i in range(1, args.tables + 1)]
    wd.ROWS = args.rows
    source, target, servers = wd.start_servers(args.source)
    trials: list[dict[str, Any]] = []
    try:
        for n in range(1, args.trials + 1):
            trials.append(trial(n, ("snapshot", "stream")[(n - 1) % 2], rng, args, source, target, tables))
    finally:
        for server in servers:
            server.stop()
        wd.append_results("whole_database_cdc_restores", trials, report)
    return 0 if all(t["exactly_once"] for t in trials) else 1


def _readers(t: dict[str, Any]) -> Any:
    if t["source"] == "mariadb":
        return t.get("dumps_max", "-")
    return t["slots_max"]


def report(kept: list[dict[str, Any]]) -> str:
    lines = ["# Restores of a whole-database CDC stream: SIGKILLed, then restored", "",
             "Generated by `python benchmarks/whole_database_cdc_restores.py` (see its docstring): N tables, one "
             "capture (one slot / binlog reader), inserts arriving while attempt 1 runs, Jdbc PostgreSQL with plain "
             "INSERTs (a micro-batch applied twice shows its rows twice). Exactly once: every table equal to its "
             "source (count and ordered checksum) after the restore. Readers at once: the most replication slots "
             "(PostgreSQL) or binlog dump connections (MariaDB; not recorded before stop s was) seen at once. "
             "Stop s and exit: the restore stopped by SIGTERM to its driver, seconds until the command exited and "
             "its exit code (0 stopped cleanly; -9 SIGKILLed after 180 s; before stop s was recorded the stop "
             "also signalled spark-submit's JVM, exit 1, or, a zombie in the process tree, nothing, -9).", "",
             f"Trials: {len(kept)}, exactly once: {sum(t['exactly_once'] for t in kept)}.", "",
             "| # | source | tables | kill in | killed at s | batches before | rows inserted | restore s | equal "
             "| doubled | missing | readers at once | exactly once | stop s | exit | load | at |",
             "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    for t in kept:
        lines.append(f"| {t['trial']} | {t['source']} | {t['tables']} | {t['kind']} | {t['killed_at_s']} "
                     f"| {t['batches_logged_before_kill']} | {t['inserted']} | {t['restore_s']} | {t['tables_equal']} "
                     f"| {t['tables_doubled']} | {t['tables_missing']} | {_readers(t)} "
                     f"| {'yes' if t['exactly_once'] else 'NO'} | {t.get('stop_s', '-')} "
                     f"| {t.get('restore_exit', '-')} "
                     f"| {t['load_before']} | {t['at']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
