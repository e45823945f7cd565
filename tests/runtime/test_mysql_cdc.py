"""MySQL-CDC against a real MariaDB (tests/mysql.py, binlog_format = ROW): the snapshot then every
change with its row kind, a sync with writes during the snapshot into a PostgreSQL table upserted on
its key that ends equal to its source, a replayed micro-batch after a crash, MySQL-CDC into Kafka as
debezium_json exactly once, and BATCH reads."""

from __future__ import annotations

import itertools
import json
import random
import threading
import uuid

import pytest

from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError
from tests import mysql


@pytest.fixture(scope="module")
def my():
    with mysql.running() as server:
        yield server


def table(my, columns: str = "id INT PRIMARY KEY, name VARCHAR(20), score DECIMAL(8,2), at DATETIME(3), ok BOOLEAN"):
    name = f"src_{uuid.uuid4().hex[:8]}"
    my.sql(f"CREATE TABLE {name} ({columns})")
    return name


def cdc_block(my, name: str, extra: str = "") -> str:
    return (f'MySQL-CDC {{ plugin_output = "c", base-url = "{my.url}", username = "{my.user}", '
            f'password = "{my.password}", table-names = ["{my.database}.{name}"] {extra} }}')


def sync(spark, plan, run_id: str, options=None):
    return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id, options=options or {}))


def kinds_of(spark, path) -> list[tuple]:
    import glob

    if not glob.glob(f"{path}/*.json"):
        return []
    return sorted((r["row_kind"], r["id"], r["name"]) for r in spark.read.json(str(path)).collect())


def file_job(my, name: str, tmp_path, extra: str = "") -> str:
    return f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(my, name, extra)} }}
        transform {{ RowKindExtractor {{ plugin_input = "c", plugin_output = "k", transform_type = SHORT }} }}
        sink {{ LocalFile {{ plugin_input = "k", path = "{tmp_path / 'out'}", file_format_type = "json" }} }}
    """


def test_snapshot_then_binlog_changes_with_row_kinds(plan_of, spark, my, tmp_path):
    name = table(my)
    my.sql(f"INSERT INTO {name} VALUES (1, 'a', 1.50, '2024-01-02 03:04:05.120', 1), (2, 'b', NULL, NULL, 0)")
    plan = plan_of(file_job(my, name, tmp_path, ", schema-changes.enabled = true"))
    sync(spark, plan, "r1")
    first = {r["id"]: r for r in spark.read.json(str(tmp_path / "out")).collect()}
    assert sorted(first) == [1, 2] and first[1]["row_kind"] == "+I"
    assert first[1]["score"] == 1.5 and first[1]["at"].startswith("2024-01-02T03:04:05.12") and first[1]["ok"] is True
    my.sql(f"INSERT INTO {name} VALUES (3, 'c', 2, NULL, 1); UPDATE {name} SET name = 'bb' WHERE id = 2; "
           f"DELETE FROM {name} WHERE id = 1")
    sync(spark, plan, "r2")
    assert kinds_of(spark, tmp_path / "out") == sorted([("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c"),
                                                        ("-U", 2, "b"), ("+U", 2, "bb"), ("-D", 1, "a")])
    # a column added between runs: the next run's rows carry it
    my.sql(f"ALTER TABLE {name} ADD COLUMN extra INT; INSERT INTO {name} (id, name, extra) VALUES (4, 'd', 40)")
    sync(spark, plan, "r3")
    rows = {(r["row_kind"], r["id"]): r for r in spark.read.json(str(tmp_path / "out")).collect()}
    assert len(rows) == 7 and rows[("+I", 4)]["extra"] == 40 and rows[("+I", 3)]["extra"] is None


def test_a_crash_after_the_sink_committed_replays_the_same_binlog_range_once(plan_of, spark, my, tmp_path):
    name = table(my, "id INT PRIMARY KEY, name VARCHAR(20)")
    my.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    plan = plan_of(file_job(my, name, tmp_path))
    sync(spark, plan, "c1")
    my.sql(f"INSERT INTO {name} VALUES (2, 'b'); UPDATE {name} SET name = 'aa' WHERE id = 1")
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        sync(spark, plan, "c2", faults.from_environment({faults.ENV: "batch.committed"}))
    # a change after the crash: the restore re-runs the planned micro-batch, then reads on to it (an
    # available_now query that re-ran a micro-batch ends after it, unless started again)
    my.sql(f"INSERT INTO {name} VALUES (3, 'c')")
    sync(spark, plan, "c3")
    assert kinds_of(spark, tmp_path / "out") == sorted([("+I", 1, "a"), ("+I", 2, "b"), ("-U", 1, "a"),
                                                        ("+U", 1, "aa"), ("+I", 3, "c")])


def test_a_sync_into_an_upserted_table_ends_equal_to_its_source(plan_of, spark, my, db, tmp_path):
    name = table(my)
    my.sql(f"INSERT INTO {name} SELECT seq, CONCAT('r', seq), seq, NOW(), 1 FROM seq_1_to_300")
    target = f"dst_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE TABLE {target} (id int primary key, name text, score numeric(8,2), at timestamp, ok boolean)")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}", parallelism = 2 }}
        source {{ {cdc_block(my, name)} }}
        sink {{ Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                       password = "{db.password}", table = "{target}", primary_keys = ["id"],
                       generate_sink_sql = true, database = "{db.database}" }} }}
    """)
    rng, next_id, stop = random.Random(11), [1000], threading.Event()

    def change() -> None:
        ids = [int(r[0]) for r in my.sql(f"SELECT id FROM {name}")]
        action = rng.random()
        if action < 0.5 or not ids:
            next_id[0] += 1
            my.sql(f"INSERT INTO {name} VALUES ({next_id[0]}, 'n{next_id[0]}', {rng.randint(0, 99)}, NOW(), 1)")
        elif action < 0.8:
            my.sql(f"UPDATE {name} SET name = 'u{rng.randint(0, 999)}', score = score + 1 WHERE id = {rng.choice(ids)}")
        else:
            my.sql(f"DELETE FROM {name} WHERE id = {rng.choice(ids)}")

    def writer() -> None:
        while not stop.is_set():
            change()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        sync(spark, plan, "j1")
    finally:
        stop.set()
        thread.join()
    for _ in range(30):
        change()
    sync(spark, plan, "j2")
    source = [[r[0], r[1], r[2]] for r in my.sql(f"SELECT id, name, score FROM {name} ORDER BY id")]
    assert db.sql(f"SELECT id, name, score FROM {target} ORDER BY id") == source
    assert len(source) > 250


