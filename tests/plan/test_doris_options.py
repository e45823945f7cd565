"""Doris at compile time (no server, no Spark): a job plans at the plan's parallelism with its secrets kept out,
SeaTunnel's rules are located errors, the Doris source still plans as not runnable here, credentials come from
an Airflow connection, and the pieces of the load that need no server: the create statement of SeaTunnel's
default template, the rows' text in csv and json, the labels."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json

from airflow_provider_seatunnel.connectors.doris import CONNECTOR as DORIS
from airflow_provider_seatunnel.connectors.doris.options import CREATE_TEMPLATE, parse
from airflow_provider_seatunnel.connectors.doris.sink import create_statement, label_of
from airflow_provider_seatunnel.connectors.doris.streamload import existing_txn
from airflow_provider_seatunnel.connectors.doris.writer import Encoder
from airflow_provider_seatunnel.spi import ConnectionInfo
from airflow_provider_seatunnel.spi.errors import DataError
from airflow_provider_seatunnel.spi.registry import get_connector
from airflow_provider_seatunnel.spi.twophase import CommitId

SOURCE = 'source { FakeSource { plugin_output = "a", row.num = 3, schema = { fields { id = bigint } } } }'
BLOCK = ('fenodes = "fe1:8030,fe2:8030", username = "root", password = "d0ris-s3cret", sink.label-prefix = "p", '
         'doris.config = { format = "json", read_json_by_line = "true" }')


def test_a_job_plans_at_the_plans_parallelism_without_its_password(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        {SOURCE}
        sink {{ Doris {{ plugin_input = "a", {BLOCK}, table.identifier = "db.t", parallelism = 3 }} }}
    """)
    assert not plan.warnings, plan.warnings
    sink = next(v for p in plan.pipelines for v in p.vertices if v.kind == "sink")
    assert sink.parallelism == 3 and "d0ris-s3cret" not in json.dumps(plan.to_dict())
    assert get_connector("DORIS") is DORIS and DORIS.capabilities.exactly_once and DORIS.can_run("sink")
    assert not get_connector("Doris", "source").can_run("source")  # the Doris source: known, not runnable here


def test_seatunnels_rules_are_located_errors(config_error):
    def first(sink: str):
        return config_error(f"{SOURCE}\nsink {{ Doris {{ {sink} }} }}").problems[0]

    assert first('fenodes = "fe:8030", username = "u", password = "", doris.config = {}').key == "sink.label-prefix"
    assert first(BLOCK.replace('"fe1:8030,fe2:8030"', '"fe1"')).key == "fenodes"
    problem = first(BLOCK + ', table.identifier = "nodot"')
    assert problem.key == "table.identifier" and "database.table" in problem.message
    assert first(BLOCK.replace('"json"', '"parquet"')).key == "doris.config"
    assert first(BLOCK + ', data_save_mode = "CUSTOM_PROCESSING"').key == "custom_sql"
    problem = first(BLOCK + ', schema_save_mode = "CREATE_WHEN_MISSING"')
    assert problem.key == "schema_save_mode" and problem.line == 2
    assert first(BLOCK.replace('format = "json"', 'label = "mine"')).key == "doris.config"  # set by the sink


def test_credentials_from_a_connection():
    conn = ConnectionInfo(conn_id="doris_default", conn_type="doris", host="fe.example", port=8030, login="loader", password="pw",
                          extra={"query_port": "19030"})
    options = DORIS.connection_options(conn)
    assert options == {"fenodes": "fe.example:8030", "query-port": 19030, "username": "loader", "password": "pw"}
    parsed = parse({**options, "sink.label-prefix": "p", "doris.config": {"format": "csv"}, "table": "t",
                    "database": "d"})
    assert parsed.endpoint is not None and parsed.endpoint.mysql_host == "fe.example"
    assert "pw" not in repr(parsed.endpoint) and parsed.column_separator == "\t"
    assert DORIS.takes_default_connection({}) and not DORIS.takes_default_connection({"fenodes": "x:1"})


def test_the_default_template_and_the_rows_text():
    ddl = create_statement(CREATE_TEMPLATE, "d", "t", [("id", "BIGINT"), ("name", "STRING")], ["id"])
    assert ddl.startswith("CREATE TABLE IF NOT EXISTS `d`.`t` (\n`id` BIGINT,\n`name` STRING\n) ENGINE=OLAP")
    assert "UNIQUE KEY (`id`)" in ddl and "DISTRIBUTED BY HASH (`id`)" in ddl
    spec = {"columns": ["id", "ts", "price", "ok", "name"], "format": "csv", "column_separator": ",",
            "line_delimiter": "\n", "headers": {}, "enable_delete": True}
    row = [1, dt.datetime(2024, 1, 2, 3, 4, 5), decimal.Decimal("1.50"), True, None]
    out = io.BytesIO()
    assert Encoder(spec).write([(row, 0), (row, 3)], out) == 2
    assert out.getvalue() == b"1,2024-01-02 03:04:05,1.50,true,\\N,0\n1,2024-01-02 03:04:05,1.50,true,\\N,1"
    out = io.BytesIO()
    Encoder({**spec, "format": "json", "enable_delete": False, "headers": {"strip_outer_array": "true"}}).write(
        [(row, 0)], out)
    assert json.loads(out.getvalue()) == [{"id": 1, "ts": "2024-01-02 03:04:05", "price": "1.50", "ok": "true",
                                           "name": None}]
    try:
        Encoder({**spec, "enable_delete": False}).encode(row, 3)
        raise AssertionError("a DELETE row without sink.enable-delete must fail")
    except DataError as e:  # deterministic: a retry would fail the same way
        assert "sink.enable-delete" in str(e)


def test_labels_and_doris_answers():
    label = label_of("my prefix!", CommitId("r", "p", "sink[0]", "t"), 7)
    assert label.startswith("my_prefix__") and label.endswith("_7") and len(label) <= 110
    assert label_of("p" * 300, CommitId("r", "p", "sink[0]", "t"), 12).endswith("_12")  # a long prefix is cut
    answer = {"Status": "Label Already Exists", "ExistingJobStatus": "PREPARE",
              "Message": "errCode = 2, detailMessage = Label [x_1] has already been used, relate to txn [4021]"}
    assert existing_txn(answer) == 4021
