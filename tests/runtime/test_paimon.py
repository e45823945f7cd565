"""Paimon on real Spark with pypaimon (a local warehouse): tables written from the executors and read back
at the plan's parallelism, runs committed once each (the table's rows and its snapshots say so), restores
after faults injected before and after the Paimon commit, two overlapping attempts of one run of which
one commits (fenced by the attempt token and the commit lock), upserts of a change log ending equal to
the expected table, a key's last change winning across a run (a DELETE after other keys' rows), DROP_DATA once per run, save modes that refuse a target, a query's filter and
projection, and the private pypaimon hooks the connector relies on."""

from __future__ import annotations

import json
import threading
from datetime import UTC
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.paimon import CONNECTOR as PAIMON
from airflow_provider_seatunnel.connectors.paimon import compat
from airflow_provider_seatunnel.connectors.paimon.tables import BATCH_PROPERTY, RUN_PROPERTY
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.fencing import Superseded
from airflow_provider_seatunnel.spi.rows import with_kind

PAIMON_2PC = twophase.driver(PAIMON)  # the engine's two phases over the sink's storage verbs

pypaimon = pytest.importorskip("pypaimon", reason="pip install --no-deps -r .ci/paimon.txt (docs/paimon.md)")

FIELDS = "schema = { fields { id = bigint, name = string, grp = string } }"
ROWS = [(1, "a", "x"), (2, "b", "y"), (3, "c", "x")]


def fake(rows: list[tuple], output: str = "f") -> str:
    items = ", ".join(f'{{ kind = {r[3] if len(r) > 3 else "INSERT"}, fields = [{r[0]}, {json.dumps(r[1])}, '
                      f'"{r[2]}"] }}' for r in rows)
    return f'FakeSource {{ plugin_output = "{output}", parallelism = 1, {FIELDS}, rows = [{items}] }}'


def job(source: str, sink: str) -> str:
    return f"env {{ job.mode = BATCH, parallelism = 2 }}\nsource {{ {source} }}\nsink {{ {sink} }}\n"


def paimon_sink(wh: Path, extra: str = "", inputs: str = '"f"') -> str:
    return f'Paimon {{ plugin_input = {inputs}, warehouse = "{wh}", database = "db", table = "t" {extra} }}'


def run(spark, plan_of, text: str, run_id: str, attempt: int = 1, fault: str | None = None) -> list[dict]:
    plan = plan_of(text)
    options = faults.from_environment({faults.ENV: fault}) if fault else {}
    return [run_pipeline(RunContext(spark, plan, p, run_id, attempt, options)) for p in plan.pipelines]


def table(wh: Path):
    return pypaimon.CatalogFactory.create({"warehouse": f"file://{wh}"}).get_table("db.t")


def rows(wh: Path) -> list[tuple]:
    builder = table(wh).new_read_builder()
    found = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(tuple(r.values()) for r in found)


def runs_of(wh: Path) -> list[str]:
    """The run id of each snapshot, oldest first."""
    return [(s.properties or {}).get(RUN_PROPERTY) for s in table(wh).snapshot_manager().list_snapshots()]


def test_a_table_written_and_read_back_at_the_plans_parallelism(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    [metrics] = run(spark, plan_of, job(fake(ROWS), paimon_sink(wh, ', paimon.table.partition-keys = "grp", '
                                        'paimon.table.write-props = { "file.format" = "parquet" }')), "w1")
    assert metrics["write_count"] == 3 and rows(wh) == ROWS
    assert table(wh).partition_keys == ["grp"] and runs_of(wh) == ["w1"]
    [snapshot] = table(wh).snapshot_manager().list_snapshots()
    assert snapshot.properties[BATCH_PROPERTY] == "0" and snapshot.commit_user.startswith("seatunnel-")

    source = (f'Paimon {{ plugin_output = "d", warehouse = "{wh}", database = "db", table = "t", parallelism = 3, '
              'query = "select NAME, id from t where id >= 2" }')
    out = tmp_path / "out"
    plan = plan_of(job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = "json" }}'))
    p = plan.pipelines[0]
    [read] = PAIMON.read(RunContext(spark, plan, p, "r1"), p.sources[0]).values()
    assert read.rdd.getNumPartitions() == 3 and read.columns[:2] == ["name", "id"]
    assert run_pipeline(RunContext(spark, plan, p, "r1"))["write_count"] == 2
    assert sorted((r["id"], r["name"]) for r in spark.read.json(str(out)).collect()) == [(2, "b"), (3, "c")]


