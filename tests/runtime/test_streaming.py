"""STREAMING jobs on real Spark: incremental runs, restores after faults, checkpoints across recompiles,
micro-batch metrics, FakeSource's split stream, watermarked aggregations, timeouts and graceful stops."""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors import localfile as lf
from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.launcher import is_pipeline_driver
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.errors import AssertionFailed, PipelineError

from .test_no_python_udfs import PYTHON_NODES

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")
BATCH_LINE = re.compile(r"micro-batch (\d+): read (\d+) rows, wrote (\d+) rows in (\d+) ms")


def stream(spark, plan, pipeline=None, run_id="run", attempt=1, options=None, events=None, stop=None):
    ctx = RunContext(spark, plan, pipeline or plan.pipelines[0], run_id, attempt, options or {})
    return run_streaming_pipeline(ctx, on_event=events.append if events is not None else None, stop=stop)


def add_csv(directory: Path, name: str, ids: range) -> list[int]:
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{name}.tmp"  # hidden while written: the stream never sees half a file
    tmp.write_text("".join(f"{i},name{i}\n" for i in ids))
    tmp.rename(directory / name)
    return list(ids)


def sink_rows(target: Path) -> list[dict]:
    """Rows a reader of a LocalFile target sees (json files)."""
    if not target.exists():
        return []
    return [json.loads(line) for f in lf.list_input_files({"path": str(target)})
            for line in Path(f).read_text().splitlines() if line]


def assert_once(rows: list[dict], expected: list[int]) -> None:
    counts = Counter(r["id"] for r in rows)
    assert [i for i, n in counts.items() if n > 1] == [], "rows written twice"
    assert sorted(counts) == sorted(expected)


def csv_job(tmp_path: Path, extra_env: str = "", sink_extra: str = "", more: str = "") -> str:
    return f"""
env {{
  job.mode = "STREAMING"
  job.name = "sync"
  checkpoint.root = "{tmp_path}/checkpoints"
  {extra_env}
}}
source {{
  LocalFile {{ plugin_output = "orders", path = "{tmp_path}/in", file_format_type = "csv",
              schema = {{ fields {{ id = bigint, name = string }} }} }}
  {more}
}}
sink {{
  LocalFile {{ plugin_input = "orders", path = "{tmp_path}/out", file_format_type = "json",
              data_save_mode = "DROP_DATA" {sink_extra} }}
}}
"""


def test_incremental_sync_three_runs_each_row_once_with_micro_batch_metrics(spark, write_conf, tmp_path):
    """(2) + (5): availableNow runs, files added between them: each run reads only the new files; DROP_DATA
    runs once per stream (not per run or micro-batch); metrics per micro-batch are logged and summed."""
    plan = compile_job(write_conf(csv_job(tmp_path)), use_cache=False)
    expected = add_csv(tmp_path / "in", "day1.csv", range(0, 5))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "stale.json").write_text('{"id": -1}\n')  # dropped by DROP_DATA, once
    results = []
    for run, new in enumerate([None, ("day2.csv", range(5, 9)), ("day3.csv", range(9, 16))], 1):
        if new:
            expected += add_csv(tmp_path / "in", *new)
        events: list[str] = []
        metrics = stream(spark, plan, run_id=f"scheduled__{run}", events=events)
        lines = [BATCH_LINE.search(e) for e in events if BATCH_LINE.search(e)]
        results.append((metrics, lines))
        assert_once(sink_rows(tmp_path / "out"), expected)
    reads = [m["read_count"] for m, _ in results]
    assert reads == [5, 4, 7]  # only what was new
    for metrics, lines in results:
        assert metrics["status"] == "FINISHED" and metrics["mode"] == "STREAMING"
        assert metrics["write_count"] == metrics["read_count"] == sum(int(m[2]) for m in lines)
        assert metrics["streaming"]["micro_batches"] == len(lines) >= 1
        listed = metrics["streaming"]["batches"]
        assert [b["written"] for b in listed] == [int(m[3]) for m in lines]
        assert [b["read"] for b in listed] == [int(m[2]) for m in lines]
        assert all(int(m[4]) > 0 and b["ms"] == int(m[4]) for m, b in zip(lines, listed, strict=True))
        assert metrics["per_source"] == {"source[0] LocalFile": metrics["read_count"]}
        assert metrics["per_table"] == {"sink[0] LocalFile": {"orders": metrics["write_count"]}}
    # micro-batch ids go on across runs: the checkpoint resumes
    ids = [int(m[1]) for _, lines in results for m in lines]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # a run with nothing new: no micro-batch, nothing written
    idle = stream(spark, plan, run_id="scheduled__4")
    assert (idle["read_count"], idle["write_count"], idle["streaming"]["micro_batches"]) == (0, 0, 0)
    assert_once(sink_rows(tmp_path / "out"), expected)
    # older micro-batches' commit markers are retired: only the last one stays (a replay may need it)
    markers = glob.glob(f"{tmp_path}/out/{lf.COMMITS_DIR}/*/*/*/*.committed")
    assert len(markers) == 1 and "batch-" in markers[0]


