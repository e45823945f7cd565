"""Iceberg at compile time (no Spark): a runnable job with the runtime jar and session setting its Spark version
needs (none, and a warning, on a Spark no Iceberg release is built for), located errors of the options, what
only one job mode takes, what cannot run, credentials from an Airflow connection kept out of the shown plan,
lineage."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from airflow_provider_seatunnel.connectors.iceberg import CONNECTOR as ICEBERG
from airflow_provider_seatunnel.connectors.iceberg import checks
from airflow_provider_seatunnel.connectors.iceberg.options import CONNECTION_CONFIG, sink_options
from airflow_provider_seatunnel.connectors.iceberg.tables import catalog_name
from airflow_provider_seatunnel.runtime.jars import pipeline_jars
from airflow_provider_seatunnel.runtime.session import session_settings
from airflow_provider_seatunnel.spi import ConnectionInfo, FromConnection, NeedsJars, NeedsSession, get_connector
from airflow_provider_seatunnel.spi.schema import TableKeys

FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = bigint, name = string, grp = string } } }'
CATALOG = 'iceberg.catalog.config = { type = "hadoop", warehouse = "file:///data/ice" }'
EXTENSION = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"


def job(sink: str = f'table = "t", {CATALOG}', source: str | None = None, env: str = "", mode: str = "BATCH") -> str:
    src = f'Iceberg {{ plugin_output = "f", {source} }}' if source is not None else FAKE
    return f"""env {{ job.mode = {mode} {env} }}
source {{ {src} }}
sink {{
  Iceberg {{ plugin_input = "f",
    {sink} }}
}}
"""


@pytest.fixture
def spark41(monkeypatch):
    """The plan as a PySpark 4.1 install (an Iceberg runtime exists for it) makes it."""
    monkeypatch.setattr(checks, "spark_minor", lambda: "4.1")


def test_an_iceberg_to_iceberg_job_plans_with_its_jar_and_session_setting(plan_of, spark41):
    plan = plan_of(job(f'namespace = "sales", table = "orders", {CATALOG}, iceberg.table.primary-keys = "id", '
                       'iceberg.table.partition-keys = "grp", iceberg.table.upsert-mode-enabled = true',
                       source=f'namespace = "src", table = "orders", {CATALOG}, read_columns = ["id"], '
                              'use_snapshot_id = 3', env=', spark.sql.extensions = "com.example.Ext"'))
    assert not plan.warnings
    assert get_connector("ICEBERG") is ICEBERG and ICEBERG.can_run("source") and ICEBERG.can_run("sink")
    assert isinstance(ICEBERG, NeedsJars) and isinstance(ICEBERG, NeedsSession) and ICEBERG.can_stream("source")
    [pipeline] = plan.pipelines
    assert session_settings(plan, pipeline) == {"spark.sql.extensions": f"com.example.Ext,{EXTENSION}"}
    jar = os.path.join(checks.m2_repository(), "org", "apache", "iceberg", "iceberg-spark-runtime-4.1_2.13", "1.12.0",
                       "iceberg-spark-runtime-4.1_2.13-1.12.0.jar")
    if not os.path.isfile(jar):
        pytest.fail(f"{jar} is not in Maven's local repository: run `make test-deps`")
    assert pipeline_jars(plan, pipeline) == [jar]
    # the task id comes from the options naming the tables: another projection keeps it, another table does not
    same = plan_of(job(f'namespace = "sales", table = "orders", {CATALOG}', source=f'namespace = "src", '
                       f'table = "orders", {CATALOG}')).pipelines[0].task_id
    other = plan_of(job(f'namespace = "sales", table = "returns", {CATALOG}', source=f'namespace = "src", '
                        f'table = "orders", {CATALOG}')).pipelines[0].task_id
    assert pipeline.task_id == same != other


def test_a_pipeline_writing_iceberg_and_delta_gets_both_session_extensions(plan_of, spark41):
    """Session extensions are a list: two plugins asking for one each is no conflict (a Delta and an
    Iceberg sink of one pipeline), the job's own extension stays first, each entry once."""
    text = job(f'table = "t", {CATALOG}', env=', spark.sql.extensions = "com.example.Ext"').replace(
        "sink {", 'sink {\n  Delta { plugin_input = "f", path = "/data/delta/t" }', 1)
    plan = plan_of(text)
    [pipeline] = plan.pipelines
    settings = session_settings(plan, pipeline)
    assert settings["spark.sql.extensions"].split(",") == [
        "com.example.Ext", "io.delta.sql.DeltaSparkSessionExtension", EXTENSION]
    assert settings["spark.sql.catalog.spark_catalog"] == "org.apache.spark.sql.delta.catalog.DeltaCatalog"


@pytest.mark.parametrize("minor, coordinate", [("4.1", "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"),
                                               ("4.2", None), ("4.3", None)])
