"""RabbitMQ at compile time: SeaTunnel's corpus job plans as written, the source's schema and the plan's
parallelism, located errors for SeaTunnel's rules, secrets kept out of plans, BATCH not portable."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.rabbitmq.options import Endpoint, parse
from airflow_provider_seatunnel.spi import SINK
from airflow_provider_seatunnel.spi.options import OptionError

CONN = 'host = "127.0.0.1", port = 5672, virtual_host = "/", username = "guest", password = "s3cret-pass"'
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def test_seatunnels_streaming_job_plans_with_its_schema_and_parallelism(write_conf, plan_of, capsys):
    text = f"""
        env {{ parallelism = 1, job.mode = "STREAMING" }}
        source {{ RabbitMQ {{ plugin_output = "m", {CONN}, queue_name = "test", durable = "true", exclusive = "false",
                             auto_delete = "false", for_e2e_testing = true, parallelism = 3,
                             schema = {{ fields {{ id = bigint, c_map = "map<string, smallint>" }} }} }} }}
        sink {{ RabbitMQ {{ plugin_input = "m", {CONN}, queue_name = "test1", rabbitmq.config = {{
                             requested-heartbeat = 10 }} }} }}
    """
    plan = plan_of(text)
    assert not plan.warnings
    vertices = {v.ref.split("[")[0]: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source"].schema == {"id": "bigint", "c_map": "map<string, smallint>"}
    assert vertices["source"].parallelism == 3
    assert "s3cret-pass" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(text))]) == 0
    assert "s3cret-pass" not in capsys.readouterr().out


def test_a_batch_read_is_not_portable(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ RabbitMQ {{ plugin_output = "m", {CONN}, queue_name = "q", schema = {{ fields {{ id = int }} }} }} }}
        sink {{ Console {{ plugin_input = "m" }} }}
    """)
    assert [w["code"] for w in plan.warnings] == ["not-portable"] and "STREAMING" in plan.warnings[0]["message"]


@pytest.mark.parametrize("section, options, key, message", [
    ("source", 'port = 5672, virtual_host = "/", queue_name = "q", schema = { fields { a = int } }', "host",
     "the option 'host' is required"),
    ("source", 'host = "h", port = 5672, queue_name = "q", schema = { fields { a = int } }', "virtual_host",
     "the option 'virtual_host' is required"),
    ("source", f'{CONN}, schema = {{ fields {{ a = int }} }}', "queue_name", "the option 'queue_name' is required"),
    ("source", f'{CONN}, queue_name = "q"', "schema", "the option 'schema' is required"),
    ("source", f'{CONN}, queue_name = "q", schema = {{ fields {{ a = intt }} }}', "schema", "intt"),
    ("source", f'{CONN}, queue_name = "q", prefetch_count = -1, schema = {{ fields {{ a = int }} }}',
     "prefetch_count", "prefetch_count must be an integer"),
    ("sink", 'host = "h", port = 5672, virtual_host = "/", username = "u", queue_name = "q"', "password",
     "username and password go together"),
    ("sink", f'{CONN}, queue_name = "q", url = "http://x"', "url", "url must be an AMQP URI"),
    ("sink", f'{CONN}, queue_name = "q", durable = "maybe"', "durable", "durable"),
    ("sink", f'{CONN}, queue_name = "q", requested_frame_max = 100', "requested_frame_max", "at least 4096"),
])
def test_bad_options_fail_at_their_line(config_error, section, options, key, message):
    block = f"RabbitMQ {{ plugin_output = \"r\",\n  {options} }}" if section == "source" else \
        f"RabbitMQ {{ plugin_input = \"f\",\n  {options} }}"
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "r" }' if section == "source" else block
    error = config_error(f"env {{ job.mode = STREAMING }}\nsource {{ {source} }}\nsink {{ {sink} }}\n")
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("RabbitMQ") and problem.file and problem.line is not None
    assert "s3cret-pass" not in str(error)


def test_url_replaces_the_address_and_credentials_and_labels_hide_them():
    o = parse({"host": "h", "port": 1, "virtual_host": "/", "queue_name": "q",
               "url": "amqp://ann:p%40ss@broker.example:5673/prod%2Fa", "connection_timeout": 2500}, SINK)
    assert o.endpoint == Endpoint("broker.example", 5673, "prod/a", "ann", "p@ss", timeout_ms=2500)
    assert o.endpoint.label == "amqp://broker.example:5673/prod%2Fa" and "p@ss" not in repr(o.endpoint)
    assert Endpoint.from_json(o.endpoint.to_json()) == o.endpoint
    with pytest.raises(OptionError, match="amqps"):
        parse({"host": "h", "port": 1, "virtual_host": "/", "queue_name": "q", "url": "amqps://h/"}, SINK)


def test_a_connection_gives_the_address(plan_of):
    plan = plan_of("""
        env { job.mode = "STREAMING" }
        source { RabbitMQ { plugin_output = "r", rabbitmq_conn_id = "mq", queue_name = "q",
                            schema = { fields { id = int } } } }
        sink { RabbitMQ { plugin_input = "r", rabbitmq_conn_id = "mq", queue_name = "q2" } }
    """)
    assert not plan.warnings
