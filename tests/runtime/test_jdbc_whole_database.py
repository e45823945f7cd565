"""Jdbc whole-database jobs against a real, private PostgreSQL server (tests/pg.py): the job's connection
pools (reused, bounded, closed at the end of the run), catalog keys read once per schema (the same keys
as per table), every table of a database committed in one transaction (exactly once across a failed
commit and a restore), created tables keeping the source's column lengths, and missing schemas created
once by tables running at once."""

from __future__ import annotations

import threading
import time

import pytest

from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.connectors.jdbc import bulk as jdbc_bulk
from airflow_provider_seatunnel.connectors.jdbc import shared as jdbc_shared
from airflow_provider_seatunnel.connectors.jdbc import sink as jdbc_sink
from airflow_provider_seatunnel.connectors.jdbc.catalog import catalog_keys, primary_key
from airflow_provider_seatunnel.connectors.jdbc.savemodes import create_container
from airflow_provider_seatunnel.connectors.jdbc.target import target_of
from airflow_provider_seatunnel.connectors.sqlclient.connection import (
    Conn,
    connect,
    ensure_driver,
    execute,
    pool_of,
    query,
)
from airflow_provider_seatunnel.connectors.sqlclient.pool import Pool, close_pools, pools_of
from airflow_provider_seatunnel.connectors.sqlclient.pyconnection import open_connection
from airflow_provider_seatunnel.runtime import twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import PipelineError
from airflow_provider_seatunnel.spi.fencing import Superseded
from airflow_provider_seatunnel.spi.rows import ROW_KIND, with_kind

JDBC_2PC = twophase.driver(JDBC)


def conn_options(db, database: str | None = None) -> str:
    url = db.url if database is None else db.url.rsplit("/", 1)[0] + f"/{database}"
    return f'url = "{url}", driver = "org.postgresql.Driver", user = "{db.user}", password = "{db.password}"'


def conn_of(spark, db) -> Conn:
    conn = Conn(db.url, "org.postgresql.Driver", db.user, db.password)
    ensure_driver(spark, conn)
    return conn


def backends(db) -> int:
    """The user's open sessions, psql's own aside."""
    return int(db.sql(f"SELECT count(*) FROM pg_stat_activity WHERE usename = '{db.user}' "
                      "AND application_name <> 'psql' AND pid <> pg_backend_pid()", admin=True)[0][0])


# ------------------------------------------------------------------------------------------------
# pools
# ------------------------------------------------------------------------------------------------

def test_a_pool_reuses_its_connections_and_closes_them(spark, db):
    close_pools(spark)
    conn = conn_of(spark, db)
    with connect(spark, conn) as first:
        pid = query(first, "SELECT pg_backend_pid()")[0][0]
        with connect(spark, conn) as second:  # a borrowed connection is nobody else's
            assert query(second, "SELECT pg_backend_pid()")[0][0] != pid
    with connect(spark, conn, autocommit=False) as again:
        assert query(again, "SELECT pg_backend_pid()")[0][0] == pid  # the idle one, not a new one
        query(again, "SELECT 1")  # a transaction left open is rolled back on return
    with connect(spark, conn) as after:
        assert after.getAutoCommit()
    pool = pool_of(spark, conn)
    assert pool.opened == 2 and pool.borrowed == 4 and pool.idle == 2 and backends(db) == 2
    assert close_pools(spark) >= 1 and pool.closed and pool_of(spark, conn) is not pool
    deadline = time.monotonic() + 10
    while backends(db) and time.monotonic() < deadline:  # the server sees the sessions end
        time.sleep(0.1)
    assert backends(db) == 0


def test_a_failed_borrower_does_not_return_its_connection(spark, db):
    close_pools(spark)
    conn = conn_of(spark, db)
    with pytest.raises(RuntimeError), connect(spark, conn):
        raise RuntimeError("the statement failed half way")
    pool = pool_of(spark, conn)
    assert pool.idle == 0 and pool.opened == 1
    close_pools(spark)


