"""Cassandra at compile time (no server, no Spark): SeaTunnel's options and rules as located problems, the
plan's parallelism, the password kept out of plans, the connection's options, the source's token-range
queries and the type mapping."""

from __future__ import annotations

import itertools
import json

import pytest

from airflow_provider_seatunnel.connectors.cassandra import CONNECTOR as CASSANDRA
from airflow_provider_seatunnel.connectors.cassandra.runtime import split_queries, split_table, token_ranges
from airflow_provider_seatunnel.spi import ConnectionInfo

CONN = 'host = "127.0.0.1:9042", keyspace = "ks", username = "stu", password = "s3cret-pw"'


def job(source: str = "", sink: str = "") -> str:
    source = source or f'Cassandra {{ plugin_output = "c", {CONN}, cql = "select * from t", parallelism = 3 }}'
    sink = sink or f'Cassandra {{ plugin_input = "c", {CONN}, table = "dst", parallelism = 2 }}'
    return f'env {{ job.mode = "BATCH", parallelism = 1 }}\nsource {{ {source} }}\nsink {{ {sink} }}\n'


def test_a_job_plans_with_its_parallelism_and_no_password(plan_of):
    plan = plan_of(job())
    source, sink = plan.pipelines[0].vertices
    assert (source.plugin, source.parallelism, sink.parallelism) == ("Cassandra", 3, 2)
    assert "s3cret-pw" not in json.dumps(plan.to_dict())
    assert CASSANDRA.can_run("source") and CASSANDRA.can_run("sink") and not CASSANDRA.capabilities.exactly_once
    assert "password" in CASSANDRA.secrets and {"keyspace", "table", "cql"} <= set(CASSANDRA.identity)
    assert CASSANDRA.assets({"host": "a:9042,b:9042", "keyspace": "ks", "table": "t"}) == ["cassandra://a:9042/ks.t"]


@pytest.mark.parametrize(("block", "key", "text"), [
    ('keyspace = "ks", table = "t"', "host", "'host' is required"),
    ('host = "h:9042", table = "t"', "keyspace", "'keyspace' is required"),
    ('host = "h:9042", keyspace = "ks"', "table", "'table' is required"),
    ('host = "h:99999", keyspace = "ks", table = "t"', "host", "out of range"),
    ('host = "h:9042", keyspace = "ks", table = "t", username = "u"', "password", "go together"),
    ('host = "h:9042", keyspace = "ks", table = "t", consistency_level = "QUORUMS"', "consistency_level", "QUORUM"),
    ('host = "h:9042", keyspace = "ks", table = "t", batch_type = "COUNTER"', "batch_type", "counter"),
    ('host = "h:9042", keyspace = "ks", table = "t", batch_size = 0', "batch_size", "0"),
    ('host = "h:9042", keyspace = "ks", table = "t", fields = ["a", "a"]', "fields", "twice"),
])
def test_sink_rules_are_located_errors(config_error, block, key, text):
    err = config_error(job(sink=f'Cassandra {{ plugin_input = "c", {block} }}'))
    problem = err.problems[0]
    assert (problem.plugin, problem.key) == ("sink[0] Cassandra", key) and text in str(err)


def test_seatunnels_own_example_plans(plan_of):
    # blank credentials are no credentials (SeaTunnel's e2e config), async_write as a string
    plan_of(job(source='Cassandra { plugin_output = "c", host = "cassandra:9042", username = "", password = "", '
                       'datacenter = "datacenter1", keyspace = "test", cql = "select * from source_table" }',
                sink='Cassandra { plugin_input = "c", host = "cassandra:9042", username = "", password = "", '
                     'keyspace = "test", async_write = "true", table = "sink_table" }'))


def test_the_connection_gives_hosts_credentials_keyspace_and_datacenter():
    conn = ConnectionInfo("c", "cassandra", host="n1, n2:9043", port=9142, schema="ks", login="u", password="p",
                          extra={"datacenter": "dc2"})
    assert CASSANDRA.connection_options(conn) == {"host": "n1:9142,n2:9043", "username": "u", "password": "p",
                                                  "keyspace": "ks", "datacenter": "dc2"}
    assert CASSANDRA.takes_default_connection({"keyspace": "ks"})
    assert not CASSANDRA.takes_default_connection({"host": "h:1"})


def test_a_conn_id_block_plans_without_host(plan_of):
    plan = plan_of(job(sink='Cassandra { plugin_input = "c", cassandra_conn_id = "cass", table = "t" }'))
    assert plan.pipelines[0].vertices[1].plugin == "Cassandra"


def test_token_ranges_cover_the_ring_once():
    ranges = token_ranges(4)
    assert ranges[0][0] == -(2 ** 63) and ranges[-1][1] == 2 ** 63 - 1
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))


