"""FakeSource on real Spark: every type and option, explicit rows, multi-table, compile-time problems."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time
from decimal import Decimal

import pytest

from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.rows import ROW_KIND
from airflow_provider_seatunnel.spi.schema import parse_type

THIS_YEAR = datetime.now().year


@pytest.fixture
def read_source(spark, plan_of):
    """Compile a job and call FakeSource's ``read`` on its first source: {table id: DataFrame}."""

    def run(text: str, source: int = 0) -> dict:
        plan = plan_of(text)
        pipeline = plan.pipelines[0]
        vertex = [v for v in pipeline.vertices if v.kind == "source"][source]
        return CONNECTOR.read(RunContext(spark, plan, pipeline, "test-run"), vertex)

    return run


def job(source_body: str, parallelism: int = 1) -> str:
    return f"""
        env {{ parallelism = {parallelism}, job.mode = BATCH }}
        source {{
          FakeSource {{
{source_body}
          }}
        }}
        sink {{ Console {{ }} }}
    """


def one(tables: dict):
    assert len(tables) == 1
    return next(iter(tables.values()))


ALL_TYPES = """
            row.num = 20
            string.length = 7
            bytes.length = 3
            array.size = 4
            map.size = 3
            plugin_output = "fake"
            schema = {
              fields {
                c_string = string
                c_boolean = boolean
                c_tinyint = tinyint
                c_smallint = smallint
                c_int = int
                c_bigint = bigint
                c_float = float
                c_double = double
                c_decimal = "decimal(10, 3)"
                c_null = "null"
                c_bytes = bytes
                c_date = date
                c_time = time
                c_timestamp = timestamp
                c_array = "array<string>"
                c_map = "map<string, array<int>>"
                c_row = {
                  c_map = "map<string, map<string, string>>"
                  c_bool_map = "map<boolean, bigint>"
                  c_int_array = "array<int>"
                  c_inner = { c_decimal = "decimal(5, 5)", c_bytes = bytes }
                }
              }
            }
"""


