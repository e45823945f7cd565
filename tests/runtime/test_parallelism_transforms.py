"""Transforms hand on the plan's parallelism: a Sql that combines rows (a shuffle) or unions inputs
comes out in the transform's figure of partitions, as the planner says, whatever Spark's shuffle chose."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.plan.compiler import compile_job
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.walk import walk

JOB = """
env {{ parallelism = {p} }}
source {{
  FakeSource {{ plugin_output = "a", row.num = 50, schema = {{ fields {{ id = int, g = int }} }} }}
  FakeSource {{ plugin_output = "b", row.num = 50, schema = {{ fields {{ id = int, g = int }} }} }}
}}
transform {{ Sql {{ plugin_input = ["a", "b"], plugin_output = "q", query = "{query}" }} }}
sink {{ Console {{ plugin_input = "q", log.print.data = false }} }}
"""


@pytest.mark.parametrize(("query", "p"), [
    ("SELECT a.g, count(*) AS n FROM a JOIN b ON a.id = b.id GROUP BY a.g", 3),
    ("SELECT g, count(*) AS n FROM a GROUP BY g UNION ALL SELECT g, count(*) AS n FROM b GROUP BY g", 2),
])
def test_a_combining_sql_outputs_the_plans_partitions(spark, write_conf, query, p):
    plan = compile_job(write_conf(JOB.format(p=p, query=query)), use_cache=False)
    (pipeline,) = plan.pipelines  # a join or aggregation across inputs keeps one pipeline
    sql = next(v for v in pipeline.vertices if v.plugin == "Sql")
    w = walk(RunContext(spark, plan, pipeline, "r"), lambda _: None)
    (df,) = w.outputs[sql.id].values()
    assert sql.parallelism == p and df.rdd.getNumPartitions() == p


def test_an_ordered_result_keeps_its_order(spark, write_conf):
    query = "SELECT a.id FROM a JOIN b ON a.id = b.id ORDER BY a.id DESC"
    plan = compile_job(write_conf(JOB.format(p=2, query=query)), use_cache=False)
    (pipeline,) = plan.pipelines
    sql = next(v for v in pipeline.vertices if v.plugin == "Sql")
    (df,) = walk(RunContext(spark, plan, pipeline, "r"), lambda _: None).outputs[sql.id].values()
    ids = [r["id"] for r in df.collect()]
    assert ids == sorted(ids, reverse=True) and df.rdd.getNumPartitions() <= 2