def test_the_runtime_is_the_iceberg_build_of_the_installed_sparks_minor_version(monkeypatch, plan_of, minor,
                                                                                coordinate):
    """PySpark 4.1 gets Iceberg's 4.1 runtime; a Spark without a release (4.2 today) gets neither jar nor
    extension, and a plan warning naming the versions that work (the run fails: tests/runtime/test_iceberg.py)."""
    monkeypatch.setattr(checks, "spark_minor", lambda: minor)
    if coordinate is not None:
        assert checks.coordinate(minor) == coordinate and not plan_of(job()).warnings
        assert ICEBERG.session_conf({}, {}) == {"spark.sql.extensions": EXTENSION}
        return
    assert ICEBERG.jars({}, {}) == [] and ICEBERG.session_conf({}, {}) == {}
    [warning] = plan_of(job()).warnings
    assert f"no Iceberg release is built for Spark {minor}" in warning["message"]
    assert "Spark 4.1 (Iceberg 1.12.0)" in warning["message"] and "docs/install.md" in warning["message"]
    # a job that brings Iceberg itself (a cluster's packages) gets the extension and no jar from here
    packages = {"spark.jars.packages": checks.coordinate("4.1")}
    assert ICEBERG.jars({}, packages) == [] and ICEBERG.session_conf({}, packages) == {
        "spark.sql.extensions": EXTENSION}


def test_a_jdbc_catalog_gets_its_driver_and_its_credentials_may_come_from_a_connection(plan_of, spark41):
    config = {"iceberg.catalog.config": {"type": "jdbc", "uri": "jdbc:postgresql://db:5432/lake"}}
    if os.path.isfile("/usr/share/java/postgresql.jar"):
        assert "/usr/share/java/postgresql.jar" in ICEBERG.jars(config, {})
    assert isinstance(ICEBERG, FromConnection) and ICEBERG.connection_option == "iceberg_conn_id"
    jdbc = ICEBERG.connection_options(ConnectionInfo("lake", "postgres", "db", 5432, "lake", "ice", "s3cret",
                                                     {"warehouse": "s3a://lake/wh"}))
    assert jdbc == {CONNECTION_CONFIG: {"type": "jdbc", "uri": "jdbc:postgresql://db:5432/lake", "jdbc.user": "ice",
                                        "jdbc.password": "s3cret", "warehouse": "s3a://lake/wh"}}
    rest = ICEBERG.connection_options(ConnectionInfo("rest", "http", "cat", 8181, None, None, "tok3n"))
    assert rest == {CONNECTION_CONFIG: {"type": "rest", "uri": "http://cat:8181", "token": "tok3n"}}
    # the block's own entries win over the connection's
    merged = sink_options({**jdbc, "table": "t", "iceberg.catalog.config": {"type": "jdbc", "uri": "jdbc:postgresql:x",
                                                                           "warehouse": "/w"}})
    assert merged.catalog.config["uri"] == "jdbc:postgresql:x" and merged.catalog.config["jdbc.password"] == "s3cret"
    # a block naming a connection needs no catalog config at compile time, and shows no secret
    plan = plan_of(job('iceberg_conn_id = "lake", table = "t"'))
    assert not plan.warnings
    shown = str(plan.to_dict())
    assert "s3cret" not in shown


def test_catalog_properties_are_secret_where_they_are_credentials(plan_of, spark41):
    plan = plan_of(job('table = "t", iceberg.catalog.config = { type = "rest", uri = "http://cat:8181", '
                       'token = "tok3n-value", credential = "id:secr3t-value" }'))
    shown = str(plan.to_dict())
    assert "tok3n-value" not in shown and "secr3t-value" not in shown and "http://cat:8181" in shown


def test_one_spark_catalog_per_distinct_configuration():
    a = sink_options({"table": "t", "catalog_name": "lake", "iceberg.catalog.config": {"type": "hadoop",
                                                                                        "warehouse": "/a"}})
    b = sink_options({"table": "t", "catalog_name": "lake", "iceberg.catalog.config": {"type": "hadoop",
                                                                                        "warehouse": "/b"}})
    env_only = sink_options({"table": "t", "catalog_name": "glue"})
    assert catalog_name(a.catalog).startswith("seatunnel_lake_") and catalog_name(a.catalog) != catalog_name(b.catalog)
    assert catalog_name(env_only.catalog) == "glue"  # a Spark catalog the env configures itself


