"""Rocketmq at compile time: SeaTunnel's job configs plan with their schema and the plan's parallelism, located
errors for SeaTunnel's rules (and for what this package refuses: ACL, exactly.once, STREAMING reads), the
secret key kept out of plans; the remoting protocol's frames and stored messages decoded, hostile ones refused;
SeaTunnel's select-by-hash queue choice."""

from __future__ import annotations

import struct
import zlib

import pytest

from airflow_provider_seatunnel.connectors.rocketmq import remoting as r
from airflow_provider_seatunnel.connectors.rocketmq.client import java_hash, queue_for_key
from airflow_provider_seatunnel.connectors.rocketmq.options import SinkOptions, SourceOptions, parse
from airflow_provider_seatunnel.spi import SINK, SOURCE

ADDR = 'name.srv.addr = "127.0.0.1:9876"'
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def test_seatunnels_text_job_plans_with_its_schema_and_parallelism(plan_of):
    plan = plan_of(f"""
        env {{ parallelism = 1, job.mode = "BATCH" }}
        source {{ Rocketmq {{ {ADDR}, topics = "t1,t2", plugin_output = "r", parallelism = 3, format = text,
                             field.delimiter = "#", start.mode = "CONSUME_FROM_SPECIFIC_OFFSETS",
                             start.mode.offsets = {{ t1-0 = 70, t2-3 = 1 }},
                             schema = {{ fields {{ id = bigint, c_map = "map<string, smallint>" }} }} }} }}
        sink {{ Rocketmq {{ plugin_input = "r", {ADDR}, topic = "out", partition.key.fields = ["id"],
                           producer.send.sync = true }} }}
    """)
    assert not plan.warnings
    vertices = {v.ref.split("[")[0]: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source"].schema == {"id": "bigint", "c_map": "map<string, smallint>"}
    assert vertices["source"].parallelism == 3
    o = parse(vertices["source"].config, SOURCE)
    assert isinstance(o, SourceOptions) and o.topics == ("t1", "t2") and o.format == "text" and o.delimiter == "#"
    assert o.start_offsets == {("t1", 0): 70, ("t2", 3): 1} and o.group == "SeaTunnel-Consumer-Group"
    sink = parse(vertices["sink"].config, SINK)
    assert isinstance(sink, SinkOptions) and sink.key_fields == ("id",) and sink.max_message_size == 4 * 1024 * 1024


def test_a_streaming_read_is_refused_at_its_line(config_error):
    error = config_error(f"""
        env {{ job.mode = "STREAMING" }}
        source {{ Rocketmq {{ plugin_output = "m", {ADDR}, topics = "t", schema = {{ fields {{ id = int }} }} }} }}
        sink {{ Console {{ plugin_input = "m" }} }}
    """)
    problem = error.problems[0]
    assert "STREAMING" in problem.message and problem.plugin.endswith("Rocketmq") and problem.line == 3


@pytest.mark.parametrize("section, options, key, message", [
    ("source", 'topics = "t", schema = { fields { a = int } }', "name.srv.addr", "'name.srv.addr' is required"),
    ("source", f'{ADDR}, schema = {{ fields {{ a = int }} }}', "topics", "'topics' is required"),
    ("source", f'{ADDR}, topics = "t"', "schema", "the option 'schema' is required"),
    ("source", 'name.srv.addr = "nohost", topics = "t", schema = { fields { a = int } }', "name.srv.addr",
     "host:port"),
    ("source", f'{ADDR}, topics = "t", start.mode = "CONSUME_FROM_TIMESTAMP", schema = {{ fields {{ a = int }} }}',
     "start.mode.timestamp", "start.mode.timestamp"),
    ("source", f'{ADDR}, topics = "t", start.mode = "CONSUME_FROM_TIMESTAMP", start.mode.timestamp = 99999999999999, '
               'schema = { fields { a = int } }', "start.mode.timestamp", "later than now"),
    ("source", f'{ADDR}, topics = "t", start.mode = "CONSUME_FROM_SPECIFIC_OFFSETS", start.mode.offsets = {{ u-0 = 1 }},'
               ' schema = { fields { a = int } }', "start.mode.offsets", "<topic>-<queue id>"),
    ("source", f'{ADDR}, topics = "t", start.mode = "FROM_NOWHERE", schema = {{ fields {{ a = int }} }}',
     "start.mode", "unknown start.mode"),
    ("source", f'{ADDR}, topics = "t", format = avro, schema = {{ fields {{ a = int }} }}', "format", "format"),
    ("source", f'{ADDR}, topics = "t", acl.enabled = true, access.key = "ak", secret.key = "s3cret-key", '
               'schema = { fields { a = int } }', "acl.enabled", "not supported"),
    ("source", f'{ADDR}, topics = "t", acl.enabled = true, schema = {{ fields {{ a = int }} }}', "access.key",
     "access.key and secret.key must be set"),
    ("sink", f'{ADDR}', "topic", "'topic' is required"),
    ("sink", f'{ADDR}, topic = "t", exactly.once = true', "exactly.once", "at least once"),
    ("sink", f'{ADDR}, topic = "t", max.message.size = 0', "max.message.size", "max.message.size"),
])
def test_bad_options_fail_at_their_line(config_error, section, options, key, message):
    block = f"Rocketmq {{ plugin_output = \"r\",\n  {options} }}" if section == "source" else \
        f"Rocketmq {{ plugin_input = \"f\",\n  {options} }}"
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "r" }' if section == "source" else block
    error = config_error(f"env {{ job.mode = BATCH }}\nsource {{ {source} }}\nsink {{ {sink} }}\n")
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("Rocketmq") and problem.file and problem.line is not None
    assert "s3cret-key" not in str(error)


