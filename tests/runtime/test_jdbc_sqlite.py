"""Jdbc source and sink on real Spark against a real SQLite database file through Debian's
SQLite JDBC driver (/usr/share/java/sqlite-jdbc.jar): multi-table reads, splits, upserts
(``ON CONFLICT … DO UPDATE``), save modes, placeholders and exactly-once under retries. The
tests read the file back with Python's own sqlite3, never through the code under test."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3

import pytest

from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.connectors.sqlclient.connection import required_jars
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError, RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import ROW_KIND

JAR = "/usr/share/java/sqlite-jdbc.jar"


@pytest.fixture(scope="module")
def lite(tmp_path_factory):
    """A SQLite database file with the source tables (fails, never skips, without Debian's driver)."""
    if not os.path.isfile(JAR):
        pytest.fail(f"{JAR} is missing: run `make test-deps` (libxerial-sqlite-jdbc-java)", pytrace=False)
    path = tmp_path_factory.mktemp("sqlite") / "shop.db"
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE typed (id INTEGER PRIMARY KEY, name VARCHAR(10), big BIGINT, ratio DOUBLE, day DATE);
            INSERT INTO typed VALUES (1, 'ann', 10000000000, 0.5, '2024-01-02'), (2, NULL, NULL, NULL, NULL);
            CREATE TABLE numbers (id INTEGER PRIMARY KEY, k INTEGER, code VARCHAR(10));
            WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 35)
              INSERT INTO numbers SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE i END, 'c' || i FROM s;
        """)
    return path


def conn(lite) -> str:
    return f'url = "jdbc:sqlite:{lite}", driver = "org.sqlite.JDBC"'


def sql(lite, statement: str) -> list[tuple]:
    with sqlite3.connect(lite) as db:
        return [tuple(r) for r in db.execute(statement).fetchall()]


def fake(rows: list[tuple[str, list]], fields: str = "id = int, name = string", output: str = "fake") -> str:
    listed = ", ".join(f"{{ kind = {kind}, fields = {json.dumps(values)} }}" for kind, values in rows)
    return f'FakeSource {{ plugin_output = "{output}", schema = {{ fields {{ {fields} }} }}, rows = [{listed}] }}'


def job(lite, source: str, sink_options: str, env: str = "") -> str:
    return f"""
        env {{ job.mode = "BATCH" {env} }}
        source {{ {source} }}
        sink {{ Jdbc {{ {conn(lite)}, {sink_options} }} }}
    """


def read(plan_of, spark, lite, block: str) -> dict:
    plan = plan_of(f'source {{ Jdbc {{ plugin_output = "src", {conn(lite)}, {block} }} }}\nsink {{ Console {{ }} }}\n')
    p = plan.pipelines[0]
    return JDBC.read(RunContext(spark, plan, p, "run-src"), p.sources[0])


def rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.select([c for c in df.columns if c != ROW_KIND]).collect()), key=repr)


ROWS = [("INSERT", [1, "ann"]), ("INSERT", [2, "bob"]), ("INSERT", [3, None])]


def test_the_driver_is_debians_and_the_dialect_sqlites(lite):
    assert required_jars({"url": f"jdbc:sqlite:{lite}", "driver": "org.sqlite.JDBC"}) == [JAR]


def test_table_path_table_list_and_splits(plan_of, spark, lite):
    (table_id, df), = read(plan_of, spark, lite, 'table_path = "typed"').items()
    assert table_id == "typed"
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields if f.name != ROW_KIND} == {
        "id": "int", "name": "string", "big": "bigint", "ratio": "double", "day": "date"}
    assert rows(df) == [(1, "ann", 10000000000, 0.5, dt.date(2024, 1, 2)), (2, None, None, None, None)]
    data = read(plan_of, spark, lite, 'table_list = [{ table_path = "typed", query = "SELECT id FROM typed" }, '
                                      '{ table_path = "main.numbers", query = "SELECT id, code FROM numbers", '
                                      'partition_column = "code", partition_num = 3 }], parallelism = 3')
    assert sorted(data) == ["main.numbers", "typed"] and rows(data["typed"]) == [(1,), (2,)]
    numbers = data["main.numbers"]
    from pyspark.sql import functions as F

    per_split = dict(numbers.groupBy(F.spark_partition_id()).count().collect())
    assert numbers.rdd.getNumPartitions() == 3 and len(per_split) == 3  # SQLite's string-key buckets
    assert sorted(r[0] for r in rows(numbers)) == list(range(1, 36))
    (_, df), = read(plan_of, spark, lite, 'table_path = "numbers", split.size = 10, parallelism = 4').items()
    assert sorted(dict(df.groupBy(F.spark_partition_id()).count().collect()).values()) == [8, 9, 9, 9]


def test_sink_creates_upserts_and_a_rerun_of_the_run_adds_nothing(run_job, lite):
    text = job(lite, fake(ROWS), 'generate_sink_sql = true, table = "people", primary_keys = ["id"]',
               env=", parallelism = 2")
    run_job(text, run_id="lite-1")
    assert sql(lite, "SELECT * FROM people ORDER BY id") == [(1, "ann"), (2, "bob"), (3, None)]
    run_job(text, run_id="lite-1")  # a retry of a committed run
    assert len(sql(lite, "SELECT * FROM people")) == 3
    changes = [("UPDATE_BEFORE", [1, "ann"]), ("UPDATE_AFTER", [1, "ann2"]), ("DELETE", [2, "bob"]),
               ("INSERT", [4, "dan"])]
    run_job(job(lite, fake(changes), 'generate_sink_sql = true, table = "people", primary_keys = ["id"]'),
            run_id="lite-2")
    assert sql(lite, "SELECT * FROM people ORDER BY id") == [(1, "ann2"), (3, None), (4, "dan")]
    run_job(job(lite, fake([("UPDATE_AFTER", [3, "cy"]), ("INSERT", [5, "eve"])]),
                'generate_sink_sql = true, table = "people", primary_keys = ["id"], enable_upsert = false'),
            run_id="lite-3")
    assert sql(lite, "SELECT * FROM people ORDER BY id") == [(1, "ann2"), (3, "cy"), (4, "dan"), (5, "eve")]
    with pytest.raises(DataError, match="UNIQUE constraint failed"):
        run_job(job(lite, fake([("INSERT", [1, "dup"])]), 'generate_sink_sql = true, table = "people", '
                    'primary_keys = ["id"], support_upsert_by_insert_only = true'), run_id="lite-4")
    assert [r[0] for r in sql(lite, "SELECT run_id FROM seatunnel_commits ORDER BY run_id")] == [
        "lite-1", "lite-2", "lite-3"]
    assert sql(lite, "SELECT name FROM sqlite_master WHERE name LIKE 'st_stage_%'") == []


def test_multi_table_placeholders_and_save_modes(run_job, lite):
    text = f"""
        source {{ Jdbc {{ {conn(lite)}, plugin_output = "tables",
                          table_list = [{{ table_path = "typed" }}, {{ table_path = "numbers" }}] }} }}
        sink {{ Jdbc {{ {conn(lite)}, plugin_input = "tables", generate_sink_sql = true,
                        table = "${{table_name}}_copy", data_save_mode = "DROP_DATA" }} }}
    """
    run_job(text, run_id="copy-1")
    run_job(text, run_id="copy-2")  # DROP_DATA: the new run replaces the rows
    assert sql(lite, "SELECT count(*) FROM typed_copy") == [(2,)] and sql(lite, "SELECT count(*) FROM numbers_copy") \
        == [(35,)]
    with sqlite3.connect(lite) as db:
        db.executescript("CREATE TABLE recreated (junk TEXT); INSERT INTO recreated VALUES ('x');")
    run_job(job(lite, fake(ROWS[:1]), 'generate_sink_sql = true, table = "recreated", '
                                      'schema_save_mode = "RECREATE_SCHEMA"'), run_id="sm-1")
    assert sql(lite, "SELECT * FROM recreated") == [(1, "ann")]
    with pytest.raises(RuntimeConfigError, match="The sink table not exist: missing"):
        run_job(job(lite, fake(ROWS), 'generate_sink_sql = true, table = "missing", '
                                      'schema_save_mode = "ERROR_WHEN_SCHEMA_NOT_EXIST"'), run_id="sm-2")
    with pytest.raises(RuntimeConfigError, match="already has data: recreated"):
        run_job(job(lite, fake(ROWS), 'generate_sink_sql = true, table = "recreated", '
                                      'data_save_mode = "ERROR_WHEN_DATA_EXISTS"'), run_id="sm-3")


def test_primary_key_placeholder_takes_each_tables_own_key(run_job, lite):
    """``primary_keys = ["${primary_key}"]``: each table's key as its source read it (typed: id, numbers: id), so
    the created tables get it and a second run upserts instead of adding rows; the metrics count per table."""
    text = f"""
        source {{ Jdbc {{ {conn(lite)}, plugin_output = "tables",
                          table_list = [{{ table_path = "typed" }}, {{ table_path = "numbers" }}] }} }}
        sink {{ Jdbc {{ {conn(lite)}, plugin_input = "tables", generate_sink_sql = true,
                        table = "${{table_name}}_keyed", primary_keys = ["${{primary_key}}"] }} }}
    """
    (metrics,) = run_job(text, run_id="keyed-1")
    assert metrics["per_table_read"] == {"source[0] Jdbc": {"typed": 2, "numbers": 35}}
    assert metrics["per_table"] == {"sink[0] Jdbc": {"typed": 2, "numbers": 35}}
    run_job(text, run_id="keyed-2")  # another run: upserts by the expanded key, no duplicate
    assert sql(lite, "SELECT count(*) FROM typed_keyed") == [(2,)]
    assert sql(lite, "SELECT count(*) FROM numbers_keyed") == [(35,)]
    for table in ("typed_keyed", "numbers_keyed"):
        assert [r[1] for r in sql(lite, f"PRAGMA table_info({table})") if r[5]] == ["id"]  # its primary key
