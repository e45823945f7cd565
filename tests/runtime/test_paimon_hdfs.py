"""Paimon on a real HDFS (tests/hdfs_server.py: a NameNode and a DataNode, one per module) and Paimon's Hive
catalog against the Hive metastore tests/hive_metastore.py starts: an append table and an upsert table
written on ``hdfs://`` (the warehouse named through SeaTunnel's HA-style Hadoop settings) and read back, a
fenced overlapping attempt and a restore after a fault past the Paimon commit, the HDFS commit lock (a
dead holder's lock broken once, a live holder's waited for), and a Hive-catalog table created, registered
as Paimon's Hive catalog registers it, read back through the metastore's location, and recreated."""

from __future__ import annotations

import os
import socket

import pytest

from airflow_provider_seatunnel.connectors.files.fencing import CommitLockTimeout
from airflow_provider_seatunnel.connectors.paimon import CONNECTOR as PAIMON
from airflow_provider_seatunnel.connectors.paimon import fences, hive
from airflow_provider_seatunnel.connectors.paimon.tables import RUN_PROPERTY
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.fencing import Superseded
from airflow_provider_seatunnel.spi.rows import with_kind
from tests import hdfs_server, hive_metastore

pypaimon = pytest.importorskip("pypaimon", reason="pip install --no-deps -r .ci/paimon.txt (docs/paimon.md)")

PAIMON_2PC = twophase.driver(PAIMON)
FIELDS = "schema = { fields { id = bigint, name = string, grp = string } }"
ROWS = [(1, "a", "x"), (2, "b", "y"), (3, "c", "x")]
CHANGES = [(2, "B", "y", "UPDATE_AFTER"), (3, "c", "x", "DELETE"), (4, "d", "z", "INSERT")]


@pytest.fixture(scope="module")
def hdfs():
    with hdfs_server.running() as server:
        yield server


@pytest.fixture(scope="module")
def metastore():
    with hive_metastore.running() as server:
        yield server


def fake(rows: list[tuple]) -> str:
    items = ", ".join(f'{{ kind = {r[3] if len(r) > 3 else "INSERT"}, fields = [{r[0]}, "{r[1]}", "{r[2]}"] }}'
                      for r in rows)
    return f'FakeSource {{ plugin_output = "f", parallelism = 1, {FIELDS}, rows = [{items}] }}'


def hadoop(server, ha: bool = True) -> str:
    """SeaTunnel's HA-style settings (a name service of one NameNode), the warehouse written hdfs:///; or the
    NameNode's address itself (what the metastore, which has no settings of that name service, can reach)."""
    if not ha:
        return f'paimon.hadoop.conf = {{ fs.defaultFS = "{server.uri}" }}'
    return ('paimon.hadoop.conf = { fs.defaultFS = "hdfs://ns1", dfs.nameservices = "ns1", '
            f'dfs.ha.namenodes.ns1 = "nn1", dfs.namenode.rpc-address.ns1.nn1 = "127.0.0.1:{server.port}", '
            'dfs.client.failover.proxy.provider.ns1 = '
            '"org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider" }')


def block(server, warehouse: str, table: str, extra: str = "", ha: bool = True) -> str:
    return f'warehouse = "{warehouse}", database = "db", table = "{table}", {hadoop(server, ha)} {extra}'


def job(source: str, *sink_blocks: str) -> str:
    sinks = " ".join(f'Paimon {{ plugin_input = "f", {b} }}' for b in sink_blocks)
    return f"env {{ job.mode = BATCH, parallelism = 2 }}\nsource {{ {source} }}\nsink {{ {sinks} }}\n"


def run(spark, plan_of, text: str, run_id: str, attempt: int = 1, fault: str | None = None) -> list[dict]:
    plan = plan_of(text)
    options = faults.from_environment({faults.ENV: fault}) if fault else {}
    return [run_pipeline(RunContext(spark, plan, p, run_id, attempt, options)) for p in plan.pipelines]


def read(spark, plan_of, source_block: str) -> list[tuple]:
    text = (f'env {{ job.mode = BATCH }}\nsource {{ Paimon {{ plugin_output = "d", {source_block} }} }}\n'
            'sink { Console { plugin_input = "d" } }\n')
    plan = plan_of(text)
    p = plan.pipelines[0]
    [df] = PAIMON.read(RunContext(spark, plan, p, "read"), p.sources[0]).values()
    return sorted(tuple(r)[:3] for r in df.drop("_seatunnel_row_kind").collect())


def table_of(server, warehouse: str, name: str):
    return pypaimon.CatalogFactory.create({"warehouse": f"{server.uri}{warehouse}"}).get_table(f"db.{name}")


