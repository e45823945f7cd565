"""Console brings rows to the driver in batches of at most ``BATCH_ROWS``, whatever a subtask's size,
and prints them exactly as one batch per subtask would: same subtasks, same row indexes, same order,
same text. The end-to-end case runs 5,000,000 rows through ``spark-submit`` with the driver capped at
512 MB, where taking a whole partition to the driver ends in ``OutOfMemoryError`` (exit 52)."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors import console
from airflow_provider_seatunnel.plan.compiler import compile_job
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline

from ..conftest import SHORT_LIVED_JVM

LINE = re.compile(r"subtaskIndex=(\d+)  rowIndex=(\d+):  SeaTunnelRow#tableId=(\S+) SeaTunnelRow#kind=(\S+) : (.*)$")

#: every type Spark renders itself, nulls and extremes included; each of the three readers (Console's
#: subtasks) emits the list once
SIMPLE_ROWS = [
    '{ kind = INSERT, fields = [-128, -32768, -2147483648, -9223372036854775808, "a, b", true, "0001-01-01"] }',
    "{ kind = DELETE, fields = [null, null, null, null, null, null, null] }",
    '{ kind = UPDATE_AFTER, fields = [127, 32767, 2147483647, 9223372036854775807, "", false, "9999-12-31"] }',
    *[f'{{ kind = {("INSERT", "UPDATE_BEFORE")[i % 2]}, fields = [{i}, {i * 7}, {i * 1009}, {i * 10 ** 12}, '
      f'"row {i}", {str(i % 3 == 0).lower()}, "2024-02-{i + 1:02d}"] }}' for i in range(20)],
]
SIMPLE = f"""
env {{ parallelism = 3 }}
source {{ FakeSource {{ plugin_output = f, rows = [{", ".join(SIMPLE_ROWS)}]
    schema = {{ fields {{ t = tinyint, s = smallint, i = int, b = bigint, x = string, ok = boolean, d = date }} }} }} }}
sink {{ Console {{ plugin_input = f }} }}
"""


def printed(caplog) -> list[tuple[int, int, str, str, str]]:
    """Console's row lines in the order printed: (subtask, row index, table, kind, values)."""
    found = [LINE.match(r.getMessage()) for r in caplog.records if r.name == "seatunnel.console"]
    return [(int(m[1]), int(m[2]), m[3], m[4], m[5]) for m in found if m]


def run(spark, write_conf, caplog, text: str) -> list[tuple[int, int, str, str, str]]:
    caplog.clear()
    caplog.set_level(logging.INFO, logger="seatunnel.console")
    plan = compile_job(write_conf(text), use_cache=False)
    for pipeline in plan.pipelines:
        run_pipeline(RunContext(spark, plan, pipeline, "console-batches"))
    return printed(caplog)


def test_small_batches_print_what_one_batch_prints(spark, write_conf, caplog, monkeypatch):
    whole = run(spark, write_conf, caplog, SIMPLE)
    n = len(SIMPLE_ROWS)
    assert [(subtask, index) for subtask, index, *_ in whole] == [(s, i) for s in range(3) for i in range(1, n + 1)]
    monkeypatch.setattr(console, "BATCH_ROWS", 4)  # every subtask spans several batches
    assert run(spark, write_conf, caplog, SIMPLE) == whole


def test_spark_renders_values_as_the_driver_does(spark, write_conf, caplog, monkeypatch):
    """Integers, strings, booleans and dates (nulls and extremes too) are rendered by Spark's cast; the
    lines equal those :func:`console.render_value` makes of the same rows."""
    by_spark = run(spark, write_conf, caplog, SIMPLE)
    assert ("INSERT", "-128, -32768, -2147483648, -9223372036854775808, a, b, true, 0001-01-01") in \
        [(kind, values) for *_, kind, values in by_spark]
    assert ("DELETE", ", , , , , , ") in [(kind, values) for *_, kind, values in by_spark]
    monkeypatch.setattr(console, "_CAST_AS_PRINTED", ())
    assert run(spark, write_conf, caplog, SIMPLE) == by_spark


