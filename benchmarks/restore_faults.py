"""Restores are exactly-once: crash a run, restore it with the same run id, compare the sink with the expected rows.

Two kinds of trial, each on fresh targets that already hold a file of an earlier run:

* **kill**: ``seatunnel-airflow run`` in a subprocess, and SIGKILL of its spark-submit process
  (the driver's JVM; the Python driver dies with it) from outside at a random moment: a
  third of the trials anywhere in the run, a third during the writes (a random delay after
  the first sink starts writing, within the baseline run's sink phase), a third around the
  commit phase (0-150 ms after the last sink reported its data prepared).
* **fault**: ``SEATUNNEL_FAULTS`` with a random point, action (raise or kill) and offset
  (rows of a write task, files of a commit, sinks).

Then the restore: the same command with the same ``--run-id`` and ``--attempt 2``, no faults.
Per trial: where attempt 1 stopped, what a reader saw after it (the LocalFile source hides the
files of an unrecorded commit: each sink must show either nothing new or everything), the
restore's exit code, and the rows lost and duplicated (multisets over the full rows, per sink).
Results go to benchmarks/results/restore_faults.md.

    python benchmarks/restore_faults.py [--kill-trials 20] [--fault-trials 20] [--seed 7] [--sink LocalFile]

Sink types: one function per type (:data:`SINK_TYPES`) builds the job's sink blocks and the
readers of what they hold; add e.g. a Jdbc one next to :func:`localfile_sinks`.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from airflow_provider_seatunnel.connectors import localfile as lf  # noqa: E402

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")
#: short-lived drivers: C1 only and a serial GC halve the CPU a spark-submit costs on 2 cores
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
POINTS = ("sink.write", "sink.prepared", "sink.move", "sink.commit", "pipeline.committed")
Row = tuple


# ------------------------------------------------------------------------------------------------
# sink types
# ------------------------------------------------------------------------------------------------

@dataclass
class Sink:
    """One sink block of the job and how to read back what its target holds."""

    name: str
    block: str  # the HOCON block (reads the dataset "rows": id bigint, name string, grp string)
    seed: Callable[[], None]  # make the target hold rows of an earlier run
    read: Callable[[], list[Row]]  # the rows a reader sees now (old rows included)
    raw_files: Callable[[], int] = lambda: 0  # files a naive reader would list (informative)
    old: list[Row] = field(default_factory=list)


def localfile_sinks(work: Path, rows: int) -> list[Sink]:
    """Two LocalFile sinks in one pipeline: json files of ``rows // 8`` rows, and csv partitioned by ``grp``."""
    def reader(target: Path, fmt: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            out: list[Row] = []
            for path in lf.list_input_files({"path": str(target)}):
                text = Path(path).read_text()
                if fmt == "json":
                    out.extend((r["id"], r["name"], r["grp"]) for r in map(json.loads, text.splitlines()) if r)
                else:
                    grp = re.search(r"/grp=([^/]*)/", path)
                    out.extend((int(r[0]), r[1], grp.group(1) if grp else r[2]) for r in csv.reader(text.splitlines()))
            return out
        return read

    def raw(target: Path) -> Callable[[], int]:
        return lambda: sum(1 for p in target.rglob("*") if p.is_file()
                           and not any(x.startswith((".", "_")) for x in p.relative_to(target).parts))

    def seeder(target: Path, fmt: str) -> Callable[[], None]:
        def seed() -> None:
            shutil.rmtree(target, ignore_errors=True)
            if fmt == "json":
                target.mkdir(parents=True)
                (target / "old.json").write_text(json.dumps({"id": -1, "name": "old", "grp": "g0"}) + "\n")
            else:
                (target / "grp=g0").mkdir(parents=True)
                (target / "grp=g0" / "old.csv").write_text("-1,old\n")
        return seed

    a, b = work / "sink_json", work / "sink_csv"
    return [
        Sink("LocalFile json", f'LocalFile {{ plugin_input = "rows", path = "{a}", file_format_type = "json", '
                               f"batch_size = {max(1, rows // 8)} }}",
             seeder(a, "json"), reader(a, "json"), raw(a), [(-1, "old", "g0")]),
        Sink("LocalFile csv", f'LocalFile {{ plugin_input = "rows", path = "{b}", file_format_type = "csv", '
                              'partition_by = ["grp"] }',
             seeder(b, "csv"), reader(b, "csv"), raw(b), [(-1, "old", "g0")]),
    ]


SINK_TYPES: dict[str, Callable[[Path, int], list[Sink]]] = {"LocalFile": localfile_sinks}


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


def job_text(source: Path, sinks: list[Sink]) -> str:
    blocks = "\n  ".join(s.block for s in sinks)
    return f"""
env {{ job.name = "restore_faults", parallelism = 2, spark.driver.extraJavaOptions = "{QUICK_JVM}" }}
source {{
  LocalFile {{
    plugin_output = "rows", path = "{source}", file_format_type = "csv"
    schema = {{ fields {{ id = bigint, name = string, grp = string }} }}
  }}
}}
sink {{
  {blocks}
}}
"""


@dataclass
class Run:
    code: int
    seconds: float
    events: list[tuple[float, str]]  # (seconds since start, progress line)
    killed_at: float | None = None
    stdout: str = ""
    stderr: str = ""


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _drivers_of(run_id: str) -> list[int]:
    """Python drivers (runtime/app.py) of ``run_id`` still alive."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(c.endswith(b"runtime/app.py") for c in cmd) and run_id.encode() in cmd and b"python" in cmd[0]:
                found.append(int(entry))
    return found


def run_cli(conf: Path, work: Path, run_id: str, attempt: int, faults: str | None = None,
            kill: Callable[[list[tuple[float, str]], float], bool] | None = None) -> Run:
    """``seatunnel-airflow run``; ``kill(events, elapsed)`` is polled and, when it says so, SIGKILLs spark-submit."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SEATUNNEL_FAULTS", None)
    if faults:
        env["SEATUNNEL_FAULTS"] = faults
    cmd = [CLI, "run", str(conf), "--run-id", run_id, "--attempt", str(attempt), "--master", "local[2]",
           "--work-dir", str(work / f"work-{run_id}-{attempt}")]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
    events: list[tuple[float, str]] = []
    out_lines: list[str] = []
    err: list[str] = []
    threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True).start()

    def pump() -> None:
        for line in proc.stdout:
            out_lines.append(line)
            m = re.match(r"pipeline \d+: (.*)", line)  # a progress line (not "submitted", "FAILED"...)
            if m:
                events.append((time.monotonic() - t0, m.group(1).strip()))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    killed_at = None
    while proc.poll() is None:
        if kill is not None and killed_at is None and kill(events, time.monotonic() - t0):
            submits = _children(proc.pid)
            for pid in submits:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if submits:
                killed_at = time.monotonic() - t0
        time.sleep(0.01)
    reader.join(10)
    return Run(proc.returncode, time.monotonic() - t0, events, killed_at, "".join(out_lines), "".join(err))


