"""A small job's fixed cost, side by side: SeaTunnel's own engine (Zeta, local mode) against
``seatunnel-airflow run`` (spark-submit), whole command wall time, JVM start included.

The job: a 7-row FakeSource → Sql (filter and projection) → csv LocalFile. Ways, run in a rotating
order each round (after one untimed round, which also lets the driver's class archive be created):

* **zeta**: ``run-zeta.sh`` of ``../shared/zeta`` (``--zeta``);
* **ours**: ``seatunnel-airflow run`` of this tree (its start-up settings: runtime/jvm_startup.py);
* **before** (with ``--before-tree``): the same command from another checkout (e.g. main before the
  change), with its own defaults (``--before-archive-off``: with class-data sharing off).

Each tree's package is byte-compiled first (``compileall``), as ``pip install`` leaves an installed one:
an environment with ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile the provider's modules from
source in every run, twice (the command line and the driver), which no installation does.

Each run's output rows are compared with the first run's (as sorted lines): a way that writes other
rows fails the benchmark. The load average (1 min) before each run is recorded: other work on the
machine slows every way, so medians are compared, the load is reported beside them, and so is each
run's CPU time (user + system of all its processes), which the load hardly changes. Results go to
the "small job versus SeaTunnel's engine" section of benchmarks/results/small_jobs.md (replaced).

    python benchmarks/small_job_startup.py [--runs 5] [--zeta PATH/run-zeta.sh] [--before-tree /work/main]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
START, END = "<!-- small-job-startup -->", "<!-- /small-job-startup -->"

ROWS = [(1, "alice", 31, 1.5), (2, "bob", 25, 2.25), (3, "carol", 55, -3.0), (4, "dave", 41, 0.5),
        (5, "erin", 19, 7.75), (6, "frank", 63, 3.0), (7, "grace", 37, -1.25)]


def config() -> str:
    rows = "\n".join(f'      {{ kind = INSERT, fields = [{i}, "{n}", {a}, {s}] }}' for i, n, a, s in ROWS)
    return f"""env {{
  parallelism = 1
  job.mode = "BATCH"
  job.retry.times = 0
}}
source {{
  FakeSource {{
    plugin_output = "fake"
    schema = {{ fields {{ id = "bigint", name = "string", age = "int", score = "double" }} }}
    rows = [
{rows}
    ]
  }}
}}
transform {{
  Sql {{
    plugin_input = "fake"
    plugin_output = "adults"
    query = "select id, upper(name) as name, age, score * 2 as score2 from fake where age > 20"
  }}
}}
sink {{
  LocalFile {{
    plugin_input = "adults"
    path = ${{out}}
    file_format_type = "csv"
  }}
}}
"""


def rows_of(out: Path) -> list[str]:
    """The output's csv lines, sorted (Zeta writes no newline after the last row)."""
    return sorted(line for f in sorted(out.rglob("*.csv")) for line in f.read_text().splitlines() if line)


Way = tuple[list[str], dict[str, str], Path]


def commands(args: argparse.Namespace, conf: Path) -> dict[str, Way]:
    """Each way's command, environment and working directory: a tree's command line runs in that tree
    (``python -m`` puts the working directory first on the module path)."""
    python = sys.executable
    cli = [python, "-m", "airflow_provider_seatunnel.cli", "run", str(conf)]
    base = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "PYTHONPATH")}
    ways = {"zeta": ([args.zeta, str(conf)], {**base, "ZETA_QUIET": "1"}, ROOT),
            "ours": (cli, {**base, "PYTHONPATH": str(ROOT)}, ROOT)}
    if args.before_tree:
        off = {"SEATUNNEL_JVM_ARCHIVE_DIR": "off"} if args.before_archive_off else {}
        tree = args.before_tree.resolve()
        ways["before"] = (cli, {**base, "PYTHONPATH": str(tree), **off}, tree)
    return ways