def test_every_type_has_its_declared_spark_type_and_value_domain(read_source):

    tables = read_source(job(ALL_TYPES, parallelism=2))
    assert list(tables) == ["fake"]  # no schema.table: the table is the output name
    df = tables["fake"]
    declared = {"c_string": "string", "c_boolean": "boolean", "c_tinyint": "tinyint", "c_smallint": "smallint",
                "c_int": "int", "c_bigint": "bigint", "c_float": "float", "c_double": "double",
                "c_decimal": "decimal(10, 3)", "c_null": "null", "c_bytes": "bytes", "c_date": "date",
                "c_time": "time", "c_timestamp": "timestamp", "c_array": "array<string>",
                "c_map": "map<string, array<int>>"}
    for name, type_string in declared.items():
        assert df.schema[name].dataType == parse_type(type_string).to_spark(), name
    row_type = df.schema["c_row"].dataType
    assert [f.name for f in row_type.fields] == ["c_map", "c_bool_map", "c_int_array", "c_inner"]
    assert row_type["c_map"].dataType == parse_type("map<string, map<string, string>>").to_spark()
    assert str(row_type["c_inner"].dataType) == "StructType([StructField('c_decimal', DecimalType(5,5), True), " \
        "StructField('c_bytes', BinaryType(), True)])"
    assert df.columns[-1] == ROW_KIND
    assert df.rdd.getNumPartitions() == 2

    rows = df.collect()  # 40 small rows: checked in Python, one Spark action
    assert len(rows) == 40  # row.num per reader × parallelism
    assert {r[ROW_KIND] for r in rows} == {0}

    def letters(value, length):
        return len(value) == length and value.isascii() and value.isalpha()

    assert all(letters(r.c_string, 7) for r in rows)
    assert len({r.c_string for r in rows}) == 40  # rows differ, across partitions too
    assert {r.c_boolean for r in rows} == {True, False}
    assert all(0 <= r.c_tinyint < 127 and 0 <= r.c_smallint < 32767 and 0 <= r.c_int < 2**31 - 1
               and 0 <= r.c_bigint < 2**63 - 1 for r in rows)
    assert all(0 <= r.c_float < 3.4028235e38 and 0 <= r.c_double < 1.7976931348623157e308 for r in rows)
    assert len({r.c_int for r in rows}) > 30 and len({r.c_double for r in rows}) > 30
    # decimal(10, 3): 7 random digits (leading zeros possible), a point, 3 random digits
    assert all(r.c_decimal.as_tuple().exponent == -3 and 0 <= r.c_decimal < 10**7 for r in rows)
    assert len({r.c_decimal for r in rows}) == 40 and max(r.c_decimal for r in rows) >= 1000
    assert all(r.c_null is None for r in rows)
    assert all(letters(bytes(r.c_bytes).decode(), 3) for r in rows)
    assert all(r.c_date.year == THIS_YEAR and 1 <= r.c_date.day <= 28 for r in rows)
    assert len({r.c_date.month for r in rows}) > 3
    assert all(isinstance(r.c_time, time) and r.c_time.microsecond == 0 for r in rows)
    assert len({r.c_time for r in rows}) > 30
    assert all(r.c_timestamp.year == THIS_YEAR and 1 <= r.c_timestamp.day <= 28
               and r.c_timestamp.microsecond == 0 for r in rows)
    assert all(len(r.c_array) == 4 and all(letters(x, 7) for x in r.c_array) for r in rows)
    assert all(len(r.c_map) == 3 and all(letters(k, 7) for k in r.c_map) for r in rows)  # no key collisions
    assert all(len(v) == 4 and all(x >= 0 for x in v) for r in rows for v in r.c_map.values())
    assert all(len(r.c_row.c_map) == 3 and all(len(m) == 3 for m in r.c_row.c_map.values()) for r in rows)
    # boolean keys collapse, as in a HashMap: at most two entries
    sizes = {len(r.c_row.c_bool_map) for r in rows}
    assert sizes <= {1, 2} and 2 in sizes
    assert all(set(r.c_row.c_bool_map) <= {True, False} for r in rows)
    assert all(len(r.c_row.c_int_array) == 4 for r in rows)
    assert all(0 <= r.c_row.c_inner.c_decimal < 1 and len(r.c_row.c_inner.c_bytes) == 3 for r in rows)


def test_values_differ_between_reads_and_sources(read_source):
    text = job('row.num = 5\nschema = { fields { s = string, n = bigint } }')
    first = {tuple(r) for r in one(read_source(text)).select("s", "n").collect()}
    second = {tuple(r) for r in one(read_source(text)).select("s", "n").collect()}
    assert len(first) == 5 and not first & second


def test_row_count_is_row_num_per_reader_whatever_the_splits(read_source):
    from pyspark.sql import functions as F

    df = one(read_source(job("""
            row.num = 7
            split.num = 3
            split.read-interval = 50
            schema = { fields { id = int } }
    """, parallelism=3)))
    assert df.rdd.getNumPartitions() == 3
    per_partition = sorted(r[1] for r in df.groupBy(F.spark_partition_id()).count().collect())
    assert per_partition == [7, 7, 7]


def test_ranges_are_half_open_and_templates_are_the_only_values(read_source):
    from pyspark.sql import functions as F

    df = one(read_source(job("""
            row.num = 300
            tinyint.min = 1
            tinyint.max = 3
            smallint.min = 10
            smallint.max = 12
            int { min = 20, max = 22 }
            bigint.min = 9223372036854775800
            bigint.max = 9223372036854775807
            float.min = 40.0
            float.max = 43.0
            double.min = 44
            double.max = 44
            string.template = ["tyrantlucifer", "hailin", "kris"]
            string.fake.mode = TEMPLATE
            int.fake.mode = range
            bytes.length = 0
            schema = {
              fields {
                t = tinyint, s = smallint, i = int, b = bigint, f = float, d = double, str = string, by = bytes
                arr = "array<tinyint>"
              }
            }
    """)))
    stats = df.agg(*[F.collect_set(c).alias(c) for c in ("t", "s", "i", "str")],
                   F.min("b"), F.max("b"), F.min("f"), F.max("f"), F.collect_set("d"),
                   F.max(F.length("by")), F.flatten(F.collect_set("arr"))).first()
    assert sorted(stats["t"]) == [1, 2] and sorted(stats["s"]) == [10, 11] and sorted(stats["i"]) == [20, 21]
    assert sorted(stats["str"]) == ["hailin", "kris", "tyrantlucifer"]
    assert stats[4] >= 9223372036854775800 and stats[5] <= 9223372036854775806
    assert stats[6] >= 40.0 and stats[7] < 43.0
    assert stats[8] == [44.0]  # min = max: always min
    assert stats[9] == 0
    assert set(stats[10]) == {1, 2}  # array elements follow the element type's range


