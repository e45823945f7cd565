"""The StarRocks and SelectDBCloud sinks at compile time and its load text (no server): SeaTunnel's options plan at the plan's
parallelism without the password, SeaTunnel's rules are located errors, the source still plans as not
runnable, credentials come from a connection, and rows encode as SeaTunnel's serializers write them (json
array, csv rows each ending with the row delimiter, ``__op`` with enable_upsert_delete)."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json

from airflow_provider_seatunnel.connectors.starrocks import CONNECTOR as STARROCKS
from airflow_provider_seatunnel.connectors.starrocks.options import CREATE_TEMPLATE, parse
from airflow_provider_seatunnel.connectors.starrocks.sink import starrocks_type
from airflow_provider_seatunnel.connectors.starrocks.writer import encoder_of, headers_of
from airflow_provider_seatunnel.connectors.streamload.sink import create_statement
from airflow_provider_seatunnel.spi import ConnectionInfo
from airflow_provider_seatunnel.spi.errors import DataError
from airflow_provider_seatunnel.spi.registry import get_connector

SOURCE = 'source { FakeSource { plugin_output = "a", row.num = 3, schema = { fields { id = bigint } } } }'
BLOCK = ('nodeUrls = ["fe1:8030", "fe2:8030"], base-url = "jdbc:mysql://fe1:9030/test", username = "root", '
         'password = "st4r-s3cret", database = "test"')


def test_a_job_plans_at_the_plans_parallelism_without_its_password(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        {SOURCE}
        sink {{ StarRocks {{ plugin_input = "a", {BLOCK}, table = "t_${{table_name}}", parallelism = 3,
                             batch_max_rows = 100, max_retries = 3, starrocks.config = {{ format = "JSON",
                             strip_outer_array = true }} }} }}
    """)
    assert not plan.warnings, plan.warnings
    sink = next(v for p in plan.pipelines for v in p.vertices if v.kind == "sink")
    assert sink.parallelism == 3 and "st4r-s3cret" not in json.dumps(plan.to_dict())
    assert get_connector("STARROCKS") is STARROCKS and STARROCKS.capabilities.exactly_once
    assert not get_connector("StarRocks", "source").can_run("source")  # the source: known, not runnable here


def test_seatunnels_rules_are_located_errors(config_error):
    def first(sink: str):
        return config_error(f"{SOURCE}\nsink {{ StarRocks {{ {sink} }} }}").problems[0]

    assert first(BLOCK.replace(', database = "test"', "")).key == "database"
    assert first(BLOCK.replace('"fe1:8030", ', '"fe1", ')).key == "nodeUrls"
    problem = first(BLOCK.replace("jdbc:mysql://fe1:9030/test", "http://fe1:9030"))
    assert problem.key == "base-url" and "JDBC URL" in problem.message
    assert first(BLOCK + ', starrocks.config = { format = "parquet" }').key == "starrocks.config"
    assert first(BLOCK + ', starrocks.config = { label = "mine" }').key == "starrocks.config"  # set by the sink
    assert first(BLOCK + ', data_save_mode = "CUSTOM_PROCESSING"').key == "custom_sql"
    problem = first(BLOCK + ', schema_save_mode = "CREATE_WHEN_MISSING"')
    assert problem.key == "schema_save_mode" and problem.line == 2


def test_credentials_from_a_connection_and_the_options_defaults():
    conn = ConnectionInfo(conn_id="starrocks_default", conn_type="starrocks", host="fe.example", port=8030,
                          login="loader", password="pw", extra={"query_port": "19030"})
    options = STARROCKS.connection_options(conn)
    assert options == {"nodeUrls": ["fe.example:8030"], "base-url": "jdbc:mysql://fe.example:19030/",
                       "username": "loader", "password": "pw"}
    parsed = parse({**options, "database": "d"})
    assert parsed.endpoint is not None and parsed.endpoint.mysql_host == "fe.example"
    assert parsed.endpoint.query_port == 19030 and "pw" not in repr(parsed.endpoint)
    assert parsed.format == "json" and parsed.column_separator == "\t" and parsed.max_retries == 3
    assert STARROCKS.takes_default_connection({}) and not STARROCKS.takes_default_connection({"nodeUrls": ["x:1"]})
    assert parse({**options, "database": "d", "base-url": "jdbc:mysql://h"}).endpoint.query_port == 9030