# ------------------------------------------------------------------------------------------------
# trials
# ------------------------------------------------------------------------------------------------

@dataclass
class Trial:
    n: int
    kind: str
    what: str
    first_code: int = 0
    stopped: str = ""
    after_first: list[str] = field(default_factory=list)
    raw_after_first: list[int] = field(default_factory=list)
    restore_code: int = 0
    lost: int = 0
    duplicated: int = 0
    orphans: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (self.restore_code == 0 and self.lost == 0 and self.duplicated == 0 and self.orphans == 0
                and "PARTIAL" not in self.after_first)


def _state(rows: list[Row], old: list[Row], expected: list[Row]) -> str:
    if Counter(rows) == Counter(old):
        return "old"
    if Counter(rows) == Counter(old + expected):
        return "all"
    return "PARTIAL"


def _compare(rows: list[Row], wanted: list[Row]) -> tuple[int, int]:
    got, want = Counter(rows), Counter(wanted)
    lost = sum((want - got).values())
    extra = sum((got - want).values())
    return lost, extra


def _stopped(run: Run) -> str:
    """Where attempt 1 stopped: its last progress event, shortened."""
    if run.code == 0:
        return "completed"
    last = run.events[-1][1] if run.events else "before any progress"
    m = re.search(r"injected fault at ([\w.]+)", last)
    if m:
        return f"fault at {m.group(1)}"
    last = re.sub(r"^(Job \S+, )?Pipeline \[\(\d+/\d+\)\] \S+: ", "", last)
    return "after: " + re.sub(r" \(attempt .*", "", last)[:50]


