"""What the lakehouse family gives Delta, Iceberg and Paimon once: the ``read_columns`` and key
resolution against the table's spelling, the MERGE statement of an upsert, and what their Spark needs
(the Spark minor version, Maven's local jars, the env's own jars and SQL extensions), and the sink
options' keys and save modes they hold alike."""

from __future__ import annotations

import os

import pytest

from airflow_provider_seatunnel.connectors.delta import checks as delta_checks
from airflow_provider_seatunnel.connectors.delta import options as delta_options
from airflow_provider_seatunnel.connectors.iceberg import checks as iceberg_checks
from airflow_provider_seatunnel.connectors.iceberg import options as iceberg_options
from airflow_provider_seatunnel.connectors.lakehouse import DELETE, merge_sql, read_columns, resolve
from airflow_provider_seatunnel.connectors.lakehouse.jars import (
    EXTENSIONS_KEY,
    env_names,
    m2_jar,
    m2_repository,
    minor_of,
    with_extension,
)
from airflow_provider_seatunnel.connectors.lakehouse.options import SinkKeys
from airflow_provider_seatunnel.connectors.paimon import options as paimon_options
from airflow_provider_seatunnel.spi import SINK
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import ROW_KIND


def test_read_columns_take_the_tables_spelling_in_the_order_asked():
    have = ["ID", "Name", "ts"]
    assert read_columns(("name", "id"), have, False) == ["Name", "ID"]
    assert read_columns(("Name",), have, True) == ["Name"]


def test_a_read_column_the_table_lacks_is_named_with_the_tables_columns():
    with pytest.raises(RuntimeConfigError) as e:
        read_columns(("name", "nope"), ["ID", "Name"], True)
    assert str(e.value) == "read_columns: name, nope not in the table (columns: ID, Name)"


def test_a_key_the_rows_lack_keeps_its_message():
    assert resolve(("id",), ["ID", "v"], False, "primary_keys") == ["ID"]
    with pytest.raises(RuntimeConfigError) as e:
        resolve(("id", "w"), ["ID", "v"], False, "primary_keys")
    assert str(e.value) == "primary_keys: w is not a column of the rows (columns: ID, v)"


def test_the_merge_deletes_on_delete_rows_and_upserts_the_others():
    kind = f"s.`{ROW_KIND}`"
    sql = merge_sql("delta.`/w/t`", "st_view", ["id", "we`ird"], ["id"])
    assert sql == (f"MERGE INTO delta.`/w/t` t USING `st_view` s ON t.`id` = s.`id` "
                   f"WHEN MATCHED AND {kind} = {DELETE} THEN DELETE "
                   "WHEN MATCHED THEN UPDATE SET t.`id` = s.`id`, t.`we``ird` = s.`we``ird` "
                   f"WHEN NOT MATCHED AND {kind} <> {DELETE} THEN INSERT (`id`, `we``ird`) VALUES (s.`id`, s.`we``ird`)")


def test_a_merge_on_two_keys_joins_on_both():
    sql = merge_sql("cat.db.t", "v", ["a", "b", "c"], ["a", "b"])
    assert " ON t.`a` = s.`a` AND t.`b` = s.`b` WHEN " in sql
    assert sql.startswith("MERGE INTO cat.db.t t USING `v` s ")


def test_the_spark_minor_of_a_version():
    assert minor_of("4.1.1") == "4.1"
    assert minor_of("4.2.0.dev1") == "4.2"


def test_a_coordinates_jar_lies_where_maven_keeps_it():
    assert m2_jar("org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0") == os.path.join(
        m2_repository(), "org", "apache", "iceberg", "iceberg-spark-runtime-4.1_2.13", "1.12.0",
        "iceberg-spark-runtime-4.1_2.13-1.12.0.jar")


@pytest.mark.parametrize(("env", "named"), [
    ({}, False),
    ({"spark.jars": "/x/delta-spark_4.1_2.13-4.4.0.jar"}, True),
    ({"spark.jars.packages": "io.delta:delta-spark_4.1_2.13:4.4.0"}, True),
    ({"spark.jars.packages": "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"}, False),
])
def test_the_env_names_an_artifact_in_either_jar_setting(env, named):
    assert env_names(env, delta_checks.ARTIFACT) is named


def test_an_extension_comes_after_the_envs_own_once():
    assert with_extension({}, "X") == "X"
    assert with_extension({EXTENSIONS_KEY: " A , ,X"}, "X") == "A,X"
    assert with_extension({EXTENSIONS_KEY: "A,B"}, "X") == "A,B,X"


def test_both_session_settings_keep_the_envs_extensions(monkeypatch):
    env = {EXTENSIONS_KEY: "my.Ext"}
    assert delta_checks.session_conf({}, env)[EXTENSIONS_KEY] == f"my.Ext,{delta_checks.EXTENSION}"
    monkeypatch.setattr(iceberg_checks, "spark_minor", lambda: "4.1")
    assert iceberg_checks.session_conf({}, env) == {EXTENSIONS_KEY: f"my.Ext,{iceberg_checks.EXTENSION}"}


_MODES = {"case_sensitive": True, "schema_save_mode": "RECREATE_SCHEMA", "data_save_mode": "DROP_DATA"}


@pytest.mark.parametrize(("module", "block", "keys"), [
    (delta_options, {"path": "/d/t", "primary_keys": ["ID", "p"], "partition_keys": "p"}, ("primary_keys", "partition_keys")),
    (paimon_options, {"warehouse": "/w", "database": "d", "table": "t", "paimon.table.primary-keys": "ID,p",
                      "paimon.table.partition-keys": "p"}, ("paimon.table.primary-keys", "paimon.table.partition-keys")),
    (iceberg_options, {"table": "t", "catalog_name": "lake", "iceberg.catalog.config": {"type": "hadoop",
                       "warehouse": "file:///w"}, "iceberg.table.primary-keys": "ID,p",
                       "iceberg.table.partition-keys": "p"}, ("iceberg.table.primary-keys", "iceberg.table.partition-keys")),
])
def test_each_lakehouse_sink_holds_its_keys_and_save_modes_as_the_family_declares_them(module, block, keys):
    opts = module.parse({**block, **_MODES}, SINK)
    assert isinstance(opts, SinkKeys)
    assert (opts.primary_keys, opts.partition_keys) == (("ID", "p"), ("p",))
    assert (opts.case_sensitive, opts.schema_save_mode, opts.data_save_mode) == tuple(_MODES.values())
    default = module.parse({k: v for k, v in block.items() if k not in keys}, SINK)
    assert (default.primary_keys, default.case_sensitive, default.schema_save_mode, default.data_save_mode) == (
        (), False, "CREATE_SCHEMA_WHEN_NOT_EXIST", "APPEND_DATA")
