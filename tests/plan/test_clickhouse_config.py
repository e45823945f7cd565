"""Clickhouse at compile time and its pure parts: SeaTunnel's job configs plan at the plan's parallelism with no
secret in the plan, located errors (required and bundled options, host, settings, upsert's key), ClickHouse's
types as SeaTunnel maps them, values read back and written as JSON, and the error classes of the HTTP
interface's answers."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from airflow_provider_seatunnel.connectors.clickhouse import CONNECTOR
from airflow_provider_seatunnel.connectors.clickhouse.client import ClickhouseError, error_of
from airflow_provider_seatunnel.connectors.clickhouse.types import json_lines, row_reader, seatunnel_type
from airflow_provider_seatunnel.spi.contract import ConnectionInfo
from airflow_provider_seatunnel.spi.errors import DataError, RuntimeConfigError

CONN = 'host = "ch1:8123,ch2", database = "default", username = "default", password = "s3cret-pass"'
ONE_HOST = CONN.replace(",ch2", "")
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { pk_id = bigint, name = string, score = int } } }'


def test_seatunnels_examples_plan_with_parallelism_and_no_secret(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 3 }}
        source {{ Clickhouse {{ plugin_output = "c", {CONN}, sql = "select * from source_table" }} }}
        sink {{ Clickhouse {{ plugin_input = "c", {ONE_HOST}, table = "sink_table", primary_key = "pk_id",
                              support_upsert = true, allow_experimental_lightweight_delete = true,
                              clickhouse.config = {{ max_execution_time = 60 }} }} }}
    """)
    assert not plan.warnings
    source, sink = plan.pipelines[0].vertices
    assert source.parallelism == sink.parallelism == 3
    assert "s3cret-pass" not in json.dumps(plan.to_dict())
    assert CONNECTOR.capabilities.exactly_once and "password" in CONNECTOR.secrets
    assert CONNECTOR.can_run("source") and CONNECTOR.can_run("sink")


@pytest.mark.parametrize("section, options, key, message", [
    ("source", 'database = "d", sql = "select 1", username = "u", password = "p"', "host", "'host' is required"),
    ("source", 'host = "h:8123", database = "d", username = "u", password = "p"', "sql", "'sql' is required"),
    ("source", 'host = "h:8123", database = "d", sql = "select 1", password = "p"', "username",
     "username and password go together"),
    ("source", 'host = "h:8123", database = "d", sql = "select 1"', "username", "'username' is required"),
    ("source", 'host = "http://h:8123", database = "d", sql = "select 1", username = "u", password = "p"', "host",
     "not host:port"),
    ("source", 'host = "h:8123", database = "d", sql = "select 1", username = "u", password = "p", '
               'clickhouse.config = { database = "x" }', "clickhouse.config", "not a setting"),
    ("sink", 'host = "h:8123", database = "d", table = "t", username = "u"', "password", "go together"),
    ("sink", 'host = "h:8123", database = "d"', "table", "'table' is required"),
    ("sink", 'host = "h:8123", database = "d", table = "t", support_upsert = true', "primary_key",
     "needs primary_key"),
    ("sink", 'host = "h:99999", database = "d", table = "t"', "host", "not host:port"),
    ("sink", 'host = "h:8123", database = "d", table = "t", bulk_size = 0', "bulk_size", ""),
])
def test_bad_blocks_fail_at_their_key(config_error, section, options, key, message):
    block = f'Clickhouse {{ plugin_output = "c", {options} }}' if section == "source" else \
        f'Clickhouse {{ plugin_input = "f", {options} }}'
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "c" }' if section == "source" else block
    error = config_error(f"source {{ {source} }}\nsink {{ {sink} }}")
    problem = error.problems[0]
    assert problem.key == key and message in problem.message and problem.plugin.endswith("Clickhouse")


def test_a_primary_key_the_input_lacks_fails_and_sharding_key_alone_warns(config_error, plan_of):
    sink = 'Clickhouse { plugin_input = "f", host = "h:8123", database = "d", table = "t", '
    error = config_error(f'source {{ {FAKE} }}\nsink {{ {sink} primary_key = "id" }} }}')
    assert error.problems[0].key == "primary_key" and "not an input field" in error.problems[0].message
    plan = plan_of(f'source {{ {FAKE} }}\nsink {{ {sink} sharding_key = "pk_id" }} }}')
    assert any("split_mode" in str(w) for w in plan.warnings)


def test_a_sink_with_several_hosts_warns_that_it_writes_through_the_first(plan_of):
    """A sink's bookkeeping must stay on one server for every attempt: it never fails over, and says so."""
    plan = plan_of(f'''source {{ Clickhouse {{ plugin_output = "c", {CONN}, sql = "select 1" }} }}
                       sink {{ Clickhouse {{ plugin_input = "c", {CONN}, table = "t" }} }}''')
    found = [w for w in plan.warnings if "first host" in str(w)]
    assert len(found) == 1 and "ch1:8123" in str(found[0]) and "sink" in str(found[0]).lower()


