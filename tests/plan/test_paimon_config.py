"""Paimon at compile time (no Spark, no pypaimon): a runnable job, located errors of the options, what
cannot run here (a Hive catalog, a remote warehouse, CUSTOM_PROCESSING), SeaTunnel's Hadoop options
accepted but unused, lineage, and a compile that imports neither PySpark nor pypaimon."""

from __future__ import annotations

import subprocess
import sys

import pytest

from airflow_provider_seatunnel.connectors.paimon import CONNECTOR as PAIMON
from airflow_provider_seatunnel.connectors.paimon.options import source_options
from airflow_provider_seatunnel.spi import NOT_RUNNABLE, Unnamed, get_connector

from ..conftest import ROOT

FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = bigint, name = string, grp = string } } }'
TABLE = 'warehouse = "/data/paimon", database = "db", table = "t"'


def job(sink: str = TABLE, source: str | None = None, mode: str = "BATCH") -> str:
    src = f'Paimon {{ plugin_output = "f", {source} }}' if source is not None else FAKE
    return f"""env {{ job.mode = {mode} }}
source {{ {src} }}
sink {{
  Paimon {{ plugin_input = "f",
    {sink} }}
}}
"""


def test_a_paimon_to_paimon_job_plans_without_warnings(plan_of):
    plan = plan_of(job(f'{TABLE}, paimon.table.primary-keys = "id,grp", paimon.table.partition-keys = "grp", '
                       'paimon.table.write-props = { bucket = 2, "changelog-producer" = "input" }',
                       source=f'{TABLE}, query = "select id, name from t where id > 100"'))
    assert not plan.warnings
    assert get_connector("PAIMON") is PAIMON and PAIMON.can_run("source") and PAIMON.can_run("sink")
    assert not PAIMON.can_stream("source")


@pytest.mark.parametrize("options, key, message", [
    ('database = "db", table = "t"', "warehouse", "warehouse is required"),
    ('warehouse = "relative/wh", database = "db", table = "t"', "warehouse", "must be an absolute path or a URI"),
    ('warehouse = "/wh", table = "t"', "database", "database is required"),
    ('warehouse = "/wh", database = "db", table = "a.b"', "table", "must be a name"),
    (f'{TABLE}, catalog_type = glue', "catalog_type", "unknown catalog_type 'glue'"),
    (f'{TABLE}, catalog_type = hive', "catalog_uri", "catalog_type hive needs catalog_uri"),
    (f'{TABLE}, paimon.table.primary-keys = [1]', "paimon.table.primary-keys", "must name columns"),
    (f'{TABLE}, paimon.table.primary-keys = "id", paimon.table.partition-keys = "grp"',
     "paimon.table.partition-keys", "grp is not a primary key"),
    (f'{TABLE}, paimon.table.write-props = "bucket=2"', "paimon.table.write-props", "must be a map"),
    (f'{TABLE}, schema_save_mode = CREATE', "schema_save_mode", "unknown schema_save_mode 'CREATE'"),
    (f'{TABLE}, data_save_mode = DROP', "data_save_mode", "did you mean 'DROP_DATA'?"),
    (f'{TABLE}, paimon.table.primary-keys = "nope"', "paimon.table.primary-keys", "nope is not a field of the input"),
])
def test_bad_sink_options_are_located_errors(config_error, options, key, message):
    [problem] = config_error(job(options)).problems
    assert message in f"{problem.message} ({problem.hint})", problem.message
    assert (problem.plugin, problem.key) == ("sink[0] Paimon", key)


@pytest.mark.parametrize("query, message", [
    ("select id from t group by id", "no GROUP BY"),
    ("select id from other", "query reads 'other'"),
    ("select count(*) from t", "plain column names"),
    ("delete from t", "must be SELECT"),
])
def test_bad_queries_are_located_errors(config_error, query, message):
    [problem] = config_error(job(source=f'{TABLE}, query = "{query}"')).problems
    assert message in f"{problem.message} ({problem.hint})" and problem.key == "query"


def test_a_query_projects_and_filters():
    opts = source_options({"warehouse": "/w", "database": "d", "table": "t",
                           "query": "SELECT id, `name` FROM d.t WHERE id > 1 AND name = 'a'"})
    assert opts.read_columns == ("id", "name") and opts.where == "id > 1 AND name = 'a'"
    assert source_options({"warehouse": "/w", "database": "d", "table": "t", "query": "select * from t"}
                          ).read_columns == ()


@pytest.mark.parametrize("options, key", [
    (f'{TABLE}, catalog_type = hive, catalog_uri = "thrift://hms:9083"', "catalog_type"),
    ('warehouse = "s3a://lake/paimon", database = "db", table = "t"', "warehouse"),
    (f'{TABLE}, data_save_mode = CUSTOM_PROCESSING', "data_save_mode"),
])
def test_what_cannot_run_here_plans_with_a_not_runnable_warning(plan_of, options, key):
    [warning] = plan_of(job(options)).warnings
    assert warning["code"] == NOT_RUNNABLE and warning["key"] == key


def test_seatunnels_hadoop_options_are_accepted_but_unused(plan_of):
    plan = plan_of(job(f'{TABLE}, hdfs_site_path = "/etc/hadoop/hdfs-site.xml", '
                       'paimon.hadoop.conf = { "fs.defaultFS" = "hdfs://nn" }'))
    assert sorted(w["key"] for w in plan.warnings) == ["hdfs_site_path", "paimon.hadoop.conf"]
    assert all("is not used" in w["message"] for w in plan.warnings)


def test_lineage_names_the_table_directory():
    assert PAIMON.assets({"warehouse": "file:///data/paimon/", "database": "d", "table": "t"}) == [
        "file:///data/paimon/d.db/t"]
    [unnamed] = PAIMON.assets({"warehouse": "/w", "database": "d", "table": "${table_name}"})
    assert isinstance(unnamed, Unnamed) and unnamed.at_run_time
    assert PAIMON.table_assets({"warehouse": "/w", "database": "d", "table": "${table_name}"}, "db.orders") == [
        "file:///w/d.db/orders"]


PROBE = """
import sys
from airflow_provider_seatunnel.plan import compile_job
compile_job(sys.argv[1], use_cache=False)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "pypaimon")))
"""


def test_compiling_a_paimon_job_imports_neither_pyspark_nor_pypaimon(write_conf):
    conf = write_conf(job(source=TABLE))
    proc = subprocess.run([sys.executable, "-c", PROBE, str(conf)], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    assert proc.stdout.strip() == "[]"
