"""A sink planned at another parallelism than its input receives its rows moved between partitions;
the changes keep their arrival order (a keyed sink keeps the last change per key)."""

from __future__ import annotations

from airflow_provider_seatunnel.plan.compiler import compile_job
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.walk import walk
from airflow_provider_seatunnel.spi.rows import ARRIVAL, data_columns

CHANGES = """
env {{ parallelism = 1 }}
source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = int, v = string }} }},
    rows = [{rows}] }} }}
sink {{ Console {{ plugin_input = "f", parallelism = {sink} }} }}
"""


def _rows(n: int) -> str:
    out = []
    for i in range(n):
        out += [f'{{ kind = INSERT, fields = [{i}, "a"] }}', f'{{ kind = UPDATE_BEFORE, fields = [{i}, "a"] }}',
                f'{{ kind = UPDATE_AFTER, fields = [{i}, "b"] }}']
    return ", ".join(out)


def test_changes_moved_to_a_sinks_parallelism_carry_their_arrival_order(spark, write_conf):
    plan = compile_job(write_conf(CHANGES.format(rows=_rows(20), sink=3)), use_cache=False)
    (pipeline,) = plan.pipelines
    w = walk(RunContext(spark, plan, pipeline, "r"), lambda _: None)
    (sink,) = w.sinks()
    (df,) = w.sink_input(sink.id).values()
    assert df.rdd.getNumPartitions() == 3 and ARRIVAL in df.columns and ARRIVAL not in data_columns(df)
    rows = df.collect()
    by_key: dict[int, list] = {}
    for r in sorted(rows, key=lambda r: r[ARRIVAL]):
        by_key.setdefault(r["id"], []).append(r["v"])
    assert by_key == {i: ["a", "a", "b"] for i in range(20)}  # INSERT, UPDATE_BEFORE, UPDATE_AFTER in order


def test_insert_only_input_is_moved_without_numbering(spark, write_conf):
    plan = compile_job(write_conf("""
env { parallelism = 1 }
source { FakeSource { plugin_output = "f", row.num = 10, schema = { fields { id = int } } } }
sink { Console { plugin_input = "f", parallelism = 2 } }"""), use_cache=False)
    (pipeline,) = plan.pipelines
    w = walk(RunContext(spark, plan, pipeline, "r"), lambda _: None)
    (sink,) = w.sinks()
    (df,) = w.sink_input(sink.id).values()
    assert df.rdd.getNumPartitions() == 2 and ARRIVAL not in df.columns
