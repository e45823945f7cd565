"""Postgres-CDC against a real PostgreSQL (tests/pg.py, wal_level = logical): the snapshot then every
change with its row kind, the snapshot-to-stream hand-over with writes during the snapshot, a CDC sync
into a Jdbc table upserted on its primary key that ends equal to its source, a replayed micro-batch
after a crash, and the slot advancing only once Spark recorded a micro-batch."""

from __future__ import annotations

import json
import logging
import random
import threading
import uuid

import pytest

from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError


def table(db, columns: str = "id int primary key, name text, score numeric(8,2), at timestamp, ok boolean") -> str:
    name = f"src_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE TABLE {name} ({columns}); ALTER TABLE {name} REPLICA IDENTITY FULL")
    return name


def cdc_block(db, name: str, extra: str = "") -> str:
    return (f'Postgres-CDC {{ plugin_output = "c", base-url = "{db.url}", username = "{db.user}", '
            f'password = "{db.password}", table-names = ["{db.database}.public.{name}"] {extra} }}')


def sync(spark, plan, run_id: str, options=None):
    return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id, options=options or {}))


def rows_of(spark, path) -> list[tuple]:
    import glob

    if not glob.glob(f"{path}/*.json"):
        return []
    return sorted((r["row_kind"], r["id"], r["name"]) for r in spark.read.json(str(path)).collect())


def test_snapshot_then_changes_with_row_kinds(plan_of, spark, db, tmp_path):
    name = table(db)
    db.sql(f"INSERT INTO {name} VALUES (1, 'a', 1.50, '2024-01-02 03:04:05', true), (2, 'b', null, null, false)")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(db, name)} }}
        transform {{ RowKindExtractor {{ plugin_input = "c", plugin_output = "k", transform_type = SHORT }} }}
        sink {{ LocalFile {{ plugin_input = "k", path = "{tmp_path / 'out'}", file_format_type = "json" }} }}
    """)
    sync(spark, plan, "r1")
    first = spark.read.json(str(tmp_path / "out")).collect()
    assert sorted((r["row_kind"], r["id"], r["name"]) for r in first) == [("+I", 1, "a"), ("+I", 2, "b")]
    typed = {r["id"]: r for r in first}
    assert typed[1]["score"] == 1.5 and typed[1]["at"].startswith("2024-01-02T03:04:05") and typed[1]["ok"] is True
    db.sql(f"INSERT INTO {name} VALUES (3, 'c', 2, null, true); UPDATE {name} SET name = 'bb' WHERE id = 2; "
           f"DELETE FROM {name} WHERE id = 1")
    sync(spark, plan, "r2")
    assert rows_of(spark, tmp_path / "out") == sorted([("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c"), ("-U", 2, "b"),
                                                       ("+U", 2, "bb"), ("-D", 1, "a")])
    sync(spark, plan, "r3")  # nothing new: nothing written
    assert len(rows_of(spark, tmp_path / "out")) == 6


def jdbc_sync_plan(plan_of, db, name: str, target: str, tmp_path) -> object:
    return plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}", parallelism = 2 }}
        source {{ {cdc_block(db, name)} }}
        sink {{ Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                       password = "{db.password}", table = "{target}", primary_keys = ["id"],
                       generate_sink_sql = true, database = "{db.database}" }} }}
    """)


def contents(db, name: str) -> list[list]:
    return db.sql(f"SELECT id, name, score FROM {name} ORDER BY id")


def random_changes(db, name: str, rng: random.Random, count: int, next_id: list[int]) -> None:
    for _ in range(count):
        ids = [int(r[0]) for r in db.sql(f"SELECT id FROM {name}")]
        action = rng.random()
        if action < 0.5 or not ids:
            next_id[0] += 1
            db.sql(f"INSERT INTO {name} VALUES ({next_id[0]}, 'n{next_id[0]}', {rng.randint(0, 99)}, now(), true)")
        elif action < 0.8:
            db.sql(f"UPDATE {name} SET name = 'u{rng.randint(0, 999)}', score = score + 1 WHERE id = {rng.choice(ids)}")
        else:
            db.sql(f"DELETE FROM {name} WHERE id = {rng.choice(ids)}")


