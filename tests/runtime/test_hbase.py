"""The Hbase source and sink against a private standalone HBase (tests/hbase_server.py, its Thrift gateway):
SeaTunnel's byte encodings, families, row keys, versions and null modes written and read back, the plan's
parallelism on both sides, exactly-once restores and the fencing of an overlapping older attempt, the save
modes, and the gateway from an Airflow connection. Few Spark jobs: each test batches its cases."""

from __future__ import annotations

import json
import struct

import pytest

from airflow_provider_seatunnel.connectors.hbase import CONNECTOR as HBASE
from airflow_provider_seatunnel.connectors.hbase.commit import STAGING
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import Superseded

SINK = twophase.driver(HBASE)  # the engine's two phases over the sink's storage verbs

FIELDS = ("id = bigint, name = string, age = int, score = double, ok = boolean, small = smallint, "
          "tiny = tinyint, ratio = float, tags = \"array<string>\", note = string, ts = bigint")
ROWS = [(1, "ann", 30, 1.5, True, 7, 1, 0.25, ["a", "b"], "x", 1000),
        (2, "bob", 41, -2.0, False, -3, -1, 2.5, [], None, 2000),
        (3, "cy", 25, 0.0, True, 300, 100, -1.0, ["c"], "z", 3000)]


@pytest.fixture(scope="session")
def hbase_server():
    from tests import hbase_server

    with hbase_server.running() as server:
        print(f"HBase started in {server.started_in:.1f}s")
        yield server


def fake(rows=ROWS, fields=FIELDS, parallelism: int | None = None) -> str:
    listed = ", ".join(f"{{ kind = INSERT, fields = {json.dumps(list(v))} }}" for v in rows)
    par = f", parallelism = {parallelism}" if parallelism else ""
    return f'FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {fields} }} }}, rows = [{listed}]{par} }}'


def sink_job(server, *sinks: str, source: str | None = None) -> str:
    blocks = "\n".join(f'Hbase {{ plugin_input = "fake", {server.options()}, {s} }}' for s in sinks)
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ {source or fake()} }}
        sink {{ {blocks} }}
    """


def staged(server) -> int:
    return len(server.rows(STAGING)) if STAGING.encode() in server.connection().tables() else 0


def test_sink_writes_seatunnel_encodings_and_the_source_reads_them_back(run_job, plan_of, spark, hbase_server):
    hbase_server.drop("t_enc", "t_all")
    metrics = run_job(sink_job(
        hbase_server,
        # two named families: the other fields go to the family "value"; the cells stamped by the writer
        'table = "t_enc", rowkey_column = ["id"], family_name { name = "info1", age = "info2" }, parallelism = 2',
        # every field in one family, a two-field key, cells stamped by ts, nulls written empty
        'table = "default:t_all", rowkey_column = ["id", "name"], rowkey_delimiter = "_", '
        'family_name { all_columns = "cf" }, version_column = "ts", null_mode = "empty", wal_write = true',
    ))
    assert metrics[0]["status"] == "FINISHED"
    enc = hbase_server.rows("t_enc")
    assert sorted(enc) == [b"1", b"2", b"3"]
    ann = enc[b"1"]
    assert ann[b"info1:name"] == b"ann" and ann[b"info2:age"] == struct.pack(">i", 30)
    assert ann[b"value:score"] == struct.pack(">d", 1.5) and ann[b"value:ok"] == b"\xff"
    assert ann[b"value:small"] == struct.pack(">h", 7) and ann[b"value:tiny"] == b"\x01"
    assert ann[b"value:ratio"] == struct.pack(">f", 0.25) and ann[b"value:tags"] == b"a,b"
    assert ann[b"value:ts"] == struct.pack(">q", 1000) and b"value:id" not in ann
    assert b"value:note" not in enc[b"2"] and enc[b"2"][b"value:ok"] == b"\x00"  # null_mode skip
    everything = hbase_server.rows("t_all")
    assert sorted(everything) == [b"1_ann", b"2_bob", b"3_cy"]
    assert everything[b"2_bob"][b"cf:note"] == b"" and b"cf:ts" not in everything[b"2_bob"]  # null_mode empty
    assert hbase_server.cells("t_all", b"3_cy", b"cf:age") == [(struct.pack(">i", 25), 3000)]
    assert staged(hbase_server) == 0

    # the source: rowkey and family:qualifier cells into the declared types, at the plan's parallelism
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ Hbase {{ plugin_output = "h", {hbase_server.options()}, table = "t_enc", parallelism = 3,
            caching = 2, schema = {{ columns = [
              {{ name = "rowkey", type = string }}, {{ name = "info1:name", type = string }},
              {{ name = "info2:age", type = int }}, {{ name = "value:score", type = double }},
              {{ name = "value:ok", type = boolean }}, {{ name = "value:small", type = smallint }},
              {{ name = "value:tiny", type = tinyint }}, {{ name = "value:ratio", type = float }},
              {{ name = "value:note", type = string }}, {{ name = "value:ts", type = bigint }},
              {{ name = "value:missing", type = string }} ] }} }} }}
        sink {{ Console {{ plugin_input = "h" }} }}
    """)
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.plugin == "Hbase")
    df = HBASE.read(RunContext(spark, plan, pipeline, "read"), vertex)["default"]
    assert df.rdd.getNumPartitions() == vertex.parallelism == 3
    rows = sorted(tuple(r)[:-1] for r in df.collect())
    assert rows == [("1", "ann", 30, 1.5, True, 7, 1, 0.25, "x", 1000, None),
                    ("2", "bob", 41, -2.0, False, -3, -1, 2.5, None, 2000, None),
                    ("3", "cy", 25, 0.0, True, 300, 100, -1.0, "z", 3000, None)]


