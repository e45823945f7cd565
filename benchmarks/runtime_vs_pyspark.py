"""``seatunnel-airflow run`` versus a hand-written PySpark script, side by side.

Both read the same generated CSV (default 5,000,000 rows), apply the same Sql filter,
projection and expression, and write Parquet, each through ``spark-submit`` on
``local[*]`` (ours at a parallelism of the number of cores). A third side runs the hand-written
script with our driver's Python start-up (PySpark from the installed package rather than
spark-submit's zip): like for like. After an untimed round, rounds run each side once, every
other round in reverse order, so drift hits all alike. The result is the ratio of median wall times,
written to benchmarks/results/runtime_vs_pyspark.md with what tells how far to trust it on a
shared machine: the median of the per-round ratios, a bootstrap 90 % interval of the ratio of
medians (rounds resampled), and the CPU seconds of each side's whole process tree.

    python benchmarks/runtime_vs_pyspark.py [--rows N] [--runs K (11)] [--warmup W (1)] [--keep-data DIR]
                                            [--variants]

``--variants`` measures what each of the runtime's PySpark patches gains (runtime/pyspark_internals.py,
and the driver's import of the installed PySpark): it adds a side of ours for each turned off,
and one with all of them off, through the benchmark-only switch ``SEATUNNEL_PYSPARK_PATCHES``
that the pipeline driver reads, and writes benchmarks/results/pyspark_internals.md instead.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERY = ("SELECT id, upper(name) AS name, amount * 1.1 AS amount_with_tax, category "
         "FROM orders WHERE amount > 50 AND category <> 'c3'")

HAND_WRITTEN = '''
import sys
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType, StructField, LongType, StringType, DoubleType

src, dst = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.appName("hand-written").getOrCreate()
schema = StructType([StructField("id", LongType()), StructField("name", StringType()),
                     StructField("amount", DoubleType()), StructField("category", StringType())])
spark.read.schema(schema).option("header", "false").csv(src).createOrReplaceTempView("orders")
spark.sql("""{query}""").write.mode("overwrite").option("compression", "snappy").parquet(dst)
spark.stop()
'''

#: The same script with the start of our pipeline driver's Python (runtime/pyspark_internals.py,
#: ``prepare_driver_python``): PySpark imported from the installed package (byte-compiled) rather
#: than from spark-submit's zip of it. Like for like, this side shows what the rest of ours costs.
LIKE_FOR_LIKE = '''
from airflow_provider_seatunnel.runtime.pyspark_internals import prepare_driver_python
prepare_driver_python()
'''

#: The job of ours. ``parallelism`` is the number of cores, as ``local[*]`` gives the hand-written
#: script: a source reads in exactly the parallelism the plan gives it (the job's, default 1).
JOB = '''
env {{
  job.name = "bench"
  job.mode = "BATCH"
  parallelism = {parallelism}
}}
source {{
  LocalFile {{
    plugin_output = "orders"
    path = "{src}"
    file_format_type = "csv"
    schema = {{ fields {{ id = bigint, name = string, amount = double, category = string }} }}
  }}
}}
transform {{
  Sql {{
    plugin_input = "orders"
    plugin_output = "out"
    query = "{query}"
  }}
}}
sink {{
  LocalFile {{
    plugin_input = "out"
    path = "{dst}"
    file_format_type = "parquet"
    compress_codec = "snappy"
  }}
}}
'''


def job_text(src: Path, dst: Path) -> str:
    return JOB.format(src=src, dst=dst, query=QUERY, parallelism=os.cpu_count() or 1)


def bin_dir() -> Path:
    return Path(sys.executable).parent


def environment() -> dict[str, str]:
    from airflow_provider_seatunnel.runtime.launcher import submit_environment

    env = submit_environment()
    env["SEATUNNEL_PLAN_CACHE"] = "off"
    return env


def compile_bytecode() -> None:
    """Byte-compile the package, as pip does when it installs the wheel: an editable install
    under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module on every run."""
    import compileall

    import airflow_provider_seatunnel

    compileall.compile_dir(Path(airflow_provider_seatunnel.__file__).parent, quiet=1)


def generate(rows: int, directory: Path) -> None:
    """CSV input written by Spark itself (8 files)."""
    script = directory.parent / "gen.py"
    script.write_text(textwrap.dedent(f'''
        from pyspark.sql import SparkSession, functions as F
        spark = SparkSession.builder.appName("gen").getOrCreate()
        df = spark.range(0, {rows}, numPartitions=8).select(
            F.col("id"),
            F.concat(F.lit("customer_"), (F.col("id") % 10007).cast("string")).alias("name"),
            (F.rand(7) * 100).alias("amount"),
            F.concat(F.lit("c"), (F.col("id") % 5).cast("string")).alias("category"))
        df.write.mode("overwrite").csv("{directory}")
        spark.stop()
    '''))
    subprocess.run([str(bin_dir() / "spark-submit"), "--master", "local[*]", str(script)], check=True,
                   env=environment(), capture_output=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the command's whole process tree: the CLI,
    spark-submit's JVM, the Python driver) of one run."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return took, cpu


def bootstrap_interval(ours: list[float], theirs: list[float], level: float = 0.90,
                       samples: int = 10_000) -> tuple[float, float]:
    """A percentile bootstrap interval of median(ours) / median(theirs), resampling the rounds
    (run i of each side ran back to back, so a round shares the machine's state)."""
    rng = random.Random(1)
    n = len(ours)
    ratios = []
    for _ in range(samples):
        idx = [rng.randrange(n) for _ in range(n)]
        ratios.append(statistics.median(ours[i] for i in idx) / statistics.median(theirs[i] for i in idx))
    ratios.sort()
    tail = (1 - level) / 2
    return ratios[int(tail * samples)], ratios[min(samples - 1, int((1 - tail) * samples))]


def table_row(name: str, wall: list[float], cpu: list[float]) -> str:
    return (f"| {name} | {statistics.median(wall):.2f} | {min(wall):.2f} | {max(wall):.2f} "
            f"| {statistics.median(cpu):.1f} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds before the timed ones")
    ap.add_argument("--keep-data", type=Path, help="reuse/keep the generated CSV here")
    ap.add_argument("--variants", action="store_true",
                    help="also ours with each PySpark patch off; writes results/pyspark_internals.md")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="st-bench-"))
    data = args.keep_data or work / "orders_csv"
    if not (data.exists() and any(data.glob("*.csv"))):
        print(f"generating {args.rows:,} rows of CSV into {data} ...", flush=True)
        generate(args.rows, data)
    size_mb = sum(f.stat().st_size for f in data.glob("*.csv")) / 1e6
    compile_bytecode()
    env = environment()
    plain, like = work / "hand_written.py", work / "hand_written_like_for_like.py"
    plain.write_text(HAND_WRITTEN.format(query=QUERY))
    like.write_text(LIKE_FOR_LIKE + HAND_WRITTEN.format(query=QUERY))
    conf = work / "job.conf"
    conf.write_text(job_text(data, work / "ours_out"))
    submit = [str(bin_dir() / "spark-submit"), "--master", "local[*]"]
    sides = {  # name -> (command, output directory, environment)
        "ours": (ours_command(conf, work / "run"), work / "ours_out", env),
        "hand-written": ([*submit, str(plain), str(data), str(work / "theirs_out")], work / "theirs_out", env),
        "like for like": ([*submit, str(like), str(data), str(work / "like_out")], work / "like_out", env),
    }
    if args.variants:  # the patches against hand-written and against each other: no like-for-like side
        del sides["like for like"]
        sides.update(variant_sides(work, data, env))
    wall, cpu = run_rounds(sides, args.runs, args.warmup)
    rows = {name: count_parquet(out, env, work) for name, (_command, out, _env) in sides.items()}
    text = (variants_report(args, sides, wall, cpu, rows, size_mb) if args.variants
            else report(args, sides, wall, cpu, rows, size_mb))
    out = HERE / "results" / ("pyspark_internals.md" if args.variants else "runtime_vs_pyspark.md")
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    print(text)
    if not args.keep_data:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if len(set(rows.values())) == 1 else 1