def test_mysql_cdc_into_kafka_as_debezium_json_exactly_once(plan_of, spark, my, kafka, tmp_path):
    name = table(my, "id INT PRIMARY KEY, name VARCHAR(20)")
    my.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    topic = kafka.create_topic(f"cdc_{uuid.uuid4().hex[:8]}")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(my, name)} }}
        sink {{ Kafka {{ plugin_input = "c", bootstrap.servers = "{kafka.bootstrap}", topic = "{topic}",
                        format = debezium_json, semantics = EXACTLY_ONCE, partition_key_fields = ["id"] }} }}
    """)
    sync(spark, plan, "k1")
    my.sql(f"UPDATE {name} SET name = 'bb' WHERE id = 2; DELETE FROM {name} WHERE id = 1")
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        sync(spark, plan, "k2", faults.from_environment({faults.ENV: "batch.committed"}))
    sync(spark, plan, "k3")
    got = [json.loads(v) for _k, v, _p, _o in kafka.consume(topic)]
    ops = sorted((m["op"], (m["after"] or m["before"])["name"]) for m in got)
    assert ops == [("c", "a"), ("c", "b"), ("c", "bb"), ("d", "a"), ("d", "b")]  # an update is d then c


def test_a_stream_started_from_another_thread_captures_its_table(plan_of, spark, my, tmp_path):
    """The session is handed over, never looked up as the thread's active one (a stop-able stream runs
    in a thread of its own)."""
    name = table(my, "id INT PRIMARY KEY, name VARCHAR(20)")
    my.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    plan = plan_of(file_job(my, name, tmp_path))
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(sync(spark, plan, "t1")))
    worker.start()
    worker.join()
    assert outcome and kinds_of(spark, tmp_path / "out") == [("+I", 1, "a")]


def test_batch_mode_reads_the_tables_once(run_job, spark, my, tmp_path):
    name = table(my, "id INT PRIMARY KEY, name VARCHAR(20)")
    my.sql(f"INSERT INTO {name} SELECT seq, CONCAT('r', seq) FROM seq_1_to_40")
    run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ {cdc_block(my, name)} }}
        sink {{ LocalFile {{ plugin_input = "c", path = "{tmp_path / 'b'}", file_format_type = "json" }} }}
    """)
    assert sorted(r["id"] for r in spark.read.json(str(tmp_path / "b")).collect()) == list(range(1, 41))


