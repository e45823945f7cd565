"""Assert sink: every rule kind holding and breaking, on real Spark data, in one pass per table."""

from __future__ import annotations

import itertools
import textwrap
from datetime import date, datetime, time
from decimal import Decimal

import pytest

from airflow_provider_seatunnel.connectors.assert_ import CONNECTOR as ASSERT
from airflow_provider_seatunnel.connectors.assert_.rules import EMPTY_RULES
from airflow_provider_seatunnel.connectors.assert_.values import convert_expected, java_double
from airflow_provider_seatunnel.spi.errors import AssertionFailed, PipelineError, RuntimeConfigError
from airflow_provider_seatunnel.spi.schema import parse_type

_names = itertools.count()

ALL_FIELDS = """
  name = string, age = int, score = double, price = "decimal(10, 2)", born = date, seen = timestamp, at = time,
  tags = "array<int>", attrs = "map<string, string>", info = { city = string, zip = int }, raw = bytes,
  flag = boolean, tiny = tinyint, small = smallint, big = bigint, ratio = float
"""


def job(rules: str, fields: str = "id = int") -> str:
    """A job FakeSource "fake" → Assert with ``rules`` (the source only gives the plan its schema)."""
    return textwrap.dedent("""
        env { job.mode = BATCH }
        source { FakeSource { plugin_output = "fake", schema = { fields { FIELDS } } } }
        sink { Assert { rules { RULES } } }
    """).replace("FIELDS", fields).replace("RULES", rules)


@pytest.fixture
def check(spark, plan_of):
    """Run the Assert of ``config`` on ``frames`` (table id → DataFrame) as the executor would:
    each frame observed by ``count_rows``. Returns the counters (filled even when it raises)."""
    from airflow_provider_seatunnel.runtime.counting import count_rows
    from airflow_provider_seatunnel.runtime.executor import RunContext
    from airflow_provider_seatunnel.spi.rows import with_kind

    def run(config: str, frames: dict, counters: dict | None = None) -> dict:
        plan = plan_of(config)
        pipeline = plan.pipelines[0]
        counters = {} if counters is None else counters
        observed = {}
        for table, df in frames.items():
            observed[table], counters[table] = count_rows(with_kind(df), f"assert-test-{next(_names)}", deletes=True)
        ASSERT.prepare(RunContext(spark, plan, pipeline, "r"), pipeline.sinks[0], observed)
        return counters

    return run


def all_types_frame(spark):
    from pyspark.sql import types as T

    schema = T.StructType([
        T.StructField("name", T.StringType()), T.StructField("age", T.IntegerType()),
        T.StructField("score", T.DoubleType()), T.StructField("price", T.DecimalType(10, 2)),
        T.StructField("born", T.DateType()), T.StructField("seen", T.TimestampNTZType()),
        T.StructField("at", T.TimeType(6)), T.StructField("tags", T.ArrayType(T.IntegerType())),
        T.StructField("attrs", T.MapType(T.StringType(), T.StringType())),
        T.StructField("info", T.StructType([T.StructField("city", T.StringType()),
                                            T.StructField("zip", T.IntegerType())])),
        T.StructField("raw", T.BinaryType()), T.StructField("flag", T.BooleanType()),
        T.StructField("tiny", T.ByteType()), T.StructField("small", T.ShortType()),
        T.StructField("big", T.LongType()), T.StructField("ratio", T.FloatType()),
    ])
    row = ("Ann", 30, 1.5, Decimal("12.50"), date(2012, 12, 21), datetime(2012, 12, 21, 12, 34, 56), time(12, 34, 56),
           [0, 1, 2], {"k0": "v0", "k1": "v1"}, ("Oslo", 150), bytearray(b"hi"), True, 7, 300,
           7084913402530365000, 3.1)
    return spark.createDataFrame([row], schema)


def field_rule(name: str, ftype: str, *entries: str) -> str:
    return f"{{ field_name = {name}, field_type = {ftype}, field_value = [{', '.join(entries)}] }}"


# ---------------------------------------------------------------------------------------------
# Passing rules, every type, one action
# ---------------------------------------------------------------------------------------------


