"""MySQL-CDC at compile time: a runnable STREAMING job with its tables, located errors in SeaTunnel's
rules, what plans but cannot run, lineage, server ids, and the password kept out of the plan."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.mysql_cdc import CONNECTOR as MY_CDC
from airflow_provider_seatunnel.connectors.mysql_cdc.options import parse
from airflow_provider_seatunnel.connectors.mysql_cdc.runtime import spark_type

BLOCK = ('MySQL-CDC {{ plugin_output = "c", base-url = "jdbc:mysql://db:3306/shop", username = "u", '
         'password = "my-s3cret", table-names = ["shop.orders", "shop.items"] {extra} }}')


def job(extra: str = "") -> str:
    return f"""
        env {{ job.mode = "STREAMING" }}
        source {{ {BLOCK.format(extra=extra)} }}
        sink {{ Console {{ plugin_input = "c" }} }}
    """


def test_a_cdc_job_plans_with_its_tables_and_validates(write_conf, plan_of, capsys):
    plan = plan_of(job(', server-id = "5400"'))
    assert not plan.warnings
    assert "my-s3cret" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(job()))]) == 0
    assert "my-s3cret" not in capsys.readouterr().out
    assert MY_CDC.assets({"base-url": "jdbc:mysql://db:3306/shop", "table-names": ["shop.orders"]}) == \
        ["mysql://db:3306/shop/orders"]


@pytest.mark.parametrize("extra, key, message", [
    (', startup.mode = "sometimes"', "startup.mode", "unknown startup.mode"),
    (', server-id = "9-1"', "server-id", "is not a number or a range"),
    (', snapshot.split.size = -1', "snapshot.split.size", "an integer >= 1"),
])
def test_bad_options_fail_at_their_line(config_error, extra, key, message):
    problem = config_error(job(extra)).problems[0]
    assert message in problem.message and problem.key == key and problem.line is not None


def test_tables_and_url_follow_seatunnels_rules(config_error):
    assert "database.table" in config_error(job().replace('"shop.items"', '"items"')).problems[0].message
    assert "not a MySQL JDBC URL" in config_error(job().replace("jdbc:mysql:", "jdbc:oracle:")).problems[0].message


@pytest.mark.parametrize("extra", [', startup.mode = earliest', ', format = compatible_debezium_json'])
def test_what_plans_but_cannot_run(write_conf, plan_of, extra):
    plan = plan_of(job(extra))
    assert [w.get("code") for w in plan.warnings] == ["not-runnable"]
    assert main(["validate", str(write_conf(job(extra)))]) == 2


def test_the_source_reads_the_binlog_with_one_server_id_whatever_its_tables():
    ranged = parse({"base-url": "jdbc:mysql://h/db", "table-names": ["db.a", "db.b"], "server-id": "6000-6001"})
    assert [ranged.server_id(i, "x") for i in range(2)] == [6000, 6000]
    derived = parse({"base-url": "jdbc:mysql://h/db", "table-names": ["db.a", "db.b"]})
    ids = {derived.server_id(i, "pipeline") for i in range(2)}
    assert len(ids) == 1 and 5400 <= min(ids) < 6400 and derived.server_id(0, "another") != min(ids)


@pytest.mark.parametrize("data_type, column_type, expected", [
    ("tinyint", "tinyint(1)", "boolean"), ("tinyint", "tinyint(4) unsigned", "smallint"), ("int", "int(11)", "int"),
    ("bigint", "bigint(20) unsigned", "decimal(20,0)"), ("decimal", "decimal(10,2)", "decimal(10,2)"),
    ("datetime", "datetime(6)", "timestamp_ntz"), ("varchar", "varchar(20)", "string"), ("json", "json", "string"),
    ("blob", "blob", "binary"), ("year", "year(4)", "int"), ("time", "time", "time"),
])
def test_mysql_types_map_as_seatunnel_maps_them(data_type, column_type, expected):
    precision, scale = (10, 2) if data_type == "decimal" else (None, None)
    assert spark_type(data_type, column_type, precision, scale) == expected


@pytest.mark.parametrize("extra, follows", [
    ("", False), (", schema-changes.enabled = true", True),
    (", debezium = { include.schema.changes = true }", True),  # SeaTunnel 2.3.8's documented switch
    (', debezium = { "include.schema.changes" = "true" }', True),
    (", debezium = { include.schema.changes = false }", False), (", debezium = { snapshot.mode = never }", False),
])
def test_schema_changes_are_followed_with_either_switch(plan_of, extra, follows):
    plan = plan_of(job(extra))
    (source,) = [v for v in plan.pipelines[0].vertices if v.kind == "source"]
    assert parse(source.config).schema_changes is follows


def test_all_tables_of_a_source_share_one_binlog_reader():
    opts = parse({"base-url": "jdbc:mysql://h/db", "table-names": [f"db.t{i}" for i in range(3)]})
    assert len({opts.server_id(i, "pipeline") for i in range(3)}) == 1
