"""Small recurring syncs: spark-submit (a Spark application per pipeline) versus Connect mode (each
pipeline a session of a running Spark Connect server), side by side, in one run on one machine.

Jobs, each run both ways through ``seatunnel-airflow run`` (Connect mode: ``--remote``):

* **one 10-row pipeline** (FakeSource → LocalFile): the fixed cost of a pipeline;
* **the example job** (dags/configs/example.conf: 4 pipelines, 3,200 rows);
* **16 small pipelines** (16 FakeSource → LocalFile pairs of 100 rows), at most ``--max-parallel``
  (default 4) pipelines at once both ways;
* **large data**: runtime_vs_pyspark.py's job (a CSV of ``--rows`` rows, default 2,000,000, through
  a Sql filter and projection into Parquet), the same config both ways.

The server (``runtime/connect_server.py``, ``local[*]``, with a token) starts once before the rounds
and is warm for them: its start is reported apart (what ``make connect-server`` costs once). Rounds
alternate the order of the two ways; the result is the median wall time of each, and their ratio,
written to benchmarks/results/small_jobs.md.

    python benchmarks/small_jobs.py [--runs K (5)] [--rows N] [--max-parallel P (4)]
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import runtime_vs_pyspark as big  # noqa: E402

ONE = """
env {{ job.name = "one_small_pipeline", parallelism = 1 }}
source {{ FakeSource {{ plugin_output = "t", row.num = 10, schema = {{ fields {{ id = bigint, name = string }} }} }} }}
sink {{ LocalFile {{ plugin_input = "t", path = "{out}/one", file_format_type = "json" }} }}
"""


def sixteen(out: Path) -> str:
    """16 independent FakeSource → LocalFile pairs: 16 pipelines."""
    sources = "\n".join(f'  FakeSource {{ plugin_output = "t{i}", row.num = 100, '
                        f'schema = {{ fields {{ id = bigint, name = string }} }} }}' for i in range(16))
    sinks = "\n".join(f'  LocalFile {{ plugin_input = "t{i}", path = "{out}/t{i}", file_format_type = "json" }}'
                      for i in range(16))
    head = 'env { job.name = "sixteen_small_pipelines", parallelism = 1 }'
    return f"{head}\nsource {{\n{sources}\n}}\nsink {{\n{sinks}\n}}\n"


def timed(cmd: list[str], env: dict[str, str], metrics: Path | None = None) -> tuple[float, float | None]:
    """Wall seconds of ``cmd``, and with ``metrics`` (its ``--metrics-file``) the longest pipeline's own seconds."""
    t0 = time.monotonic()
    proc = subprocess.run([*cmd, *(["--metrics-file", str(metrics)] if metrics else [])], env=env,
                          capture_output=True, text=True)
    seconds = time.monotonic() - t0
    inside = None
    if metrics is not None and metrics.exists():
        inside = max(p.get("seconds") or 0 for p in json.loads(metrics.read_text())["pipelines"])
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed ({proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds, inside


def main() -> int:
    from airflow_provider_seatunnel.runtime import connect_server

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--max-parallel", type=int, default=4)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "small_jobs.md")
    args = ap.parse_args()
    big.compile_bytecode()
    work = Path(tempfile.mkdtemp(prefix="small-jobs-"))
    env = big.environment()
    cli = str(big.bin_dir() / "seatunnel-airflow")
    data = work / "data"
    big.generate(args.rows, data)
    jobs = {
        "one 10-row pipeline": ONE.format(out=work / "out"),
        "example job (4 pipelines, 3,200 rows)": (ROOT / "dags/configs/example.conf").read_text().replace(
            "${output_dir:/tmp/seatunnel-example/orders}", str(work / "out" / "example")),
        "16 small pipelines (100 rows each)": sixteen(work / "out"),
        f"large data ({args.rows:,} CSV rows → Sql → Parquet)": big.job_text(data, work / "out" / "big"),
    }
    confs = {}
    for i, (name, text) in enumerate(jobs.items()):
        confs[name] = work / f"job{i}.conf"
        confs[name].write_text(text)
    t0 = time.monotonic()
    server = connect_server.start(work / "server", port=_free_port(), master="local[*]")
    started = time.monotonic() - t0
    remote_env = {**env, connect_server.TOKEN_ENV: connect_server.token(work / "server")}
    ways = {
        "spark-submit": lambda conf: ([cli, "run", str(conf), "--master", "local[*]",
                                       "--max-parallel", str(args.max_parallel)], env),
        "Connect mode": lambda conf: ([cli, "run", str(conf), "--remote", server.address,
                                       "--max-parallel", str(args.max_parallel)], remote_env),
    }
    wall: dict[tuple[str, str], list[float]] = {(j, w): [] for j in jobs for w in ways}
    one_inside: list[float] = []  # the 10-row pipeline's own seconds in Connect mode
    try:
        for job in jobs:  # an untimed round warms both ways (and the server's JIT)
            for way in ways:
                timed(*ways[way](confs[job]))
        for r in range(args.runs):
            for job in jobs:
                order = list(ways) if r % 2 == 0 else list(reversed(ways))
                for way in order:
                    seconds, inside = timed(*ways[way](confs[job]), metrics=work / "metrics.json")
                    wall[job, way].append(seconds)
                    if job == next(iter(jobs)) and way == "Connect mode" and inside is not None:
                        one_inside.append(inside)
                    print(f"round {r + 1} {job} {way}: {wall[job, way][-1]:.2f} s", flush=True)
    finally:
        connect_server.stop(work / "server")
    args.out.write_text(report(args, jobs, wall, started, statistics.median(one_inside) if one_inside else None))
    print(args.out.read_text())
    return 0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def report(args: argparse.Namespace, jobs: dict[str, str], wall: dict[tuple[str, str], list[float]],
           server_start: float, one_inside: float | None) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Small jobs: spark-submit versus Connect mode", "",
        f"Generated by `python benchmarks/small_jobs.py` on {when}; {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, `local[*]` both ways, {args.runs} timed rounds after an untimed one (order "
        f"alternating), at most {args.max_parallel} pipelines at once. Wall time of `seatunnel-airflow run`, "
        "whole process (compile, Python start, Spark or the Connect client, commit). Connect mode runs against a "
        f"warm server; starting it took {server_start:.1f} s once.", "",
        "| job | spark-submit (median s) | Connect mode (median s) | Connect mode faster by |",
        "|---|---:|---:|---:|",
    ]
    for job in jobs:
        submit = statistics.median(wall[job, "spark-submit"])
        connect = statistics.median(wall[job, "Connect mode"])
        lines.append(f"| {job} | {submit:.2f} | {connect:.2f} | {submit / connect:.2f}× |")
    if one_inside is not None:
        lines += ["", f"Of the 10-row pipeline's Connect-mode wall time, the pipeline itself (opening its session, "
                  f"running, committing, releasing) took a median {one_inside:.2f} s; the rest is the command "
                  "line's process (Python, PySpark's client imports, compiling the config)."]
    lines += ["", "Every round's figures:", "", "| job | way | seconds |", "|---|---|---|"]
    for (job, way), values in wall.items():
        lines.append(f"| {job} | {way} | {', '.join(f'{v:.2f}' for v in values)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