def test_number_templates_and_date_time_templates(read_source):
    from pyspark.sql import functions as F

    df = one(read_source(job("""
            row.num = 200
            tinyint.template = [-3, 5]
            smallint.template = [300]
            int.template = ["7", 8]
            bigint.template = [9000000000]
            float.template = [1.5, 2.25]
            double.template = [0.125]
            date.year.template = [2020]
            date.month.template = [2]
            date.day.template = [28, 29]
            time.hour.template = [23]
            time.minute.template = [0, 30]
            time.second.template = [59]
            string.length = 2
            schema = {
              fields {
                t = tinyint, s = smallint, i = int, b = bigint, f = float, d = double
                dt = date, tm = time, ts = timestamp, str = string
              }
            }
    """)))
    sets = df.agg(*[F.sort_array(F.collect_set(c)).alias(c) for c in ("t", "s", "i", "b", "f", "d", "dt", "tm", "ts")],
                  F.min(F.length("str")), F.max(F.length("str"))).first()
    assert sets["t"] == [-3, 5] and sets["s"] == [300] and sets["i"] == [7, 8] and sets["b"] == [9000000000]
    assert sets["f"] == [1.5, 2.25] and sets["d"] == [0.125]
    assert sets["dt"] == [date(2020, 2, 28), date(2020, 2, 29)]
    assert sets["tm"] == [time(23, 0, 59), time(23, 30, 59)]
    assert {t.date() for t in sets["ts"]} == {date(2020, 2, 28), date(2020, 2, 29)}
    assert {(t.hour, t.minute, t.second) for t in sets["ts"]} == {(23, 0, 59), (23, 30, 59)}
    assert sets[-2] == sets[-1] == 2  # string.length (no template)


def test_columns_form_length_scale_and_default_values(read_source):
    from pyspark.sql import functions as F

    df = one(read_source(job("""
            row.num = 30
            schema = {
              table = "shop.orders"
              columns = [
                { name = id, type = bigint, defaultValue = 42 }
                { name = code, type = string, columnLength = 3 }
                { name = note, type = string }
                { name = price, type = double, columnScale = 2 }
                { name = ratio, type = float, columnScale = 1 }
                { name = day, type = date, defaultValue = "2024/05/06" }
                { name = created, type = timestamp, defaultValue = CURRENT_TIMESTAMP }
                { name = at, type = time, defaultValue = "12:30:15.5" }
                { name = flag, type = boolean, defaultValue = true }
                { name = raw, type = bytes, defaultValue = "AB" }
                { name = amount, type = "decimal(6, 2)", defaultValue = "12.345" }
                { name = tags, type = "array<int>", defaultValue = 3 }
              ]
            }
    """)))
    assert df.columns[:-1] == ["id", "code", "note", "price", "ratio", "day", "created", "at", "flag", "raw",
                               "amount", "tags"]
    r = df.agg(F.collect_set("id"), F.min(F.length("code")), F.max(F.length("code")), F.max(F.length("note")),
               F.bool_and(F.round("price", 2) == F.col("price")), F.count_distinct("price"),
               F.bool_and(F.abs(F.col("ratio") - F.round("ratio", 1)) < 1e-3), F.collect_set("day"),
               F.count_distinct("created"), F.min("created"), F.collect_set("at"), F.collect_set("flag"),
               F.collect_set("raw"), F.collect_set("amount"), F.collect_set("tags")).first()
    assert r[0] == [42]
    assert r[1] == r[2] == 3  # columnLength
    assert r[3] == 0  # the columns form's columnLength defaults to 0: empty strings, as in SeaTunnel
    assert r[4] and r[5] > 1 and r[6]
    assert r[7] == [date(2024, 5, 6)]
    assert r[8] == 1 and abs((datetime.now() - r[9]).total_seconds()) < 600
    assert r[10] == [time(12, 30, 15, 500000)]
    assert r[11] == [True] and r[12] == [bytearray(b"AB")] and r[13] == [Decimal("12.35")]
    assert r[14] == [[3, 3, 3, 3, 3]]  # a default fills every element


