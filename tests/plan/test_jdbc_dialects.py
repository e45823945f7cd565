"""Jdbc dialects of the databases that cannot run here (Oracle, SQL Server, DB2, Dameng, Kingbase,
OceanBase, Vertica, Redshift, Snowflake, Hive, Xugu, SAP HANA, Teradata, Phoenix, IRIS, Gbase 8a,
Tablestore; Greenplum, openGauss and HighGo with PostgreSQL's): which URL and which ``dialect``
option picks each, and the SQL each writes — the upsert, the insert, the created table, the
bookkeeping tables, the split predicates, the names — checked on its text and parsed with sqlglot
in the database's own dialect where sqlglot has it (no JVM, no database: SQL generation only).
SeaTunnel's own e2e Jdbc configs of these databases validate and generate their statements
(when SeaTunnel's source tree is at ``$SEATUNNEL_SRC``, default ``/tmp/st_src``)."""

from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path

import pytest
import sqlglot
from pyspark.sql import types as T
from sqlglot import exp

from airflow_provider_seatunnel.connectors.jdbc.commit import bookkeeping_sql
from airflow_provider_seatunnel.connectors.jdbc.lineage import assets
from airflow_provider_seatunnel.connectors.jdbc.savemodes import create_table_sql
from airflow_provider_seatunnel.connectors.jdbc.source import _base_query, _predicates, _table_sql, source_tables
from airflow_provider_seatunnel.connectors.jdbc.statements import move_statements
from airflow_provider_seatunnel.connectors.jdbc.target import sink_config, sink_target
from airflow_provider_seatunnel.connectors.sqlclient.connection import connection_of, default_driver_class
from airflow_provider_seatunnel.connectors.sqlclient.databases import DATABASES, database_of, dialect_of
from airflow_provider_seatunnel.connectors.sqlclient.dialects import as_part
from airflow_provider_seatunnel.plan.compiler import validate_job
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

#: dialect -> (a URL of its database, a ``dialect`` option name SeaTunnel gives it, sqlglot's reader)
CASES = {
    "oracle": ("jdbc:oracle:thin:@db:1521/XEPDB1", "Oracle", "oracle"),
    "sqlserver": ("jdbc:sqlserver://db:1433;databaseName=shop;encrypt=false", "SqlServer", "tsql"),
    "db2": ("jdbc:db2://db:50000/SHOP", "DB2", ""),  # sqlglot has no DB2: ANSI
    "dameng": ("jdbc:dm://db:5236", "Dameng", "oracle"),
    "xugu": ("jdbc:xugu://db:5138/SYSTEM", "XUGU", "oracle"),
    "vertica": ("jdbc:vertica://db:5433/shop", "Vertica", ""),
    "saphana": ("jdbc:sap://db:39017", "SapHana", ""),
    "iris": ("jdbc:IRIS://db:1972/%SYS", "IRIS", None),  # INSERT OR UPDATE: no sqlglot reader
    "kingbase": ("jdbc:kingbase8://db:54321/shop", "KingBase", "postgres"),
    "redshift": ("jdbc:redshift://db:5439/dev", "Redshift", "redshift"),
    "oceanbase": ("jdbc:oceanbase://db:2881/shop", "OceanBase", "mysql"),
    "snowflake": ("jdbc:snowflake://acct.snowflakecomputing.com/?db=shop", "Snowflake", "snowflake"),
    "hive": ("jdbc:hive2://db:10000/default", "HIVE", "hive"),
    "teradata": ("jdbc:teradata://db/DATABASE=shop,DBS_PORT=1025", "Teradata", "teradata"),
    "phoenix": ("jdbc:phoenix:thin:url=http://db:8765;serialization=PROTOBUF", "Phoenix", ""),
    "gbase8a": ("jdbc:gbase://db:5258/shop", "Gbase8a", "mysql"),
    "tablestore": ("jdbc:ots:https://inst.cn-hangzhou.ots.aliyuncs.com/inst", "Tablestore", "mysql"),
}
MERGING = ("oracle", "sqlserver", "db2", "dameng", "xugu", "vertica", "saphana")
NO_NATIVE_UPSERT = ("redshift", "snowflake", "hive", "teradata", "phoenix", "gbase8a", "tablestore")
COLUMNS = ["id", "name", "price", "ok", "created", "raw"]
ROW_TYPE = T.StructType([T.StructField("id", T.LongType()), T.StructField("name", T.StringType()),
                         T.StructField("price", T.DecimalType(38, 18)), T.StructField("ok", T.BooleanType()),
                         T.StructField("created", T.TimestampNTZType()), T.StructField("raw", T.BinaryType())])


