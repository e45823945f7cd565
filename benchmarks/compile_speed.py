"""Compile-speed benchmark: how long a SeaTunnel job takes to plan, cold and cached.

    python benchmarks/compile_speed.py [--quick] [--output PATH]

For N = 1, 10, 100 and 1000 independent FakeSource → Sql → LocalFile chains it writes a
HOCON job config, then measures in fresh interpreter processes (so imports count, as in
a real ``seatunnel-airflow plan`` run or an Airflow DAG parse):

* cold: the import time of ``airflow_provider_seatunnel.plan.compiler`` and the time of
  ``compile_job(path, use_cache=False)`` (``time.perf_counter`` around the call);
* imports warmed: the same compile after a tiny job with another query, so the lazy
  imports of the first compile (sqlglot) are left out: the part that grows with N;
* cached: with ``SEATUNNEL_PLAN_CACHE`` pointing at a temporary directory, one process
  fills the cache, then a new process times ``compile_job(path)`` — the first call
  and the median of several calls (and, as a baseline, ``json.loads`` of the entry).

N chains are N pipelines, more than the default ``plan.max-pipelines`` (256) allows for
N = 1000, so the generated ``env`` raises that limit to ``max(256, N)``.

``--secrets``: every sink is a Jdbc sink whose ``password`` is ``${DB_PASSWORD}`` and the env
holds a literal ``spark.hadoop.fs.s3a.secret.key``, so the cache stores references and a hit
resolves them; the cached child also times ``load_job`` on the same text (the HOCON parse a
cache that re-read the secrets from the config would pay on every hit). Written to
``benchmarks/results/compile_speed_secrets.md``.

Every measurement is repeated in several processes and the medians are reported, with
the time per chain and the growth ratio t(1000)/t(100) (≈10 when growth is linear).
The Markdown table is printed and written to ``benchmarks/results/compile_speed.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "results" / "compile_speed.md"
SECRETS_OUTPUT = HERE / "results" / "compile_speed_secrets.md"
SECRET_ENV = {"DB_PASSWORD": "bench-db-password"}

SIZES = (1, 10, 100, 1000)
QUERY = "select id, upper(name) as name, amount * 2 as amount from {src} where amount > 10"
SCHEMA = "{ fields { id = bigint, name = string, amount = double } }"

# Targets for the 100-chain job.
TARGET_N = 100
TARGET_COLD_S = 1.0
TARGET_CACHED_S = 0.005
LINEAR_OK_RATIO = 12.0
LINEAR_WARN_RATIO = 15.0

CACHED_CALLS = 20  # compile_job calls per cached-measurement process
CHILD_TIMEOUT_S = 1800


# --------------------------------------------------------------------------- job configs


def job_config(n: int, rows: int = 100, secrets: bool = False) -> str:
    """A HOCON job with ``n`` independent FakeSource → Sql → LocalFile chains (``secrets``: → Jdbc,
    with a password from the environment, and a secret Spark setting)."""
    lines = [
        f"# Benchmark job: {n} independent FakeSource -> Sql -> {'Jdbc' if secrets else 'LocalFile'} chains.",
        "env {",
        f'  job.name = "bench_{n}_chains"',
        '  job.mode = "BATCH"',
        "  parallelism = 1",
        # N disconnected chains make N pipelines; the default limit is 256.
        f"  plan.max-pipelines = {max(256, n)}",
        *(['  spark.hadoop.fs.s3a.secret.key = "bench-s3-secret"'] if secrets else []),
        "}",
        "",
        "source {",
    ]
    for i in range(n):
        lines += [
            "  FakeSource {",
            f'    plugin_output = "src_{i}"',
            f"    row.num = {rows}",
            f"    schema = {SCHEMA}",
            "  }",
        ]
    lines += ["}", "", "transform {"]
    for i in range(n):
        lines += [
            "  Sql {",
            f'    plugin_input = "src_{i}"',
            f'    plugin_output = "out_{i}"',
            f'    query = "{QUERY.format(src=f"src_{i}")}"',
            "  }",
        ]
    lines += ["}", "", "sink {"]
    for i in range(n):
        lines += [
            "  Jdbc {",
            f'    plugin_input = "out_{i}"',
            '    url = "jdbc:postgresql://db:5432/bench"',
            '    driver = "org.postgresql.Driver"',
            '    user = "etl"',
            "    password = ${DB_PASSWORD}",
            "    generate_sink_sql = true",
            f'    table = "out_{i}"',
            "  }",
        ] if secrets else [
            "  LocalFile {",
            f'    plugin_input = "out_{i}"',
            f'    path = "/tmp/bench/out_{i}"',
            '    file_format_type = "parquet"',
            "  }",
        ]
    lines += ["}"]
    return "\n".join(lines) + "\n"


WARMUP_JOB = job_config(1).replace("src_0", "warmup_in").replace("out_0", "warmup_out")


def write_jobs(directory: Path, sizes: tuple[int, ...], secrets: bool = False) -> dict[int, Path]:
    paths = {}
    for n in sizes:
        path = directory / f"bench_{n}_chains.conf"
        path.write_text(job_config(n, secrets=secrets), encoding="utf-8")
        paths[n] = path
    return paths


# --------------------------------------------------------------------------- child side


def child(mode: str, path: str, calls: int) -> dict:
    """Runs in a fresh interpreter: import the compiler, compile, report times (seconds)."""
    t0 = time.perf_counter()
    import airflow_provider_seatunnel.plan.compiler as compiler

    import_s = time.perf_counter() - t0
    result: dict = {"import_s": import_s}
    if mode == "cold":
        t0 = time.perf_counter()
        plan = compiler.compile_job(path, use_cache=False)
        result["compile_s"] = time.perf_counter() - t0
    elif mode == "warmed":
        # A tiny job with another query first: the compiler's lazy imports (sqlglot) are
        # done, no parse of the measured job is cached. What remains grows with N.
        compiler.compile_text("warmup.conf", WARMUP_JOB)
        t0 = time.perf_counter()
        plan = compiler.compile_job(path, use_cache=False)
        result["compile_s"] = time.perf_counter() - t0
    elif mode == "fill":
        t0 = time.perf_counter()
        plan = compiler.compile_job(path)
        result["compile_s"] = time.perf_counter() - t0
    elif mode == "cached":
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            plan = compiler.compile_job(path)
            times.append(time.perf_counter() - t0)
        result["first_s"] = times[0]
        result["median_s"] = statistics.median(times)
        # Baseline: decoding the cache entry alone, with the same number of calls.
        (entry,) = Path(os.environ["SEATUNNEL_PLAN_CACHE"]).glob("*.json")
        raw = entry.read_text(encoding="utf-8")
        loads = []
        for _ in range(calls):
            t0 = time.perf_counter()
            decoded = json.loads(raw)
            loads.append(time.perf_counter() - t0)
            del decoded
        result["entry_bytes"] = len(raw.encode())
        result["json_loads_s"] = statistics.median(loads)
        # What a cache that re-read the secrets from the config would add to every hit: the parse.
        from airflow_provider_seatunnel.config.loader import load_job

        text = Path(path).read_text(encoding="utf-8")
        parses = []
        for _ in range(max(3, calls // 4)):
            t0 = time.perf_counter()
            load_job(path, None, text=text)
            parses.append(time.perf_counter() - t0)
        result["parse_first_s"] = parses[0]
        result["parse_median_s"] = statistics.median(parses)
        result["entry_has_secret"] = any(s.encode() in raw.encode() for s in (
            *SECRET_ENV.values(), "bench-s3-secret"))
    else:
        raise SystemExit(f"unknown child mode {mode!r}")
    result["pipelines"] = len(plan.pipelines)
    return result


def run_child(mode: str, path: Path, env: dict[str, str], calls: int = 1) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(path), "--calls", str(calls)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False)
    wall_s = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"child {mode} {path.name} failed ({proc.returncode}):\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall_s
    return result


# --------------------------------------------------------------------------- measurement


def median_of(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def measure(n: int, path: Path, repeats: int, cache_root: Path) -> dict:
    base_env = {k: v for k, v in os.environ.items() if k != "SEATUNNEL_PLAN_CACHE"}

    cold_env = {**base_env, "SEATUNNEL_PLAN_CACHE": "off"}
    cold = [run_child("cold", path, cold_env) for _ in range(repeats)]
    warmed = [run_child("warmed", path, cold_env) for _ in range(repeats)]

    cached = []
    for r in range(repeats):
        cache_dir = cache_root / f"n{n}-r{r}"  # a fresh, empty cache for every repetition
        cache_env = {**base_env, "SEATUNNEL_PLAN_CACHE": str(cache_dir)}
        run_child("fill", path, cache_env)
        if not any(cache_dir.glob("*.json")):
            raise RuntimeError(f"the cache at {cache_dir} was not filled")
        cached.append(run_child("cached", path, cache_env, calls=CACHED_CALLS))

    pipelines = {r["pipelines"] for r in cold + warmed + cached}
    if pipelines != {n}:
        raise RuntimeError(f"N={n}: expected {n} pipelines, got {sorted(pipelines)}")
    return {
        "n": n,
        "lines": len(path.read_text(encoding="utf-8").splitlines()),
        "repeats": repeats,
        "import_s": median_of(cold, "import_s"),
        "cold_s": median_of(cold, "compile_s"),
        "cold_wall_s": median_of(cold, "wall_s"),
        "warmed_s": median_of(warmed, "compile_s"),
        "cached_first_s": median_of(cached, "first_s"),
        "cached_median_s": median_of(cached, "median_s"),
        "entry_bytes": cached[0]["entry_bytes"],
        "json_loads_s": median_of(cached, "json_loads_s"),
        "parse_first_s": median_of(cached, "parse_first_s"),
        "parse_median_s": median_of(cached, "parse_median_s"),
        "entry_has_secret": any(r["entry_has_secret"] for r in cached),
    }


# --------------------------------------------------------------------------- report


def ms(seconds: float) -> str:
    value = seconds * 1000
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def us(seconds: float) -> str:
    value = seconds * 1e6
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'})"
            f", {cpu}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()} ({platform.python_implementation()})")


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("airflow-provider-seatunnel")
    except Exception:  # only decorates the report
        return "?"


def ratio(rows: dict[int, dict], key: str) -> float | None:
    if 100 in rows and 1000 in rows and rows[100][key] > 0:
        return rows[1000][key] / rows[100][key]
    return None


def report(rows: dict[int, dict], args: argparse.Namespace, total_s: float) -> tuple[str, list[str]]:
    warnings: list[str] = []
    lazy = f", ≈{ms(rows[1]['cold_s'] - rows[1]['warmed_s'])} ms here" if 1 in rows else ""
    out = [
        "# Compile speed",
        "",
        f"Generated by `python benchmarks/compile_speed.py{' --quick' if args.quick else ''}"
        f"{' --secrets' if args.secrets else ''}` "
        f"on {dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} "
        f"(package {package_version()}, run took {total_s:.0f} s).",
        "",
        f"* Machine: {machine()}",
        f"* Jobs: N independent `FakeSource → Sql → {'Jdbc' if args.secrets else 'LocalFile'}` chains in one "
        "HOCON config "
        "(one option per line), N pipelines each; `env.plan.max-pipelines = max(256, N)`, since the "
        "default limit of 256 pipelines rejects the 1000-chain job.",
        "* Every figure is the median over fresh interpreter processes (column *runs*). "
        "*import*: `import airflow_provider_seatunnel.plan.compiler`; *cold*: "
        "`compile_job(path, use_cache=False)` after the import; *process*: the whole "
        "subprocess as seen from outside (interpreter start + import + compile); *cached*: "
        f"`compile_job(path)` on a filled `SEATUNNEL_PLAN_CACHE`, first call of a new process "
        f"and median of {CACHED_CALLS} calls in that process (*json.loads of entry*: decoding that cache "
        "file alone, the same number of times, as a baseline); *imports warmed*: `compile_job(path, "
        "use_cache=False)` after compiling a tiny job with a different query in the same process, so the "
        f"compiler's lazy imports (sqlglot{lazy}) are not counted — the part that grows with N.",
        "",
        "| N chains | config lines | runs | import (ms) | cold compile (ms) | cold / chain (ms) "
        "| cold process (ms) | compile, imports warmed (ms) | warmed / chain (ms) "
        "| cached 1st call (ms) | cached median (ms) | cached / chain (µs) | cache entry (KB) "
        "| json.loads of entry (ms) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, r in sorted(rows.items()):
        out.append(
            f"| {n:,} | {r['lines']:,} | {r['repeats']} | {ms(r['import_s'])} | {ms(r['cold_s'])} "
            f"| {ms(r['cold_s'] / n)} | {ms(r['cold_wall_s'])} | {ms(r['warmed_s'])} | {ms(r['warmed_s'] / n)} "
            f"| {ms(r['cached_first_s'])} "
            f"| {ms(r['cached_median_s'])} | {us(r['cached_median_s'] / n)} | {r['entry_bytes'] / 1024:,.0f} "
            f"| {ms(r['json_loads_s'])} |"
        )

    out += ["", "## Growth", ""]
    for key, label in (("cold_s", "cold compile"), ("warmed_s", "compile, imports warmed"),
                       ("cached_first_s", "cached, first call"),
                       ("cached_median_s", "cached, median"),
                       ("json_loads_s", "baseline: json.loads of the cache entry alone")):
        value = ratio(rows, key)
        if value is None:
            continue
        if value <= LINEAR_OK_RATIO:
            verdict = "≈ linear"
        elif value <= LINEAR_WARN_RATIO:
            verdict = "somewhat super-linear"
        else:
            verdict = "SUPER-LINEAR"
        out.append(f"* {label}: t(1000) / t(100) = **{value:.1f}** ({verdict}; 10 is linear)")
        if value > LINEAR_WARN_RATIO and key != "json_loads_s":
            why = ""
            baseline = ratio(rows, "json_loads_s")
            if key.startswith("cached") and baseline is not None and baseline > LINEAR_WARN_RATIO:
                why = (f"; decoding the cache entry alone grows x{baseline:.1f} too, so this is the "
                       "interpreter's memory/GC cost of a large JSON, not the compiler's algorithm")
            warnings.append(f"WARNING: {label} grows super-linearly: t(1000)/t(100) = {value:.1f} "
                            f"(> {LINEAR_WARN_RATIO:.0f}){why}")
    if ratio(rows, "cold_s") is None:
        out.append("* (needs the N = 100 and N = 1000 jobs)")

    out += ["", f"## Targets (the {TARGET_N}-chain job)", ""]
    if TARGET_N in rows:
        r = rows[TARGET_N]
        cold_met = r["cold_s"] < TARGET_COLD_S
        cached_met = r["cached_median_s"] < TARGET_CACHED_S
        first_met = r["cached_first_s"] < TARGET_CACHED_S
        out += [
            "| target | measured | |",
            "|---|---:|---|",
            f"| cold compile < {TARGET_COLD_S * 1000:,.0f} ms | {ms(r['cold_s'])} ms "
            f"| {'met' if cold_met else '**NOT met**'} |",
            f"| (cold, import + compile) | {ms(r['import_s'] + r['cold_s'])} ms "
            f"| {'within' if r['import_s'] + r['cold_s'] < TARGET_COLD_S else 'over'} |",
            f"| cached < {TARGET_CACHED_S * 1000:g} ms (median call) | {ms(r['cached_median_s'])} ms "
            f"| {'met' if cached_met else '**NOT met**'} |",
            f"| (cached, first call in a process) | {ms(r['cached_first_s'])} ms "
            f"| {'within' if first_met else 'over'} |",
        ]
        if not cold_met:
            warnings.append(f"WARNING: target NOT met: {TARGET_N}-chain cold compile {ms(r['cold_s'])} ms "
                            f"(target < {TARGET_COLD_S * 1000:,.0f} ms)")
        if not cached_met:
            warnings.append(f"WARNING: target NOT met: {TARGET_N}-chain cached compile "
                            f"{ms(r['cached_median_s'])} ms (target < {TARGET_CACHED_S * 1000:g} ms)")
    else:
        out.append(f"(the {TARGET_N}-chain job was not measured)")

    if args.secrets:
        out += secrets_section(rows)
    if warnings:
        out += ["", "## Warnings", "", *[f"* {w}" for w in warnings]]
    return "\n".join(out) + "\n", warnings


def secrets_section(rows: dict[int, dict]) -> list[str]:
    """The DAG-parse cost of each way to keep secrets out of the cache, per job size."""
    out = ["", "## Secrets: the cost of a cache hit without secrets on disk", "",
           "Every sink's `password` is `${DB_PASSWORD}` and the env holds a literal secret Spark setting. "
           "*references* (what the cache does): the entry holds the plan as shown and, for each hidden "
           "value, where it came from, resolved on a hit (`cached` columns above). *recompile on secrets*: "
           "a hit on a plan with secrets compiles again (the cold and warmed compiles above). *re-read from "
           "the config*: a hit parses the config text again for the values (`load_job`, HOCON parse and "
           "substitution only: a lower bound) on top of a hit (its columns: the parse plus the references' "
           "hit, first call and median).",
           "",
           f"Load average when the run ended: {', '.join(f'{x:.1f}' for x in os.getloadavg())} (on "
           f"{os.cpu_count()} CPUs): compare the columns of one run with each other, not across runs.", "",
           "| N chains | references: 1st call (ms) | references: median (ms) | recompile: cold (ms) "
           "| recompile: imports warmed (ms) | re-read: 1st call (ms) | re-read: median (ms) "
           "| secret in the entry |",
           "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for n, r in sorted(rows.items()):
        out.append(f"| {n:,} | {ms(r['cached_first_s'])} | {ms(r['cached_median_s'])} | {ms(r['cold_s'])} "
                   f"| {ms(r['warmed_s'])} | {ms(r['parse_first_s'] + r['cached_first_s'])} "
                   f"| {ms(r['parse_median_s'] + r['cached_median_s'])} "
                   f"| {'**yes**' if r['entry_has_secret'] else 'no'} |")
    return out


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (2, and 1 for N = 1000)")
    parser.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES,
                        help="comma-separated chain counts (default: 1,10,100,1000)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the Markdown report to write")
    parser.add_argument("--keep", type=Path, default=None, help="write the generated configs to this directory")
    parser.add_argument("--secrets", action="store_true",
                        help="Jdbc sinks with a password from the environment, and a secret Spark setting")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.calls)))
        return 0

    if args.secrets:
        os.environ.update(SECRET_ENV)  # the children inherit it
        if args.output == DEFAULT_OUTPUT:
            args.output = SECRETS_OUTPUT
    started = time.perf_counter()
    rows: dict[int, dict] = {}
    with tempfile.TemporaryDirectory(prefix="seatunnel-bench-") as tmp:
        tmp_path = Path(tmp)
        job_dir = args.keep or tmp_path / "jobs"
        job_dir.mkdir(parents=True, exist_ok=True)
        paths = write_jobs(job_dir, args.sizes, args.secrets)
        for n in args.sizes:
            repeats = (1 if n >= 1000 else 2) if args.quick else (3 if n >= 1000 else 5)
            print(f"N={n:>5}: {repeats} runs ...", end=" ", flush=True, file=sys.stderr)
            rows[n] = r = measure(n, paths[n], repeats, tmp_path / "cache")
            print(f"cold {ms(r['cold_s'])} ms, cached {ms(r['cached_median_s'])} ms", file=sys.stderr)

    text, warnings = report(rows, args, time.perf_counter() - started)
    print(text)
    for w in warnings:
        print(w)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