def test_a_binlog_read_that_ends_short_of_its_range_fails_instead_of_returning_part_of_it(my):
    """A micro-batch's range ends at a position the server reported; should the dump end before it (the
    readers' end of binlog trails the reported one during a group commit, a dropped connection), the
    rows read so far are not the whole range: taking them as such would let the next micro-batch skip
    the rest. The read goes on from its last whole transaction until the end, or fails the micro-batch."""
    from airflow_provider_seatunnel.connectors.mysql_cdc import datasource

    name = table(my, "id INT PRIMARY KEY, name VARCHAR(20)")
    conn = {"host": "127.0.0.1", "port": my.port, "user": my.user, "passwd": my.password}
    start = datasource.binlog_end(conn)
    my.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    end = datasource.binlog_end(conn)
    tid = f"{my.database}.{name}"
    spec = {"conn": conn, "tables": {tid: {"table": tid, "columns": ["id", "name"]}}, "server_id": 7301}
    assert [(r[0], *r[1]) for r in datasource.read_changes(spec, start, end)] == [(tid, "1", "a")]

    beyond = {**end, "pos": end["pos"] + 10_000}  # not written (yet): the dump ends short of it
    with pytest.raises(RuntimeError, match=r"could be read to .* only, not to the micro-batch's end"):
        list(datasource.read_changes(spec, start, beyond, patience_s=2))

    # the rest of the range is written while the read waits for it: the read returns the whole range
    result: dict = {}
    reader = threading.Thread(target=lambda: result.update(
        rows=[tuple(r[1]) for r in datasource.read_changes(spec, start, beyond, patience_s=60)]))
    reader.start()
    ids = iter(range(2, 100_000))
    while datasource.binlog_end(conn)["pos"] <= beyond["pos"]:  # one transaction per statement
        my.sql("".join(f"INSERT INTO {name} VALUES ({i}, 'r{i}'); " for i in itertools.islice(ids, 50)))
    reader.join(90)
    whole = [tuple(r[1]) for r in datasource.read_changes(spec, start, beyond)]
    assert result["rows"] == whole and len(whole) > 1 and whole[0] == ("1", "a")


