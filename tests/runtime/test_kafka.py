"""The Kafka source and sink against a real single-node broker (tests/kafka_server.py, KRaft):
formats and row kinds, start modes and the batch bound, keys and partitions, exactly-once commits
that survive restores and fence overlapping attempts, and a streaming sync resumed from its checkpoint."""

from __future__ import annotations

import json
import uuid

import pytest

from airflow_provider_seatunnel.connectors.kafka import CONNECTOR
from airflow_provider_seatunnel.connectors.kafka.sink import Fenced, committed_runs, transactional_id
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext


def topic_name(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def read_back(spark, path) -> list[dict]:
    return sorted((r.asDict() for r in spark.read.json(str(path)).collect()), key=lambda d: json.dumps(d, sort_keys=True))


def source_job(kafka, out, options: str, transform: str = "", mode: str = "BATCH", env: str = "") -> str:
    return f"""
        env {{ job.mode = "{mode}", parallelism = 1 {env} }}
        source {{ Kafka {{ plugin_output = "k", bootstrap.servers = "{kafka.bootstrap}", {options} }} }}
        transform {{ {transform} }}
        sink {{ LocalFile {{ plugin_input = "{'x' if transform else 'k'}", path = "{out}", file_format_type = "json" }} }}
    """


FIELDS = "schema = { fields { id = bigint, name = string, score = \"decimal(6,2)\", ts = timestamp } }"


# ------------------------------------------------------------------------------------------------
# source: formats, row kinds, start modes
# ------------------------------------------------------------------------------------------------

def test_json_records_become_typed_rows_read_up_to_the_offsets_seen_at_start(run_job, spark, kafka, tmp_path):
    t = kafka.create_topic(topic_name(), partitions=2)
    kafka.produce(t, [json.dumps({"id": i, "name": f"n{i}", "score": "1.50", "ts": "2024-01-02 03:04:05"})
                      for i in range(5)] + ['{"id": "7", "name": null}'], keys=None)
    run_job(source_job(kafka, tmp_path / "o", f'topic = "{t}", start_mode = earliest, {FIELDS}'))
    rows = read_back(spark, tmp_path / "o")
    assert [r["id"] for r in rows] == [0, 1, 2, 3, 4, 7]  # "7" read as a bigint, as SeaTunnel's reader does
    assert rows[0]["score"] == 1.5 and rows[0]["ts"].startswith("2024-01-02T03:04:05")
    assert rows[-1]["name"] is None


def test_text_records_and_a_source_without_schema(run_job, spark, kafka, tmp_path):
    t = kafka.create_topic(topic_name())
    kafka.produce(t, ["1|ann|2.5", "2||", "3|cy"])
    run_job(source_job(kafka, tmp_path / "o", f'topic = "{t}", start_mode = earliest, format = text, '
                       'field_delimiter = "|", schema = { fields { id = int, name = string, score = double } }'))
    assert read_back(spark, tmp_path / "o") == [{"id": 1, "name": "ann", "score": 2.5},
                                                    {"id": 2, "name": None, "score": None},
                                                    {"id": 3, "name": "cy", "score": None}]
    run_job(source_job(kafka, tmp_path / "c", f'topic = "{t}", start_mode = earliest'))
    assert sorted(r["content"] for r in read_back(spark, tmp_path / "c")) == ["1|ann|2.5", "2||", "3|cy"]


CHANGES = {
    "debezium_json": [
        {"schema": {}, "payload": {"before": None, "after": {"id": 1, "name": "a"}, "op": "c"}},
        {"schema": {}, "payload": {"before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "b"}, "op": "u"}},
        {"schema": {}, "payload": {"before": {"id": 1, "name": "b"}, "after": None, "op": "d"}},
        None,  # a tombstone
    ],
    "canal_json": [
        {"data": [{"id": "1", "name": "a"}, {"id": "2", "name": "z"}], "type": "INSERT", "database": "d", "table": "t"},
        {"data": [{"id": "1", "name": "b"}], "old": [{"name": "a"}], "type": "UPDATE"},
        {"data": [{"id": "1", "name": "b"}], "type": "DELETE"},
        {"data": None, "type": "CREATE", "isDdl": True, "sql": "create table t"},
    ],
    "ogg_json": [
        {"table": "D.T", "op_type": "I", "after": {"id": 1, "name": "a"}},
        {"table": "D.T", "op_type": "U", "before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "b"}},
        {"table": "D.T", "op_type": "D", "before": {"id": 1, "name": "b"}},
    ],
    "maxwell_json": [
        {"database": "d", "table": "t", "type": "insert", "data": {"id": 1, "name": "a"}},
        {"database": "d", "table": "t", "type": "update", "data": {"id": 1, "name": "b"}, "old": {"name": "a"}},
        {"database": "d", "table": "t", "type": "delete", "data": {"id": 1, "name": "b"}},
    ],
}
KINDS = {
    "debezium_json": [("+I", "a"), ("-U", "a"), ("+U", "b"), ("-D", "b")],
    "canal_json": [("+I", "a"), ("+I", "z"), ("-U", "a"), ("+U", "b"), ("-D", "b")],
    "ogg_json": [("+I", "a"), ("-U", "a"), ("+U", "b"), ("-D", "b")],
    "maxwell_json": [("+I", "a"), ("-U", "a"), ("+U", "b"), ("-D", "b")],
}


@pytest.mark.parametrize("fmt", sorted(CHANGES))
def test_change_log_formats_give_row_kinds(run_job, spark, kafka, tmp_path, fmt):
    t = kafka.create_topic(topic_name())
    kafka.produce(t, [json.dumps(v) if v is not None else None for v in CHANGES[fmt]] + ["not json"])
    transform = 'RowKindExtractor { plugin_input = "k", plugin_output = "x", transform_type = SHORT }'
    run_job(source_job(kafka, tmp_path / "o", f'topic = "{t}", start_mode = earliest, format = {fmt}, '
                       'schema = { fields { id = int, name = string } }', transform))
    rows = spark.read.json(str(tmp_path / "o")).orderBy("row_kind").collect()
    got = sorted((r["row_kind"], r["name"]) for r in rows)
    assert got == sorted(KINDS[fmt])


def test_start_modes(run_job, spark, kafka, tmp_path):
    import time

    from confluent_kafka import Consumer, TopicPartition

    t = kafka.create_topic(topic_name(), partitions=2)
    kafka.produce(t, [json.dumps({"id": i}) for i in range(4)], partition=0)
    kafka.produce(t, [json.dumps({"id": 10 + i}) for i in range(3)], partition=1)
    time.sleep(0.05)
    cut = int(time.time() * 1000)
    time.sleep(0.05)
    kafka.produce(t, [json.dumps({"id": 20})], partition=1)
    base = f'topic = "{t}", schema = {{ fields {{ id = int }} }}'

    def ids(name: str, options: str) -> list[int]:
        run_job(source_job(kafka, tmp_path / name, f"{base}, {options}"))
        path = tmp_path / name
        return sorted(r["id"] for r in read_back(spark, path)) if any(path.glob("*.json")) else []

    assert ids("e", "start_mode = earliest") == [0, 1, 2, 3, 10, 11, 12, 20]
    assert ids("l", "start_mode = latest") == []
    assert ids("s", f'start_mode = specific_offsets, start_mode.offsets = {{ "{t}-0" = 3, "{t}-1" = 2 }}') == [3, 12, 20]
    assert ids("ts", f"start_mode = timestamp, start_mode.timestamp = {cut}") == [20]
    # group_offsets: the group's committed offsets; partitions it never committed start at the end (Kafka's default)
    group = f"g_{t}"
    c = Consumer(kafka.config(**{"group.id": group}))
    c.commit(offsets=[TopicPartition(t, 0, 2)], asynchronous=False)
    c.close()
    keep = "commit_on_checkpoint = false"  # these runs leave the group's offsets as they are
    assert ids("g", f'start_mode = group_offsets, consumer.group = "{group}", {keep}') == [2, 3]
    assert ids("g2", f'consumer.group = "{group}", {keep}, kafka.config = {{ "auto.offset.reset" = "earliest" }}') \
        == [2, 3, 10, 11, 12, 20]


def test_batch_runs_from_group_offsets_read_new_records_each_run(run_job, spark, kafka, tmp_path):
    t = kafka.create_topic(topic_name("g"), partitions=2)
    kafka.produce(t, [json.dumps({"id": i}) for i in range(4)])
    options = (f'topic = "{t}", consumer.group = "sync_{t}", kafka.config = {{ "auto.offset.reset" = "earliest" }}, '
               'schema = { fields { id = int } }')

    def ids(name: str) -> list[int]:
        run_job(source_job(kafka, tmp_path / name, options), run_id=name)
        path = tmp_path / name
        return sorted(r["id"] for r in read_back(spark, path)) if any(path.glob("*.json")) else []

    assert ids("a") == [0, 1, 2, 3]  # a new group: from the beginning (auto.offset.reset), then committed
    assert ids("b") == []
    kafka.produce(t, [json.dumps({"id": i}) for i in range(4, 6)])
    assert ids("c") == [4, 5]
    no_commit = options + ", commit_on_checkpoint = false"
    kafka.produce(t, [json.dumps({"id": 6})])
    for name in ("d", "e"):  # without commits every run starts where the group last committed
        run_job(source_job(kafka, tmp_path / name, no_commit), run_id=name)
        assert sorted(r["id"] for r in read_back(spark, tmp_path / name)) == [6]


def test_a_restore_after_the_commit_reads_what_its_attempt_read(run_job, spark, kafka, tmp_path, monkeypatch):
    """Attempt 1 commits its sinks, then dies before the consumer group is moved. Records arrive. The restore
    (same run id) finds its sinks committed and writes nothing: it must move the group only as far as
    attempt 1 read, or the new records would be skipped by every later run (lost)."""
    from airflow_provider_seatunnel.connectors.kafka import source as kafka_source

    t = kafka.create_topic(topic_name("r"), partitions=2)
    kafka.produce(t, [json.dumps({"id": i}) for i in range(4)])
    options = (f'topic = "{t}", consumer.group = "sync_{t}", kafka.config = {{ "auto.offset.reset" = "earliest" }}, '
               'schema = { fields { id = int } }')
    acknowledge = kafka_source.acknowledge

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed after the commit")  # not an Exception: nothing after it runs

    monkeypatch.setattr(kafka_source, "acknowledge", killed)
    with pytest.raises(KeyboardInterrupt):
        run_job(source_job(kafka, tmp_path / "a", options), run_id="a")
    monkeypatch.setattr(kafka_source, "acknowledge", acknowledge)
    kafka.produce(t, [json.dumps({"id": i}) for i in range(4, 7)])
    run_job(source_job(kafka, tmp_path / "a", options), run_id="a")  # the restore: committed already
    assert sorted(r["id"] for r in read_back(spark, tmp_path / "a")) == [0, 1, 2, 3]
    run_job(source_job(kafka, tmp_path / "b", options), run_id="b")
    written = any((tmp_path / "b").glob("*.json"))
    assert written and sorted(r["id"] for r in read_back(spark, tmp_path / "b")) == [4, 5, 6]  # none lost


def test_a_table_list_reads_each_topic_as_its_table(plan_of, spark, kafka):
    a, b = kafka.create_topic(topic_name("a")), kafka.create_topic(topic_name("b"))
    kafka.produce(a, [json.dumps({"id": 1})])
    kafka.produce(b, ["x,2"])
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ Kafka {{ plugin_output = "k", bootstrap.servers = "{kafka.bootstrap}", start_mode = earliest,
                  table_list = [{{ topic = "{a}", schema = {{ fields {{ id = int }} }} }},
                                {{ topic = "{b}", format = text, schema = {{ fields {{ s = string, n = int }} }} }}] }} }}
        sink {{ Console {{ plugin_input = "k" }} }}
    """)
    pipeline = plan.pipelines[0]
    vertex = next(v for v in pipeline.vertices if v.kind == "source")
    data = CONNECTOR.read(RunContext(spark, plan, pipeline, "tl"), vertex)
    assert sorted(data) == sorted([a, b])
    assert [r["id"] for r in data[a].collect()] == [1]
    assert [(r["s"], r["n"]) for r in data[b].collect()] == [("x", 2)]


# ------------------------------------------------------------------------------------------------
# sink: formats, keys, partitions
# ------------------------------------------------------------------------------------------------

def sink_job(kafka, options: str, rows: list[tuple] | None = None, parallelism: int = 2) -> str:
    rows = rows if rows is not None else [("INSERT", 1, "a"), ("INSERT", 2, "b"), ("UPDATE_BEFORE", 2, "b"),
                                         ("UPDATE_AFTER", 2, "c"), ("DELETE", 1, "a")]
    listed = ", ".join(f'{{ kind = {k}, fields = [{i}, "{n}"] }}' for k, i, n in rows)
    return f"""
        env {{ job.mode = "BATCH", parallelism = {parallelism} }}
        source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = int, name = string }} }}, rows = [{listed}] }} }}
        sink {{ Kafka {{ plugin_input = "f", bootstrap.servers = "{kafka.bootstrap}", {options} }} }}
    """


def values(kafka, topic, isolation="read_committed") -> list:
    return [(k.decode() if k else None, json.loads(v) if v and v.startswith(b"{") else v.decode(), p)
            for k, v, p, _o in kafka.consume(topic, isolation=isolation)]


def test_sink_formats_keys_and_partitions(run_job, kafka):
    t = kafka.create_topic(topic_name(), partitions=3)
    (metrics,) = run_job(sink_job(kafka, f'topic = "{t}", partition_key_fields = ["id"]', parallelism=1))
    assert metrics["write_count"] == 5 and metrics["read_count"] == 5  # counted though Spark's writer runs its own job
    got = values(kafka, t)
    assert sorted(v["name"] for _k, v, _p in got) == ["a", "a", "b", "b", "c"]  # json ignores row kinds
    by_key = {}
    for k, _v, p in got:
        by_key.setdefault(k, set()).add(p)
    assert sorted(by_key) == ['{"id":1}', '{"id":2}'] and all(len(ps) == 1 for ps in by_key.values())

    d = kafka.create_topic(topic_name())
    run_job(sink_job(kafka, f'topic = "{d}", format = debezium_json, partition = 0', parallelism=1))
    ops = sorted((v["op"], (v["after"] or v["before"])["name"]) for _k, v, _p in values(kafka, d))
    assert ops == [("c", "a"), ("c", "b"), ("c", "c"), ("d", "a"), ("d", "b")]

    x = kafka.create_topic(topic_name())
    run_job(sink_job(kafka, f'topic = "{x}", format = text, field_delimiter = ";"', parallelism=1))
    assert sorted(v for _k, v, _p in values(kafka, x)) == ["1;a", "1;a", "2;b", "2;b", "2;c"]


def test_assign_partitions_and_a_topic_per_row(run_job, kafka):
    t = kafka.create_topic(topic_name(), partitions=4)
    rows = [("INSERT", i, name) for i, name in enumerate(["shoe1", "hat", "shoe2", "coat", "cap"])]
    run_job(sink_job(kafka, f'topic = "{t}", assign_partitions = ["shoe", "coat"]', rows, parallelism=1))
    placed = {v["name"]: p for _k, v, p in values(kafka, t)}
    assert placed["shoe1"] == placed["shoe2"] == 0 and placed["coat"] == 1
    assert placed["hat"] in (2, 3) and placed["cap"] in (2, 3)
    a, b = topic_name("pa"), topic_name("pb")
    kafka.create_topic(a), kafka.create_topic(b)
    run_job(sink_job(kafka, 'topic = "${name}"', [("INSERT", 1, a), ("INSERT", 2, b), ("INSERT", 3, a)], parallelism=1))
    assert sorted(v["id"] for _k, v, _p in values(kafka, a)) == [1, 3]
    assert [v["id"] for _k, v, _p in values(kafka, b)] == [2]


# ------------------------------------------------------------------------------------------------
# EXACTLY_ONCE
# ------------------------------------------------------------------------------------------------

KAFKA = twophase.driver(CONNECTOR)  # the engine's two phases over the sink's verbs


def eo_ctx(plan_of, spark, kafka, topic: str, run_id: str, attempt: int = 1, fault: str | None = None):
    rows = [("INSERT", i, f"n{i}") for i in range(12)]
    plan = plan_of(sink_job(kafka, f'topic = "{topic}", semantics = EXACTLY_ONCE', rows, parallelism=3))
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12):
    from airflow_provider_seatunnel.spi.rows import with_kind

    return {"default": with_kind(spark.createDataFrame([(i, f"n{i}") for i in range(n)], "id int, name string")
                                 .repartition(3))}


def ids_in(kafka, topic, isolation="read_committed") -> list[int]:
    return sorted(v["id"] for _k, v, _p in values(kafka, topic, isolation))


def recorded(kafka, group: str, topics):
    """The run the group's last transaction recorded (the broker writes it just after the commit returns)."""
    import time

    deadline = time.monotonic() + 10
    while not (found := committed_runs(kafka.config(), group, topics)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found[0] if found else None


def sink_opts(vertex):
    from airflow_provider_seatunnel.connectors.kafka.options import sink_options

    return sink_options(vertex.config)


def test_an_overlapping_attempt_is_fenced(plan_of, spark, kafka):
    from confluent_kafka import Producer

    t = kafka.create_topic(topic_name("fence"))
    ctx, vertex = eo_ctx(plan_of, spark, kafka, t, "F1")
    # a zombie attempt of the same run holds an open transaction with rows in it
    zombie = Producer(kafka.config(**{"transactional.id": transactional_id(ctx, vertex, sink_opts(vertex))}))
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(t, json.dumps({"id": 99, "name": "zombie"}))
    zombie.flush(30)
    ctx2, _ = eo_ctx(plan_of, spark, kafka, t, "F1", attempt=2)
    KAFKA.commit(ctx2, vertex, KAFKA.prepare(ctx2, vertex, frame(spark, n=3)))
    with pytest.raises(Exception, match=r"(?i)fenc|epoch"):
        zombie.commit_transaction(30)
    assert ids_in(kafka, t) == [0, 1, 2]
    # an older attempt that prepared first and commits last was fenced by the newer one's prepare (the
    # epoch is its token): it finds the run committed by the newer one and fails, never a second copy
    old, _ = eo_ctx(plan_of, spark, kafka, t, "F2")
    new, _ = eo_ctx(plan_of, spark, kafka, t, "F2", attempt=2)
    info_old = KAFKA.prepare(old, vertex, frame(spark, n=2))
    KAFKA.commit(new, vertex, KAFKA.prepare(new, vertex, frame(spark, n=2)))
    with pytest.raises(Fenced, match="fenced"):
        KAFKA.commit(old, vertex, info_old)
    assert ids_in(kafka, t) == [0, 0, 1, 1, 2]
    assert Fenced.deterministic is False


# ------------------------------------------------------------------------------------------------
# STREAMING
# ------------------------------------------------------------------------------------------------

def test_a_streaming_sync_reads_each_record_once_across_runs(plan_of, spark, kafka, tmp_path):
    from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline

    t = kafka.create_topic(topic_name("s"), partitions=2)
    kafka.produce(t, [json.dumps({"id": i}) for i in range(5)])
    plan = plan_of(source_job(kafka, tmp_path / "o", f'topic = "{t}", start_mode = earliest, '
                              'schema = { fields { id = int } }', mode="STREAMING",
                              env=f', checkpoint.root = "{tmp_path / "ck"}"'))

    def sync(run_id: str) -> dict:
        return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], run_id))

    first = sync("r1")
    assert sorted(r["id"] for r in read_back(spark, tmp_path / "o")) == list(range(5))
    kafka.produce(t, [json.dumps({"id": i}) for i in range(5, 8)])
    second = sync("r2")
    assert sorted(r["id"] for r in read_back(spark, tmp_path / "o")) == list(range(8))  # each record once
    assert sum(b["written"] for b in first["streaming"]["batches"]) == 5
    assert sum(b["written"] for b in second["streaming"]["batches"]) == 3
    sync("r3")  # nothing new
    assert len(read_back(spark, tmp_path / "o")) == 8


