"""Three of the Http source's named variants (Jira, Klaviyo, Persistiq) against a real HTTP server on
loopback (tests/http_server.py), on real Spark, read in one Spark job: the headers each one's options
make reach the server, and the rows come back; Gitlab refuses to stream when asked at run time."""

from __future__ import annotations

import base64
import json

import pytest

from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

FIELDS = "format = json, content_field = \"$.users.*\", schema = { fields { name = string, auth = string } }"


@pytest.fixture(scope="module")
def server():
    from tests import http_server

    with http_server.running() as web:
        yield web


def echo(seen):
    """The API: two users, each row carrying the Authorization header the request came with."""
    auth = seen.header("Authorization") or seen.header("x-api-key")
    return 200, {"users": [{"name": f"{seen.path.strip('/')}-{i}", "auth": auth} for i in (1, 2)]}


def test_the_variants_send_their_headers_and_read_the_rows(plan_of, spark, server):
    for path in ("/jira", "/klaviyo", "/persistiq"):
        server.route(path, echo)
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{
          Jira {{ plugin_output = "j", url = "{server.url('/jira')}", email = "ann@example.com",
                  api_token = "jira-t0ken", headers = {{ authorization = "overridden" }}, {FIELDS} }}
          Klaviyo {{ plugin_output = "k", url = "{server.url('/klaviyo')}", private_key = "pk_t0ken",
                     revision = "2024-10-15", {FIELDS} }}
          Persistiq {{ plugin_output = "p", url = "{server.url('/persistiq')}", password = "piq-t0ken", {FIELDS} }}
        }}
        sink {{ Console {{ plugin_input = ["j", "k", "p"] }} }}
    """)
    assert "t0ken" not in json.dumps(plan.to_dict())
    frames = [get_connector(v.plugin).read(RunContext(spark, plan, p, "read"), v)["default"]
              for p in plan.pipelines for v in p.vertices if v.kind == "source"]
    assert len(frames) == 3
    union = frames[0].unionByName(frames[1]).unionByName(frames[2])
    rows = sorted(tuple(r)[:2] for r in union.collect())  # one Spark job for the three sources
    jira = "Basic " + base64.b64encode(b"ann@example.com:jira-t0ken").decode()
    assert rows == [("jira-1", jira), ("jira-2", jira), ("klaviyo-1", "Klaviyo-API-Key pk_t0ken"),
                    ("klaviyo-2", "Klaviyo-API-Key pk_t0ken"), ("persistiq-1", "piq-t0ken"),
                    ("persistiq-2", "piq-t0ken")]
    (klaviyo,) = server.requests_to("/klaviyo")
    assert klaviyo.header("revision") == "2024-10-15" and klaviyo.header("Accept") == "application/json"
    (jira_request,) = server.requests_to("/jira")
    assert jira_request.header("Authorization") == jira  # the block's authorization header gave way


def test_gitlab_refuses_a_stream_at_run_time(plan_of, spark, server):
    plan = plan_of(f"""
        source {{ Gitlab {{ plugin_output = "g", url = "{server.url('/gitlab')}", access_token = "t" }} }}
        sink {{ Console {{ plugin_input = "g" }} }}
    """)
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.plugin == "Gitlab")
    with pytest.raises(RuntimeConfigError, match="BATCH jobs only"):
        get_connector("Gitlab").read_stream(RunContext(spark, plan, pipeline, "read"), vertex)
