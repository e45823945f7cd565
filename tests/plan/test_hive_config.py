"""Hive at compile time: a runnable job and the session settings it asks for, located errors of the
options, one metastore per job, and what cannot run here (Kerberos, lzo, tables_configs) planning
with a not-runnable warning."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.hive import CONNECTOR
from airflow_provider_seatunnel.runtime.session import session_settings, spark_conf
from airflow_provider_seatunnel.spi import NOT_RUNNABLE, NeedsSession, get_connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

URI = "thrift://127.0.0.1:9083"
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = bigint, name = string, p = string } } }'


def job(sink: str = f'table_name = "db.t", metastore_uri = "{URI}"', source: str | None = None,
        env: str = "") -> str:
    src = f'Hive {{ plugin_output = "f", {source} }}' if source is not None else FAKE
    return f"""env {{ job.mode = BATCH {env} }}
source {{ {src} }}
sink {{
  Hive {{ plugin_input = "f",
    {sink} }}
}}
"""


def test_a_hive_to_hive_job_plans_with_the_metastore_as_a_session_setting(plan_of):
    plan = plan_of(job(source=f'table_name = "db.src", metastore_uri = " {URI} ", read_columns = ["id"], '
                              'read_partitions = ["p=a", "p=b"]'))
    assert not plan.warnings
    assert get_connector("hive") is CONNECTOR and CONNECTOR.can_run("source") and CONNECTOR.can_run("sink")
    assert isinstance(CONNECTOR, NeedsSession)
    [pipeline] = plan.pipelines
    assert pipeline.sources[0].schema is None  # the metastore knows it, at run time
    settings = session_settings(plan, pipeline)
    assert settings == {"spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": URI}
    assert spark_conf(plan.env, (), settings)["spark.hadoop.hive.metastore.uris"] == URI


def test_hadoop_settings_of_the_block_and_its_files_join_the_session(plan_of, tmp_path):
    (tmp_path / "hive-site.xml").write_text(
        "<configuration><property><name>hive.metastore.client.socket.timeout</name><value>90</value></property>"
        "<property><name>dfs.replication</name><value>2</value></property></configuration>")
    plan = plan_of(job(f'table_name = "db.t", metastore_uri = "{URI}", hive.hadoop.conf-path = "{tmp_path}", '
                       'hive.hadoop.conf = { "dfs.replication" = "1" }'))
    settings = session_settings(plan, plan.pipelines[0])
    assert settings["spark.hadoop.hive.metastore.client.socket.timeout"] == "90"
    assert settings["spark.hadoop.dfs.replication"] == "1"  # the map wins over the files


@pytest.mark.parametrize("sink, key, message", [
    ('table_name = "t", metastore_uri = "thrift://h:9083"', "table_name", "must be database.table"),
    ('table_name = "db.t", metastore_uri = "http://h:9083"', "metastore_uri", "is not a thrift://host:port URI"),
    ('table_name = "db.t", metastore_uri = "thrift://h:9083", overwrite = "yes"', "overwrite",
     "must be true or false"),
    ('table_name = "db.t", metastore_uri = "thrift://h:9083", compress_codec = "zip"', "compress_codec",
     "unknown compress_codec 'zip'"),
    ('table_name = "db.t", metastore_uri = "thrift://h:9083", hive.hadoop.conf = "x"', "hive.hadoop.conf",
     "must be a map"),
])
def test_bad_options_are_located_errors(config_error, sink, key, message):
    error = config_error(job(sink))
    [problem] = error.problems
    assert problem.key == key and message in problem.message
    assert problem.plugin == "sink[0] Hive" and problem.line == 5


def test_required_options_and_bad_read_partitions(config_error):
    error = config_error(job('table_name = "db.t"', source=f'table_name = "db.s", metastore_uri = "{URI}", '
                                                          'read_partitions = ["a=1", "a=1/b=2"]'))
    messages = {(p.plugin, p.key): p.message for p in error.problems}
    assert "same directory depth" in messages[("source[0] Hive", "read_partitions")]
    assert messages[("sink[0] Hive", "metastore_uri")] == "the option 'metastore_uri' is required"


def test_two_metastores_in_one_job_is_an_error_at_the_later_block(config_error):
    text = job('table_name = "db.t", metastore_uri = "thrift://other:9083"',
               source=f'table_name = "db.s", metastore_uri = "{URI}"')
    [problem] = config_error(text).problems
    assert (problem.plugin, problem.key, problem.line) == ("sink[0] Hive", "metastore_uri", 5)
    assert "differs from 'thrift://127.0.0.1:9083' of source[0] Hive" in problem.message


def test_a_metastore_in_env_that_differs_is_an_error(config_error):
    [problem] = config_error(job(env=', spark.hadoop.hive.metastore.uris = "thrift://else:9083"')).problems
    assert problem.key == "metastore_uri" and "differs from env" in problem.message


def test_a_plan_written_by_hand_with_two_metastores_fails_at_run_time(plan_of):
    plan = plan_of(job(source=f'table_name = "db.s", metastore_uri = "{URI}"'))
    pipeline = plan.pipelines[0]
    sink = pipeline.sinks[0]
    clash = type(sink)(**{**sink.__dict__, "config": {**sink.config, "metastore_uri": "thrift://other:1"}})
    edited = type(pipeline)(**{**pipeline.__dict__, "vertices": tuple(
        clash if v is sink else v for v in pipeline.vertices)})
    with pytest.raises(RuntimeConfigError, match="one session cannot have both"):
        session_settings(plan, edited)


@pytest.mark.parametrize("sink, key", [
    ('kerberos_principal = "hive/_HOST@REALM", kerberos_keytab_path = "/k.keytab"', "kerberos_principal"),
    ('compress_codec = "lzo"', "compress_codec"),
    ('data_save_mode = "DROP_DATA"', "data_save_mode"),
])
def test_what_cannot_run_here_plans_with_a_not_runnable_warning(plan_of, sink, key):
    plan = plan_of(job(f'table_name = "db.t", metastore_uri = "{URI}", {sink}'))
    [warning] = plan.warnings
    assert warning["code"] == NOT_RUNNABLE and warning["key"] == key


def test_several_tables_in_one_source_cannot_run(plan_of):
    plan = plan_of(job(source=f'metastore_uri = "{URI}", table_name = "db.s", '
                              f'tables_configs = [{{ table_name = "db.a", metastore_uri = "{URI}" }}]'))
    assert [w["key"] for w in plan.warnings if w["code"] == NOT_RUNNABLE] == ["tables_configs"]


def test_lineage_names_the_table_as_openlineage_does():
    assert CONNECTOR.assets({"table_name": "db.t", "metastore_uri": f"{URI},thrift://b:9083"}) == [
        "hive://127.0.0.1:9083/db.t"]
    [unnamed] = CONNECTOR.assets({"table_name": "${database_name}.${table_name}", "metastore_uri": URI})
    assert unnamed.at_run_time


def test_a_sink_option_in_a_source_block_is_unknown(plan_of):
    plan = plan_of(job(source=f'table_name = "db.s", metastore_uri = "{URI}", overwrite = true'))
    assert [(w["plugin"], w["key"], w["code"]) for w in plan.warnings] == [
        ("source[0] Hive", "overwrite", "unknown-option")]
