"""Jdbc source on real Spark against a real, private PostgreSQL server (tests/pg.py)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import PipelineError, RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import ROW_KIND
from tests import pg


@pytest.fixture(scope="module")
def db(db):
    """The module's PostgreSQL server, with the source tables."""
    db.sql("""
        CREATE TABLE typed (id int PRIMARY KEY, name varchar(10), amount numeric(10,2), big bigint, small smallint,
                            ratio double precision, flag boolean, day date, at timestamp, at_tz timestamptz,
                            clock time, raw bytea, tags text[]);
        INSERT INTO typed VALUES
          (1, 'ann', 1.50, 10000000000, 3, 0.5, true, '2024-01-02', '2024-01-02 03:04:05.123456',
           '2024-01-02 03:04:05+02', '10:11:12.5', '\\x0102', '{a,b}'),
          (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        CREATE TABLE numbers (id int PRIMARY KEY, k int, code text);
        INSERT INTO numbers SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE i END, 'c' || i
          FROM generate_series(1, 35) AS i;
        CREATE TABLE nokey (v int);
        INSERT INTO nokey SELECT generate_series(1, 30);
        CREATE SCHEMA other;
        CREATE TABLE other.people (id int PRIMARY KEY, name text);
        INSERT INTO other.people VALUES (1, 'x'), (2, 'y');
    """)
    return db


def conn_block(db, **extra) -> str:
    lines = [f'url = "{db.url}"', 'driver = "org.postgresql.Driver"', f'user = "{db.user}"',
             f'password = "{db.password}"']
    for key, value in extra.items():
        key = key.replace("__", ".")
        lines.append(f"{key} = {value}" if isinstance(value, (int, list)) or str(value).startswith("[")
                     else f'{key} = "{value}"')
    return "\n    ".join(lines)


def read(plan_of, spark, db, **options) -> dict:
    """Read through the Jdbc source configured by ``options``: {table id: DataFrame}."""
    plan = plan_of(f'source {{ Jdbc {{\n    plugin_output = "src"\n    {conn_block(db, **options)}\n}} }}\n'
                   'sink { Console { } }\n')
    p = plan.pipelines[0]
    return JDBC.read(RunContext(spark, plan, p, "run-src"), p.sources[0])


def rows(df, *columns) -> list[tuple]:
    cols = list(columns) or [c for c in df.columns if c != ROW_KIND]
    return sorted((tuple(r) for r in df.select(*cols).collect()), key=repr)


def per_partition(df) -> list[int]:
    """Rows in each Spark partition (the splits)."""
    from pyspark.sql import functions as F

    counts = dict(df.groupBy(F.spark_partition_id().alias("p")).count().collect())
    return [counts.get(i, 0) for i in range(df.rdd.getNumPartitions())]


def test_table_path_reads_every_type(plan_of, spark, db):
    (table, df), = read(plan_of, spark, db, table_path="public.typed").items()
    assert table == "seatunnel_test.public.typed"  # database.schema.table: ${database_name} etc. in sinks
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == {"id": "int", "name": "string", "amount": "decimal(10,2)", "big": "bigint", "small": "smallint",
                     "ratio": "double", "flag": "boolean", "day": "date", "at": "timestamp_ntz", "at_tz": "timestamp",
                     "clock": "time(6)", "raw": "binary", "tags": "array<string>", ROW_KIND: "tinyint"}
    first, second = rows(df)
    assert first == (1, "ann", Decimal("1.50"), 10000000000, 3, 0.5, True, dt.date(2024, 1, 2),
                     dt.datetime(2024, 1, 2, 3, 4, 5, 123456), dt.datetime(2024, 1, 2, 1, 4, 5), dt.time(10, 11, 12, 500000),
                     bytearray(b"\x01\x02"), ["a", "b"])
    assert second == (2,) + (None,) * 12
    assert rows(df, ROW_KIND) == [(0,), (0,)]  # INSERT rows