def rows_of(table) -> list[tuple]:
    builder = table.new_read_builder()
    return sorted(tuple(r.values()) for r in builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist())


def runs_of(table) -> list[str]:
    return [(s.properties or {}).get(RUN_PROPERTY) for s in table.snapshot_manager().list_snapshots()]


def test_append_and_upsert_tables_on_hdfs_round_trip(spark, plan_of, hdfs):
    keyed = block(hdfs, "hdfs:///wh", "k", ', paimon.table.primary-keys = "id"')
    run(spark, plan_of, job(fake(ROWS), block(hdfs, "hdfs:///wh", "t"), keyed), "k1")  # two sinks, one job
    run(spark, plan_of, job(fake(CHANGES), keyed), "k2")
    assert read(spark, plan_of, block(hdfs, "hdfs:///wh", "t", ', query = "select * from t where id >= 2"')) \
        == ROWS[1:]
    assert rows_of(table_of(hdfs, "/wh", "k")) == [(1, "a", "x"), (2, "B", "y"), (4, "d", "z")]
    client = hdfs.client()
    names = {s.path.rsplit("/", 1)[-1] for s in client.list_status("/wh/db.db/t")}
    assert {"snapshot", "schema", "manifest"} <= names  # the table is on HDFS...
    assert [s.path.rsplit("/", 1)[-1] for s in client.list_status("/wh/.seatunnel-paimon/db.db/t/.seatunnel-commits")]
    assert not os.path.exists("/wh")  # ...and nothing on the local disk
    assert runs_of(table_of(hdfs, "/wh", "k")) == ["k1", "k2"] and table_of(hdfs, "/wh", "k").primary_keys == ["id"]


def test_an_overtaken_attempt_is_fenced_and_a_restore_commits_once_on_hdfs(spark, plan_of, hdfs):
    sink = block(hdfs, "hdfs:///fw", "t")
    plan = plan_of(job(fake(ROWS), sink))
    p = plan.pipelines[0]
    contexts = [RunContext(spark, plan, p, "o1", attempt=n) for n in (1, 2)]
    data = with_kind(spark.createDataFrame(ROWS, "id bigint, name string, grp string"))
    infos = [PAIMON_2PC.prepare(ctx, p.sinks[0], {"f": data}) for ctx in contexts]
    with pytest.raises(Superseded):
        PAIMON_2PC.commit(contexts[0], p.sinks[0], infos[0])
    PAIMON_2PC.commit(contexts[1], p.sinks[0], infos[1])
    assert runs_of(table_of(hdfs, "/fw", "t")) == ["o1"]

    dying = RunContext(spark, plan, p, "r1", 1, faults.from_environment({faults.ENV: "sink.commit"}))
    info = PAIMON_2PC.prepare(dying, p.sinks[0], {"f": data})
    with pytest.raises(faults.InjectedFault, match=r"sink\.commit"):  # killed past its snapshot
        PAIMON_2PC.commit(dying, p.sinks[0], info)
    restore = RunContext(spark, plan, p, "r1", attempt=2)
    PAIMON_2PC.commit(restore, p.sinks[0], PAIMON_2PC.prepare(restore, p.sinks[0], {"f": data}))
    assert runs_of(table_of(hdfs, "/fw", "t")) == ["o1", "r1"]  # the restore found the run's snapshot
    assert rows_of(table_of(hdfs, "/fw", "t")) == sorted(ROWS + ROWS)
    assert not any(s.path.endswith("/.lock") for s in hdfs.client().list_status("/fw/.seatunnel-paimon/db.db/t"))


def test_the_hdfs_commit_lock_breaks_a_dead_holders_lock_once_and_waits_for_a_live_one(hdfs):
    import json

    from hdfs_native import WriteOptions

    root = f"{hdfs.uri}/locks/db.db/t"
    fence = fences.fence_of(root, {})
    client = hdfs.client()
    dead = {"id": "dead1", "host": socket.gethostname(), "pid": 2**22 + 7, "until": 9e12}
    with client.create("/locks/db.db/t/.lock", WriteOptions(create_parent=True)) as f:
        f.write(json.dumps(dead).encode())
    with fence.lock("test") as still_held:
        still_held()
        assert fence.allocate("u-0", 1) == 1 and fence.allocate("u-0", 2) == 2 and fence.newest("u-0") == 2
    assert client.get_file_info("/locks/db.db/t/.lock.broken-dead1")  # claimed once, by name
    with fence.lock("test") as still_held:  # a holder whose lock was broken meanwhile may not commit
        client.delete("/locks/db.db/t/.lock", False)
        with pytest.raises(fences.LockLost, match="lost"):
            still_held()
    live = {"id": "live1", "host": "another-host", "pid": 1, "until": 9e12}
    with client.create("/locks/db.db/t/.lock", WriteOptions(create_parent=True)) as f:
        f.write(json.dumps(live).encode())
    with pytest.raises(CommitLockTimeout, match="not free"), fence.lock("test", timeout=0.5):
        pass
    client.delete("/locks/db.db/t/.lock", False)