def trial(n: int, kind: str, what: str, conf: Path, work: Path, sinks: list[Sink], expected: list[Row],
          faults: str | None = None, kill: Callable | None = None) -> Trial:
    t = Trial(n, kind, what)
    for s in sinks:
        s.seed()
    run_id = f"trial{n:03d}"
    t0 = time.monotonic()
    first = run_cli(conf, work, run_id, 1, faults=faults, kill=kill)
    t.first_code = first.code
    t.stopped = _stopped(first)
    if first.killed_at is not None:
        t.what += f" at {first.killed_at:.1f}s"
    orphans = _drivers_of(run_id)
    t.orphans = len(orphans)
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    t.after_first = [_state(s.read(), s.old, expected) for s in sinks]
    t.raw_after_first = [s.raw_files() for s in sinks]
    restore = run_cli(conf, work, run_id, 2)
    t.restore_code = restore.code
    for s in sinks:
        lost, dup = _compare(s.read(), s.old + expected)
        t.lost += lost
        t.duplicated += dup
    t.seconds = time.monotonic() - t0
    if restore.code != 0:
        print(restore.stdout[-2000:], restore.stderr[-2000:], file=sys.stderr)
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kill-trials", type=int, default=20)
    ap.add_argument("--fault-trials", type=int, default=20)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sink", choices=sorted(SINK_TYPES), default="LocalFile")
    ap.add_argument("--out", default=str(HERE / "results" / "restore_faults.md"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="restore-faults-"))
    started = datetime.now(timezone.utc)
    try:
        expected = make_input(work / "input", args.rows)
        sinks = SINK_TYPES[args.sink](work, args.rows)
        conf = work / "job.conf"
        conf.write_text(job_text(work / "input", sinks))

        # baseline: an undisturbed run, for the moments to kill at
        for s in sinks:
            s.seed()
        base = run_cli(conf, work, "baseline", 1)
        assert base.code == 0, base.stdout + base.stderr
        for s in sinks:
            assert _compare(s.read(), s.old + expected) == (0, 0), s.name
        writing = next(t for t, e in base.events if e.endswith(": writing"))
        print(f"baseline: {base.seconds:.1f}s, first sink writes at {writing:.1f}s", file=sys.stderr)
        files = max(1, sinks[0].raw_files() - 1)

        trials: list[Trial] = []
        for i in range(args.kill_trials):
            if i % 3 == 0:  # anywhere in the run
                at = rng.uniform(0.5, base.seconds)
                what = "SIGKILL spark-submit, anywhere"

                def kill(events, elapsed, at=at):
                    return elapsed >= at
            elif i % 3 == 1:  # during the writes: a delay after the first "writing" event
                delay = rng.uniform(0.0, max(0.5, base.seconds - writing))
                what = f"SIGKILL spark-submit, {delay:.2f}s after writing starts"

                def kill(events, elapsed, delay=delay):
                    start = next((t for t, e in events if e.endswith(": writing")), None)
                    return start is not None and elapsed >= start + delay
            else:  # around the commit phase: a short delay after the last sink reported "prepared"
                delay = rng.uniform(0.0, 0.15)
                what = f"SIGKILL spark-submit, {delay * 1000:.0f}ms after the last sink prepared"

                def kill(events, elapsed, delay=delay):
                    done = [t for t, e in events if f"sink[{len(sinks) - 1}]" in e and "prepared" in e]
                    return bool(done) and elapsed >= done[0] + delay
            t = trial(len(trials) + 1, "kill", what, conf, work, sinks, expected, kill=kill)
            trials.append(t)
            print(f"{t.n:3d} {t.what}: {t.stopped} -> {t.after_first} restore {t.restore_code} "
                  f"lost {t.lost} dup {t.duplicated}", file=sys.stderr)
        for _ in range(args.fault_trials):
            point, action = rng.choice(POINTS), rng.choice(("raise", "kill"))
            count = {"sink.write": rng.randrange(0, args.rows // 4), "sink.move": rng.randrange(0, files),
                     "sink.prepared": rng.randrange(0, len(sinks)), "sink.commit": rng.randrange(0, len(sinks)),
                     "pipeline.committed": 0}[point]
            spec = f"{point}={action}" + (f"+{count}" if count else "")
            t = trial(len(trials) + 1, "fault", spec, conf, work, sinks, expected, faults=spec)
            trials.append(t)
            print(f"{t.n:3d} {t.what}: {t.stopped} -> {t.after_first} restore {t.restore_code} "
                  f"lost {t.lost} dup {t.duplicated}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(args, trials, sinks, base, writing, started)
    return 0 if all(t.ok for t in trials) else 1


def report(args: argparse.Namespace, trials: list[Trial], sinks: list[Sink], base: Run, writing: float,
           started: datetime) -> None:
    bad = [t for t in trials if not t.ok]
    lines = [
        "# Restores after crashes: exactly-once check",
        "",
        f"Generated by `python benchmarks/restore_faults.py` on {started:%Y-%m-%d %H:%M} UTC; "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, `local[2]`, seed {args.seed}.",
        "",
        f"Job: {args.rows:,} rows of CSV (4 files) → one pipeline with {len(sinks)} sinks: "
        + ", ".join(s.name for s in sinks) + ". Each target already holds one row of an earlier run. "
        f"An undisturbed run takes {base.seconds:.1f} s (the first sink starts writing at {writing:.1f} s).",
        "",
        "Each trial: attempt 1 is crashed (SIGKILL of the spark-submit process from outside at a random "
        "moment, or a fault injected with `SEATUNNEL_FAULTS`), then `seatunnel-airflow run` again with the same "
        "`--run-id` and `--attempt 2`. *Visible after attempt 1* is what the LocalFile source reads per sink "
        "(`old`: only the earlier row, `all`: everything, `PARTIAL` would be a half-committed target); *raw files* "
        "counts the data files a naive listing sees (files of a commit killed half way are there, but hidden "
        "from readers that honour the commit journal, until the restore finishes the commit). Lost and duplicated "
        "rows compare the full rows (multisets) of every sink with the expected ones.",
        "",
        "## Summary",
        "",
        "| trials | kind | restores that failed | rows lost | rows duplicated | half-committed targets seen "
        "| drivers left running |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for kind in ("kill", "fault"):
        ts = [t for t in trials if t.kind == kind]
        lines.append(f"| {len(ts)} | {'SIGKILL of spark-submit' if kind == 'kill' else 'injected fault'} | "
                     f"{sum(t.restore_code != 0 for t in ts)} | {sum(t.lost for t in ts)} | "
                     f"{sum(t.duplicated for t in ts)} | {sum('PARTIAL' in t.after_first for t in ts)} | "
                     f"{sum(t.orphans for t in ts)} |")
    stops = Counter(t.stopped for t in trials)
    lines += [
        "",
        f"**{len(trials) - len(bad)} of {len(trials)} trials exactly-once** "
        f"({'all' if not bad else 'NOT all'}); median trial (crash + restore) "
        f"{statistics.median(t.seconds for t in trials):.1f} s.",
        "",
        "Where attempt 1 stopped: " + ", ".join(f"{k} ({v})" for k, v in stops.most_common()) + ".",
        "",
        "## Trials",
        "",
        "| # | crash | attempt 1 exit | stopped at | visible after attempt 1 | raw files | restore exit "
        "| lost | duplicated | s |",
        "|---:|---|---:|---|---|---|---:|---:|---:|---:|",
    ]
    for t in trials:
        lines.append(f"| {t.n} | {t.what} | {t.first_code} | {t.stopped} | {' / '.join(t.after_first)} | "
                     f"{' / '.join(map(str, t.raw_after_first))} | {t.restore_code} | {t.lost} | {t.duplicated} | "
                     f"{t.seconds:.0f} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {len(trials) - len(bad)}/{len(trials)} exactly-once", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
