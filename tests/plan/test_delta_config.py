"""Delta at compile time (no Spark): a runnable job with the jars and session settings its Spark version
needs, located errors of the options, what only one job mode takes, what cannot run, lineage, and a
compile that imports no PySpark."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from airflow_provider_seatunnel.connectors.delta import CONNECTOR as DELTA
from airflow_provider_seatunnel.connectors.delta import checks
from airflow_provider_seatunnel.connectors.delta.tables import built_for
from airflow_provider_seatunnel.runtime.jars import pipeline_jars
from airflow_provider_seatunnel.runtime.session import session_settings, spark_conf
from airflow_provider_seatunnel.spi import NOT_RUNNABLE, NeedsJars, NeedsSession, Unnamed, get_connector

from ..conftest import ROOT

FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = bigint, name = string, grp = string } } }'
EXTENSION, CATALOG = "io.delta.sql.DeltaSparkSessionExtension", "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def job(sink: str = 'path = "/data/delta/t"', source: str | None = None, env: str = "", mode: str = "BATCH") -> str:
    src = f'Delta {{ plugin_output = "f", {source} }}' if source is not None else FAKE
    return f"""env {{ job.mode = {mode} {env} }}
source {{ {src} }}
sink {{
  Delta {{ plugin_input = "f",
    {sink} }}
}}
"""


def test_a_delta_to_delta_job_plans_with_its_jars_and_session_settings(plan_of):
    plan = plan_of(job('warehouse = "s3a://lake/wh", database = "sales", table = "orders", primary_keys = "id", '
                       'partition_keys = ["grp"], delta.table.write-props = { "delta.appendOnly" = false }',
                       source='path = "/data/delta/src", read_columns = ["id", "name"], use_version = 3',
                       env=', spark.sql.extensions = "com.example.Ext"'))
    assert not plan.warnings
    assert get_connector("DELTA") is DELTA and DELTA.can_run("source") and DELTA.can_run("sink")
    assert isinstance(DELTA, NeedsJars) and isinstance(DELTA, NeedsSession) and DELTA.can_stream("source")
    [pipeline] = plan.pipelines
    settings = session_settings(plan, pipeline)
    assert settings == {"spark.sql.extensions": f"com.example.Ext,{EXTENSION}",
                        "spark.sql.catalog.spark_catalog": CATALOG}  # the env's extension kept, Delta's after it
    assert spark_conf(plan.env, (), settings)["spark.sql.extensions"] == f"com.example.Ext,{EXTENSION}"
    names = [j.rsplit("/", 1)[-1] for j in pipeline_jars(plan, pipeline)]
    minor = checks.spark_minor()
    assert names == [f"delta-spark_{minor}_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"]
    # the task id comes from the options naming the tables: another projection keeps it, another table does not
    same = plan_of(job('warehouse = "s3a://lake/wh", database = "sales", table = "orders"',
                       source='path = "/data/delta/src"')).pipelines[0].task_id
    other = plan_of(job('warehouse = "s3a://lake/wh", database = "sales", table = "returns"',
                        source='path = "/data/delta/src"')).pipelines[0].task_id
    assert pipeline.task_id == same != other


@pytest.mark.parametrize("minor, jar", [("4.1", "delta-spark_4.1_2.13-4.4.0.jar"),
                                        ("4.2", "delta-spark_4.2_2.13-4.4.0.jar"), ("4.3", None)])
def test_the_jars_are_the_delta_build_of_the_installed_sparks_minor_version(monkeypatch, plan_of, minor, jar):
    """PySpark 4.1 gets Delta's 4.1 build, 4.2 the 4.2 build (a build of another minor half works); a Spark
    without a known Delta release gets none and a warning naming the packages line to set."""
    monkeypatch.setattr(checks, "spark_minor", lambda: minor)
    found = [j.rsplit("/", 1)[-1] for j in DELTA.jars({}, {})]
    if jar is None:
        assert found == []
        [warning] = plan_of(job()).warnings
        assert "no Delta release is known for Spark 4.3" in warning["message"]
        assert "io.delta:delta-spark_4.3_2.13:4.4.0,io.delta:delta-storage:4.4.0" in warning["hint"]
        return
    if not os.path.isfile(os.path.join(checks.m2_repository(), "io", "delta", f"delta-spark_{minor}_2.13", "4.4.0",
                                       jar)):
        pytest.fail(f"{jar} is not in Maven's local repository: run `make test-deps`")
    assert found == [jar, "delta-storage-4.4.0.jar"]
    assert not plan_of(job()).warnings


def test_a_job_naming_delta_itself_gets_no_jars_and_jar_names_tell_their_spark():
    packages = {"spark.jars.packages": "io.delta:delta-spark_4.2_2.13:4.4.0,io.delta:delta-storage:4.4.0"}
    assert DELTA.jars({}, packages) == []
    assert checks.coordinates("4.1") == ["io.delta:delta-spark_4.1_2.13:4.4.0", "io.delta:delta-storage:4.4.0"]
    assert built_for("/r/io/delta/delta-spark_4.1_2.13/4.4.0/delta-spark_4.1_2.13-4.4.0.jar") == "4.1"
    assert built_for("/r/delta-spark_2.13-4.4.0.jar") is None  # the name does not tell


@pytest.mark.parametrize("options, key, message", [
    ("", "path", "the table is not named"),
    ('path = "relative/t"', "path", "must be an absolute path or a URI"),
    ('path = "/t", table = "x"', "table", "set either path or warehouse, database and table, not both"),
    ('warehouse = "/wh", table = "t"', "database", "warehouse needs database too"),
    ('warehouse = "/wh", database = "d", table = "a/b"', "table", "must be a name, not a path"),
    ('path = "/t", primary_keys = [1]', "primary_keys", "must name columns"),
    ('path = "/t", partition_keys = "grp, GRP"', "partition_keys", "names GRP, grp twice"),
    ('path = "/t", schema_save_mode = CREATE', "schema_save_mode", "unknown schema_save_mode 'CREATE'"),
    ('path = "/t", data_save_mode = DROP', "data_save_mode", "did you mean 'DROP_DATA'?"),
    ('path = "/t", case_sensitive = maybe', "case_sensitive", "must be true or false"),
    ('path = "/t", delta.table.write-props = { owner = "me" }', "delta.table.write-props",
     "'owner' is not a Delta table property"),
    ('path = "/t", primary_keys = ["nope"]', "primary_keys", "nope is not a field of the input"),
])
def test_bad_sink_options_are_located_errors(config_error, options, key, message):
    [problem] = config_error(job(options)).problems
    assert message in f"{problem.message} ({problem.hint})", problem.message
    line = 5 if key in options else 4  # a missing option: the block's line
    assert (problem.plugin, problem.key, problem.line) == ("sink[0] Delta", key, line)


@pytest.mark.parametrize("source, key, message", [
    ('path = "/s", use_version = -1', "use_version", "must be a table version"),
    ('path = "/s", use_version = 1, use_timestamp = 5', "use_timestamp", "exclude each other"),
    ('path = "/s", use_timestamp = "yesterday"', "use_timestamp", "epoch milliseconds or a timestamp"),
    ('path = "/s/${table_name}"', "path", "holds a placeholder"),
    ('path = "/s", read_columns = []', "read_columns", "must name columns"),
])
def test_bad_source_options_are_located_errors(config_error, source, key, message):
    [problem] = config_error(job(source=source)).problems
    assert message in problem.message and (problem.plugin, problem.key, problem.line) == ("source[0] Delta", key, 2)


def test_case_sensitive_keys_must_match_the_fields_in_case(config_error, plan_of):
    plan_of(job('path = "/t", primary_keys = ["ID"]'))  # case-insensitive by default
    [problem] = config_error(job('path = "/t", primary_keys = ["ID"], case_sensitive = true')).problems
    assert problem.key == "primary_keys" and "ID is not a field of the input" in problem.message


def test_options_of_the_other_job_mode(config_error, plan_of):
    [problem] = config_error(job(source='path = "/s", use_version = 2', mode="STREAMING")).problems
    assert problem.key == "use_version" and "use start_version or start_timestamp" in problem.hint
    plan = plan_of(job(source='path = "/s", start_version = latest, skip_change_commits = true'))
    assert sorted(w["key"] for w in plan.warnings) == ["skip_change_commits", "start_version"]
    assert all("STREAMING jobs only" in w["message"] for w in plan.warnings)
    plan_of(job(source='path = "/s", start_version = latest, change_data_feed = true', mode="STREAMING"))


def test_time_stamps_become_the_text_delta_reads(plan_of):
    from airflow_provider_seatunnel.connectors.delta.options import source_options

    assert source_options({"path": "/s", "use_timestamp": 1714989600123}).timestamp == "2024-05-06 10:00:00.123"
    assert source_options({"path": "/s", "use_timestamp": "2024-05-06 10:00"}).timestamp == "2024-05-06 10:00"
    assert source_options({"path": "/s", "start_version": "LATEST"}).start_version == "latest"


def test_custom_processing_cannot_run_and_another_catalog_in_env_is_an_error(plan_of, config_error):
    [warning] = plan_of(job('path = "/t", data_save_mode = CUSTOM_PROCESSING')).warnings
    assert warning["code"] == NOT_RUNNABLE and warning["key"] == "data_save_mode"
    [problem] = config_error(job(env=', spark.sql.catalog.spark_catalog = "org.apache.iceberg.spark.SparkSessionCatalog"')
                             ).problems
    assert (problem.plugin, problem.key, problem.line) == ("env", "spark.sql.catalog.spark_catalog", 1)


def test_change_data_feed_sources_emit_changes():
    from airflow_provider_seatunnel.plan.model import PlanVertex

    vertex = PlanVertex(id="source[0]", ref="source[0]", kind="source", plugin="Delta", parallelism=1,
                        config={"path": "/s", "change_data_feed": True})
    assert DELTA.emits_changes(vertex, False)
    assert not DELTA.emits_changes(PlanVertex(**{**vertex.__dict__, "config": {"path": "/s"}}), False)


def test_lineage_names_the_table_directory():
    assert DELTA.assets({"path": "/data/delta/t/"}) == ["file:///data/delta/t"]
    assert DELTA.assets({"warehouse": "s3a://lake/wh", "database": "d", "table": "t"}) == ["s3://lake/wh/d.db/t"]
    [unnamed] = DELTA.assets({"path": "/data/${table_name}"})
    assert isinstance(unnamed, Unnamed) and unnamed.at_run_time
    assert DELTA.table_assets({"path": "/data/${table_name}"}, "db.orders") == ["file:///data/orders"]


PROBE = """
import sys
from airflow_provider_seatunnel.plan import compile_job
compile_job(sys.argv[1], use_cache=False)
print(sorted(m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")))
"""


def test_compiling_a_delta_job_imports_no_pyspark(write_conf):
    conf = write_conf(job(source='path = "/s"'))
    proc = subprocess.run([sys.executable, "-c", PROBE, str(conf)], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    assert proc.stdout.strip() == "[]"
