"""Values in written files as SeaTunnel's engine writes them, and never cut: fractions of a second in
text, csv, json and xml, and read back whole (docs/parity.md, "Values")."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from airflow_provider_seatunnel.spi.rows import with_kind

from .test_localfile import data_files, sink_conf, sink_ctx, source, write

STAMPS = [(1, dt.datetime(2021, 7, 4, 17, 45, 30, 123000), dt.time(17, 45, 30, 500000)),
          (2, dt.datetime(2021, 7, 4, 17, 45, 30), dt.time(17, 45, 30)),
          (3, dt.datetime(2021, 7, 4, 17, 45, 30, 1), dt.time(0, 0)),
          (4, dt.datetime(2021, 7, 4, 17, 45, 0, 500000), dt.time(23, 59, 59, 123456)),
          (5, None, None)]
FIELDS = "id = int, ts = timestamp, tm = time"


def stamps(spark):
    return spark.createDataFrame(STAMPS, "id int, ts timestamp_ntz, tm time(6)").coalesce(1)


def written(spark, plan_of, out, **options) -> str:
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, **options))
    write(ctx, sink, {"t": with_kind(stamps(spark))})
    (only,) = data_files(out)
    return only.read_text()


def read_back(spark, plan_of, out, fmt: str, **options) -> list[tuple]:
    extra = "\n".join(f"{k} = {json.dumps(v)}" for k, v in options.items())
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "{fmt}"\n{extra}\n'
                                 f"schema = {{ fields {{ {FIELDS} }} }}")["default"]
    return [(r.id, r.ts, r.tm) for r in got.orderBy("id").collect()]


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_default_formats_keep_a_fraction_of_a_second_and_write_the_rest_as_seatunnel(fmt, spark, plan_of, tmp_path):
    text = written(spark, plan_of, tmp_path / fmt, file_format_type=fmt)
    # SeaTunnel writes yyyy-MM-dd HH:mm:ss and HH:mm:ss, cutting .123: a value without a fraction is
    # written as it writes it, one with a fraction keeps its digits (no trailing zeros)
    assert text.splitlines() == ["1,2021-07-04 17:45:30.123,17:45:30.5", "2,2021-07-04 17:45:30,17:45:30",
                                 "3,2021-07-04 17:45:30.000001,00:00:00", "4,2021-07-04 17:45:00.5,23:59:59.123456",
                                 "5,,"] if fmt == "csv" else [
        "1\x012021-07-04 17:45:30.123\x0117:45:30.5", "2\x012021-07-04 17:45:30\x0117:45:30",
        "3\x012021-07-04 17:45:30.000001\x0100:00:00", "4\x012021-07-04 17:45:00.5\x0123:59:59.123456", "5\x01\x01"]
    assert read_back(spark, plan_of, tmp_path / fmt, fmt) == STAMPS


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_a_format_set_is_honoured_exactly(fmt, spark, plan_of, tmp_path):
    text = written(spark, plan_of, tmp_path / fmt, file_format_type=fmt, field_delimiter=",",
                   datetime_format="yyyy-MM-dd HH:mm:ss", time_format="HH:mm:ss.SSS")
    # SeaTunnel's bytes, asked for: the set datetime_format has no fraction, the set time_format three digits
    assert text.splitlines()[:4] == ["1,2021-07-04 17:45:30,17:45:30.500", "2,2021-07-04 17:45:30,17:45:30.000",
                                     "3,2021-07-04 17:45:30,00:00:00.000", "4,2021-07-04 17:45:00,23:59:59.123"]


def test_json_writes_timestamps_and_times_as_iso_text_nested_too(spark, plan_of, tmp_path):
    df = spark.sql("""select 1 as id, timestamp_ntz'2021-07-04 17:45:30.123' as ts, cast('17:45:30.5' as time(6)) as tm,
                      array(timestamp_ntz'2020-02-06 05:03:12') as arr,
                      named_struct('at', timestamp_ntz'2020-02-06 05:03:00.000001', 'n', 1) as r,
                      map('k', cast('00:00:00' as time(6))) as m
                      union all select 2, null, null, null, null, null""")
    out = tmp_path / "json"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="json"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_text().splitlines() == [
        '{"id":1,"ts":"2021-07-04T17:45:30.123","tm":"17:45:30.5","arr":["2020-02-06T05:03:12"],'
        '"r":{"at":"2020-02-06T05:03:00.000001","n":1},"m":{"k":"00:00:00"}}',
        '{"id":2,"ts":null,"tm":null,"arr":null,"r":null,"m":null}']


def test_json_round_trip_keeps_microseconds(spark, plan_of, tmp_path):
    out = tmp_path / "json"
    text = written(spark, plan_of, out, file_format_type="json")
    assert '"ts":"2021-07-04T17:45:30.000001"' in text and '"ts":"2021-07-04T17:45:30"' in text
    assert read_back(spark, plan_of, out, "json") == STAMPS


def test_xml_and_partition_directories_write_java_text(spark, plan_of, tmp_path):
    out = tmp_path / "xml"
    text = written(spark, plan_of, out, file_format_type="xml")
    # Java's toString: seconds only when set, the fraction in groups of three digits
    for element in ("<ts>2021-07-04T17:45:30.123</ts>", "<tm>17:45:30.500</tm>", "<ts>2021-07-04T17:45:30.000001</ts>",
                    "<tm>00:00</tm>", "<ts>2021-07-04T17:45:00.500</ts>", "<tm>23:59:59.123456</tm>"):
        assert element in text
    parts = tmp_path / "parts"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(parts, file_format_type="csv", partition_by=["ts"]))
    write(ctx, sink, {"t": with_kind(stamps(spark))})
    names = sorted(p.parent.name for p in data_files(parts))
    assert [n.replace("%3A", ":") for n in names] == [  # ':' escaped as Hive escapes it
        "ts=2021-07-04T17:45:00.500", "ts=2021-07-04T17:45:30", "ts=2021-07-04T17:45:30.000001",
        "ts=2021-07-04T17:45:30.123", "ts=__HIVE_DEFAULT_PARTITION__"]


def columnar(out, fmt: str):
    import pyarrow.orc
    import pyarrow.parquet

    (only,) = data_files(out)
    return pyarrow.parquet.read_table(only) if fmt == "parquet" else pyarrow.orc.ORCFile(str(only)).read()


def instants(spark, millis: bool):
    at = dt.datetime(2021, 7, 4, 17, 45, 30, 123000 if millis else 123456)
    return spark.createDataFrame([(1, at, [at]), (2, None, None)], "id int, ts timestamp_ntz, arr array<timestamp_ntz>")


def test_parquet_timestamps_are_seatunnels_millis_instants(spark, plan_of, tmp_path):
    from pyspark.errors import PySparkException

    out = tmp_path / "ms"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="parquet"))
    write(ctx, sink, {"t": with_kind(instants(spark, millis=True).coalesce(1))})
    table = columnar(out, "parquet")
    assert str(table.schema.field("ts").type) == "timestamp[ms, tz=UTC]"  # Spark's own would be timestamp[us]
    assert str(table.schema.field("arr").type.value_type) == "timestamp[ms, tz=UTC]"
    assert spark.conf.get("spark.sql.parquet.outputTimestampType", None) in (None, "INT96")  # restored
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "parquet"')["default"]
    assert [(r.ts, r.arr) for r in got.orderBy("id").collect()] == [
        (dt.datetime(2021, 7, 4, 17, 45, 30, 123000), [dt.datetime(2021, 7, 4, 17, 45, 30, 123000)]), (None, None)]

    # microseconds are not cut to SeaTunnel's millis: the write fails, naming the field, the value and the option
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(tmp_path / "us", file_format_type="parquet"))
    with pytest.raises(PySparkException, match=r"field 'ts': the timestamp 2021-07-04 17:45:30.123456 has digits "
                                               r"under the millisecond .*parquet_timestamp_unit = \"MICROS\""):
        write(ctx, sink, {"t": with_kind(instants(spark, millis=False))})
    out = tmp_path / "micros"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="parquet", parquet_timestamp_unit="micros"))
    write(ctx, sink, {"t": with_kind(instants(spark, millis=False).coalesce(1))})
    table = columnar(out, "parquet")
    assert str(table.schema.field("ts").type) == "timestamp[us, tz=UTC]"
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "parquet"')["default"]
    assert sorted(r.ts for r in got.collect() if r.ts) == [dt.datetime(2021, 7, 4, 17, 45, 30, 123456)]


def test_parquet_tinyint_and_smallint_are_plain_int32_as_seatunnel(spark, plan_of, tmp_path):
    """SeaTunnel's parquet writer (an Avro schema) stores them as INT32 without the INT(8)/INT(16) annotation;
    orc keeps its own tinyint and smallint, as SeaTunnel's orc writer."""
    df = spark.createDataFrame([(-128, -32768, [127], (1, 2)), (None, None, None, None)],
                               "t tinyint, s smallint, a array<tinyint>, r struct<x: tinyint, y: smallint>")
    types = {}
    for fmt in ("parquet", "orc"):
        out = tmp_path / fmt
        ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt))
        write(ctx, sink, {"t": with_kind(df.coalesce(1))})
        table = columnar(out, fmt)
        types[fmt] = [str(table.schema.field(c).type) for c in ("t", "s", "a", "r")]
        assert table.column("t").to_pylist() == [-128, None] and table.column("r").to_pylist()[0] == {"x": 1, "y": 2}
    assert types["parquet"] == ["int32", "int32", "list<element: int32>", "struct<x: int32, y: int32>"]
    assert types["orc"] == ["int8", "int16", "list<item: int8>", "struct<x: int8, y: int16>"]


