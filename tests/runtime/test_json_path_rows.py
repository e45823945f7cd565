"""JsonPath over ROW, MAP and ARRAY fields reads them as SeaTunnel serialises them (Jackson's JSON).

A row is the JSON array of its field values; a map a JSON object; dates and timestamps inside are
java.time's number arrays (``[2024, 1, 2]``, ``[2024, 1, 2, 10, 30]``, seconds and nanoseconds
only when not zero), not Spark's text of them.
"""

from __future__ import annotations

import datetime as dt

from airflow_provider_seatunnel.plan.model import PlanVertex
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector


def run_json_path(spark, df, columns):
    vertex = PlanVertex(id="transform[0]", ref="transform[0]", kind="transform", plugin="JsonPath", parallelism=1,
                        inputs=("in",), config={"columns": columns})
    return get_connector("JsonPath").apply(RunContext(spark, None, None, "test"), vertex, {"in": {"t": df}})["t"]


def test_rows_maps_and_arrays_are_read_as_seatunnel_json(spark):
    df = spark.createDataFrame(
        [((7, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 10, 30), {"k": 1.5}, None),
          {"d": dt.date(2020, 2, 29)}, [dt.datetime(2024, 1, 2, 10, 30, 5, 123000)], 0),
         (None, None, None, 0)],
        "r struct<n:int, d:date, ts:timestamp_ntz, m:map<string,double>, z:string>, m map<string,date>, "
        "a array<timestamp_ntz>, __st_row_kind tinyint")
    out = run_json_path(spark, df, [
        {"src_field": "r", "path": "$[0]", "dest_field": "n", "dest_type": "int"},
        {"src_field": "r", "path": "$[1]", "dest_field": "d"},
        {"src_field": "r", "path": "$[2][4]", "dest_field": "minute", "dest_type": "int"},
        {"src_field": "r", "path": "$[3].k", "dest_field": "k", "dest_type": "double"},
        {"src_field": "m", "path": "$.d", "dest_field": "md"},
        {"src_field": "a", "path": "$[0]", "dest_field": "a0"},
    ])
    first, nulls = (r.asDict() for r in out.collect())
    assert {k: first[k] for k in ("n", "d", "minute", "k", "md", "a0")} == {
        "n": 7, "d": "[2024,1,2]", "minute": 30, "k": 1.5, "md": "[2020,2,29]",
        "a0": "[2024,1,2,10,30,5,123000000]"}
    assert {k: nulls[k] for k in ("n", "d", "md", "a0")} == {"n": None, "d": None, "md": None, "a0": None}