def test_the_create_template_and_the_load_text():
    ddl = create_statement(CREATE_TEMPLATE, "d", "t", [("id", "BIGINT"), ("name", "STRING")], ["id"])
    assert ddl.startswith("CREATE TABLE IF NOT EXISTS `d`.`t` (\n`id` BIGINT,\n`name` STRING\n) ENGINE=OLAP")
    assert "PRIMARY KEY (`id`)" in ddl and "DISTRIBUTED BY HASH (`id`)" in ddl
    from pyspark.sql.types import DecimalType, MapType, StringType, TimestampType

    assert [starrocks_type(t) for t in (DecimalType(10, 2), TimestampType(), MapType(StringType(), StringType()))] \
        == ["Decimal(10, 2)", "DATETIME", "JSON"]
    spec = {"columns": ["id", "ts", "price", "ok", "name", "raw"], "format": "csv", "column_separator": ",",
            "row_delimiter": "\n", "headers": {"format": "csv", "column_separator": ","}, "upsert_delete": True}
    row = [1, dt.datetime(2024, 1, 2, 3, 4, 5, 250000), decimal.Decimal("1.50"), True, None, b"ab"]
    out = io.BytesIO()
    encoder = encoder_of(spec)
    assert encoder.write([(row, 0), (row, 3)], out) == 2
    assert out.getvalue() == (b"1,2024-01-02 03:04:05.250000,1.50,true,\\N,ab,0\n"
                              b"1,2024-01-02 03:04:05.250000,1.50,true,\\N,ab,1\n")
    headers = headers_of(spec, encoder)
    assert headers["columns"] == "`id`,`ts`,`price`,`ok`,`name`,`raw`,`__op`" and headers["format"] == "CSV"
    json_spec = {**spec, "format": "json", "headers": {"format": "json"}, "upsert_delete": False}
    out = io.BytesIO()
    encoder = encoder_of(json_spec)
    encoder.write([(row, 0), (row, 2)], out)
    assert json.loads(out.getvalue())[1] == {"id": 1, "ts": "2024-01-02 03:04:05.250000", "price": "1.50",
                                             "ok": "true", "name": None, "raw": "ab"}
    assert headers_of(json_spec, encoder)["strip_outer_array"] == "true" and "columns" not in headers_of(
        json_spec, encoder)
    for kind, values in ((3, row), (0, [*row[:5], b"\xff"])):
        try:
            encoder.encode(values, kind)
            raise AssertionError("a DELETE row without enable_upsert_delete, or bytes not UTF-8, must fail")
        except DataError as e:  # deterministic: a retry would fail the same way
            assert "enable_upsert_delete" in str(e) or "UTF-8" in str(e)


SELECTDB = ('load-url = "wh:8080", jdbc-url = "wh:9030", cluster-name = "c1", username = "admin", '
            'password = "s3lect-s3cret", table.identifier = "db.t"')


def test_selectdb_plans_and_its_rules_are_located_errors(plan_of, config_error):
    from airflow_provider_seatunnel.connectors.selectdb import CONNECTOR as SELECTDB_CONNECTOR
    from airflow_provider_seatunnel.connectors.selectdb.copy import copy_sql
    from airflow_provider_seatunnel.connectors.selectdb.options import parse as selectdb_parse

    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        {SOURCE}
        sink {{ SelectDBCloud {{ plugin_input = "a", {SELECTDB}, sink.enable-delete = true,
                                 selectdb.config = {{ file.type = "json" }} }} }}
    """)
    assert not plan.warnings and "s3lect-s3cret" not in json.dumps(plan.to_dict())
    assert get_connector("selectdbcloud") is SELECTDB_CONNECTOR and SELECTDB_CONNECTOR.capabilities.exactly_once

    def first(sink: str):
        return config_error(f"{SOURCE}\nsink {{ SelectDBCloud {{ {sink} }} }}").problems[0]

    assert first(SELECTDB.replace(', cluster-name = "c1"', "")).key == "cluster-name"
    assert first(SELECTDB.replace('"db.t"', '"t"')).key == "table.identifier"
    assert first(SELECTDB.replace('"wh:9030"', '"jdbc:mysql://wh:9030"')).key == "jdbc-url"
    assert first(SELECTDB + ', selectdb.config = { file.type = "parquet" }').key == "selectdb.config"
    options = selectdb_parse({"load-url": "wh:8080", "jdbc-url": "wh:9030", "cluster-name": "c", "username": "u",
                              "table.identifier": "d.t", "sink.enable-delete": True,
                              "selectdb.config": {"File.Type": "CSV", "file.column_separator": ","}})
    assert options.format == "csv" and options.endpoint.mysql_host == "wh" and options.endpoint.query_port == 9030
    assert copy_sql("d", "t", ["f_1.csv"], options.properties) == (
        "COPY INTO `d`.`t` FROM @~('{f_1.csv}') PROPERTIES ('file.type'='CSV','file.column_separator'=',',"
        "'copy.async'='false','copy.use_delete_sign'='true')")