def test_query_with_where_condition_and_fetch_size(plan_of, spark, db):
    (table, df), = read(plan_of, spark, db, query="SELECT id, code FROM numbers WHERE id <= 20",
                        where_condition="where id > 15", fetch_size=2).items()
    assert table == "src"  # a query's table is the output name
    assert rows(df) == [(i, f"c{i}") for i in range(16, 21)]
    assert df.rdd.getNumPartitions() == 1  # a query without partition_column is one split


def test_fixed_splitter_numeric_key_uses_partition_num_partitions(plan_of, spark, db):
    (_, df), = read(plan_of, spark, db, query="SELECT * FROM numbers", partition_column="k", partition_num=3,
                    parallelism=3).items()
    assert df.rdd.getNumPartitions() == 3
    sizes = per_partition(df)
    assert all(n > 0 for n in sizes) and sum(sizes) == 32  # min..max of k; null keys are not read (SeaTunnel)
    assert sorted(r[0] for r in rows(df, "k")) == [i for i in range(1, 36) if i % 10]


def test_fixed_splitter_bounds_limit_the_rows(plan_of, spark, db):
    (_, df), = read(plan_of, spark, db, query="SELECT * FROM numbers", partition_column="k", partition_num=4,
                    partition_lower_bound=5, partition_upper_bound=12, parallelism=4).items()
    assert df.rdd.getNumPartitions() == 4
    assert per_partition(df) == [2, 2, 1, 2]  # [5,6] [7,8] [9,10] [11,12]; 10 is null
    assert sorted(r[0] for r in rows(df, "k")) == [5, 6, 7, 8, 9, 11, 12]


def test_fixed_splitter_string_key_hashes_into_partitions(plan_of, spark, db):
    (_, df), = read(plan_of, spark, db, query="SELECT * FROM numbers", partition_column="code",
                    partition_num=3, parallelism=3).items()
    assert df.rdd.getNumPartitions() == 3
    assert all(n > 0 for n in per_partition(df))
    assert sorted(r[0] for r in rows(df, "id")) == list(range(1, 36))


def test_dynamic_splitter_uses_the_primary_key_and_split_size(plan_of, spark, db):
    (_, df), = read(plan_of, spark, db, table_path="numbers", split__size=10, parallelism=4).items()
    assert df.rdd.getNumPartitions() == 4  # ceil(35 / 10) splits over the primary key id
    assert per_partition(df) == [9, 9, 9, 8]
    (_, df), = read(plan_of, spark, db, table_path="numbers", partition_column="k", split__size=10,
                    parallelism=4).items()
    assert df.rdd.getNumPartitions() == 4 and sum(per_partition(df)) == 35  # null keys land in the first split
    (_, df), = read(plan_of, spark, db, table_path="nokey", split__size=10).items()
    assert df.rdd.getNumPartitions() == 1  # no key: one split


def test_properties_reach_the_driver(plan_of, spark, db):
    plan = plan_of(f"""
        source {{ Jdbc {{ {conn_block(db)}
            properties = {{ currentSchema = "other" }}
            connection_check_timeout_sec = 5
            query = "SELECT * FROM people"
        }} }}
        sink {{ Console {{ }} }}
    """)
    p = plan.pipelines[0]
    (df,) = JDBC.read(RunContext(spark, plan, p, "r"), p.sources[0]).values()
    assert rows(df) == [(1, "x"), (2, "y")]  # found through the search path the property set


def test_own_parallelism_repartitions(plan_of, spark, db):
    (_, df), = read(plan_of, spark, db, table_path="nokey", parallelism=3).items()
    assert df.rdd.getNumPartitions() == 3 and df.count() == 30