def report(args: argparse.Namespace, sides: dict, wall: dict[str, list[float]], cpu: dict[str, list[float]],
           rows: dict[str, int], size_mb: float) -> str:
    """benchmarks/results/runtime_vs_pyspark.md: ours against hand-written and like for like."""
    ratio = statistics.median(wall["ours"]) / statistics.median(wall["hand-written"])
    verdict = "met" if ratio <= 1.05 else "NOT met"
    like_ratio = statistics.median(wall["ours"]) / statistics.median(wall["like for like"])
    return textwrap.dedent(f"""\
        # seatunnel-airflow run vs hand-written PySpark

        Generated by `python benchmarks/runtime_vs_pyspark.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC;
        {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, `local[*]`, {args.runs} rounds (each side once a round,
        every other round in reverse order) after {args.warmup} untimed round{"s" if args.warmup != 1 else ""}.

        Input: {args.rows:,} rows of CSV ({size_mb:.0f} MB). Job: CSV → Sql (`{QUERY}`) → Parquet (snappy, all);
        ours at `parallelism = {os.cpu_count()}` (the cores `local[*]` gives the hand-written script).
        Rows written: {", ".join(f"{name} {n:,}" for name, n in rows.items())}.

        | | median wall time (s) | min (s) | max (s) | median CPU time (s) |
        |---|---:|---:|---:|---:|
        {table_row("`seatunnel-airflow run`", wall["ours"], cpu["ours"])}
        {table_row("hand-written PySpark", wall["hand-written"], cpu["hand-written"])}
        {table_row("hand-written, started as our driver starts", wall["like for like"], cpu["like for like"])}

        Ratio (ours / hand-written, medians): **{ratio:.3f}** — target ≤ 1.05: {verdict}.

        {trust("ours / hand-written", wall["ours"], wall["hand-written"], cpu["ours"], cpu["hand-written"])}

        Like for like, the hand-written script with our pipeline driver's Python start-up (PySpark
        imported from the installed package, whose modules are byte-compiled, not from spark-submit's
        zip of it): ours / like for like **{like_ratio:.3f}**.
        {trust("ours / like for like", wall["ours"], wall["like for like"], cpu["ours"], cpu["like for like"])}

        Wall seconds per round (ours / hand-written / like for like):
        {", ".join("/".join(f"{wall[name][i]:.1f}" for name in sides) for i in range(args.runs))}.
        """)


