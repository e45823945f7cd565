"""SeaTunnel's vector types on real Spark: FakeSource generates them as SeaTunnel's does (``vector.dimension``
floats within ``vector.float.min``/``max``, ``binary.vector.dimension`` / 8 bytes, sparse index -> value
entries), ``rows`` give them literally, and Assert's ``field_type`` accepts them."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.spi.schema import parse_type

FIELDS = ("f = float_vector, h = float16_vector, b = bfloat16_vector, bin = binary_vector, "
          "sp = sparse_float_vector")


def test_vector_types_map_to_spark_types():
    from pyspark.sql import types as T

    assert parse_type("FLOAT_VECTOR").to_spark() == T.ArrayType(T.FloatType(), True)
    assert parse_type("binary_vector").to_spark() == T.BinaryType()
    assert parse_type("sparse_float_vector").to_spark() == T.MapType(T.IntegerType(), T.FloatType(), True)
    assert str(parse_type("bfloat16_vector")) == "bfloat16_vector"


def test_fakesource_generates_vectors_and_assert_accepts_them(plan_of, spark, run_job):
    from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR as FAKE
    from airflow_provider_seatunnel.runtime.executor import RunContext

    block = f"""FakeSource {{ plugin_output = "v", row.num = 4, vector.dimension = 3, binary.vector.dimension = 16,
        vector.float.min = 1, vector.float.max = 2, schema = {{ fields {{ {FIELDS} }} }} }}"""
    rules = ", ".join(f"{{ field_name = {n}, field_type = {t}, field_value = [{{ rule_type = NOT_NULL }}] }}"
                      for n, t in (("f", "float_vector"), ("h", "float16_vector"), ("b", "bfloat16_vector"),
                                   ("bin", "binary_vector"), ("sp", "sparse_float_vector")))
    job = f"""env {{ parallelism = 1 }}
source {{ {block} }}
sink {{ Assert {{ plugin_input = "v", rules {{ row_rules = [{{ rule_type = MIN_ROW, rule_value = 4 }}],
                                            field_rules = [{rules}] }} }} }}"""
    run_job(job)  # Assert fails the pipeline if a type or a value is wrong

    plan = plan_of(f"source {{ {block} }}\nsink {{ Console {{ }} }}")
    pipeline = plan.pipelines[0]
    df = FAKE.read(RunContext(spark, plan, pipeline, "v"), pipeline.sources[0]).popitem()[1]
    rows = df.collect()
    assert len(rows) == 4
    for r in rows:
        assert len(r["f"]) == len(r["h"]) == len(r["b"]) == 3 and len(r["sp"]) == 3
        assert all(1 <= x < 2 for x in (*r["f"], *r["h"], *r["b"], *r["sp"].values()))
        assert isinstance(r["bin"], (bytes, bytearray)) and len(r["bin"]) == 2
        assert all(0 <= k < 2**31 for k in r["sp"])
    assert len({tuple(r["f"]) for r in rows}) == 4  # random per row


def test_fakesource_rows_give_vectors_literally(plan_of, spark):
    from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR as FAKE
    from airflow_provider_seatunnel.runtime.executor import RunContext

    plan = plan_of(f"""source {{ FakeSource {{ schema = {{ fields {{ {FIELDS} }} }}
        rows = [{{ kind = INSERT, fields = [[0.5, 1.5], [1], [2], "AQI=", {{ "7" = 0.25 }}] }}] }} }}
        sink {{ Console {{ }} }}""")
    pipeline = plan.pipelines[0]
    (row,) = FAKE.read(RunContext(spark, plan, pipeline, "v"), pipeline.sources[0]).popitem()[1].collect()
    assert (row["f"], row["h"], row["b"], bytes(row["bin"]), row["sp"]) == ([0.5, 1.5], [1.0], [2.0], b"\x01\x02",
                                                                         {7: 0.25})


@pytest.mark.parametrize("bad", ["vector.dimension = -1", "vector.float.min = -1"])
def test_vector_options_are_bounded(config_error, bad):
    error = config_error(f"source {{ FakeSource {{ {bad}, schema = {{ fields {{ v = float_vector }} }} }} }}\n"
                         "sink { Console { } }")
    assert bad.split(" ")[0] in str(error)