def sink(dialect: str, **options) -> dict:
    return {"url": CASES[dialect][0], "driver": "x", "generate_sink_sql": True, "table": "sales.orders",
            "primary_keys": ["id"], **options}


def statements(config: dict, columns: list[str] = COLUMNS) -> list[str]:
    entry = {"columns": columns, "staging": "st_stage_orders_1", "casts": {}}
    return move_statements(sink_target(config), entry, config)


def parses(sql: str, read: str | None) -> exp.Expression | None:
    """The one statement ``sql`` is in sqlglot's ``read`` dialect (None: sqlglot has none for it)."""
    if read is None:
        return None
    trees = sqlglot.parse(sql, read=read or None, error_level=sqlglot.ErrorLevel.RAISE)
    assert len(trees) == 1 and not isinstance(trees[0], exp.Command), sql
    return trees[0]


# ------------------------------------------------------------------------------------------------
# which dialect
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_the_url_picks_the_dialect_and_the_dialect_option_overrides_it(name):
    url, option, _ = CASES[name]
    assert dialect_of(url).name == name
    for spelling in (option, option.lower(), option.upper()):
        assert dialect_of("jdbc:postgresql://db/shop", spelling).name == name
        assert connection_of({"url": "jdbc:h2:mem:x", "driver": "x", "dialect": spelling}).dialect.name == name
    assert dialect_of(url, "nosuchdb").name == name  # a name SeaTunnel has no dialect for: the URL's
    assert dialect_of(url, "Generic").name == "generic"


@pytest.mark.parametrize("url", ["jdbc:pivotal:greenplum://gp:5432;DatabaseName=dw", "jdbc:opengauss://og:5432/db",
                                 "jdbc:highgo://hg:5866/db"])
def test_greenplum_opengauss_and_highgo_get_postgresqls_dialect_as_in_seatunnel(url):
    assert dialect_of(url).name == "postgresql" and dialect_of(url).upsert == "on_conflict"
    for option in ("Greenplum", "OpenGauss", "HighGo"):
        assert dialect_of("jdbc:h2:mem:x", option).name == "postgresql"


def test_compatible_mode_refines_the_dialect_as_seatunnels_factories_do():
    ob = "jdbc:oceanbase://db:2881/shop"
    assert dialect_of(ob).name == "oceanbase" and dialect_of(ob).quote == "`"
    assert connection_of({"url": ob, "driver": "x", "compatible_mode": "oracle"}).dialect.name == "oracle"
    assert connection_of({"url": ob, "driver": "x", "compatible_mode": "mysql"}).dialect.name == "oceanbase"
    starrocks = dialect_of("jdbc:mysql://sr:9030", compatible_mode="starrocks")
    assert starrocks.name == "starrocks" and starrocks.hash_mod("k", 4) == "ABS(murmur_hash3_32(`k`) % 4)"
    assert dialect_of("jdbc:hive2://h:10000/d", compatible_mode="inceptor").name == "inceptor"
    low = dialect_of("jdbc:postgresql://db/shop", compatible_mode="postgresLow")
    assert low.name == "postgresql" and low.upsert is None  # no ON CONFLICT before PostgreSQL 9.5
    assert "ON CONFLICT" not in " ".join(statements({**sink("oracle"), "url": "jdbc:postgresql://db/shop",
                                                     "compatible_mode": "postgresLow"}))


