"""Lineage at parse time: datasets named as OpenLineage names them, Airflow assets with the same names,
asset aliases for targets only the running task can name, a warning for what nothing can name."""

from __future__ import annotations

import logging
from datetime import datetime

from airflow_provider_seatunnel.operators.lineage import openlineage_name, pipeline_assets

from ..conftest import ROOT

TEMPLATED = """
source { LocalFile { path = "/in/orders", file_format_type = "json", schema = { fields { id = bigint } } } }
sink { LocalFile { path = "${out}", file_format_type = "json" } }
"""

JDBC_FROM_CONNECTION = """
source { Jdbc { jdbc_conn_id = "warehouse", driver = "org.postgresql.Driver", table_path = "sales.orders" } }
sink { Jdbc { jdbc_conn_id = "warehouse", driver = "org.postgresql.Driver", generate_sink_sql = true,
              table = "public.orders_copy" } }
"""


def _operator(conf, **kwargs):
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    with DAG("st_lineage_parse", schedule=None, start_date=datetime(2024, 1, 1)):
        return SeaTunnelOperator(task_id="job", config=str(conf), **kwargs)


def test_a_templated_sink_path_is_an_alias_never_a_cut_uri(write_conf):
    """Before: ``Asset("file:///")`` (the path up to its first ``{{``), so every run of every such DAG
    recorded an event for the root directory."""
    from airflow.sdk import Asset, AssetAlias

    op = _operator(write_conf(TEMPLATED), variables={"out": "{{ params.root }}/{{ ds }}/orders"})
    assert op.inlets == [Asset("file:///in/orders")]
    (alias,) = op.outlets
    assert isinstance(alias, AssetAlias) and alias.name.startswith("seatunnel/") and alias.name.endswith("/sink[0]")
    partly = _operator(write_conf(TEMPLATED), variables={"out": "/data/web/dt={{ ds }}"})
    assert [type(o) for o in partly.outlets] == [AssetAlias]  # not Asset("file:///data/web")