#: the switches of runtime/pyspark_internals.py that --variants turns off one at a time
PATCH_SWITCHES = ("installed_pyspark", "status_store_counts")


def ours_command(conf: Path, run_dir: Path) -> list[str]:
    return [str(bin_dir() / "seatunnel-airflow"), "run", str(conf), "--master", "local[*]", "--work-dir", str(run_dir)]


def variant_sides(work: Path, data: Path, env: dict[str, str]) -> dict[str, tuple[list[str], Path, dict[str, str]]]:
    """Ours with each PySpark patch off, and with all of them off (``SEATUNNEL_PYSPARK_PATCHES``,
    read by the pipeline driver; benchmark-only): the same job, each into its own directory."""
    sides = {}
    for patch in (*PATCH_SWITCHES, "every patch"):
        keep = "off" if patch == "every patch" else ",".join(p for p in PATCH_SWITCHES if p != patch)
        conf, out = work / f"job-{patch.replace(' ', '-')}.conf", work / f"out-{patch.replace(' ', '-')}"
        conf.write_text(job_text(data, out))
        sides[f"ours, {patch} off"] = (ours_command(conf, work / f"run-{patch.replace(' ', '-')}"), out,
                                       {**env, "SEATUNNEL_PYSPARK_PATCHES": keep})
    return sides


