"""Paimon at compile time (no Spark, no pypaimon): a runnable job, located errors of the options, HDFS
warehouses and Hive catalogs that plan as runnable (and their conflicts as located errors), what cannot run
here (an object-store warehouse, Kerberos, CUSTOM_PROCESSING), SeaTunnel's Hadoop options unused by a local
warehouse, the Hadoop settings files read and refused, lineage, and a compile that imports neither PySpark
nor pypaimon."""

from __future__ import annotations

import subprocess
import sys

import pytest

from airflow_provider_seatunnel.connectors.paimon import CONNECTOR as PAIMON
from airflow_provider_seatunnel.connectors.paimon import hadoop
from airflow_provider_seatunnel.connectors.paimon.options import sink_options, source_options
from airflow_provider_seatunnel.spi import NOT_RUNNABLE, Unnamed, get_connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

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
    (f'{TABLE}, catalog_type = hive, catalog_uri = "http://hms:9083"', "catalog_uri", "must be thrift://host:port"),
    ('warehouse = "hdfs:///wh", database = "db", table = "t"', "paimon.hadoop.conf", "needs fs.defaultFS"),
    ('warehouse = "hdfs:///wh", database = "db", table = "t", paimon.hadoop.conf = { dfs.replication = [1] }',
     "paimon.hadoop.conf", "must be a string"),
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


HDFS = ('warehouse = "hdfs:///tmp/paimon", database = "db", table = "t", paimon.hadoop.conf = { '
        'fs.defaultFS = "hdfs://nameservice1", dfs.nameservices = "nameservice1", '
        'dfs.ha.namenodes.nameservice1 = "nn1,nn2", dfs.namenode.rpc-address.nameservice1.nn1 = "h3:8020" }')


@pytest.mark.parametrize("options", [
    HDFS,
    f'{HDFS}, catalog_type = "hive", catalog_uri = "thrift://hms:9083"',
    f'{TABLE}, catalog_type = hive, catalog_uri = "thrift://hms1:9083,thrift://hms2:9083"',
    'warehouse = "viewfs://cluster/paimon", database = "db", table = "t", paimon.hadoop.conf-path = "/etc/hadoop"',
    'warehouse = "hdfs://nn:8020/p", database = "db", table = "t", hdfs_site_path = "/etc/hadoop/hdfs-site.xml"',
])
def test_hdfs_warehouses_and_hive_catalogs_plan_as_runnable(plan_of, options):
    plan = plan_of(job(options, source=options))
    assert not plan.warnings, plan.warnings


def test_the_hadoop_settings_are_gathered_in_seatunnels_order(tmp_path):
    (tmp_path / "core-site.xml").write_text("<configuration><property><name>fs.defaultFS</name>"
                                            "<value>hdfs://from-core</value></property></configuration>")
    (tmp_path / "hdfs-site.xml").write_text("<configuration><property><name>dfs.nameservices</name>"
                                            "<value>ns</value></property></configuration>")
    site = tmp_path / "site.xml"
    site.write_text("<configuration><property><name>dfs.nameservices</name><value>ns2</value></property>"
                    "<property><name>hive.x</name><value>1</value></property></configuration>")
    opts = sink_options({"warehouse": "hdfs:///p", "database": "d", "table": "t", "hdfs_site_path": str(site),
                         "paimon.hadoop.conf-path": str(tmp_path), "paimon.hadoop.conf": {"dfs.replication": 2}})
    io = hadoop.file_io_options(opts.table)
    assert (io["fs.defaultFS"], io["dfs.nameservices"], io["dfs.replication"]) == ("hdfs://from-core", "ns2", "2")
    assert "hive.x" not in io and io["hdfs.client.fallback-to-pyarrow"] == "false"
    assert hadoop.qualified("hdfs:///p/d.db", io) == "hdfs://from-core/p/d.db"
    assert hadoop.file_io_options(sink_options({"warehouse": "/w", "database": "d", "table": "t"}).table) == {}


@pytest.mark.parametrize("text, message", [
    ('<!DOCTYPE x [<!ENTITY a "b">]><configuration/>', "DOCTYPE"),
    ("<configuration>", "not XML"),
    ("<configuration>" + "<property><name>k</name><value>v</value></property>" * 30_000 + "</configuration>",
     "larger than"),
])
def test_a_hadoop_settings_file_that_is_hostile_or_broken_is_refused(tmp_path, text, message):
    site = tmp_path / "hdfs-site.xml"
    site.write_text(text)
    opts = sink_options({"warehouse": "hdfs:///p", "database": "d", "table": "t", "hdfs_site_path": str(site)})
    with pytest.raises(RuntimeConfigError, match=message):
        hadoop.file_io_options(opts.table)


def test_an_hdfs_warehouse_without_fs_default_fs_or_with_kerberos_fails_at_run_time(tmp_path):
    site = tmp_path / "hdfs-site.xml"
    site.write_text("<configuration><property><name>dfs.replication</name><value>1</value></property>"
                    "</configuration>")
    opts = sink_options({"warehouse": "hdfs:///p", "database": "d", "table": "t", "hdfs_site_path": str(site)})
    with pytest.raises(RuntimeConfigError, match=r"fs\.defaultFS is required"):
        hadoop.file_io_options(opts.table)
    opts = sink_options({"warehouse": "hdfs:///p", "database": "d", "table": "t", "paimon.hadoop.conf": {
        "fs.defaultFS": "hdfs://nn", "hadoop.security.authentication": "Kerberos"}})
    with pytest.raises(RuntimeConfigError, match="Kerberos"):
        hadoop.file_io_options(opts.table)


@pytest.mark.parametrize("options, key", [
    ('warehouse = "s3a://lake/paimon", database = "db", table = "t"', "warehouse"),
    ('warehouse = "oss://lake/paimon", database = "db", table = "t"', "warehouse"),
    (f'{HDFS.rstrip(" }")}, security.kerberos.login.principal = "st@REALM" }}', "paimon.hadoop.conf"),
    (f'{TABLE}, data_save_mode = CUSTOM_PROCESSING', "data_save_mode"),
])
def test_what_cannot_run_here_plans_with_a_not_runnable_warning(plan_of, options, key):
    [warning] = plan_of(job(options)).warnings
    assert warning["code"] == NOT_RUNNABLE and warning["key"] == key


def test_seatunnels_hadoop_options_are_unused_by_a_local_warehouse(plan_of):
    plan = plan_of(job(f'{TABLE}, hdfs_site_path = "/etc/hadoop/hdfs-site.xml", catalog_uri = "thrift://h:1", '
                       'paimon.hadoop.conf = { "fs.defaultFS" = "hdfs://nn" }'))
    assert sorted(w["key"] for w in plan.warnings) == ["catalog_uri", "hdfs_site_path", "paimon.hadoop.conf"]
    assert all("is not used" in w["message"] for w in plan.warnings)


def test_lineage_names_the_table_directory():
    assert PAIMON.assets({"warehouse": "file:///data/paimon/", "database": "d", "table": "t"}) == [
        "file:///data/paimon/d.db/t"]
    [unnamed] = PAIMON.assets({"warehouse": "/w", "database": "d", "table": "${table_name}"})
    assert isinstance(unnamed, Unnamed) and unnamed.at_run_time
    assert PAIMON.table_assets({"warehouse": "/w", "database": "d", "table": "${table_name}"}, "db.orders") == [
        "file:///w/d.db/orders"]
    assert PAIMON.assets({"warehouse": "hdfs://nn:8020/p", "database": "d", "table": "t"}) == [
        "hdfs://nn:8020/p/d.db/t"]


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
