"""Jdbc source and sink on real Spark against a real, private MariaDB server (tests/mysql.py),
through MySQL Connector/J (``com.mysql.cj.jdbc.Driver``, as SeaTunnel's configs name it) where
``make test-deps`` fetched it, and Debian's MariaDB Connector/J: types, splits, multi-table reads,
upserts, save modes, placeholders, exactly-once under retries, and an Airflow ``mysql`` connection."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.connectors.sqlclient.connection import required_jars
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError, RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import ROW_KIND
from tests import mysql

#: the driver SeaTunnel's MySQL configs name, when its jar is in Maven's local repository
CONNECTOR_J = mysql.connector_j()
DRIVER = "com.mysql.cj.jdbc.Driver" if CONNECTOR_J else "org.mariadb.jdbc.Driver"


@pytest.fixture(scope="session")
def my():
    """One private MariaDB server for the session (Debian's packages; fails, never skips, without them)."""
    with mysql.running("""
        CREATE TABLE typed (id INT PRIMARY KEY, name VARCHAR(10), amount DECIMAL(10,2), big BIGINT, small SMALLINT,
                            tiny TINYINT, ratio DOUBLE, flag BOOLEAN, day DATE, at DATETIME(6), clock TIME(6),
                            raw VARBINARY(8), doc JSON, txt LONGTEXT);
        INSERT INTO typed VALUES
          (1, 'ann', 1.50, 10000000000, 3, -4, 0.5, TRUE, '2024-01-02', '2024-01-02 03:04:05.123456',
           '10:11:12.5', X'0102', '{"a": 1}', 'long'),
          (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        CREATE TABLE numbers (id INT PRIMARY KEY, k INT, code VARCHAR(10));
        INSERT INTO numbers SELECT seq, IF(seq % 10 = 0, NULL, seq), CONCAT('c', seq) FROM seq_1_to_35;
        CREATE TABLE nokey (v INT);
        INSERT INTO nokey SELECT seq FROM seq_1_to_30;
        CREATE DATABASE other;
        CREATE TABLE other.people (id INT PRIMARY KEY, name VARCHAR(20));
        INSERT INTO other.people VALUES (1, 'x'), (2, 'y');
    """) as server:
        yield server


def conn(my, driver: str = DRIVER, url: str | None = None) -> str:
    return f'url = "{url or my.url}", driver = "{driver}", user = "{my.user}", password = "{my.password}"'


def fake(rows: list[tuple[str, list]], fields: str = "id = int, name = string", output: str = "fake") -> str:
    """A FakeSource block emitting ``rows`` ((kind, values)) once, in order."""
    listed = ", ".join(f"{{ kind = {kind}, fields = {json.dumps(values)} }}" for kind, values in rows)
    return f'FakeSource {{ plugin_output = "{output}", schema = {{ fields {{ {fields} }} }}, rows = [{listed}] }}'


def job(my, source: str, sink_options: str, env: str = "") -> str:
    return f"""
        env {{ job.mode = "BATCH" {env} }}
        source {{ {source} }}
        sink {{ Jdbc {{ {conn(my)}, {sink_options} }} }}
    """


def table(my, name: str, order: str = "1") -> list[list[str | None]]:
    return my.sql(f"SELECT * FROM {name} ORDER BY {order}")


def staging_tables(my) -> list[str]:
    return [r[0] for r in my.sql("SELECT table_name FROM information_schema.tables "
                                 "WHERE table_name LIKE 'st\\_stage\\_%'")]


def commits(my, run_id: str, database: str = "seatunnel_test") -> int:
    return int(my.sql(f"SELECT count(*) FROM {database}.seatunnel_commits WHERE run_id = '{run_id}'")[0][0])


def read(plan_of, spark, my, block: str) -> dict:
    """Read through a Jdbc source block (``block``: its options after the connection's)."""
    plan = plan_of(f'source {{ Jdbc {{ plugin_output = "src", {block} }} }}\nsink {{ Console {{ }} }}\n')
    p = plan.pipelines[0]
    return JDBC.read(RunContext(spark, plan, p, "run-src"), p.sources[0])


def rows(df, *columns) -> list[tuple]:
    cols = list(columns) or [c for c in df.columns if c != ROW_KIND]
    return sorted((tuple(r) for r in df.select(*cols).collect()), key=repr)


def per_partition(df) -> list[int]:
    from pyspark.sql import functions as F

    counts = dict(df.groupBy(F.spark_partition_id().alias("p")).count().collect())
    return [counts.get(i, 0) for i in range(df.rdd.getNumPartitions())]


ROWS = [("INSERT", [1, "ann"]), ("INSERT", [2, "bob"]), ("INSERT", [3, None])]


# ------------------------------------------------------------------------------------------------
# source
# ------------------------------------------------------------------------------------------------

def test_table_path_reads_mysql_types(plan_of, spark, my):
    (table_id, df), = read(plan_of, spark, my, f'{conn(my)}, table_path = "seatunnel_test.typed"').items()
    assert table_id == "seatunnel_test.typed"  # database.table: ${database_name}/${table_name} in sinks
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == {"id": "int", "name": "string", "amount": "decimal(10,2)", "big": "bigint", "small": "smallint",
                     "tiny": "tinyint", "ratio": "double", "flag": "boolean", "day": "date", "at": "timestamp_ntz",
                     "clock": "time(6)", "raw": "binary", "doc": "string", "txt": "string", ROW_KIND: "tinyint"}
    first, second = rows(df)
    assert first == (1, "ann", Decimal("1.50"), 10000000000, 3, -4, 0.5, True, dt.date(2024, 1, 2),
                     dt.datetime(2024, 1, 2, 3, 4, 5, 123456), dt.time(10, 11, 12, 500000), bytearray(b"\x01\x02"),
                     '{"a": 1}', "long")
    assert second == (2,) + (None,) * 13


def test_splits_numeric_string_and_dynamic(plan_of, spark, my):
    (_, df), = read(plan_of, spark, my, f'{conn(my)}, query = "SELECT * FROM numbers", partition_column = "k", '
                                        'partition_num = 3, parallelism = 3').items()
    assert df.rdd.getNumPartitions() == 3 and all(n > 0 for n in per_partition(df))
    assert sorted(r[0] for r in rows(df, "k")) == [i for i in range(1, 36) if i % 10]  # null keys: not read
    (_, df), = read(plan_of, spark, my, f'{conn(my)}, query = "SELECT * FROM numbers", partition_column = "code", '
                                        'partition_num = 3, parallelism = 3').items()
    assert all(n > 0 for n in per_partition(df)) and sorted(r[0] for r in rows(df, "id")) == list(range(1, 36))
    (_, df), = read(plan_of, spark, my, f'{conn(my)}, table_path = "numbers", split.size = 10, '
                                        'parallelism = 4').items()
    assert per_partition(df) == [9, 9, 9, 8]  # ceil(35 / 10) splits over the primary key
    (_, df), = read(plan_of, spark, my, f'{conn(my)}, table_path = "nokey", split.size = 10, parallelism = 2').items()
    assert df.rdd.getNumPartitions() == 2 and df.count() == 30  # no key: one split, spread over the readers


def test_table_list_reads_tables_of_several_databases(plan_of, spark, my):
    data = read(plan_of, spark, my, f'{conn(my)}, table_list = [{{ table_path = "other.people" }}, '
                                    '{ table_path = "numbers", query = "SELECT id FROM numbers WHERE id < 3" }], '
                                    'where_condition = "where id <> 2"')
    assert sorted(data) == ["other.people", "seatunnel_test.numbers"]
    assert rows(data["other.people"]) == [(1, "x")] and rows(data["seatunnel_test.numbers"]) == [(1,)]


@pytest.mark.parametrize("driver", sorted({DRIVER, "org.mariadb.jdbc.Driver"}))
def test_catalog_keys_read_once_per_database_are_the_keys_read_per_table(spark, my, driver):
    """A ``table_list``'s keys from one catalog listing per database (one query over
    ``information_schema.STATISTICS``: Connector/J's catalog wants a table name) equal the per-table ones."""
    from airflow_provider_seatunnel.connectors.jdbc.catalog import catalog_keys, primary_key
    from airflow_provider_seatunnel.connectors.sqlclient.connection import Conn, connect, ensure_driver
    from airflow_provider_seatunnel.connectors.sqlclient.databases import dialect_of
    from airflow_provider_seatunnel.connectors.sqlclient.pool import close_pools
    from tests.runtime.test_jdbc_whole_database import Counting

    my.sql("CREATE TABLE IF NOT EXISTS keyed (a INT, b VARCHAR(10), c INT, PRIMARY KEY (b, a), UNIQUE KEY c_u (c), "
           "KEY c_b (c DESC, b))")
    url = my.url if driver.startswith("com.mysql") else my.url.replace("jdbc:mysql:", "jdbc:mariadb:")
    conn = Conn(url, driver, my.user, my.password)
    ensure_driver(spark, conn)
    paths = [["keyed"], ["numbers"], ["nokey"], ["other", "people"], ["seatunnel_test", "typed"]]
    dialect = dialect_of(url)
    memo: dict = {}
    with connect(spark, conn) as connection:
        alone, batched = Counting(connection), Counting(connection)
        each = [(catalog_keys(alone, p, dialect), primary_key(alone, p, dialect)) for p in paths]
        once = [(catalog_keys(batched, p, dialect, memo), primary_key(batched, p, dialect, memo)) for p in paths]
    close_pools(spark)
    assert once == each
    assert alone.calls >= 3 * len(paths) and batched.calls == 2  # one query per database (other, seatunnel_test)
    assert each[0][0].primary_key == ("PRIMARY", ("b", "a")) and each[0][1] is None and each[1][1] == "id"
    assert [(k.name, [c for c, _ in k.columns]) for k in each[0][0].constraint_keys] == [
        ("c_b", ["c", "b"]), ("c_u", ["c"])]
    assert sorted(k[1] for k in memo) == ["other", "seatunnel_test"]  # one listing (or refusal) per database


def test_mariadb_connector_j_reads_and_writes(plan_of, spark, run_job, my):
    """Debian's MariaDB Connector/J, under its own URL scheme, for a source and a sink."""
    url = my.url.replace("jdbc:mysql:", "jdbc:mariadb:")
    (_, df), = read(plan_of, spark, my, f'{conn(my, "org.mariadb.jdbc.Driver", url)}, '
                                        'query = "SELECT id, name FROM other.people"').items()
    assert rows(df) == [(1, "x"), (2, "y")]
    run_job(f"""
        source {{ {fake(ROWS)} }}
        sink {{ Jdbc {{ {conn(my, "org.mariadb.jdbc.Driver", url)}, generate_sink_sql = true,
                        table = "via_mariadb", primary_keys = ["id"] }} }}
    """, run_id="mariadb-1")
    assert table(my, "via_mariadb") == [["1", "ann"], ["2", "bob"], ["3", None]]


# ------------------------------------------------------------------------------------------------
# sink
# ------------------------------------------------------------------------------------------------

def test_append_creates_the_table_with_mysql_types_and_a_rerun_adds_nothing(run_job, my):
    fields = ('id = int, name = string, amount = "decimal(10, 2)", day = date, at = timestamp, ok = boolean, '
              'clock = time, tags = "array<int>", attrs = "map<string, int>", small = tinyint, ratio = double, '
              'big = bigint, raw = bytes')
    rows_ = [("INSERT", [1, "ann", "1.50", "2024-01-02", "2024-01-02T03:04:05.123456", True, "10:11:12", [1, 2],
                         {"a": 1}, 7, 0.5, 10000000000, "AQI="]),
             ("INSERT", [2, None, None, None, None, None, None, None, None, None, None, None, None])]
    text = job(my, fake(rows_, fields), 'generate_sink_sql = true, table = "appended", batch_size = 1')
    (metrics,) = run_job(text, run_id="append-1")
    assert metrics["write_count"] == 2
    types = my.sql("SELECT column_name, column_type FROM information_schema.columns WHERE table_name = 'appended' "
                   "ORDER BY ordinal_position")
    assert types == [["id", "int(11)"], ["name", "longtext"], ["amount", "decimal(10,2)"], ["day", "date"],
                     ["at", "datetime(6)"], ["ok", "tinyint(1)"], ["clock", "time(6)"], ["tags", "longtext"],
                     ["attrs", "longtext"], ["small", "tinyint(4)"], ["ratio", "double"], ["big", "bigint(20)"],
                     ["raw", "longblob"]]
    assert my.sql("SELECT id, name, amount, day, at, ok, clock, tags, attrs, small, ratio, big, HEX(raw) "
                  "FROM appended ORDER BY id") == [
        ["1", "ann", "1.50", "2024-01-02", "2024-01-02 03:04:05.123456", "1", "10:11:12.000000", "[1,2]",
         '{"a":1}', "7", "0.5", "10000000000", "0102"],
        ["2"] + [None] * 12]
    (again,) = run_job(text, run_id="append-1")  # a retry of a committed run: nothing more
    assert again["write_count"] == 2 and len(table(my, "appended")) == 2
    run_job(text, run_id="append-2")  # another run appends
    assert len(table(my, "appended")) == 4
    assert commits(my, "append-1") == 1 and commits(my, "append-2") == 1 and staging_tables(my) == []


def test_upsert_on_duplicate_key_applies_updates_and_deletes(run_job, my):
    my.sql("CREATE TABLE kv (id INT PRIMARY KEY, name TEXT); INSERT INTO kv VALUES (1, 'old'), (2, 'old'), (5, 'keep')")
    rows_ = [("INSERT", [1, "a"]), ("INSERT", [3, "c"]), ("UPDATE_BEFORE", [1, "a"]), ("UPDATE_AFTER", [1, "a2"]),
             ("DELETE", [2, "old"]), ("INSERT", [4, "d"]), ("DELETE", [4, "d"]), ("UPDATE_BEFORE", [5, "keep"])]
    (metrics,) = run_job(job(my, fake(rows_), 'generate_sink_sql = true, table = "kv", primary_keys = ["id"]'),
                         run_id="upsert-1")
    assert metrics["write_count"] == 8
    assert table(my, "kv") == [["1", "a2"], ["3", "c"], ["5", "keep"]]
    rows_ = [("INSERT", [6, "f"]), ("UPDATE_AFTER", [3, "c2"]), ("DELETE", [5, "keep"])]
    run_job(job(my, fake(rows_), 'generate_sink_sql = true, table = "kv", primary_keys = ["ID"], '
                                 'enable_upsert = false'), run_id="upsert-2")
    assert table(my, "kv") == [["1", "a2"], ["3", "c2"], ["6", "f"]]
    with pytest.raises(DataError, match="Duplicate entry"):  # a plain INSERT: the key exists
        run_job(job(my, fake([("UPDATE_AFTER", [1, "z"])]), 'generate_sink_sql = true, table = "kv", '
                    'primary_keys = ["id"], support_upsert_by_insert_only = true'), run_id="upsert-3")
    assert table(my, "kv") == [["1", "a2"], ["3", "c2"], ["6", "f"]] and staging_tables(my) == []
    # the sink's own query, made set-based (MySQL's ON DUPLICATE KEY clause kept)
    run_job(job(my, fake(ROWS), 'query = "INSERT INTO kv (id, name) VALUES (?, ?) '
                                'ON DUPLICATE KEY UPDATE name = CONCAT(kv.name, \'+\')"'), run_id="query-1")
    assert table(my, "kv") == [["1", "a2+"], ["2", "bob"], ["3", "c2+"], ["6", "f"]]


def test_multi_table_read_written_to_databases_named_by_placeholders(run_job, my):
    text = f"""
        source {{ Jdbc {{ {conn(my)}, plugin_output = "tables",
                          table_list = [{{ table_path = "other.people" }}, {{ table_path = "seatunnel_test.numbers",
                                          query = "SELECT id, code FROM numbers WHERE id <= 2" }}] }} }}
        sink {{ Jdbc {{ {conn(my)}, plugin_input = "tables", generate_sink_sql = true,
                        database = "${{database_name}}_copy", table = "${{table_name}}", primary_keys = ["id"] }} }}
    """
    run_job(text, run_id="multi-1")
    assert table(my, "other_copy.people") == [["1", "x"], ["2", "y"]]  # the databases were created
    assert table(my, "seatunnel_test_copy.numbers") == [["1", "c1"], ["2", "c2"]]
    assert commits(my, "multi-1", "other_copy") == 1 and commits(my, "multi-1", "seatunnel_test_copy") == 1
    keys = my.sql("SELECT column_name FROM information_schema.key_column_usage WHERE table_schema = 'other_copy' "
                  "AND table_name = 'people' AND constraint_name = 'PRIMARY'")
    assert keys == [["id"]]


# ------------------------------------------------------------------------------------------------
# save modes
# ------------------------------------------------------------------------------------------------

def test_schema_save_modes(run_job, my):
    my.sql("CREATE TABLE recreated (id INT, junk TEXT); INSERT INTO recreated VALUES (99, 'x')")
    run_job(job(my, fake(ROWS[:1]), 'generate_sink_sql = true, table = "recreated", '
                                    'schema_save_mode = "RECREATE_SCHEMA"'), run_id="sm-1")
    assert table(my, "recreated") == [["1", "ann"]]  # dropped and created from the data's columns
    with pytest.raises(RuntimeConfigError, match="The sink table not exist: missing") as info:
        run_job(job(my, fake(ROWS), 'generate_sink_sql = true, table = "missing", '
                                    'schema_save_mode = "ERROR_WHEN_SCHEMA_NOT_EXIST"'), run_id="sm-2")
    assert "sink[0] Jdbc" in str(info.value) and info.value.deterministic
    with pytest.raises(RuntimeConfigError, match="missing' doesn't exist"):
        run_job(job(my, fake(ROWS), 'generate_sink_sql = true, table = "missing", schema_save_mode = "IGNORE"'),
                run_id="sm-3")
    # CREATE_SCHEMA_WHEN_NOT_EXIST (the default) creates the database too; field_ide names what it creates
    run_job(job(my, fake(ROWS[:1]), 'generate_sink_sql = true, database = "fresh", table = "shout", '
                                    'field_ide = "UPPERCASE"'), run_id="sm-4")
    assert my.sql("SELECT ID, NAME FROM fresh.SHOUT") == [["1", "ann"]] and commits(my, "sm-4", "fresh") == 1


def test_save_modes_whose_ddl_committed_are_applied_again_by_a_retry_after_a_failure(run_job, my):
    """MySQL commits the transaction at a DDL statement: a failure after the CREATE TABLE must not
    leave the save-mode marker behind, or the retry would skip what failed."""
    sink = 'generate_sink_sql = true, table = "ddl_retry", data_save_mode = "CUSTOM_PROCESSING", custom_sql = "{}"'
    with pytest.raises(RuntimeConfigError):
        run_job(job(my, fake(ROWS), sink.format("INSERT INTO nowhere VALUES (1)")), run_id="ddl-1")
    assert table(my, "ddl_retry") == []  # created by the failed attempt, which committed nothing else
    run_job(job(my, fake(ROWS), sink.format("INSERT INTO ddl_retry VALUES (0, 'custom')")), run_id="ddl-1")
    assert table(my, "ddl_retry") == [["0", "custom"], ["1", "ann"], ["2", "bob"], ["3", None]]
    assert my.sql("SELECT actions FROM seatunnel_savemodes WHERE run_id = 'ddl-1'") == [["ran custom_sql"]]


def test_data_save_modes_and_drop_data_once_per_run(run_job, my):
    my.sql("CREATE TABLE dm (id INT, name TEXT); INSERT INTO dm VALUES (100, 'old'), (200, 'old')")
    with pytest.raises(RuntimeConfigError, match="already has data: dm"):
        run_job(job(my, fake(ROWS), 'generate_sink_sql = true, table = "dm", '
                                    'data_save_mode = "ERROR_WHEN_DATA_EXISTS"'), run_id="dm-1")
    # DROP_DATA: once per run and sink, in the commit; the second pipeline of the split keeps the first's rows
    text = f"""
        env {{ job.mode = "BATCH" }}
        source {{ {fake(ROWS[:2], output="a")} {fake(ROWS[2:], output="b")} }}
        sink {{ Jdbc {{ {conn(my)}, plugin_input = ["a", "b"], generate_sink_sql = true, table = "dm",
                       data_save_mode = "DROP_DATA" }} }}
    """
    assert len(run_job(text, run_id="dm-2")) == 2
    assert table(my, "dm") == [["1", "ann"], ["2", "bob"], ["3", None]]
    run_job(text, run_id="dm-2")  # a retry of the run: nothing dropped, nothing added
    run_job(text, run_id="dm-3")  # a new run drops again
    assert table(my, "dm") == [["1", "ann"], ["2", "bob"], ["3", None]]



def test_bookkeeping_rows_older_than_the_retention_are_deleted_at_commit(run_job, my):
    """Commit-log, fence and save-mode rows older than bookkeeping_retention_days (here 5) go at the next commit;
    the committing run's own stay."""
    text = job(my, fake(ROWS), 'generate_sink_sql = true, table = "retained", data_save_mode = "DROP_DATA", '
                               'bookkeeping_retention_days = 5')
    for run_id in ("mret-old", "mret-young"):
        run_job(text, run_id=run_id)
    for run_id, days in (("mret-old", 6), ("mret-young", 4)):
        my.sql(f"UPDATE seatunnel_commits SET committed_at = NOW() - INTERVAL {days} DAY WHERE run_id = '{run_id}';"
               f"UPDATE seatunnel_fences SET taken_at = NOW() - INTERVAL {days} DAY WHERE run_id = '{run_id}';"
               f"UPDATE seatunnel_savemodes SET done_at = NOW() - INTERVAL {days} DAY WHERE run_id = '{run_id}'")
    run_job(text, run_id="mret-new")
    for name in ("seatunnel_commits", "seatunnel_fences", "seatunnel_savemodes"):
        runs = sorted(r[0] for r in my.sql(f"SELECT DISTINCT run_id FROM {name} WHERE run_id LIKE 'mret-%'"))
        assert runs == ["mret-new", "mret-young"], name
    assert len(table(my, "retained")) == 3  # DROP_DATA of the new run


# ------------------------------------------------------------------------------------------------
# exactly-once
# ------------------------------------------------------------------------------------------------

# ------------------------------------------------------------------------------------------------
# the driver, and credentials from an Airflow connection
# ------------------------------------------------------------------------------------------------

def test_connector_j_is_found_in_maven_local_repository():
    if CONNECTOR_J is None:
        pytest.fail(f"MySQL Connector/J ({mysql.CONNECTOR_J}) is not in ~/.m2: run `make test-deps`", pytrace=False)
    assert required_jars({"url": "jdbc:mysql://h/d", "driver": "com.mysql.cj.jdbc.Driver"}) == [CONNECTOR_J]
    assert required_jars({"url": "jdbc:mariadb://h/d", "driver": "org.mariadb.jdbc.Driver"}) == [mysql.MARIADB_JAR]


def test_credentials_from_an_airflow_mysql_connection(my, tmp_path, monkeypatch):
    """An Airflow connection of type ``mysql`` gives the url, login and password (and the driver:
    Connector/J's class); spark-submit gets them only through the private plan file."""
    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    monkeypatch.setenv("AIRFLOW_CONN_MY_TEST", json.dumps({
        "conn_type": "mysql", "host": "127.0.0.1", "port": my.port, "schema": my.database,
        "login": my.user, "password": my.password}))
    text = """
        env { job.mode = "BATCH", spark.ui.enabled = false }
        source { Jdbc { jdbc_conn_id = "my_test", query = "SELECT id, name FROM other.people",
                          plugin_output = "people" } }
        sink { Jdbc { jdbc_conn_id = "my_test", generate_sink_sql = true, table = "from_conn",
                        primary_keys = ["id"] } }
    """
    hook = SeaTunnelHook(text, format="hocon")
    try:
        assert my.password not in json.dumps(hook.plan.to_dict())
        metrics = hook.submit(run_id="conn-run")
        command = hook._spark_hook._build_spark_submit_command(str(tmp_path / "app.py"))
        assert my.password not in " ".join(command)
        assert metrics["status"] == "FINISHED" and metrics["write_count"] == 2
        logs = [p for p in hook.work_dir.rglob("*") if p.is_file() and p.name != "plan.json"] \
            if getattr(hook, "work_dir", None) else []
        assert not any(my.password in p.read_text(errors="replace") for p in logs)
    finally:
        hook.cleanup()
    assert table(my, "from_conn") == [["1", "x"], ["2", "y"]]