def test_each_database_has_its_usual_driver_class_and_default_port():
    assert default_driver_class(CASES["oracle"][0]) == "oracle.jdbc.OracleDriver"
    assert default_driver_class(CASES["sqlserver"][0]) == "com.microsoft.sqlserver.jdbc.SQLServerDriver"
    assert default_driver_class(CASES["db2"][0]) == "com.ibm.db2.jcc.DB2Driver"
    assert default_driver_class(CASES["dameng"][0]) == "dm.jdbc.driver.DmDriver"
    assert default_driver_class("jdbc:informix-sqli://h:9088/db:INFORMIXSERVER=x") == "com.informix.jdbc.IfxDriver"
    for db in DATABASES:
        assert database_of(db.prefixes[0].upper() + "//host/x") is db


@pytest.mark.parametrize("url, uri", [
    ("jdbc:oracle:thin:@Ora:1521/XEPDB1", "oracle://ora:1521/XEPDB1/SALES/ORDERS"),
    ("jdbc:oracle:thin:@//ora/XEPDB1", "oracle://ora:1521/XEPDB1/SALES/ORDERS"),
    ("jdbc:sqlserver://ms;databaseName=shop;encrypt=false", "mssql://ms:1433/shop/SALES/ORDERS"),
    ("jdbc:db2://db2:50001/SHOP", "db2://db2:50001/SHOP/SALES/ORDERS"),
    ("jdbc:teradata://td/DATABASE=shop,DBS_PORT=1026", "teradata://td:1026/shop/SALES/ORDERS"),
    ("jdbc:pivotal:greenplum://gp;DatabaseName=dw", "greenplum://gp:5432/dw/SALES/ORDERS"),
    ("jdbc:kingbase8://kb/shop", "kingbase://kb:54321/shop/SALES/ORDERS"),
    ("jdbc:oceanbase://ob/shop", "oceanbase://ob:2881/SALES/ORDERS"),
])
def test_lineage_names_the_tables_with_the_databases_scheme_and_default_port(url, uri):
    assert assets({"url": url, "driver": "x", "table_path": "SALES.ORDERS"}) == [uri]


# ------------------------------------------------------------------------------------------------
# the sink's SQL
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", MERGING)
def test_merge_dialects_upsert_with_seatunnels_merge_set_based_from_the_staging_table(name):
    read = CASES[name][2]
    delete, merge = statements(sink(name))
    dialect = dialect_of(CASES[name][0])
    q = dialect.column
    ident = dialect.table("sales", "orders")
    alias = " AS " if name in ("sqlserver", "db2", "saphana") else " "  # Oracle refuses AS before an alias
    assert merge.startswith(f"MERGE INTO {ident}{alias}st_target USING (SELECT s.{q('id')} AS {q('id')}, ")
    assert f"{alias}st_source ON (st_target.{q('id')} = st_source.{q('id')})" in merge
    assert f" WHEN MATCHED THEN UPDATE SET {q('name')} = st_source.{q('name')}, " in merge
    assert f" WHEN NOT MATCHED THEN INSERT ({', '.join(map(q, COLUMNS))}) VALUES (st_source.{q('id')}, " in merge
    assert f"WHERE s.{q('__st_row_kind')} IN (0, 2))" in merge  # INSERT and UPDATE_AFTER rows
    assert merge.endswith(";") == (name == "sqlserver")
    assert delete == (f"DELETE FROM {ident} WHERE {q('id')} IN (SELECT s.{q('id')} FROM "
                      f"{dialect.table('sales', 'st_stage_orders_1')} s WHERE s.{q('__st_row_kind')} = 3)")
    tree = parses(merge, read)
    if tree is not None:
        assert isinstance(tree, exp.Merge) and tree.this.name == "orders"
        parses(delete, read)


