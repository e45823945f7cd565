"""The table placeholders SeaTunnel 2.3.8 substitutes in a sink's options (``${database_name}``,
``${schema_name}``, ``${table_name}``, ``${schema_full_name}``, ``${table_full_name}``, ``${field_names}``,
``${primary_key}``, ``${unique_key}``), per upstream table, with the keys the plan carries to the sink."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.files.placeholders import expand_table_placeholders, table_config
from airflow_provider_seatunnel.connectors.jdbc.target import resolve_keys, sink_config
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.schema import ConstraintKey, TableKeys, table_keys

KEYS = TableKeys(("pk", ("id", "region")), (ConstraintKey("idx", "INDEX_KEY", (("name", "ASC"),)),
                                           ConstraintKey("uk", "UNIQUE_KEY", (("email", "ASC"), ("day", "DESC")))))

JOB = """
source { FakeSource { plugin_output = "t", tables_configs = [
  { schema = { table = "shop.public.orders", fields { id = bigint, email = string },
               primaryKey { name = "pk_orders", columnNames = [id] },
               constraintKeys = [{ constraintName = "uk_email", constraintType = UNIQUE_KEY,
                                   constraintColumns = [{ columnName = email }] }] } },
  { schema = { table = "shop.public.notes", fields { body = string } } }] } }
sink { Jdbc { plugin_input = "t", url = "jdbc:postgresql://h/shop", driver = "org.postgresql.Driver",
              generate_sink_sql = true, database = "${database_name}", table = "${schema_name}.${table_name}_copy",
              primary_keys = ["${primary_key}"], custom_sql = "-- ${unique_key} ${table_full_name}" } }
"""


def test_every_placeholder_of_a_three_part_table():
    text = "${database_name}|${schema_name}|${table_name}|${schema_full_name}|${table_full_name}|" \
           "${field_names}|${primary_key}|${unique_key}"
    assert expand_table_placeholders(text, "db.s.t", ["id", "name"], KEYS) == \
        "db|s|t|db.s|db.s.t|id,name|id,region|email,day"
    assert expand_table_placeholders("${database_name:none}.${schema_name:dbo}.${table_name}", "t") == "none.dbo.t"


def test_key_placeholders_stay_as_written_where_no_key_stands_for_them():
    # keys unknown (no data at hand), or the table has no such key: SeaTunnel leaves the text as it is
    assert expand_table_placeholders("${primary_key}|${unique_key:x}", "t") == "${primary_key}|${unique_key:x}"
    assert expand_table_placeholders("${primary_key}|${unique_key}", "t", None, TableKeys()) == \
        "${primary_key}|${unique_key}"


def test_a_one_item_list_of_a_column_placeholder_becomes_the_columns():
    config = {"primary_keys": ["${primary_key}"], "unique": [" ${unique_key} "], "all": ["${field_names}"],
              "two": ["${primary_key}", "x"], "path": "/out/${table_name}", "n": 3}
    out = table_config(config, "db.orders", ["id", "region", "email"], KEYS)
    assert out == {"primary_keys": ["id", "region"], "unique": ["email", "day"], "all": ["id", "region", "email"],
                   "two": ["${primary_key}", "x"], "path": "/out/orders", "n": 3}
    assert table_config(config, "db.orders")["primary_keys"] == ["${primary_key}"]  # nothing known: as written


def test_jdbc_sink_options_per_table_from_the_keys_the_plan_carries(plan_of):
    (pipeline,) = plan_of(JOB).pipelines
    sink = pipeline.vertices[-1]
    orders = sink_config(sink.config, "shop.public.orders", None, table_keys(sink, "shop.public.orders"))
    assert (orders["database"], orders["table"], orders["primary_keys"]) == ("shop", "public.orders_copy", ["id"])
    assert orders["custom_sql"] == "-- email shop.public.orders"
    notes = sink_config(sink.config, "shop.public.notes", None, table_keys(sink, "shop.public.notes"))
    assert notes["custom_sql"] == "-- ${unique_key} shop.public.notes"  # no unique key: left as SeaTunnel does
    # a default is taken when the config is read, as SeaTunnel 2.3.8 does (it is a variable's default there)
    assert plan_of(JOB.replace("${database_name}", "${database_name:dflt}")).pipelines[0].vertices[-1] \
        .config["database"] == "dflt"
    with pytest.raises(RuntimeConfigError, match=r"primary_keys = \[\"\$\{primary_key\}\"\]: the table has no"):
        resolve_keys(notes["primary_keys"], ["body"])
