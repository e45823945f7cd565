"""The CDC family: each CDC source, found by its registry name, runs the ``read`` and ``read_stream`` of
its own package's runtime module (the shared :class:`CdcSource` lives in ``connectors/cdc/``)."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.cdc.source import CdcSource
from airflow_provider_seatunnel.spi.registry import get_connector


@pytest.mark.parametrize(("name", "package"), [("Postgres-CDC", "postgres_cdc"), ("MySQL-CDC", "mysql_cdc")])
def test_a_cdc_source_runs_its_own_packages_runtime(name: str, package: str) -> None:
    connector = get_connector(name.lower())
    assert isinstance(connector, CdcSource)
    runtime = connector._runtime()
    assert runtime.__name__ == f"airflow_provider_seatunnel.connectors.{package}.runtime"
    assert callable(runtime.read) and callable(runtime.read_stream)
