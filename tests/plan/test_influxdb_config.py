"""InfluxDB at compile time and its pure parts: SeaTunnel's job configs plan, the source's schema and the
plan's parallelism, located errors (required and bundled options, types, key fields), secrets kept out
of plans; the split ranges and queries; points in line protocol and answers converted to the declared types."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.influxdb import CONNECTOR
from airflow_provider_seatunnel.connectors.influxdb.options import Split, split_query, split_ranges
from airflow_provider_seatunnel.connectors.influxdb.points import PointWriter, convert, row_reader
from airflow_provider_seatunnel.spi.contract import ConnectionInfo
from airflow_provider_seatunnel.spi.errors import DataError

CONN = 'url = "http://127.0.0.1:8086", database = "test", username = "u", password = "s3cret-pass"'
SCHEMA = "schema = { fields { label = string, value = int, rt = string, time = bigint } }"
FAKE = ('FakeSource { plugin_output = "f", schema = { fields { label = string, v = double, n = int, '
        'when = timestamp, time = bigint, d = date } } }')


def test_seatunnels_examples_plan_with_schema_parallelism_and_no_secret(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ InfluxDB {{ plugin_output = "i", {CONN}, sql = "select label, value, rt, time from test",
                              upper_bound = 100, lower_bound = 1, partition_num = 4, split_column = "value",
                              {SCHEMA} }} }}
        sink {{ InfluxDB {{ plugin_input = "i", {CONN}, measurement = "sink", key_time = "time",
                            key_tags = ["label"], batch_size = 1 }} }}
    """)
    assert not plan.warnings
    source, sink = plan.pipelines[0].vertices
    assert source.schema == {"label": "string", "value": "int", "rt": "string", "time": "bigint"}
    assert source.parallelism == sink.parallelism == 3
    assert "s3cret-pass" not in json.dumps(plan.to_dict())
    assert CONNECTOR.capabilities.exactly_once and "password" in CONNECTOR.secrets


@pytest.mark.parametrize("section, options, key, message", [
    ("source", f'database = "d", sql = "select * from m", {SCHEMA}', "url", "'url' is required"),
    ("source", f'{CONN}, {SCHEMA}', "sql", "'sql' is required"),
    ("source", f'{CONN}, sql = "select * from m"', "schema", "'schema' is required"),
    ("source", f'{CONN}, sql = "select * from m", split_column = "value", {SCHEMA}', "lower_bound", "go together"),
    ("source", f'{CONN}, sql = "select * from m", split_column = "v", lower_bound = 5, upper_bound = 1, '
               f'partition_num = 2, {SCHEMA}', "upper_bound", "below lower_bound"),
    ("source", f'{CONN}, sql = "select * from m where a = 1 where b = 2", split_column = "v", lower_bound = 0, '
               f'upper_bound = 9, partition_num = 2, {SCHEMA}', "sql", "more than one where"),
    ("source", f'{CONN}, sql = "select * from m", schema = {{ fields {{ d = date }} }}', "schema", "type date"),
    ("source", 'url = "influx:8086", database = "d", sql = "select * from m", ' + SCHEMA, "url", "http://"),
    ("sink", 'url = "http://h:8086", database = "d", username = "u"', "password", "go together"),
    ("sink", 'url = "http://h:8086"', "database", "'database' is required"),
])
def test_bad_blocks_fail_at_their_key(config_error, section, options, key, message):
    block = f'InfluxDB {{ plugin_output = "i", {options} }}' if section == "source" else \
        f'InfluxDB {{ plugin_input = "f", {options} }}'
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "i" }' if section == "source" else block
    error = config_error(f"source {{ {source} }}\nsink {{ {sink} }}")
    problem = error.problems[0]
    assert problem.key == key and message in problem.message and problem.plugin.endswith("InfluxDB")


@pytest.mark.parametrize("options, message", [
    ('key_tags = ["nope"]', "key_tags names 'nope'"),
    ('key_time = "v"', "key_time 'v' is a double"),
    ('key_time = "time", key_tags = ["label", "d", "when"], measurement = "${table_name}"', None),
    ('key_time = "when", key_tags = ["label"]', "the field 'd' is a date"),
])
def test_a_sinks_key_fields_are_checked_against_its_input(plan_of, config_error, options, message):
    text = f"""source {{ {FAKE} }}
        sink {{ InfluxDB {{ plugin_input = "f", url = "http://h:8086", database = "d", {options} }} }}"""
    if message is None:
        assert not plan_of(text).warnings
    else:
        assert message in str(config_error(text))