def test_a_wall_clock_time_the_session_zone_skips_fails_the_parquet_write(spark, plan_of, tmp_path):
    """With a session zone that has daylight saving, 02:30 on the spring-forward day does not exist: SeaTunnel
    writes it as the instant an hour later (03:30), silently; here the write fails, naming the field."""
    from pyspark.errors import PySparkException

    df = spark.createDataFrame([(1, dt.datetime(2024, 3, 10, 2, 30))], "id int, ts timestamp_ntz")
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(tmp_path / "gap", file_format_type="parquet"))
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        with pytest.raises(PySparkException, match=r"field 'ts': the timestamp .* does not exist in the session's "
                                                   r"time zone \(a skipped hour\)"):
            write(ctx, sink, {"t": with_kind(df)})
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def test_orc_timestamps_and_times_are_orc_timestamps(spark, plan_of, tmp_path):
    from pyspark.sql import functions as F

    out = tmp_path / "orc"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="orc"))
    df = instants(spark, millis=False).withColumn("tm", F.lit("17:45:30.5").cast("time(6)"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    table = columnar(out, "orc")
    assert [str(table.schema.field(c).type) for c in ("ts", "tm")] == ["timestamp[ns]"] * 2  # Spark's own: int64
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "orc"')["default"]
    assert sorted((r.ts, r.tm) for r in got.collect() if r.ts) == [  # a time reads back as SeaTunnel's does
        (dt.datetime(2021, 7, 4, 17, 45, 30, 123456), dt.datetime(1970, 1, 1, 17, 45, 30, 500000))]


def test_redis_and_http_json_write_timestamps_and_times_as_seatunnel():
    from airflow_provider_seatunnel.connectors.values import to_json

    row = {"ts": dt.datetime(2020, 2, 6, 5, 3, 12), "f": dt.datetime(2021, 7, 4, 17, 45, 30, 500000),
           "t": [dt.time(0, 0), dt.time(17, 45, 30, 1)], "d": dt.date(2020, 2, 6)}
    # Python's isoformat wrote .500000 (six digits); SeaTunnel's json writes the digits without trailing zeros
    assert to_json(row) == ('{"ts":"2020-02-06T05:03:12","f":"2021-07-04T17:45:30.5",'
                            '"t":["00:00:00","17:45:30.000001"],"d":"2020-02-06"}')


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_decimals_are_written_as_java_writes_a_big_decimal_and_read_back(fmt, spark, plan_of, tmp_path):
    from decimal import Decimal

    values = [(i, Decimal(v) if v else None) for i, v in
              [(1, "0.00000001"), (2, "0"), (3, "1.5"), (4, "-0.00000012"), (5, "0.000001"),
               (6, "-9999999999.99999999"), (7, None)]]
    df = spark.createDataFrame(values, "id int, d decimal(20,8)").coalesce(1)
    out = tmp_path / fmt
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt, field_delimiter=","))
    write(ctx, sink, {"t": with_kind(df)})
    (only,) = data_files(out)
    # BigDecimal.toString: scientific once the adjusted exponent is below -6 (1E-8, 0E-8, -1.2E-7), else plain
    # with the column's scale (1.50000000, 0.00000100)
    assert only.read_text().splitlines() == [f"{i},{t or ''}" for i, t in
                                             [(1, "1E-8"), (2, "0E-8"), (3, "1.50000000"), (4, "-1.2E-7"),
                                              (5, "0.00000100"), (6, "-9999999999.99999999"), (7, None)]]
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "{fmt}"\nfield_delimiter = ","\n'
                                 "schema = { fields { id = int, d = \"decimal(20, 8)\" } }")["default"]
    assert [(r.id, r.d) for r in got.orderBy("id").collect()] == values


def test_xml_decimals_are_java_big_decimal_text(spark, plan_of, tmp_path):
    from decimal import Decimal

    df = spark.createDataFrame([(1, Decimal("0.00000001")), (2, Decimal("1.5"))], "id int, d decimal(20,8)")
    out = tmp_path / "xml"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="xml"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    text = only.read_text()
    assert "<d>1E-8</d>" in text and "<d>1.50000000</d>" in text