def test_explicit_rows_with_kinds_and_nested_values(read_source):
    rows = read_source(job("""
            row.num = 4
            split.num = 2
            schema = {
              table = "db.items"
              fields {
                c_array = "array<int>"
                c_map = "map<string, string>"
                c_int_map = "map<int, array<string>>"
                c_bytes = bytes
                c_time = time
                c_null = "null"
                c_row = {
                  c_string = string
                  c_boolean = boolean
                  c_tinyint = tinyint
                  c_smallint = smallint
                  c_int = int
                  c_bigint = bigint
                  c_float = float
                  c_double = double
                  c_decimal = "decimal(30, 8)"
                  c_date = date
                  c_timestamp = timestamp
                }
              }
            }
            rows = [
              {
                kind = INSERT
                fields = [[0, 1, 2], { k0 = v0 }, { "1" = [a, b] }, "aGVsbG8=", "01:02:03", null,
                          ["AAA", false, 1, 1, 333, 323232, 3.1, 9.33333, 99999.99999999, "2012-12-21",
                           "2012-12-21T12:34:56"]]
              }
              {
                kind = UPDATE_BEFORE
                fields = { c_row = { c_string = 7, c_int = "12", c_bigint = "-5", c_decimal = "1.005",
                                     c_date = "2012/12/21", c_timestamp = "20121221123456", c_float = "2.5" } }
              }
              { kind = UPDATE_AFTER, fields = { c_array = [], c_map = {}, c_time = "23:59:59.123456" } }
              { kind = DELETE, fields = [null, null, null, null, null, null,
                                         ["x", "true", "-1", "2", "3", "4", "5", "6", "2924137191386439303744.39292216",
                                          "2012.12.21",
                                          "2012-12-21 01:02:03.5"]] }
            ]
    """, parallelism=2))
    assert list(rows) == ["db.items"]
    df = rows["db.items"]
    assert df.rdd.getNumPartitions() == 2
    collected = df.collect()
    # 4 rows × 2 splits per reader (row.num 4 in chunks of 2) × 2 readers
    assert len(collected) == 16
    assert [r[ROW_KIND] for r in collected[:4]] == [0, 1, 2, 3]
    assert len({tuple(map(str, r)) for r in collected}) == 4
    first, second, third, fourth = collected[:4]
    assert first.c_array == [0, 1, 2] and first.c_map == {"k0": "v0"} and first.c_int_map == {1: ["a", "b"]}
    assert first.c_bytes == bytearray(b"hello") and first.c_time == time(1, 2, 3) and first.c_null is None
    assert tuple(first.c_row) == ("AAA", False, 1, 1, 333, 323232, pytest.approx(3.1), 9.33333,
                                  Decimal("99999.99999999"), date(2012, 12, 21), datetime(2012, 12, 21, 12, 34, 56))
    assert second.c_array is None and second.c_row.c_string == "7" and second.c_row.c_boolean is None
    assert (second.c_row.c_int, second.c_row.c_bigint, second.c_row.c_float) == (12, -5, 2.5)
    assert second.c_row.c_decimal == Decimal("1.00500000")
    assert second.c_row.c_date == date(2012, 12, 21)
    assert second.c_row.c_timestamp == datetime(2012, 12, 21, 12, 34, 56)
    assert third.c_array == [] and third.c_map == {} and third.c_time == time(23, 59, 59, 123456)
    assert third.c_row is None
    assert tuple(fourth.c_row)[:3] == ("x", True, -1)
    assert fourth.c_row.c_decimal == Decimal("2924137191386439303744.39292216")
    assert fourth.c_row.c_date == date(2012, 12, 21)
    assert fourth.c_row.c_timestamp == datetime(2012, 12, 21, 1, 2, 3, 500000)
    for name in ("c_array", "c_map", "c_int_map", "c_bytes", "c_time", "c_null"):
        assert df.schema[name].dataType == parse_type(dict(
            c_array="array<int>", c_map="map<string, string>", c_int_map="map<int, array<string>>",
            c_bytes="bytes", c_time="time", c_null="null")[name]).to_spark()


