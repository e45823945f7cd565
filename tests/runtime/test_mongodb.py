"""The MongoDB source and sink against a private FerretDB server (tests/ferretdb.py: MongoDB's wire protocol
over SQLite, with a user and password): BSON types read and written as SeaTunnel maps them, match.query,
projection and parallelism, row kinds as insert/update/upsert/delete (a key's in order when the engine
spreads them over more writers), exactly-once restores (a failed
write, a killed commit before and in the middle of its apply), the fencing of an older attempt, and
errors that never show the credentials."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from airflow_provider_seatunnel.connectors.mongodb import CONNECTOR as MONGO
from airflow_provider_seatunnel.connectors.mongodb import commit as commits
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.rows import with_kind

SINK = twophase.driver(MONGO)  # the engine's two phases over the sink's storage verbs
DB = "st"


@pytest.fixture(scope="module")
def ferretdb_server():
    from tests import ferretdb

    with ferretdb.running() as server:
        yield server


@pytest.fixture
def db(ferretdb_server):
    client = ferretdb_server.client()
    for name in client[DB].list_collection_names():
        client[DB].drop_collection(name)
    yield client[DB]
    client.close()


def stages(db) -> list[str]:
    return sorted(n for n in db.list_collection_names() if n.startswith(commits.STAGE_PREFIX))


def block(server, collection: str, extra: str = "") -> str:
    return f'uri = "{server.uri}", database = "{DB}", collection = "{collection}"{", " + extra if extra else ""}'


# ------------------------------------------------------------------------------------------------
# source
# ------------------------------------------------------------------------------------------------

def read_rows(plan_of, spark, text: str):
    """The rows the job's MongoDB source reads, its partitions and the vertex's parallelism."""
    plan = plan_of(text)
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.plugin == "MongoDB" and v.kind == "source")
    df = MONGO.read(RunContext(spark, plan, pipeline, "read"), vertex)["default"]
    rows = [tuple(r)[:-1] for r in df.collect()]  # the row-kind column left out
    return rows, df.rdd.getNumPartitions(), vertex.parallelism


def source_job(server, options: str, parallelism: int = 3) -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ MongoDB {{ plugin_output = "m", {block(server, "people") + "," if server else ""}
                            parallelism = {parallelism}, {options} }} }}
        sink {{ Console {{ plugin_input = "m" }} }}
    """


def test_bson_types_query_projection_and_parallelism(plan_of, spark, ferretdb_server, db):
    from bson import ObjectId
    from bson.int64 import Int64

    oid = ObjectId()
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC)
    db.people.insert_many([
        {"_id": oid, "n": 0, "age": 30, "big": Int64(2 ** 40), "score": 7, "ok": True, "at": when,
         "tags": ["a", "b"], "attrs": {"x": 1}, "addr": {"city": "Oslo", "zip": 123}, "note": 5, "raw": b"\x00\x01"},
        *[{"n": i, "age": 20 + i, "big": i, "score": 1.5, "ok": False, "note": {"k": i}} for i in range(1, 11)],
    ])
    fields = ('_id = string, n = int, big = bigint, score = double, ok = boolean, at = timestamp, '
              'tags = "array<string>", attrs = "map<string, int>", addr = { city = string, zip = int }, '
              'note = string, raw = bytes, missing = string')
    rows, partitions, parallelism = read_rows(plan_of, spark, source_job(
        ferretdb_server, f'match.query = "{{\\"age\\": {{\\"$gte\\": 21}}}}", schema = {{ fields {{ {fields} }} }}, '
                         'fetch.size = 2', parallelism=3))
    assert partitions == parallelism == 3  # the plan's parallelism, whatever the documents
    by_n = {r[1]: r for r in rows}
    assert sorted(by_n) == list(range(0, 11))
    first = by_n[0]
    local = when.astimezone().replace(tzinfo=None)
    assert first[0] == str(oid) and first[2] == 2 ** 40 and first[3] == 7.0 and first[4] is True
    assert first[5] == local and first[6] == ["a", "b"] and first[7] == {"x": 1}
    assert (first[8].city, first[8].zip) == ("Oslo", 123) and first[10] == b"\x00\x01" and first[11] is None
    assert first[9] == '{"_value": {"$numberInt": "5"}}'  # a non-string value as SeaTunnel's extended JSON
    assert json.loads(by_n[3][9]) == {"k": 3} and by_n[3][3] == 1.5 and by_n[3][5] is None
    # flat.sync-string: each document whole as relaxed JSON; a projection; one reader
    rows, partitions, _ = read_rows(plan_of, spark, source_job(
        ferretdb_server, 'flat.sync-string = true, match.projection = "{\\"_id\\": 0, \\"n\\": 1}", '
                         'match.query = "{\\"n\\": {\\"$lt\\": 3}}", schema = { fields { doc = string } }',
        parallelism=1))
    assert partitions == 1 and sorted(json.loads(r[0])["n"] for r in rows) == [0, 1, 2]
    assert all(set(json.loads(r[0])) == {"n"} for r in rows)


