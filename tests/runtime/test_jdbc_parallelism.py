"""Parallelism has one truth: the Jdbc source and sink read and write at the parallelism the plan
gives their vertex (env ``parallelism``, a block's own, or in a split pipeline its predecessor's),
never at a figure of their own. Against a real, private PostgreSQL server (tests/pg.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.plan.compiler import compile_job
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline


@pytest.fixture(scope="module")
def db(db):
    """The module's PostgreSQL server: ``items`` (40 rows, primary key id) and ``loose`` (12 rows, no key)."""
    db.sql("""
        CREATE TABLE items (id int PRIMARY KEY, k int, name text);
        INSERT INTO items SELECT i, i, 'n' || i FROM generate_series(1, 40) AS i;
        CREATE TABLE loose (v int);
        INSERT INTO loose SELECT generate_series(1, 12);
    """)
    return db


def conn(db) -> str:
    return (f'url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}", '
            f'password = "{db.password}"')


def plan_of(text: str):
    return compile_job(text, use_cache=False)


def per_partition(df) -> list[int]:
    """Rows in each Spark partition."""
    from pyspark.sql import functions as F

    counts = dict(df.groupBy(F.spark_partition_id().alias("p")).count().collect())
    return [counts.get(i, 0) for i in range(df.rdd.getNumPartitions())]


def write_tasks(spark, run: Callable[[], Any]) -> tuple[Any, int]:
    """``run()``'s result and the number of tasks of the last Spark stage it ran: a pipeline into one
    Jdbc table ends with the staging write (its commit runs on the driver), one task per writer."""
    sc = spark.sparkContext
    group = f"jdbc-parallelism-{uuid.uuid4().hex}"
    sc.setJobGroup(group, "the Jdbc write at the plan's parallelism")
    try:
        result = run()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    tracker = sc.statusTracker()
    jobs = sorted(tracker.getJobIdsForGroup(group))
    assert jobs, "the run started no Spark job"
    last_stage = max(tracker.getJobInfo(jobs[-1]).stageIds)
    return result, tracker.getStageInfo(last_stage).numTasks


def test_the_source_reads_its_splits_by_the_plans_readers(spark, db):
    """More splits than readers (5 or 4 for 2): each reader reads several; fewer (1 for 2): the rows
    are spread over every reader. A table_list gives each of its tables that many partitions."""
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{
          Jdbc {{ {conn(db)}, plugin_output = "fixed", query = "SELECT * FROM items", partition_column = "k",
                  partition_num = 5 }}
          Jdbc {{ {conn(db)}, plugin_output = "listed", table_list = [{{ table_path = "public.loose" }},
                  {{ table_path = "public.items", query = "SELECT * FROM items", partition_column = "id",
                     partition_num = 4 }}] }}
        }}
        sink {{ Console {{ plugin_input = "fixed" }} Console {{ plugin_input = "listed" }} }}
    """)
    read = {}
    for p in plan.pipelines:
        source = p.sources[0]
        for table, df in JDBC.read(RunContext(spark, plan, p, "read-1"), source).items():
            sizes = per_partition(df)
            read[table] = (source.parallelism, len(sizes), sum(sizes), all(sizes))
    assert read == {"fixed": (2, 2, 40, True), "seatunnel_test.public.loose": (2, 2, 12, True),
                    "seatunnel_test.public.items": (2, 2, 40, True)}


def test_fewer_readers_than_splits_read_them_without_a_shuffle(spark, db, capsys):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 4 }}
        source {{ Jdbc {{ {conn(db)}, table_path = "public.items", split.size = 10, parallelism = 2 }} }}
        sink {{ Console {{ }} }}
    """)
    p = plan.pipelines[0]
    (df,) = JDBC.read(RunContext(spark, plan, p, "read-2"), p.sources[0]).values()
    df.explain()
    physical = capsys.readouterr().out
    # ceil(40 / 10) = 4 splits for 2 readers: two each, no shuffle
    found = ("Coalesce 2" in physical, "Exchange" in physical, p.sources[0].parallelism, sorted(per_partition(df)))
    assert found == (True, False, 2, [20, 20]), physical


