"""``seatunnel-airflow run`` versus a hand-written PySpark script, side by side.

Both read the same generated CSV (default 5,000,000 rows), apply the same Sql filter,
projection and expression, and write Parquet, each through ``spark-submit`` on
``local[*]``. Runs alternate (ours, theirs, ours, …) so drift hits both alike; the
result is the ratio of median wall times, written to benchmarks/results/runtime_vs_pyspark.md.

    python benchmarks/runtime_vs_pyspark.py [--rows N] [--runs K] [--keep-data DIR]
"""

from __future__ import annotations

import argparse
import os
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


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--runs", type=int, default=5)
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
    script = work / "hand_written.py"
    script.write_text(HAND_WRITTEN.format(query=QUERY))
    conf = work / "job.conf"
    ours_out, theirs_out = work / "ours_out", work / "theirs_out"
    conf.write_text(JOB.format(src=data, dst=ours_out, query=QUERY))
    ours_cmd = [str(bin_dir() / "seatunnel-airflow"), "run", str(conf), "--master", "local[*]",
                "--work-dir", str(work / "run")]
    theirs_cmd = [str(bin_dir() / "spark-submit"), "--master", "local[*]", str(script), str(data), str(theirs_out)]

    ours, theirs = [], []
    for i in range(args.runs):
        for name, cmd, out, times in (("ours", ours_cmd, ours_out, ours), ("hand-written", theirs_cmd,
                                                                          theirs_out, theirs)):
            shutil.rmtree(out, ignore_errors=True)
            took = timed(cmd, env)
            times.append(took)
            print(f"run {i + 1}/{args.runs} {name}: {took:.2f} s", flush=True)
    ratio = statistics.median(ours) / statistics.median(theirs)
    ours_rows = count_parquet(ours_out, env, work)
    theirs_rows = count_parquet(theirs_out, env, work)
    verdict = "met" if ratio <= 1.05 else "NOT met"
    table = textwrap.dedent(f"""\
        # seatunnel-airflow run vs hand-written PySpark

        Generated by `python benchmarks/runtime_vs_pyspark.py` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC;
        {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, `local[*]`, {args.runs} alternating runs each.

        Input: {args.rows:,} rows of CSV ({size_mb:.0f} MB). Job: CSV → Sql (`{QUERY}`) → Parquet (snappy, both).
        Rows written: ours {ours_rows:,}, hand-written {theirs_rows:,}.

        | | median wall time (s) | min (s) | max (s) |
        |---|---:|---:|---:|
        | `seatunnel-airflow run` | {statistics.median(ours):.2f} | {min(ours):.2f} | {max(ours):.2f} |
        | hand-written PySpark | {statistics.median(theirs):.2f} | {min(theirs):.2f} | {max(theirs):.2f} |

        Ratio (ours / hand-written, medians): **{ratio:.3f}** — target ≤ 1.05: {verdict}.
        """)
    out = HERE / "results" / "runtime_vs_pyspark.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    print(table)
    if not args.keep_data:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ours_rows == theirs_rows else 1


def count_parquet(path: Path, env: dict[str, str], work: Path) -> int:
    script = work / "count.py"
    script.write_text("import sys\nfrom pyspark.sql import SparkSession\n"
                      "s = SparkSession.builder.getOrCreate()\nprint('ROWS', s.read.parquet(sys.argv[1]).count())\n")
    proc = subprocess.run([str(bin_dir() / "spark-submit"), "--master", "local[*]", str(script), str(path)],
                          env=env, capture_output=True, text=True, check=True)
    return int(next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("ROWS")))


if __name__ == "__main__":
    sys.exit(main())