def test_a_sync_into_an_upserted_table_ends_equal_to_its_source_with_writes_during_the_snapshot(plan_of, spark, db,
                                                                                                   tmp_path):
    name = table(db)
    db.sql(f"INSERT INTO {name} SELECT g, 'r' || g, g, now(), true FROM generate_series(1, 300) g")
    target = f"dst_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE TABLE {target} (id int primary key, name text, score numeric(8,2), at timestamp, ok boolean)")
    plan = jdbc_sync_plan(plan_of, db, name, target, tmp_path)
    rng, next_id, stop = random.Random(7), [1000], threading.Event()

    def writer() -> None:  # changes while the first run takes its snapshot and streams
        while not stop.is_set():
            random_changes(db, name, rng, 1, next_id)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        sync(spark, plan, "j1")
    finally:
        stop.set()
        thread.join()
    random_changes(db, name, rng, 30, next_id)
    sync(spark, plan, "j2")
    assert contents(db, target) == contents(db, name)
    assert len(contents(db, name)) > 250


def test_a_crash_after_the_sink_committed_replays_the_same_changes_once(plan_of, spark, db, tmp_path):
    name = table(db, "id int primary key, name text")
    db.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(db, name)} }}
        transform {{ RowKindExtractor {{ plugin_input = "c", plugin_output = "k", transform_type = SHORT }} }}
        sink {{ LocalFile {{ plugin_input = "k", path = "{tmp_path / 'out'}", file_format_type = "json" }} }}
    """)
    sync(spark, plan, "c1")
    publication = db.sql(f"SELECT pubname FROM pg_publication_tables WHERE tablename = '{name}'")[0][0]
    slot = publication[: -len("_pub")]
    before_changes = db.sql("SELECT pg_current_wal_lsn()")[0][0]
    db.sql(f"INSERT INTO {name} VALUES (2, 'b'); UPDATE {name} SET name = 'aa' WHERE id = 1")
    # the sink commits micro-batch 1, then the driver dies before Spark records it
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        sync(spark, plan, "c2", faults.from_environment({faults.ENV: "batch.committed"}))
    # the slot did not advance past the micro-batch Spark did not record: its changes are still there
    kept = db.sql(f"SELECT confirmed_flush_lsn <= '{before_changes}'::pg_lsn FROM pg_replication_slots "
                  f"WHERE slot_name = '{slot}'")
    assert kept == [["t"]]
    sync(spark, plan, "c3")  # replays micro-batch 1 (the sink finds it committed), then nothing new
    db.sql(f"INSERT INTO {name} VALUES (3, 'c')")
    sync(spark, plan, "c4")  # Spark hands a source its recorded micro-batches when it plans the next one
    advanced = db.sql(f"SELECT confirmed_flush_lsn > '{before_changes}'::pg_lsn FROM pg_replication_slots "
                      f"WHERE slot_name = '{slot}'")
    assert advanced == [["t"]]
    assert rows_of(spark, tmp_path / "out") == sorted([("+I", 1, "a"), ("+I", 2, "b"), ("-U", 1, "a"),
                                                       ("+U", 1, "aa"), ("+I", 3, "c")])


def test_batch_mode_reads_the_tables_once(run_job, spark, db, tmp_path):
    name = table(db, "id int primary key, name text")
    db.sql(f"INSERT INTO {name} SELECT g, 'r' || g FROM generate_series(1, 50) g")
    run_job(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ {cdc_block(db, name)} }}
        sink {{ LocalFile {{ plugin_input = "c", path = "{tmp_path / 'b'}", file_format_type = "json" }} }}
    """)
    ids = sorted(r["id"] for r in spark.read.json(str(tmp_path / "b")).collect())
    assert ids == list(range(1, 51))