def test_every_rule_and_type_holds_in_one_observed_pass(spark, check):
    rules = "row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }, { rule_type = MAX_ROW, rule_value = 1 }]\n"
    rules += "field_rules = [\n" + ",\n".join([
        field_rule("name", "string", "{ rule_type = NOT_NULL }", "{ rule_type = MIN_LENGTH, rule_value = 3 }",
                   "{ rule_type = MAX_LENGTH, rule_value = 3 }", '{ equals_to = "Ann" }'),
        field_rule("age", "int", "{ rule_type = MIN, rule_value = 18 }", "{ rule_type = MAX, rule_value = 30 }",
                   "{ rule_type = MIN, rule_value = 18, equals_to = 30 }", '{ equals_to = "30" }'),
        field_rule("score", "double", "{ equals_to = 1.5 }", "{ rule_type = MAX, rule_value = 1.5 }"),
        field_rule("price", '"decimal(10, 2)"', '{ equals_to = "12.50" }', "{ rule_type = MIN, rule_value = 12.5 }",
                   "{ rule_type = MAX_LENGTH, rule_value = 5 }"),
        field_rule("born", "date", '{ equals_to = "2012-12-21" }', "{ rule_type = MIN_LENGTH, rule_value = 10 }"),
        field_rule("seen", "timestamp", '{ equals_to = "2012-12-21T12:34:56" }',
                   "{ rule_type = MAX_LENGTH, rule_value = 19 }, { rule_type = MIN_LENGTH, rule_value = 19 }"),
        field_rule("at", "time", '{ equals_to = "12:34:56" }', "{ rule_type = NOT_NULL }"),
        field_rule("tags", '"array<int>"', "{ equals_to = [0, 1, 2] }"),
        field_rule("attrs", '"map<string, string>"', "{ equals_to = { k1 = v1, k0 = v0 } }"),
        field_rule("info", "{ city = string, zip = int }", '{ equals_to = ["Oslo", 150] }',
                   "{ equals_to = { zip = 150, city = Oslo } }"),
        field_rule("raw", "bytes", '{ equals_to = "aGk=" }', "{ rule_type = MAX_LENGTH, rule_value = 2 }"),
        field_rule("flag", "boolean", "{ equals_to = true }"),
        field_rule("tiny", "tinyint", "{ equals_to = 7 }", "{ rule_type = MAX, rule_value = 7 }"),
        field_rule("small", "smallint", "{ equals_to = 300 }"),
        field_rule("big", "bigint", "{ equals_to = 7084913402530365000 }"),
        field_rule("ratio", "float", "{ equals_to = 3.1 }", "{ rule_type = MIN, rule_value = 3 }"),
    ]) + "\n]"
    counters = check(job(rules, ALL_FIELDS), {"fake": all_types_frame(spark)})
    assert counters["fake"].get()["rows"] == 1  # the observation fired from Assert's single aggregate


def test_every_broken_equals_to_is_reported_at_once(spark, check):
    rules = "field_rules = [\n" + ",\n".join([
        field_rule("name", "string", '{ equals_to = "Bob" }'),
        field_rule("price", '"decimal(10, 2)"', "{ equals_to = 12.5 }"),  # a HOCON double: scale 1, not 2
        field_rule("seen", "timestamp", '{ equals_to = "2012-12-21 12:34:57" }'),
        field_rule("tags", '"array<int>"', "{ equals_to = [0, 1] }"),
        field_rule("attrs", '"map<string, string>"', "{ equals_to = { k0 = v0, k1 = v2 } }"),
        field_rule("info", "{ city = string, zip = int }", "{ equals_to = { city = Oslo, zip = 151 } }"),
        field_rule("raw", "bytes", '{ equals_to = "aGo=" }'),
        field_rule("ratio", "float", "{ equals_to = 3.2 }"),
        field_rule("age", "int", "{ equals_to = 30 }"),  # holds: not in the message
    ]) + "\n]"
    counters = {}
    with pytest.raises(AssertionFailed) as info:
        check(job(rules, ALL_FIELDS), {"fake": all_types_frame(spark)}, counters)
    message = str(info.value)
    assert message.startswith("8 Assert rules failed: on table fake: field 'name' (string) rule equals_to 'Bob' — "
                              "offending value 'Ann' (1 of 1 rows); ")
    expected = [
        "field 'price' (decimal(10, 2)) rule equals_to 12.5 (scale 1, the column's is 2: SeaTunnel's decimals are "
        "equal only with equal scales) — offending value 12.50 (1 of 1 rows)",
        "field 'seen' (timestamp) rule equals_to '2012-12-21 12:34:57' — offending value 2012-12-21 12:34:56",
        "field 'tags' (array<int>) rule equals_to [0, 1] — offending value [0, 1, 2]",
        "field 'attrs' (map<string, string>) rule equals_to {\"k0\": \"v0\", \"k1\": \"v2\"} — offending value "
        "{k0 -> v0, k1 -> v1}",
        "field 'info' ({city = string, zip = int}) rule equals_to {\"city\": \"Oslo\", \"zip\": 151} — offending value "
        "{Oslo, 150}",
        "field 'raw' (bytes) rule equals_to 'aGo=' — offending value 0x6869",
        "field 'ratio' (float) rule equals_to 3.2 — offending value 3.1",
    ]
    positions = [message.index(text) for text in expected]
    assert positions == sorted(positions)  # first rules first
    assert "'age'" not in message
    assert info.value.deterministic
    assert counters["fake"].get()["rows"] == 1


# ---------------------------------------------------------------------------------------------
# Failing value and row rules: counts and first offending values
# ---------------------------------------------------------------------------------------------