def test_oracle_sql_server_and_db2_merges_are_written_as_seatunnel_writes_them():
    oracle = statements(sink("oracle"))[1]
    assert oracle.startswith('MERGE INTO "sales"."orders" st_target USING (SELECT s."id" AS "id", s."name" AS "name"')
    sqlserver = statements(sink("sqlserver"))[1]
    assert sqlserver.startswith("MERGE INTO [sales].[orders] AS st_target USING (SELECT s.[id] AS [id]")
    assert sqlserver.endswith("VALUES (st_source.[id], st_source.[name], st_source.[price], st_source.[ok], "
                              "st_source.[created], st_source.[raw]);")
    db2 = statements(sink("db2"))[1]  # plain names unquoted, as SeaTunnel's DB2 dialect writes them
    assert db2.startswith('MERGE INTO sales.orders AS st_target USING (SELECT s."id" AS "id"')


def test_a_key_only_table_merges_without_an_update_and_composite_keys_match_every_part():
    merge = statements(sink("oracle"), ["id"])[1]
    assert "WHEN MATCHED" not in merge and merge.endswith('INSERT ("id") VALUES (st_source."id")')
    parses(merge, "oracle")
    config = sink("sqlserver", primary_keys=["id", "name"])
    delete, merge = statements(config)
    assert "ON (st_target.[id] = st_source.[id] AND st_target.[name] = st_source.[name])" in merge
    # SQL Server has no row values: a composite key's staged rows are matched with EXISTS
    assert delete == ("DELETE FROM [sales].[orders] WHERE EXISTS (SELECT 1 FROM [sales].[st_stage_orders_1] s "
                      "WHERE s.[__st_row_kind] = 3 AND s.[id] = [sales].[orders].[id] "
                      "AND s.[name] = [sales].[orders].[name])")
    parses(delete, "tsql")
    delete = statements(sink("oracle", primary_keys=["id", "name"]))[0]
    assert 'WHERE ("id", "name") IN (SELECT s."id", s."name" FROM' in delete
    parses(delete, "oracle")


@pytest.mark.parametrize("name", MERGING)
def test_enable_upsert_false_inserts_then_merges_the_updates_only(name):
    insert, merge = statements(sink(name, enable_upsert=False))[1:]
    q = dialect_of(CASES[name][0]).column
    assert insert.startswith("INSERT INTO ") and insert.endswith(f"WHERE s.{q('__st_row_kind')} = 0")
    assert f"WHERE s.{q('__st_row_kind')} = 2)" in merge
    assert "WHEN MATCHED THEN UPDATE SET" in merge and "WHEN NOT MATCHED" not in merge
    parses(insert, CASES[name][2])
    parses(merge, CASES[name][2])


def test_kingbase_oceanbase_and_iris_have_their_own_upserts():
    kingbase = statements(sink("kingbase"))[1]
    assert kingbase.startswith('INSERT INTO sales.orders ("id", "name"') and kingbase.endswith(
        'ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name", "price" = EXCLUDED."price", '
        '"ok" = EXCLUDED."ok", "created" = EXCLUDED."created", "raw" = EXCLUDED."raw"')
    parses(kingbase, "postgres")
    oceanbase = statements(sink("oceanbase"))[1]
    assert oceanbase.startswith("INSERT INTO `sales`.`orders` (`id`") and "ON DUPLICATE KEY UPDATE `name` = " \
        "VALUES(`name`)" in oceanbase
    parses(oceanbase, "mysql")
    iris = statements(sink("iris"))[1]
    assert iris.startswith('INSERT OR UPDATE "sales"."orders" ("id", "name", "price", "ok", "created", "raw") '
                           'SELECT s."id", s."name"')


@pytest.mark.parametrize("name", NO_NATIVE_UPSERT)
def test_where_seatunnel_has_no_native_upsert_the_staged_keys_are_deleted_then_inserted(name):
    deleted, replaced, inserted = statements(sink(name))
    q = dialect_of(CASES[name][0]).column
    assert deleted.endswith(f"WHERE s.{q('__st_row_kind')} = 3)")
    assert replaced.startswith("DELETE FROM ") and replaced.endswith(f"WHERE s.{q('__st_row_kind')} IN (0, 2))")
    assert inserted.startswith("INSERT INTO ") and inserted.endswith(f"WHERE s.{q('__st_row_kind')} IN (0, 2)")
    for sql in (deleted, replaced, inserted):
        parses(sql, CASES[name][2])