def byte_compile(tree: Path) -> None:
    """Byte-compile ``tree``'s package into its ``__pycache__`` directories (what ``pip install`` does)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "airflow_provider_seatunnel")], check=True)


def run_once(cmd: list[str], env: dict[str, str], cwd: Path, out: Path) -> tuple[float, float]:
    """Wall seconds of ``cmd`` and the CPU seconds (user + system) of its processes: a machine busy with
    other work stretches the first, hardly the second."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run([*cmd, "-i", f"out={out}"], env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def report(args: argparse.Namespace, times: dict[str, list[tuple[float, float, float]]], first: dict[str, float],
           expected: list[str]) -> str:
    names = {"zeta": "SeaTunnel's engine (Zeta 2.3.8, local)", "ours": "ours: `seatunnel-airflow run` (this tree)",
             "before": f"ours before (`{args.before_tree}`"
                       f"{', class-data sharing off' if args.before_archive_off else ''})"}
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [START, "## A small job versus SeaTunnel's engine", "",
             f"Generated by `python benchmarks/small_job_startup.py --runs {args.runs}"
             f"{' --before-tree ' + str(args.before_tree) if args.before_tree else ''}"
             f"{' --before-archive-off' if args.before_archive_off else ''}` on {stamp}; {os.cpu_count()} "
             f"CPUs shared with other work (the load average before each run is given), Java 17, `local[*]`. The job: "
             f"7-row FakeSource → Sql → csv LocalFile ({len(expected)} rows written, the same on every run). Whole "
             "command wall time, JVM start included; one untimed round first, then the ways in a rotating order; "
             "each tree's package byte-compiled first, as an installed one is.", "",
             "| way | median wall (s) | min (s) | max (s) | median CPU, user + system (s) | median load |",
             "|---|---:|---:|---:|---:|---:|"]
    for way, runs in times.items():
        secs, cpu, load = ([r[i] for r in runs] for i in range(3))
        lines.append(f"| {names[way]} | {statistics.median(secs):.2f} | {min(secs):.2f} | {max(secs):.2f} | "
                     f"{statistics.median(cpu):.2f} | {statistics.median(load):.2f} |")
    lines += ["", "Untimed first round (ours creates the class archive there when none exists yet): " +
              ", ".join(f"{way} {s:.2f} s" for way, s in first.items()) + ".", "",
              "| way | wall seconds (CPU seconds, load) |", "|---|---|"]
    lines += [f"| {way} | {', '.join(f'{s:.2f} ({c:.1f}, {ld:.1f})' for s, c, ld in runs)} |"
              for way, runs in times.items()]
    return "\n".join([*lines, END]) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--zeta", default=str(ROOT.parent / "shared" / "zeta" / "run-zeta.sh"))
    ap.add_argument("--before-tree", type=Path, help="another checkout to run as 'before'")
    ap.add_argument("--before-archive-off", action="store_true", help="'before' without the class archive")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "small_jobs.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="small-job-") as tmp:
        conf = Path(tmp) / "small7.conf"
        conf.write_text(config())
        ways = commands(args, conf)
        for tree in {ROOT, *([args.before_tree.resolve()] if args.before_tree else [])}:
            byte_compile(tree)
        order = list(ways)
        times: dict[str, list[tuple[float, float, float]]] = {w: [] for w in order}
        first: dict[str, float] = {}
        expected: list[str] | None = None
        for round_no in range(args.runs + 1):
            for way in order[round_no % len(order):] + order[:round_no % len(order)]:
                out = Path(tmp) / f"out-{way}-{round_no}"
                load = os.getloadavg()[0]
                seconds, cpu = run_once(*ways[way], out)
                rows = rows_of(out)
                expected = rows if expected is None else expected
                if rows != expected:
                    raise RuntimeError(f"{way} wrote other rows: {rows} != {expected}")
                if round_no == 0:
                    first[way] = seconds
                else:
                    times[way].append((seconds, cpu, load))
                print(f"round {round_no} {way}: {seconds:.2f} s, CPU {cpu:.2f} s (load {load:.2f})", flush=True)
    section = report(args, times, first, expected or [])
    text = args.out.read_text() if args.out.exists() else ""
    if START in text:
        text = text[:text.index(START)] + section + text[text.index(END) + len(END):].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    args.out.write_text(text)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