def test_one_capture_may_feed_one_sink_in_a_stream(plan_of, spark, db, tmp_path):
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    name = table(db, "id int primary key, name text")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(db, name)} }}
        sink {{ Console {{ plugin_input = "c" }}
               LocalFile {{ plugin_input = "c", path = "{tmp_path / 'x'}", file_format_type = "json" }} }}
    """)
    with pytest.raises(RuntimeConfigError, match="feeds 2 sinks"):
        sync(spark, plan, "x")
    assert json.dumps(plan.to_dict()).count(db.password) == 0


def test_a_column_added_to_the_source_is_added_to_the_jdbc_target(plan_of, spark, db, tmp_path):
    name = table(db, "id int primary key, name text")
    db.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    target = f"dst_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE TABLE {target} (id int primary key, name text)")
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(db, name, ", schema-changes.enabled = true")} }}
        sink {{ Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                       password = "{db.password}", table = "{target}", primary_keys = ["id"],
                       generate_sink_sql = true, database = "{db.database}" }} }}
    """)
    sync(spark, plan, "s1")
    db.sql(f"INSERT INTO {name} VALUES (2, 'b'); ALTER TABLE {name} ADD COLUMN score int; "
           f"INSERT INTO {name} VALUES (3, 'c', 30); UPDATE {name} SET score = 10 WHERE id = 1")
    sync(spark, plan, "s2")  # the run finds the new column when it starts: the stream and the target take it
    assert db.sql(f"SELECT id, name, score FROM {target} ORDER BY id") == [["1", "a", "10"], ["2", "b", None],
                                                                           ["3", "c", "30"]]


def test_a_column_that_appears_while_a_stream_runs_fails_the_micro_batch_for_a_replay():
    from airflow_provider_seatunnel.connectors.cdc.schemachange import named

    spec = {"table": "public.t", "schema_changes": True,
            "shapes": [{"names": ["id", "name"], "types": ["", ""], "to": ["id", "name"]}]}
    assert named(spec, ["id", "name"]) == ["id", "name"]
    with pytest.raises(PipelineError, match="changed its columns while the stream ran") as info:
        named(spec, ["id", "name", "score"])
    assert not info.value.deterministic  # the rerun takes the column in
    # without the option the column is left out (the stream has no column of that name), as SeaTunnel does
    assert named({**spec, "schema_changes": False}, ["id", "name", "score"]) == ["id", "name", "score"]


