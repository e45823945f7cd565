"""Restores at scale: SIGKILL a whole-database copy (:mod:`whole_database`'s job, N tables, Jdbc ``table_list``
→ Jdbc PostgreSQL ``public.${table_name}``), restore it, and check that every table is there exactly once.

The sink writes plain INSERTs (no ``primary_keys``), so a table committed twice shows its rows twice (or its
restore fails on the created key), and one skipped shows none. Per trial, on a fresh target database:

1. attempt 1 of a run id (``seatunnel-airflow run --run-id R --attempt 1``) is SIGKILLed (its spark-submit
   process, the driver's JVM; the Python driver dies with it: :func:`restore_faults.run_cli`), alternating:

   * **writes**, while the tables are staged (several at once): 0-5 s after the writes began, or after the
     first or second per-table progress line of the writes (every 10 s, before the sink reports its rows
     prepared; a quiet machine stages 200 tables before the first, so there only the first kind lands), at
     the latest ``--write-window`` seconds after the writes began;
   * **commit**, inside the open commit transaction of the database's tables, once it has moved a random
     number (1 to N) of them: after the sink reported its rows prepared, the benchmark watches the
     target's ``pg_locks`` and kills when one session holds the write locks of that many target tables
     (not committed yet: the moved tables roll back). Without that within ``--commit-wait`` seconds of
     the prepared line it kills then.

   Recorded: the phase at the kill (the last phase line before it) and the tables the open commit had moved;
2. the restore: the same command, ``--attempt 2``, must exit 0;
3. every target table is compared with its source (count and ordered checksum), and the commit log
   (``seatunnel_commits``) must hold exactly one row per table for the run id; recorded too: how many
   tables attempt 1 had committed (one transaction for the database: all or none).

Results: benchmarks/results/whole_database_restores.json (appended) and .md (rendered from all).

    python benchmarks/whole_database_restores.py [--tables 200] [--trials 5] [--write-window 240] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import restore_faults as rf  # noqa: E402
import whole_database as wd  # noqa: E402


def committed(target: wd.Target, run_id: str) -> int:
    """The commit-log rows of ``run_id`` (0 before the log exists)."""
    import psycopg

    s = target.server
    with psycopg.connect(host="127.0.0.1", port=s.port, dbname=wd.TARGET_DB, user=s.user, password=s.password,
                         autocommit=True) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM public.seatunnel_commits WHERE run_id = %s",
                                    (run_id,)).fetchone()[0])
        except psycopg.Error:
            return 0


#: the per-table progress line (every ``progress.interval``, 10 s): how many tables have rows written so far
_WRITTEN = re.compile(r"progress per table: (\d+) of (\d+) tables have rows written")


def write_killer(skip: int, jitter: float, window: float) -> Any:
    """When to SIGKILL a ``writes`` trial: ``jitter`` seconds after the "writing" line (``skip`` 0), or after
    the ``skip``-th per-table progress line of the writes (after the "writing" line, before the "prepared"
    one, some table still unwritten): the staging writes under way, whatever the load makes them last (on a
    quiet machine 200 tables are staged in about 6 s, before the first progress line: only ``skip`` 0 lands
    there). At the latest ``window`` seconds after the writes began."""

    def due(events: list[tuple[float, str]], elapsed: float) -> bool:
        began = next((t for t, line in events if ": writing" in line), None)
        if began is None:
            return False
        ended = next((t for t, line in events if ": prepared " in line), None)
        during = [t for t, line in events if (m := _WRITTEN.search(line)) and began <= t
                  and (ended is None or t < ended) and int(m.group(1)) < int(m.group(2))]
        anchors = [began, *during]
        at = anchors[skip] + jitter if len(anchors) > skip else began + window
        return elapsed >= min(at, began + window)

    return due


#: per session holding write locks on target tables (``t0001``…) in an open transaction: how many
_MOVING = ("SELECT l.pid, count(DISTINCT l.relation) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
           "WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
           "AND l.mode = 'RowExclusiveLock' AND l.granted AND c.relname ~ '^t[0-9]+$' GROUP BY l.pid")


class CommitKiller:
    """When to SIGKILL a ``commit`` trial: once the commit transaction (one session, the sink's, holding
    the write locks of the target tables it moved so far, until its COMMIT) has moved ``tables`` of
    them; polled every 0.02 s after the "prepared" progress line. ``moved``: the count seen last."""

    def __init__(self, target: wd.Target, tables: int, wait: float):
        self.target, self.tables, self.wait = target, tables, wait
        self.moved = 0
        self.conn: Any = None
        self.polled = 0.0

    def __call__(self, events: list[tuple[float, str]], elapsed: float) -> bool:
        at = next((t for t, line in events if ": prepared " in line), None)
        if at is None or elapsed - self.polled < 0.02:
            return False
        self.polled = elapsed
        self.moved = max(self.moved, self._moving())
        return self.moved >= self.tables or elapsed >= at + self.wait

    def _moving(self) -> int:
        import psycopg

        s = self.target.server
        try:
            if self.conn is None:
                self.conn = psycopg.connect(host="127.0.0.1", port=s.port, dbname=wd.TARGET_DB, user=s.user,
                                            password=s.password, autocommit=True)
            return max((int(n) for _, n in self.conn.execute(_MOVING).fetchall()), default=0)
        except psycopg.Error:
            return 0

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def phase_at(run: rf.Run) -> str | None:
    """The last phase line (not a per-table progress line) before the kill: the phase it landed in."""
    if run.killed_at is None:
        return None
    return next((line for t, line in reversed(run.events) if t <= run.killed_at and "progress" not in line),
                "(before any phase line)")


def trial(n: int, kind: str, rng: random.Random, args: argparse.Namespace, conf: Path, work: Path,
          target: wd.Target, expected: dict[str, Any], tables: list[str]) -> dict[str, Any]:
    target.fresh()
    run_id = f"wholedb-restore-{n:03d}-{time.time_ns()}"
    skip, jitter = rng.randint(0, 2), rng.uniform(0, 5.0)
    moved = rng.randint(1, len(tables))
    load = os.getloadavg()[0]
    commit_kill = CommitKiller(target, moved, args.commit_wait)
    kill = write_killer(skip, jitter, args.write_window) if kind == "writes" else commit_kill
    try:
        first = rf.run_cli(conf, work, run_id, 1, kill=kill)
    finally:
        commit_kill.close()
    for pid in rf._drivers_of(run_id):  # a Python driver that outlived its JVM
        os.kill(pid, signal.SIGKILL)
    after_first = committed(target, run_id)
    last = rf.run_cli(conf, work, run_id, 2)
    got = target.checksums(tables)
    wrong = sorted(t for t in tables if got[t] != expected[t])
    doubled = sorted(t for t in wrong if got[t] is not None and got[t][0] == 2 * expected[t][0])
    missing = sorted(t for t in wrong if got[t] is None or got[t][0] == 0)
    log_rows = committed(target, run_id)
    out = {"trial": n, "kind": kind}
    out.update({"progress_lines_skipped": skip, "jitter_s": round(jitter, 1)} if kind == "writes" else
               {"kill_after_moved": moved, "moved_in_open_commit": commit_kill.moved})
    out.update({"killed_at_s": None if first.killed_at is None else round(first.killed_at, 1),
                "phase_at_kill": phase_at(first),
           "first_exit": first.code, "committed_by_attempt_1": after_first, "restore_exit": last.code,
           "restore_s": round(last.seconds, 1), "tables": len(tables), "tables_equal": len(tables) - len(wrong),
           "tables_doubled": len(doubled), "tables_missing": len(missing), "commit_log_rows": log_rows,
           "exactly_once": not wrong and log_rows == len(tables) and last.code == 0, "load_before": round(load, 2),
           "unequal": wrong[:5], "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")})
    if last.code != 0:
        out["restore_tail"] = (last.stdout + last.stderr)[-2000:]
    print(json.dumps({k: v for k, v in out.items() if k != "restore_tail"}), flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--write-window", type=float, default=240.0,
                    help="a writes kill lands at the latest this many seconds after the writes began")
    ap.add_argument("--commit-wait", type=float, default=120.0,
                    help="seconds after the prepared line to wait for the commit to move tables before killing")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rng = random.Random(args.seed)
    tables = [f"t{i:04d}" for i in range(1, args.tables + 1)]
    work = Path(tempfile.mkdtemp(prefix="whole-db-restores-"))
    source, target, servers = wd.start_servers("postgres")
    trials: list[dict[str, Any]] = []
    try:
        source.create(tables)
        expected = source.checksums(tables)
        conf = work / "job.conf"
        conf.write_text(wd.config(source, target, tables, keyed=False))
        for n in range(1, args.trials + 1):
            trials.append(trial(n, ("writes", "commit")[(n - 1) % 2], rng, args, conf, work, target, expected,
                                tables))
    finally:
        for server in servers:
            server.stop()
        wd.append_results("whole_database_restores", trials, report)
    ok = all(t["exactly_once"] for t in trials)
    wd.tidy(work, ok)
    return 0 if ok else 1


def report(kept: list[dict[str, Any]]) -> str:
    lines = ["# Restores at scale: a whole-database copy SIGKILLed, then restored", "",
             "Generated by `python benchmarks/whole_database_restores.py` (see its docstring): N tables × 1,000 rows, "
             "Jdbc `table_list` → Jdbc PostgreSQL, plain INSERTs (a table committed twice shows its rows twice). "
             "Exactly once: every table equal to its source after the restore and one commit-log row per table.", "",
             f"Trials: {len(kept)}, exactly once: {sum(t['exactly_once'] for t in kept)}.", "",
             "Kill in *commit*: from seed 3801 on, the kill waits for the open commit transaction to have moved a "
             "random number of tables (seen in `pg_locks`); *moved* is the count seen just before the kill (those "
             "tables roll back with the transaction). Earlier commit kills were timed 0-10 s after the prepared "
             "line (moved: not recorded). Kill in *writes*: from seed 3821 on, 0-5 s after the 1st-3rd per-table "
             "progress line of the writes; seed 3811, after the progress line reporting a random number of "
             "tables written (high numbers came only after the writes: phase *prepared*); earlier, 0-240 s after "
             "the writes began (at a low load the run could end first: killed at *None*). *Phase*: the last "
             "phase line before the kill.", "",
             "| # | tables | kill in | killed at s | phase | moved | tables committed by attempt 1 | restore exit "
             "| restore s | equal | doubled | missing | log rows | exactly once | load | at |",
             "|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for t in kept:
        phase = (t.get("phase_at_kill") or "").split(": ", 1)[-1] or ("—" if "phase_at_kill" in t else "")
        moved = t.get("moved_in_open_commit", "")
        lines.append(f"| {t['trial']} | {t['tables']} | {t['kind']} | {t['killed_at_s']} | {phase} | {moved} "
                     f"| {t['committed_by_attempt_1']} | {t['restore_exit']} | {t['restore_s']} | {t['tables_equal']} "
                     f"| {t['tables_doubled']} | {t['tables_missing']} | {t['commit_log_rows']} "
                     f"| {'yes' if t['exactly_once'] else 'NO'} | {t['load_before']} | {t['at']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