@pytest.mark.parametrize(("cql", "split"), [
    ("select * from t", True),
    ('SELECT a, "B" FROM ks.t WHERE c = 1 ALLOW FILTERING;', True),
    ("select * from t where id = 3", False),           # the partition key restricted
    ("select * from t limit 10", False),
    ("select count(*) from t", False),
    ("select * from t where c > ? allow filtering", False),
    ("select json * from t", False),
])
def test_only_plain_selects_split_by_token(cql, split):
    queries = split_queries(cql, ["id"], 3)
    assert len(queries) == 3
    if split:
        assert all(q["cql"].count("token(id)") == 2 and len(q["bounds"]) == 2 for q in queries)
        assert ">= ?" in queries[0]["cql"] and "> ?" in queries[1]["cql"]
        if "ALLOW" in cql:
            assert queries[1]["cql"].endswith("ALLOW FILTERING") and "AND c = 1" in queries[1]["cql"]
    else:
        assert queries[0] == {"cql": cql, "bounds": []} and all(q["cql"] is None for q in queries[1:])


def test_table_names_as_cassandra_keeps_them():
    assert split_table("T", "ks") == ("ks", "t")
    assert split_table('Other."MixedCase"', "ks") == ("other", "MixedCase")


def test_seatunnels_type_mapping():
    from cassandra import cqltypes as c

    from airflow_provider_seatunnel.connectors.cassandra.types import UnsupportedType, seatunnel_type

    def parsed(name):
        return c.lookup_casstype(name)

    expected = {"UTF8Type": "string", "IntegerType": "string", "UUIDType": "string", "InetAddressType": "string",
                "ByteType": "tinyint", "ShortType": "smallint", "Int32Type": "int", "LongType": "bigint",
                "CounterColumnType": "bigint", "FloatType": "float", "DecimalType": "double", "BooleanType": "boolean",
                "SimpleDateType": "date", "TimeType": "time", "TimestampType": "timestamp", "BytesType": "array<tinyint>",
                "ListType(Int32Type)": "array<int>", "SetType(UTF8Type)": "array<string>",
                "MapType(UTF8Type, LongType)": "map<string, bigint>"}
    assert {k: seatunnel_type(parsed(k)) for k in expected} == expected
    for unsupported in ("DurationType", "ListType(TimestampType)", "TupleType(Int32Type)"):
        with pytest.raises(UnsupportedType):
            seatunnel_type(parsed(unsupported))


def test_values_convert_both_ways_by_column_type():
    import datetime as dt
    import decimal
    import uuid

    from cassandra import cqltypes as c
    from cassandra.util import Date, Time

    from airflow_provider_seatunnel.connectors.cassandra.types import null_value, reader, writer

    def t(name):
        return c.lookup_casstype(name)

    assert reader(t("DecimalType"))(decimal.Decimal("1.25")) == 1.25
    assert reader(t("IntegerType"))(10 ** 30) == str(10 ** 30)
    assert reader(t("SetType(UTF8Type)"))({"b", "a"}) == ["a", "b"]
    assert reader(t("TimeType"))(Time(dt.time(1, 2, 3, 4000))) == dt.time(1, 2, 3, 4000)
    assert reader(t("SimpleDateType"))(Date(dt.date(2024, 5, 1))) == dt.date(2024, 5, 1)
    assert reader(t("MapType(UTF8Type, UUIDType)"))({"k": uuid.UUID(int=1)}) == {"k": str(uuid.UUID(int=1))}
    inet = reader(t("InetAddressType"))  # as Java's getHostAddress writes an address
    assert [inet(a) for a in ("::1", "2001:db8::ff00:42:8329", "::ffff:10.0.0.1", "10.0.0.1")] == [
        "0:0:0:0:0:0:0:1", "2001:db8:0:0:0:ff00:42:8329", "10.0.0.1", "10.0.0.1"]
    assert [null_value(t(n)) for n in ("ListType(UTF8Type)", "SetType(Int32Type)", "MapType(UTF8Type, Int32Type)",
                                       "Int32Type")] == [[], [], {}, None]
    assert writer(t("UUIDType"))(str(uuid.UUID(int=7))) == uuid.UUID(int=7)
    assert writer(t("DecimalType"))(0.1) == decimal.Decimal("0.1")
    assert writer(t("SetType(Int32Type)"))([1, 1, 2]) == {1, 2}
    assert writer(t("TimestampType"))(dt.date(2024, 5, 1)) == dt.datetime(2024, 5, 1)
    for name, bad in (("Int32Type", 1.5), ("Int32Type", "x"), ("DoubleType", "1"), ("UTF8Type", b"x")):
        with pytest.raises((TypeError, ValueError)):
            writer(t(name))(bad)


def test_a_blob_reads_as_signed_bytes_and_writes_back_from_either_form():
    from cassandra import cqltypes as c

    from airflow_provider_seatunnel.connectors.cassandra.types import reader, writer

    blob = c.lookup_casstype("BytesType")
    assert reader(blob)(b"\xca\xfe\x01") == [-54, -2, 1]  # as SeaTunnel's array<tinyint>
    assert writer(blob)([-54, -2, 1]) == writer(blob)(b"\xca\xfe\x01") == b"\xca\xfe\x01"
    with pytest.raises(ValueError, match="300 is not a byte"):
        writer(blob)([300])
    with pytest.raises(TypeError):
        writer(blob)("text")