def test_chunks_hold_at_most_the_batch_size_in_order(spark):
    """Every partition :func:`console.chunked` makes holds consecutive rows of one subtask, at most
    ``size`` of them, and the partitions, read in turn, give the rows in (subtask, position) order."""
    from pyspark.sql import functions as F

    sizes = [0, 11, 30, 1, 7]  # rows per subtask (an empty one among them)
    # partition p holds sizes[p] rows
    parts = spark.createDataFrame(spark.sparkContext.parallelize(range(len(sizes)), len(sizes))
                                  .flatMap(lambda p: [(v,) for v in range(sizes[p])]), "id long")
    subtask = F.spark_partition_id()
    rows = parts.select(subtask.alias("__st_subtask"), "id",
                        (F.monotonically_increasing_id() - F.shiftleft(subtask.cast("long"), 33)).alias("__st_seq"))
    rows = rows.persist()
    try:
        counts = sorted(tuple(r) for r in rows.groupBy("__st_subtask").count().collect())
        assert counts == [(1, 11), (2, 30), (3, 1), (4, 7)]
        out = console.chunked(rows, 4)
        delivered = out.select(F.spark_partition_id(), "__st_subtask", "__st_seq").collect()
        chunks: dict[int, list[tuple[int, int]]] = {}
        for partition, st, seq in delivered:
            chunks.setdefault(partition, []).append((st, seq))
        assert len(chunks) == sum(-(-n // 4) for n in sizes)
        assert all(0 < len(c) <= 4 and len({st for st, _ in c}) == 1 for c in chunks.values())
        in_turn = [row for partition in sorted(chunks) for row in chunks[partition]]
        assert in_turn == [(st, seq) for st, n in enumerate(sizes) for seq in range(n)]
    finally:
        rows.unpersist()


# -- end to end: 5,000,000 rows, the driver capped at 512 MB --------------------------------------

BIG = """
env { job.name = "console_5m", parallelism = 1, spark.driver.memory = "512m", spark.ui.enabled = false }
source { FakeSource { plugin_output = fake, row.num = 5000000, schema = { fields { id = bigint, name = string } } } }
sink { Console { plugin_input = fake } }
"""


@pytest.mark.slow  # about 4.5 minutes (5,000,000 rows printed): make test-slow
def test_five_million_rows_print_with_the_driver_capped_at_512m(tmp_path):
    """Before the batches, this run ended in ``java.lang.OutOfMemoryError: Java heap space`` and
    spark-submit's exit 52: the one partition of 5,000,000 rows was taken to the driver at once."""
    conf, work, out = tmp_path / "big.conf", tmp_path / "work", tmp_path / "stdout.txt"
    conf.write_text(BIG)
    metrics = tmp_path / "metrics.json"
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # the JVM as deployed (its default collector), not the tests' short-lived one: the serial collector
    # packs the large buffers of a whole partition where the default one runs out of memory
    env["JAVA_TOOL_OPTIONS"] = env.get("JAVA_TOOL_OPTIONS", "").replace(SHORT_LIVED_JVM, "").strip()
    cli = str(Path(sys.executable).parent / "seatunnel-airflow")
    try:
        with open(out, "w") as stdout:  # the rows go to the pipeline's log; the screen to a file
            code = subprocess.run([cli, "run", str(conf), "--work-dir", str(work), "--metrics-file", str(metrics)],
                                  stdout=stdout, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
                                  timeout=1800).returncode
        screen = out.read_text()
        assert code == 0, screen[-3000:]
        assert "FINISHED (read 5000000, wrote 5000000)" in screen
        job = json.loads(metrics.read_text())
        assert (job["read_count"], job["write_count"]) == (5_000_000, 5_000_000)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the pipeline's log holds every row (about 800 MB)
