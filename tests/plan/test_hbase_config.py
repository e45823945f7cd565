"""Hbase at compile time: SeaTunnel's required options and rules as located errors, the source's schema and
parallelism, the sink checked against its input's fields, the gateway's address, and the byte codec."""

from __future__ import annotations

import struct

import pytest

from airflow_provider_seatunnel.connectors.hbase.codec import CellError, decoder, encoder
from airflow_provider_seatunnel.connectors.hbase.datasource import deal
from airflow_provider_seatunnel.connectors.hbase.options import parse
from airflow_provider_seatunnel.spi.schema import parse_type

ZK = 'zookeeper_quorum = "zk1:2181,zk2:2181"'
SCHEMA = 'schema = { columns = [{ name = rowkey, type = string }, { name = "cf:age", type = int }] }'
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = bigint, name = string, d = date, v = int } } }'


def test_a_source_plans_its_schema_and_parallelism_and_a_sink_its_input(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ Hbase {{ plugin_output = "h", {ZK}, table = "ns:t", parallelism = 3, {SCHEMA} }} }}
        sink {{ Hbase {{ plugin_input = "h", {ZK}, table = "t2", rowkey_column = ["rowkey"],
                         family_name {{ all_columns = cf }} }} }}
    """)
    assert not plan.warnings
    source = plan.pipelines[0].vertices[0]
    assert source.schema == {"rowkey": "string", "cf:age": "int"} and source.parallelism == 3


@pytest.mark.parametrize("block, key, message", [
    (f'Hbase {{ plugin_output = "h", table = "t", {SCHEMA} }}', "zookeeper_quorum", "required"),
    (f'Hbase {{ plugin_output = "h", {ZK}, {SCHEMA} }}', "table", "required"),
    (f'Hbase {{ plugin_output = "h", {ZK}, table = "t" }}', "schema", "required"),
    (f'Hbase {{ plugin_output = "h", {ZK}, table = "t", schema = {{ fields {{ age = int }} }} }}', "schema",
     "ColumnFamily:Column"),
    (f'Hbase {{ plugin_output = "h", {ZK}, table = "t", schema = {{ fields {{ "cf:m" = "map<string, int>" }} }} }}',
     "schema", "cannot be read"),
    (f'Hbase {{ plugin_output = "h", {ZK}, table = "a:b:c", {SCHEMA} }}', "table", "namespace"),
    (f'Hbase {{ plugin_output = "h", {ZK}, table = "t", {SCHEMA}, thrift_gateway = "nohost" }}', "thrift_gateway",
     "host:port"),
])
def test_source_errors_are_located(config_error, block, key, message):
    error = config_error(f"source {{ {block} }}\nsink {{ Console {{ plugin_input = \"h\" }} }}")
    problem = error.problems[0]
    assert problem.key == key and message in str(error)


@pytest.mark.parametrize("options, key, message", [
    ('table = "t", family_name { all_columns = cf }', "rowkey_column", "required"),
    ('table = "t", rowkey_column = ["id"]', "family_name", "required"),
    ('table = "t", rowkey_column = ["nope"], family_name { all_columns = cf }', "rowkey_column", "not in the input"),
    ('table = "t", rowkey_column = ["id"], family_name { all_columns = cf }, version_column = "v"', "version_column",
     "not bigint"),
    ('table = "t", rowkey_column = ["id"], family_name { all_columns = cf }', "family_name",
     "does not support this column type"),
    ('table = "t", rowkey_column = ["id"], family_name { all_columns = "a:b" }', "family_name",
     "not a column family"),
    ('table = "t", rowkey_column = ["id"], family_name { all_columns = cf }, null_mode = none', "null_mode",
     "null_mode"),
])
def test_sink_errors_are_located(config_error, options, key, message):
    error = config_error(f'source {{ {FAKE} }}\nsink {{ Hbase {{ plugin_input = "f", {ZK}, {options} }} }}')
    assert any(p.key == key and message in p.message for p in error.problems), str(error)


def test_the_gateway_address():
    sink = {"zookeeper_quorum": "zk1:2181, zk2:2181", "table": "default:t", "rowkey_column": ["id"],
            "family_name": {"name": "a", "age": "b"}}
    o = parse(sink, "sink")
    assert o.gateway.hosts == ("zk1", "zk2") and o.gateway.port == 9090 and o.thrift_table == "t"
    assert (o.family_of("name"), o.family_of("age"), o.family_of("other")) == ("a", "b", "value")
    extra = parse({**sink, "hbase_extra_config": {"hbase.regionserver.thrift.ipaddress": "gw",
                                                  "hbase.regionserver.thrift.port": "9191",
                                                  "hbase.regionserver.thrift.framed": "true"}}, "sink")
    assert (extra.gateway.hosts, extra.gateway.port, extra.gateway.framed) == (("gw",), 9191, True)
    given = parse({**sink, "thrift_gateway": "10.1.1.1:9095", "family_name": {"all_columns": "cf"}}, "sink")
    assert (given.gateway.hosts, given.gateway.port, given.family_of("x")) == (("10.1.1.1",), 9095, "cf")


def test_the_codec_is_hbase_bytes_and_refuses_cells_of_the_wrong_size():
    cases = [("tinyint", -3, b"\xfd"), ("smallint", 300, struct.pack(">h", 300)), ("int", -7, struct.pack(">i", -7)),
             ("bigint", 2**40, struct.pack(">q", 2**40)), ("double", 1.25, struct.pack(">d", 1.25)),
             ("float", 0.5, struct.pack(">f", 0.5)), ("boolean", True, b"\xff"), ("boolean", False, b"\x00"),
             ("string", "é", "é".encode())]
    for kind, value, cell in cases:
        assert encoder(parse_type(kind))(value) == cell
        assert decoder(parse_type(kind))(cell) == value
    assert encoder(parse_type("array<int>"))([1, None, 3]) == b"1,null,3"
    assert encoder(parse_type("string"), "gbk")("中") == "中".encode("gbk")
    with pytest.raises(CellError):
        decoder(parse_type("int"))(b"\x00\x01")
    with pytest.raises(CellError):
        decoder(parse_type("boolean"))(b"\x00\x01")
    with pytest.raises(CellError):
        encoder(parse_type("date"))
    assert str(decoder(parse_type("timestamp"))(b"2024-01-02 03:04:05")) == "2024-01-02 03:04:05"


def test_regions_are_dealt_in_contiguous_runs_over_every_reader():
    assert deal([1, 2, 3, 4, 5], 3) == [[1, 2], [3, 4], [5]]
    assert deal([1], 3) == [[1], [], []]