def test_explicit_rows_current_values_and_empty_rows(read_source):
    tables = read_source(job("""
            plugin_output = "events"
            schema = { fields { d = date, ts = timestamp, t = time, small = "decimal(5, 5)" } }
            rows = [{ kind = INSERT, fields = [current_date, CURRENT_TIMESTAMP, CURRENT_TIME, 0] }]
    """))
    (row,) = tables["events"].collect()
    now = datetime.now()
    assert row.d == now.date() and abs((now - row.ts).total_seconds()) < 600 and row.t is not None
    assert row.small == Decimal("0")

    empty = one(read_source(job("schema = { fields { a = int } }\nrows = []", parallelism=2)))
    assert empty.count() == 0 and empty.columns == ["a", ROW_KIND]
    assert empty.rdd.getNumPartitions() == 2  # every reader is there, with nothing to emit
    none = one(read_source(job("schema = { fields { a = int } }\nrow.num = 0", parallelism=3)))
    assert none.count() == 0 and none.rdd.getNumPartitions() == 3


def test_multi_table_one_dataframe_per_table_nothing_inherited(read_source):
    from pyspark.sql import functions as F

    tables = read_source(job("""
            row.num = 50
            string.template = ["outer"]
            plugin_output = "multi"
            tables_configs = [
              {
                row.num = 3
                schema = { table = "db.t1", fields { id = int, name = string } }
              }
              {
                schema = { table = "t2", fields { v = double } }
                rows = [{ kind = DELETE, fields = [1.5] }]
              }
            ]
    """, parallelism=2))
    assert list(tables) == ["db.t1", "t2"]
    t1, t2 = tables["db.t1"], tables["t2"]
    assert t1.columns == ["id", "name", ROW_KIND] and t2.columns == ["v", ROW_KIND]
    r = t1.agg(F.count(F.lit(1)), F.bool_and(F.length("name") == 5)).first()
    assert r[0] == 6 and r[1]  # its own row.num × parallelism; string.template not inherited
    assert [(x.v, x[ROW_KIND]) for x in t2.collect()] == [(1.5, 3), (1.5, 3)]
    assert t1.rdd.getNumPartitions() == 2


def test_table_identity_defaults(read_source):
    assert list(read_source(job('schema = { table = "a.b.c", fields { x = int } }'))) == ["a.b.c"]
    assert list(read_source(job('result_table_name = "legacy"\nschema = { fields { x = int } }'))) == ["legacy"]
    assert list(read_source(job("schema = { fields { x = int } }"))) == ["default"]


def test_schema_hook_gives_the_plan_its_schema(plan_of):
    plan = plan_of(job('schema = { fields { id = bigint, r = { a = "decimal(5, 2)" }, m = "map<string, int>" } }'))
    vertex = plan.pipelines[0].sources[0]
    assert vertex.schema == {"id": "bigint", "r": {"a": "decimal(5, 2)"}, "m": "map<string, int>"}
    multi = plan_of(job('tables_configs = [{ schema = { table = t, fields { a = int } } }]'))
    assert multi.pipelines[0].sources[0].schema is None


def test_run_job_counts_the_generated_rows(run_job):
    (metrics,) = run_job(job("""
            row.num = 6
            schema = { fields { id = bigint, tags = "array<string>", m = "map<int, boolean>" } }
    """, parallelism=2))
    assert metrics["read_count"] == 12 and metrics["write_count"] == 12


def problems_of(config_error, body: str, parallelism: int = 1) -> list:
    return config_error(job(body, parallelism)).problems