def test_a_pool_is_bounded_and_thread_safe():
    opened, closed, inside, most = [], [], [0], [0]
    lock = threading.Lock()
    pool = Pool(lambda: opened.append(object()) or opened[-1], 2, 5.0, closed.append)

    def work():
        for _ in range(20):
            c = pool.borrow()
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.001)
            with lock:
                inside[0] -= 1
            pool.give_back(c, True)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 2 and len(opened) == 2 and pool.borrowed == 120
    held = [pool.borrow(), pool.borrow()]
    short = Pool(lambda: object(), 1, 0.2, closed.append)
    short.borrow()
    with pytest.raises(Exception, match=r"connection\.pool\.size"):
        short.borrow()  # the pool is exhausted: the borrower waits, then fails naming the option
    for c in held:
        pool.give_back(c, True)
    pool.close()
    assert sorted(map(id, closed)) == sorted(map(id, opened))


def test_a_pool_does_its_one_time_work_once_while_the_other_threads_wait():
    pool = Pool(lambda: object(), 2, 5.0, lambda c: None)
    ran, started, release = [], threading.Event(), threading.Event()

    def work():
        ran.append(1)
        started.set()
        release.wait(10)

    first = threading.Thread(target=pool.once, args=("schema s", work))
    first.start()
    started.wait(10)
    finished = []
    waiting = [threading.Thread(target=lambda: (pool.once("schema s", work), finished.append(1))) for _ in range(3)]
    for t in waiting:
        t.start()
    assert not finished  # they wait for the first: the work is not done yet
    release.set()
    for t in [first, *waiting]:
        t.join(10)
    assert ran == [1] and finished == [1, 1, 1] and pool.memo["schema s"] is True

    def failing():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        pool.once("schema t", failing)
    pool.once("schema t", lambda: ran.append(2))  # a failed one-time work is done again by the next caller
    assert ran == [1, 2] and "schema t" in pool.memo


# ------------------------------------------------------------------------------------------------
# catalog keys, once per schema
# ------------------------------------------------------------------------------------------------

KEYED = """
    CREATE SCHEMA IF NOT EXISTS keyed;
    CREATE TABLE keyed.one (id int PRIMARY KEY, code text UNIQUE, at int);
    CREATE INDEX one_at_desc ON keyed.one (at DESC, code);
    CREATE INDEX one_lower ON keyed.one (lower(code)) WHERE at > 0;
    CREATE INDEX one_hash ON keyed.one USING hash (code);
    CREATE TABLE keyed.two (a int, b text, PRIMARY KEY (b, a));
    CREATE TABLE keyed.bare (v int);
    CREATE TABLE keyed.indexed (v int, w int);
    CREATE UNIQUE INDEX indexed_vw ON keyed.indexed (w, v);
    CREATE TABLE public.one (other int PRIMARY KEY);
"""


class Counting:
    """A connection whose catalog calls and statements are counted."""

    def __init__(self, connection):
        self.connection, self.calls = connection, 0

    def __getattr__(self, name):
        return getattr(self.connection, name)

    def prepareStatement(self, sql):
        self.calls += 1
        return self.connection.prepareStatement(sql)

    def getMetaData(self):
        meta, outer = self.connection.getMetaData(), self

        class Meta:
            def __getattr__(self, name):
                found = getattr(meta, name)
                if name in ("getPrimaryKeys", "getIndexInfo"):
                    def counted(*args):
                        outer.calls += 1
                        return found(*args)
                    return counted
                return found
        return Meta()


def test_catalog_keys_read_once_per_schema_are_the_keys_read_per_table(spark, db):
    db.sql(KEYED)
    tables = [["keyed", "one"], ["keyed", "two"], ["keyed", "bare"], ["keyed", "indexed"], ["one"],
              ["public", "one"], ["keyed", "missing"]]
    with connect(spark, conn_of(spark, db)) as raw:
        alone, batched = Counting(raw), Counting(raw)
        memo: dict = {}
        each = [(catalog_keys(alone, t, raw_dialect(), None), primary_key(alone, t, raw_dialect(), None))
                for t in tables]
        once = [(catalog_keys(batched, t, raw_dialect(), memo), primary_key(batched, t, raw_dialect(), memo))
                for t in tables]
    assert once == each
    assert each[0][0].primary_key == ("one_pkey", ("id",)) and each[0][1] == "id"
    assert [(c.name, c.columns) for c in each[0][0].constraint_keys] == [
        ("one_at_desc", (("at", "DESC"), ("code", "ASC"))), ("one_code_key", (("code", "ASC"),)),
        ("one_hash", (("code", "ASC"),)), ("one_lower", (("lower(code)", "ASC"),))]
    assert each[1][0].primary_key == ("two_pkey", ("b", "a")) and each[1][1] is None
    assert each[4][0].primary_key == ("one_pkey", ("other",))  # unqualified: the current schema's table
    assert alone.calls > 2 * len(tables) and batched.calls == 4  # two queries per schema (keyed, public)
    close_pools(spark)