def test_a_value_of_another_type_is_a_deterministic_data_error(plan_of, spark, ferretdb_server, db):
    from airflow_provider_seatunnel.spi.errors import DataError, error_from

    db.people.insert_one({"n": "not an int"})
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, source_job(ferretdb_server, "schema = { fields { n = int } }", 1))
    classified = error_from(info.value, "source[0] MongoDB", "p")
    assert isinstance(classified, DataError) and "cannot convert str value 'not an int' to int" in classified.cause


# ------------------------------------------------------------------------------------------------
# sink
# ------------------------------------------------------------------------------------------------

def fake(rows, fields="id = bigint, name = string, age = int", parallelism: int | None = None) -> str:
    listed = ", ".join(f"{{ kind = {k}, fields = {json.dumps(list(v))} }}" for k, v in rows)
    par = f", parallelism = {parallelism}" if parallelism else ""
    return f'FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {fields} }} }}, rows = [{listed}]{par} }}'


def test_row_kinds_types_and_upserts_are_written_once(run_job, ferretdb_server, db):
    from bson import ObjectId
    from bson.int64 import Int64

    db.keyed.insert_one({"id": Int64(2), "name": "old", "age": 1, "kept": True})
    rows = [("INSERT", (1, "ann", 30, "2024-05-06T07:08:09", '{"_value": {"$numberLong": "7"}}')),
            ("INSERT", (2, "bob", 41, "2024-05-06T07:08:09", "plain")),
            ("UPDATE_BEFORE", (2, "bob", 41, "2024-05-06T07:08:09", "plain")),
            ("UPDATE_AFTER", (2, "bobby", 42, "2024-05-06T07:08:09", "plain")),
            ("INSERT", (3, "cy", 25, "2024-05-06T07:08:09", "x")),
            ("DELETE", (3, "cy", 25, "2024-05-06T07:08:09", "x"))]
    fields = "id = bigint, name = string, age = int, at = timestamp, v = string"
    text = f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ {fake(rows, fields)} }}
        sink {{
          MongoDB {{ plugin_input = "fake", {block(ferretdb_server, "keyed", 'upsert-enable = true, primary-key = ["id"]')},
                     buffer-flush.max-rows = 2 }}
          MongoDB {{ plugin_input = "fake", {block(ferretdb_server, "plain", 'primary-key = ["id"]')} }}
        }}
    """
    metrics = run_job(text, run_id="W1")
    assert metrics[0]["status"] == "FINISHED"
    keyed = {d["id"]: d for d in db.keyed.find({}, {"_id": 0})}
    assert sorted(keyed) == [1, 2]  # 3 inserted then deleted; 2 upserted over the old document
    assert keyed[2] == {"id": 2, "name": "bobby", "age": 42, "kept": True, "at": keyed[2]["at"], "v": "plain"}
    assert isinstance(keyed[1]["id"], Int64) and type(keyed[1]["age"]) is int and keyed[1]["v"] == 7
    assert isinstance(keyed[1]["v"], Int64)  # {"_value": ...} extended JSON gives the value its type back
    assert keyed[1]["at"] == dt.datetime(2024, 5, 6, 7, 8, 9).astimezone()
    plain = list(db.plain.find())
    # without upsert: INSERT inserts (an ObjectId _id), UPDATE_AFTER updates by primary-key, DELETE deletes
    assert sorted((d["id"], d["name"]) for d in plain) == [(1, "ann"), (2, "bobby")]
    assert all(isinstance(d["_id"], ObjectId) for d in plain)
    assert stages(db) == [] and db[commits.COMMITS].count_documents({"committed": True}) == 2
    # the same run again (a restore after the commit) writes nothing
    run_job(text, run_id="W1")
    assert db.plain.count_documents({}) == 2 and db.keyed.count_documents({}) == 2 and stages(db) == []


def test_a_keys_changes_apply_in_order_when_the_engine_spreads_them_over_more_writers(run_job, ferretdb_server, db):
    """A source of parallelism 1 into sinks of parallelism 3: the engine shuffles the rows, and each key's
    changes must still apply in the order the source produced them (keys inserted, then deleted after
    other keys' rows, some inserted again), with upserts and without."""
    log = [("INSERT", (k, f"n{k}", k)) for k in range(12)] + [("DELETE", (k, f"n{k}", k)) for k in range(0, 12, 2)]
    log += [("INSERT", (k, f"m{k}", k)) for k in range(0, 12, 4)]
    text = f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ {fake(log)} }}
        sink {{
          MongoDB {{ plugin_input = "fake", {block(ferretdb_server, "keyed", 'upsert-enable = true, primary-key = ["id"]')},
                     parallelism = 3 }}
          MongoDB {{ plugin_input = "fake", {block(ferretdb_server, "plain", 'primary-key = ["id"]')}, parallelism = 3 }}
        }}
    """
    run_job(text, run_id="O1")
    want = sorted([(k, f"n{k}") for k in range(1, 12, 2)] + [(k, f"m{k}") for k in range(0, 12, 4)])
    assert sorted((d["id"], d["name"]) for d in db.keyed.find()) == want
    assert sorted((d["id"], d["name"]) for d in db.plain.find()) == want


def sink_ctx(plan_of, spark, server, run_id: str, attempt: int = 1, fault: str | None = None, extra: str = ""):
    text = f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ {fake([("INSERT", (i, f"n{i}", i)) for i in range(12)])} }}
        sink {{ MongoDB {{ plugin_input = "fake", {block(server, "out", extra)}, parallelism = 3,
                           buffer-flush.max-rows = 5 }} }}
    """
    plan = plan_of(text)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, partitions: int = 3):
    df = spark.createDataFrame([(i, f"n{i}", i) for i in range(n)], "id bigint, name string, age int")
    return {"default": with_kind(df.repartition(partitions))}