def test_recompiled_config_resumes_its_checkpoint_and_a_new_pipeline_disturbs_nothing(spark, write_conf, tmp_path):
    """(3): an option that does not name data (batch_size, retries) keeps the task id, so the recompiled
    job resumes; adding a pipeline to the job leaves the first one's checkpoint alone."""
    first = compile_job(write_conf(csv_job(tmp_path)), use_cache=False)
    expected = add_csv(tmp_path / "in", "a.csv", range(0, 3))
    assert stream(spark, first)["read_count"] == 3
    other = f"""LocalFile {{ plugin_output = "refunds", path = "{tmp_path}/in2", file_format_type = "csv",
                schema = {{ fields {{ id = bigint, name = string }} }} }}"""
    changed = csv_job(tmp_path, extra_env="job.retry.times = 1", sink_extra=", batch_size = 2", more=other)
    changed = changed.replace("sink {", f'sink {{\n  LocalFile {{ plugin_input = "refunds", path = "{tmp_path}/out2", '
                                        'file_format_type = "json" }')
    second = compile_job(write_conf(changed, "changed.conf"), use_cache=False)
    assert len(second.pipelines) == 2
    orders = next(p for p in second.pipelines if p.task_id.startswith("orders"))
    assert orders.task_id == first.pipelines[0].task_id
    expected += add_csv(tmp_path / "in", "b.csv", range(3, 8))
    add_csv(tmp_path / "in2", "r.csv", range(100, 102))
    events: list[str] = []
    resumed = stream(spark, second, orders, events=events)
    assert resumed["read_count"] == 5  # b.csv only: the checkpoint of the first compile
    assert resumed["streaming"]["checkpoint"].endswith(f"/sync/{orders.task_id}")
    assert_once(sink_rows(tmp_path / "out"), expected)
    files = lf.list_input_files({"path": str(tmp_path / "out")})
    assert len(files) == 1 + 3  # a.csv's rows in one file; b.csv's 5 rows with the new batch_size = 2 in three
    refunds = next(p for p in second.pipelines if p is not orders)
    assert stream(spark, second, refunds)["read_count"] == 2


def test_fake_source_streams_its_splits_once_then_idles(spark, write_conf, tmp_path):
    """FakeSource: row.num rows per reader in split.num splits, one split per reader and micro-batch
    (split.read-interval = checkpoint.interval), each row once, nothing more on the next run; Assert's
    row rules hold over the run (12 rows; its micro-batches have 4) while its field rules hold per micro-batch."""
    text = f"""
env {{ job.mode = STREAMING, job.name = fake, checkpoint.root = "{tmp_path}/ck", checkpoint.interval = 1000 }}
source {{ FakeSource {{ plugin_output = fake, parallelism = 2, row.num = 6, split.num = 3, split.read-interval = 1000,
                       schema = {{ fields {{ id = bigint, name = string }} }} }} }}
transform {{ Sql {{ plugin_input = fake, plugin_output = rows, query = "select id, length(name) as len from fake" }} }}
sink {{
  LocalFile {{ plugin_input = rows, path = "{tmp_path}/out", file_format_type = json }}
  Assert {{ plugin_input = rows, rules {{
    row_rules = [ {{ rule_type = MIN_ROW, rule_value = 12 }}, {{ rule_type = MAX_ROW, rule_value = 12 }} ]
    field_rules = [ {{ field_name = len, field_type = bigint, field_value = [ {{ rule_type = MIN, rule_value = 5 }},
                                                                             {{ rule_type = MAX, rule_value = 5 }} ] }} ]
  }} }}
}}
"""
    plan = compile_job(write_conf(text), use_cache=False)
    events: list[str] = []
    metrics = stream(spark, plan, events=events)
    lines = [BATCH_LINE.search(e) for e in events if BATCH_LINE.search(e) and "LocalFile" in e]
    assert [(int(m[2]), int(m[3])) for m in lines] == [(4, 4)] * 3  # 2 readers x 2 rows per split, 3 splits
    assert metrics["per_source"] == {"source[0] FakeSource": 12}
    assert metrics["per_sink"] == {"sink[0] LocalFile": 12, "sink[1] Assert": 12}
    ids = [r["id"] for r in sink_rows(tmp_path / "out")]
    assert len(ids) == len(set(ids)) == 12  # random values, drawn per row number: a row written twice repeats its id
    # the next run: the splits were all read, the stream idles; Assert's row rules count this run's rows
    with pytest.raises(AssertionFailed, match="row count 0 over the run's micro-batches fails rule MIN_ROW 12"):
        stream(spark, plan, run_id="run2")
    assert len(sink_rows(tmp_path / "out")) == 12