def raw_dialect():
    from airflow_provider_seatunnel.connectors.sqlclient.databases import dialect_of

    return dialect_of("jdbc:postgresql://x/y")


# ------------------------------------------------------------------------------------------------
# one transaction per database, exactly once
# ------------------------------------------------------------------------------------------------

def keyed_plan(plan_of, db, prefix: str, env: str = ""):
    """FakeSource tables (id, name) into Jdbc tables ``<prefix>_<table>`` upserted on ``id``; ``env`` adds
    settings to the job's ``env``."""
    return plan_of(f"""
        env {{ job.mode = "BATCH"{", " + env if env else ""} }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ id = int, name = string }} }} }} }}
        sink {{ Jdbc {{ {conn_options(db)}, generate_sink_sql = true, table = "{prefix}_${{table_name}}",
                       primary_keys = ["id"] }} }}
    """)


def test_every_table_of_a_database_commits_in_one_transaction_exactly_once(plan_of, spark, db, monkeypatch):
    plan = keyed_plan(plan_of, db, "grouped")
    p = plan.pipelines[0]
    sink = p.sinks[0]

    def ctx(attempt):
        return RunContext(spark, plan, p, "grouped-1", attempt=attempt)

    def data():
        return {name: with_kind(spark.createDataFrame([(i, f"{name}{i}") for i in range(1, 4)], "id int, name string"))
                for name in ("a", "b", "c")}

    info = JDBC_2PC.prepare(ctx(1), sink, data())
    moved = []
    first = ctx(1)
    real = first.fault_point

    def killed_at_the_second(point, vertex):  # the second table's rows moved, no table recorded yet
        moved.append(point)
        if moved.count("sink.commit") == 2:
            raise RuntimeError("killed between two tables")
        return real(point, vertex)

    with monkeypatch.context() as m:
        m.setattr(first, "fault_point", killed_at_the_second)
        with pytest.raises(PipelineError, match="killed between two tables"):
            JDBC_2PC.commit(first, sink, info)
    committed = "SELECT count(*) FROM seatunnel_commits WHERE run_id = 'grouped-1'"
    assert db.sql(committed) == [["0"]]  # the first table's move rolled back with the second's
    assert db.sql("SELECT count(*) FROM grouped_a") == [["0"]]
    restore = JDBC_2PC.prepare(ctx(2), sink, data())  # the restore: nothing was committed, all staged again
    assert [s.committed for s in restore.tables] == [False, False, False]
    JDBC_2PC.commit(ctx(2), sink, restore)
    assert db.sql(committed) == [["3"]]
    # one transaction: PostgreSQL's CURRENT_TIMESTAMP is the transaction's start, the same in every row
    assert db.sql("SELECT count(DISTINCT committed_at) FROM seatunnel_commits WHERE run_id = 'grouped-1'") == [["1"]]
    again = JDBC_2PC.prepare(ctx(3), sink, data())
    assert [s.committed for s in again.tables] == [True, True, True]
    JDBC_2PC.commit(ctx(3), sink, again)
    for name in ("a", "b", "c"):
        assert db.sql(f"SELECT id, name FROM grouped_{name} ORDER BY id") == [[str(i), f"{name}{i}"] for i in (1, 2, 3)]
    assert db.sql(committed) == [["3"]]
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]
    close_pools(spark)


def test_each_tables_staged_rows_are_counted_in_the_staging_table_and_checked_against_the_write(plan_of, spark, db,
                                                                                                 monkeypatch):
    """Tables sharing one staging write (one at a time: one group): each table's rows counted by its number
    in the staging table; a staging table holding other rows than the write wrote fails the stage (nothing
    is left staged)."""
    plan = keyed_plan(plan_of, db, "counted", "multi_table.concurrent_tables = 1")
    p = plan.pipelines[0]
    sink = p.sinks[0]

    def data():
        return {name: with_kind(spark.createDataFrame([(i, name) for i in range(1, rows + 1)], "id int, name string"))
                for name, rows in (("a", 3), ("b", 1), ("c", 2))}

    info = JDBC_2PC.prepare(RunContext(spark, plan, p, "counted-1"), sink, data())
    assert [s.rows for s in info.tables] == [3, 1, 2]
    JDBC_2PC.commit(RunContext(spark, plan, p, "counted-1"), sink, info)
    real = jdbc_shared._index_tags

    def and_a_stray_row(ctx, target, staging):  # between the write and the count
        real(ctx, target, staging)
        db.sql(f"INSERT INTO {staging} SELECT * FROM {staging} LIMIT 1")

    monkeypatch.setattr(jdbc_shared, "_index_tags", and_a_stray_row)
    with pytest.raises(RuntimeError, match=r"holds 7 rows of tables \[0, 1, 2\], the write wrote 6"):
        JDBC_2PC.prepare(RunContext(spark, plan, p, "counted-2"), sink, data())
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]
    close_pools(spark)


