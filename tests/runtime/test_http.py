"""The Http source against a real HTTP server on loopback (tests/http_server.py), on real Spark: JSON
with content_field and json_field, paging until a short page and by total (dealt over the plan's
parallelism), POST body and form, headers and params, text and multi-line responses, retries after
503, a 404 failing deterministically, credentials from an Airflow connection, a STREAMING poll."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.http import CONNECTOR as HTTP
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError, PipelineError, RuntimeConfigError, error_from

BOOKS = {"store": {"book": [{"category": "reference", "author": "Nigel", "title": "Sayings", "price": 8.95},
                            {"category": "fiction", "author": "Evelyn", "title": "Sword", "price": "12.99"}],
                   "bicycle": {"color": "red"}},
         "expensive": 10}
PEOPLE = [{"name": f"p{i}", "age": 20 + i} for i in range(7)]


@pytest.fixture(scope="module")
def web():
    from tests import http_server

    with http_server.running() as server:
        yield server


@pytest.fixture
def server(web):
    web.reset()
    return web


def http_job(options: str, parallelism: int = 1, mode: str = "BATCH") -> str:
    return f"""
        env {{ job.mode = "{mode}", parallelism = 1 }}
        source {{ Http {{ plugin_output = "h", parallelism = {parallelism}, {options} }} }}
        sink {{ Console {{ plugin_input = "h" }} }}
    """


def read_rows(plan_of, spark, text: str, plan=None) -> tuple[list[tuple], int, int]:
    """The rows the job's Http source reads (sorted), its partitions and the vertex's parallelism."""
    plan = plan or plan_of(text)
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.plugin == "Http")
    df = HTTP.read(RunContext(spark, plan, pipeline, "read"), vertex)["default"]
    rows = [tuple(r)[:-1] for r in df.collect()]  # the row-kind column left out
    return sorted(rows, key=repr), df.rdd.getNumPartitions(), vertex.parallelism


def people_pages(size: int):
    """A paged API: ``page`` (from 1) of ``PEOPLE`` in pages of ``size``, under ``data``."""
    def handler(seen):
        body = json.loads(seen.body) if seen.body.startswith("{") else {}
        page = int(seen.query.get("page") or seen.form.get("page") or body.get("filter", body).get("page"))
        return 200, {"data": PEOPLE[(page - 1) * size:page * size], "page": page}
    return handler


# ------------------------------------------------------------------------------------------------
# reading JSON: a whole job, content_field, json_field, headers and params
# ------------------------------------------------------------------------------------------------

def test_a_get_job_runs_end_to_end_with_content_field_headers_and_params(run_job, server):
    server.route("/books", lambda seen: (200, BOOKS) if seen.header("X-Team") == "data" and seen.query ==
                 {"q": "all", "lang": "en"} else (400, "bad request"))
    metrics = run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ Http {{ plugin_output = "books", url = "{server.url('/books')}?lang=fr", method = "get",
                          format = json, headers = {{ X-Team = "data" }}, params = {{ q = "all", lang = "en" }},
                          content_field = "$.store.book.*",
                          schema = {{ fields {{ category = string, author = string, price = double }} }} }} }}
        sink {{ Assert {{ plugin_input = "books", rules {{
            row_rules = [ {{ rule_type = MIN_ROW, rule_value = 2 }}, {{ rule_type = MAX_ROW, rule_value = 2 }} ]
            field_rules = [ {{ field_name = price, field_type = double,
                               field_value = [ {{ rule_type = MIN, rule_value = 8.95 }} ] }} ] }} }} }}
    """)
    assert metrics[0]["status"] == "FINISHED" and metrics[0]["read_count"] == 2
    (request,) = server.requests_to("/books")
    assert request.method == "GET" and request.query == {"q": "all", "lang": "en"}  # the URL's lang replaced