def test_fault_between_commit_and_spark_commit_log_then_rerun_is_exactly_once(spark, write_conf, tmp_path):
    """A micro-batch whose sink committed but Spark did not record it (fault raised at batch.committed), and
    one whose sink commit failed half way (sink.commit: files moved, marker not written; abort moves them
    back): the reruns replay them and every row is in the sink once."""
    plan = compile_job(write_conf(csv_job(tmp_path)), use_cache=False)
    expected = add_csv(tmp_path / "in", "a.csv", range(0, 4))
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed") as info:
        stream(spark, plan, options=faults.from_environment({faults.ENV: "batch.committed"}))
    assert info.value.deterministic is False  # a retry can help
    assert_once(sink_rows(tmp_path / "out"), expected)  # committed in the sink, not in Spark's log
    events: list[str] = []
    rerun = stream(spark, plan, attempt=2, events=events)
    assert [b["batch"] for b in rerun["streaming"]["batches"]] == [0]  # replayed, found committed in the sink
    assert any(BATCH_LINE.search(e) and "micro-batch 0" in e for e in events)
    assert_once(sink_rows(tmp_path / "out"), expected)
    expected += add_csv(tmp_path / "in", "b.csv", range(4, 10))
    with pytest.raises(PipelineError, match=r"injected fault at sink\.commit"):
        stream(spark, plan, options=faults.from_environment({faults.ENV: "sink.commit"}))
    assert_once(sink_rows(tmp_path / "out"), expected[:4])  # rolled back
    stream(spark, plan, attempt=2)
    assert_once(sink_rows(tmp_path / "out"), expected)
    assert not (tmp_path / "out" / lf.STAGING_DIR).exists()


def test_watermarked_aggregation_emits_closed_windows_once(spark, write_conf, tmp_path):
    """A stateful Sql with a watermark: windows are written once, when the watermark passes them."""
    text = f"""
env {{ job.mode = STREAMING, job.name = agg, checkpoint.root = "{tmp_path}/ck" }}
source {{ LocalFile {{ plugin_output = clicks, path = "{tmp_path}/in", file_format_type = csv,
                      schema = {{ fields {{ user = string, ts = timestamp }} }} }} }}
transform {{
  Sql {{ plugin_input = clicks, plugin_output = counts, watermark = {{ column = ts, delay = "5 seconds" }},
        query = "select window(ts, '1 minute') as w, user, count(*) as n from clicks group by w, user" }}
  Sql {{ plugin_input = counts, plugin_output = flat, query = "select w.start as minute, user, n from counts" }}
}}
sink {{ LocalFile {{ plugin_input = flat, path = "{tmp_path}/out", file_format_type = json }} }}
"""
    plan = compile_job(write_conf(text), use_cache=False)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "1.csv").write_text("a,2024-01-01 10:00:01\nb,2024-01-01 10:00:30\na,2024-01-01 10:00:59\n")
    stream(spark, plan)
    assert sink_rows(tmp_path / "out") == []  # the 10:00 window is still open
    (tmp_path / "in" / "2.csv").write_text("a,2024-01-01 10:02:00\n")  # the watermark passes 10:01
    stream(spark, plan, run_id="run2")
    got = sorted((r["minute"], r["user"], r["n"]) for r in sink_rows(tmp_path / "out"))
    # json timestamps as SeaTunnel writes them: no zero fraction
    assert got == [("2024-01-01T10:00:00", "a", 2), ("2024-01-01T10:00:00", "b", 1)]


def test_micro_batch_longer_than_checkpoint_timeout_fails_the_pipeline(spark, write_conf, tmp_path):
    text = f"""
env {{ job.mode = STREAMING, job.name = slow, checkpoint.root = "{tmp_path}/ck", checkpoint.timeout = 1500 }}
source {{ FakeSource {{ row.num = 8, schema = {{ fields {{ id = bigint }} }} }} }}
sink {{ Console {{ log.print.delay.ms = 400 }} }}
"""
    t0 = time.monotonic()
    with pytest.raises(PipelineError, match=r"micro-batch 0 ran longer than checkpoint.timeout = 1500 ms") as info:
        stream(spark, compile_job(write_conf(text), use_cache=False))
    assert info.value.plugin == "sink[0] Console" and not info.value.deterministic
    assert time.monotonic() - t0 < 30
    assert not [q for q in spark.streams.active]


