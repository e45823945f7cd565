"""Whole-database change data capture: Postgres-CDC or MySQL-CDC over N tables (``table-names`` lists them
all) into the Jdbc PostgreSQL sink ``table = "public.${table_name}"`` (save-mode creation, upserts and
deletes on ``primary_keys = ["id"]``), as a long-running stream (``processing_time``).

One run per engine (``--engines ours,zeta``; SeaTunnel's engine only for MySQL-CDC, the connector Maven
Central serves for 2.3.8), each on a fresh target database and a fresh copy of the source tables
(:mod:`whole_database`'s tables, ``--rows`` rows each, ``REPLICA IDENTITY FULL`` on PostgreSQL):

1. **snapshot**: the command starts; the snapshot phase ends when every target table equals its source
   (count and ordered checksum, :func:`whole_database._checksum`).
2. **changes**: a writer commits ``--rate`` changes a second for ``--seconds``, each its own transaction,
   spread over all tables at random, a third each inserts (new ids), updates (a marker in ``name``) and
   deletes; no row is changed twice, so each change's effect stays visible. A poller looks for each
   change in the target every 0.25 s: the **end-to-end lag** of a change is when the poller first saw
   it minus when its commit returned (same machine, same clock).
3. **end**: once every change was seen (or ``--catch-up`` seconds passed) every target table is compared
   with its source; then the stream is stopped (ours: SIGTERM to the driver, as an operator stops it;
   Zeta: its process group killed).

Recorded with each run: the load average, the snapshot's seconds, the lag's p50/p95/max, the
micro-batches of the change phase (ours: from the progress lines, their median and p95 ms) and the CPU
seconds of the command's process tree per micro-batch, the peak RSS, and the **change-log readers**: the
most replication slots of the source database seen at once (PostgreSQL) and the most binlog dump
connections seen at once and in all (MySQL; sampled every 0.2 s, so a lower bound). The benchmark
asserts one slot / binlog reader per source for all tables (``readers_ok``), never one per table.

Every run is appended to benchmarks/results/whole_database_cdc.json; whole_database_cdc.md is rendered
from all of them.

    python benchmarks/whole_database_cdc.py [--source postgres|mariadb] [--tables 200] [--rows 100]
                                            [--rate 20] [--seconds 60] [--interval-ms 2000]
                                            [--engines ours,zeta] [--label TEXT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import whole_database as wd  # noqa: E402
from parity.engines import project_cli, setup_zeta, zeta_dir  # noqa: E402

POLL_S = 0.25
#: a micro-batch's progress line: one per table and trigger (a query per table), or one per trigger (one capture)
BATCH_LINE = re.compile(r"(?:table (\S+)|one capture\)): micro-batch (\d+): read (\d+) rows, wrote (\d+) rows in "
                        r"(\d+) ms")


# ------------------------------------------------------------------------------------------------
# the source side: tables, change-log readers, changes
# ------------------------------------------------------------------------------------------------

def cdc_block(source: Any, tables: list[str]) -> str:
    s = source.server
    names = ", ".join(f'"{source.table_path(t)}"' for t in tables)
    plugin = "Postgres-CDC" if isinstance(source, wd.PgSource) else "MySQL-CDC"
    extra = 'slot.name = "wholedb_cdc"' if plugin == "Postgres-CDC" else 'server-id = "5400-6400"'
    return (f'{plugin} {{\n    plugin_output = "db"\n    base-url = "{s.url}"\n    username = "{s.user}"\n'
            f'    password = "{s.password}"\n    table-names = [{names}]\n    {extra}\n  }}')


def config(source: Any, target: wd.Target, tables: list[str], checkpoint: Path, interval_ms: int) -> str:
    return f"""env {{
  job.mode = "STREAMING"
  job.name = "whole_database_cdc"
  parallelism = 2
  checkpoint.interval = {interval_ms}
  checkpoint.root = "{checkpoint}"
  streaming.trigger = "processing_time"
}}
source {{
  {cdc_block(source, tables)}
}}
sink {{
{wd.sink_block(target)}
}}
"""


def prepare(source: Any, tables: list[str]) -> None:
    """Fresh source tables (dropped first), keyed by id; on PostgreSQL with whole rows in their changes,
    and no slot or publication left by an earlier run."""
    with source.connect() as conn:
        if isinstance(source, wd.PgSource):
            source.rows(conn, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                              "WHERE active_pid IS NULL")
            for (name,) in source.rows(conn, "SELECT pubname FROM pg_publication"):
                source.rows(conn, f"DROP PUBLICATION {name}")
        for t in tables:
            source.rows(conn, f"DROP TABLE IF EXISTS {t}")
    source.create(tables)
    if isinstance(source, wd.PgSource):
        with source.connect() as conn:
            for t in tables:
                source.rows(conn, f"ALTER TABLE {t} REPLICA IDENTITY FULL")


def readers(source: Any, conn: Any) -> tuple[int, set[int]]:
    """The change-log readers of the source database now: replication slots (PostgreSQL), or the ids of the
    connections dumping the binlog (MySQL)."""
    if isinstance(source, wd.PgSource):
        rows = source.rows(conn, f"SELECT count(*) FROM pg_replication_slots WHERE database = "
                                 f"'{source.server.database}'")
        return int(rows[0][0]), set()
    rows = source.rows(conn, "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
    return 0, {int(r[0]) for r in rows}


@dataclass
class Change:
    table: str
    kind: str  # insert, update, delete
    id: int
    name: str | None  # the name the target must show (None: the row must be gone)
    committed: float = 0.0
    seen: float | None = None


def plan_changes(tables: list[str], rows: int, count: int, rng: random.Random) -> list[Change]:
    """``count`` changes over ``tables``, a third each inserts, updates and deletes; no id changed twice."""
    free = {t: list(range(1, rows + 1)) for t in tables}
    for ids in free.values():
        rng.shuffle(ids)
    out = []
    for n in range(count):
        t = rng.choice(tables)
        kind = ("insert", "update", "delete")[n % 3]
        if kind != "insert" and not free[t]:
            kind = "insert"
        if kind == "insert":
            out.append(Change(t, kind, rows + 1 + n, f"new-{n}"))
        else:
            out.append(Change(t, kind, free[t].pop(), f"chg-{n}" if kind == "update" else None))
    return out


def apply(source: Any, conn: Any, c: Change) -> None:
    pg = isinstance(source, wd.PgSource)
    if c.kind == "insert":
        at = "timestamp '2024-06-01 00:00:00'" if pg else "TIMESTAMP '2024-06-01 00:00:00'"
        source.rows(conn, f"INSERT INTO {c.table} VALUES ({c.id}, '{c.name}', 1.50, {at}, {'true' if pg else 1}, "
                          f"'inserted')")
    elif c.kind == "update":
        source.rows(conn, f"UPDATE {c.table} SET name = '{c.name}', score = score + 1 WHERE id = {c.id}")
    else:
        source.rows(conn, f"DELETE FROM {c.table} WHERE id = {c.id}")
    c.committed = time.time()


# ------------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------------

@dataclass
class Watch:
    """What a run's watcher threads saw: readers, CPU and RSS of the command's process tree, progress lines."""

    slots_max: int = 0
    dumps_max: int = 0
    dump_ids: set[int] = field(default_factory=set)
    cpu: dict[int, float] = field(default_factory=dict)
    rss_peak: float = 0.0
    lines: list[tuple[float, str]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def cpu_s(self) -> float:
        return sum(self.cpu.values())


def sample(proc: subprocess.Popen, source: Any, w: Watch) -> None:
    import psutil

    with source.connect() as conn:
        while not w.stop.is_set() and proc.poll() is None:
            with contextlib.suppress(Exception):
                slots, ids = readers(source, conn)
                w.slots_max, w.dumps_max = max(w.slots_max, slots), max(w.dumps_max, len(ids))
                w.dump_ids |= ids
            rss = 0
            with contextlib.suppress(psutil.Error):
                top = psutil.Process(proc.pid)
                for p in [top, *top.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        rss += p.memory_info().rss
                        times = p.cpu_times()
                        w.cpu[p.pid] = times.user + times.system
            w.rss_peak = max(w.rss_peak, rss / 2**20)
            time.sleep(0.2)


def start(engine: str, conf: Path, work: Path, zeta: Path | None, w: Watch) -> subprocess.Popen:
    env = dict(os.environ)
    if engine == "zeta":
        assert zeta is not None
        env["ZETA_QUIET"] = "0"
        cmd = [str(zeta / "run-zeta.sh"), str(conf)]
    else:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        cmd = [*project_cli(), "run", str(conf), "--master", "local[2]", "--work-dir", str(work / "work"),
               "--keep-work-dir"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
                            start_new_session=True, bufsize=1)
    t0 = time.monotonic()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            w.lines.append((time.monotonic() - t0, line.rstrip()))

    threading.Thread(target=pump, daemon=True).start()
    return proc


def stop(engine: str, proc: subprocess.Popen, limit: float = 180.0) -> float:
    """Ours: SIGTERM to the pipelines' Python drivers (``runtime/app.py``; found as ``SeaTunnelOperator.on_kill``
    finds them: :func:`pipeline_drivers`), as an operator stops a stream: the queries stop after their running
    micro-batch and the command exits 0; the command itself when no driver runs (yet). Never the spark-submit
    JVM, whose command line names the app too: a SIGTERM there ends the driver with SIGKILL and the command
    with 1. Zeta, whose streaming job runs until cancelled: its process group killed. After ``limit``
    seconds, SIGKILL to the process group. Returns the seconds the command took to exit."""
    import psutil

    from airflow_provider_seatunnel.runtime.launcher import pipeline_drivers

    t0 = time.monotonic()
    if engine == "zeta":
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.poll() is None:
        for p in pipeline_drivers(root=proc.pid) or [proc]:
            with contextlib.suppress(psutil.Error, OSError):  # it may have ended meanwhile
                p.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(limit)
    took = time.monotonic() - t0
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    return round(took, 1)


def wait_equal(source: Any, target: wd.Target, tables: list[str], proc: subprocess.Popen, limit: float) -> bool:
    expected = source.checksums(tables)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        got = target.checksums(tables)
        if all(got[t] == expected[t] for t in tables):
            return True
        time.sleep(2.0)
    return False


def write_and_poll(source: Any, target: wd.Target, changes: list[Change], rate: float, catch_up: float) -> None:
    """The writer (its own thread) commits ``changes`` at ``rate`` a second; this thread polls the target
    until each was seen or ``catch_up`` seconds after the last commit."""
    import psycopg

    done = threading.Event()

    def writer() -> None:
        with source.connect() as conn:
            due = time.monotonic()
            for c in changes:
                apply(source, conn, c)
                due += 1.0 / rate
                time.sleep(max(0.0, due - time.monotonic()))
        done.set()

    threading.Thread(target=writer, daemon=True).start()
    s = target.server
    with psycopg.connect(host="127.0.0.1", port=s.port, dbname=wd.TARGET_DB, user=s.user, password=s.password,
                         autocommit=True) as conn:
        last_commit = None
        while True:
            pending = [c for c in changes if c.committed and c.seen is None]
            by_table: dict[str, list[Change]] = {}
            for c in pending:
                by_table.setdefault(c.table, []).append(c)
            now = time.time()
            for t, cs in by_table.items():
                with contextlib.suppress(psycopg.Error):
                    found = dict(conn.execute(f"SELECT id, name FROM public.{t} WHERE id = ANY(%s)",
                                              ([c.id for c in cs],)).fetchall())
                    for c in cs:
                        if (c.name is None and c.id not in found) or (c.name is not None and found.get(c.id) == c.name):
                            c.seen = now
            if done.is_set():
                last_commit = last_commit or time.monotonic()
                if all(c.seen is not None for c in changes) or time.monotonic() - last_commit > catch_up:
                    return
            time.sleep(POLL_S)


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


def batches_of(lines: list[tuple[float, str]], after: float, writing: bool = False) -> list[int]:
    """The ms of our micro-batches logged after ``after`` (seconds since the start); ``writing``: only those that
    wrote rows."""
    out = []
    for at, line in lines:
        m = BATCH_LINE.search(line)
        if m and at >= after and (int(m[4]) > 0 or not writing):
            out.append(int(m[5]))
    return out


def run_engine(engine: str, args: argparse.Namespace, source: Any, target: wd.Target, tables: list[str],
               zeta: Path | None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"whole-cdc-{engine}-"))
    prepare(source, tables)
    target.fresh()
    conf = work / "job.conf"
    conf.write_text(config(source, target, tables, work / "checkpoints", args.interval_ms))
    rng = random.Random(args.seed)
    changes = plan_changes(tables, args.rows, int(args.rate * args.seconds), rng)
    w, load = Watch(), os.getloadavg()
    t0 = time.monotonic()
    proc = start(engine, conf, work, zeta, w)
    threading.Thread(target=sample, args=(proc, source, w), daemon=True).start()
    run: dict[str, Any] = {"engine": engine, "source": args.source, "tables": len(tables), "rows_per_table": args.rows,
                           "rate_per_s": args.rate, "seconds": args.seconds, "interval_ms": args.interval_ms,
                           "load_before": [round(x, 2) for x in load], "label": args.label if engine == "ours" else "",
                           "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    try:
        snapshot_ok = wait_equal(source, target, tables, proc, args.snapshot_limit)
        run["snapshot_s"] = round(time.monotonic() - t0, 1) if snapshot_ok else None
        if snapshot_ok:
            cpu0, since = w.cpu_s(), time.monotonic() - t0
            run["load_changes"] = [round(x, 2) for x in os.getloadavg()]
            write_and_poll(source, target, changes, args.rate, args.catch_up)
            lags = [c.seen - c.committed for c in changes if c.seen is not None]
            ms, writing = batches_of(w.lines, since), batches_of(w.lines, since, writing=True)
            run.update({"changes": len(changes), "changes_seen": len(lags), "lag_p50_s": quantile(lags, 0.5),
                        "lag_p95_s": quantile(lags, 0.95), "lag_max_s": quantile(lags, 1.0),
                        "micro_batches": len(ms), "micro_batches_writing": len(writing),
                        "micro_batch_ms_p50": quantile(ms, 0.5), "micro_batch_ms_p95": quantile(ms, 0.95),
                        "writing_batch_ms_p50": quantile(writing, 0.5),
                        "change_phase_cpu_s": round(w.cpu_s() - cpu0, 1),
                        "cpu_s_per_micro_batch": round((w.cpu_s() - cpu0) / len(ms), 3) if ms else None})
            if engine == "zeta":  # its checkpoints are not micro-batches: nothing to count
                run.update(dict.fromkeys(("micro_batches", "micro_batches_writing", "cpu_s_per_micro_batch")))
            got, expected = target.checksums(tables), source.checksums(tables)
            run["tables_equal"] = sum(got[t] == expected[t] for t in tables)
    finally:
        w.stop.set()
        stop(engine, proc)
        wd.tidy(work, run.get("tables_equal") == len(tables))
    run.update({"exit": proc.returncode, "wall_s": round(time.monotonic() - t0, 1), "cpu_s": round(w.cpu_s(), 1),
                "peak_rss_mib": round(w.rss_peak), "slots_max": w.slots_max, "binlog_dumps_max": w.dumps_max,
                "binlog_dump_connections": len(w.dump_ids)})
    pg = isinstance(source, wd.PgSource)
    # one reader per source: one slot; or one binlog dump at a time, at most one per trigger of the stream
    triggers = run["wall_s"] * 1000 / args.interval_ms + 2
    run["readers_ok"] = (w.slots_max == 1) if pg else (w.dumps_max <= 1 and len(w.dump_ids) <= triggers)
    if not pg and not w.dump_ids:
        run["readers_ok"] = None  # no binlog dump was seen: the stream never read
    if run.get("snapshot_s") is None or run.get("tables_equal") != len(tables):
        tail = "\n".join(line for _, line in w.lines[-40:])
        run["log_tail"] = tail[-3000:]
    print(json.dumps({k: v for k, v in run.items() if k != "log_tail"}), flush=True)
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=("postgres", "mariadb"), default="postgres")
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--rate", type=float, default=20.0, help="changes per second")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the writer runs")
    ap.add_argument("--interval-ms", type=int, default=2000, help="checkpoint.interval: the micro-batch interval")
    ap.add_argument("--snapshot-limit", type=float, default=1800.0, help="seconds the snapshot may take at most")
    ap.add_argument("--catch-up", type=float, default=300.0, help="seconds after the last change to see them all")
    ap.add_argument("--engines", default="ours")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    zeta = zeta_dir()
    if "zeta" in engines:
        if zeta is None or args.source != "mariadb":
            print("SeaTunnel's engine runs here only MySQL-CDC (--source mariadb) with the shared zeta folder",
                  file=sys.stderr)
            return 2
        setup_zeta(zeta)
    tables = [f"c{i:04d}" for i in range(1, args.tables + 1)]
    wd.ROWS = args.rows
    source, target, servers = wd.start_servers(args.source)
    runs = []
    try:
        for engine in engines:
            runs.append(run_engine(engine, args, source, target, tables, zeta))
    finally:
        for server in servers:
            server.stop()
    wd.append_results("whole_database_cdc", runs, report)
    return 0 if all(r.get("tables_equal") == r["tables"] and r["readers_ok"] for r in runs) else 1


def report(runs: list[dict[str, Any]]) -> str:
    lines = ["# Whole-database CDC: N tables, snapshot then changes, into Jdbc PostgreSQL", "",
             "Generated by `python benchmarks/whole_database_cdc.py` (see its docstring). Lag: a change's commit "
             "at the source to its first sight in the target (polled every 0.25 s). Micro-batches: ours, all of the "
             "change phase (one per table and trigger; in brackets those that wrote rows, their median ms). "
             "Readers: the most replication slots (PG) / binlog dump connections (MySQL) seen at once, and the dump "
             "connections seen in all. Load: the 1-minute "
             f"load average before the run and before the changes ({os.cpu_count()} CPUs shared with other work).",
             "",
             "| source | tables | engine | label | snapshot s | changes seen | lag p50 / p95 / max s | micro-batches "
             "| batch ms p50 / p95 | CPU s / batch | CPU s | RSS MiB | slots / dumps at once / dumps | readers ok "
             "| equal | load | at |",
             "|---|---:|---|---|---:|---:|---|---:|---|---:|---:|---:|---|---|---:|---|---|"]
    for r in runs:
        lag = " / ".join(str(r.get(k)) for k in ("lag_p50_s", "lag_p95_s", "lag_max_s"))
        ms = f"{r.get('micro_batch_ms_p50')} / {r.get('micro_batch_ms_p95')}"
        batches = (f"{r.get('micro_batches', '-')} ({r.get('micro_batches_writing', '-')}: "
                   f"{r.get('writing_batch_ms_p50')})")
        readers_seen = f"{r['slots_max']} / {r['binlog_dumps_max']} / {r['binlog_dump_connections']}"
        load = f"{r['load_before'][0]} / {(r.get('load_changes') or ['-'])[0]}"
        lines.append(f"| {r['source']} | {r['tables']} | {r['engine']} | {r.get('label', '')} | {r.get('snapshot_s')} "
                     f"| {r.get('changes_seen', '-')}/{r.get('changes', '-')} | {lag} | {batches} "
                     f"| {ms} | {r.get('cpu_s_per_micro_batch')} | {r['cpu_s']} | {r['peak_rss_mib']} "
                     f"| {readers_seen} | {_verdict(r['readers_ok'])} "
                     f"| {r.get('tables_equal', '-')}/{r['tables']}{_failure(r)} | {load} | {r['at']} |")
    return "\n".join(lines) + "\n"


def _failure(r: dict[str, Any]) -> str:
    """Why a run never got through its snapshot: the command's error line."""
    if r.get("snapshot_s") is not None:
        return ""
    why = next((line.split(": ", 2)[-1] for line in (r.get("log_tail") or "").splitlines()
                if line.startswith("error: ")), f"exit {r['exit']}")
    return f" (failed: {why[:90]})"


def _verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else "yes" if ok else "NO"


if __name__ == "__main__":
    sys.exit(main())
