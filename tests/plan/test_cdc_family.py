"""The CDC family: each CDC source, found by its registry name, runs the ``read`` and ``read_stream`` of
its own package's runtime module (the shared :class:`CdcSource` lives in ``connectors/cdc/``), and streams
through the family's data source, in which it names only its format, spec option and reader."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.cdc.source import CdcSource
from airflow_provider_seatunnel.connectors.cdc.stream import ChangeStreamSource
from airflow_provider_seatunnel.connectors.mysql_cdc import datasource as mysql_source
from airflow_provider_seatunnel.connectors.postgres_cdc import datasource as postgres_source
from airflow_provider_seatunnel.spi.registry import get_connector


@pytest.mark.parametrize(("name", "package"), [("Postgres-CDC", "postgres_cdc"), ("MySQL-CDC", "mysql_cdc")])
def test_a_cdc_source_runs_its_own_packages_runtime(name: str, package: str) -> None:
    connector = get_connector(name.lower())
    assert isinstance(connector, CdcSource)
    runtime = connector._runtime()
    assert runtime.__name__ == f"airflow_provider_seatunnel.connectors.{package}.runtime"
    assert callable(runtime.read) and callable(runtime.read_stream)


@pytest.mark.parametrize(("module", "cls"), [(mysql_source, mysql_source.MySqlCdcDataSource),
                                             (postgres_source, postgres_source.PostgresCdcDataSource)])
def test_a_cdc_data_source_streams_its_spec_through_its_reader(module, cls) -> None:
    assert issubclass(cls, ChangeStreamSource)
    assert cls.name() == module.NAME
    spec = {"table": "t", "columns": ["a"]}
    reader = cls(options={module.SPEC_OPTION: json.dumps(spec)}).streamReader(None)
    assert type(reader) is module._StreamReader
    assert reader.spec == spec


def test_one_stream_carries_every_tables_snapshot_in_its_layout(tmp_path) -> None:
    """A source's one stream reads every table's snapshot files (at most a few partitions for many tables), each
    row as its table id, its values as text in the stream's column order (a column renamed since the snapshot read
    from its old name, one added since null) and its row kind."""
    from airflow_provider_seatunnel.connectors.cdc.stream import (
        SNAPSHOT_PARTS,
        SnapshotPart,
        SnapshotThenChanges,
        write_snapshot,
    )

    tables = {}
    for i in range(12):
        directory = tmp_path / f"t{i}" / "snapshot"
        rows = [(n, f"r{n}", None if n == 2 else n * 1.5) for n in range(i + 1)]
        assert write_snapshot(iter([rows[:3], rows[3:]]), ["id", "name", "score"], str(directory)) == i + 1
        tables[f"db.t{i}"] = {"table": f"t{i}", "columns": ["id", "title", "score", "added"],
                              "snapshot": str(directory), "schema_changes": True,
                              "shapes": [{"names": ["id", "name", "score"], "types": ["", "", ""],
                                          "to": ["id", "title", "score"]}]}

    class Reader(SnapshotThenChanges):
        def initialOffset(self) -> dict:
            return {"n": -1}

        def snapshot_offset(self) -> dict:
            return {"n": 0}

        def order(self, offset) -> int:
            return int(offset["n"])

    reader = Reader({"tables": tables})
    parts = reader.partitions({"n": -1}, {"n": 0})
    assert len(parts) == SNAPSHOT_PARTS and all(isinstance(p, SnapshotPart) for p in parts)
    seen = [row for part in parts for batch in reader.read(part) for row in batch.to_pylist()]
    assert len(seen) == sum(range(1, 13))
    assert {r["__st_table"] for r in seen} == set(tables) and {r["__st_kind"] for r in seen} == {0}
    t3 = sorted((r["__st_values"] for r in seen if r["__st_table"] == "db.t3"), key=lambda v: int(v[0]))
    assert t3 == [["0", "r0", "0.0", None], ["1", "r1", "1.5", None], ["2", "r2", None, None],
                  ["3", "r3", "4.5", None]]