def test_json_field_builds_rows_from_paths_and_content_field_reads_a_definite_array(plan_of, spark, server):
    server.route("/books", lambda seen: (200, BOOKS))
    rows, parts, par = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/books")}", format = json, json_field = {{ title = "$.store.book[*].title", '
        'price = "$..price" }, schema = { fields { title = string, price = "decimal(10, 2)", missing = int } }', 2))
    from decimal import Decimal
    assert rows == [("Sayings", Decimal("8.95"), None), ("Sword", Decimal("12.99"), None)]
    assert parts == par == 2
    rows, _, _ = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/books")}", format = json, content_field = "$.store.book", '
        'schema = { fields { title = string } }'))
    assert rows == [("Sayings",), ("Sword",)]  # a definite path to one array: its elements
    uneven = (f'url = "{server.url("/books")}", format = json, json_field = {{ title = "$.store.book[*].title", '
              'color = "$.store.bicycle.color" }, schema = { fields { title = string, color = string } }')
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, http_job(uneven))
    error = error_from(info.value, "source[0] Http", "p")
    assert isinstance(error, DataError) and "HTTP-01" in error.cause and "(2) and" in error.cause
    rows, _, _ = read_rows(plan_of, spark, http_job(uneven + ", json_filed_missed_return_null = true"))
    assert rows == [("Sayings", "red"), ("Sword", None)]


# ------------------------------------------------------------------------------------------------
# paging
# ------------------------------------------------------------------------------------------------

def test_paging_goes_on_until_a_short_page(plan_of, spark, server):
    server.route("/people", people_pages(3))
    rows, parts, par = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/people")}", format = json, content_field = "$.data.*", '
        'pageing = { page_field = page, batch_size = 3 }, schema = { fields { name = string, age = int } }', 3))
    assert rows == sorted((p["name"], p["age"]) for p in PEOPLE)
    assert [s.query["page"] for s in server.requests_to("/people")] == ["1", "2", "3"]  # 3, 3, then 1 < 3
    assert parts == par == 3  # one partition read every page, in order; the others are empty
    server.reset()
    server.route("/people", people_pages(7))
    rows, _, _ = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/people")}", format = json, content_field = "$.data.*", '
        'pageing = { batch_size = 7 }, schema = { fields { name = string } }'))
    assert len(rows) == 7 and [s.query["page"] for s in server.requests_to("/people")] == ["1", "2"]  # 2: empty


def test_pages_fixed_by_total_are_dealt_over_the_readers(plan_of, spark, server):
    server.route("/people", people_pages(2))
    rows, parts, par = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/people")}", format = json, json_field = {{ name = "$.data[*].name", '
        'age = "$.data[*].age" }, pageing = { total_page_size = 4, start_page_number = 2 }, '
        'schema = { fields { name = string, age = int } }', 2))
    assert rows == sorted((p["name"], p["age"]) for p in PEOPLE[2:])  # pages 2, 3, 4
    assert sorted(s.query["page"] for s in server.requests_to("/people")) == ["2", "3", "4"]
    assert parts == par == 2


def test_post_sends_the_body_as_json_and_params_as_a_form(plan_of, spark, server):
    server.route("/query", lambda seen: (200, [{"got": seen.body or json.dumps(seen.form),
                                                "type": seen.header("Content-Type")}]))
    fields = "schema = { fields { got = string, type = string } }"
    rows, _, _ = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/query")}", method = POST, format = json, body = """{{"id": 1}}""", {fields}'))
    assert rows == [('{"id": 1}', "application/json")]
    rows, _, _ = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/query")}", method = POST, format = json, params = {{ id = 1 }}, {fields}'))
    assert rows == [("id=1", "application/x-www-form-urlencoded")]
    # the later option: params in the URL, the page replaced in the body
    server.route("/people", people_pages(4))
    rows, _, _ = read_rows(plan_of, spark, http_job(
        f'url = "{server.url("/people")}", method = POST, format = json, keep_params_as_form = false, '
        'keep_page_param_as_http_param = false, body = """{"filter": {"page": 0}}""", params = { v = 2 }, '
        'content_field = "$.data.*", pageing = { batch_size = 4 }, schema = { fields { name = string } }'))
    assert len(rows) == 7
    assert [(s.query, json.loads(s.body)) for s in server.requests_to("/people")] == \
        [({"v": "2"}, {"filter": {"page": 1}}), ({"v": "2"}, {"filter": {"page": 2}})]


# ------------------------------------------------------------------------------------------------
# text
# ------------------------------------------------------------------------------------------------

def test_text_is_one_content_row_or_one_per_line(plan_of, spark, server):
    server.route("/log", lambda seen: (200, "first line\nsecond line\n\n", {"Content-Type": "text/plain"}))
    rows, _, _ = read_rows(plan_of, spark, http_job(f'url = "{server.url("/log")}"'))
    assert rows == [("first line\nsecond line\n\n",)]
    rows, _, _ = read_rows(plan_of, spark, http_job(f'url = "{server.url("/log")}", enable_multi_lines = true'))
    assert rows == [("first line",), ("second line",)]