def test_value_and_row_rules_report_counts_and_first_offending_values(spark, check):
    from pyspark.sql import functions as F

    df = spark.range(100).select(
        F.when(F.col("id") % 10 == 3, None).otherwise(F.concat(F.lit("n"), F.col("id").cast("string"))).alias("name"),
        (F.col("id") % 20).cast("int").alias("age"))
    rules = """
      row_rules = [{ rule_type = MIN_ROW, rule_value = 1000 }, { rule_type = MAX_ROW, rule_value = 50 },
                   { rule_type = MAX_ROW, rule_value = 100 }]
      field_rules = [
        { field_name = name, field_type = string, field_value = [
            { rule_type = NOT_NULL }, { rule_type = MIN_LENGTH, rule_value = 3 },
            { rule_type = MAX_LENGTH, rule_value = 2 }
        ] },
        { field_name = age, field_type = int, field_value = [
            { rule_type = MIN, rule_value = 18 }, { rule_type = MAX, rule_value = 100 }
        ] }
      ]
    """
    counters = {}
    with pytest.raises(AssertionFailed) as info:
        check(job(rules, "name = string, age = int"), {"fake": df}, counters)
    assert str(info.value) == (
        "6 Assert rules failed: on table fake: "
        "field 'name' (string) rule field_type string — offending value null (10 of 100 rows); "
        "field 'name' (string) rule MIN_LENGTH 3 — offending value 'n0' (9 of 100 rows); "
        "field 'name' (string) rule MAX_LENGTH 2 — offending value 'n10' (81 of 100 rows); "
        "field 'age' (int) rule MIN 18 — offending value 0 (90 of 100 rows); "
        "row count 100 fails rule MIN_ROW 1000; "
        "row count 100 fails rule MAX_ROW 50")
    assert counters["fake"].get()["rows"] == 100


def test_row_rules_count_every_row_kind(spark, check):
    from pyspark.sql import functions as F

    from airflow_provider_seatunnel.spi.rows import ROW_KIND

    df = spark.range(4).select(F.col("id").cast("int").alias("id"), (F.col("id") % 4).cast("tinyint").alias(ROW_KIND))
    rules = "row_rules = [{ rule_type = MIN_ROW, rule_value = 4 }, { rule_type = MAX_ROW, rule_value = \"4\" }]"
    counters = check(job(rules), {"fake": df})
    assert counters["fake"].get() == {"rows": 4, "deletes": 2}  # every kind counted; UPDATE_BEFORE + DELETE
    with pytest.raises(AssertionFailed, match=r"^Assert rule failed on table fake: row count 4 fails rule MAX_ROW 3$"):
        check(job("row_rules = [{ rule_type = MAX_ROW, rule_value = 3 }]"), {"fake": df})


def test_nulls_nested_nulls_nan_and_decimal_precision(spark, check):
    from pyspark.sql import types as T

    schema = T.StructType([
        T.StructField("v", T.IntegerType()), T.StructField("nothing", T.StringType()),
        T.StructField("arr", T.ArrayType(T.IntegerType())), T.StructField("dec", T.DecimalType(10, 2)),
        T.StructField("score", T.DoubleType()), T.StructField("m", T.MapType(T.StringType(), T.IntegerType())),
        T.StructField("st", T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())]))])
    df = spark.createDataFrame([
        (1, None, [1], Decimal("1.00"), 1.0, {"a": 1}, (1, None)),
        (None, None, [1, None], Decimal("12345.67"), float("nan"), {"a": None}, (2, None)),
        (3, None, [], Decimal("5.50"), 2.0, {}, (3, None)),
    ], schema)
    rules = """
      field_rules = [
        { field_name = v, field_type = int, field_value = [{ rule_type = NULL }] },
        { field_name = nothing, field_type = "null", field_value = [{ rule_type = NULL }] },
        { field_name = nothing, field_type = "null", field_value = [{ rule_type = MIN, rule_value = 0 }] },
        { field_name = arr, field_type = "array<int>", field_value = [{ rule_type = NOT_NULL }] },
        { field_name = dec, field_type = "decimal(6, 2)", field_value = [{ rule_type = NOT_NULL }] },
        { field_name = score, field_type = double, field_value = [{ rule_type = MIN, rule_value = 0 }] },
        { field_name = m, field_type = "map<string, int>",
          field_value = [{ rule_type = MAX_LENGTH, rule_value = 100 }] },
        { field_name = st, field_type = { a = int, b = "null" }, field_value = [{ rule_type = NOT_NULL }] }
      ]
    """
    fields = ('v = int, nothing = string, arr = "array<int>", dec = "decimal(10, 2)", score = double, '
              'm = "map<string, int>", st = { a = int, b = string }')
    with pytest.raises(AssertionFailed) as info:
        check(job(rules, fields), {"fake": df})
    assert str(info.value) == (
        "7 Assert rules failed: on table fake: "
        # a null fails any field_type but "null", even under rule NULL (SeaTunnel 2.3.9)
        "field 'v' (int) rule field_type int — offending value null (1 of 3 rows); "
        "field 'v' (int) rule NULL — offending value 1 (2 of 3 rows); "
        # MIN needs a number: a null (and any non-numeric value) fails it
        "field 'nothing' (null) rule MIN 0 — offending value null (3 of 3 rows); "
        "field 'arr' (array<int>) rule field_type array<int> — offending value [1, null] (1 of 3 rows); "
        # a value's precision may not exceed the declared one; the scale must be equal
        "field 'dec' (decimal(6, 2)) rule field_type decimal(6, 2) — offending value 12345.67 (1 of 3 rows); "
        "field 'score' (double) rule MIN 0 — offending value NaN (1 of 3 rows); "
        "field 'm' (map<string, int>) rule field_type map<string, int> — offending value {a -> null} (1 of 3 rows)")