def test_an_epoch_the_sink_reads_as_nanoseconds_is_a_warning(plan_of):
    plan = plan_of(f"""source {{ {FAKE} }}
        sink {{ InfluxDB {{ plugin_input = "f", url = "http://h:8086", database = "d", key_time = "time",
                            key_tags = ["d", "when"], epoch = "ms" }} }}""")
    assert any("read as nanoseconds" in str(w) for w in plan.warnings)


def test_split_ranges_cover_the_range_once():
    assert split_ranges(0, 99, 4) == (Split(0, 25), Split(25, 50), Split(50, 75), Split(75, 100))
    assert split_ranges(1, 10, 2) == (Split(1, 6), Split(6, 11))  # SeaTunnel's documented example
    # SeaTunnel gives [0,4) [2,6) [4,8) here: overlapping, and 8..10 never read
    assert split_ranges(0, 10, 3) == (Split(0, 4), Split(4, 8), Split(8, 11))
    assert split_ranges(5, 6, 4) == (Split(5, 6), Split(6, 7))
    for low, high, n in [(0, 10, 3), (-7, 100, 9), (3, 3, 2)]:
        covered = [v for s in split_ranges(low, high, n) for v in range(s.low, s.high)]
        assert covered == list(range(low, high + 1))


def test_split_queries_join_the_where_and_keep_trailing_clauses():
    s = Split(1, 6)
    assert split_query("select * from test where age > 0 and age < 10", "v", s) == \
        'select * from test WHERE ("v" >= 1 AND "v" < 6) AND (age > 0 and age < 10)'
    assert split_query("select a from source tz('Asia/Shanghai')", "v", s) == \
        "select a from source WHERE (\"v\" >= 1 AND \"v\" < 6) tz('Asia/Shanghai')"
    assert split_query("SELECT mean(x) FROM (SELECT x FROM m WHERE y = 'where') WHERE t > 0 GROUP BY time(1h) "
                       "LIMIT 5", "v", s) == ("SELECT mean(x) FROM (SELECT x FROM m WHERE y = 'where') WHERE "
                                              '("v" >= 1 AND "v" < 6) AND (t > 0) GROUP BY time(1h) LIMIT 5')


def test_points_are_line_protocol_as_seatunnel_types_them():
    names = ["label", "s", "d", "i", "b", "t"]
    writer = PointWriter("my m,x", names, ["string", "string", "double", "int", "boolean", "bigint"], "t",
                         ["label"], 1_000_000)
    assert writer.line(["a b,c=d", 'say "hi"\\', 1.5, 7, True, 12], 0) == \
        'my\\ m\\,x,label=a\\ b\\,c\\=d s="say \\"hi\\"\\\\",d=1.5,i=7i,b=true 12000000'
    assert writer.line([None, None, None, 1, None, 1], 0) == "my\\ m\\,x i=1i 1000000"  # nulls left out
    with pytest.raises(DataError, match="no non-null field"):
        writer.line(["a", None, None, None, None, 1], 0)
    with pytest.raises(DataError, match="key_time field 't' is null"):
        writer.line(["a", "s", 1.0, 1, True, None], 0)
    processing = PointWriter("m", ["x"], ["float"], None, [], 1)
    assert processing.line([0.1], 42) == "m x=0.1 42"
    with pytest.raises(DataError, match="nan"):
        processing.line([float("nan")], 42)


def test_answers_convert_to_the_declared_types():
    read = row_reader(["time", "host", "n", "f", "ok", "s"], ["bigint", "string", "smallint", "float", "boolean",
                                                             "string"], ["time", "n", "f", "ok", "s"], {"host": "h1"})
    assert read([5, 2, 2, "true", 3]) == (5, "h1", 2, 2.0, True, "3")
    with pytest.raises(DataError, match="not a smallint"):
        read([5, 40000, 2, "true", 3])
    with pytest.raises(DataError, match="no column 'nope'"):
        row_reader(["nope"], ["int"], ["time"], None)
    assert convert(2.0, "int", "x") == 2 and convert(None, "int", "x") is None


def test_a_connection_gives_url_and_credentials():
    got = CONNECTOR.connection_options(ConnectionInfo("c", "influxdb", host="tsdb", port=8087, schema="https",
                                                      login="u", password="p"))
    assert got == {"url": "https://tsdb:8087", "username": "u", "password": "p"}
    assert CONNECTOR.connection_options(ConnectionInfo("c", "http", host="http://x:1"))["url"] == "http://x:1"
    assert CONNECTOR.assets({"url": "http://u:pw@tsdb:8086/", "database": "d", "measurement": "m"}) == \
        ["influxdb://tsdb:8086/d/m"]
