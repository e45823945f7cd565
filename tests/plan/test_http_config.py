"""The Http source at compile time: runnable jobs and their schema and parallelism, located errors,
what plans but cannot run (JSONPath filters, cursor paging, the Http sink), warnings for options that
change nothing, and credentials kept out of plans."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main

URL = 'url = "https://api.example.com/v1/items"'
FIELDS = "schema = { fields { id = bigint, name = string } }"


def source_job(options: str, mode: str = "BATCH", parallelism: int = 2) -> str:
    return f"""
        env {{ job.mode = "{mode}", parallelism = {parallelism} }}
        source {{ Http {{ plugin_output = "h",
          {options} }} }}
        sink {{ Console {{ plugin_input = "h" }} }}
    """


def test_a_complete_http_job_plans_with_its_schema_and_parallelism(write_conf, plan_of, capsys):
    text = f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{
          Http {{ plugin_output = "items", {URL}, method = "post", format = "JSON", parallelism = 3,
                  headers = {{ Authorization = "Bearer t0p-s3cret-value", X-Team = "data" }},
                  params = {{ q = "all", limit = 50 }}, keep_params_as_form = false, body = \"\"\"{{"a": 1}}\"\"\",
                  content_field = "$.data.*", {FIELDS},
                  pageing = {{ page_field = p, total_page_size = 10, start_page_number = 0 }},
                  retry = 3, retry_backoff_multiplier_ms = 50, retry_backoff_max_ms = 1000,
                  connect_timeout_ms = 5000, socket_timeout_ms = 10000 }}
          Http {{ plugin_output = "raw", url = "http://127.0.0.1:8080/log", enable_multi_lines = true }}
        }}
        transform {{ Filter {{ plugin_input = "items", plugin_output = "named", include_fields = ["name"] }} }}
        sink {{ Console {{ plugin_input = "named" }}
                Console {{ plugin_input = "raw" }} }}
    """
    plan = plan_of(text)
    assert not plan.warnings
    vertices = {v.ref: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source[0]"].schema == {"id": "bigint", "name": "string"} and vertices["source[0]"].parallelism == 3
    assert vertices["source[1]"].schema == {"content": "string"} and vertices["source[1]"].parallelism == 2
    shown = json.dumps(plan.to_dict())
    assert "t0p-s3cret-value" not in shown and "X-Team" in shown  # the auth header hidden, the others shown
    assert main(["validate", str(write_conf(text))]) == 0
    assert "t0p-s3cret-value" not in capsys.readouterr().out


def test_a_later_transform_is_checked_against_the_content_field(config_error):
    error = config_error(f"""
        source {{ Http {{ plugin_output = "h", {URL} }} }}
        transform {{ Filter {{ plugin_input = "h", plugin_output = "v", include_fields = ["name"] }} }}
        sink {{ Console {{ plugin_input = "v" }} }}
    """)
    assert "name" in str(error) and "content" in str(error)


@pytest.mark.parametrize("options, key, message", [
    ("method = GET", "url", "the option 'url' is required"),
    ('url = "/v1/items"', "url", "is not an http:// or https:// URL"),
    (f"{URL}, method = PUT", "method", "unknown method 'PUT'"),
    (f"{URL}, format = xml", "format", "unknown format 'xml'"),
    (f"{URL}, format = json", "schema", "the option 'schema' is required when format = json"),
    (f"{URL}, {FIELDS}", "format", "Unsupported data format [text]"),
    (f"{URL}, format = json, schema = {{ fields {{ a = intt }} }}", "schema", "intt"),
    (f'{URL}, headers = "Authorization: x"', "headers", "headers must be a map"),
    (f"{URL}, body = {{ id = 1 }}", "body", "body must be a string"),
    (f"{URL}, retry = -1", "retry", "retry must be an integer >= 0"),
    (f"{URL}, enable_multi_lines = maybe", "enable_multi_lines", "enable_multi_lines must be true or false"),
    (f"{URL}, pageing = {{ batch_size = 0 }}", "pageing.batch_size", "pageing.batch_size must be an integer >= 1"),
    (f'{URL}, pageing = {{ total_page_size = "all" }}', "pageing.total_page_size", "must be an integer"),
    (f"{URL}, format = json, {FIELDS}, json_field = {{ id = \"$.data[\" }}", "json_field.id", "an unclosed ["),
    (f'{URL}, format = json, {FIELDS}, content_field = "$..[x]"', "content_field", "[x] is neither"),
    (f'{URL}, http_conn_id = ""', "http_conn_id", "must name an Airflow connection"),
])
def test_bad_options_fail_at_their_line(config_error, options, key, message):
    error = config_error(source_job(options))
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("Http") and problem.file and problem.line is not None


def test_a_relative_url_needs_a_connection(plan_of):
    plan = plan_of(source_job('http_conn_id = "api", url = "/v1/items"'))
    assert not plan.warnings


@pytest.mark.parametrize("options, key", [
    (f'{URL}, format = json, {FIELDS}, content_field = "$.data[?(@.id > 1)]"', "content_field"),
    (f'{URL}, format = json, {FIELDS}, json_field = {{ id = "$.data.length()", name = "$.n" }}', "json_field.id"),
    (f"{URL}, pageing = {{ page_type = Cursor, cursor_field = after }}", "pageing.page_type"),
])
def test_what_cannot_run_here_plans_but_does_not_validate(write_conf, plan_of, options, key):
    text = source_job(options)
    warnings = [w for w in plan_of(text).warnings if w.get("code") == "not-runnable"]
    assert [w["key"] for w in warnings] == [key]
    assert main(["validate", str(write_conf(text))]) == 2


def test_the_http_sink_plans_with_its_own_options(write_conf, plan_of):
    text = """
        source { FakeSource { plugin_output = "f", schema = { fields { id = int } } } }
        sink { Http { plugin_input = "f", url = "http://127.0.0.1/hook", headers = { token = "abc-secret-1" },
                      params = { a = 1 }, retry = 2 } }
    """
    plan = plan_of(text)
    assert not [w for w in plan.warnings if w.get("code") == "not-runnable"]
    assert "abc-secret-1" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(text))]) == 0
    # the source's options are not the sink's: a warning (did you mean), as for any undeclared key
    plan = plan_of(text.replace("retry = 2", "format = json"))
    assert [w["key"] for w in plan.warnings] == ["format"]