@pytest.mark.parametrize("name", list(CASES))
def test_without_keys_every_dialect_inserts_from_the_staging_table(name):
    (insert,) = statements(sink(name, primary_keys=[]))
    dialect = dialect_of(CASES[name][0])
    assert insert == (f"INSERT INTO {dialect.table('sales', 'orders')} ({', '.join(map(dialect.column, COLUMNS))}) "
                      f"SELECT {', '.join('s.' + dialect.column(c) for c in COLUMNS)} FROM "
                      f"{dialect.table('sales', 'st_stage_orders_1')} s")
    parses(insert, CASES[name][2])


# ------------------------------------------------------------------------------------------------
# created tables
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, columns", [
    ("oracle", '"id" INTEGER NOT NULL, "name" VARCHAR2(4000), "price" NUMBER(38,18), "ok" NUMBER(1), '
               '"created" TIMESTAMP WITH LOCAL TIME ZONE, "raw" BLOB'),
    ("sqlserver", "[id] BIGINT NOT NULL, [name] NVARCHAR(MAX), [price] DECIMAL(38,18), [ok] BIT, "
                  "[created] DATETIME2, [raw] VARBINARY(MAX)"),
    ("db2", '"id" BIGINT NOT NULL, "name" VARCHAR(32672), "price" DECIMAL(31,11), "ok" BOOLEAN, '
            '"created" TIMESTAMP, "raw" VARBINARY(32672)'),  # DB2's decimals hold 31 digits
    ("dameng", '"id" BIGINT NOT NULL, "name" TEXT, "price" DECIMAL(38,18), "ok" BIT, "created" TIMESTAMP, '
               '"raw" LONGVARBINARY'),
    ("redshift", '"id" BIGINT NOT NULL, "name" CHARACTER VARYING(65535), "price" NUMERIC(38,18), "ok" BOOLEAN, '
                 '"created" TIMESTAMP WITHOUT TIME ZONE, "raw" BINARY VARYING(1024000)'),
    ("snowflake", '"id" BIGINT NOT NULL, "name" STRING, "price" DECIMAL(38,18), "ok" BOOLEAN, '
                  '"created" TIMESTAMP_NTZ, "raw" BINARY'),
    ("saphana", '"id" BIGINT NOT NULL, "name" NVARCHAR(5000), "price" DECIMAL(38,18), "ok" BOOLEAN, '
                '"created" TIMESTAMP, "raw" BLOB'),
    ("xugu", '"id" BIGINT NOT NULL, "name" VARCHAR(60000), "price" NUMERIC(38,18), "ok" BOOLEAN, '
             '"created" TIMESTAMP, "raw" BLOB'),
    ("kingbase", '"id" BIGINT NOT NULL, "name" TEXT, "price" NUMERIC(38,18), "ok" BOOLEAN, "created" TIMESTAMP, '
                 '"raw" BYTEA'),
    ("hive", "`id` BIGINT NOT NULL, `name` STRING, `price` DECIMAL(38,18), `ok` BOOLEAN, `created` TIMESTAMP, "
             "`raw` BINARY"),
])
def test_created_tables_get_the_column_types_of_seatunnels_type_converters(name, columns):
    config = sink(name)
    dialect = dialect_of(CASES[name][0])
    sql = create_table_sql(sink_target(config), ROW_TYPE, config)
    assert sql == f"CREATE TABLE {dialect.table('sales', 'orders')} ({columns}, PRIMARY KEY ({dialect.column('id')}))"
    parses(sql, CASES[name][2])


