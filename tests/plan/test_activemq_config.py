"""ActiveMQ at compile time: SeaTunnel's example plans and runs here (no warning), the plan's parallelism, located
errors for SeaTunnel's rules (uri and queue_name required, username and password together, a URI this package
reaches), secrets kept out of plans and validate's output, an Airflow connection instead of the URI; and the
STOMP client's framing (escapes, bodies, frames split across reads), without a broker."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.activemq import CONNECTOR
from airflow_provider_seatunnel.connectors.activemq.options import Endpoint, parse
from airflow_provider_seatunnel.connectors.activemq.stomp import Frame, Stomp, StompError, encode
from airflow_provider_seatunnel.spi.options import OptionError

FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def test_seatunnels_example_plans_runnable_with_its_parallelism_and_no_secret(write_conf, plan_of, capsys):
    text = f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ {FAKE} }}
        sink {{ ActiveMQ {{ plugin_input = "f", uri = "tcp://localhost:61616", username = "admin",
                           password = "s3cret-pass", queue_name = "test1", check_for_duplicate = true,
                           client_id = "c1", disable_timeStamps_by_default = false, parallelism = 3 }} }}
    """
    plan = plan_of(text)
    assert not plan.warnings
    sink = plan.pipelines[0].vertices[-1]
    assert sink.parallelism == 3
    assert "s3cret-pass" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(text))]) == 0
    assert "s3cret-pass" not in capsys.readouterr().out
    assert CONNECTOR.assets({"uri": "tcp://u:pw@broker:61617", "queue_name": "a b"}) == ["activemq://broker:61617/a%20b"]


@pytest.mark.parametrize("options, key, message", [
    ('queue_name = "q"', "uri", "the option 'uri' is required"),
    ('uri = "tcp://h:61616"', "queue_name", "the option 'queue_name' is required"),
    ('uri = "tcp://h:61616", queue_name = "q", username = "u"', "password", "username and password go together"),
    ('uri = "failover:(tcp://a:1,tcp://b:2)", queue_name = "q"', "uri", "failover:, ssl:// and vm://"),
    ('uri = "ssl://h:61617", queue_name = "q"', "uri", "not supported"),
    ('uri = "tcp://h:61616", queue_name = "q", close_timeout = "soon"', "close_timeout", "close_timeout"),
])
def test_bad_options_fail_at_their_line(config_error, options, key, message):
    error = config_error(f'source {{ {FAKE} }}\nsink {{ ActiveMQ {{ plugin_input = "f",\n  {options} }} }}\n')
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("ActiveMQ") and problem.line is not None


def test_the_uri_gives_credentials_and_a_block_or_connection_fills_the_rest():
    o = parse({"uri": "tcp://ann:p%40ss@broker.example:61617", "queue_name": "q"})
    assert o.endpoint == Endpoint("broker.example", 61617, "ann", "p@ss") and "p@ss" not in repr(o.endpoint)
    assert Endpoint.from_json(o.endpoint.to_json()) == o.endpoint
    o = parse({"uri": "auto://h", "queue_name": "q", "username": "u", "password": "p"})
    assert (o.endpoint.port, o.endpoint.user) == (61616, "u")
    assert parse({"activemq_conn_id": "mq", "queue_name": "q"}, need_endpoint=False).endpoint is None
    with pytest.raises(OptionError, match="uri"):
        parse({"activemq_conn_id": "mq", "queue_name": "q"})


def test_stomp_frames_escape_headers_and_read_back_split_across_reads():
    frame = Frame("SEND", {"destination": "/queue/a:b", "note": "x\ny\\z"}, b'{"a": "\xc3\xa9"}')
    data = encode(frame)
    assert data.startswith(b"SEND\ndestination:/queue/a\\cb\nnote:x\\ny\\\\z\n\n") and data.endswith(b"\0")
    with pytest.raises(StompError, match="NUL"):
        encode(Frame("SEND", {}, b"a\0b"))
    client = Stomp("127.0.0.1", 1)
    for i in range(0, len(data), 5):  # a frame arriving in pieces parses once whole
        client._buf += data[i:i + 5]
        parsed = client._frame_in_buffer()
        assert parsed is None or i + 5 >= len(data)
    assert parsed == frame
    client._buf += b"\nMESSAGE\ncontent-length:3\n\na\0b\0"  # a heart-beat, then a body holding NUL
    assert client._frame_in_buffer() == Frame("MESSAGE", {"content-length": "3"}, b"a\0b")