def test_missing_schema_and_bad_types_are_compile_errors(config_error):
    (p,) = problems_of(config_error, "row.num = 3")
    assert p.message == "FakeSource needs a schema: schema { fields { ... } }"
    assert p.key == "schema" and p.plugin == "source[0] FakeSource" and p.line == 4

    (p,) = problems_of(config_error, 'row.num = 3\nschema = { fields { a = "decimal(10)" } }')
    assert "decimal type should assign precision and scale" in p.message and p.key == "schema" and p.line == 6

    (p,) = problems_of(config_error, 'schema = { fields { a = "array<date>" } }')
    assert "unsupported array element type" in p.message

    (p,) = problems_of(config_error, 'schema = { fields { a = "decimal(3, 5)" } }')
    assert "scale <= precision" in p.message

    (p,) = problems_of(config_error, 'schema = { fields { a = int }, columns = [{ name = a, type = int }] }')
    assert "both [fields] and [columns]" in p.message


def test_option_ranges_and_values_are_checked_at_compile_time(config_error):
    problems = problems_of(config_error, """
            schema = { fields { a = int, d = date } }
            tinyint.min = -1
            int.min = 9
            int.max = 3
            float.max = 1e39
            row.num = -2
            split.num = 0
            string.length = x
            smallint.template = [1, 40000]
            date.month.template = [13]
            date.day.template = [31]
            int.fake.mode = TEMPLATE
            bigint.fake.mode = RANDOM
    """)
    found = {p.key: p.message for p in problems}
    assert found["tinyint.min"] == "tinyint.min should >= 0 and <= 127, not '-1'"
    assert "int.min (9) is greater than int.max (3)" in found["int.min"]
    assert "float.max should >= 0.0 and <=" in found["float.max"]
    assert "row.num must be a whole number >= 0" in found["row.num"]
    assert "split.num must be a whole number >= 1" in found["split.num"]
    assert "string.length" in found["string.length"]
    assert "40000 is out of the smallint range" in found["smallint.template"]
    assert "13 is not in [1, 12]" in found["date.month.template"]
    assert "does not exist" in found["date.day.template"]  # day 31 in a random month
    assert found["int.fake.mode"] == "int.template is required because int.fake.mode is TEMPLATE"
    assert "unknown mode 'RANDOM'" in found["bigint.fake.mode"]
    assert all(p.plugin == "source[0] FakeSource" and p.line is not None for p in problems)
    lines = {p.key: p.line for p in problems}
    assert lines["tinyint.min"] == 7 and lines["bigint.fake.mode"] == 18


def test_bad_rows_name_the_row_and_field(config_error):
    problems = problems_of(config_error, """
            schema = { fields { a = int, b = { c = date }, e = bytes, t = timestamp } }
            rows = [
              { kind = INSERT, fields = [1, { c = "2012-12-21" }, "aGk="] }
              { kind = insert, fields = [1] }
              { kind = INSERT, fields = { a = "x" } }
              { kind = INSERT, fields = [1, { c = "21/12/2012" }] }
              { kind = INSERT, fields = { e = "not base64!" } }
              { kind = INSERT, fields = { zz = 1 } }
              { fields = [1, null, null, null, 4] }
              { kind = DELETE, fields = [3000000000] }
              { kind = INSERT, fields = [1, { c = "2012-12-21" }, "aGk=", "2021-07-04T17:45:30.123456789"] }
              { kind = INSERT, fields = [1, { c = "2012-12-21" }, "aGk=", "2021-07-04T17:45:30.123456000"] }
            ]
    """)
    messages = [(p.key, p.message) for p in problems]
    assert ("rows[1].kind", "row 1: unknown kind 'insert': use one of INSERT, UPDATE_BEFORE, UPDATE_AFTER, "
            "DELETE (upper case)") in messages
    assert ("rows[2].fields.a", "row 2, field 'a': cannot read 'x' as int") in messages
    assert any(k == "rows[3].fields.b" and "row 3, field 'b' (b.c)" in m and "as a date" in m for k, m in messages)
    assert any(k == "rows[4].fields.e" and "not base64" in m for k, m in messages)
    assert any(k == "rows[5].fields" and "field 'zz' does not exist" in m for k, m in messages)
    assert any(k == "rows[6].kind" and "needs a kind" in m for k, m in messages)
    assert any(k == "rows[6].fields" and "5 values for 4 fields" in m for k, m in messages)
    assert any(k == "rows[7].fields.a" and "out of the int range" in m for k, m in messages)
    # nanoseconds are not an error (cut to the microseconds Spark holds, with a warning: the test below)
    assert not any(k.startswith(("rows[0]", "rows[8]", "rows[9]")) for k, _ in messages)
    assert all(p.line == 7 for p in problems)  # the rows option's line