@pytest.mark.parametrize("options, key, message", [
    (CATALOG, "table", "the table is not named"),
    ('table = "t"', "iceberg.catalog.config", "the catalog is not described"),
    ('table = "t", iceberg.catalog.config = { type = "glue" }', "iceberg.catalog.config", "unknown catalog type"),
    ('table = "t", iceberg.catalog.config = { type = "hadoop" }', "iceberg.catalog.config", "needs warehouse"),
    ('table = "t", iceberg.catalog.config = { type = "jdbc", warehouse = "/w" }', "iceberg.catalog.config",
     "needs uri"),
    ('table = "t", iceberg.catalog.config = { warehouse = "/w" }', "iceberg.catalog.config", "names no catalog type"),
    (f'table = "a/b", {CATALOG}', "table", "must be a name"),
    (f'table = "t", catalog_name = "my-cat", {CATALOG}', "catalog_name", "must be a name"),
    (f'table = "t", {CATALOG}, iceberg.table.primary-keys = "id,ID"', "iceberg.table.primary-keys",
     "names ID, id twice"),
    (f'table = "t", {CATALOG}, iceberg.table.upsert-mode-enabled = true', "iceberg.table.upsert-mode-enabled",
     "needs iceberg.table.primary-keys"),
    (f'table = "t", {CATALOG}, schema_save_mode = CREATE', "schema_save_mode", "unknown schema_save_mode 'CREATE'"),
    (f'table = "t", {CATALOG}, data_save_mode = DROP', "data_save_mode", "did you mean 'DROP_DATA'?"),
    (f'table = "t", {CATALOG}, case_sensitive = maybe', "case_sensitive", "must be true or false"),
    (f'table = "t", {CATALOG}, iceberg.table.write-props = ["a"]', "iceberg.table.write-props", "must be a map"),
    (f'table = "t", {CATALOG}, iceberg.table.commit-branch = "a b"', "iceberg.table.commit-branch",
     "must be a branch name"),
    (f'table = "t", {CATALOG}, iceberg.table.primary-keys = "nope"', "iceberg.table.primary-keys",
     "nope is not a field of the input"),
])
def test_bad_sink_options_are_located_errors(config_error, spark41, options, key, message):
    [problem] = config_error(job(options)).problems
    assert message in f"{problem.message} ({problem.hint})", problem.message
    assert (problem.plugin, problem.key) == ("sink[0] Iceberg", key)


@pytest.mark.parametrize("source, key, message", [
    (f'table = "s", {CATALOG}, use_snapshot_id = -1', "use_snapshot_id", "must be an integer >= 0"),
    (f'table = "s", {CATALOG}, use_snapshot_id = 1, use_snapshot_timestamp = 5', "use_snapshot_timestamp",
     "exclude each other"),
    (f'table = "s", {CATALOG}, end_snapshot_id = 4', "end_snapshot_id", "needs start_snapshot_id"),
    (f'table = "s", {CATALOG}, stream_scan_strategy = FROM_SNAPSHOT_ID', "start_snapshot_id",
     "FROM_SNAPSHOT_ID needs start_snapshot_id"),
    (f'table = "s", {CATALOG}, stream_scan_strategy = LATEST', "stream_scan_strategy", "unknown stream_scan_strategy"),
    (f'table = "${{table_name}}", {CATALOG}', "table", "holds a placeholder"),
    (f'{CATALOG}, table_list = [{{ table = "a" }}], table = "b"', "table", "either table or table_list"),
])
def test_bad_source_options_are_located_errors(config_error, spark41, source, key, message):
    [problem] = config_error(job(source=source)).problems
    assert message in problem.message and (problem.plugin, problem.key) == ("source[0] Iceberg", key)


def test_options_of_the_other_mode_and_what_cannot_run(plan_of, config_error, spark41):
    [warning] = plan_of(job(source=f'table = "s", {CATALOG}, stream_scan_strategy = FROM_EARLIEST_SNAPSHOT')).warnings
    assert warning["key"] == "stream_scan_strategy" and "STREAMING jobs only" in warning["message"]
    [problem] = config_error(job(source=f'table = "s", {CATALOG}, use_snapshot_id = 3', mode="STREAMING")).problems
    assert problem.key == "use_snapshot_id" and "a STREAMING source reads every snapshot" in problem.message
    plan = plan_of(job(f'table = "t", {CATALOG}, data_save_mode = CUSTOM_PROCESSING, kerberos_principal = "me"'))
    assert sorted(w["key"] for w in plan.warnings if w["code"] == "not-runnable") == ["data_save_mode",
                                                                                     "kerberos_principal"]


def test_a_table_list_is_a_multi_table_source_and_lineage_names_the_tables(plan_of, spark41):
    source = f'{CATALOG}, namespace = "db", table_list = [{{ table = "a" }}, {{ namespace = "other", table = "b" }}]'
    plan = plan_of(job('namespace = "${database_name}", table = "${table_name}", ' + CATALOG, source=source))
    [pipeline] = plan.pipelines
    block = SimpleNamespace(section="source", options=pipeline.sources[0].config)
    assert ICEBERG.tables(block) == {"db.a": TableKeys(), "other.b": TableKeys()}
    assert ICEBERG.assets(pipeline.sources[0].config) == ["file:///data/ice/db/a", "file:///data/ice/other/b"]
    rest = {"table": "t", "catalog_name": "lake", "iceberg.catalog.config": {"type": "rest", "uri": "http://c"}}
    assert ICEBERG.assets(rest) == ["iceberg://lake/default.t"]
