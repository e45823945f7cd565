"""Parallelism has one truth, the plan's figure: FakeSource reads in exactly that many partitions (one per
reader, ``row.num`` rows each), and a sink receives its data in its own figure's partitions, which
Console numbers as its subtasks and Assert checks. Env, source and sink figures differ in every case,
so a figure taken from anywhere but the plan's vertex shows."""

from __future__ import annotations

import logging
import re
from collections import defaultdict

import pytest

from airflow_provider_seatunnel.connectors.assert_ import CONNECTOR as ASSERT
from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR as FAKE
from airflow_provider_seatunnel.plan.compiler import compile_job
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

ROW_NUM = 6
LINE = re.compile(r"subtaskIndex=(\d+)  rowIndex=(\d+):  SeaTunnelRow#tableId=(\S+) ")


def parallelism(value: int | None) -> str:
    return f", parallelism = {value}" if value is not None else ""


def batch_job(env: int, source: int | None, console: int | None, assert_: int | None, rows: int) -> str:
    return f"""
env {{ parallelism = {env}, job.mode = BATCH }}
source {{ FakeSource {{ plugin_output = fake, row.num = {ROW_NUM}{parallelism(source)}
                       schema = {{ fields {{ id = bigint, name = string }} }} }} }}
sink {{
  Console {{ plugin_input = fake{parallelism(console)} }}
  Assert {{ plugin_input = fake{parallelism(assert_)}, rules {{
    row_rules = [ {{ rule_type = MIN_ROW, rule_value = {rows} }}, {{ rule_type = MAX_ROW, rule_value = {rows} }} ]
    field_rules = [ {{ field_name = id, field_type = bigint, field_value = [ {{ rule_type = NOT_NULL }} ] }} ]
  }} }}
}}
"""


@pytest.fixture
def spies(monkeypatch):
    """What FakeSource returned and what Assert received: per table, the partitions of each DataFrame
    (FakeSource's counted without running it; the sink's as the partition ids its rows are in)."""
    from pyspark.sql import functions as F

    seen: dict[str, list] = {"source": [], "assert": []}
    read, prepare = FAKE.read, ASSERT.prepare

    def spy_read(ctx, vertex):
        data = read(ctx, vertex)
        seen["source"].append({table: df.rdd.getNumPartitions() for table, df in data.items()})
        return data

    def spy_prepare(ctx, vertex, data):
        seen["assert"].append({table: sorted(r[0] for r in df.select(F.spark_partition_id()).distinct().collect())
                               for table, df in data.items()})
        return prepare(ctx, vertex, data)

    monkeypatch.setattr(FAKE, "read", spy_read)
    monkeypatch.setattr(ASSERT, "prepare", spy_prepare)
    return seen


def console_lines(caplog) -> list[tuple[str, int, int]]:
    """Console's row lines, in the order printed: (table, subtask, row index)."""
    found = [LINE.match(r.getMessage()) for r in caplog.records if r.name == "seatunnel.console"]
    return [(m[3], int(m[1]), int(m[2])) for m in found if m]


def console_rows(caplog) -> dict[int, list[int]]:
    """Console's row lines of table ``fake``: subtask -> its row indexes, in the order printed."""
    out: dict[int, list[int]] = defaultdict(list)
    for table, subtask, index in console_lines(caplog):
        assert table == "fake"
        out[subtask].append(index)
    return dict(out)