def test_the_example_dags_declare_no_cut_path():
    """Both example DAGs template their sink's path: each sink is an alias, no outlet is a directory above it."""
    import importlib.util

    from airflow.sdk import Asset, AssetAlias

    for name in ("seatunnel_example", "seatunnel_recurring_sync"):
        spec = importlib.util.spec_from_file_location(name, ROOT / "dags" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        outlets = [o for t in module.dag.tasks for o in t.outlets]
        assert outlets and all(isinstance(o, AssetAlias) for o in outlets), outlets
        assert not any(isinstance(o, Asset) for t in module.dag.tasks for o in t.inlets)


def test_a_jdbc_table_from_a_connection_is_an_alias(write_conf):
    """Before: no asset at all (the URL, and so the database, comes from the connection at run time)."""
    from airflow.sdk import AssetAlias

    op = _operator(write_conf(JDBC_FROM_CONNECTION))
    assert op.inlets == []  # a source named at run time is an OpenLineage input only
    (alias,) = op.outlets
    assert isinstance(alias, AssetAlias) and alias.name.endswith("/sink[0]")


def test_jdbc_tables_are_named_as_openlineage_names_them(plan_of):
    """PostgreSQL database.schema.table (schema public by default, the default port), MySQL
    database.table; the tables of a source query; never the URL's credentials or parameters."""
    from airflow.sdk import Asset

    plan = plan_of("""
        source {
          Jdbc { plugin_output = "a", url = "jdbc:postgresql://u:secret@Db.Example:5433/shop?ssl=true",
                 driver = "org.postgresql.Driver", query = "select o.id from sales.orders o join customers c on o.c = c.id" }
          Jdbc { plugin_output = "b", url = "jdbc:mysql://my/shop", driver = "com.mysql.cj.jdbc.Driver", table_path = "items" }
        }
        sink {
          Jdbc { plugin_input = "a", url = "jdbc:postgresql://db/shop", driver = "org.postgresql.Driver",
                 generate_sink_sql = true, table = "orders_copy", database = "dwh" }
          Jdbc { plugin_input = "b", url = "jdbc:mysql://my:3307/shop", driver = "com.mysql.cj.jdbc.Driver",
                 generate_sink_sql = true, table = "items_copy" }
        }
    """)
    names = {}
    for p in plan.pipelines:
        inlets, outlets = pipeline_assets(p)
        names.update({str(a.uri): openlineage_name(a.uri) for a in [*inlets, *outlets]})
    assert names == {
        "postgres://db.example:5433/shop/sales/orders": ("postgres://db.example:5433", "shop.sales.orders"),
        "postgres://db.example:5433/shop/public/customers": ("postgres://db.example:5433", "shop.public.customers"),
        "postgres://db:5432/dwh/public/orders_copy": ("postgres://db:5432", "dwh.public.orders_copy"),
        "mysql://my:3306/shop/items": ("mysql://my:3306", "shop.items"),
        "mysql://my:3307/shop/items_copy": ("mysql://my:3307", "shop.items_copy"),
    }
    assert Asset("postgres://db:5432/dwh/public/orders_copy").uri == "postgres://db:5432/dwh/public/orders_copy"


def test_file_and_object_store_names():
    """file:///abs/path is namespace ``file`` and the path; an object store's name is the key."""
    assert openlineage_name("file:///data/out/dt%3D2024") == ("file", "/data/out/dt=2024")
    assert openlineage_name("s3://bucket/a/b.parquet") == ("s3://bucket", "a/b.parquet")
    assert openlineage_name("s3a://bucket/k") == ("s3://bucket", "k")
    assert openlineage_name("hdfs://nn:8020/warehouse/t") == ("hdfs://nn:8020", "/warehouse/t")


def test_airflow_translates_our_file_asset_to_our_openlineage_name(write_conf):
    """The Asset is the dataset: Airflow's own OpenLineage translation of it gives the same name."""
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset

    op = _operator(write_conf(TEMPLATED), variables={"out": "/data/out dir/orders"})
    (asset,) = op.outlets
    ol = translate_airflow_asset(asset, None)
    assert (ol.namespace, ol.name) == openlineage_name(asset.uri) == ("file", "/data/out dir/orders")


def test_what_nothing_can_name_is_a_warning_once(write_conf, caplog):
    """A relative path (the driver's directory decides it) or a query sqlglot cannot read: no
    asset, one warning per process, not one per parse of each pipeline."""
    conf = write_conf("""
        source {
          Jdbc { plugin_output = "q", url = "jdbc:postgresql://db/shop", driver = "org.postgresql.Driver",
                 query = "select from where (" }
        }
        sink { LocalFile { plugin_input = "q", path = "relative/out", file_format_type = "json" } }
    """)
    with caplog.at_level(logging.DEBUG, logger="airflow_provider_seatunnel.operators.lineage"):
        first = _operator(conf)
        second = _operator(conf)
    assert first.inlets == first.outlets == second.outlets == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert any("relative path 'relative/out'" in w and "cannot be named" in w for w in warnings)
    assert any("the tables of the query" in w for w in warnings)


def test_sql_column_lineage(plan_of):
    """Per output field the input columns it comes from (through CTEs, joins, UNION branches), with
    OpenLineage's subtypes and masking; the columns that decide the rows; a split UNION keeps only
    its pipeline's input."""
    from airflow_provider_seatunnel.spi import ColumnOrigin as O
    from airflow_provider_seatunnel.spi import get_connector

    sql = get_connector("Sql")
    flow = sql.column_lineage({"query": "select id, upper(name) as name, md5(secret) as token, sum(v) as total "
                                        "from t where k > 0 group by id, name, secret"},
                              {"t": ["id", "name", "secret", "v", "k"]})
    assert flow.fields == {"id": (O("t", "id"),), "name": (O("t", "name", "TRANSFORMATION"),),
                           "token": (O("t", "secret", "TRANSFORMATION", True),),
                           "total": (O("t", "v", "AGGREGATION"),)}
    assert set(flow.rows) == {O("t", "k", "FILTER"), O("t", "id", "GROUP_BY"), O("t", "name", "GROUP_BY"),
                              O("t", "secret", "GROUP_BY")}
    joined = sql.column_lineage({"query": "with a2 as (select id, x * 2 as x2 from a) "
                                          "select a2.x2, b.y from a2 join b on a2.id = b.id"},
                                {"a": ["id", "x"], "b": ["id", "y"]})
    assert joined.fields == {"x2": (O("a", "x", "TRANSFORMATION"),), "y": (O("b", "y"),)}
    assert set(joined.rows) == {O("a", "id", "JOIN"), O("b", "id", "JOIN")}
    union = "select id from web union all select id from store"
    assert sql.column_lineage({"query": union}, {"web": ["id"]}).fields == {"id": (O("web", "id"),)}
    assert sql.column_lineage({"query": "select * from this"}, {"src": ["a", "b"]}).fields == {
        "a": (O("src", "a"),), "b": (O("src", "b"),)}
    assert sql.column_lineage({"query": "select from ("}, {"t": None}) is None


def test_openlineage_of_a_pipeline_composes_transforms(write_conf, plan_of):
    """Inputs and outputs with schemas, the rows of the metrics, and column lineage through two Sql
    transforms back to the source's columns (without a task run: the plan and metrics as the task has them)."""
    from airflow_provider_seatunnel.operators.lineage import operator_lineage

    plan = plan_of("""
        source { LocalFile { plugin_output = "raw", path = "/in/raw", file_format_type = "json",
                             schema = { fields { id = bigint, name = string, amount = double } } } }
        transform {
          Sql { plugin_input = "raw", plugin_output = "a", query = "select id, name, amount * 2 as amount from raw where id > 0" }
          Sql { plugin_input = "a", plugin_output = "b", query = "select id, lower(name) as who, amount from a" }
        }
        sink { LocalFile { plugin_input = "b", path = "/out/b", file_format_type = "json" } }
    """)
    (pipeline,) = plan.pipelines
    metrics = {"status": "FINISHED", "per_source": {"source[0] LocalFile": 7}, "per_sink": {"sink[0] LocalFile": 5},
               "per_table": {"sink[0] LocalFile": {"default": 5}}}
    lineage = operator_lineage(pipeline, metrics)
    (source,), (sink,) = lineage.inputs, lineage.outputs
    assert (source.namespace, source.name, sink.namespace, sink.name) == ("file", "/in/raw", "file", "/out/b")
    assert [(f.name, f.type) for f in source.facets["schema"].fields] == [("id", "bigint"), ("name", "string"),
                                                                          ("amount", "double")]
    assert [f.name for f in sink.facets["schema"].fields] == ["id", "who", "amount"]
    assert source.inputFacets["inputStatistics"].rowCount == 7 and sink.outputFacets["outputStatistics"].rowCount == 5
    columns = sink.facets["columnLineage"]
    seen = {out: [(i.name, i.field, i.transformations[0].subtype) for i in f.inputFields]
            for out, f in columns.fields.items()}
    assert seen == {"id": [("/in/raw", "id", "IDENTITY")], "who": [("/in/raw", "name", "TRANSFORMATION")],
                    "amount": [("/in/raw", "amount", "TRANSFORMATION")]}
    assert [(i.field, i.transformations[0].type, i.transformations[0].subtype) for i in columns.dataset] == [
        ("id", "INDIRECT", "FILTER")]
    failed = operator_lineage(pipeline, {"status": "FAILED"})
    assert not failed.outputs[0].outputFacets  # nothing committed: no statistics


def test_targets_the_data_names_are_named_per_table_written(plan_of):
    """``${table_name}`` in a path, a Jdbc sink without ``table``: an alias at parse time, then one
    dataset per table the metrics say the sink wrote, with its rows."""
    from airflow.sdk import AssetAlias

    from airflow_provider_seatunnel.operators.lineage import run_time_assets

    plan = plan_of("""
        source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = bigint } } } }
        sink {
          LocalFile { plugin_input = "t", path = "/out/${table_name}", file_format_type = "json" }
          Jdbc { plugin_input = "t", url = "jdbc:postgresql://db/shop", driver = "org.postgresql.Driver",
                 generate_sink_sql = true }
        }
    """)
    (pipeline,) = plan.pipelines
    assert all(isinstance(o, AssetAlias) for o in pipeline_assets(pipeline)[1])
    files, jdbc = pipeline.sinks
    metrics = {"per_table": {"sink[0] LocalFile": {"shop.orders": 3, "items": 4},
                             "sink[1] Jdbc": {"sales.public.orders": 5}},
               "per_sink": {"sink[0] LocalFile": 7, "sink[1] Jdbc": 5}}
    assert run_time_assets(files, metrics) == ({"file:///out/orders": 3, "file:///out/items": 4}, [])
    assert run_time_assets(jdbc, metrics) == ({"postgres://db:5432/sales/public/orders": 5}, [])
    assert run_time_assets(files, None)[0] == {}  # no metrics: nothing to name them by
