"""Live progress of a running pipeline (runtime/progress.py) on real Spark: lines every
``progress.interval`` seconds while it runs, rows from the run's own counting points (no extra pass
over the data), Spark's stages from its status tracker, off with 0, checked at compile time."""

from __future__ import annotations

import re
import time

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.runtime.counting import count_rows
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.progress import Progress, interval_of

JOB = """
env {{ job.name = "progress", parallelism = 2, {interval} }}
source {{ FakeSource {{ plugin_output = "a", row.num = {rows}, schema = {{ fields {{ id = bigint, name = string }} }} }} }}
transform {{ Sql {{ plugin_input = "a", plugin_output = "b", query = "SELECT id, upper(name) AS name FROM a" }} }}
sink {{ LocalFile {{ plugin_input = "b", path = "{out}", file_format_type = "parquet" }} }}
"""
LINE = re.compile(r"progress after (\d+) s: read ([\d,]+|n/a) rows.*, wrote ([\d,]+|n/a) rows.*; Spark: (.+)$")


def test_a_running_pipeline_reports_its_progress_while_it_runs(run_job, tmp_path):
    events: list[str] = []
    (metrics,) = run_job(JOB.format(interval="progress.interval = 1", rows=250_000, out=tmp_path / "out"),
                         events=events)
    lines = [m for m in map(LINE.search, events) if m]
    assert lines, events
    reads = [int(m[2].replace(",", "")) for m in lines if m[2] != "n/a"]
    assert reads == sorted(reads) and all(r <= metrics["read_count"] for r in reads)  # never more than the end's
    assert any(m[4].startswith(("stage", "no stage", "1 stage", "2 stage")) for m in lines)
    assert metrics["read_count"] == metrics["write_count"] == 500_000  # the summary as before
    # the line comes before the sink's "prepared" event: it reports while the write runs
    assert events.index(lines[0].string) < next(i for i, e in enumerate(events) if "prepared" in e)


def test_progress_is_off_with_an_interval_of_zero(run_job, tmp_path):
    events: list[str] = []
    run_job(JOB.format(interval="progress.interval = 0", rows=1000, out=tmp_path / "out"), events=events)
    assert not [e for e in events if "progress after" in e]


def test_rows_come_from_the_runs_own_counting_points(spark, plan_of):
    plan = plan_of('source { FakeSource { plugin_output = "t", schema = { fields { a = int } } } }\n'
                   'sink { Console { plugin_input = "t" } }')
    reports: list[dict] = []
    ctx = RunContext(spark, plan, plan.pipelines[0], "r", on_progress=reports.append)
    df, counter = count_rows(spark.range(12_345).toDF("a"), "progress-test")
    said: list[str] = []
    progress = Progress(ctx, said.append, 3600, {"source[0] FakeSource": [counter]}).start()  # reports when asked
    progress.watch_sink("sink[0] Console", [counter])
    assert LINE.search(progress.report())[2] == "0"  # nothing ran yet
    df.write.format("noop").mode("overwrite").save()
    line = progress.report()
    assert LINE.search(line)[2] == LINE.search(line)[3] == "12,345", line  # counted when the write returns
    deadline = time.monotonic() + 60  # stages come from the status tracker, which follows Spark's listener
    while "stage(s) done" not in line and time.monotonic() < deadline:  # bus and may lag the job's end
        time.sleep(0.2)
        line = progress.report()
    progress.stop()
    assert "stage(s) done" in line and len(said) >= 2
    # each line as plain data too (the Airflow task's seatunnel_progress XCom)
    counts = [(r["read_count"], r["write_count"]) for r in reports]
    assert counts[0] == (0, 0) and set(counts[1:]) == {(12_345, 12_345)}
    assert reports[-1]["per_source"] == {"source[0] FakeSource": 12_345} and reports[-1]["status"] == "RUNNING"
    assert "stage(s) done" in reports[-1]["stages"]


def test_the_interval_is_checked_at_compile_time(plan_of):
    assert interval_of({}) == 10 and interval_of({"progress.interval": 3}) == 3
    with pytest.raises(ConfigError, match=r"progress\.interval"):
        plan_of('env { progress.interval = "soon" }\n'
                'source { FakeSource { plugin_output = "t", schema = { fields { a = int } } } }\n'
                'sink { Console { plugin_input = "t" } }')


def test_a_pipeline_of_several_tables_adds_a_line_per_table(spark, plan_of):
    plan = plan_of('source { FakeSource { plugin_output = "t", schema = { fields { a = int } } } }\n'
                   'sink { Console { plugin_input = "t" } }')
    ctx = RunContext(spark, plan, plan.pipelines[0], "r")
    one, c1 = count_rows(spark.range(1_200).toDF("a"), "read:source_0:db.one")
    two, c2 = count_rows(spark.range(34).toDF("a"), "read:source_0:db.two")
    said: list[str] = []
    progress = Progress(ctx, said.append, 3600, {"source[0] FakeSource": [c1, c2]})
    one.write.format("noop").mode("overwrite").save()
    progress.report()
    assert said[-1] == "progress per table: 0 of 2 tables have rows written; db.one read 1,200 wrote n/a, " \
                       "db.two read 0 wrote n/a"
    two.write.format("noop").mode("overwrite").save()
    progress.report()  # the table that moved comes first
    assert said[-1].endswith("; db.two read 34 wrote n/a, db.one read 1,200 wrote n/a") and len(said) == 4