def test_avro_records_as_seatunnel_writes_them_round_trip(run_job, spark, kafka, tmp_path):
    t = kafka.create_topic(topic_name("avro"))
    fields = 'id = bigint, name = string, amount = "decimal(10,2)", small = tinyint, ts = timestamp'
    run_job(f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ {fields} }} }},
                  rows = [{{ kind = INSERT, fields = [1, "a", "1.50", 3, "2024-01-02T03:04:05"] }},
                          {{ kind = INSERT, fields = [2, "b", "20.25", -1, "2024-05-06T07:08:09"] }}] }} }}
        sink {{ Kafka {{ plugin_input = "f", bootstrap.servers = "{kafka.bootstrap}", topic = "{t}", format = avro }} }}
    """)
    raw = [v for _k, v, _p, _o in kafka.consume(t)]
    assert len(raw) == 2 and raw[0][:1] == b"\x02"  # raw Avro binary: the zig-zag long 1 first, no header
    run_job(source_job(kafka, tmp_path / "o", f'topic = "{t}", start_mode = earliest, format = avro, '
                       f'schema = {{ fields {{ {fields} }} }}'))
    rows = sorted(read_back(spark, tmp_path / "o"), key=lambda r: r["id"])
    assert [(r["id"], r["name"], r["amount"], r["small"]) for r in rows] == [(1, "a", 1.5, 3), (2, "b", 20.25, -1)]
    assert rows[1]["ts"].startswith("2024-05-06T07:08:09")


def test_an_exactly_once_commit_on_a_fresh_broker_waits_for_its_group_coordinator(plan_of, spark):
    """A broker that has just started answers offset requests "not coordinator" while it creates its
    offsets topic: the commit record is read through a consumer, which retries. (Read through the admin
    client, that answer crashed librdkafka 2.16's thread in 5 of 7 restore-trial runs on a fresh broker,
    exit 139; this test does not hit that window every time, the trials do.)"""
    from tests import kafka_server

    with kafka_server.running() as fresh:
        t = fresh.create_topic(topic_name("fresh"))
        ctx, vertex = eo_ctx(plan_of, spark, fresh, t, "N1")
        KAFKA.commit(ctx, vertex, KAFKA.prepare(ctx, vertex, frame(spark, n=4)))
        assert ids_in(fresh, t) == [0, 1, 2, 3]


def test_json_records_write_timestamps_as_seatunnel_without_a_zero_fraction(run_job, kafka):
    t = kafka.create_topic(topic_name("jsonts"))
    run_job(f"""
        env {{ job.mode = "BATCH", parallelism = 1 }}
        source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = bigint, ts = timestamp }} }},
                  rows = [{{ kind = INSERT, fields = [1, "2020-02-06T05:03:12"] }},
                          {{ kind = INSERT, fields = [2, "2020-02-06T05:03:12.250"] }}] }} }}
        sink {{ Kafka {{ plugin_input = "f", bootstrap.servers = "{kafka.bootstrap}", topic = "{t}", format = json }} }}
    """)
    values = sorted(v for _k, v, _p, _o in kafka.consume(t))
    # SeaTunnel's json: seconds always, a fraction only when the value has one (its digits, no trailing zeros)
    assert values == [b'{"id":1,"ts":"2020-02-06T05:03:12"}', b'{"id":2,"ts":"2020-02-06T05:03:12.25"}']


@pytest.mark.parametrize("semantics", ["AT_LEAST_ONCE", "EXACTLY_ONCE"])
def test_a_keys_changes_reach_its_partition_in_arrival_order_across_a_shuffle(run_job, kafka, semantics):
    """A sink at more writers than its source gets the changes dealt over its partitions; a key's records
    still reach its Kafka partition in the order the changes arrived (a compacted topic keeps the last)."""
    from tests import change_rows

    t = kafka.create_topic(topic_name(), partitions=2)
    (metrics,) = run_job(f"""
        env {{ job.mode = "BATCH" }}
        source {{ {change_rows.fake_source()} }}
        sink {{ Kafka {{ plugin_input = "f", bootstrap.servers = "{kafka.bootstrap}", topic = "{t}", parallelism = 3,
                        partition_key_fields = ["id"], semantics = {semantics} }} }}""")
    assert metrics["write_count"] == 40
    assert change_rows.in_order(change_rows.steps_per_key((k, v["name"]) for k, v, _p in values(kafka, t)))
