"""The restore trials' harness (:mod:`restore_faults` and the benchmarks built on it): run
``seatunnel-airflow run`` in a subprocess, SIGKILL it at a moment a callback picks, find the drivers a kill left
running, and score a trial (the rows each sink lost and duplicated, where attempt 1 stopped)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import connect_targets  # noqa: E402
from basic_targets import Row, Sink  # noqa: E402

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")


@dataclass
class Run:
    """One run of the command line: exit code, wall seconds, progress events, when it was killed, output."""

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
            kill: Callable[[list[tuple[float, str]], float], bool] | None = None,
            watch: Callable[[subprocess.Popen, list[tuple[float, str]]], None] | None = None,
            connect: tuple[connect_targets.Server, str] | None = None) -> Run:
    """``seatunnel-airflow run``; ``kill(events, elapsed)`` is polled and, when it says so, SIGKILLs spark-submit;
    ``watch(process, events)`` is told the process and its live list of progress events once it started.
    ``connect``: (server, crash) runs on that Spark Connect server; a kill then SIGKILLs the command line
    itself (crash "client") or restarts the server (crash "server")."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SEATUNNEL_FAULTS", None)
    if faults:
        env["SEATUNNEL_FAULTS"] = faults
    cmd = [CLI, "run", str(conf), "--run-id", run_id, "--attempt", str(attempt)]
    if connect is None:
        cmd += ["--master", "local[2]", "--work-dir", str(work / f"work-{run_id}-{attempt}")]
    else:
        extra, extra_env = connect_targets.command(connect[0])
        cmd += extra
        env.update(extra_env)
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
    if watch is not None:
        watch(proc, events)
    killed_at = None
    while proc.poll() is None:
        if kill is not None and killed_at is None and kill(events, time.monotonic() - t0):
            if connect is not None:
                killed_at = time.monotonic() - t0
                connect_targets.crash(proc, *connect)
            else:
                submits = _children(proc.pid)
                for pid in submits:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                if submits:
                    killed_at = time.monotonic() - t0
        time.sleep(0.01)
    reader.join(10)
    return Run(proc.returncode, time.monotonic() - t0, events, killed_at, "".join(out_lines), "".join(err))


@dataclass
class Trial:
    n: int
    kind: str
    what: str
    first_code: int = 0
    stopped: str = ""
    after_first: list[str] = field(default_factory=list)
    raw_after_first: list[int] = field(default_factory=list)
    raw_after_restore: list[int] = field(default_factory=list)
    restore_code: int = 0
    lost: int = 0
    duplicated: int = 0
    orphans: int = 0
    seconds: float = 0.0
    details: list[str] = field(default_factory=list)  # per sink: the rows lost and duplicated (a few)
    false_success: int = 0  # overlap: an attempt exited 0 before its targets held every row
    why: list[str] = field(default_factory=list)  # overlap: why an attempt failed (its error line)
    guarantee: str = "exactly-once"  # the sink type's promise, which ``ok`` checks

    @property
    def ok(self) -> bool:
        if self.guarantee == "at-least-once":  # duplicates and partial deliveries allowed; no row lost
            return self.restore_code == 0 and self.lost == 0 and self.orphans == 0
        return (self.restore_code == 0 and self.lost == 0 and self.duplicated == 0 and self.orphans == 0
                and "PARTIAL" not in self.after_first and not self.false_success)


def _state(rows: list[Row], sink: Sink, expected: list[Row]) -> str:
    if Counter(rows) == Counter(sink.old):
        return "old"
    if Counter(rows) == Counter(sink.final(expected)):
        return "all"
    return "PARTIAL"


def _difference(rows: list[Row], wanted: list[Row]) -> tuple[Counter, Counter]:
    """(lost, extra) as multisets of full rows: a wrong value counts as one lost and one extra row."""
    got, want = Counter(rows), Counter(wanted)
    return want - got, got - want


def _sample(rows: Counter, limit: int = 5) -> str:
    items = sorted(rows.items())
    text = ", ".join(f"{r}" + (f"×{c}" if c > 1 else "") for r, c in items[:limit])
    return text + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


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


def score(t: Trial, sinks: list[Sink], expected: list[Row]) -> None:
    """Count into ``t`` the rows each sink lost and duplicated against what it must hold now."""
    for s in sinks:
        lost, extra = _difference(s.read(), s.final(expected))
        t.lost += sum(lost.values())
        t.duplicated += sum(extra.values())
        if lost or extra:
            t.details.append(f"{s.name}: lost {sum(lost.values())} [{_sample(lost)}], "
                             f"extra {sum(extra.values())} [{_sample(extra)}]")
