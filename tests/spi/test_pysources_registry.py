"""A Python data source is registered once per live session object, and again with a new session even when the
new one reuses a collected session's id() (the registry must not outlive its session)."""

from __future__ import annotations

import gc

from airflow_provider_seatunnel.spi import pysources
from airflow_provider_seatunnel.spi.pysources import register_once


class _Registry:
    def __init__(self) -> None:
        self.registered: list[type] = []

    def register(self, source: type) -> None:
        self.registered.append(source)


class _Context:
    applicationId = "local-1"  # one application throughout, as in a test worker


class _Session:
    """Stands for a SparkSession: its own data-source registry."""

    def __init__(self) -> None:
        self.dataSource = _Registry()
        self.sparkContext = _Context()


class _Source:
    pass


def test_registered_once_per_session_and_forgotten_with_it():
    first = _Session()
    register_once(first, _Source)
    register_once(first, _Source)
    assert first.dataSource.registered == [_Source]
    kept = len(pysources._REGISTERED)
    del first
    gc.collect()
    # nothing outlives the session: a later session at its id() (CPython reuses a collected object's memory)
    # finds no record and registers
    assert len(pysources._REGISTERED) == kept - 1
    second = _Session()
    register_once(second, _Source)
    assert second.dataSource.registered == [_Source]