def sink_ctx(plan_of, spark, server, run_id: str, attempt: int = 1, fault: str | None = None,
             options: str = 'table = "t_restore", rowkey_column = ["id"], family_name { all_columns = "cf" }'):
    plan = plan_of(sink_job(server, f"{options}, parallelism = 3"))
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, partitions: int = 3, offset: int = 0):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i + offset, f"n{i}", i) for i in range(n)], "id bigint, name string, age int")
    return {"default": with_kind(df.repartition(partitions))}


def test_a_failed_attempt_leaves_nothing_and_the_restore_writes_once(plan_of, spark, hbase_server):
    hbase_server.drop("t_restore")
    conn = hbase_server.connection()
    conn.create_table("t_restore", {"cf": {"max_versions": 10}})
    conn.table("t_restore").put(b"old", {b"cf:name": b"kept"})
    conn.close()
    # attempt 1: a write task fails after 2 rows; the engine aborts the sink
    ctx, vertex = sink_ctx(plan_of, spark, hbase_server, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert sorted(hbase_server.rows("t_restore")) == [b"old"] and staged(hbase_server) == 0
    # attempt 2 stages, then dies in the commit before its claim (no abort: a killed driver)
    ctx2, _ = sink_ctx(plan_of, spark, hbase_server, "R1", attempt=2, fault="sink.move@2")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info2)
    assert sorted(hbase_server.rows("t_restore")) == [b"old"] and staged(hbase_server) == 12  # staged, invisible
    # attempt 3 (the restore) deletes attempt 2's staging; it dies after its claim, in the copy
    ctx3, _ = sink_ctx(plan_of, spark, hbase_server, "R1", attempt=3, fault="sink.move@3+1")
    info3 = SINK.prepare(ctx3, vertex, frame(spark, partitions=vertex.parallelism))
    entry = info3.tables[0]  # the plan's parallelism: one writer, one staged part, per partition
    assert vertex.parallelism == 3 and len(entry.parts) == 3 and entry.rows == 12
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx3, vertex, info3)
    # attempt 4 finds the claim and finishes the copy: the run counts as committed, every row once
    ctx4, _ = sink_ctx(plan_of, spark, hbase_server, "R1", attempt=4)
    info4 = SINK.prepare(ctx4, vertex, frame(spark))
    assert info4.tables[0].committed
    SINK.commit(ctx4, vertex, info4)
    rows = hbase_server.rows("t_restore")
    assert sorted(rows) == sorted([b"old", *(str(i).encode() for i in range(12))])
    assert all(len(hbase_server.cells("t_restore", str(i).encode(), b"cf:name")) == 1 for i in range(12))
    assert staged(hbase_server) == 0
    # the killed attempt, resumed, is overtaken and writes nothing more
    with pytest.raises(Superseded):
        SINK.commit(ctx3, vertex, info3)
    assert all(len(hbase_server.cells("t_restore", str(i).encode(), b"cf:age")) == 1 for i in range(12))