def test_string_keys_get_a_bounded_type_where_the_unbounded_one_cannot_be_a_key():
    keyed = T.StructType([T.StructField("code", T.StringType()), T.StructField("note", T.StringType())])
    for name, key, other in [("sqlserver", "NVARCHAR(255)", "NVARCHAR(MAX)"), ("db2", "VARCHAR(255)", "VARCHAR(32672)"),
                             ("oracle", "VARCHAR2(4000)", "VARCHAR2(4000)")]:
        config = sink(name, primary_keys=["code"])
        q = dialect_of(CASES[name][0]).column
        sql = create_table_sql(sink_target(config), keyed, config)
        assert f"{q('code')} {key} NOT NULL, {q('note')} {other}," in sql


def test_a_time_column_cannot_be_created_on_oracle_which_has_no_time_type():
    config = sink("oracle")
    with pytest.raises(RuntimeConfigError, match="the oracle dialect has no column type for the field at"):
        create_table_sql(sink_target(config), T.StructType([T.StructField("id", T.LongType()),
                                                            T.StructField("at", T.TimeType())]), config)
    assert dialect_of(CASES["sqlserver"][0]).time_type == "TIME"


@pytest.mark.parametrize("name, bigint, timestamp", [("oracle", "NUMBER(19)", "TIMESTAMP"),
                                                     ("sqlserver", "BIGINT", "DATETIME2"),
                                                     ("db2", "BIGINT", "TIMESTAMP")])
def test_the_bookkeeping_tables_use_types_the_database_has(name, bigint, timestamp):
    """Oracle has no BIGINT; SQL Server's TIMESTAMP is a row version, not a time."""
    created = dict(bookkeeping_sql(sink_target(sink(name))))
    commits = created["seatunnel_commits"]
    assert f"rows_moved {bigint}, committed_at {timestamp})" in commits
    assert "BIGINT" not in commits if name == "oracle" else True
    for sql in created.values():
        parses(sql, CASES[name][2])


# ------------------------------------------------------------------------------------------------
# names and the database option
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_names_with_quotes_dots_and_statements_in_them_are_one_identifier(name):
    dialect = dialect_of(CASES[name][0])
    read = CASES[name][2]
    for hostile in ['a"b', "c]d", "e`f", "orders; DROP TABLE audit; --", "my.table"]:
        target = sink_target(sink(name, table="sales." + as_part(hostile), primary_keys=[]))
        sql = f"DELETE FROM {target.ident} WHERE {dialect.column(hostile)} = 1"
        tree = parses(sql, read if read is not None else "")
        assert tree is not None and tree.find(exp.Table).name == hostile and tree.find(exp.Column).name == hostile
    assert dialect_of(CASES["sqlserver"][0]).column("c]d") == "[c]]d]"
    assert dialect_of(CASES["oracle"][0]).column('a"b') == '"a""b"'
    assert dialect_of(CASES["hive"][0]).column("e`f") == "`e``f`"


def test_plain_names_are_bare_only_where_seatunnel_writes_them_unquoted():
    assert sink_target(sink("oracle", table="Sales.Orders")).ident == '"Sales"."Orders"'  # exact, as SeaTunnel
    assert sink_target(sink("sqlserver", table="dbo.Orders")).ident == "[dbo].[Orders]"
    assert sink_target(sink("db2", table="E2E.Orders")).ident == "E2E.Orders"  # folded by DB2
    assert sink_target(sink("db2", table='E2E."Mixed"')).ident == 'E2E."Mixed"'  # quoted by the user: exact
    assert sink_target(sink("snowflake", table="db.sch.Orders")).ident == "db.sch.Orders"