def test_lengths_follow_java_text(spark, check):
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("ts", T.TimestampNTZType()), T.StructField("at", T.TimeType(6)),
                           T.StructField("s", T.StringType()), T.StructField("n", T.LongType())])
    df = spark.createDataFrame([
        (datetime(2023, 4, 22, 23, 20), time(12, 0), "\U0001F600a", 12345),
        (datetime(2023, 4, 22, 23, 20, 58, 500000), time(12, 0, 1, 123456), "ab", None),
    ], schema)
    rules = """
      field_rules = [
        { field_name = ts, field_type = timestamp, field_value = [{ rule_type = MIN_LENGTH, rule_value = 16 },
                                                                    { rule_type = MAX_LENGTH, rule_value = 16 }] },
        { field_name = at, field_type = time, field_value = [{ rule_type = MIN_LENGTH, rule_value = 5 },
                                                               { rule_type = MAX_LENGTH, rule_value = 5 }] },
        { field_name = s, field_type = string, field_value = [{ rule_type = MIN_LENGTH, rule_value = 2 },
                                                                { rule_type = MAX_LENGTH, rule_value = 2 }] },
        { field_name = n, field_type = "null", field_value = [{ rule_type = MAX_LENGTH, rule_value = 0 }] }
      ]
    """
    with pytest.raises(AssertionFailed) as info:
        check(job(rules, "ts = timestamp, at = time, s = string, n = bigint"), {"fake": df})
    assert str(info.value) == (
        "4 Assert rules failed: on table fake: "
        # Java prints 2023-04-22T23:20 (16) and 2023-04-22T23:20:58.500 (23)
        "field 'ts' (timestamp) rule MAX_LENGTH 16 — offending value 2023-04-22 23:20:58.5 (1 of 2 rows); "
        "field 'at' (time) rule MAX_LENGTH 5 — offending value 12:00:01.123456 (1 of 2 rows); "
        # an emoji is two UTF-16 units, as String.length() counts
        "field 's' (string) rule MAX_LENGTH 2 — offending value '\U0001F600a' (1 of 2 rows); "
        # a "null" field_type: non-null values fail it; a null's length is 0
        "field 'n' (null) rule field_type null — offending value 12345 (1 of 2 rows)")


# ---------------------------------------------------------------------------------------------
# Types decided from the schema, before any data is read
# ---------------------------------------------------------------------------------------------


def test_type_mismatches_fail_before_reading_data(spark, check):
    from pyspark.sql import functions as F

    df = spark.range(3).select(
        F.col("id").cast("int").alias("age"),
        F.struct(F.col("id").cast("string").alias("town")).alias("info"),
        F.array(F.col("id")).alias("tags"),
        F.col("id").cast("decimal(10,2)").alias("price"),
        F.raise_error(F.lit("the data was read")).cast("int").alias("boom"))
    rules = """
      field_rules = [
        { field_name = age, field_type = bigint, field_value = [{ rule_type = NOT_NULL }] },
        { field_name = info, field_type = { city = string }, field_value = [{ rule_type = NOT_NULL }] },
        { field_name = tags, field_type = "array<int>", field_value = [{ rule_type = NOT_NULL }] },
        { field_name = price, field_type = "decimal(10, 3)", field_value = [{ rule_type = NOT_NULL }] },
        { field_name = boom, field_type = int, field_value = [{ rule_type = NOT_NULL }] }
      ]
    """
    fields = 'age = int, info = { town = string }, tags = "array<bigint>", price = "decimal(10, 2)", boom = int'
    with pytest.raises(AssertionFailed) as info:
        check(job(rules, fields), {"fake": df})
    assert str(info.value) == (
        "4 Assert rules failed: on table fake: "
        "field 'age' rule field_type bigint — the column is int; "
        "field 'info' rule field_type {city = string} — the column is {town = string}; "
        "field 'tags' rule field_type array<int> — the column is array<bigint>; "
        "field 'price' rule field_type decimal(10, 3) — the column is decimal(10, 2)")


