"""A multi-table Jdbc sink writes its tables several at once (runtime/tables.py), each pool thread in
its own FAIR scheduler pool, against a real PostgreSQL (tests/pg.py): every table its own commit, a
failing table fails the pipeline naming it and no table is committed."""

from __future__ import annotations

import logging

import pytest

from airflow_provider_seatunnel.runtime import tables
from airflow_provider_seatunnel.runtime.session import application_settings
from airflow_provider_seatunnel.spi.errors import PipelineError
from tests import pg

NAMES = [f"ct_{i}" for i in range(1, 7)]


@pytest.fixture(scope="module")
def db():
    setup = "; ".join(f"CREATE TABLE {t} (id int PRIMARY KEY, name text); INSERT INTO {t} SELECT g, '{t}-' || g "
                      f"FROM generate_series(1, {i * 10}) g" for i, t in enumerate(NAMES, 1))
    with pg.running(setup) as server:
        yield server


def config(db, run: str, entries: list[str], env: str = "multi_table.concurrent_tables = 3") -> str:
    conn = f'url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}", password = "{db.password}"'
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1, {env} }}
        source {{ Jdbc {{ {conn}, plugin_output = "db", table_list = [{", ".join(entries)}] }} }}
        sink {{ Jdbc {{ {conn}, plugin_input = "db", generate_sink_sql = true, table = "{run}.${{table_name}}",
                       primary_keys = ["id"], schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }} }}
    """


def stage_pools(spark) -> set[str]:
    """The FAIR scheduler pools of the stages this application ran (Spark's status store)."""
    jvm = spark.sparkContext._jvm
    no_quantiles = spark.sparkContext._gateway.new_array(jvm.double, 0)
    stages = spark.sparkContext._jsc.sc().statusStore().stageList(None, False, False, no_quantiles,
                                                                   jvm.java.util.ArrayList())
    return {stages.apply(i).schedulingPool() for i in range(stages.size())}


def counts(db, schema: str) -> dict[str, int]:
    found = db.sql(f"SELECT tablename FROM pg_tables WHERE schemaname = '{schema}' AND tablename LIKE 'ct_%'")
    return {t: int(db.sql(f"SELECT count(*) FROM {schema}.{t}")[0][0]) for (t,) in found}


def test_the_tables_are_written_at_once_in_their_own_pools_each_with_its_commit(run_job, spark, db, caplog):
    caplog.set_level(logging.INFO, logger="seatunnel.runtime")
    run_job(config(db, "copy_a", [f'{{ table_path = "public.{t}" }}' for t in NAMES]), run_id="concurrent-a")
    # one row type: the six tables staged by three shared writes (two tables each, three at once)
    assert caplog.text.count("staged 2 tables with one write") == 3
    assert counts(db, "copy_a") == {t: i * 10 for i, t in enumerate(NAMES, 1)}
    assert db.sql("SELECT count(*) FROM copy_a.seatunnel_commits WHERE run_id = 'concurrent-a'") == [[str(len(NAMES))]]
    pools = {p for p in stage_pools(spark) if p.startswith(tables.POOL_PREFIX)}
    assert len(pools) >= 2  # the pool's first submissions start a thread each: three threads, three pools
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]


def test_a_failing_table_fails_the_pipeline_naming_it_and_no_table_is_committed(run_job, db):
    entries = [f'{{ table_path = "public.{t}" }}' for t in NAMES]
    # the read of ct_3 divides by zero on the server: its staging write fails, the others succeed
    entries[2] = '{ table_path = "public.ct_3", query = "SELECT id, name || (1 / (id - 3)) AS name FROM ct_3" }'
    with pytest.raises(PipelineError) as failed:
        run_job(config(db, "copy_b", entries), run_id="concurrent-b")
    assert "ct_3" in str(failed.value)
    assert all(n == 0 for n in counts(db, "copy_b").values())  # save modes created them; no rows committed
    assert db.sql("SELECT count(*) FROM copy_b.seatunnel_commits") == [["0"]]
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]  # all discarded
    # the restore of the run (the read fixed) writes every table once
    run_job(config(db, "copy_b", [f'{{ table_path = "public.{t}" }}' for t in NAMES]), run_id="concurrent-b")
    assert counts(db, "copy_b") == {t: i * 10 for i, t in enumerate(NAMES, 1)}
    assert db.sql("SELECT count(*) FROM copy_b.seatunnel_commits") == [[str(len(NAMES))]]


