"""A queue message's key as SeaTunnel writes it: the JSON object of the key fields, null fields included,
timestamps in ISO form (``jsoncolumns.json_text`` with the key's columns; Pulsar and Rocketmq use it)."""

from __future__ import annotations

import datetime as dt

from airflow_provider_seatunnel.connectors.jsoncolumns import json_text
from airflow_provider_seatunnel.connectors.rocketmq.formats import key_of


def test_a_key_is_the_json_of_its_fields_with_nulls(spark):
    df = spark.createDataFrame([(1, None, dt.datetime(2024, 5, 1, 10, 0, 1), "x")],
                               "id int, name string, at timestamp_ntz, other string")
    expected = '{"id":1,"name":null,"at":"2024-05-01T10:00:01"}'
    assert df.select(json_text(df, ["id", "name", "at"])).first()[0] == expected
    assert df.select(key_of(df, ["id", "name", "at"])).first()[0] == expected
    assert df.select(key_of(df, [])).first()[0] is None
    assert df.select(json_text(df)).first()[0] == expected[:-1] + ',"other":"x"}'


def test_a_key_field_the_input_lacks_is_a_configuration_error(spark):
    import pytest

    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    df = spark.createDataFrame([(1, "a")], "id int, name string")
    with pytest.raises(RuntimeConfigError, match=r"the key field\(s\) nope are not fields of the input \(its fields: id, "
                                                 r"name\)") as info:
        key_of(df, ["id", "nope"])
    assert info.value.deterministic