def test_timestamp_with_time_zone_and_wider_decimal_columns_pass(spark, check):
    from pyspark.sql import functions as F

    df = spark.range(2).select(F.timestamp_seconds(F.col("id")).alias("ts"),
                               (F.col("id") + 0.5).cast("decimal(20,2)").alias("price"))
    rules = """
      field_rules = [
        { field_name = ts, field_type = timestamp, field_value = [{ equals_to = "1970-01-01 00:00:00" },
                                                                    { rule_type = NOT_NULL }] },
        { field_name = price, field_type = "decimal(3, 2)", field_value = [{ rule_type = MAX, rule_value = 1.5 }] }
      ]
    """
    with pytest.raises(AssertionFailed) as info:
        check(job(rules, 'ts = timestamp, price = "decimal(20, 2)"'), {"fake": df})
    assert str(info.value) == ("Assert rule failed on table fake: field 'ts' (timestamp) rule equals_to "
                               "'1970-01-01 00:00:00' — offending value 1970-01-01 00:00:01 (1 of 2 rows)")


def test_a_field_missing_at_run_time_is_a_config_error(spark, check):
    df = spark.range(1).selectExpr("cast(id as int) as id")
    rules = "field_rules = [" + field_rule("name", "string", "{ rule_type = NOT_NULL }") + "]"
    with pytest.raises(RuntimeConfigError, match=r"field 'name' does not exist in table fake \(its fields: id\)"):
        check(job(rules, "id = int, name = string"), {"fake": df})


# ---------------------------------------------------------------------------------------------
# Multi-table: tables_configs, rules for every table, table-names
# ---------------------------------------------------------------------------------------------


def test_tables_configs_check_each_table_path(spark, check):
    frames = {"db.t1": spark.range(3).selectExpr("cast(id as int) as id"),
              "db.t2": spark.range(1).selectExpr("cast(id + 40 as int) as id"),
              "db.empty": spark.range(0).selectExpr("cast(id as int) as id")}
    rules = """
      table-names = ["db.t1", "db.t2"]
      tables_configs = [
        { table_path = "db.t1", row_rules = [{ rule_type = MIN_ROW, rule_value = 3 }],
          field_rules = [{ field_name = id, field_type = int, field_value = [{ rule_type = MAX, rule_value = 10 }] }] },
        { table_path = "db.t2", row_rules = [{ rule_type = MIN_ROW, rule_value = 2 }],
          field_rules = [{ field_name = id, field_type = int, field_value = [{ rule_type = MAX, rule_value = 10 }] }] },
        { table_path = "db.t3", row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }] }
      ]
    """
    counters = {}
    with pytest.raises(AssertionFailed) as info:
        check(job(rules), frames, counters)
    assert str(info.value) == (
        "3 Assert rules failed: on table db.t2: field 'id' (int) rule MAX 10 — offending value 40 (1 of 1 rows); "
        "row count 1 fails rule MIN_ROW 2; on table db.t3: row count 0 fails rule MIN_ROW 1 (no such input table)")
    assert {t: c.get()["rows"] for t, c in counters.items()} == {"db.t1": 3, "db.t2": 1, "db.empty": 0}

    # table-names compares the tables that carried rows (db.empty did not)
    with pytest.raises(AssertionFailed) as info:
        check(job('table-names = ["db.t1", "db.empty"]'), frames)
    assert str(info.value) == ("Assert rule failed: table-names [db.t1, db.empty] is not equal to the tables "
                               "that carried rows [db.t1, db.t2]")
    counters = check(job('table-names = ["db.t2", "db.t1"]\n'
                         'tables_configs = [{ table_path = "db.t2",'
                         ' row_rules = [{ rule_type = MAX_ROW, rule_value = 1 }] }]'), frames)
    assert counters["db.t2"].get()["rows"] == 1


def test_plain_rules_hold_for_every_input_table(spark, check):
    frames = {"a": spark.createDataFrame([(0,), (5,)], "id int"), "b": spark.createDataFrame([(0,)], "id int")}
    rules = ("row_rules = [{ rule_type = MIN_ROW, rule_value = 2 }]\n"
             "field_rules = [" + field_rule("id", "int", "{ rule_type = MAX, rule_value = 1 }") + "]")
    with pytest.raises(AssertionFailed) as info:
        check(job(rules), frames)
    assert str(info.value) == ("2 Assert rules failed: on table a: field 'id' (int) rule MAX 1 — offending value 5 "
                               "(1 of 2 rows); on table b: row count 1 fails rule MIN_ROW 2")


# ---------------------------------------------------------------------------------------------
# catalog_table_rule
# ---------------------------------------------------------------------------------------------