def test_a_frame_round_trips_and_a_hostile_frame_is_refused():
    frame = r.encode_frame(r.PULL_MESSAGE, {"topic": "t", "queueId": 3, "flag": True}, b"body", opaque=7)
    (length,) = struct.unpack(">i", frame[:4])
    assert length == len(frame) - 4
    header, body = r.decode_frame(frame[4:])
    assert header["code"] == r.PULL_MESSAGE and header["opaque"] == 7 and body == b"body"
    assert header["extFields"] == {"topic": "t", "queueId": "3", "flag": "true"}
    with pytest.raises(r.RemotingError, match="longer than the frame"):
        r.decode_frame(struct.pack(">i", 1000) + b"{}")
    with pytest.raises(r.RemotingError, match="serialization"):
        r.decode_frame(struct.pack(">i", (1 << 24) | 2) + b"{}")
    with pytest.raises(r.RemotingError, match="unreadable header"):
        r.decode_frame(struct.pack(">i", 3) + b"{x}")
    # fastjson's unquoted number keys
    assert r.loads(b'{"brokerAddrs":{0:"127.0.0.1:10911",1:"h:2"}}') == {"brokerAddrs": {"0": "127.0.0.1:10911",
                                                                                          "1": "h:2"}}


def stored(body: bytes, topic: str = "t", props: str = "KEYS\x01k\x02TAGS\x01a\x02", sys_flag: int = 0,
           offset: int = 5) -> bytes:
    """A stored message as the broker's pull returns it (v1 magic: one-byte topic length)."""
    rest = struct.pack(">iiiiqqiq", -626843481, 0, 2, 0, offset, 0, sys_flag, 1000) + bytes(8) + \
        struct.pack(">q", 2000) + bytes(8) + struct.pack(">iq", 0, 0) + struct.pack(">i", len(body)) + body + \
        struct.pack(">B", len(topic)) + topic.encode() + struct.pack(">h", len(props)) + props.encode()
    return struct.pack(">i", len(rest) + 4) + rest


def test_stored_messages_decode_and_corrupt_or_bomb_ones_are_refused():
    data = stored(b'{"id":1}') + stored(zlib.compress(b"x" * 100), sys_flag=1, offset=6)
    first, second = r.decode_messages(data)
    assert (first.body, first.keys, first.tags, first.topic, first.queue_id, first.queue_offset) == \
        (b'{"id":1}', "k", "a", "t", 2, 5)
    assert second.body == b"x" * 100 and second.queue_offset == 6
    lying = bytearray(stored(b"abc"))
    lying[84:88] = struct.pack(">i", 1000)  # a body length past the message's own size
    with pytest.raises(r.RemotingError, match="run past its size"):
        list(r.decode_messages(bytes(lying)))
    with pytest.raises(r.RemotingError, match="in a body of"):
        list(r.decode_messages(stored(b"abc")[:-3]))  # a size that claims more than the pull returned
    with pytest.raises(r.RemotingError, match="inflates past"):
        list(r.decode_messages(stored(zlib.compress(b"x" * 10_000), sys_flag=1), max_body=1000))
    with pytest.raises(r.RemotingError):
        list(r.decode_messages(struct.pack(">i", -5) + bytes(10)))


def test_keys_pick_queues_as_javas_string_hash():
    assert java_hash("") == 0 and java_hash("a") == 97 and java_hash("polygenelubricants") == -2147483648
    assert java_hash('{"id":1}') == sum(ord(c) * 31 ** (7 - i) for i, c in enumerate('{"id":1}')) % 2 ** 32 - (
        2 ** 32 if sum(ord(c) * 31 ** (7 - i) for i, c in enumerate('{"id":1}')) % 2 ** 32 >= 2 ** 31 else 0)
    assert queue_for_key("polygenelubricants", 4) == 0 and all(0 <= queue_for_key(str(i), 3) < 3 for i in range(50))
