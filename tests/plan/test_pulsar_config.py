"""Pulsar at compile time: SeaTunnel's corpus jobs plan as written, the source's schema and the plan's parallelism,
located errors for SeaTunnel's rules (one of topic and topic-pattern, the cursors' timestamps, the auth options
together, NEVER in a BATCH job), EXACTLY_ONCE refused, secrets kept out of plans, a connection's URLs and token."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.pulsar import CONNECTOR as PULSAR
from airflow_provider_seatunnel.connectors.pulsar.options import Endpoint, full_topic, parse
from airflow_provider_seatunnel.spi import SINK, SOURCE, ConnectionInfo

URLS = 'client.service-url = "pulsar://127.0.0.1:6650", admin.service-url = "http://127.0.0.1:8080"'
TOKEN = "eyJhbGciOi.s3cret-token"
AUTH = f'auth.plugin-class = "org.apache.pulsar.client.impl.auth.AuthenticationToken", auth.params = "token:{TOKEN}"'
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def test_seatunnels_batch_read_and_sink_plan_with_schema_parallelism_and_no_secret(write_conf, plan_of, capsys):
    text = f"""
        env {{ parallelism = 1, job.mode = "BATCH" }}
        source {{ Pulsar {{ plugin_output = "p", {URLS}, {AUTH}, subscription.name = "e2e", topic = "topic-it",
                           cursor.startup.mode = "EARLIEST", cursor.stop.mode = "LATEST", format = json,
                           parallelism = 3, schema = {{ fields {{ c_map = "map<string, string>", c_int = int }} }} }} }}
        sink {{ pulsar {{ plugin_input = "p", topic = "out", {URLS}, {AUTH}, format = text, field_delimiter = "|",
                         partition_key_fields = [c_int], message.routing.mode = SinglePartition }} }}
    """
    plan = plan_of(text)
    assert not plan.warnings
    vertices = {v.ref.split("[")[0]: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source"].schema == {"c_map": "map<string, string>", "c_int": "int"}
    assert vertices["source"].parallelism == 3
    assert TOKEN not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(text))]) == 0
    assert TOKEN not in capsys.readouterr().out


def test_without_schema_a_row_is_the_content_field(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ Pulsar {{ plugin_output = "p", {URLS}, subscription.name = "s", topic = "a",
                           cursor.stop.mode = LATEST }} }}
        sink {{ Console {{ plugin_input = "p" }} }}
    """)
    assert plan.pipelines[0].vertices[0].schema == {"content": "string"}


def test_a_canal_json_source_plans_but_is_not_runnable(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ Pulsar {{ plugin_output = "p", {URLS}, subscription.name = "s", topic = "a", format = canal_json,
                           cursor.stop.mode = LATEST, schema = {{ fields {{ id = int }} }} }} }}
        sink {{ Console {{ plugin_input = "p" }} }}
    """)
    assert [w["code"] for w in plan.warnings] == ["not-runnable"] and "canal_json" in plan.warnings[0]["message"]
    assert plan.pipelines[0].vertices[0].schema == {"id": "int"}


def test_a_streaming_read_plans_with_the_default_stop_never(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "STREAMING" }}
        source {{ Pulsar {{ plugin_output = "p", {URLS}, subscription.name = "s", topic-pattern = "a.*" }} }}
        sink {{ Console {{ plugin_input = "p" }} }}
    """)
    assert not plan.warnings


def test_a_pattern_of_a_hyphenated_tenant_and_namespace_plans(plan_of):
    """Tenant and namespace names may hold '-', '.', ':' and '='; only regular-expression syntax there is refused."""
    plan = plan_of(f"""
        source {{ Pulsar {{ plugin_output = "p", {URLS}, subscription.name = "s", cursor.stop.mode = LATEST,
                            topic-pattern = "persistent://my-tenant/team.ns/orders-.*" }} }}
        sink {{ Console {{ plugin_input = "p" }} }}
    """)
    assert not plan.warnings