# ------------------------------------------------------------------------------------------------
# failures
# ------------------------------------------------------------------------------------------------

def flaky(failures: int, answer: object):
    """503 for the first ``failures`` requests, then ``answer``."""
    count = {"n": 0}

    def handler(seen):
        count["n"] += 1
        return (503, "busy") if count["n"] <= failures else (200, answer)
    return handler


def test_a_503_is_retried_then_fails_as_transient(plan_of, spark, server):
    server.route("/flaky", flaky(2, [{"id": 1}]))
    text = http_job(f'url = "{server.url("/flaky")}", format = json, schema = {{ fields {{ id = int }} }}, '
                    'retry = 3, retry_backoff_multiplier_ms = 10')
    rows, _, _ = read_rows(plan_of, spark, text)
    assert rows == [(1,)] and len(server.requests_to("/flaky")) == 3
    server.route("/flaky", flaky(5, [{"id": 1}]))
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, text)
    error = error_from(info.value, "source[0] Http", "p")
    assert type(error) is PipelineError and not error.deterministic
    assert "answered 503" in str(info.value) and "after 3 attempts" in str(info.value)
    assert "answered 503" in error.cause and "Traceback" not in error.cause  # the worker's message, not Spark's


def test_a_404_fails_at_once_and_deterministically(plan_of, spark, server):
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, http_job(f'url = "{server.url("/missing")}?token=s3cr3t-t0ken", retry = 3'))
    error = error_from(info.value, "source[0] Http", "p")
    assert isinstance(error, RuntimeConfigError) and error.deterministic
    assert "404" in error.cause and "s3cr3t-t0ken" not in error.cause
    assert len(server.requests_to("/missing")) == 1  # no retry


def test_a_response_that_is_not_json_is_a_data_error(plan_of, spark, server):
    server.route("/html", lambda seen: (200, "<html>oops</html>"))
    with pytest.raises(Exception) as info:
        read_rows(plan_of, spark, http_job(f'url = "{server.url("/html")}", format = json, '
                                           'schema = { fields { id = int } }'))
    error = error_from(info.value, "source[0] Http", "p")
    assert isinstance(error, DataError) and "is not JSON" in error.cause


# ------------------------------------------------------------------------------------------------
# credentials from an Airflow connection
# ------------------------------------------------------------------------------------------------

def test_http_conn_id_gives_the_base_url_credentials_and_headers(plan_of, spark, server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    password = "pa55-w0rd-of-the-api"
    monkeypatch.setenv("AIRFLOW_CONN_API", json.dumps({
        "conn_type": "http", "host": server.host, "port": server.port, "login": "ann", "password": password,
        "extra": {"X-Tenant": "t1"}}))
    server.route("/v1/me", lambda seen: (200, {"auth": seen.header("Authorization"), "tenant": seen.header("X-Tenant")}))
    plan = plan_of(http_job('http_conn_id = "api", url = "/v1/me", format = json, '
                            'schema = { fields { auth = string, tenant = string } }'))
    assert password not in json.dumps(plan.to_dict())
    resolved = with_connections(plan)
    shown = json.dumps(resolved.to_dict())
    assert password not in shown and "Basic " not in shown  # the connection's values are hidden too
    import base64
    rows, _, _ = read_rows(plan_of, spark, "", plan=resolved)
    assert rows == [(f"Basic {base64.b64encode(f'ann:{password}'.encode()).decode()}", "t1")]


# ------------------------------------------------------------------------------------------------
# STREAMING: one poll per micro-batch
# ------------------------------------------------------------------------------------------------

def test_a_streaming_run_polls_once(plan_of, spark, server, tmp_path):
    server.route("/people", people_pages(10))
    plan = plan_of(http_job(f'url = "{server.url("/people")}", format = json, content_field = "$.data.*", '
                            'pageing = { batch_size = 10 }, schema = { fields { name = string } }', 2,
                            mode="STREAMING"))
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.plugin == "Http")
    df = HTTP.read_stream(RunContext(spark, plan, pipeline, "stream"), vertex)["default"]
    got = []
    query = (df.writeStream.trigger(availableNow=True).option("checkpointLocation", str(tmp_path / "cp"))
             .foreachBatch(lambda batch, n: got.append((n, batch.rdd.getNumPartitions(), batch.count()))).start())
    query.awaitTermination(120)
    assert got == [(0, 2, 7)]
    assert [s.query["page"] for s in server.requests_to("/people")] == ["1"]