def test_table_list_reads_several_tables(plan_of, spark, db):
    plan = plan_of(f"""
        source {{ Jdbc {{
            {conn_block(db)}
            table_list = [{{ table_path = "seatunnel_test.other.people" }},
                          {{ table_path = "public.numbers", query = "SELECT id FROM numbers WHERE id < 3" }}]
        }} }}
        sink {{ Console {{ }} }}
    """)
    p = plan.pipelines[0]
    data = JDBC.read(RunContext(spark, plan, p, "r"), p.sources[0])
    assert sorted(data) == ["seatunnel_test.other.people", "seatunnel_test.public.numbers"]
    assert rows(data["seatunnel_test.other.people"]) == [(1, "x"), (2, "y")]
    assert rows(data["seatunnel_test.public.numbers"]) == [(1,), (2,)]


def test_bad_query_is_a_config_error_and_a_down_server_is_transient(plan_of, spark, db):
    with pytest.raises(RuntimeConfigError) as info:
        read(plan_of, spark, db, query="SELECT nope FROM numbers")
    assert 'column "nope" does not exist' in str(info.value) and "42703" in str(info.value)
    with pytest.raises(RuntimeConfigError, match=r"partition_column 'kk' is not a column.*did you mean 'k'"):
        read(plan_of, spark, db, query="SELECT * FROM numbers", partition_column="kk")
    down = db.url.replace(f":{db.port}/", f":{pg.free_port()}/")
    plan = plan_of(f'source {{ Jdbc {{ url = "{down}", driver = "org.postgresql.Driver", user = "{db.user}", '
                   f'password = "{db.password}", query = "SELECT 1" }} }}\nsink {{ Console {{ }} }}\n')
    p = plan.pipelines[0]
    with pytest.raises(PipelineError) as info:
        JDBC.read(RunContext(spark, plan, p, "r"), p.sources[0])
    assert not info.value.deterministic and "refused" in str(info.value) and db.password not in str(info.value)


def test_wrong_password_is_a_config_error_without_the_password(plan_of, spark, db):
    plan = plan_of(f'source {{ Jdbc {{ url = "{db.url}?password=leaked-{db.password}", driver = "org.postgresql.Driver", '
                   f'user = "{db.user}", password = "wrong-{db.password}", query = "SELECT 1" }} }}\n'
                   'sink { Console { } }\n')
    p = plan.pipelines[0]
    with pytest.raises(RuntimeConfigError) as info:
        JDBC.read(RunContext(spark, plan, p, "r"), p.sources[0])
    text = str(info.value) + repr(info.value.__cause__) + repr(info.value.__context__)
    assert "password authentication failed" in text and db.password not in text
    assert "password=******" in text


def test_query_params_bind_values_holding_quotes_as_literals(plan_of, spark, db):
    """A value with a quote matches the row holding it, and one written to break out of its literal
    matches nothing (it is one string); the table is intact afterwards."""
    db.sql("""CREATE TABLE quoted (id int PRIMARY KEY, name text, at timestamptz);
              INSERT INTO quoted VALUES (1, 'O''Brien', '2024-05-07 10:00+00'), (2, 'plain', '2024-05-07 11:00+00'),
                                        (3, 'a\\b', '2024-05-08 00:00+00')""")
    query = "select id, name from quoted where (name = ? or name = ? or name = ?) and at >= ? and at < ? and id < ?"
    params = ["O'Brien", "plain' or '1'='1", "a\\b", "2024-05-07T00:00:00+00:00", "2024-05-08T00:00:00+00:00", 10]
    literal = "[" + ", ".join(f'"{p}"' if isinstance(p, str) else str(p) for p in params).replace("\\", "\\\\") + "]"
    (df,) = read(plan_of, spark, db, query=query, query_params=literal).values()
    assert rows(df) == [(1, "O'Brien")]  # not 'plain' (the break-out is one string), not 3 (outside the window)
    (df,) = read(plan_of, spark, db, query="select id from quoted where name = ?", query_params='["a\\\\b"]').values()
    assert rows(df) == [(3,)]
    assert db.sql("select count(*) from quoted") == [["3"]]
    with pytest.raises(ConfigError, match=r"query_params has 1 value\(s\) for 2"):  # at compile time
        read(plan_of, spark, db, query="select id from quoted where id = ? or id = ?", query_params="[1]")