def test_a_connection_gives_host_credentials_and_database():
    conn = ConnectionInfo("ch", "clickhouse", host="db.example", port=18123, schema="analytics", login="u",
                          password="pw")
    assert CONNECTOR.connection_options(conn) == {"host": "db.example:18123", "username": "u", "password": "pw",
                                                  "database": "analytics"}
    assert CONNECTOR.takes_default_connection({"database": "d"}) and not CONNECTOR.takes_default_connection(
        {"host": "h:1"})
    assert CONNECTOR.assets({"host": "h1:8123,h2:8123", "database": "d", "table": "t"}) == ["clickhouse://h1:8123/d/t"]


@pytest.mark.parametrize("ch_type, expected", [
    ("Int8", "tinyint"), ("UInt8", "smallint"), ("Int16", "smallint"), ("UInt16", "int"), ("Int32", "int"),
    ("UInt32", "bigint"), ("Int64", "bigint"), ("UInt64", "bigint"), ("Float32", "float"), ("Float64", "double"),
    ("Decimal(20, 4)", "decimal(20, 4)"), ("Decimal64(3)", "decimal(18, 3)"), ("Decimal256(2)", "decimal(38, 2)"),
    ("Bool", "boolean"), ("Date32", "date"), ("DateTime('UTC')", "timestamp"), ("DateTime64(6, 'UTC')", "timestamp"),
    ("Nullable(String)", "string"), ("LowCardinality(Nullable(String))", "string"), ("FixedString(3)", "string"),
    ("UUID", "string"), ("Enum8('a' = 1, 'b,c' = 2)", "string"), ("Int256", "string"), ("IntervalDay", "bigint"),
    ("Array(Nullable(Int32))", "array<int>"), ("Map(String, Array(Float64))", "map<string, array<double>>"),
])
def test_clickhouse_types_map_as_seatunnel_maps_them(ch_type, expected):
    assert seatunnel_type(ch_type) == expected


def test_unreadable_types_and_values_fail_deterministically():
    with pytest.raises(RuntimeConfigError, match="Tuple"):
        seatunnel_type("Tuple(a Int32, b String)")
    read = row_reader(["UInt64", "Decimal(38, 10)", "DateTime64(6)", "Nullable(Date)", "Map(String, Int64)",
                       "Float64", "Bool"])
    assert read(["18", "123456789012345678.0123456789", "2024-01-02 03:04:05.5", None, {"k": "7"}, "inf", True]) == (
        18, decimal.Decimal("123456789012345678.0123456789"), dt.datetime(2024, 1, 2, 3, 4, 5, 500000), None,
        {"k": 7}, float("inf"), True)
    with pytest.raises(DataError, match="does not fit a bigint"):
        read(["18446744073709551615", "0", "2024-01-01 00:00:00", None, {}, "0", False])


def test_rows_are_written_as_json_each_row():
    body = json_lines(["a", "b", "c", "d", "e"], [(dt.datetime(2024, 1, 2, 3, 4, 5, 6), decimal.Decimal("1.50"),
                                                   b"raw", [dt.date(2024, 1, 1)], {"k": None})])
    assert json.loads(body) == {"a": "2024-01-02 03:04:05.000006", "b": "1.50", "c": "raw", "d": ["2024-01-01"],
                                "e": {"k": None}}


@pytest.mark.parametrize("status, text, kind", [
    (401, "Code: 516. DB::Exception: u: Authentication failed. (AUTHENTICATION_FAILED)", RuntimeConfigError),
    (404, "Code: 60. DB::Exception: Table d.t does not exist. (UNKNOWN_TABLE)", RuntimeConfigError),
    (400, "Code: 62. DB::Exception: Syntax error: failed at position 1. (SYNTAX_ERROR)", DataError),
    (500, "Code: 27. DB::Exception: Cannot parse input. (CANNOT_PARSE_INPUT_ASSERTION_FAILED)", DataError),
    (500, "Code: 252. DB::Exception: Too many parts (300). (TOO_MANY_PARTS)", ClickhouseError),
    (500, "Code: 241. DB::Exception: Memory limit (total) exceeded. (MEMORY_LIMIT_EXCEEDED)", ClickhouseError),
    (502, "Bad Gateway", ClickhouseError),
])
def test_errors_are_classed_by_their_code(status, text, kind):
    error = error_of(status, text, "h:8123", "cannot run")
    assert type(error) is kind and "h:8123" in str(error)