def evolving_plan(plan_of, db, name: str, target: str, tmp_path, sink: str = "") -> object:
    sink = sink or (f'Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}", '
                    f'password = "{db.password}", table = "{target}", primary_keys = ["id"], '
                    f'generate_sink_sql = true, database = "{db.database}" }}')
    return plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}" }}
        source {{ {cdc_block(db, name, ", schema-changes.enabled = true")} }}
        sink {{ {sink} }}
    """)


def source_and_target(db, columns: str, first_row: str) -> tuple[str, str]:
    """A captured table holding ``first_row`` and a target table of the same columns."""
    name, target = table(db, columns), f"dst_{uuid.uuid4().hex[:8]}"
    db.sql(f"INSERT INTO {name} VALUES ({first_row}); CREATE TABLE {target} ({columns})")
    return name, target


def test_schema_changes_in_the_middle_of_a_stream_are_applied_to_the_jdbc_target_once(plan_of, spark, db, tmp_path):
    name, target = source_and_target(db, "id int primary key, name varchar(10), score int, junk text", "1, 'a', 1, 'x'")
    plan = evolving_plan(plan_of, db, name, target, tmp_path)
    sync(spark, plan, "e1")
    db.sql(f"INSERT INTO {name} VALUES (2, 'b', 2, 'y'); ALTER TABLE {name} RENAME COLUMN name TO title; "
           f"ALTER TABLE {name} DROP COLUMN junk; ALTER TABLE {name} ALTER COLUMN score TYPE bigint; "
           f"ALTER TABLE {name} ALTER COLUMN title TYPE varchar(40); ALTER TABLE {name} ADD COLUMN note text; "
           f"INSERT INTO {name} VALUES (3, 'a title longer than ten', 5000000000, 'n'); "
           f"UPDATE {name} SET score = 10 WHERE id = 1")
    # the target follows the changes and the rows are staged, then the driver dies before the commit
    with pytest.raises(PipelineError, match=r"injected fault at sink\.prepared"):
        sync(spark, plan, "e2", faults.from_environment({faults.ENV: "sink.prepared"}))
    sync(spark, plan, "e3")  # the restore finds the changes recorded: applied once, then the rows land
    assert db.sql(f"SELECT column_name, data_type, character_maximum_length FROM information_schema.columns "
                  f"WHERE table_name = '{target}' ORDER BY ordinal_position") == [
        ["id", "integer", None], ["title", "character varying", "40"], ["score", "bigint", None], ["note", "text", None]]
    assert db.sql(f"SELECT id, title, score, note FROM {target} ORDER BY id") == [
        ["1", "a", "10", None], ["2", "b", "2", None], ["3", "a title longer than ten", "5000000000", "n"]]
    recorded = db.sql(f"SELECT change_text FROM seatunnel_schema_changes WHERE table_name LIKE '%{target}%'")
    assert len(recorded) == 5 and any("RENAME COLUMN name TO title" in r[0] for r in recorded)
    db.sql(f"INSERT INTO {name} VALUES (4, 'd', 4, 'm')")
    sync(spark, plan, "e4")  # later runs apply nothing again
    assert len(db.sql(f"SELECT 1 FROM seatunnel_schema_changes WHERE table_name LIKE '%{target}%'")) == 5
    assert db.sql(f"SELECT id, title, note FROM {target} WHERE id = 4") == [["4", "d", "m"]]


def test_a_change_the_sink_cannot_follow_fails_naming_it_and_writes_nothing_after_it(plan_of, spark, db, tmp_path):
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    name, target = source_and_target(db, "id int primary key, score bigint", "1, 1")
    plan = evolving_plan(plan_of, db, name, target, tmp_path)
    sync(spark, plan, "n1")
    db.sql(f"INSERT INTO {name} VALUES (2, 2); ALTER TABLE {name} ALTER COLUMN score TYPE int; "
           f"INSERT INTO {name} VALUES (3, 3)")
    with pytest.raises(RuntimeConfigError, match=rf"MODIFY COLUMN score bigint -> integer of public\.{name}.*"
                                                  "not a safe widening") as info:
        sync(spark, plan, "n2")
    assert info.value.deterministic  # not retried: every run would stop at the same change
    assert db.sql(f"SELECT id, score FROM {target} ORDER BY id") == [["1", "1"]]
    assert db.sql(f"SELECT data_type FROM information_schema.columns WHERE table_name = '{target}' AND "
                  "column_name = 'score'") == [["bigint"]]
    # a sink that follows added columns only (files) refuses a drop before it writes anything
    other = table(db, "id int primary key, junk text")
    files = evolving_plan(plan_of, db, other, "", tmp_path / "f",
                          f'LocalFile {{ plugin_input = "c", path = "{tmp_path / "out"}", file_format_type = "json" }}')
    sync(spark, files, "f1")
    db.sql(f"ALTER TABLE {other} DROP COLUMN junk; INSERT INTO {other} VALUES (5)")
    with pytest.raises(RuntimeConfigError, match=rf"cannot follow the schema change DROP COLUMN junk of public\.{other}"):
        sync(spark, files, "f2")


def test_all_tables_of_a_source_stream_through_one_slot_and_a_restore_writes_each_once(plan_of, spark, db, tmp_path,
                                                                                        caplog):
    """A whole-database stream (issue 37): three tables (one empty) through one slot and one publication, one
    query; save-mode creation of every target, changes spread over the tables (a micro-batch's tables of one
    row type staged with one write), and a micro-batch replayed after the driver died past the sink's commit:
    each table equals its source, each change applied once."""
    caplog.set_level(logging.INFO, logger="seatunnel")
    names = [table(db, "id int primary key, name text, score int") for _ in range(3)]
    for i, name in enumerate(names[:2]):
        db.sql(f"INSERT INTO {name} SELECT g, 'r' || g, g * {i + 1} FROM generate_series(1, 40) g")
    schema = f"cdc_{uuid.uuid4().hex[:8]}"
    db.sql(f"CREATE SCHEMA {schema}")

    listed = ", ".join(f'"{db.database}.public.{n}"' for n in names)
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}", multi_table.concurrent_tables = 1 }}
        source {{ Postgres-CDC {{ plugin_output = "c", base-url = "{db.url}", username = "{db.user}",
                                 password = "{db.password}", table-names = [{listed}] }} }}
        sink {{ Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                       password = "{db.password}", database = "{db.database}", table = "{schema}.${{table_name}}",
                       primary_keys = ["id"], generate_sink_sql = true,
                       schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }} }}
    """)

    def equal() -> bool:
        return all(db.sql(f"SELECT id, name, score FROM {schema}.{n} ORDER BY id") ==
                   db.sql(f"SELECT id, name, score FROM {n} ORDER BY id") for n in names)

    first = sync(spark, plan, "w1")
    publications = db.sql("SELECT DISTINCT pubname FROM pg_publication_tables WHERE tablename IN (" +
                          ", ".join(f"'{n}'" for n in names) + ")")
    assert len(publications) == 1  # one publication covers the three tables
    slot = publications[0][0][: -len("_pub")]
    assert db.sql(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '{slot}%'") == [["1"]]
    assert equal() and db.sql(f"SELECT count(*) FROM {schema}.{names[2]}") == [["0"]]  # created though empty
    assert "staged 3 tables with one write" in caplog.text  # the snapshot's tables of one row type: one write
    assert len(first["streaming"]["queries"]) == 1 and "/queries/source-" in first["streaming"]["queries"][0]["checkpoint"]
    # in one micro-batch: a key changed twice (the last change wins), one key (1) in two tables
    db.sql(f"INSERT INTO {names[2]} VALUES (1, 'x', 1); UPDATE {names[0]} SET name = 'u' WHERE id <= 5; "
           f"DELETE FROM {names[1]} WHERE id > 30; INSERT INTO {names[0]} VALUES (41, 'n', 0); "
           f"UPDATE {names[0]} SET score = 99 WHERE id = 2")
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        sync(spark, plan, "w2", faults.from_environment({faults.ENV: "batch.committed"}))
    db.sql(f"UPDATE {names[2]} SET score = 2; DELETE FROM {names[0]} WHERE id = 1")
    caplog.clear()
    sync(spark, plan, "w3")  # replays the micro-batch the sink committed (found committed), then the rest
    assert equal()
    assert "staged 2 tables with one write" in caplog.text  # the later changes, to two of the tables: one write


def slots(db) -> set[str]:
    return {r[0] for r in db.sql("SELECT slot_name FROM pg_replication_slots")}


def publications(db) -> set[str]:
    return {r[0] for r in db.sql("SELECT pubname FROM pg_publication")}


def test_a_capture_replaced_when_the_tables_change_has_its_slot_and_publication_dropped(plan_of, spark, db, tmp_path):
    """The job's table-names grow: a new pipeline identity, a new capture and slot; the earlier capture's slot
    (which would hold the WAL back forever) and publication are dropped, and the stream goes on from the new
    snapshot. Another job's capture (other checkpoint root), marked like ours, is left alone."""
    a, b = table(db, "id int primary key, name text"), table(db, "id int primary key, name text")
    db.sql(f"INSERT INTO {a} VALUES (1, 'a'); INSERT INTO {b} VALUES (1, 'b')")

    def plan(names: list[str], root: str) -> object:
        listed = ", ".join(f'"{db.database}.public.{n}"' for n in names)
        return plan_of(f"""
            env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / root}" }}
            source {{ Postgres-CDC {{ plugin_output = "c", base-url = "{db.url}", username = "{db.user}",
                                     password = "{db.password}", table-names = [{listed}] }} }}
            sink {{ Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                           password = "{db.password}", database = "{db.database}", table = "{schema}_{root}.${{table_name}}",
                           primary_keys = ["id"], generate_sink_sql = true,
                           schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }} }}
        """)

    schema = f"cdc_{uuid.uuid4().hex[:8]}"
    before_slots, before_pubs = slots(db), publications(db)
    sync(spark, plan([a], "other"), "o1")  # another job: same name and source, another checkpoint root
    other = slots(db) - before_slots
    sync(spark, plan([a], "ck"), "r1")
    (first,) = slots(db) - before_slots - other
    assert f"{first}_pub" in publications(db)
    db.sql(f"INSERT INTO {a} VALUES (2, 'a2')")
    sync(spark, plan([a, b], "ck"), "r2")  # the tables changed: a new capture replaces the first
    (second,) = slots(db) - before_slots - other
    assert second != first and f"{first}_pub" not in publications(db)
    assert len(other) == 1 and other <= slots(db) and len(publications(db) - before_pubs) == 2
    for name in (a, b):  # the new capture's snapshot, upserted over what the first one wrote
        assert db.sql(f"SELECT id, name FROM {schema}_ck.{name} ORDER BY id") == db.sql(
            f"SELECT id, name FROM {name} ORDER BY id")
    with pytest.raises(PipelineError, match=rf"replication slot {first} of this capture is gone"):
        sync(spark, plan([a], "ck"), "r3")  # back to the first tables: its capture's slot was dropped


def test_an_earlier_slot_a_running_stream_holds_is_kept_and_named(db, caplog):
    """Retiring, without Spark: captures of one lineage, marked on their publications. One whose stream runs
    (holding its slot's lock, as a stream does from another process) is kept and named with the statements
    that drop it; one no stream holds is dropped; another lineage's and an unmarked slot are not touched."""
    import psycopg

    from airflow_provider_seatunnel.connectors.postgres_cdc import retire

    name = table(db, "id int primary key")
    tag = uuid.uuid4().hex[:8]
    made = {kind: f"st_{kind}_{tag}" for kind in ("new", "busy", "idle", "theirs", "unmarked")}
    for slot in made.values():
        db.sql(f"CREATE PUBLICATION {slot}_pub FOR TABLE {name}")
        db.sql(f"SELECT pg_create_logical_replication_slot('{slot}', 'pgoutput')")
    params = {"host": "127.0.0.1", "port": db.port, "dbname": db.database, "user": db.user, "password": db.password}
    with psycopg.connect(**params, autocommit=True) as conn:
        for kind in ("new", "busy", "idle"):
            retire.mark(conn, f"{made[kind]}_pub", "line-1", made[kind])
        retire.mark(conn, f"{made['theirs']}_pub", "line-2", made["theirs"])
    running = retire.hold(params, made["busy"])  # the stream of the busy slot runs
    try:
        assert retire.in_use(params, made["busy"]) and not retire.in_use(params, made["idle"])
        with caplog.at_level("WARNING", logger="seatunnel.postgres_cdc"):
            assert retire.retire(params, "line-1", made["new"], "source[0] Postgres-CDC") == [made["idle"]]
    finally:
        running()
    assert f"pg_drop_replication_slot('{made['busy']}'); DROP PUBLICATION IF EXISTS {made['busy']}_pub" in caplog.text
    left = {kind for kind, slot in made.items() if slot in slots(db) and f"{slot}_pub" in publications(db)}
    assert left == {"new", "busy", "theirs", "unmarked"}
    assert retire.retire(params, "line-1", made["new"], "source[0] Postgres-CDC") == [made["busy"]]  # stream ended
    for slot in made.values():
        db.sql(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{slot}'")
        db.sql(f"DROP PUBLICATION IF EXISTS {slot}_pub")


def test_schema_changes_follow_into_a_delta_table_once_across_a_kill_between_the_ddl_and_the_rows(
        plan_of, spark, db, tmp_path):
    """The Delta sink creates the table able to evolve, applies each change as one commit recording it, and
    a restore after a kill past the DDL (before the rows' commit) neither applies a change again nor loses
    rows."""
    name = table(db, "id int primary key, name varchar(10), score int, junk text")
    db.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'x')")
    lake = tmp_path / "lake"
    plan = evolving_plan(plan_of, db, name, "", tmp_path,
                         f'Delta {{ plugin_input = "c", path = "{lake}", primary_keys = ["id"] }}')
    sync(spark, plan, "d1")
    db.sql(f"INSERT INTO {name} VALUES (2, 'b', 2, 'y'); ALTER TABLE {name} RENAME COLUMN name TO title; "
           f"ALTER TABLE {name} DROP COLUMN junk; ALTER TABLE {name} ALTER COLUMN score TYPE bigint; "
           f"ALTER TABLE {name} ALTER COLUMN title TYPE varchar(40); ALTER TABLE {name} ADD COLUMN note text; "
           f"INSERT INTO {name} VALUES (3, 'a title longer than ten', 5000000000, 'n'); "
           f"UPDATE {name} SET score = 10 WHERE id = 1")
    with pytest.raises(PipelineError, match=r"injected fault at sink\.prepared"):
        sync(spark, plan, "d2", faults.from_environment({faults.ENV: "sink.prepared"}))
    sync(spark, plan, "d3")
    lake_df = spark.read.format("delta").load(str(lake))
    assert [(f.name, f.dataType.simpleString()) for f in lake_df.schema.fields] == [
        ("id", "int"), ("title", "string"), ("score", "bigint"), ("note", "string")]
    assert sorted(tuple(r) for r in lake_df.collect()) == [(1, "a", 10, None), (2, "b", 2, None),
                                                           (3, "a title longer than ten", 5000000000, "n")]
    notes = [json.loads(r[0]) for r in spark.sql(f"DESCRIBE HISTORY delta.`{lake}`").select("userMetadata").collect()
             if r[0]]
    applied = [n["change"] for n in notes if n.get("kind") == "schema_change"]
    assert len(applied) == 5 and len(set(applied)) == 5  # once each: the restore applied none again
    assert {f"RENAME COLUMN name TO title of public.{name}", f"DROP COLUMN junk of public.{name}"} <= set(applied)
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{lake}`").collect()[0]["properties"]
    assert detail["delta.columnMapping.mode"] == "name" and len(detail["seatunnel.schema_changes"].split(",")) == 5


def test_schema_changes_follow_into_a_paimon_table_in_one_schema_version_once_across_a_restore(
        plan_of, spark, db, tmp_path):
    """The Paimon sink applies the changes and their record as one new schema version of the table; a
    restore after the driver died past it (before the rows' commit) applies nothing again, and the rows
    written before a rename read back under the new name."""
    from pypaimon import CatalogFactory

    name = table(db, "id int primary key, name varchar(10), score int, junk text")
    db.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'x')")
    wh = tmp_path / "wh"
    plan = evolving_plan(plan_of, db, name, "", tmp_path,
                         f'Paimon {{ plugin_input = "c", warehouse = "{wh}", database = "db", table = "t" }}')
    sync(spark, plan, "p1")
    db.sql(f"INSERT INTO {name} VALUES (2, 'b', 2, 'y'); ALTER TABLE {name} RENAME COLUMN name TO title; "
           f"ALTER TABLE {name} DROP COLUMN junk; ALTER TABLE {name} ALTER COLUMN score TYPE bigint; "
           f"ALTER TABLE {name} ADD COLUMN note text; INSERT INTO {name} VALUES (3, 'c', 5000000000, 'n')")
    with pytest.raises(PipelineError, match=r"injected fault at sink\.prepared"):
        sync(spark, plan, "p2", faults.from_environment({faults.ENV: "sink.prepared"}))
    sync(spark, plan, "p3")
    lake = CatalogFactory.create({"warehouse": str(wh)}).get_table("db.t")
    assert [(f.name, str(f.type)) for f in lake.table_schema.fields][1:] == [
        ("title", "STRING"), ("score", "BIGINT"), ("note", "STRING")]
    builder = lake.new_read_builder()
    found = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    assert sorted(tuple(r.values()) for r in found) == [(1, "a", 1, None), (2, "b", 2, None), (3, "c", 5000000000, "n")]
    assert lake.table_schema.id == 1  # the created schema, then one version for every change: none applied twice
    assert len(lake.table_schema.options["seatunnel.schema_changes"].split(",")) == 4


def _stream_until_equal_then_sigterm(conf, work, equal, after_equal) -> tuple[int, str, dict]:
    """``seatunnel-airflow run`` of a processing_time stream until ``equal()``, then ``after_equal()`` and SIGTERM
    to the command (as an operator stops it); its exit code, output and metrics. Bounded, never a timing figure."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                     os.environ.get("PYTHONPATH")])),
           "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    env.pop(faults.ENV, None)
    metrics = work / "m.json"
    proc = subprocess.Popen([sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf), "--master",
                             "local[2]", "--work-dir", str(work), "--keep-work-dir", "--metrics-file", str(metrics)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while not equal() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert proc.poll() is None and equal(), "the stream did not catch up"
        after_equal()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=180)  # generous: a micro-batch may be running
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, json.loads(metrics.read_text())


def test_a_running_multi_table_stream_stops_on_sigterm_with_exit_0_and_resumes_once(write_conf, plan_of, spark, db,
                                                                                      tmp_path):
    """A processing_time stream of three tables (one capture) into keyless Jdbc targets (plain INSERTs: a
    change applied twice shows twice), SIGTERM to the command while changes arrive: the command forwards it to
    the driver, the query stops after its running micro-batch, Spark stops and the command exits 0 (stopped,
    FINISHED). The next run (here in-process, ``available_now``: the same checkpoint) resumes from it: every
    table equals its source, each row once."""
    names = [table(db, "id int primary key, name text") for _ in range(3)]
    for name in names:
        db.sql(f"INSERT INTO {name} SELECT g, 'r' || g FROM generate_series(1, 20) g")
    schema = f"stop_{uuid.uuid4().hex[:8]}"
    listed = ", ".join(f'"{db.database}.public.{n}"' for n in names)
    text = f"""
        env {{ job.mode = "STREAMING", checkpoint.root = "{tmp_path / 'ck'}", streaming.trigger = "processing_time",
              checkpoint.interval = 1000 }}
        source {{ Postgres-CDC {{ plugin_output = "c", base-url = "{db.url}", username = "{db.user}",
                                 password = "{db.password}", table-names = [{listed}] }} }}
        sink {{ Jdbc {{ plugin_input = "c", url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}",
                       password = "{db.password}", database = "{db.database}", table = "{schema}.${{table_name}}",
                       generate_sink_sql = true, schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }} }}
    """
    conf = write_conf(text)

    def target(n: str) -> list:
        try:
            return db.sql(f"SELECT id, name FROM {schema}.{n} ORDER BY id, name")
        except Exception:  # not created yet
            return []

    def equal() -> bool:
        return all(target(n) == db.sql(f"SELECT id, name FROM {n} ORDER BY id") for n in names)

    def more(start: int) -> None:
        for name in names:
            db.sql(f"INSERT INTO {name} SELECT g, 'n' || g FROM generate_series({start}, {start + 9}) g")

    code, out, metrics = _stream_until_equal_then_sigterm(conf, tmp_path / "w1", equal, lambda: more(100))
    assert code == 0, out[-3000:]
    (pipeline,) = metrics["pipelines"]
    assert pipeline["status"] == "FINISHED" and pipeline["streaming"]["stopped"] == "stop requested"
    more(200)  # arrives while nothing runs
    resumed = sync(spark, plan_of(text.replace('"processing_time"', '"available_now"'), name="again.conf"), "r2")
    assert resumed["streaming"]["checkpoint"] == pipeline["streaming"]["checkpoint"]
    assert equal()
    for name in names:  # each row once: the keyless target shows a micro-batch applied twice
        assert [r[0] for r in target(name)] == [str(i) for i in [*range(1, 21), *range(100, 110), *range(200, 210)]]
