"""Whole-database copy: N tables of 1,000 rows, Jdbc ``table_list`` → Jdbc PostgreSQL sink
``table = "public.${table_name}"`` with save-mode creation and a primary key, the same config on
SeaTunnel's engine (Zeta, ``run-zeta.sh`` of the shared zeta folder) and on ours
(``seatunnel-airflow run --master local[2]``), alternating, side by side in one run.

The source is the PostgreSQL of tests/pg.py (database ``seatunnel_test``; the target database
``dst`` on the same server) or, with ``--source mariadb``, the MariaDB of tests/mysql.py (the
target then a PostgreSQL server of its own). Before each run the target database is dropped and
created again, so every run creates its 200 tables. After each run every target table is compared
with its source: row count and a checksum over its rows ordered by ``id`` (values normalised:
decimals as text, booleans as 0/1, timestamps in ISO form). Recorded per run: exit code, wall time
of the whole command (JVM start included), seconds per table, and the peak resident memory of the
command's process tree and the CPU seconds of its processes (sampled every 0.2 s: for ours the
Python command line, the Spark driver JVM and the pipeline's Python, for Zeta its JVM), with the
machine's load average before the run; for ours also its phases from the pipeline log (:func:`phases`).

Every run is appended to benchmarks/results/whole_database.json; whole_database.md is the table of
all of them, rewritten after each invocation.

    python benchmarks/whole_database.py [--tables N (200)] [--source postgres|mariadb] [--runs K (2)]
                                        [--engines zeta,ours] [--label TEXT]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from parity.engines import project_cli, setup_zeta, zeta_dir  # noqa: E402

ROWS = 1000
TARGET_DB = "dst"
COLUMNS = "id, name, score, at, ok, note"
RESULTS = HERE / "results"


class _Source:
    """A source database: its tables created (:attr:`tables_sql`, one statement per item, ``{t}`` the table)
    and read back through its Python driver (``rows``)."""

    server: Any
    tables_sql: tuple[str, ...] = ()

    def rows(self, conn: Any, sql: str) -> list[tuple]:
        raise NotImplementedError

    def connect(self) -> Any:
        raise NotImplementedError

    def create(self, tables: list[str]) -> None:
        with self.connect() as conn:
            for t in tables:
                for statement in self.tables_sql:
                    self.rows(conn, statement.format(t=t, rows=ROWS))

    def checksums(self, tables: list[str]) -> dict[str, tuple[int, str]]:
        with self.connect() as conn:
            return {t: _checksum(self.rows(conn, f"SELECT {COLUMNS} FROM {t} ORDER BY id")) for t in tables}


class PgSource(_Source):
    """The source tables in the PostgreSQL of tests/pg.py; the target database on the same server."""

    driver = "org.postgresql.Driver"
    tables_sql = ("CREATE TABLE {t} (id int PRIMARY KEY, name varchar(40), score numeric(10,2), at timestamp, "
                  "ok boolean, note text)",
                  "INSERT INTO {t} SELECT g, 'name-' || g || '-{t}', (g % 10000) / 100.0, timestamp '2024-01-01' "
                  "+ g * interval '1 second', g % 2 = 0, repeat('x', g % 50) FROM generate_series(1, {rows}) g")

    def __init__(self, server: Any):
        self.server = server

    def connect(self) -> Any:
        import psycopg

        s = self.server
        return psycopg.connect(host="127.0.0.1", port=s.port, dbname=s.database, user=s.user, password=s.password,
                               autocommit=True)

    def rows(self, conn: Any, sql: str) -> list[tuple]:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else []

    def table_path(self, table: str) -> str:
        return f"{self.server.database}.public.{table}"


class MySource(_Source):
    """The source tables in the MariaDB of tests/mysql.py (read through Connector/J when fetched)."""

    tables_sql = ("CREATE TABLE {t} (id INT PRIMARY KEY, name VARCHAR(40), score DECIMAL(10,2), at DATETIME, "
                  "ok BOOLEAN, note TEXT)",
                  "INSERT INTO {t} SELECT seq, CONCAT('name-', seq, '-{t}'), (seq % 10000) / 100, TIMESTAMP "
                  "'2024-01-01 00:00:00' + INTERVAL seq SECOND, seq % 2 = 0, REPEAT('x', seq % 50) "
                  "FROM seq_1_to_{rows}")

    def __init__(self, server: Any):
        self.server = server
        from tests.mysql import connector_j

        self.driver = "com.mysql.cj.jdbc.Driver" if connector_j() else "org.mariadb.jdbc.Driver"

    def connect(self) -> Any:
        import pymysql

        s = self.server
        return pymysql.connect(host="127.0.0.1", port=s.port, user=s.user, password=s.password, database=s.database,
                               autocommit=True)

    def rows(self, conn: Any, sql: str) -> list[tuple]:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def table_path(self, table: str) -> str:
        return f"{self.server.database}.{table}"


def _value(v: Any) -> str:
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, datetime):  # an instant (timestamptz) as its UTC wall time
        return (v.astimezone(UTC).replace(tzinfo=None) if v.tzinfo else v).isoformat()
    return str(v)


def _checksum(rows: list[tuple]) -> tuple[int, str]:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(("\t".join(_value(v) for v in row) + "\n").encode())
    return len(rows), digest.hexdigest()


class Target:
    """The target database ``dst`` on a PostgreSQL server: dropped and created again before each run."""

    def __init__(self, server: Any):
        self.server = server
        self.url = f"jdbc:postgresql://127.0.0.1:{server.port}/{TARGET_DB}"

    def fresh(self) -> None:
        self.server.sql(f"DROP DATABASE IF EXISTS {TARGET_DB} WITH (FORCE)", database="postgres", admin=True)
        self.server.sql(f"CREATE DATABASE {TARGET_DB} OWNER {self.server.user}", database="postgres", admin=True)

    def checksums(self, tables: list[str]) -> dict[str, tuple[int, str] | None]:
        import psycopg

        s = self.server
        out: dict[str, tuple[int, str] | None] = {}
        with psycopg.connect(host="127.0.0.1", port=s.port, dbname=TARGET_DB, user=s.user, password=s.password,
                             autocommit=True) as conn:
            for t in tables:
                try:
                    out[t] = _checksum(conn.execute(f"SELECT {COLUMNS} FROM public.{t} ORDER BY id").fetchall())
                except psycopg.Error:
                    out[t] = None
        return out


def config(source: Any, target: Target, tables: list[str], keyed: bool = True) -> str:
    s = source.server
    listed = "\n".join(f'      {{ table_path = "{source.table_path(name)}" }}' for name in tables)
    return f"""env {{
  job.mode = "BATCH"
  parallelism = 2
  job.retry.times = 0
}}
source {{
  Jdbc {{
    url = "{s.url}"
    driver = "{source.driver}"
    user = "{s.user}"
    password = "{s.password}"
    plugin_output = "db"
    table_list = [
{listed}
    ]
  }}
}}
sink {{
{sink_block(target, keyed)}
}}
"""


def sink_block(target: Target, keyed: bool = True) -> str:
    """The Jdbc PostgreSQL sink of every table: ``public.${table_name}``, created, upserted on ``id``
    (``keyed``; else plain INSERTs into tables without a key, where rows written twice stay visible)."""
    t = target.server
    keys = '\n    primary_keys = ["id"]' if keyed else ""
    return f"""  Jdbc {{
    url = "{target.url}"
    driver = "org.postgresql.Driver"
    user = "{t.user}"
    password = "{t.password}"
    plugin_input = "db"
    generate_sink_sql = true
    database = "{TARGET_DB}"
    table = "public.${{table_name}}"{keys}
    schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode = "APPEND_DATA"
  }}"""


def measured(cmd: list[str], env: dict[str, str], log: Path) -> tuple[int, float, float, float]:
    """Run ``cmd`` (output to ``log``): exit code, wall seconds, peak RSS of its process tree in MiB and
    the CPU seconds (user + system) of its processes, as last sampled (every 0.2 s)."""
    import psutil

    start = time.monotonic()
    cpu: dict[int, float] = {}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        top, peak = psutil.Process(proc.pid), 0
        while proc.poll() is None:
            rss = 0
            with contextlib.suppress(psutil.Error):
                for p in [top, *top.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        rss += p.memory_info().rss
                        times = p.cpu_times()
                        cpu[p.pid] = times.user + times.system
            peak = max(peak, rss)
            time.sleep(0.2)
    return proc.returncode, time.monotonic() - start, peak / 2**20, sum(cpu.values())


def run_engine(engine: str, conf: Path, work: Path, zeta: Path | None
               ) -> tuple[int, float, float, float, Path, dict]:
    """One run; for ours also its phases (:func:`phases`) from the pipeline's log."""
    log = work / f"{engine}-{time.time_ns()}.log"
    env = dict(os.environ)
    if engine == "zeta":
        assert zeta is not None
        env["ZETA_QUIET"] = "1"
        return (*measured([str(zeta / "run-zeta.sh"), str(conf)], env, log), log, {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    kept = work / log.stem
    cmd = [*project_cli(), "run", str(conf), "--master", "local[2]", "--work-dir", str(kept), "--keep-work-dir"]
    started = time.time()
    code, wall, rss, cpu = measured(cmd, env, log)
    return code, wall, rss, cpu, log, phases(kept, started, wall)


STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def phases(kept: Path, started: float, wall: float) -> dict[str, float]:
    """Where ours spent the wall time, from the timestamps of the pipeline log's lines: ``start`` (the
    command line, Spark's start) up to "running", ``plan`` (the sources' tables read and planned) up to the
    sink's "writing", ``write`` (every table staged) up to "prepared", ``commit`` up to "committed", ``exit``
    the rest."""
    marks: dict[str, float] = {}
    for path in sorted(kept.rglob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            m = STAMP.match(line)
            if not m:
                continue
            at = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()  # the driver's local time
            for mark, text in (("running", ": running (attempt"), ("writing", ": writing"),
                               ("prepared", ": prepared "), ("committed", ": committed")):
                if text in line and (mark not in marks or mark in ("prepared", "committed")):
                    marks[mark] = at
    order = ["running", "writing", "prepared", "committed"]
    if any(m not in marks for m in order):
        return {}
    points = [started, *(marks[m] for m in order), started + wall]
    return {name: round(b - a, 1) for name, a, b in zip(("start", "plan", "write", "commit", "exit"), points[:-1],
                                                            points[1:], strict=True)}


def start_servers(kind: str) -> tuple[Any, Target, list[Any]]:
    from tests import pg

    target_server = pg.start()
    if kind == "postgres":
        return PgSource(target_server), Target(target_server), [target_server]
    from tests import mysql

    try:
        source_server = mysql.start()
    except BaseException:
        target_server.stop()
        raise
    return MySource(source_server), Target(target_server), [source_server, target_server]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--source", choices=("postgres", "mariadb"), default="postgres")
    ap.add_argument("--runs", type=int, default=2, help="runs per engine, alternating")
    ap.add_argument("--engines", default="zeta,ours")
    ap.add_argument("--label", default="", help="what the figures of ours are of (e.g. a branch), in the results")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the servers are stopped on the way out
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    zeta = zeta_dir()
    if "zeta" in engines:
        if zeta is None:
            print("no shared zeta folder (run-zeta.sh): run with --engines ours", file=sys.stderr)
            return 2
        setup_zeta(zeta)
    tables = [f"t{i:04d}" for i in range(1, args.tables + 1)]
    work = Path(tempfile.mkdtemp(prefix="whole-db-"))
    source, target, servers = start_servers(args.source)
    runs: list[dict[str, Any]] = []
    try:
        t0 = time.monotonic()
        source.create(tables)
        expected = source.checksums(tables)
        print(f"{args.tables} source tables of {ROWS} rows in {time.monotonic() - t0:.1f} s", flush=True)
        conf = work / "whole_database.conf"
        conf.write_text(config(source, target, tables))
        for i in range(args.runs):
            for engine in engines if i % 2 == 0 else engines[::-1]:
                target.fresh()
                load = os.getloadavg()[0]
                code, wall, rss, cpu, log, spent = run_engine(engine, conf, work, zeta)
                got = target.checksums(tables)
                wrong = sorted(t for t in tables if got[t] != expected[t])
                run = {"engine": engine, "source": args.source, "tables": args.tables, "rows_per_table": ROWS,
                       "exit": code, "wall_s": round(wall, 2), "s_per_table": round(wall / args.tables, 4),
                       "peak_rss_mib": round(rss), "cpu_s": round(cpu, 1), "load_before": round(load, 2),
                       "tables_equal": args.tables - len(wrong), "unequal": wrong[:10],
                       "label": args.label if engine == "ours" else "", "phases_s": spent,
                       "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
                runs.append(run)
                print(json.dumps(run), flush=True)
                if code != 0 or wrong:
                    print(f"  see {log}", flush=True)
    finally:
        for server in servers:
            server.stop()
    record(args, runs)
    ok = all(r["exit"] == 0 and not r["unequal"] for r in runs)
    tidy(work, ok)
    return 0 if ok else 1


def tidy(work: Path, ok: bool) -> None:
    """Remove a benchmark's work directory after a run that passed; keep it (and say where) otherwise."""
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work directory kept for inspection: {work}", flush=True)


def record(args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    append_results("whole_database", runs, report)


def append_results(name: str, runs: list[dict[str, Any]], render: Any) -> None:
    """Append ``runs`` to benchmarks/results/<name>.json and render <name>.md from all of its runs."""
    path = RESULTS / f"{name}.json"
    kept = json.loads(path.read_text()) if path.exists() else []
    kept += runs
    path.write_text(json.dumps(kept, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text(render(kept))


def report(runs: list[dict[str, Any]]) -> str:
    lines = ["# Whole-database copy: SeaTunnel's engine and ours, side by side", "",
             "Generated by `python benchmarks/whole_database.py` (see its docstring): N tables × 1,000 rows, Jdbc "
             "`table_list` → Jdbc PostgreSQL `table = \"public.${table_name}\"`, save-mode creation, primary key "
             "`id`; Zeta 2.3.8 local mode and ours `local[2]`, alternating, the target database created afresh "
             f"before each run; {os.cpu_count()} CPUs shared with other work (load average before each run "
             "shown). Wall time is the whole command, JVM start included; RSS is the peak of its process tree "
             "(MiB), CPU the user + system seconds of its processes (less sensitive to the machine's load than "
             "the wall time).",
             "", "Phases of ours (seconds, from the pipeline log): Spark start / planning (tables read) / staging "
             "writes / commit / exit.",
             "",
             "| source | tables | engine | label | wall s | s/table | CPU s | RSS MiB | load | equal | phases | at |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in sorted(runs, key=lambda r: (r["source"], r["tables"], r["engine"], r.get("label", ""), r["at"])):
        equal = f"{r['tables_equal']}/{r['tables']}" + ("" if r["exit"] == 0 else f" (exit {r['exit']})")
        lines.append(f"| {r['source']} | {r['tables']} | {r['engine']} | {r.get('label', '')} | {r['wall_s']:.1f} "
                     f"| {r['s_per_table']:.3f} | {r.get('cpu_s', '')} | {r['peak_rss_mib']} "
                     f"| {r['load_before']:.1f} | {equal} "
                     f"| {' / '.join(str(v) for v in (r.get('phases_s') or {}).values())} | {r['at']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