def test_catalog_table_rule(spark, check):
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("name", T.StringType(), True, {"comment": "who"}),
                           T.StructField("age", T.IntegerType(), False)])
    df = spark.createDataFrame([("Ann", 30)], schema)
    holds = """
      catalog_table_rule {
        column_rule = [{ name = age, type = int, nullable = false },
                       { name = name, type = string, comment = "who", column_length = 0 }]
        table_identifier_rule { catalog_name = "FakeSource", table = "fake" }
      }
    """
    counters = check(job(holds, "name = string, age = int"), {"fake": df})
    assert counters["fake"].get()["rows"] == 1

    breaks = """
      catalog_table_rule {
        column_rule = [{ name = name, type = string, comment = "what" }, { name = age, type = bigint, nullable = true },
                       { name = email, type = string }]
        table_identifier_rule { catalog_name = "Jdbc", table = "db.fake" }
        primary_key_rule { primary_key_name = "pk", primary_key_columns = [name] }
        constraint_key_rule = [{ constraint_key_name = "uk", constraint_key_type = UNIQUE_KEY,
                                 constraint_key_columns = [{ constraint_key_column_name = name,
                                                             constraint_key_sort_type = ASC }] }]
      }
    """
    with pytest.raises(AssertionFailed) as info:
        check(job(breaks, "name = string, age = int"), {"fake": df})
    assert str(info.value) == (
        "4 Assert rules failed: on table fake: "
        "catalog_table_rule primary_key_rule: primaryKey is null (the input table declares no primary key); "
        "catalog_table_rule constraint_key_rule: constraintKeys is null (the input table declares no constraint "
        "keys); "
        "catalog_table_rule column_rule: columns [name string, age int] are not equal to [name string, age bigint, "
        "email string] (missing email; name has comment 'who', not 'what'; age is int, not bigint; age is not "
        "nullable); "
        "catalog_table_rule table_identifier_rule: tableIdentifier FakeSource.fake is not equal to Jdbc.db.fake")


# ---------------------------------------------------------------------------------------------
# Compile time
# ---------------------------------------------------------------------------------------------


def messages(error) -> list[str]:
    return [p.format() for p in error.problems]


def test_empty_and_missing_rules(config_error):
    for rules in ("", "row_rules = []", 'rule_ruls = [{ rule_type = MAX_ROW, rule_value = 5 }]'):
        found = messages(config_error(job(rules)))
        assert any(EMPTY_RULES in m and "option 'rules'" in m and "sink[0] Assert" in m for m in found), found
    found = messages(config_error(job("").replace("rules {  }", "")))
    assert any("the option 'rules' is required" in m for m in found)
    found = messages(config_error(job("").replace("rules {  }", "rules = [1]")))
    assert any("must be an object" in m for m in found)


def test_rule_type_and_value_problems(config_error):
    rules = """
      row_rules = [{ rule_type = min_row, rule_value = 1 }, { rule_type = MAX_ROWS, rule_value = 1 },
                   { rule_type = MAX_ROW }, { rule_type = MIN_ROW, rule_value = many }]
      field_rules = [
        { field_name = id, field_type = int, field_value = [{ rule_type = MIN },
                                                             { rule_type = MAX_ROW, rule_value = 1 },
                                                             { rule_type = NOTNULL }] },
        { field_name = id, field_value = [{ rule_type = NOT_NULL }] },
        { field_name = id, field_type = int },
        { field_type = int, field_value = [{ rule_type = NOT_NULL }] },
        { field_name = id, field_type = "decimal(10)", field_value = [{ rule_type = NOT_NULL }] },
        { field_name = id, field_type = int, field_value = [{ equals_to = "abc" }] },
        { field_name = id, field_type = "array<int>", field_value = [{ equals_to = 5 }] },
        { field_name = id, field_type = { a = int, b = string }, field_value = [{ equals_to = { a = 1 } }] },
        { field_name = id, field_type = tinyint, field_value = [{ equals_to = 300 }] },
        { field_name = id, field_type = date, field_value = [{ equals_to = "21/12/2012" }] }
      ]
    """
    text = "\n".join(messages(config_error(job(rules))))
    for expected in [
        "option 'rules.row_rules[0].rule_type': unknown rule_type 'min_row' (rule types are matched exactly, "
        "as SeaTunnel does: write MIN_ROW)",
        "option 'rules.row_rules[1].rule_type': unknown rule_type 'MAX_ROWS' (did you mean MAX_ROW?",
        "option 'rules.row_rules[2].rule_value': MAX_ROW needs a numeric rule_value, found null",
        "option 'rules.row_rules[3].rule_value': MIN_ROW needs a numeric rule_value, found 'many'",
        "option 'rules.field_rules[0].field_value[0].rule_value': MIN needs a numeric rule_value",
        "option 'rules.field_rules[0].field_value[1].rule_type': MAX_ROW is a row rule: as a field rule every row "
        "fails it (move it to row_rules)",
        "option 'rules.field_rules[0].field_value[2].rule_type': unknown rule_type 'NOTNULL' (did you mean NOT_NULL?",
        "option 'rules.field_rules[1].field_type': is required",
        "option 'rules.field_rules[2].field_value': is required",
        "option 'rules.field_rules[3].field_name': is required",
        "option 'rules.field_rules[4].field_type': decimal type should assign precision and scale",
        "option 'rules.field_rules[5].field_value[0].equals_to': cannot be read as int: 'abc' is not an integer",
        "option 'rules.field_rules[6].field_value[0].equals_to': cannot be read as array<int>: an array is written "
        "as a list",
        "option 'rules.field_rules[7].field_value[0].equals_to': cannot be read as {a = int, b = string}: missing "
        "row field(s) b",
        "option 'rules.field_rules[8].field_value[0].equals_to': cannot be read as tinyint: 300 is out of the "
        "tinyint range",
        "option 'rules.field_rules[9].field_value[0].equals_to': cannot be read as date: '21/12/2012' is not a date",
    ]:
        assert expected in text, expected