def test_a_table_an_overlapping_attempt_took_over_is_superseded_and_the_others_commit(plan_of, spark, db,
                                                                                     monkeypatch):
    """The tables of a database take their tokens and commit with a few statements for all of them; a
    table whose token a newer attempt took sends the commit back to one savepoint per table: the
    others commit, that one is superseded and its staging dropped."""
    plan = keyed_plan(plan_of, db, "over")
    p = plan.pipelines[0]
    sink = p.sinks[0]
    answers: list[object] = []
    real = jdbc_bulk.publish_fast
    monkeypatch.setattr(jdbc_bulk, "publish_fast", lambda *a: answers.append(real(*a)) or answers[-1])

    def data():
        return {name: with_kind(spark.createDataFrame([(i, f"{name}{i}") for i in range(1, 4)], "id int, name string"))
                for name in ("a", "b", "c")}

    first = RunContext(spark, plan, p, "over-1", attempt=1)
    info = JDBC_2PC.prepare(first, sink, data())
    assert [s.token for s in info.tables] == [1, 1, 1]
    newer = RunContext(spark, plan, p, "over-1", attempt=2)  # an overlapping retry took b's token
    assert JDBC.commit_log(newer, sink).take_tokens([twophase.commit_id(newer, sink, "b")]) == [(2, False)]
    with pytest.raises(Superseded):
        JDBC_2PC.commit(first, sink, info)
    assert answers == [None]  # declined: committed table by table
    assert db.sql("SELECT table_name FROM seatunnel_commits WHERE run_id = 'over-1' ORDER BY 1") == [
        ["over_a"], ["over_c"]]
    assert db.sql("SELECT count(*) FROM over_a") == [["3"]] and db.sql("SELECT count(*) FROM over_b") == [["0"]]
    retry = JDBC_2PC.prepare(newer, sink, data())  # the retry: a and c committed, b staged again
    assert [(s.committed, s.token) for s in retry.tables] == [(True, 2), (False, 3), (True, 2)]
    JDBC_2PC.commit(newer, sink, retry)
    assert db.sql("SELECT count(*) FROM seatunnel_commits WHERE run_id = 'over-1'") == [["3"]]
    assert db.sql("SELECT count(*) FROM over_b") == [["3"]]
    fresh = RunContext(spark, plan, p, "over-2", attempt=1)  # a run whose tables all commit: at once
    changes = data()  # a: id 1 deleted, id 4 inserted; the others' DELETE statements are left out
    changes["a"] = spark.createDataFrame([(1, "a1", 3), (4, "a4", 0)], f"id int, name string, {ROW_KIND} tinyint")
    JDBC_2PC.commit(fresh, sink, JDBC_2PC.prepare(fresh, sink, changes))
    assert len(answers) == 2 and isinstance(answers[1], dict) and len(answers[1]) == 3
    assert db.sql("SELECT id FROM over_a ORDER BY id") == [["2"], ["3"], ["4"]]
    assert db.sql("SELECT count(*) FROM over_c") == [["3"]]
    assert db.sql("SELECT count(*) FROM seatunnel_savemodes WHERE run_id = 'over-2'") == [["3"]]
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]
    close_pools(spark)


# ------------------------------------------------------------------------------------------------
# missing schemas created by tables running at once
# ------------------------------------------------------------------------------------------------