def test_an_overtaken_attempt_is_superseded_and_writes_nothing(plan_of, spark, hbase_server):
    hbase_server.drop("t_restore")
    old, vertex = sink_ctx(plan_of, spark, hbase_server, "R9", attempt=1)
    info_old = SINK.prepare(old, vertex, frame(spark, n=4, offset=100))
    new, _ = sink_ctx(plan_of, spark, hbase_server, "R9", attempt=2)
    info_new = SINK.prepare(new, vertex, frame(spark, n=3, offset=200))
    with pytest.raises(Superseded):
        SINK.commit(old, vertex, info_old)
    SINK.commit(new, vertex, info_new)
    assert sorted(hbase_server.rows("t_restore")) == [b"200", b"201", b"202"]
    assert staged(hbase_server) == 0


def test_save_modes_and_a_table_per_input_table(run_job, hbase_server):
    hbase_server.drop("t_modes", "t_multi")
    conn = hbase_server.connection()
    conn.create_table("t_modes", {"cf": {}})
    conn.table("t_modes").put(b"old", {b"cf:name": b"gone"})
    conn.close()
    block = 'table = "t_modes", rowkey_column = ["id"], family_name { all_columns = "cf" }'
    with pytest.raises(Exception, match="holds rows"):
        run_job(sink_job(hbase_server, f"{block}, data_save_mode = ERROR_WHEN_DATA_EXISTS"), run_id="m1")
    with pytest.raises(Exception, match="does not exist"):
        run_job(sink_job(hbase_server, 'table = "t_none", rowkey_column = ["id"], family_name { all_columns = cf }, '
                                       'schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST'), run_id="m2")
    # two tables into ${table_name}: DROP_DATA empties t_modes when it publishes, t_multi is created
    tables = ", ".join(
        f'{{ schema = {{ table = "{t}", fields {{ id = bigint, name = string }} }}, rows = [{rows}] }}'
        for t, rows in (("t_modes", '{ kind = INSERT, fields = [1, "a"] }, { kind = INSERT, fields = [2, "b"] }'),
                        ("t_multi", '{ kind = INSERT, fields = [7, "c"] }')))
    source = f'FakeSource {{ plugin_output = "fake", tables_configs = [{tables}] }}'
    run_job(sink_job(hbase_server, 'table = "${table_name}", rowkey_column = ["id"], family_name { all_columns = cf }, '
                                   'data_save_mode = DROP_DATA', source=source), run_id="m3")
    assert sorted(hbase_server.rows("t_modes")) == [b"1", b"2"]
    assert hbase_server.rows("t_multi") == {b"7": {b"cf:name": b"c"}}


def test_hbase_conn_id_gives_the_gateway(plan_of, hbase_server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    monkeypatch.setenv("AIRFLOW_CONN_HB", json.dumps({"conn_type": "hbase", "host": "10.0.0.9", "port": 9091}))
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { FakeSource { plugin_output = "fake", schema = { fields { id = bigint } } } }
        sink { Hbase { plugin_input = "fake", hbase_conn_id = "hb", zookeeper_quorum = "zk1:2181", table = "t",
                       rowkey_column = ["id"], family_name { all_columns = cf } } }
    """)
    sink = with_connections(plan).pipelines[0].vertices[-1]
    options = HBASE.option_spec.parse(sink.config, "sink")
    assert options["thrift_gateway"] == "10.0.0.9:9091"
    from airflow_provider_seatunnel.connectors.hbase.options import parse

    assert parse(sink.config, "sink").gateway.hosts == ("10.0.0.9",)


def test_a_row_keys_last_change_wins_across_a_shuffle(run_job, hbase_server):
    """A row key's puts dealt over more writers than the source go through one writer in arrival order:
    each row holds its last change."""
    from tests import change_rows

    hbase_server.drop("t_keyed")
    run_job(sink_job(hbase_server, 'table = "t_keyed", rowkey_column = ["id"], family_name { all_columns = "cf" }, '
                                   'parallelism = 3', source=change_rows.fake_source("fake")))
    rows = hbase_server.rows("t_keyed")
    assert {k: v[b"cf:name"].decode() for k, v in rows.items()} == \
        {str(k).encode(): change_rows.LAST for k in range(change_rows.KEYS)}