def test_table_and_catalog_option_problems(config_error):
    rules = """
      table-names = "db.t1"
      tables_configs = [
        { row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }] },
        { table_path = "db.t2", catalog_table_rule {
            primary_key_rule { primary_key_columns = [id] }
            constraint_key_rule = [{ constraint_key_name = uk, constraint_key_type = UNIQUE,
                                     constraint_key_columns = [{ constraint_key_column_name = id,
                                                                 constraint_key_sort_type = UP }] }]
            column_rule = [{ name = id, type = int, nullable = maybe }]
            table_identifier_rule { catalog_name = "FakeSource", table = "a.b.c.d" } } }
      ]
    """
    text = "\n".join(messages(config_error(job(rules))))
    for expected in [
        "option 'rules.table-names': must be a list of table names, found 'db.t1'",
        "option 'rules.tables_configs[0].table_path': is required",
        "option 'rules.tables_configs[1].catalog_table_rule.primary_key_rule.primary_key_name': is required",
        "constraint_key_rule[0].constraint_key_type': unknown constraint type 'UNIQUE'",
        "constraint_key_columns[0].constraint_key_sort_type': unknown sort type 'UP' (ASC or DESC)",
        "column_rule[0].nullable': must be true or false, found 'maybe'",
        "table_identifier_rule.table': cannot split 'a.b.c.d' into database, schema and table",
    ]:
        assert expected in text, expected


def test_warnings_keep_the_job_valid(plan_of):
    rules = """
      rule_ruls = [{ rule_type = MAX_ROW, rule_value = 5 }]
      row_rules = [{ rule_type = NOT_NULL }, { rule_type = MIN_ROW, rule_value = 1, rule_vaule = 2 }]
      field_rules = [{ field_name = id, field_type = bigint, field_value = [{ rule_type = NOT_NULL }, {}] }]
      catalog_table_rule { primary_key_rule { primary_key_name = pk, primary_key_columns = [id] } }
    """
    warnings = [w for w in plan_of(job(rules)).warnings if w.get("plugin") == "sink[0] Assert"]
    text = "\n".join(f"{w['key']}: {w['message']} ({w.get('hint')})" for w in warnings)
    for expected in [
        "rules.rule_ruls: unknown key 'rule_ruls' is ignored (SeaTunnel ignores it too) (did you mean 'row_rules'?)",
        "rules.row_rules[0].rule_type: NOT_NULL is a field rule: in row_rules it is ignored (as in SeaTunnel)",
        "rules.row_rules[1].rule_vaule: unknown key 'rule_vaule' is ignored",
        "rules.field_rules[0].field_value[1]: a field_value entry without rule_type or equals_to checks nothing",
        "rules.field_rules[0].field_type: field 'id' is int in the input but field_type is bigint: the rule fails "
        "at run time",
    ]:
        assert expected in text, expected
    assert all(w["severity"] == "warning" for w in warnings)


def test_unknown_field_in_a_known_input_schema(config_error, plan_of):
    rules = "field_rules = [" + field_rule("nmae", "string", "{ rule_type = NOT_NULL }") + "]"
    found = messages(config_error(job(rules, "id = int, name = string")))
    assert any("option 'rules.field_rules[0].field_name': field 'nmae' does not exist in the input (its fields: id, "
               "name) (did you mean 'name'?)" in m for m in found), found
    # per-table rules name tables the compile-time schema does not describe: not checked there
    plan_of(job('tables_configs = [{ table_path = "x", field_rules = ['
                + field_rule("nmae", "string", "{ rule_type = NOT_NULL }") + "] }]"))


# ---------------------------------------------------------------------------------------------
# equals_to conversion (SeaTunnel's JSON converter) and Java's double text
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "text"), [
    (0.1, "0.1"), (1e-4, "1.0E-4"), (0.001, "0.001"), (123456789.0, "1.23456789E8"), (1e7, "1.0E7"),
    (9999999.0, "9999999.0"), (100.0, "100.0"), (-0.0, "-0.0"), (18.619999999999994, "18.619999999999994"),
    (float("nan"), "NaN"), (-1.5e-10, "-1.5E-10"), (12.5, "12.5"),
])
def test_java_double_text(value, text):
    assert java_double(value) == text