def test_processing_time_stream_runs_until_stopped_gracefully(spark, write_conf, tmp_path):
    """processing_time: new files are picked up while it runs; stop (SIGTERM in the app) lets the running
    micro-batch commit and returns the metrics."""
    plan = compile_job(write_conf(csv_job(tmp_path, extra_env='streaming.trigger = processing_time\n'
                                                              'checkpoint.interval = 500')), use_cache=False)
    expected = add_csv(tmp_path / "in", "a.csv", range(0, 3))
    stop = threading.Event()
    events: list[str] = []
    result: dict = {}
    runner = threading.Thread(target=lambda: result.update(stream(spark, plan, events=events, stop=stop)))
    runner.start()
    deadline = time.monotonic() + 60
    while not any("micro-batch 0" in e for e in events) and time.monotonic() < deadline:
        time.sleep(0.1)
    expected += add_csv(tmp_path / "in", "b.csv", range(3, 5))
    while len(sink_rows(tmp_path / "out")) < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert runner.is_alive()  # still running: it waits for more
    stop.set()
    runner.join(60)
    assert not runner.is_alive()
    assert result["streaming"]["stopped"] == "stop requested" and result["write_count"] == 5
    assert_once(sink_rows(tmp_path / "out"), expected)
    assert not [q for q in spark.streams.active]


def test_sigterm_handler_sets_the_stop_event():
    from airflow_provider_seatunnel.runtime import app

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        import logging

        stop = app._stop_on_sigterm(logging.getLogger("test"), "job")
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5)
    finally:
        signal.signal(signal.SIGTERM, before[0])
        signal.signal(signal.SIGINT, before[1])


# ------------------------------------------------------------------------------------------------
# Through the command line and spark-submit: SIGKILL mid-run, SIGTERM
# ------------------------------------------------------------------------------------------------

def _cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2]) + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop(faults.ENV, None)
    env.update(extra or {})
    return env