def test_row_values_are_never_cut_silently(plan_of, read_source):
    """SeaTunnel's engine keeps 12.3456 in a decimal(10, 3) and nanoseconds (checked on Zeta 2.3.8); Spark's
    types hold neither: the value is rounded half up to the scale, or cut to the microsecond, and the plan
    says so with a warning located at the row (never silently)."""
    body = """
            schema = { fields { dec = "decimal(10, 3)", t = time, ts = timestamp } }
            rows = [
              { kind = INSERT, fields = ["12.3456", "17:45:30", "2024-03-10T10:00:00"] }
              { kind = INSERT, fields = ["12.3450", "17:45:30.1234567", "2024-03-10T10:00:00.123456789"] }
              { kind = INSERT, fields = ["12.3450", "17:45:30.123456000", "2024-03-10T10:00:00.5"] }
            ]
    """
    warnings = sorted((w["key"], w["message"]) for w in plan_of(job(body)).warnings)
    assert [k for k, _ in warnings] == ["rows[0].fields", "rows[1].fields", "rows[1].fields"]
    assert "12.3456 has more than 3 digits after the point: decimal(10, 3) holds 12.346" in warnings[0][1]
    assert all("has nanoseconds" in m and "SeaTunnel keeps" in m for _, m in warnings[1:])
    rows = sorted(tuple(r)[:3] for r in one(read_source(job(body))).collect())
    assert rows == [(Decimal("12.345"), time(17, 45, 30, 123456), datetime(2024, 3, 10, 10, 0, 0, 123456)),
                    (Decimal("12.345"), time(17, 45, 30, 123456), datetime(2024, 3, 10, 10, 0, 0, 500000)),
                    (Decimal("12.346"), time(17, 45, 30), datetime(2024, 3, 10, 10, 0))]


def test_multi_table_problems(config_error):
    problems = problems_of(config_error, """
            tables_configs = [
              { schema = { table = "db.t", fields { a = int } } }
              { schema = { table = "db.t", fields { b = int } }, row.num = -1 }
              { schema = { table = "a.b.c.d", fields { a = int } } }
            ]
    """)
    found = {p.key: p.message for p in problems}
    assert "table name: [db.t] must be unique" in found["tables_configs[1].schema.table"]
    assert "row.num must be a whole number" in found["tables_configs[1].row.num"]
    assert "must be table, database.table or database.schema.table" in found["tables_configs[2].schema.table"]
    assert all(p.line == 6 for p in problems)  # the tables_configs option's line

    problems = problems_of(config_error, """
            tables_configs = [
              { row.num = 1 }
              { schema = { table = "t", fields { a = "map<int>" } } }
            ]
    """)
    found = {p.key: p.message for p in problems}
    assert found["tables_configs[0].schema"] == "FakeSource needs a schema: schema { fields { ... } }"
    assert "a map type needs a key and a value type" in found["tables_configs[1].schema"]


def test_bad_default_values_are_compile_errors(config_error):
    (p,) = problems_of(config_error, """
            schema = { columns = [{ name = a, type = int }, { name = d, type = date, defaultValue = "someday" }] }
    """)
    assert p.key == "schema.columns[1].defaultValue" and "column 'd': defaultValue: cannot read 'someday'" in p.message


def test_read_rejects_a_bad_config_that_bypassed_the_compiler(spark, plan_of):
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    plan = plan_of(job("schema = { fields { a = int } }"))
    pipeline = plan.pipelines[0]
    vertex = replace(pipeline.sources[0], config={"schema": {"fields": {"a": "int"}}, "row.num": -1})
    with pytest.raises(RuntimeConfigError, match=r"option 'row\.num': row\.num must be a whole number >= 0"):
        CONNECTOR.read(RunContext(spark, plan, pipeline, "test-run"), vertex)
