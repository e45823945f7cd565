"""``seatunnel-airflow run`` versus a hand-written PySpark script, side by side.

Both read the same generated CSV (default 5,000,000 rows), apply the same Sql filter,
projection and expression, and write Parquet, each through ``spark-submit`` on
``local[*]``. A third side runs the hand-written script with our driver's Python start-up
(PySpark from the installed package rather than spark-submit's zip; no pandas imported for
NumPy checks): like for like. After an untimed round, rounds run each side once, every other
round in reverse order, so drift hits all alike. The result is the ratio of median wall times,
written to benchmarks/results/runtime_vs_pyspark.md with what tells how far to trust it on a
shared machine: the median of the per-round ratios, a bootstrap 90 % interval of the ratio of
medians (rounds resampled), and the CPU seconds of each side's whole process tree.

    python benchmarks/runtime_vs_pyspark.py [--rows N] [--runs K (11)] [--warmup W (1)] [--keep-data DIR]
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
from datetime import datetime, timezone
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

#: The same script with the start of our pipeline driver's Python (runtime/session.py,
#: ``prepare_driver_python``): PySpark imported from the installed package (byte-compiled) rather
#: than from spark-submit's zip of it, and no pandas, pyarrow or NumPy imported to rule out NumPy
#: values. Like for like, this side shows what the rest of ours costs.
LIKE_FOR_LIKE = '''
from airflow_provider_seatunnel.runtime.session import prepare_driver_python
prepare_driver_python()
'''

JOB = '''
env {{
  job.name = "bench"
  job.mode = "BATCH"
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
    conf.write_text(JOB.format(src=data, dst=work / "ours_out", query=QUERY))
    submit = [str(bin_dir() / "spark-submit"), "--master", "local[*]"]
    sides = {  # name -> (command, output directory)
        "ours": ([str(bin_dir() / "seatunnel-airflow"), "run", str(conf), "--master", "local[*]",
                  "--work-dir", str(work / "run")], work / "ours_out"),
        "hand-written": ([*submit, str(plain), str(data), str(work / "theirs_out")], work / "theirs_out"),
        "like for like": ([*submit, str(like), str(data), str(work / "like_out")], work / "like_out"),
    }
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.warmup):  # untimed: the input into the page cache, every side's files read once
        for command, out in sides.values():
            shutil.rmtree(out, ignore_errors=True)
            timed(command, env)
    for i in range(args.runs):
        # a round runs each side once; every other round in reverse, so a drift favours no side
        for name in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
            command, out = sides[name]
            shutil.rmtree(out, ignore_errors=True)
            took, used = timed(command, env)
            wall[name].append(took)
            cpu[name].append(used)
            print(f"run {i + 1}/{args.runs} {name}: {took:.2f} s ({used:.1f} CPU s)", flush=True)
    rows = {name: count_parquet(out, env, work) for name, (_command, out) in sides.items()}
    ratio = statistics.median(wall["ours"]) / statistics.median(wall["hand-written"])
    verdict = "met" if ratio <= 1.05 else "NOT met"
    like_ratio = statistics.median(wall["ours"]) / statistics.median(wall["like for like"])
    table = textwrap.dedent(f"""\
        # seatunnel-airflow run vs hand-written PySpark

        Generated by `python benchmarks/runtime_vs_pyspark.py` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC;
        {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, `local[*]`, {args.runs} rounds (each side once a round,
        every other round in reverse order) after {args.warmup} untimed round{"s" if args.warmup != 1 else ""}.

        Input: {args.rows:,} rows of CSV ({size_mb:.0f} MB). Job: CSV → Sql (`{QUERY}`) → Parquet (snappy, all).
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
        zip of it; no pandas, pyarrow or NumPy imported to rule out NumPy values): ours / like for
        like **{like_ratio:.3f}**.
        {trust("ours / like for like", wall["ours"], wall["like for like"], cpu["ours"], cpu["like for like"])}

        Wall seconds per round (ours / hand-written / like for like):
        {", ".join("/".join(f"{wall[name][i]:.1f}" for name in sides) for i in range(args.runs))}.
        """)
    out = HERE / "results" / "runtime_vs_pyspark.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    print(table)
    if not args.keep_data:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if len(set(rows.values())) == 1 else 1


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