def test_cli_sigkill_mid_run_then_rerun_finds_every_row_once(write_conf, tmp_path):
    """(1): the driver is SIGKILLed (spark-submit exits 137) after a micro-batch committed in the sink and
    before Spark recorded it; `seatunnel-airflow run` again (attempt 2, same config) resumes from the
    checkpoint, replays that micro-batch without writing it twice, and finishes the stream."""
    text = f"""
env {{ job.mode = STREAMING, job.name = killed, checkpoint.root = "{tmp_path}/ck", checkpoint.interval = 1000 }}
source {{ FakeSource {{ plugin_output = fake, parallelism = 2, row.num = 6, split.num = 3, split.read-interval = 1000,
                       schema = {{ fields {{ id = bigint, name = string }} }} }} }}
sink {{ LocalFile {{ plugin_input = fake, path = "{tmp_path}/out", file_format_type = json }} }}
"""
    conf = write_conf(text)
    args = [CLI, "run", str(conf), "--run-id", "daily", "--master", "local[2]"]
    first = subprocess.run([*args, "--work-dir", str(tmp_path / "w1"), "--metrics-file", str(tmp_path / "m1.json")],
                           env=_cli_env({faults.ENV: "batch.committed=kill+1"}), capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 1, first.stderr
    assert "exited with 137" in first.stderr and "batch.committed" in first.stderr
    rows = sink_rows(tmp_path / "out")
    assert len(rows) == 8 and len({r["id"] for r in rows}) == 8  # two micro-batches committed, the 2nd unrecorded
    second = subprocess.run([*args, "--attempt", "2", "--work-dir", str(tmp_path / "w2"), "--keep-work-dir", "--metrics-file",
                             str(tmp_path / "m2.json")], env=_cli_env(), capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    ids = [r["id"] for r in sink_rows(tmp_path / "out")]
    assert len(ids) == len(set(ids)) == 12  # the rows' values are drawn per row number: a replay repeats them
    (pipeline,) = json.loads((tmp_path / "m2.json").read_text())["pipelines"]
    assert [b["batch"] for b in pipeline["streaming"]["batches"]] == [1, 2]  # 1 replayed, 2 new
    log = Path(pipeline["log"]).read_text()
    assert "already committed" in log


def _driver_pid(work_dir: Path, timeout: float = 120) -> int:
    """The pid of the Python driver spark-submit started for a plan in ``work_dir``."""
    deadline = time.monotonic() + timeout
    plan = str(work_dir / "plan.json")
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit() and is_pipeline_driver(int(entry), plan):
                return int(entry)
        time.sleep(0.2)
    raise AssertionError("no driver process found")


def test_cli_sigterm_stops_a_long_running_stream_cleanly(write_conf, tmp_path):
    """A processing_time stream runs until SIGTERM reaches its driver: the running micro-batch commits, the
    queries stop, the pipeline reports FINISHED (stopped) with what it wrote, and exits 0."""
    expected = add_csv(tmp_path / "in", "a.csv", range(0, 4))
    conf = write_conf(csv_job(tmp_path, extra_env='streaming.trigger = "processing_time"\ncheckpoint.interval = 500'))
    work = tmp_path / "w"
    proc = subprocess.Popen([CLI, "run", str(conf), "--master", "local[2]", "--work-dir", str(work), "--keep-work-dir",
                             "--metrics-file", str(tmp_path / "m.json")], env=_cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        pid = _driver_pid(work)
        deadline = time.monotonic() + 120
        while len(sink_rows(tmp_path / "out")) < 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        os.kill(pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    (pipeline,) = json.loads((tmp_path / "m.json").read_text())["pipelines"]
    assert pipeline["status"] == "FINISHED" and pipeline["streaming"]["stopped"] == "stop requested"
    assert pipeline["write_count"] == 4
    assert_once(sink_rows(tmp_path / "out"), expected)
    assert "SIGTERM received" in Path(pipeline["log"]).read_text()


def test_streaming_sources_and_transforms_plan_no_python(spark, write_conf, tmp_path):
    """The streams FakeSource and LocalFile build, through a watermarked Sql, are native Spark (the
    analyzed plan of a stream: it cannot be executed outside a query)."""
    from pyspark.sql import functions as F

    from airflow_provider_seatunnel.runtime.walk import walk

    (tmp_path / "in").mkdir()
    text = f"""
env {{ job.mode = STREAMING, job.name = native, checkpoint.root = "{tmp_path}/ck" }}
source {{
  FakeSource {{ plugin_output = f, schema = {{ fields {{ id = bigint, ts = timestamp, tags = "array<string>",
                                                        m = "map<string, int>" }} }} }}
  LocalFile {{ plugin_output = l, path = "{tmp_path}/in", file_format_type = text, skip_header_row_number = 1,
              schema = {{ fields {{ id = bigint, ts = timestamp }} }} }}
}}
transform {{
  Sql {{ plugin_input = f, plugin_output = fa, watermark = {{ column = ts, delay = "1 minute" }},
        query = "select window(ts, '1 minute') as w, count(*) as n from f group by w" }}
  Sql {{ plugin_input = l, plugin_output = la, query = "select id + 1 as id, ts from l" }}
}}
sink {{ Console {{ plugin_input = fa }}
       Console {{ plugin_input = la }} }}
"""
    plan = compile_job(write_conf(text), use_cache=False)
    for pipeline in plan.pipelines:
        ctx = RunContext(spark, plan, pipeline, "t")
        for data in walk(ctx, lambda _: None, streaming=True).outputs.values():
            for df in data.values():
                assert df.isStreaming
                assert python_in(df) == [], df._jdf.queryExecution().analyzed().toString()
    udf = F.udf(lambda value: value, "bigint")
    assert python_in(df.select(udf("id"))) == ["PythonUDF"]  # the check finds one (planned, never run)


def python_in(df) -> list[str]:
    """Python nodes and expressions in a stream's analyzed plan (its JSON names every node's class)."""
    plan = df._jdf.queryExecution().analyzed().toJSON()
    return [n for n in PYTHON_NODES if f".{n}\"" in plan]


def test_a_micro_batch_starting_while_the_stream_stops_is_refused_before_it_writes():
    """Stopping a query interrupts its thread: a sink interrupted half way (connecting to its database)
    would fail the run. Once a stop is requested, a micro-batch that starts is refused before the sink
    sees it (no error recorded: Spark replays the unrecorded micro-batch on the next run)."""
    from airflow_provider_seatunnel.runtime import streaming

    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"the sink was used: {name}")

    q = streaming._Query(ctx=Untouchable(), vertex=Untouchable(), connector=Untouchable(), table="default",
                         df=None, checkpoint="", say=print, timeout_ms=None)
    q.stopping = True
    with pytest.raises(streaming._StopRequested, match="micro-batch 7 not started"):
        q.process(Untouchable(), 7)
    assert q.error is None and q.running is None and q.written == {}