def test_instants_decimals_and_booleans_keep_their_values(spark, plan_of, tmp_path):
    """Spark's TIMESTAMP (an instant: what Jdbc and the CDC sources read) is written as Spark hands the rows
    to the tasks, in the session's time zone, and reads back as the same instant; the table is created from
    those rows (deriving its Arrow schema failed for instants before)."""
    from datetime import datetime
    from decimal import Decimal

    wh = tmp_path / "wh"
    sql = ('Sql { plugin_input = "f", plugin_output = "t", query = "select id, name, timestamp_seconds(1704164645 + '
           'id) as at, CAST(id / 4 AS DECIMAL(10,2)) as score, id % 2 = 0 as ok from f" }')
    text = job(fake(ROWS), paimon_sink(wh, ', paimon.table.primary-keys = "id"', inputs='"t"')).replace(
        "sink {", f"transform {{ {sql} }}\nsink {{", 1)
    run(spark, plan_of, text, "ts1")
    assert rows(wh) == [(i, n, datetime(2024, 1, 2, 3, 4, 5 + i, tzinfo=UTC), Decimal(i / 4).quantize(
        Decimal("0.01")), i % 2 == 0) for i, n, _g in ROWS]


def _prepared(spark, plan_of, wh: Path, run_id: str):
    plan = plan_of(job(fake(ROWS), paimon_sink(wh)))
    p = plan.pipelines[0]
    contexts = [RunContext(spark, plan, p, run_id, attempt=n) for n in (1, 2)]
    data = with_kind(spark.createDataFrame(ROWS, "id bigint, name string, grp string"))
    return p.sinks[0], contexts, [PAIMON_2PC.prepare(ctx, p.sinks[0], {"f": data}) for ctx in contexts]