def run_rounds(sides: dict[str, tuple[list[str], Path, dict[str, str]]], runs: int,
               warmup: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds of each side, ``runs`` rounds after ``warmup`` untimed ones."""
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(warmup):  # untimed: the input into the page cache, every side's files read once
        for command, out, env in sides.values():
            shutil.rmtree(out, ignore_errors=True)
            timed(command, env)
    for i in range(runs):
        # a round runs each side once; every other round in reverse, so a drift favours no side
        for name in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
            command, out, env = sides[name]
            shutil.rmtree(out, ignore_errors=True)
            took, used = timed(command, env)
            wall[name].append(took)
            cpu[name].append(used)
            print(f"run {i + 1}/{runs} {name}: {took:.2f} s ({used:.1f} CPU s)", flush=True)
    return wall, cpu


def _gain(off: list[float], on: list[float]) -> str:
    """What turning a patch off costs: the median of the per-round ratios off / on, the ratio of
    the medians, and a bootstrap 90 % interval of the latter (as percentages)."""
    low, high = bootstrap_interval(off, on)
    pairs = statistics.median(o / t for o, t in zip(off, on, strict=True))
    return (f"{pairs - 1:+.1%} (medians {statistics.median(off) / statistics.median(on) - 1:+.1%}; "
            f"{low - 1:+.1%} to {high - 1:+.1%})")


def variants_report(args: argparse.Namespace, sides: dict, wall: dict[str, list[float]], cpu: dict[str, list[float]],
                    rows: dict[str, int], size_mb: float) -> str:
    """The table of --variants: each side's median against hand-written, and each patch's gain
    (the side with it off against ours, per round: a patch gains what turning it off costs)."""
    hand = statistics.median(wall["hand-written"])
    lines = ["| variant | median wall time (s) | min–max (s) | ratio to hand-written (medians) "
             "| gain of the patch, wall: off / ours per round (medians; 90 % interval) | median CPU (s) "
             "| gain of the patch, CPU | the patch (gain ≥ 3 %) | rounds |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for name in sides:
        med = statistics.median(wall[name])
        off = name.startswith("ours,")
        gain = statistics.median(o / t for o, t in zip(wall[name], wall["ours"], strict=True)) - 1 if off else 0
        verdict = "" if not off or name.endswith("every patch off") else "kept" if gain >= 0.03 else "removed"
        lines.append(f"| {name} | {med:.2f} | {min(wall[name]):.2f}–{max(wall[name]):.2f} | {med / hand:.3f} "
                     f"| {_gain(wall[name], wall['ours']) if off else ''} | {statistics.median(cpu[name]):.1f} "
                     f"| {_gain(cpu[name], cpu['ours']) if off else ''} | {verdict} | {len(wall[name])} |")
    per_round = ", ".join("/".join(f"{wall[name][i]:.1f}" for name in sides) for i in range(args.runs))
    cpu_round = ", ".join("/".join(f"{cpu[name][i]:.1f}" for name in sides) for i in range(args.runs))
    return "\n".join([
        "# What each PySpark patch gains: `seatunnel-airflow run` with it on and off", "",
        f"Generated by `python benchmarks/runtime_vs_pyspark.py --variants --runs {args.runs}` on "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
        f"`local[*]`, {args.runs} rounds (each side once a round, every other round in reverse order) after "
        f"{args.warmup} untimed round{'s' if args.warmup != 1 else ''}; the machine was shared with other jobs.", "",
        f"Input: {args.rows:,} rows of CSV ({size_mb:.0f} MB). Job: CSV → Sql → Parquet, as in runtime_vs_pyspark.md "
        f"(`parallelism = {os.cpu_count()}`).",
        f"Rows written: {', '.join(f'{name} {n:,}' for name, n in rows.items())}.", "",
        "A side `ours, X off` runs with `SEATUNNEL_PYSPARK_PATCHES` naming every patch but X (benchmark-only).",
        "A patch gains what turning it off costs, per round (the rounds ran each side back to back): the median",
        "of the per-round ratios `ours, X off` / `ours`. One gaining under 3 % of the run is removed from",
        "runtime/pyspark_internals.py; the others stay there, each guarded by the PySpark version it was written for.",
        "",
        *lines, "", f"Wall seconds per round ({' / '.join(sides)}):", per_round + ".", "",
        "CPU seconds per round (user + system, whole process trees), same order:", cpu_round + ".", ""])


def trust(label: str, ours: list[float], theirs: list[float], ours_cpu: list[float], theirs_cpu: list[float]) -> str:
    """How far to trust a ratio of medians on a shared machine."""
    low, high = bootstrap_interval(ours, theirs)
    pairs = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
    return (f"{label}: median of the per-round ratios {pairs:.3f}; bootstrap 90 % interval of the ratio of "
            f"medians {low:.3f}–{high:.3f}; CPU time ratio (medians, whole process trees) "
            f"{statistics.median(ours_cpu) / statistics.median(theirs_cpu):.3f}.")


def count_parquet(path: Path, env: dict[str, str], work: Path) -> int:
    script = work / "count.py"
    script.write_text("import sys\nfrom pyspark.sql import SparkSession\n"
                      "s = SparkSession.builder.getOrCreate()\nprint('ROWS', s.read.parquet(sys.argv[1]).count())\n")
    proc = subprocess.run([str(bin_dir() / "spark-submit"), "--master", "local[*]", str(script), str(path)],
                          env=env, capture_output=True, text=True, check=True)
    return int(next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("ROWS")))


if __name__ == "__main__":
    sys.exit(main())
