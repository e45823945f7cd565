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