def test_a_hive_catalog_table_is_registered_read_back_and_recreated(spark, plan_of, hdfs, metastore):
    """On an HDFS warehouse and on a local one: the metastore records what Paimon's Hive catalog records."""
    local = metastore.root / "paimon"
    catalog = f'catalog_type = "hive", catalog_uri = "{metastore.uri}"'
    on_hdfs = block(hdfs, "hdfs:///hw", "h", f", {catalog}", ha=False)
    on_disk = f'warehouse = "{local}", database = "db", table = "hl", {catalog}'
    run(spark, plan_of, job(fake(ROWS), on_hdfs, on_disk), "hv1")
    for name, directory in (("h", f"{hdfs.uri}/hw/db.db/h"), ("hl", f"file:{local}/db.db/hl")):
        with hive.client(metastore.uri) as hms:
            recorded = hms.get_table("db", name)
        assert recorded.sd.location.rstrip("/") == directory
        assert (recorded.tableType, recorded.parameters["table_type"], recorded.parameters["storage_handler"]) == \
            ("MANAGED_TABLE", "PAIMON", hive.STORAGE_HANDLER)
        assert (recorded.sd.inputFormat, recorded.sd.outputFormat, recorded.sd.serdeInfo.serializationLib) == \
            (hive.INPUT_FORMAT, hive.OUTPUT_FORMAT, hive.SERDE)
        assert [(c.name, c.type) for c in recorded.sd.cols] == [("id", "bigint"), ("name", "string"),
                                                                  ("grp", "string")]
    assert read(spark, plan_of, on_hdfs) == ROWS
    run(spark, plan_of, job(fake(ROWS[:1]), on_hdfs + ', schema_save_mode = "RECREATE_SCHEMA"'), "hv2")
    assert rows_of(table_of(hdfs, "/hw", "h")) == ROWS[:1]
    # the metastore, not the warehouse option, says where a registered table is: read through another warehouse
    elsewhere = on_disk.replace(str(local), "/nonexistent")
    assert read(spark, plan_of, elsewhere) == ROWS
    catalog = pypaimon.CatalogFactory.create({"warehouse": f"file://{local}"})  # a schema change, then the record
    catalog.alter_table("db.hl", [pypaimon.schema.schema_change.SchemaChange.add_column(
        "note", pypaimon.schema.data_types.AtomicType("STRING"))])
    hive.update_columns(metastore.uri, "db", "hl", catalog.get_table("db.hl"))
    with hive.client(metastore.uri) as hms:
        assert [c.name for c in hms.get_table("db", "hl").sd.cols] == ["id", "name", "grp", "note"]
    with pytest.raises(RuntimeConfigError, match="does not exist in the Hive metastore"):
        read(spark, plan_of, on_disk.replace('table = "hl"', 'table = "unregistered"'))


def test_hdfsfile_writes_and_reads_back_on_the_same_hdfs(spark, plan_of, hdfs, monkeypatch):
    """HdfsFile (Spark's Hadoop client) on a real NameNode: its fenced commit's rename refusing an existing
    target is HDFS's own here, not the local file system's."""
    monkeypatch.setenv("SEATUNNEL_JOURNAL_KEY", "hdfs-tests-journal-key")  # as tests/runtime/test_hdfsfile.py
    files = f'fs.defaultFS = "{hdfs.uri}", path = "/files/out", file_format_type = "json"'
    text = (f"env {{ job.mode = BATCH, parallelism = 2 }}\nsource {{ {fake(ROWS)} }}\n"
            f'sink {{ HdfsFile {{ plugin_input = "f", {files} }} }}\n')
    run(spark, plan_of, text, "f1")
    plan = plan_of(f'source {{ HdfsFile {{ plugin_output = "r", {files}, {FIELDS} }} }}\nsink {{ Console {{ }} }}')
    p = plan.pipelines[0]
    [df] = get_connector("HdfsFile").read(RunContext(spark, plan, p, "reader"), p.sources[0]).values()
    assert sorted((r.id, r.name, r.grp) for r in df.collect()) == ROWS
    assert any(s.path.endswith(".json") for s in hdfs.client().list_status("/files/out"))
