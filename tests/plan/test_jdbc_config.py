"""Jdbc at compile time: runnable, option checks, and what plans but fails validate."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.cli import main

CONN = 'url = "jdbc:postgresql://db:5432/shop", driver = "org.postgresql.Driver", user = "u", password = "s3cret"'
FAKE = 'FakeSource { schema = { fields { id = int, name = string } } }'


def not_runnable(plan) -> list[str]:
    return [w["message"] for w in plan.warnings if w.get("code") == "not-runnable"]


def test_a_complete_jdbc_job_is_runnable_and_validates(write_conf, plan_of, capsys):
    text = f"""
        source {{ Jdbc {{ {CONN}, query = "SELECT * FROM orders", partition_column = "id", partition_num = 4 }} }}
        sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "public.copy", primary_keys = ["id"],
                       schema_save_mode = "RECREATE_SCHEMA", data_save_mode = "APPEND_DATA", batch_size = 500,
                       is_exactly_once = true }} }}
    """
    plan = plan_of(text)
    assert not plan.warnings
    assert main(["validate", str(write_conf(text))]) == 0
    assert "s3cret" not in capsys.readouterr().out


def test_what_seatunnel_needs_but_configs_rely_on_planning_fails_validate_only(write_conf, plan_of):
    text = f"source {{ Jdbc {{ {CONN} }} }}\nsink {{ Jdbc {{ {CONN} }} }}\n"
    messages = not_runnable(plan_of(text))
    assert any("needs query, table_path or table_list" in m for m in messages)
    assert any("needs query, or generate_sink_sql = true" in m for m in messages)
    assert main(["validate", str(write_conf(text))]) == 2
    plan = plan_of(f'source {{ {FAKE} }}\nsink {{ Jdbc {{ {CONN}, query = "UPDATE t SET a = ?" }} }}\n')
    assert any("INSERT ... VALUES" in m for m in not_runnable(plan))


@pytest.mark.parametrize("options, message", [
    ('table_path = "a.b", table_list = [{ table_path = "c.d" }]',
     "Please configure either table_list or table_path/query, not both"),
    ('table_list = [{ table_path = "c.d" }, { table_path = "c.d" }]', "names the table_path 'c.d' twice"),
    ('table_list = [{ partition_num = 2 }]', "each table_list item needs table_path or query"),
    ('query = "SELECT 1", where_condition = "id > 1"', "where_condition must start with 'where'"),
    ('query = "SELECT 1", partition_num = 0', "partition_num must be an integer >= 1"),
    ('query = "SELECT 1", partition_lower_bound = 10, partition_upper_bound = 1', "is greater than"),
    ('query = "SELECT 1", partition_lower_bound = "ten"', "partition_lower_bound must be a number"),
    ('query = "SELECT 1", fetch_size = -1', "fetch_size must be an integer >= 0"),
    ('query = "SELECT 1", field_ide = "UPPER"', "unknown field_ide 'UPPER'"),
])
def test_source_option_errors(config_error, options, message):
    err = config_error(f"source {{ Jdbc {{ {CONN}, {options} }} }}\nsink {{ Console {{ }} }}\n")
    assert message in str(err)


@pytest.mark.parametrize("options, message", [
    ('schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXISTS"', "did you mean 'CREATE_SCHEMA_WHEN_NOT_EXIST'?"),
    ('data_save_mode = "CUSTOM_PROCESSING"', "custom_sql is required when data_save_mode is CUSTOM_PROCESSING"),
    ("batch_size = 0", "batch_size must be an integer >= 1"),
    ('enable_upsert = "yes"', "enable_upsert must be true or false"),
    ('primary_keys = ["idd"]', "primary_keys names 'idd', which is not among the input fields"),
])
def test_sink_option_errors(config_error, options, message):
    err = config_error(f"source {{ {FAKE} }}\n"
                       f"sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = \"t\", {options} }} }}\n")
    assert message in str(err)


def test_the_password_stays_out_of_the_plan(plan_of):
    plan = plan_of(f'source {{ {FAKE} }}\nsink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "t" }} }}\n')
    assert "s3cret" not in str(plan.to_dict()) and "s3cret" in str(plan.to_dict(secrets=True))


def test_url_is_required_unless_an_airflow_connection_gives_it(plan_of, config_error):
    sink = 'Jdbc { plugin_input = "t", driver = "org.postgresql.Driver", generate_sink_sql = true, table = "x" OPT }'
    source = 'source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = int } } } }\n'
    error = config_error(source + "sink { " + sink.replace("OPT", "") + " }")
    assert any("the option 'url' is required" in p.format() and "jdbc_conn_id" in (p.hint or "")
               for p in error.problems)
    assert plan_of(source + "sink { " + sink.replace("OPT", ', jdbc_conn_id = "warehouse"') + " }").pipelines


def test_an_undeclared_key_is_a_did_you_mean_warning_and_sink_options_are_unknown_in_a_source(plan_of):
    plan = plan_of(f'source {{ Jdbc {{ {CONN}, query = "SELECT 1", batch_size = 10 }} }}\n'
                   f'sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "t", batch_sise = 10 }} }}\n')
    unknown = {(w["plugin"], w["key"]): w for w in plan.warnings if w.get("code") == "unknown-option"}
    assert set(unknown) == {("source[0] Jdbc", "batch_size"), ("sink[0] Jdbc", "batch_sise")}
    assert unknown[("sink[0] Jdbc", "batch_sise")]["hint"] == "did you mean 'batch_size'?"


def test_the_connection_options_are_read_typed_when_the_task_runs():
    from airflow_provider_seatunnel.connectors.sqlclient.connection import connection_of
    from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

    conn = {"url": " jdbc:postgresql://db:5432/shop ", "driver": "org.postgresql.Driver", "user": "u"}
    parsed = connection_of({**conn, "connection_check_timeout_sec": "5", "properties": {"ssl": True}})
    assert (parsed.url, parsed.timeout, parsed.properties) == ("jdbc:postgresql://db:5432/shop", 5, {"ssl": "True"})
    with pytest.raises(RuntimeConfigError, match="connection_check_timeout_sec must be an integer >= 1"):
        connection_of({**conn, "connection_check_timeout_sec": "soon"})
    with pytest.raises(RuntimeConfigError, match="properties must be a map"):
        connection_of({**conn, "properties": "ssl=true"})