def test_an_overtaken_attempt_cannot_commit_and_two_racing_commits_land_once(spark, plan_of, tmp_path):
    """Attempt 1 prepared, then attempt 2 (a newer token): attempt 1 alone is superseded, though nothing is
    committed yet. Then both commit at once in two threads: exactly one snapshot of the run lands."""
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake(ROWS[:1]), paimon_sink(wh)), "seed")
    sink, contexts, infos = _prepared(spark, plan_of, wh, "o1")
    with pytest.raises(Superseded):
        PAIMON_2PC.commit(contexts[0], sink, infos[0])
    assert runs_of(wh) == ["seed"]

    sink, contexts, infos = _prepared(spark, plan_of, wh, "o2")
    outcome: list[str] = []
    start = threading.Barrier(2)

    def attempt(n: int) -> None:
        start.wait()
        try:
            PAIMON_2PC.commit(contexts[n], sink, infos[n])
            outcome.append("ok")
        except Superseded:
            outcome.append("superseded")

    threads = [threading.Thread(target=attempt, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert runs_of(wh) == ["seed", "o2"] and "ok" in outcome
    assert rows(wh) == sorted(ROWS[:1] + ROWS)


CHANGES_1 = [(1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", "y")]
CHANGES_2 = [(2, "b", "x", "UPDATE_BEFORE"), (2, "B", "x", "UPDATE_AFTER"), (3, "c", "y", "DELETE"),
             (5, "e", "z", "INSERT"), (6, "f", "z", "INSERT"), (6, "f", "z", "DELETE"), (7, "g", "z", "INSERT"),
             (7, "g", "z", "UPDATE_BEFORE"), (7, "G", "z", "UPDATE_AFTER"), (9, "gone", "z", "DELETE")]


def test_upserts_of_a_change_log_end_equal_to_the_expected_table(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    sink = paimon_sink(wh, ', paimon.table.primary-keys = "id"')
    run(spark, plan_of, job(fake(CHANGES_1), sink), "u1")
    [metrics] = run(spark, plan_of, job(fake(CHANGES_2), sink), "u2")
    expected = [(1, "a", "x"), (2, "B", "x"), (4, "d", "y"), (5, "e", "z"), (7, "G", "z")]
    assert rows(wh) == expected and metrics["write_count"] == len(CHANGES_2)
    parallelism = plan_of(job(fake(CHANGES_1), sink)).pipelines[0].sinks[0].parallelism
    assert table(wh).primary_keys == ["id"] and table(wh).options.bucket() == parallelism  # fixed buckets
    run(spark, plan_of, job(fake(CHANGES_2), sink), "u2", attempt=2)
    assert rows(wh) == expected and runs_of(wh) == ["u1", "u2"]


# a key inserted, then (not adjacent) deleted; INSERT, UPDATE_AFTER, DELETE, INSERT again; a DELETE of a key
# never written; an update: in a new table (run 1), then in an existing one and a new partition (run 2)
ORDER_1 = [(1, "a", "x"), (2, "b", "y"), (3, "c", "x"), (4, "d", "y"), (8, "h", "x"), (5, "e", "x"),
           (8, "H", "x", "UPDATE_AFTER"), (3, "c", "x", "DELETE"), (6, "f", "y"), (8, "H", "x", "DELETE"),
           (2, "b", "y", "UPDATE_BEFORE"), (2, "B", "y", "UPDATE_AFTER"), (9, "z", "y", "DELETE"), (8, "i", "x")]
ORDER_2 = [(10, "j", "x"), (12, "k", "z"), (4, "D", "y", "UPDATE_AFTER"), (13, "m", "z"), (10, "j", "x", "DELETE"),
           (1, "a", "x", "DELETE"), (12, "k", "z", "DELETE")]


def test_the_last_change_of_a_key_wins_across_a_run_in_new_and_existing_tables(spark, plan_of, tmp_path):
    """SeaTunnel applies a key's rows in the order the source produced them: a DELETE removes a row the same
    run inserted earlier (rows of other keys in between), in a new table, an existing one and a new
    partition, over two writing tasks. (pypaimon records no DELETE in a file's metadata, so a reader took a
    lone file as merge-free and returned the deleted row: :mod:`.compat` records the count.)"""
    wh = tmp_path / "wh"
    sink = paimon_sink(wh, ', parallelism = 2, paimon.table.primary-keys = "id,grp", '
                           'paimon.table.partition-keys = "grp"')
    run(spark, plan_of, job(fake(ORDER_1), sink), "o1")
    assert rows(wh) == [(1, "a", "x"), (2, "B", "y"), (4, "d", "y"), (5, "e", "x"), (6, "f", "y"), (8, "i", "x")]
    run(spark, plan_of, job(fake(ORDER_2), sink), "o2")
    assert rows(wh) == [(2, "B", "y"), (4, "D", "y"), (5, "e", "x"), (6, "f", "y"), (8, "i", "x"), (13, "m", "z")]
    assert table(wh).options.bucket() == 2 and runs_of(wh) == ["o1", "o2"]


def test_keys_inserted_and_deleted_in_one_write_stay_deleted_on_read(spark, plan_of, tmp_path):
    """One write of a change log makes one data file per bucket holding the ``-D`` rows, which pypaimon records
    as a file without deletes: the source reads it through the merge reader, so deleted keys stay deleted."""
    wh, out = tmp_path / "wh", tmp_path / "out"
    one = job(fake(CHANGES_1 + CHANGES_2), paimon_sink(wh, ', paimon.table.primary-keys = "id", '
                                                          'paimon.table.write-props = { bucket = "1" }'))
    run(spark, plan_of, one, "one")
    source = f'Paimon {{ plugin_output = "d", warehouse = "{wh}", database = "db", table = "t" }}'
    run(spark, plan_of, job(source, f'LocalFile {{ plugin_input = "d", path = "{out}", file_format_type = "json" }}'),
        "r1")
    found = sorted((r["id"], r["name"], r["grp"]) for r in spark.read.json(str(out)).collect())
    assert found == [(1, "a", "x"), (2, "B", "x"), (4, "d", "y"), (5, "e", "z"), (7, "G", "z")]


def test_drop_data_replaces_the_table_once_per_run_across_a_split_pipeline(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    run(spark, plan_of, job(fake([(-1, "old", "g")]), paimon_sink(wh)), "seed")
    a, b = [(10, "a", "x"), (11, "a", "x")], [(20, "b", "y")]
    text = job(fake(a, "a") + "\n" + fake(b, "b"), paimon_sink(wh, ", data_save_mode = DROP_DATA", '["a", "b"]'))
    assert len(plan_of(text).pipelines) == 2
    run(spark, plan_of, text, "d1")
    assert rows(wh) == sorted(a + b) and runs_of(wh) == ["seed", "d1", "d1"]
    run(spark, plan_of, text, "d1", attempt=2)
    assert rows(wh) == sorted(a + b) and runs_of(wh) == ["seed", "d1", "d1"]


def test_save_modes_that_refuse_a_target(spark, plan_of, tmp_path):
    wh = tmp_path / "wh"
    with pytest.raises(RuntimeConfigError, match="ERROR_WHEN_SCHEMA_NOT_EXIST"):
        run(spark, plan_of, job(fake(ROWS), paimon_sink(wh, ", schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST")),
            "e1")
    run(spark, plan_of, job(fake(ROWS), paimon_sink(wh)), "seed")
    with pytest.raises(RuntimeConfigError, match="holds rows"):
        run(spark, plan_of, job(fake(ROWS), paimon_sink(wh, ", data_save_mode = ERROR_WHEN_DATA_EXISTS")), "e2")
    run(spark, plan_of, job(fake([(1, "one", "x")]), paimon_sink(wh, ', schema_save_mode = RECREATE_SCHEMA, '
                                                                   'paimon.table.primary-keys = "id"')), "e3")
    assert rows(wh) == [(1, "one", "x")] and table(wh).primary_keys == ["id"]


def test_the_private_pypaimon_hooks_still_hold(tmp_path):
    """:mod:`.compat`'s three uses of pypaimon's private API: a write builder's commit user, the row kind
    the key-value writer gives the rows of one write call, and the delete count of the file it writes.
    Fails when pypaimon changes any."""
    import pyarrow as pa

    catalog = pypaimon.CatalogFactory.create({"warehouse": f"file://{tmp_path}"})
    catalog.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    catalog.create_table("db.t", pypaimon.Schema.from_pyarrow_schema(schema, primary_keys=["id"],
                                                                      options={"bucket": "1"}), False)
    t = catalog.get_table("db.t")
    for ident, (batch, kind) in enumerate([([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], 0), ([{"id": 1, "v": "a"}], 3)]):
        write = compat.with_commit_user(t.new_stream_write_builder(), "me").new_write()
        with compat.written_as(kind):
            write.write_arrow(pa.Table.from_pylist(batch, schema=schema))
        messages = write.prepare_commit(ident)
        write.close()
        commit = compat.with_commit_user(t.new_stream_write_builder(), "me").new_commit()
        commit.commit(messages, ident)
        commit.close()
    assert [s.commit_user for s in t.snapshot_manager().list_snapshots()] == ["me", "me"]
    builder = t.new_read_builder()
    assert builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist() == [{"id": 2, "v": "b"}]
    # one write of +I and -D rows into a new table: its one file counts its DELETE, so it is read merged
    catalog.create_table("db.u", pypaimon.Schema.from_pyarrow_schema(schema, primary_keys=["id"],
                                                                      options={"bucket": "1"}), False)
    u = catalog.get_table("db.u")
    write = compat.with_commit_user(u.new_stream_write_builder(), "me").new_write()
    for batch, kind in (([{"id": 1, "v": "a"}], 0), ([{"id": 2, "v": "b"}, {"id": 3, "v": "c"}], 3)):
        with compat.written_as(kind):
            write.write_arrow(pa.Table.from_pylist(batch, schema=schema))
    messages = write.prepare_commit(0)
    write.close()
    assert [f.delete_row_count for m in messages for f in m.new_files] == [2]
    commit = u.new_stream_write_builder().new_commit()
    commit.commit(messages, 0)
    commit.close()
    builder = u.new_read_builder()
    assert builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist() == [{"id": 1, "v": "a"}]


def test_primary_key_placeholder_gives_each_table_its_own_key(spark, plan_of, tmp_path):
    """``paimon.table.primary-keys = "${primary_key}"`` over two tables: each is created keyed on its own
    primary key (as the source declares it), so a second run upserts instead of adding rows."""
    wh = tmp_path / "wh"
    source = ('FakeSource { plugin_output = "f", parallelism = 1, tables_configs = ['
              '{ schema = { table = "shop.a", fields { id = bigint, v = string }, '
              'primaryKey { name = "pk_a", columnNames = [id] } }, rows = [{ kind = INSERT, fields = [1, "x"] }] }, '
              '{ schema = { table = "shop.b", fields { k = string, n = bigint }, '
              'primaryKey { name = "pk_b", columnNames = [k] } }, rows = [{ kind = INSERT, fields = ["p", 2] }] }] }')
    sink = (f'Paimon {{ plugin_input = "f", warehouse = "{wh}", database = "${{database_name}}", '
            'table = "${table_name}", paimon.table.primary-keys = "${primary_key}" }')
    for run_id in ("k1", "k2"):
        run(spark, plan_of, job(source, sink), run_id)
    catalog = pypaimon.CatalogFactory.create({"warehouse": f"file://{wh}"})
    for name, key in (("shop.a", ["id"]), ("shop.b", ["k"])):
        found = catalog.get_table(name)
        builder = found.new_read_builder()
        assert found.primary_keys == key
        assert len(builder.new_read().to_arrow(builder.new_scan().plan().splits())) == 1  # upserted, not added


def test_a_paimon_0_7_table_is_a_deterministic_error_naming_the_field(spark, plan_of, tmp_path):
    """SeaTunnel 2.3.8 writes Paimon 0.7 tables (tests/runtime/data/paimon-0.7), whose manifests pypaimon 2.1
    cannot read: the source says so, as a deterministic error, instead of a bare KeyError."""
    import shutil

    wh = tmp_path / "wh"
    shutil.copytree(Path(__file__).parent / "data" / "paimon-0.7", wh)
    source = f'Paimon {{ plugin_output = "d", warehouse = "{wh}", database = "parity", table = "appended" }}'
    plan = plan_of(job(source, f'LocalFile {{ plugin_input = "d", path = "{tmp_path}/out", file_format_type = "json" }}'))
    p = plan.pipelines[0]
    with pytest.raises(RuntimeConfigError, match=r"_VALUE_STATS_COLS.*Paimon 0\.7") as e:
        PAIMON.read(RunContext(spark, plan, p, "r1"), p.sources[0])
    assert e.value.deterministic
