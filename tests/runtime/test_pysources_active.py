"""A read through a Python data source finds it although another session was made the thread's active one
since it was registered (Spark looks the source up in the active session's registry when it plans the read)."""

from __future__ import annotations

import pytest
from pyspark.sql.datasource import DataSource, DataSourceReader

from airflow_provider_seatunnel.spi.pysources import register_once

pytestmark = pytest.mark.integration


class _Reader(DataSourceReader):
    def read(self, partition):
        yield (1,)
        yield (2,)


class _TwoRows(DataSource):
    @classmethod
    def name(cls) -> str:
        return "seatunnel_test_two_rows"

    def schema(self) -> str:
        return "x int"

    def reader(self, schema):
        return _Reader()


def test_a_read_finds_its_source_after_another_session_became_active(spark):
    other = spark.newSession()  # shares the SparkContext, not the registry (as a session for Hive support)
    register_once(spark, _TwoRows)
    other.createDataFrame([(0,)], "a int")  # PySpark makes `other` the thread's active session here
    register_once(spark, _TwoRows)  # as each read of a run does before it loads (registered already)
    df = spark.read.format(_TwoRows.name()).schema("x int").load()  # given, as a connector gives its schema
    # asking for the partitions plans the read outside an action (no session is made active for it): the
    # lookup happens in the thread's active session, which must be the one the source was registered with
    assert df.rdd.getNumPartitions() == 1
    assert sorted(r.x for r in df.collect()) == [1, 2]