@pytest.mark.parametrize("section, options, key, message", [
    ("source", 'subscription.name = "s", topic = "a", cursor.stop.mode = LATEST', "client.service-url",
     "'client.service-url' is required"),
    ("source", f'{URLS}, topic = "a", cursor.stop.mode = LATEST', "subscription.name",
     "'subscription.name' is required"),
    ("source", f'{URLS}, subscription.name = "s", cursor.stop.mode = LATEST', "topic", "exactly one of topic"),
    ("source", f'{URLS}, subscription.name = "s", topic = "a", topic-pattern = "b.*", cursor.stop.mode = LATEST',
     "topic", "exactly one of topic"),
    ("source", f'{URLS}, subscription.name = "s", topic-pattern = "a[", cursor.stop.mode = LATEST',
     "topic-pattern", "not a regular expression"),
    ("source", f'{URLS}, subscription.name = "s", topic-pattern = "persistent://my-.*/ns/a.*", '
               'cursor.stop.mode = LATEST', "topic-pattern", "must fix its tenant and namespace"),
    ("source", f'{URLS}, subscription.name = "s", topic = "a"', "cursor.stop.mode", "don't support off-line job"),
    ("source", f'{URLS}, subscription.name = "s", topic = "a", cursor.stop.mode = TIMESTAMP',
     "cursor.stop.timestamp", "cursor.stop.timestamp"),
    ("source", f'{URLS}, subscription.name = "s", topic = "a", cursor.stop.mode = LATEST, '
               'cursor.startup.mode = TIMESTAMP', "cursor.startup.timestamp", "cursor.startup.timestamp"),
    ("source", f'{URLS}, subscription.name = "s", topic = "a", cursor.stop.mode = LATEST, cursor.startup.mode = X',
     "cursor.startup.mode", "cursor.startup.mode"),
    ("source", f'{URLS}, subscription.name = "s", topic-pattern = "a.*", cursor.stop.mode = LATEST, '
               'topic-discovery.interval = 1000', "topic-discovery.interval", "dynamic partition discovery"),
    ("sink", f'{URLS}, topic = "o", auth.params = "token:{TOKEN}"', "auth.plugin-class", "go together"),
    ("sink", f'{URLS}, topic = "o", auth.plugin-class = "x.Basic", auth.params = "a:b"', "auth.plugin-class",
     "is not supported here"),
    ("sink", f'{URLS}, topic = "o", semantics = EXACTLY_ONCE', "semantics", "transactions"),
    ("sink", f'{URLS}', "topic", "'topic' is required"),
    ("sink", 'client.service-url = "http://h:1", admin.service-url = "http://h:2", topic = "o"', "client.service-url",
     "pulsar://host:port"),
])
def test_bad_options_fail_at_their_line(config_error, section, options, key, message):
    block = f"Pulsar {{ plugin_output = \"r\",\n  {options} }}" if section == "source" else \
        f"Pulsar {{ plugin_input = \"f\",\n  {options} }}"
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "r" }' if section == "source" else block
    error = config_error(f"env {{ job.mode = BATCH }}\nsource {{ {source} }}\nsink {{ {sink} }}\n")
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("Pulsar") and problem.file and problem.line is not None
    assert TOKEN not in str(error)


def test_parse_reads_seatunnels_options():
    o = parse({"client.service-url": "pulsar://h:6650", "admin.service-url": "http://h:8080", "subscription.name": "s",
               "topic": "a, t1/ns/b,persistent://x/y/c", "cursor.startup.mode": "subscription",
               "cursor.reset.mode": "earliest", "cursor.stop.mode": "timestamp", "cursor.stop.timestamp": 5,
               "auth.plugin-class": "org.apache.pulsar.client.impl.auth.AuthenticationToken",
               "auth.params": "token:abc"}, SOURCE)
    assert o.topics == ("persistent://public/default/a", "persistent://t1/ns/b", "persistent://x/y/c")
    assert (o.start, o.reset, o.stop, o.stop_timestamp) == ("SUBSCRIPTION", "EARLIEST", "TIMESTAMP", 5)
    assert o.endpoint == Endpoint("pulsar://h:6650", "http://h:8080", "abc") and "abc" not in repr(o.endpoint)
    s = parse({"client.service-url": "pulsar://h:6650", "admin.service-url": "http://h:8080", "topic": "o",
               "pulsar.config": {"sendTimeoutMs": 1000, "unknownSetting": 1}}, SINK)
    assert (s.semantics, s.routing, s.format, dict(s.producer)) == \
        ("AT_LEAST_ONCE", "RoundRobinPartition", "json", {"send_timeout_millis": 1000})
    assert full_topic("persistent://a/b/c") == "persistent://a/b/c"


def test_a_connection_gives_the_urls_and_the_token(plan_of):
    conn = ConnectionInfo("p", "pulsar", host="broker", port=6651, password="tok", extra={"admin_url": "https://b:1"})
    assert PULSAR.connection_options(conn) == {
        "client.service-url": "pulsar://broker:6651", "admin.service-url": "https://b:1",
        "auth.plugin-class": "org.apache.pulsar.client.impl.auth.AuthenticationToken", "auth.params": "token:tok"}
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source { Pulsar { plugin_output = "r", pulsar_conn_id = "p", subscription.name = "s", topic = "a",
                          cursor.stop.mode = LATEST } }
        sink { Pulsar { plugin_input = "r", pulsar_conn_id = "p", topic = "b" } }
    """)
    assert not plan.warnings