def test_schema_changes_in_the_middle_of_a_stream_are_applied_to_a_mysql_target_once(plan_of, spark, my, tmp_path):
    driver = "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver"
    name = table(my, "id INT PRIMARY KEY, name VARCHAR(10), score INT, junk VARCHAR(5)")
    my.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'x')")
    target = f"dst_{uuid.uuid4().hex[:8]}"
    my.sql(f"CREATE TABLE {target} (id INT PRIMARY KEY, name VARCHAR(10), score INT, junk VARCHAR(5))")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(my, name, ", schema-changes.enabled = true")} }}
        sink {{ Jdbc {{ plugin_input = "c", url = "{my.url}", driver = "{driver}", user = "{my.user}",
                       password = "{my.password}", table = "{target}", primary_keys = ["id"],
                       generate_sink_sql = true, database = "{my.database}" }} }}
    """)
    sync(spark, plan, "m1")
    my.sql(f"INSERT INTO {name} VALUES (2, 'b', 2, 'y'); ALTER TABLE {name} CHANGE COLUMN name title VARCHAR(40); "
           f"ALTER TABLE {name} DROP COLUMN junk, MODIFY score BIGINT; ALTER TABLE {name} ADD COLUMN note VARCHAR(20); "
           f"INSERT INTO {name} VALUES (3, 'a title longer than ten', 5000000000, 'n'); "
           f"UPDATE {name} SET score = 10 WHERE id = 1")
    # MySQL's DDL commits by itself: a kill after a DDL, before its record, leaves the target changed
    my.sql(f"ALTER TABLE {target} ADD COLUMN note VARCHAR(20)")
    with pytest.raises(PipelineError, match=r"injected fault at sink\.prepared"):
        sync(spark, plan, "m2", faults.from_environment({faults.ENV: "sink.prepared"}))
    sync(spark, plan, "m3")  # the restore applies nothing twice
    assert my.sql(f"SELECT column_name, column_type FROM information_schema.columns WHERE table_schema = "
                  f"'{my.database}' AND table_name = '{target}' ORDER BY ordinal_position") == [
        ["id", "int(11)"], ["title", "varchar(40)"], ["score", "bigint(20)"], ["note", "varchar(20)"]]
    assert my.sql(f"SELECT id, title, score, note FROM {target} ORDER BY id") == [
        ["1", "a", "10", None], ["2", "b", "2", None], ["3", "a title longer than ten", "5000000000", "n"]]
    recorded = my.sql(f"SELECT change_text FROM seatunnel_schema_changes WHERE table_name LIKE '%{target}%'")
    assert len(recorded) == 5 and any("RENAME COLUMN name TO title" in r[0] for r in recorded)



def test_without_the_switch_the_stream_keeps_its_columns_as_seatunnel_does(plan_of, spark, my, tmp_path):
    """SeaTunnel 2.3.8 (measured, switch off): after a rename, a drop and an add, later rows carry the renamed and
    the dropped column as null and leave the added one out."""
    name = table(my, "id INT PRIMARY KEY, name VARCHAR(10), score INT, junk VARCHAR(5)")
    my.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'x')")
    plan = plan_of(file_job(my, name, tmp_path))
    sync(spark, plan, "o1")
    my.sql(f"INSERT INTO {name} VALUES (2, 'b', 2, 'y'); ALTER TABLE {name} RENAME COLUMN name TO title; "
           f"ALTER TABLE {name} DROP COLUMN junk; ALTER TABLE {name} ADD COLUMN note VARCHAR(20); "
           f"INSERT INTO {name} VALUES (3, 'c', 3, 'n'); UPDATE {name} SET score = 10 WHERE id = 1")
    sync(spark, plan, "o2")
    out = spark.read.json(str(tmp_path / "out"))
    assert "note" not in out.columns and "title" not in out.columns
    rows = sorted((r["row_kind"], r["id"], r["name"], r["score"], r["junk"]) for r in out.collect())
    assert rows == sorted([("+I", 1, "a", 1, "x"), ("+I", 2, "b", 2, "y"), ("+I", 3, None, 3, None),
                           ("-U", 1, None, 1, None), ("+U", 1, None, 10, None)])


def test_all_tables_of_a_source_stream_through_one_binlog_reader_into_two_sinks_once(plan_of, spark, my, db, tmp_path):
    """A whole-database stream (issue 37): three tables (one empty) read by one binlog reader in one query that
    writes two sinks (Jdbc PostgreSQL upserted per table, created by its save mode; LocalFile); a micro-batch
    replayed after the driver died past the sinks' commits is written once: each target equals its source and
    the files hold each change once."""
    names = [table(my, "id INT PRIMARY KEY, name VARCHAR(20), score INT") for _ in range(3)]
    for i, name in enumerate(names[:2]):
        my.sql(f"INSERT INTO {name} SELECT seq, CONCAT('r', seq), seq * {i + 1} FROM seq_1_to_40")
    schema = f"cdc_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE SCHEMA {schema}")
    listed = ", ".join(f'"{my.database}.{n}"' for n in names)
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ MySQL-CDC {{ plugin_output = "c", base-url = "{my.url}", username = "{my.user}",
                              password = "{my.password}", table-names = [{listed}] }} }}
        sink {{
          Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                  password = "{db.password}", database = "{db.database}", table = "{schema}.${{table_name}}",
                  primary_keys = ["id"], generate_sink_sql = true, schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }}
          LocalFile {{ plugin_input = "c", path = "{tmp_path / 'out'}/${{table_name}}", file_format_type = "json" }}
        }}
    """)

    def equal() -> bool:
        return all(db.sql(f"SELECT id, name, score FROM {schema}.{n} ORDER BY id") ==
                   [[str(v) for v in r] for r in my.sql(f"SELECT id, name, score FROM {n} ORDER BY id")]
                   for n in names)

    first = sync(spark, plan, "m1")
    assert len(first["streaming"]["queries"]) == 1 and "/queries/source-" in first["streaming"]["queries"][0]["checkpoint"]
    assert equal() and db.sql(f"SELECT count(*) FROM {schema}.{names[2]}") == [["0"]]  # created though empty
    my.sql(f"INSERT INTO {names[2]} VALUES (1, 'x', 1); UPDATE {names[0]} SET name = 'u' WHERE id <= 5; "
           f"DELETE FROM {names[1]} WHERE id > 30")
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        sync(spark, plan, "m2", faults.from_environment({faults.ENV: "batch.committed"}))
    my.sql(f"UPDATE {names[2]} SET score = 2")
    sync(spark, plan, "m3")  # replays the micro-batch the sinks committed (found committed), then the rest
    assert equal()
    files = spark.read.json(str(tmp_path / "out" / names[2])).collect()
    assert sorted((r["id"], r["score"]) for r in files) == [(1, 1), (1, 1), (1, 2)]  # +I, -U, +U: each once