def test_a_create_schema_that_meets_a_concurrent_creator_finds_its_schema(db, caplog):
    """PostgreSQL: two CREATE SCHEMA IF NOT EXISTS of one schema at once; the later one waits on the
    catalog's unique index and, once the first commits, fails with a unique violation unless retried."""
    options = {"url": db.url, "driver": "org.postgresql.Driver", "user": db.user, "password": db.password,
               "generate_sink_sql": True, "table": "race_s.t"}
    _, target = target_of(options, "t", ["v"])
    conn = target.conn
    first, second = (open_connection(conn.url, conn.connection_properties()) for _ in range(2))
    first.setAutoCommit(False)
    execute(first, "CREATE SCHEMA IF NOT EXISTS race_s")  # not committed yet
    errors: list[BaseException] = []

    def create():
        try:
            create_container(second, target)
        except BaseException as e:
            errors.append(e)

    racer = threading.Thread(target=create)
    racer.start()
    waiting = ("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
               "AND query LIKE 'CREATE SCHEMA IF NOT EXISTS%race_s%'")
    deadline = time.monotonic() + 30
    while db.sql(waiting, admin=True) != [["1"]] and racer.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert racer.is_alive()  # the second creator waits for the first one's transaction
    with caplog.at_level("INFO", logger="seatunnel.jdbc"):
        first.commit()
        racer.join(30)
    assert errors == [] and "created meanwhile by a concurrent writer" in caplog.text
    assert db.sql("SELECT count(*) FROM pg_namespace WHERE nspname = 'race_s'") == [["1"]]
    first.close()
    second.close()


def test_tables_written_at_once_create_their_missing_schema_once(plan_of, spark, db, monkeypatch):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", multi_table.concurrent_tables = 4 }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ id = int }} }} }} }}
        sink {{ Jdbc {{ {conn_options(db)}, generate_sink_sql = true, table = "${{schema_name}}_new.${{table_name}}",
                       primary_keys = ["id"] }} }}
    """)
    p = plan.pipelines[0]
    created: list[str] = []

    def slow_create(connection, target):  # a wide window for a second creator of the same schema
        created.append(target.schema)
        time.sleep(0.3)
        real_create(connection, target)

    real_create = jdbc_sink.create_container
    monkeypatch.setattr(jdbc_sink, "create_container", slow_create)
    # the first table runs alone (its schema s0_new), the other four at once, all into s1_new
    database = db.url.rsplit("/", 1)[1]  # the upstream tables' database names the target's (as SeaTunnel)
    names = [f"{database}.s0.t0", *(f"{database}.s1.t{i}" for i in range(1, 5))]
    data = {n: with_kind(spark.createDataFrame([(i,) for i in range(3)], "id int")) for n in names}
    ctx = RunContext(spark, plan, p, "schemas-1", attempt=1)
    JDBC_2PC.commit(ctx, p.sinks[0], JDBC_2PC.prepare(ctx, p.sinks[0], data))
    assert sorted(created) == ["s0_new", "s1_new"]  # each missing schema created by one table
    for name in names:
        schema, table = name.split(".")[1:]
        assert db.sql(f"SELECT count(*) FROM {schema}_new.{table}") == [["3"]]
    assert db.sql("SELECT count(*) FROM s1_new.seatunnel_commits WHERE run_id = 'schemas-1'") == [["4"]]
    close_pools(spark)


# ------------------------------------------------------------------------------------------------
# created types
# ------------------------------------------------------------------------------------------------

def test_created_tables_keep_the_source_lengths_and_replica_identity_full_and_the_run_closes_its_pools(
        run_job, spark, db):
    db.sql("CREATE TABLE typed_src (id int PRIMARY KEY, name varchar(40), code char(3), note text, "
           "amount numeric(12,2)); INSERT INTO typed_src VALUES (1, 'ann', 'abc', 'x', 1.25)")
    run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ Jdbc {{ {conn_options(db)}, table_path = "public.typed_src" }} }}
        sink {{ Jdbc {{ {conn_options(db)}, generate_sink_sql = true, table = "typed_dst", primary_keys = ["id"] }} }}
    """, run_id="typed-1")
    types = db.sql("SELECT column_name, data_type, character_maximum_length FROM information_schema.columns "
                   "WHERE table_name = 'typed_dst' ORDER BY ordinal_position")
    assert types == [["id", "integer", None], ["name", "character varying", "40"], ["code", "character", "3"],
                     ["note", "text", None], ["amount", "numeric", None]]
    assert db.sql("SELECT relreplident FROM pg_class WHERE relname = 'typed_dst'") == [["f"]]  # FULL
    assert db.sql("SELECT id, name, code, note, amount FROM typed_dst") == [["1", "ann", "abc", "x", "1.25"]]
    assert pools_of(spark) == []  # the run closed the pools it used
