"""The Http sink against a real HTTP server on loopback (tests/http_server.py), on real Spark: each row
POSTed as one JSON object with the block's headers and params, credentials from an Airflow connection
(never in the plan), a 503 retried, a refused row failing the job deterministically (SeaTunnel drops it)."""

from __future__ import annotations

import base64
import json

import pytest

from airflow_provider_seatunnel.connectors.http import CONNECTOR as HTTP
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import PipelineError, RuntimeConfigError

ROWS = """rows = [
  { kind = INSERT, fields = [1, "ann", "2020-02-02T02:02:02", "6.3", true] },
  { kind = INSERT, fields = [2, null, null, null, false] },
  { kind = DELETE, fields = [3, "cy", "2021-01-01T00:00:00.5", "-1.0", null] }
]"""


@pytest.fixture(scope="module")
def web():
    from tests import http_server

    with http_server.running() as server:
        yield server


@pytest.fixture
def server(web):
    web.reset()
    return web


def sink_job(options: str) -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = int, name = string,
            at = timestamp, amount = "decimal(16, 1)", ok = boolean }} }}
            {ROWS} }} }}
        sink {{ Http {{ plugin_input = "f", {options} }} }}
    """


def post(plan, spark) -> None:
    from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR as FAKE

    pipeline = plan.pipelines[0]
    source = next(v for v in pipeline.vertices if v.plugin == "FakeSource")
    sink = next(v for v in pipeline.vertices if v.plugin == "Http")
    ctx = RunContext(spark, plan, pipeline, "post")
    HTTP.prepare(ctx, sink, FAKE.read(ctx, source))


def test_rows_posted_as_json_with_headers_params_and_connection(plan_of, spark, server, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    password = "s3cret-of-the-hook"
    monkeypatch.setenv("AIRFLOW_CONN_HOOK", json.dumps({
        "conn_type": "http", "host": server.host, "port": server.port, "login": "ann", "password": password,
        "extra": {"X-Tenant": "t1"}}))
    server.route("/hook", lambda seen: (200, "ok"))
    plan = plan_of(sink_job('http_conn_id = "hook", url = "/hook", headers = { token = "abc" }, '
                            'params = { source = "st" }'))
    assert password not in json.dumps(plan.to_dict())
    resolved = with_connections(plan)
    assert password not in json.dumps(resolved.to_dict())
    post(resolved, spark)
    seen = server.requests_to("/hook")
    bodies = sorted((json.loads(s.body) for s in seen), key=lambda b: b["id"])
    assert bodies == [
        {"id": 1, "name": "ann", "at": "2020-02-02T02:02:02", "amount": 6.3, "ok": True},
        {"id": 2, "name": None, "at": None, "amount": None, "ok": False},
        {"id": 3, "name": "cy", "at": "2021-01-01T00:00:00.5", "amount": -1.0, "ok": None}]
    assert list(json.loads(seen[0].body)) == ["id", "name", "at", "amount", "ok"]  # the schema's order
    for s in seen:
        assert s.method == "POST" and s.query == {"source": "st"}
        assert s.header("Content-Type").startswith("application/json")
        assert s.header("token") == "abc" and s.header("X-Tenant") == "t1"
        assert s.header("Authorization") == "Basic " + base64.b64encode(f"ann:{password}".encode()).decode()


def test_transient_answers_are_retried_and_refusals_fail(plan_of, spark, server):
    answers = {"n": 0}

    def flaky(seen):
        answers["n"] += 1
        return (503, "busy") if answers["n"] % 2 else (200, "ok")

    server.route("/flaky", flaky)
    post(plan_of(sink_job(f'url = "{server.url("/flaky")}", retry = 3, retry_backoff_multiplier_ms = 1')), spark)
    ids = [json.loads(s.body)["id"] for s in server.requests_to("/flaky")]
    assert sorted(ids) == [1, 1, 2, 2, 3, 3]  # each row once refused with 503, then accepted

    server.route("/no", lambda seen: (400, "bad row"))
    with pytest.raises(Exception) as info:
        post(plan_of(sink_job(f'url = "{server.url("/no")}", retry = 3')), spark)
    assert "HTTP-02" in str(info.value) and "400" in str(info.value)
    assert len(server.requests_to("/no")) >= 1
    failure = next((e for e in _chain(info.value) if isinstance(e, PipelineError)), None)
    assert failure is None or isinstance(failure, RuntimeConfigError)  # deterministic: not retried


def _chain(error: BaseException) -> list[BaseException]:
    out = []
    while error is not None and error not in out:
        out.append(error)
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return out


def test_sink_options_checked_at_compile_time(config_error):
    error = config_error(sink_job('url = "ftp://x"'))
    assert "url" in str(error)
    error = config_error(sink_job('url = "http://x", retry = -1'))
    assert "retry" in str(error)