def ids(db) -> list[int]:
    return sorted(d["id"] for d in db.out.find({"id": {"$exists": True}}))


def test_failed_and_killed_attempts_restore_exactly_once(plan_of, spark, ferretdb_server, db, monkeypatch):
    db.out.insert_one({"old": True})
    # attempt 1: a write task fails after 2 rows; the engine aborts the sink
    ctx, vertex = sink_ctx(plan_of, spark, ferretdb_server, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert db.out.count_documents({}) == 1 and stages(db) == []
    # attempt 2 stages, then dies in the commit before the publish (a killed driver: no abort)
    ctx2, _ = sink_ctx(plan_of, spark, ferretdb_server, "R1", attempt=2, fault="sink.move@2")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    entry = info2.tables[0]  # the plan's parallelism: one writer per partition
    assert vertex.parallelism == 3 and len(entry.parts) == 3 and entry.rows == 12
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info2)
    assert db.out.count_documents({}) == 1 and len(stages(db)) == 1  # staged, invisible
    # attempt 3 deletes attempt 2's staging, then dies in the middle of its apply (after one bulk write of 5)
    ctx3, _ = sink_ctx(plan_of, spark, ferretdb_server, "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark))
    assert len(stages(db)) == 1
    real_bulk, calls = commits._bulk, []

    def dying(target, models, resume):
        if calls:
            raise SystemExit("killed")  # not an Exception: nothing below it cleans up, as with SIGKILL
        calls.append(len(models))
        real_bulk(target, models, resume)

    monkeypatch.setattr(commits, "_bulk", dying)
    with pytest.raises(SystemExit):
        SINK.commit(ctx3, vertex, info3)
    monkeypatch.setattr(commits, "_bulk", real_bulk)
    assert len(ids(db)) == 5  # part of the claimed commit is visible (no multi-document transaction)
    # an older attempt resuming now is refused (the claim is attempt 3's)
    with pytest.raises(Exception, match="was superseded by token"):
        SINK.commit(ctx2, vertex, info2)
    # attempt 4 (the restore) completes attempt 3's claimed commit from its staging: every row once
    ctx4, _ = sink_ctx(plan_of, spark, ferretdb_server, "R1", attempt=4)
    info4 = SINK.prepare(ctx4, vertex, frame(spark))
    assert info4.tables[0].committed
    SINK.commit(ctx4, vertex, info4)
    assert ids(db) == list(range(12)) and db.out.count_documents({"old": True}) == 1 and stages(db) == []
    # another run id is another commit
    ctx5, _ = sink_ctx(plan_of, spark, ferretdb_server, "R2")
    SINK.commit(ctx5, vertex, SINK.prepare(ctx5, vertex, frame(spark, n=2)))
    assert len(ids(db)) == 14


def test_an_older_attempt_is_fenced_and_a_duplicate_id_commits_nothing(plan_of, spark, ferretdb_server, db):
    ctx1, vertex = sink_ctx(plan_of, spark, ferretdb_server, "F1")
    info1 = SINK.prepare(ctx1, vertex, frame(spark, n=4))
    ctx2, _ = sink_ctx(plan_of, spark, ferretdb_server, "F1", attempt=2)  # a retry while attempt 1 still runs
    info2 = SINK.prepare(ctx2, vertex, frame(spark, n=4))
    with pytest.raises(Exception, match="was superseded by token"):
        SINK.commit(ctx1, vertex, info1)
    SINK.commit(ctx2, vertex, info2)
    assert ids(db) == [0, 1, 2, 3] and stages(db) == []
    # rows with their own _id: one already in the collection fails the commit before anything is written
    db.out.insert_one({"_id": "b"})
    df = spark.createDataFrame([("a", 1), ("b", 2)], "_id string, id bigint")
    ctx3, _ = sink_ctx(plan_of, spark, ferretdb_server, "F2")
    with pytest.raises(Exception, match="duplicate key"):
        SINK.commit(ctx3, vertex, SINK.prepare(ctx3, vertex, {"default": with_kind(df)}))
    assert db.out.count_documents({"_id": "a"}) == 0


def test_a_wrong_password_is_a_configuration_error_that_never_shows_it(ferretdb_server):
    from airflow_provider_seatunnel.connectors.mongodb.client import connected
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    wrong = ferretdb_server.uri.replace(ferretdb_server.password, "wrong-secret-pw")
    with pytest.raises(RuntimeConfigError) as info, connected(wrong, "cannot read mongodb st.people") as client:
        client[DB].people.find_one()
    assert "Authentication failed" in str(info.value) and "check the user and password" in str(info.value)
    assert "wrong-secret-pw" not in str(info.value) and ferretdb_server.password not in str(info.value)
