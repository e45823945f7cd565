"""What a pipeline's start costs besides Spark, side by side, in fresh interpreters.

Each measured in new Python processes, alternating the sides:

* PySpark imported from spark-submit's ``pyspark.zip`` (as a plain driver does) versus from the
  installed, byte-compiled package (as ``prepare_driver_python`` makes our driver do);
* the first argument of a call into the JVM, which PySpark 4's NumPy input converters check
  by importing ``pyspark.testing.utils`` (and so pandas, pyarrow and NumPy), in every driver
  (the patch that avoided it gained under 3 % of the runtime benchmark and was removed);
* ``seatunnel-airflow plan`` of the runtime benchmark's job: the command line's compile before
  ``spark-submit`` starts, cold (plan cache off) and from the plan cache, beside a bare
  ``python -c pass``.

Writes benchmarks/results/driver_startup.md.

    python benchmarks/driver_startup.py [--runs K (7)]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from runtime_vs_pyspark import bin_dir, compile_bytecode, job_text

HERE = Path(__file__).resolve().parent

#: Timed in a child: ``setup`` runs first, untimed; the child prints the seconds ``step`` took, the
#: number of modules it imported and whether pandas is loaded after it.
CHILD = '''
import json, sys, time
{setup}
before = set(sys.modules)
t0 = time.perf_counter()
{step}
took = time.perf_counter() - t0
print(json.dumps({{"seconds": took, "modules": len(set(sys.modules) - before), "pandas": "pandas" in sys.modules}}))
'''

#: Where spark-submit's zip of the installed PySpark is (found without importing PySpark); both
#: sides of the import pair run this, one of them then puts the zip first on the path.
FIND_ZIP = '''
import importlib.util, os
bundle = os.path.join(importlib.util.find_spec("pyspark").submodule_search_locations[0], "python", "lib", "pyspark.zip")
'''

FIRST_ARGUMENT = '''
import py4j.protocol
for converter in py4j.protocol.INPUT_CONVERTER:
    converter.can_convert("text")
'''

PAIRS = {
    "import pyspark.sql": {
        "from spark-submit's pyspark.zip (a plain driver)": (FIND_ZIP + "sys.path.insert(0, bundle)",
                                                             "import pyspark.sql"),
        "from the installed package (our driver)": (FIND_ZIP, "import pyspark.sql"),
    },
    "first argument of a JVM call, after import pyspark.sql": {
        "PySpark's NumPy checks (every driver, ours too)": ("import pyspark.sql", FIRST_ARGUMENT),
    },
}


def child(setup: str, step: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD.format(setup=setup, step=step)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def wall(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    compile_bytecode()
    lines = []
    for title, sides in PAIRS.items():
        results: dict[str, list[dict]] = {name: [] for name in sides}
        for i in range(args.runs + 1):  # the first round is untimed (files into the page cache)
            for name in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
                result = child(*sides[name])
                if i:
                    results[name].append(result)
        lines += [f"### {title}", "", "| | median (ms) | min (ms) | modules imported | pandas imported |",
                  "|---|---:|---:|---:|---|"]
        for name, runs in results.items():
            seconds = [r["seconds"] for r in runs]
            lines.append(f"| {name} | {statistics.median(seconds) * 1000:.0f} | {min(seconds) * 1000:.0f} "
                         f"| {runs[0]['modules']} | {'yes' if runs[0]['pandas'] else 'no'} |")
        lines.append("")

    with tempfile.TemporaryDirectory(prefix="st-startup-") as work:
        conf = Path(work) / "job.conf"
        conf.write_text(job_text(Path(work) / "in", Path(work) / "out"))
        plan = [str(bin_dir() / "seatunnel-airflow"), "plan", str(conf), "--format", "json"]
        cached_env = {**os.environ, "SEATUNNEL_PLAN_CACHE": str(Path(work) / "cache")}
        sides = {
            "`python -c pass` (interpreter start alone)": ([sys.executable, "-c", "pass"], dict(os.environ)),
            "`seatunnel-airflow plan`, plan cache off": (plan, {**os.environ, "SEATUNNEL_PLAN_CACHE": "off"}),
            "`seatunnel-airflow plan`, from the plan cache": (plan, cached_env),
        }
        wall(plan, cached_env)  # fills the cache
        times: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(args.runs + 1):
            for name in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
                took = wall(*sides[name])
                if i:
                    times[name].append(took)
    lines += ["### the command line's compile of the runtime benchmark's job (whole process)", "",
              "| | median (ms) | min (ms) |", "|---|---:|---:|"]
    lines += [f"| {name} | {statistics.median(t) * 1000:.0f} | {min(t) * 1000:.0f} |" for name, t in times.items()]

    text = "\n".join([
        "# Pipeline start-up besides Spark", "",
        f"Generated by `python benchmarks/driver_startup.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}; medians of {args.runs} fresh processes a side "
        "(sides alternating, after an untimed round).", "", *lines, ""])
    out = HERE / "results" / "driver_startup.md"
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