def test_the_sink_writes_with_the_plans_writers(spark, db):
    """The sink's parallelism is its input's (env 2); its source has 5 splits."""
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ Jdbc {{ {conn(db)}, query = "SELECT * FROM items", partition_column = "k", partition_num = 5 }} }}
        sink {{ Jdbc {{ {conn(db)}, generate_sink_sql = true, table = "public.copied" }} }}
    """)
    p = plan.pipelines[0]
    metrics, writers = write_tasks(spark, lambda: run_pipeline(RunContext(spark, plan, p, "write-1")))
    stored = db.sql("SELECT count(*) FROM copied")
    assert (p.sinks[0].parallelism, writers, metrics["write_count"], stored) == (2, 2, 40, [["40"]])


def test_a_keyed_sink_groups_its_rows_by_key_into_the_plans_writers(spark, db):
    """With primary_keys the last change per key is kept in a shuffle by key: it has the sink's
    parallelism (its own 3 here), not Spark's default number of shuffle partitions."""
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ Jdbc {{ {conn(db)}, query = "SELECT * FROM items", partition_column = "k", partition_num = 5 }} }}
        sink {{ Jdbc {{ {conn(db)}, generate_sink_sql = true, table = "public.keyed", primary_keys = ["id"],
                       parallelism = 3 }} }}
    """)
    p = plan.pipelines[0]
    _, writers = write_tasks(spark, lambda: run_pipeline(RunContext(spark, plan, p, "write-2")))
    stored = db.sql("SELECT count(*), count(DISTINCT id) FROM keyed")
    # the test session's spark.sql.shuffle.partitions is 4 (tests/runtime/conftest.py)
    assert (p.sinks[0].parallelism, writers, stored) == (3, 3, [["40", "40"]])


def test_a_split_pipeline_reads_and_writes_at_each_pipelines_figure(spark, db):
    """A sink of two inputs splits the job into one pipeline per source; in each, the sink runs at
    its source's parallelism (1 and 2), whatever its own block asks (3)."""
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{
          Jdbc {{ {conn(db)}, plugin_output = "a", query = "SELECT id, name FROM items WHERE id <= 20",
                  partition_column = "id", partition_num = 4, parallelism = 1 }}
          Jdbc {{ {conn(db)}, plugin_output = "b", query = "SELECT id, name FROM items WHERE id > 20",
                  partition_column = "id", partition_num = 5 }}
        }}
        sink {{ Jdbc {{ {conn(db)}, plugin_input = ["a", "b"], generate_sink_sql = true, table = "public.merged",
                       parallelism = 3 }} }}
    """)
    assert len(plan.pipelines) == 2
    seen = []
    for p in plan.pipelines:
        source, sink = p.sources[0], p.sinks[0]
        (df,) = JDBC.read(RunContext(spark, plan, p, "split-read"), source).values()
        _, writers = write_tasks(spark, lambda p=p: run_pipeline(RunContext(spark, plan, p, "split-1")))
        seen.append((source.output, source.parallelism, df.rdd.getNumPartitions(), sink.parallelism, writers))
    stored = db.sql("SELECT count(*), count(DISTINCT id) FROM merged")
    assert (sorted(seen), stored) == ([("a", 1, 1, 1, 1), ("b", 2, 2, 2, 2)], [["40", "40"]])


def test_a_table_spread_by_its_primary_key_is_grouped_for_an_upsert_in_one_shuffle(spark, db):
    """A table of one split read by 2 readers is spread by the hash of its primary key; an upsert on
    that key at the same parallelism then needs no second shuffle (Spark keeps the grouping when
    adaptive execution is off, as in a plain multi-table copy): one Exchange, every row once."""
    from airflow_provider_seatunnel.connectors.jdbc.sink import staging_frame
    from airflow_provider_seatunnel.connectors.jdbc.target import target_of

    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ Jdbc {{ {conn(db)}, plugin_output = "db", table_list = [{{ table_path = "public.items" }},
                  {{ table_path = "public.loose" }}] }} }}
        sink {{ Jdbc {{ {conn(db)}, generate_sink_sql = true, table = "public.${{table_name}}_copy",
                       primary_keys = ["id"] }} }}
    """)
    p = plan.pipelines[0]
    read = JDBC.read(RunContext(spark, plan, p, "spread-1"), p.sources[0])
    items, loose = read["seatunnel_test.public.items"], read["seatunnel_test.public.loose"]
    _, target = target_of(p.sinks[0].config, "seatunnel_test.public.items", items.columns)
    staged, _ = staging_frame(items, target, 2)
    before = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        physical = staged._jdf.queryExecution().executedPlan().toString()
        ids = sorted(r[0] for r in staged.select("id").collect())
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", before)
    assert (physical.count("Exchange "), "hashpartitioning(id" in physical, ids) == (1, True, list(range(1, 41))), physical
    assert sorted(per_partition(loose)) == [6, 6]  # no key: round robin, as before
