"""Kafka at compile time (no broker, no Spark): runnable jobs with their schemas and tables, located
errors in SeaTunnel's rules, secrets kept out of plans, formats that plan but cannot run, lineage,
credentials from an Airflow connection, and the jars Spark is given."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.kafka import CONNECTOR as KAFKA
from airflow_provider_seatunnel.spi import ConnectionInfo, Unnamed

BROKERS = 'bootstrap.servers = "b1:9092,b2:9092"'
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="kafka-s3cret";'
JAAS_HOCON = JAAS.replace('"', '\\"')
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def test_a_kafka_job_plans_with_schemas_tables_and_row_kinds(write_conf, plan_of, capsys):
    text = f"""
        env {{ job.mode = "STREAMING", parallelism = 2 }}
        source {{
          Kafka {{ plugin_output = "orders", {BROKERS}, topic = "orders", format = json,
                   kafka.config = {{ "security.protocol" = "SASL_PLAINTEXT", "sasl.mechanism" = PLAIN,
                                     "sasl.jaas.config" = "{JAAS_HOCON}" }},
                   schema = {{ fields {{ id = bigint, amount = "decimal(10,2)" }} }} }}
          Kafka {{ plugin_output = "cdc", {BROKERS}, topic = "db.users", format = debezium_json,
                   schema = {{ fields {{ id = int, name = string }} }} }}
          Kafka {{ plugin_output = "many", {BROKERS}, start_mode = earliest,
                   table_list = [{{ topic = "a", schema = {{ fields {{ x = int }} }} }},
                                 {{ topic = "^b.*", pattern = true, format = text,
                                    schema = {{ fields {{ y = string }} }} }}] }}
        }}
        sink {{
          Kafka {{ plugin_input = "orders", {BROKERS}, topic = "out", semantics = EXACTLY_ONCE,
                   partition_key_fields = ["id"] }}
          Console {{ plugin_input = "cdc" }}
          Console {{ plugin_input = "many" }}
        }}
    """
    plan = plan_of(text)
    assert not plan.warnings, plan.warnings
    vertices = {v.ref: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source[0]"].schema == {"id": "bigint", "amount": "decimal(10, 2)"}
    assert vertices["source[0]"].parallelism == 2
    assert "kafka-s3cret" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(text))]) == 0
    assert "kafka-s3cret" not in capsys.readouterr().out


def test_row_kinds_come_only_from_change_log_formats(plan_of):
    plan = plan_of(f"""
        source {{
          Kafka {{ plugin_output = "j", {BROKERS}, topic = "t", schema = {{ fields {{ id = int }} }} }}
          Kafka {{ plugin_output = "c", {BROKERS}, topic = "t", format = canal_json, schema = {{ fields {{ id = int }} }} }}
        }}
        sink {{ Console {{ plugin_input = "j" }}
               Console {{ plugin_input = "c" }} }}
    """)
    sources = {v.output: v for p in plan.pipelines for v in p.vertices if v.kind == "source"}
    assert not KAFKA.emits_changes(sources["j"], False)
    assert KAFKA.emits_changes(sources["c"], False)


@pytest.mark.parametrize("section, options, key, message", [
    ("source", 'topic = "t"', "bootstrap.servers", "the option 'bootstrap.servers' is required"),
    ("source", f'{BROKERS}', "topic", "the option 'topic' is required"),
    ("source", 'bootstrap.servers = "nohost", topic = "t"', "bootstrap.servers", "is not host:port"),
    ("source", f'{BROKERS}, topic = "t", table_list = [{{ topic = "a" }}]', "table_list",
     "either topic or table_list"),
    ("source", f'{BROKERS}, topic = "t", start_mode = earliset', "start_mode", "did you mean 'earliest'"),
    ("source", f'{BROKERS}, topic = "t", start_mode = specific_offsets', "start_mode.offsets",
     "needs start_mode.offsets"),
    ("source", f'{BROKERS}, topic = "t", start_mode = specific_offsets, start_mode.offsets = {{ t = 3 }}',
     "start_mode.offsets", "is not <topic>-<partition>"),
    ("source", f'{BROKERS}, topic = "t", start_mode = timestamp', "start_mode.timestamp", "epoch ms"),
    ("source", f'{BROKERS}, topic = "t", format = canal_json', "schema", "needs a schema"),
    ("source", f'{BROKERS}, topic = "t", format = xml', "format", "unknown format 'xml'"),
    ("source", f'{BROKERS}, topic = "t", format_error_handle_way = ignore', "format_error_handle_way",
     "unknown format_error_handle_way"),
    ("source", f'{BROKERS}, topic = "(", pattern = true', "topic", "is not a regular expression"),
    ("source", f'{BROKERS}, topic = "t", kafka.config = "x"', "kafka.config", "must be an object"),
    ("sink", f'{BROKERS}', "topic", "the option 'topic' is required"),
    ("sink", f'{BROKERS}, topic = "t", semantics = ONCE', "semantics", "unknown semantics 'ONCE'"),
    ("sink", f'{BROKERS}, topic = "t", partition = 0, partition_key_fields = ["id"]', "partition",
     "exclude each other"),
    ("sink", f'{BROKERS}, topic = "t", partition = -1', "partition", "partition must be an integer >= 0"),
])
def test_bad_options_fail_at_their_line(config_error, section, options, key, message):
    block = f"Kafka {{ plugin_output = \"r\",\n  {options} }}" if section == "source" else \
        f"Kafka {{ plugin_input = \"f\",\n  {options} }}"
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "r" }' if section == "source" else block
    error = config_error(f"env {{ job.mode = BATCH }}\nsource {{ {source} }}\nsink {{ {sink} }}\n")
    problem = error.problems[0]
    assert message in f"{problem.message} ({problem.hint})", problem.message
    assert problem.key == key and problem.plugin.endswith("Kafka") and problem.file and problem.line is not None


def test_protobuf_and_compatible_formats_plan_but_cannot_run(write_conf, plan_of):
    text = f"""
        source {{ Kafka {{ plugin_output = "k", {BROKERS}, topic = "t", format = compatible_kafka_connect_json,
                           schema = {{ fields {{ id = int }} }} }} }}
        sink {{ Kafka {{ plugin_input = "k", {BROKERS}, topic = "u", format = protobuf }} }}
    """
    plan = plan_of(text)
    assert [w.get("code") for w in plan.warnings].count("not-runnable") == 2
    assert main(["validate", str(write_conf(text))]) == 2


def test_avro_needs_a_schema_and_adds_spark_avro(config_error, plan_of):
    problem = config_error(f"""
        source {{ Kafka {{ plugin_output = "k", {BROKERS}, topic = "t", format = avro }} }}
        sink {{ Console {{ plugin_input = "k" }} }}
    """).problems[0]
    assert problem.key == "schema" and "needs a schema" in problem.message
    names = [j.rsplit("/", 1)[-1] for j in KAFKA.jars({"format": "avro"}, {})]
    assert any(n.startswith("spark-avro_2.13-") for n in names)
    assert not any(n.startswith("spark-avro") for n in [j.rsplit("/", 1)[-1] for j in KAFKA.jars({}, {})])


def test_lineage_names_each_topic_as_openlineage_does():
    assert KAFKA.assets({"bootstrap.servers": "b1:9092,b2:9092", "topic": "a, b/c"}) == \
        ["kafka://b1:9092/a", "kafka://b1:9092/b%2Fc"]
    found = KAFKA.assets({"bootstrap.servers": "b:1", "topic": "^x.*", "pattern": True})
    assert len(found) == 1 and isinstance(found[0], Unnamed) and not found[0].at_run_time
    assert isinstance(KAFKA.assets({"kafka_conn_id": "k", "topic": "t"})[0], Unnamed)


def test_a_connection_gives_brokers_and_client_settings():
    conn = ConnectionInfo("k", "kafka", extra={"bootstrap.servers": "h:9093", "group.id": "g",
                                               "security.protocol": "SASL_SSL"}, login="u", password="pw")
    options = KAFKA.connection_options(conn)
    assert options["bootstrap.servers"] == "h:9093"
    assert options["kafka.config"]["security.protocol"] == "SASL_SSL" and "group.id" not in options["kafka.config"]
    assert 'username="u" password="pw"' in options["kafka.config"]["sasl.jaas.config"]
    assert KAFKA.connection_options(ConnectionInfo("k", "kafka", host="h"))["bootstrap.servers"] == "h:9092"
    assert KAFKA.takes_default_connection({"topic": "t"}) and not KAFKA.takes_default_connection({"bootstrap.servers": "x"})


def test_spark_is_given_the_kafka_jars_of_its_version_unless_the_job_names_them():
    jars = KAFKA.jars({}, {})
    names = [j.rsplit("/", 1)[-1] for j in jars]
    from importlib.metadata import version

    assert f"spark-sql-kafka-0-10_2.13-{version('pyspark')}.jar" in names
    assert any(n.startswith("kafka-clients-") for n in names) and any(n.startswith("commons-pool2-") for n in names)
    assert KAFKA.jars({}, {"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"}) == []


def test_the_declared_options_type_the_block_and_an_undeclared_key_is_named(plan_of):
    plan = plan_of(f"""
        source {{ Kafka {{ plugin_output = "k", {BROKERS}, topic = "t", start_mod = earliest }} }}
        sink {{ Kafka {{ plugin_input = "k", {BROKERS}, topic = "u", semantics = exactly_once,
                         partition_key_fields = "id, name", transaction_prefx = "p" }} }}
    """)
    unknown = {w["key"]: w for w in plan.warnings if w["code"] == "unknown-option"}
    assert set(unknown) == {"start_mod", "transaction_prefx"}
    assert "start_mode" in unknown["start_mod"]["hint"] and "transaction_prefix" in unknown["transaction_prefx"]["hint"]
    from airflow_provider_seatunnel.connectors.kafka.options import sink_options

    opts = sink_options({"bootstrap.servers": "b:1", "topic": "u", "semantics": "exactly_once",
                         "partition_key_fields": "id, name", "format": "JSON"})
    assert (opts.semantics, opts.key_fields, opts.format) == ("EXACTLY_ONCE", ("id", "name"), "json")
    assert KAFKA.identity == ("bootstrap.servers", "kafka_conn_id", "topic", "table_list", "pattern")


def test_the_sink_is_storage_verbs_publishing_every_table_in_one_transaction_fenced_by_its_id():
    import hashlib
    from types import SimpleNamespace

    from airflow_provider_seatunnel.connectors.kafka.options import sink_options
    from airflow_provider_seatunnel.connectors.kafka.sink import EpochFence, transactional_id
    from airflow_provider_seatunnel.spi.twophase import PublishesTogether, is_two_phase

    assert isinstance(KAFKA, PublishesTogether) and is_two_phase(KAFKA) and KAFKA.capabilities.exactly_once
    # the attempt token is the transactional producer's epoch, taken from the broker (tests/runtime/test_kafka.py)
    assert isinstance(KAFKA.commit_log(None, None), EpochFence)
    # the transactional id (and its commit group) of a run keeps its digits: records written before are found
    ctx, vertex = SimpleNamespace(save_mode_run_id="run-1", pipeline_key="p0"), SimpleNamespace(ref="Kafka[0]")
    opts = sink_options({"bootstrap.servers": "h:9092", "topic": "t", "semantics": "EXACTLY_ONCE"})
    assert transactional_id(ctx, vertex, opts) == "seatunnel-" + hashlib.sha256(b"run-1\x00p0\x00Kafka[0]").hexdigest()[:24]