@pytest.mark.parametrize(("value", "type_", "expected"), [
    (12.5, "decimal(10, 2)", Decimal("12.5")),  # scale 1: never equals a decimal(10, 2) value
    ("12.50", "decimal(10, 2)", Decimal("12.50")),
    (100, "decimal(10, 2)", Decimal("100")),
    (1e-4, "decimal(10, 5)", Decimal("0.00010")),  # BigDecimal("1.0E-4") has scale 5
    (1.9, "int", 1),  # Jackson truncates a double read as an int
    ("42", "bigint", 42),
    ("yes", "boolean", False), ("TRUE", "boolean", True),
    (5, "string", "5"), (1.0, "string", "1.0"), ({"a": 1}, "string", '{"a":1}'),
    ("2012/12/21", "date", date(2012, 12, 21)), ("20121221", "date", date(2012, 12, 21)),
    ("2012-12-21 12:34:56.123", "timestamp", datetime(2012, 12, 21, 12, 34, 56, 123000)),
    ("20121221123456", "timestamp", datetime(2012, 12, 21, 12, 34, 56)),
    ("12:34:56.5", "time", time(12, 34, 56, 500000)),
    ("aGk=", "bytes", b"hi"),
    ({"1": "x", "2": None}, "map<int, string>", {1: "x", 2: None}),
    (["a", None], "{x = string, y = int}", ["a", None]),
    ([1, "2"], "array<bigint>", [1, 2]),
])
def test_equals_to_conversion(value, type_, expected):
    converted = convert_expected(value, parse_type(type_))
    assert converted == expected
    if isinstance(expected, Decimal):
        assert converted.as_tuple().exponent == expected.as_tuple().exponent


@pytest.mark.parametrize(("value", "type_"), [
    ("2012-12-21 12:34", "timestamp"), ("12:34", "time"), (1.5, "tinyint"), (2**31, "int"), ("x", "double"),
    ("nan", "decimal(10, 2)"), (5, "bytes"), (["a"], "{x = string, y = int}"), ("v", "map<string, string>"),
])
def test_equals_to_that_seatunnel_cannot_read(value, type_):
    with pytest.raises(ValueError):
        convert_expected(value, parse_type(type_))


# ---------------------------------------------------------------------------------------------
# End to end through the executor
# ---------------------------------------------------------------------------------------------


ROW_JOB = """
env { job.mode = BATCH }
source {
  FakeSource {
    plugin_output = "fake"
    schema = { fields { c_array = "array<int>", c_map = "map<string, string>",
                        c_row = { c_string = string, c_decimal = "decimal(30, 8)", c_timestamp = timestamp } } }
    rows = [{ kind = INSERT, fields = [[0, 1, 2], { k0 = v0 }, ["AAA", 99999.99999999, "2012-12-21T12:34:56"]] },
            { kind = DELETE, fields = [[0, 1, 2], { k0 = v0 }, ["AAA", 99999.99999999, "2012-12-21T12:34:56"]] }]
  }
}
sink {
  Assert {
    rules {
      row_rules = [{ rule_type = MIN_ROW, rule_value = 2 }, { rule_type = MAX_ROW, rule_value = LIMIT }]
      field_rules = [
        { field_name = c_array, field_type = "array<int>", field_value = [{ equals_to = [0, 1, 2] }] },
        { field_name = c_map, field_type = "map<string, string>", field_value = [{ equals_to = { k0 = v0 } }] },
        { field_name = c_row, field_type = { c_string = string, c_decimal = "decimal(30, 8)", c_timestamp = timestamp },
          field_value = [{ equals_to = ["AAA", 99999.99999999, "2012-12-21T12:34:56"] }] }
      ]
    }
  }
}
"""


def test_end_to_end_pass_and_deterministic_failure(run_job):
    [metrics] = run_job(ROW_JOB.replace("LIMIT", "2"))
    assert metrics["per_table"] == {"sink[0] Assert": {"fake": 2}}
    with pytest.raises(PipelineError) as info:
        run_job(ROW_JOB.replace("LIMIT", "1"))
    assert isinstance(info.value, AssertionFailed) and info.value.deterministic
    assert info.value.plugin == "sink[0] Assert"
    assert info.value.cause == "Assert rule failed on table fake: row count 2 fails rule MAX_ROW 1"


def test_a_templated_equals_to_is_checked_once_rendered(plan_of, config_error):
    """At DAG-parse time ``{{ ds }}`` is not rendered yet: the typed check waits for the task's compile."""
    rules = 'field_rules = [{ field_name = day, field_type = date, field_value = [{ equals_to = "EXPECTED" }] }]'
    fields = "day = date"
    assert plan_of(job(rules.replace("EXPECTED", "{{ ds }}"), fields)).pipelines
    assert plan_of(job(rules.replace("EXPECTED", "2024-05-06"), fields)).pipelines
    found = messages(config_error(job(rules.replace("EXPECTED", "06/05/2024"), fields)))
    assert any("cannot be read as date" in m for m in found), found