def test_the_database_option_qualifies_the_table_as_each_dialect_writes_it():
    # DB2, SAP HANA, Dameng: a one-part table is in the schema the database option names
    assert sink_target(sink("db2", database="E2E", table="SINK")).ident == "E2E.SINK"
    assert sink_target(sink("saphana", database="TEST", table="T_SINK")).ident == '"TEST"."T_SINK"'
    assert sink_target(sink("dameng", database="DAMENG", table="SYSDBA2.T")).ident == '"SYSDBA2"."T"'
    # SQL Server: the catalog of a schema.table
    assert sink_target(sink("sqlserver", database="master", table="dbo.sink")).ident == "[master].[dbo].[sink]"
    # Oracle, Xugu, IRIS: schema.table only; a three-part name loses its database
    assert sink_target(sink("oracle", database="XE", table="TESTUSER.T")).ident == '"TESTUSER"."T"'
    assert sink_target(sink("oracle", table="XE.TESTUSER.T")).qualified("seatunnel_commits") == \
        '"TESTUSER"."seatunnel_commits"'
    assert _table_sql("XE.TESTUSER.T", dialect_of(CASES["oracle"][0])) == '"TESTUSER"."T"'
    # SeaTunnel's catalog option ``schema`` names the schema whatever the table says
    assert sink_target(sink("iris", database="%SYS", schema="test", table="t")).ident == '"test"."t"'
    assert _table_sql("db.dbo.t", dialect_of(CASES["sqlserver"][0])) == "[db].[dbo].[t]"


# ------------------------------------------------------------------------------------------------
# the source's splits
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, bucket", [
    ("oracle", 'MOD(ORA_HASH("code"), 4) = 1'),
    ("sqlserver", "ABS(HASHBYTES('MD5', [code]) % 4) = 1"),
    ("db2", 'ABS(MD5("code") % 4) = 1'),
    ("redshift", '(ABS(MURMUR3_32_HASH("code")) % 4) = 1'),
    ("oceanbase", "MOD(ABS(CRC32(`code`)), 4) = 1"),
])
def test_string_split_keys_hash_with_the_dialects_function(name, bucket):
    dialect = dialect_of(CASES[name][0])
    predicates = _predicates(dialect, "code", "string", 4, None, None, False, True)
    assert predicates[1] == bucket and predicates[0].endswith(f"OR {dialect.column('code')} IS NULL")
    numeric = _predicates(dialect, "id", "numeric", 2, Decimal(1), Decimal(10), True, False)
    q = dialect.column("id")
    assert numeric == [f"{q} >= 1 AND {q} <= 5", f"{q} >= 6 AND {q} <= 10"]
    for predicate in predicates + numeric:
        parses(f"SELECT * FROM {_table_sql('sales.orders', dialect)} WHERE {predicate}", CASES[name][2])


def test_iris_has_no_hash_function_so_a_string_split_key_is_a_config_error():
    with pytest.raises(RuntimeConfigError, match="no hash function"):
        _predicates(dialect_of(CASES["iris"][0]), "code", "string", 4, None, None, False, False)


# ------------------------------------------------------------------------------------------------
# configs
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_a_job_of_each_database_plans_and_validates(name, write_conf):
    url = CASES[name][0]
    text = f"""
        source {{ Jdbc {{ url = "{url}", driver = "x", table_path = "SALES.ORDERS", partition_column = "ID",
                          plugin_output = "orders" }} }}
        sink {{ Jdbc {{ url = "{url}", driver = "x", plugin_input = "orders", generate_sink_sql = true,
                        database = "SHOP", table = "SALES.COPY", primary_keys = ["ID"],
                        schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }} }}
    """
    errors, warnings, plan = validate_job(str(write_conf(text)), environ={})
    assert not errors and not warnings and plan is not None


def seatunnel_jdbc_configs() -> list[Path]:
    root = Path(os.environ.get("SEATUNNEL_SRC", "/tmp/st_src")) / "seatunnel-e2e/seatunnel-connector-v2-e2e"
    return sorted((root / "connector-jdbc-e2e").rglob("src/test/resources/**/*.conf"))


