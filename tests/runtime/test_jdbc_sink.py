"""Jdbc sink on real Spark against a real, private PostgreSQL server (tests/pg.py): writes,
upserts, save modes, placeholders, exactly-once under retries, errors, the driver jar."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.connectors.jdbc import commit as jdbc_commit
from airflow_provider_seatunnel.connectors.jdbc.savemodes import handle_save_mode
from airflow_provider_seatunnel.connectors.sqlclient.connection import DRIVER_PATH_ENV, required_jars
from airflow_provider_seatunnel.runtime import twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError, PipelineError, RuntimeConfigError
from tests import pg

JDBC_2PC = twophase.driver(JDBC)  # the engine's two phases over the sink's storage verbs


def conn(db, url: str | None = None) -> str:
    return (f'url = "{url or db.url}", driver = "org.postgresql.Driver", user = "{db.user}", '
            f'password = "{db.password}"')


def fake(rows: list[tuple[str, list]], fields: str = "id = int, name = string", output: str = "fake") -> str:
    """A FakeSource block emitting ``rows`` ((kind, values)) once, in order."""
    listed = ", ".join(f"{{ kind = {kind}, fields = {json.dumps(values)} }}" for kind, values in rows)
    return f'FakeSource {{ plugin_output = "{output}", schema = {{ fields {{ {fields} }} }}, rows = [{listed}] }}'


def job(db, source: str, sink_options: str, env: str = "") -> str:
    return f"""
        env {{ job.mode = "BATCH" {env} }}
        source {{ {source} }}
        sink {{ Jdbc {{ {conn(db)}, {sink_options} }} }}
    """


def table(db, name: str, order: str = "1") -> list[list[str | None]]:
    return db.sql(f"SELECT * FROM {name} ORDER BY {order}")


def staging_tables(db) -> list[str]:
    return [r[0] for r in db.sql("SELECT tablename FROM pg_tables WHERE tablename LIKE 'st_stage_%'")]


def commits(db, run_id: str) -> int:
    return int(db.sql(f"SELECT count(*) FROM seatunnel_commits WHERE run_id = '{run_id}'")[0][0])


ROWS = [("INSERT", [1, "ann"]), ("INSERT", [2, "bob"]), ("INSERT", [3, None])]


# ------------------------------------------------------------------------------------------------
# writes
# ------------------------------------------------------------------------------------------------

def test_append_creates_the_table_with_mapped_types_and_a_rerun_of_the_run_adds_nothing(run_job, db):
    fields = ('id = int, name = string, amount = "decimal(10, 2)", day = date, at = timestamp, ok = boolean, '
              'clock = time, tags = "array<int>", attrs = "map<string, int>", small = tinyint, ratio = double')
    rows = [("INSERT", [1, "ann", "1.50", "2024-01-02", "2024-01-02T03:04:05", True, "10:11:12", [1, 2], {"a": 1},
                        7, 0.5]),
            ("INSERT", [2, None, None, None, None, None, None, None, None, None, None])]
    text = job(db, fake(rows, fields), 'generate_sink_sql = true, table = "public.appended", batch_size = 1')
    (metrics,) = run_job(text, run_id="append-1")
    assert metrics["write_count"] == 2
    types = db.sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'appended' "
                   "ORDER BY ordinal_position")
    assert types == [["id", "integer"], ["name", "text"], ["amount", "numeric"], ["day", "date"],
                     ["at", "timestamp without time zone"], ["ok", "boolean"], ["clock", "time without time zone"],
                     ["tags", "ARRAY"], ["attrs", "jsonb"], ["small", "smallint"], ["ratio", "double precision"]]
    assert table(db, "appended") == [
        ["1", "ann", "1.50", "2024-01-02", "2024-01-02 03:04:05", "t", "10:11:12", "{1,2}", '{"a": 1}', "7", "0.5"],
        ["2"] + [None] * 10]
    (again,) = run_job(text, run_id="append-1")  # a retry of a committed run: nothing more
    assert again["write_count"] == 2 and len(table(db, "appended")) == 2
    run_job(text, run_id="append-2")  # another run appends
    assert len(table(db, "appended")) == 4
    assert commits(db, "append-1") == 1 and commits(db, "append-2") == 1 and staging_tables(db) == []


def test_upsert_with_primary_keys_applies_updates_and_deletes(run_job, db):
    db.sql("CREATE TABLE kv (id int PRIMARY KEY, name text); INSERT INTO kv VALUES (1, 'old'), (2, 'old'), (5, 'keep')")
    rows = [("INSERT", [1, "a"]), ("INSERT", [3, "c"]), ("UPDATE_BEFORE", [1, "a"]), ("UPDATE_AFTER", [1, "a2"]),
            ("DELETE", [2, "old"]), ("INSERT", [4, "d"]), ("DELETE", [4, "d"]), ("UPDATE_BEFORE", [5, "keep"])]
    (metrics,) = run_job(job(db, fake(rows), 'generate_sink_sql = true, table = "kv", primary_keys = ["id"]'),
                         run_id="upsert-1")
    assert metrics["write_count"] == 8
    assert table(db, "kv") == [["1", "a2"], ["3", "c"], ["5", "keep"]]
    # enable_upsert = false: INSERT rows are inserted, UPDATE_AFTER rows update, DELETE rows delete
    rows = [("INSERT", [6, "f"]), ("UPDATE_AFTER", [3, "c2"]), ("DELETE", [5, "keep"])]
    run_job(job(db, fake(rows), 'generate_sink_sql = true, table = "kv", primary_keys = ["ID"], '
                                'enable_upsert = false'), run_id="upsert-2")
    assert table(db, "kv") == [["1", "a2"], ["3", "c2"], ["6", "f"]]
    # support_upsert_by_insert_only: a plain INSERT, so an existing key is a constraint violation
    with pytest.raises(DataError, match="duplicate key"):
        run_job(job(db, fake([("UPDATE_AFTER", [1, "z"])]), 'generate_sink_sql = true, table = "kv", '
                    'primary_keys = ["id"], support_upsert_by_insert_only = true'), run_id="upsert-3")
    assert table(db, "kv") == [["1", "a2"], ["3", "c2"], ["6", "f"]]


def test_without_primary_keys_delete_rows_are_inserted(run_job, db, caplog):
    run_job(job(db, fake([("INSERT", [1, "a"]), ("DELETE", [1, "a"])]), 'generate_sink_sql = true, table = "plain"'),
            run_id="plain-1")
    assert table(db, "plain") == [["1", "a"], ["1", "a"]]  # SeaTunnel's simple path: every row is an insert
    assert "1 DELETE/UPDATE_BEFORE rows are written as plain rows" in caplog.text


def test_query_statements_run_set_based(run_job, db):
    db.sql("CREATE TABLE q (id int PRIMARY KEY, name text, note text)")
    db.sql("INSERT INTO q VALUES (1, 'old', 'x')")
    run_job(job(db, fake(ROWS), 'query = "INSERT INTO q (id, name, note) VALUES (?, ?, \'from ? query\') '
                                'ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name"'), run_id="query-1")
    assert table(db, "q") == [["1", "ann", "x"], ["2", "bob", "from ? query"], ["3", None, "from ? query"]]
    run_job(job(db, fake([("INSERT", [7, "g"])]), 'query = "insert into q (name, id) values (upper(:name), :id + 1)"'),
            run_id="query-2")
    assert table(db, "q")[-1] == ["8", "G", None]


def test_multi_table_placeholders_write_one_table_each(run_job, db):
    db.sql("CREATE TABLE src_a (id int PRIMARY KEY, name text); INSERT INTO src_a VALUES (1, 'a1'), (2, 'a2');"
           "CREATE TABLE src_b (code text, n bigint); INSERT INTO src_b VALUES ('x', 10);")
    db.sql(f"ALTER USER {db.user} CREATEDB", admin=True)
    text = f"""
        source {{
          Jdbc {{ {conn(db)}, plugin_output = "db_tables",
                  table_list = [{{ table_path = "public.src_a" }}, {{ table_path = "seatunnel_test.public.src_b" }}] }}
          FakeSource {{ plugin_output = "fake_tables", tables_configs = [
              {{ schema = {{ table = "st_other.items", fields {{ id = int }} }}, rows = [{{ kind = INSERT, fields = [9] }}] }}
          ] }}
        }}
        sink {{
          Jdbc {{ {conn(db)}, plugin_input = "db_tables", generate_sink_sql = true,
                  table = "public.${{table_name}}_copy", primary_keys = ["${{field_names}}"] }}
          Jdbc {{ {conn(db)}, plugin_input = "fake_tables", generate_sink_sql = true, database = "${{database_name}}",
                  table = "${{table_name}}" }}
        }}
    """
    run_job(text, run_id="multi-1")
    assert table(db, "src_a_copy") == [["1", "a1"], ["2", "a2"]] and table(db, "src_b_copy") == [["x", "10"]]
    keys = db.sql("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                  "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'src_b_copy'::regclass AND i.indisprimary")
    assert sorted(k[0] for k in keys) == ["code", "n"]  # ${field_names}: every field
    assert db.sql("SELECT id FROM items", database="st_other") == [["9"]]  # the database was created


# ------------------------------------------------------------------------------------------------
# save modes
# ------------------------------------------------------------------------------------------------

def test_schema_save_modes(run_job, db):
    db.sql("CREATE TABLE recreated (id int, junk text); INSERT INTO recreated VALUES (99, 'x')")
    run_job(job(db, fake(ROWS[:1]), 'generate_sink_sql = true, table = "recreated", '
                                    'schema_save_mode = "RECREATE_SCHEMA"'), run_id="sm-1")
    assert table(db, "recreated") == [["1", "ann"]]  # dropped and created from the data's columns
    with pytest.raises(RuntimeConfigError, match="The sink table not exist: missing") as info:
        run_job(job(db, fake(ROWS), 'generate_sink_sql = true, table = "missing", '
                                    'schema_save_mode = "ERROR_WHEN_SCHEMA_NOT_EXIST"'), run_id="sm-2")
    assert "sink[0] Jdbc" in str(info.value) and info.value.deterministic
    with pytest.raises(RuntimeConfigError, match='relation "missing" does not exist'):
        run_job(job(db, fake(ROWS), 'generate_sink_sql = true, table = "missing", schema_save_mode = "IGNORE"'),
                run_id="sm-3")
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename = 'missing'") == [["0"]]
    # field_ide names the created table and columns; create_index = false creates no primary key
    run_job(job(db, fake(ROWS[:1]), 'generate_sink_sql = true, table = "shout", field_ide = "UPPERCASE", '
                                    'primary_keys = ["id"], create_index = false, support_upsert_by_insert_only = true'),
            run_id="sm-4")
    assert db.sql('SELECT "ID", "NAME" FROM "SHOUT"') == [["1", "ann"]]
    assert db.sql("SELECT count(*) FROM pg_indexes WHERE tablename = 'SHOUT'") == [["0"]]
    # a schema that does not exist yet is created with the table (and holds the commit log)
    run_job(job(db, fake(ROWS[:1]), 'generate_sink_sql = true, table = "fresh_schema.t"'), run_id="sm-5")
    assert db.sql("SELECT id, name FROM fresh_schema.t") == [["1", "ann"]]
    assert db.sql("SELECT count(*) FROM fresh_schema.seatunnel_commits WHERE run_id = 'sm-5'") == [["1"]]


def test_data_save_modes(run_job, plan_of, spark, db):
    db.sql("CREATE TABLE dm (id int, name text); INSERT INTO dm VALUES (100, 'old'), (200, 'old')")
    with pytest.raises(RuntimeConfigError, match="already has data: dm"):
        run_job(job(db, fake(ROWS), 'generate_sink_sql = true, table = "dm", '
                                    'data_save_mode = "ERROR_WHEN_DATA_EXISTS"'), run_id="dm-1")
    run_job(job(db, fake(ROWS[:1]), 'generate_sink_sql = true, table = "dm", data_save_mode = "CUSTOM_PROCESSING", '
                                    'custom_sql = "DELETE FROM dm WHERE id > 150"'), run_id="dm-2")
    assert table(db, "dm") == [["1", "ann"], ["100", "old"]]
    run_job(job(db, fake(ROWS[1:2]), 'generate_sink_sql = true, table = "dm", data_save_mode = "APPEND_DATA"'),
            run_id="dm-3")
    assert len(table(db, "dm")) == 3
    # DROP_DATA runs once per run and sink: the second pipeline of a split must not truncate the first's rows
    text = f"""
        env {{ job.mode = "BATCH" }}
        source {{ {fake(ROWS[:2], output="a")} {fake(ROWS[2:], output="b")} }}
        sink {{ Jdbc {{ {conn(db)}, plugin_input = ["a", "b"], generate_sink_sql = true, table = "dm",
                       data_save_mode = "DROP_DATA" }} }}
    """
    assert len(run_job(text, run_id="dm-4")) == 2  # two pipelines, one sink
    assert table(db, "dm") == [["1", "ann"], ["2", "bob"], ["3", None]]
    run_job(text, run_id="dm-5")  # a new run truncates again
    assert len(table(db, "dm")) == 3
    assert sorted(db.sql("SELECT actions FROM seatunnel_savemodes WHERE run_id = 'dm-5'")) == [
        ["drop at commit: dm"], ["dropped the data of dm at commit"]]
    # the save modes alone, for a once-per-DAG-run prepare task: the rows go only with a commit
    config = plan_of(text).pipelines[0].sinks[0].config
    assert handle_save_mode(spark, config, "a", spark.range(1).schema) == ["drop at commit: dm"]
    assert len(table(db, "dm")) == 3
    run_job(text, run_id="dm-5b")
    with pytest.raises(RuntimeConfigError, match="already has data"):  # ERROR_WHEN_DATA_EXISTS on the target's rows
        run_job(job(db, fake(ROWS), 'generate_sink_sql = true, table = "dm", '
                                    'data_save_mode = "ERROR_WHEN_DATA_EXISTS"'), run_id="dm-6")
    db.sql("TRUNCATE dm")
    run_job(job(db, fake(ROWS), 'generate_sink_sql = true, table = "dm", data_save_mode = "ERROR_WHEN_DATA_EXISTS"'),
            run_id="dm-7")
    assert len(table(db, "dm")) == 3


# ------------------------------------------------------------------------------------------------
# exactly-once
# ------------------------------------------------------------------------------------------------

def _contexts(plan_of, spark, db, text: str, run_id: str):
    plan = plan_of(text)
    p = plan.pipelines[0]
    return plan, p, p.sinks[0], lambda attempt: RunContext(spark, plan, p, run_id, attempt=attempt)


def _data(spark, rows):
    from airflow_provider_seatunnel.spi.rows import with_kind

    return {"fake": with_kind(spark.createDataFrame(rows, "id int, name string"))}


def test_a_commit_killed_before_it_is_recorded_rolls_back(plan_of, spark, db, monkeypatch):
    text = job(db, fake(ROWS), 'generate_sink_sql = true, table = "eo2", primary_keys = ["id"]')
    _, _, sink, ctx = _contexts(plan_of, spark, db, text, "eo-2")
    info = JDBC_2PC.prepare(ctx(1), sink, _data(spark, [(1, "ann"), (2, "bob")]))

    def killed(*args, **kwargs):
        raise RuntimeError("killed between moving the rows and recording the commit")

    with monkeypatch.context() as m:
        m.setattr(jdbc_commit, "_record_commit", killed)
        with pytest.raises(PipelineError, match="killed"):
            JDBC_2PC.commit(ctx(1), sink, info)
    assert table(db, "eo2") == [] and commits(db, "eo-2") == 0  # the transaction rolled back
    JDBC_2PC.commit(ctx(1), sink, info)  # the staging is still there: a retried commit succeeds once
    JDBC_2PC.commit(ctx(1), sink, info)
    again = JDBC_2PC.prepare(ctx(2), sink, _data(spark, [(1, "ann"), (2, "bob")]))
    assert [s.committed for s in again.tables] == [True]
    JDBC_2PC.commit(ctx(2), sink, again)
    assert table(db, "eo2") == [["1", "ann"], ["2", "bob"]] and commits(db, "eo-2") == 1 and staging_tables(db) == []


# ------------------------------------------------------------------------------------------------
# errors and secrets
# ------------------------------------------------------------------------------------------------

def test_a_value_too_long_is_a_data_error_and_nothing_is_committed(run_job, db):
    db.sql("CREATE TABLE short (id int, name varchar(3))")
    with pytest.raises(DataError) as info:
        run_job(job(db, fake([*ROWS, ("INSERT", [4, "four"])]), 'generate_sink_sql = true, table = "short"'),
                run_id="long-1")
    text = str(info.value)
    assert "sink[0] Jdbc" in text and "value too long for type character varying(3)" in text
    assert info.value.deterministic and db.password not in text
    assert table(db, "short") == [] and commits(db, "long-1") == 0 and staging_tables(db) == []


def test_a_database_that_is_down_is_a_transient_error(run_job, plan_of, db):
    down = db.url.replace(f":{db.port}/", f":{pg.free_port()}/")
    text = job(db, fake(ROWS), 'generate_sink_sql = true, table = "never"').replace(db.url, down + "?password=x1y2z3")
    with pytest.raises(PipelineError) as info:
        run_job(text, run_id="down-1")
    error = info.value
    assert type(error) is PipelineError and not error.deterministic
    assert "sink[0] Jdbc" in str(error) and "refused" in str(error)
    assert db.password not in str(error) and "x1y2z3" not in str(error) and "password=******" in str(error)
    plan = plan_of(text)
    assert db.password not in json.dumps(plan.to_dict()) and db.password in json.dumps(plan.to_dict(secrets=True))


def test_the_driver_jar_reaches_spark_submit(write_conf, db, tmp_path, monkeypatch):
    from airflow_provider_seatunnel.cli import main
    from airflow_provider_seatunnel.plan import compile_job
    from airflow_provider_seatunnel.runtime.jars import pipeline_jars
    from airflow_provider_seatunnel.runtime.launcher import submit_command

    db.sql("CREATE TABLE cli_src (id int PRIMARY KEY, at timestamp); INSERT INTO cli_src "
           "SELECT i, '2024-01-01'::timestamp + i * interval '1 day' FROM generate_series(1, 5) i")
    path = write_conf(f"""
        env {{ job.mode = "BATCH", spark.ui.enabled = false, spark.jars = "/opt/extra.jar" }}
        source {{ Jdbc {{ {conn(db)}, query = "SELECT * FROM cli_src", partition_column = "id", partition_num = 2 }} }}
        sink {{ Jdbc {{ {conn(db)}, generate_sink_sql = true, table = "cli_copy" }} }}
    """)
    plan = compile_job(path, use_cache=False)
    assert pipeline_jars(plan) == ["/opt/extra.jar", pg.JDBC_JAR]
    command = submit_command(plan, plan.pipelines[0], tmp_path / "plan.json", "r", "local[1]", tmp_path / "m.json")
    properties = (tmp_path / f"pipeline-{plan.pipelines[0].task_id}.properties").read_text().splitlines()
    assert f"spark.jars /opt/extra.jar,{pg.JDBC_JAR}" in properties and db.password not in " ".join(command)
    monkeypatch.setenv(DRIVER_PATH_ENV, str(tmp_path))  # a directory of jars replaces the system default
    (tmp_path / "driver.jar").write_text("")
    assert required_jars({"url": db.url, "driver": "org.postgresql.Driver"}) == [str(tmp_path / "driver.jar")]
    monkeypatch.delenv(DRIVER_PATH_ENV)
    assert required_jars({"url": "jdbc:postgresql://h/d", "driver": "org.postgresql.Driver"},
                              {"spark.jars": "/x/postgresql-42.7.jar"}) == []  # the env already has one
    assert required_jars({"url": "jdbc:oracle:thin:@h:1521/x", "driver": "oracle.jdbc.OracleDriver"}) == []
    # the real thing: spark-submit with the jar from the env (the /opt/extra.jar entry is dropped first)
    path.write_text(path.read_text().replace('spark.jars = "/opt/extra.jar"', 'spark.jars = ""'))
    assert main(["run", str(path), "--run-id", "cli-1", "--master", "local[1]", "--work-dir",
                 str(tmp_path / "run"), "--keep-work-dir"]) == 0
    assert table(db, "cli_copy") == [[str(i), f"2024-01-{1 + i:02d} 00:00:00"] for i in range(1, 6)]
    logs = [p for p in (tmp_path / "run").iterdir() if p.name != "plan.json"]
    assert logs and not any(db.password in p.read_text(errors="replace") for p in logs)


def test_credentials_from_an_airflow_connection(db, tmp_path, monkeypatch):
    """``jdbc_conn_id`` in the config (or the hook's default) names an Airflow connection: the url, login
    and password come from it at run time, reach spark-submit only through the private plan file, and
    never appear in the plan JSON, on the command line or in the error text."""
    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    monkeypatch.setenv("AIRFLOW_CONN_PG_TEST", json.dumps({
        "conn_type": "postgres", "host": "127.0.0.1", "port": db.port, "schema": db.database,
        "login": db.user, "password": db.password}))
    text = f"""
        env {{ job.mode = "BATCH", spark.ui.enabled = false }}
        source {{ {fake([("INSERT", [1, "a"]), ("INSERT", [2, "b"])])} }}
        sink {{
          Jdbc {{ jdbc_conn_id = "pg_test", driver = "org.postgresql.Driver", generate_sink_sql = true,
                  table = "from_conn" }}
          Jdbc {{ url = "{db.url}", driver = "org.postgresql.Driver", generate_sink_sql = true,
                  table = "from_default" }}
        }}
    """
    hook = SeaTunnelHook(text, format="hocon", jdbc_conn_id="pg_test")  # credentials for blocks without
    try:
        sinks = hook.plan.pipelines[0].sinks
        assert all(v.config["url"].startswith(f"jdbc:postgresql://127.0.0.1:{db.port}/") for v in sinks)
        assert db.password not in json.dumps(hook.plan.to_dict())  # the plan JSON never holds it
        metrics = hook.submit(run_id="conn-run")
        spark_hook = hook._spark_hook
        assert db.password not in " ".join(spark_hook._build_spark_submit_command(str(tmp_path / "app.py")))
    finally:
        hook.cleanup()
    assert metrics["status"] == "FINISHED" and metrics["write_count"] == 4
    assert table(db, "from_conn") == [["1", "a"], ["2", "b"]] and table(db, "from_default") == [["1", "a"], ["2", "b"]]


def test_bookkeeping_rows_older_than_the_retention_are_deleted_at_commit(run_job, db):
    """The commit-log, fence and schema-change rows older than bookkeeping_retention_days go at the next
    commit next to the target; younger rows and the committing run's own rows (a restore of an old run)
    stay, so that restore still writes nothing twice; 0 keeps everything."""
    text = job(db, fake(ROWS), 'generate_sink_sql = true, table = "public.retained"')
    run_job(text, run_id="ret-old")
    run_job(text, run_id="ret-young")
    db.sql("CREATE TABLE IF NOT EXISTS seatunnel_schema_changes (change_id VARCHAR(64) PRIMARY KEY, "
           "table_name VARCHAR(1024) NOT NULL, change_text VARCHAR(4000) NOT NULL, position VARCHAR(255), "
           "applied_at TIMESTAMP)")
    db.sql("INSERT INTO seatunnel_schema_changes VALUES ('ret-c1', 't', 'add', NULL, now() - interval '40 days'), "
           "('ret-c2', 't', 'add', NULL, now() - interval '2 days')")

    def age(run_id: str, days: int) -> None:
        db.sql(f"UPDATE seatunnel_commits SET committed_at = now() - interval '{days} days' WHERE run_id = '{run_id}';"
               f"UPDATE seatunnel_fences SET taken_at = now() - interval '{days} days' WHERE run_id = '{run_id}'")

    def kept() -> dict[str, list[str]]:
        return {t: sorted(r[0] for r in db.sql(f"SELECT DISTINCT {c} FROM {t} WHERE {c} LIKE 'ret-%'"))
                for t, c in (("seatunnel_commits", "run_id"), ("seatunnel_fences", "run_id"),
                             ("seatunnel_schema_changes", "change_id"))}

    age("ret-old", 40)
    age("ret-young", 10)
    run_job(text.replace("generate_sink_sql", "bookkeeping_retention_days = 0, generate_sink_sql"), run_id="ret-keep")
    assert kept()["seatunnel_commits"] == ["ret-keep", "ret-old", "ret-young"]  # 0: forever
    run_job(text, run_id="ret-new")  # the default, 30 days
    assert kept() == {"seatunnel_commits": ["ret-keep", "ret-new", "ret-young"],
                      "seatunnel_fences": ["ret-keep", "ret-new", "ret-young"],
                      "seatunnel_schema_changes": ["ret-c2"]}
    age("ret-young", 40)  # a restore of a run older than the retention: its own rows stay, nothing is written twice
    (metrics,) = run_job(text, run_id="ret-young")
    assert "ret-young" in kept()["seatunnel_commits"]
    assert len(table(db, "public.retained")) == 3 * 4  # four runs of 3 rows: the restore added none
    assert metrics["status"] == "FINISHED"