@pytest.mark.parametrize(("env", "source", "console", "assert_"), [
    (2, 3, 4, 5),  # every figure its own
    (2, 3, None, None),  # the sinks take their input's figure (the source's, not env's)
    (4, None, 2, 3),  # the source takes env's figure, the sinks their own
])
def test_partitions_follow_the_plan(spark, write_conf, caplog, spies, env, source, console, assert_):
    expected_source = source or env
    expected_console, expected_assert = console or expected_source, assert_ or expected_source
    rows = ROW_NUM * expected_source  # row.num is per parallel reader
    plan = compile_job(write_conf(batch_job(env, source, console, assert_, rows)), use_cache=False)
    (pipeline,) = plan.pipelines
    figures = {v.plugin: v.parallelism for v in pipeline.vertices}
    assert figures == {"FakeSource": expected_source, "Console": expected_console, "Assert": expected_assert}

    caplog.set_level(logging.INFO, logger="seatunnel.console")
    metrics = run_pipeline(RunContext(spark, plan, pipeline, "parallelism-run"))

    assert metrics["per_source"] == {"source[0] FakeSource": rows}
    # FakeSource: one partition per reader, as many readers as the plan says
    assert spies["source"] == [{"fake": expected_source}]
    # Console: its subtasks are the plan's figure, each printing its own rows numbered from 1
    printed = console_rows(caplog)
    assert sorted(printed) == list(range(expected_console))
    assert all(indexes == list(range(1, len(indexes) + 1)) for indexes in printed.values())
    assert sum(len(indexes) for indexes in printed.values()) == rows
    # Assert: its data came in its figure's partitions (and every row rule held over all rows)
    assert spies["assert"] == [{"fake": list(range(expected_assert))}]


def test_empty_tables_keep_every_reader(spark, write_conf, spies):
    """A reader with nothing to emit is an empty partition, never a missing one (random and explicit rows)."""
    text = """
env { parallelism = 2, job.mode = BATCH }
source {
  FakeSource { plugin_output = none, parallelism = 3, row.num = 0, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = listed, parallelism = 4, rows = [], schema = { fields { id = bigint } } }
}
sink {
  Assert { plugin_input = none, rules { row_rules = [ { rule_type = MAX_ROW, rule_value = 0 } ] } }
  Assert { plugin_input = listed, rules { row_rules = [ { rule_type = MAX_ROW, rule_value = 0 } ] } }
}
"""
    plan = compile_job(write_conf(text), use_cache=False)
    for pipeline in plan.pipelines:
        run_pipeline(RunContext(spark, plan, pipeline, "empty-run"))
    assert sorted(next(iter(p.values())) for p in spies["source"]) == [3, 4]
    assert sorted(spies["assert"], key=lambda seen: next(iter(seen))) == [{"listed": []}, {"none": []}]


def test_streaming_micro_batches_follow_the_plan(spark, write_conf, caplog, tmp_path):
    """STREAMING: a reader's micro-batch is one partition however many split files it holds (three here,
    read at once), and a sink with its own figure gets its micro-batches in that many partitions."""
    text = f"""
env {{ job.mode = STREAMING, job.name = figures, parallelism = 2, checkpoint.root = "{tmp_path}/ck",
      checkpoint.interval = 3000 }}
source {{
  FakeSource {{ plugin_output = one, parallelism = 1, row.num = 9, split.num = 3, split.read-interval = 1000,
               schema = {{ table = "one", fields {{ id = bigint }} }} }}
  FakeSource {{ plugin_output = two, parallelism = 2, row.num = 9, split.num = 3, split.read-interval = 1000,
               schema = {{ table = "two", fields {{ id = bigint }} }} }}
}}
sink {{
  Console {{ plugin_input = one }}
  Console {{ plugin_input = two, parallelism = 3 }}
}}
"""
    plan = compile_job(write_conf(text), use_cache=False)
    figures = {(v.plugin, v.output or v.inputs[0]): v.parallelism for p in plan.pipelines for v in p.vertices}
    assert figures == {("FakeSource", "one"): 1, ("Console", "one"): 1, ("FakeSource", "two"): 2,
                       ("Console", "two"): 3}
    caplog.set_level(logging.INFO, logger="seatunnel.console")
    per_table: dict[str, set[int]] = {}
    for pipeline in plan.pipelines:
        caplog.clear()
        metrics = run_streaming_pipeline(RunContext(spark, plan, pipeline, "stream-run"))
        lines = console_lines(caplog)
        (table,) = {table for table, _, _ in lines}
        per_table[table] = {subtask for _, subtask, _ in lines}
        assert sum(metrics["per_source"].values()) == 9 * figures[("FakeSource", table)]
    assert per_table == {"one": {0}, "two": {0, 1, 2}}