def generated_sql(vertex) -> list[str]:
    """What a Jdbc block of a planned config writes: a source's SELECT and split predicates, a sink's
    statements for an input of its keys and one more column (and the table it would create)."""
    config = dict(vertex.config)
    conn = connection_of(config)
    if vertex.ref.startswith("source"):
        out = []
        for spec in source_tables(config, "orders", conn):
            base = _base_query(spec, config, conn.dialect)
            out.append(base)
            if spec.partition_column and conn.dialect.hash:
                out += [f"SELECT * FROM ({base}) t WHERE {p}" for p in
                        _predicates(conn.dialect, spec.partition_column, "string", 2, None, None, False, True)]
        return out
    keys = [str(k) for k in config.get("primary_keys") or []]
    named = re.findall(r"(?<![:\w]):([A-Za-z_]\w*)", str(config.get("query") or ""))  # :name placeholders
    columns = list(dict.fromkeys([*keys, *named, *(f"c{i}" for i in range(64))]))
    options, target = sink_config(config, "E2E.SOURCE", columns), None
    if options.get("query") or options.get("generate_sink_sql"):
        target = sink_target(options)
    if target is None:
        return []
    out = move_statements(target, {"columns": columns, "staging": "st_stage_t_1", "casts": {}}, options)
    if target.table is not None:
        schema = T.StructType([T.StructField(c, T.LongType()) for c in columns])
        out.append(create_table_sql(target, schema, options))
    return out


DIALECT_OF_CONFIG = {"db2": "db2", "dm_": "dameng", "kingbase": "kingbase", "oceanbase_mysql": "oceanbase",
                     "oceanbase_oracle": "oracle", "oracle": "oracle", "sqlserver": "sqlserver", "xugu": "xugu",
                     "sap_hana": "saphana", "vertica": "vertica", "snowflake": "snowflake", "hive": "hive",
                     "teradata": "teradata", "phoenix": "phoenix", "iris": "iris", "gbase8a": "gbase8a",
                     "greenplum": "postgresql", "opengauss": "postgresql"}


def test_seatunnels_own_jdbc_e2e_configs_validate_and_generate_their_sql():
    configs = seatunnel_jdbc_configs()
    if not configs:
        pytest.skip("SeaTunnel's source tree is not at $SEATUNNEL_SRC (default /tmp/st_src)")
    seen = set()
    for path in configs:
        errors, warnings, plan = validate_job(str(path), environ={})
        jdbc = [e for e in errors + warnings if not e.plugin or "Jdbc" in e.plugin or "jdbc" in e.plugin]
        assert not jdbc, (path.name, [e.format() for e in jdbc])  # only another plugin may fail it
        if plan is None:  # another plugin (FakeSource's vector types): nothing planned to look at
            continue
        expected = next((d for key, d in DIALECT_OF_CONFIG.items() if key in path.name), None)
        for pipeline in plan.pipelines:
            for vertex in [*pipeline.sources, *pipeline.sinks]:
                if vertex.plugin != "Jdbc":
                    continue
                config = dict(vertex.config)
                dialect = connection_of(config).dialect
                if str(config.get("compatible_mode", "")).lower() == "starrocks":
                    assert dialect.name == "starrocks"
                elif expected:
                    assert dialect.name == expected, (path.name, dialect.name)
                    seen.add(expected)
                read = next((db.sqlglot for db in DATABASES if db.dialect == dialect.name), None)
                for sql in generated_sql(vertex):
                    if read and dialect.name not in ("hive", "phoenix") and "${" not in sql:
                        sqlglot.parse(sql, read=read)  # SeaTunnel's queries in the database's own SQL
    assert {"oracle", "sqlserver", "db2", "dameng", "xugu", "saphana", "iris", "kingbase"} <= seen


def test_tables_are_written_one_at_a_time_into_sqlite_only():
    """SQLite takes one writer per database file: a whole-database job writes its tables in turn there."""
    from types import SimpleNamespace

    from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR

    def allows(url: str) -> bool:
        return CONNECTOR.allows_concurrent_tables(SimpleNamespace(config={"url": url}))

    assert not allows("jdbc:sqlite:/tmp/shop.db")
    assert allows("jdbc:postgresql://127.0.0.1:5432/shop") and allows("jdbc:mysql://127.0.0.1:3306/shop")