def test_tables_of_other_row_types_stage_apart_and_each_keeps_the_last_row_per_key(run_job, db, caplog):
    """Tables share a staging write only with tables of their row type; within a shared write each
    table keeps its own last row per key (ct_5's query repeats keys) and lands in its own target."""
    caplog.set_level(logging.INFO, logger="seatunnel.runtime")
    entries = [f'{{ table_path = "public.{t}" }}' for t in NAMES[:3]]
    entries.append('{ table_path = "public.ct_4", query = "SELECT id, name, id * 2 AS twice FROM ct_4" }')
    entries.append('{ table_path = "public.ct_5", query = "SELECT id % 3 AS id, name FROM ct_5" }')
    run_job(config(db, "copy_f", entries, env="multi_table.concurrent_tables = 1"), run_id="concurrent-f")
    assert "staged 4 tables with one write" in caplog.text  # ct_1..3 and ct_5; ct_4 alone
    assert counts(db, "copy_f") == {"ct_1": 10, "ct_2": 20, "ct_3": 30, "ct_4": 40, "ct_5": 3}
    assert db.sql("SELECT sum(twice) FROM copy_f.ct_4") == [[str(sum(range(1, 41)) * 2)]]
    assert db.sql("SELECT count(DISTINCT id), min(id), max(id) FROM copy_f.ct_5") == [["3", "0", "2"]]
    assert db.sql("SELECT count(*) FROM copy_f.seatunnel_commits") == [["5"]]
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]


def test_a_bad_concurrency_option_is_a_config_error_at_compile_time(config_error, db):
    err = config_error(config(db, "copy_c", ['{ table_path = "public.ct_1" }', '{ table_path = "public.ct_2" }'],
                              env="multi_table.concurrent_tables = 0"))
    (problem,) = err.problems
    assert (problem.key, problem.plugin) == ("multi_table.concurrent_tables", "env")
    assert "must be a positive integer, found 0" in problem.message


def test_a_pipeline_with_a_multi_table_sink_gets_the_fair_scheduler(plan_of, db):
    plan = plan_of(config(db, "copy_d", ['{ table_path = "public.ct_1" }', '{ table_path = "public.ct_2" }']))
    assert application_settings(plan, plan.pipelines[0])["spark.scheduler.mode"] == "FAIR"
    single = plan_of(config(db, "copy_d", ['{ table_path = "public.ct_1" }']))
    assert "spark.scheduler.mode" not in application_settings(single, single.pipelines[0])


def test_a_plain_multi_table_copy_runs_without_adaptive_execution(plan_of, db):
    """A copy of several tables (no transform) plans every shuffle with the plan's parallelism:
    adaptive execution would only add jobs, so it is off, unless the env sets it or a transform
    (whose shuffles it may tune) is in the pipeline."""
    entries = ['{ table_path = "public.ct_1" }', '{ table_path = "public.ct_2" }']
    plan = plan_of(config(db, "copy_e", entries))
    assert application_settings(plan, plan.pipelines[0])[tables.ADAPTIVE] == "false"
    kept = plan_of(config(db, "copy_e", entries, env="spark.sql.adaptive.enabled = true"))
    assert application_settings(kept, kept.pipelines[0]).get(tables.ADAPTIVE, "true") == "true"
    with_sql = plan_of(config(db, "copy_e", entries).replace(
        'plugin_input = "db"', 'plugin_input = "picked"').replace(
        "sink {", 'transform { FieldMapper { plugin_input = "db", plugin_output = "picked", '
                  'field_mapper = { id = id, name = name } } }\n'
                  "        sink {", 1))
    settings = application_settings(with_sql, with_sql.pipelines[0])
    assert (settings.get("spark.scheduler.mode"), tables.ADAPTIVE in settings) == ("FAIR", False)
    single = plan_of(config(db, "copy_e", entries[:1]))
    assert tables.ADAPTIVE not in application_settings(single, single.pipelines[0])