def test_options_that_change_nothing_are_warnings(plan_of):
    plan = plan_of(source_job(f'{URL}, content_field = "$.data.*", body = "{{}}", poll_interval_millis = 1000'))
    assert sorted(w["key"] for w in plan.warnings) == ["body", "content_field", "poll_interval_millis"]
    plan = plan_of(source_job(f'{URL}, method = POST, params = {{ a = 1 }}, body = "{{}}", format = json, '
                              f'{FIELDS}, json_field = {{ id = "$.id", nam = "$.name" }}, content_field = "$.*"'))
    assert sorted(w["key"] for w in plan.warnings) == ["body", "json_field", "json_field"]


def test_a_streaming_job_plans_with_an_http_source(plan_of):
    plan = plan_of(source_job(f"{URL}, poll_interval_millis = 5000", mode="STREAMING"))
    assert not plan.warnings and plan.mode == "STREAMING"


def test_the_task_id_follows_the_url_not_the_credentials(plan_of):
    def task_id(headers: str) -> str:
        return plan_of(source_job(f"{URL}, headers = {{ Authorization = \"{headers}\" }}")).pipelines[0].task_id

    assert task_id("Bearer one") == task_id("Bearer two")
    other = plan_of(source_job('url = "https://api.example.com/v2/items"')).pipelines[0].task_id
    assert other != task_id("Bearer one")


def test_an_undeclared_key_is_a_did_you_mean_warning(plan_of):
    [unknown] = plan_of(source_job(f"{URL}, retyr = 3")).warnings
    assert unknown["code"] == "unknown-option" and unknown["key"] == "retyr"
    assert unknown["hint"] == "did you mean 'retry'?"


def test_a_connection_gives_headers_from_its_scalar_extras_and_its_headers_object():
    """A ``seatunnel_http`` connection's form keeps headers in one ``headers`` object (connection_forms.py); an
    ``http`` connection's plain extras are headers too; HttpHook's own settings are not; the object wins."""
    from airflow_provider_seatunnel.connectors.http.options import CONN_HEADERS
    from airflow_provider_seatunnel.spi import ConnectionInfo, get_connector

    http = get_connector("Http")
    extra = {"X-Team": "a", "timeout": 5, "headers": {"X-Api-Key": "k", "X-Team": "b", "nested": {"no": 1}}}
    headers = http.connection_options(ConnectionInfo("h", "seatunnel_http", host="api", extra=extra))[CONN_HEADERS]
    assert headers == {"X-Team": "b", "X-Api-Key": "k"}
