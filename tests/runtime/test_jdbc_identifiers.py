"""Jdbc identifiers: every table, schema, database and column name the connector writes into SQL is
exactly one identifier in every dialect (PostgreSQL, MySQL, generic), however hostile the name;
names are split into parts before quoting; what cannot be a name is refused at compile time; and
end to end on the real PostgreSQL (tests/pg.py), with the PostgreSQL and the generic dialect, a
sink and a source on a table named ``orders; DROP TABLE audit; --`` with a column named ``a"b``
write and read the rows while ``audit`` stays."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
import sqlglot
from sqlglot import exp

from airflow_provider_seatunnel.connectors.jdbc.commit import COMMITS_TABLE
from airflow_provider_seatunnel.connectors.jdbc.source import (
    SourceTable,
    _base_query,
    _predicates,
    read_table,
    source_tables,
)
from airflow_provider_seatunnel.connectors.jdbc.statements import move_statements
from airflow_provider_seatunnel.connectors.jdbc.target import sink_target
from airflow_provider_seatunnel.connectors.sqlclient.connection import connection_of
from airflow_provider_seatunnel.connectors.sqlclient.databases import dialect_of
from airflow_provider_seatunnel.connectors.sqlclient.dialects import (
    NameProblem,
    split_name,
    unquote,
    url_database,
    url_with_database,
)
from airflow_provider_seatunnel.spi.rows import ROW_KIND

HOSTILE = ['a"b', "x; DROP TABLE audit; --", "x (id int); DROP TABLE audit; --", "c`d", "my table", "MixedCase"]
#: dialect -> (a URL that selects it, sqlglot's reader for its SQL)
DIALECTS = {
    "postgresql": ("jdbc:postgresql://db:5432/shop", "postgres"),
    "mysql": ("jdbc:mysql://db:3306/shop", "mysql"),
    "generic": ("jdbc:h2:mem:shop", None),
}


def hocon_quoted(name: str) -> str:
    """``name`` as one quoted part of a dotted config name (``"`` doubled)."""
    return '"' + name.replace('"', '""') + '"'


def one_statement(sql: str, read: str | None) -> exp.Expression:
    """The single statement ``sql`` parses into (sqlglot, the dialect's reader)."""
    statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    assert len(statements) == 1, f"{len(statements)} statements in: {sql}"
    return statements[0]


def tables(tree: exp.Expression) -> set[tuple[str, str, str]]:
    return {(t.catalog, t.db, t.name) for t in tree.find_all(exp.Table)}


def identifiers(tree: exp.Expression) -> set[str]:
    """The names of the statement's identifiers; every one that is not a plain name is quoted."""
    found = list(tree.find_all(exp.Identifier))
    assert all(i.quoted for i in found if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", i.name)), tree.sql()
    return {i.name for i in found}


def target_for(dialect: str, table: str, **options):
    url, _ = DIALECTS[dialect]
    config = {"url": url, "driver": "x", "generate_sink_sql": True, "table": table, **options}
    return config, sink_target(config)


# ------------------------------------------------------------------------------------------------
# the SQL each dialect builds
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("keyed", ["none", "upsert", "insert-update"])
def test_every_statement_of_the_sink_is_one_statement_naming_the_hostile_table_and_columns(dialect, name, keyed):
    _, read = DIALECTS[dialect]
    schema = "sch; DROP TABLE audit; --" if dialect != "mysql" else name  # MySQL: database.table
    options = {"primary_keys": [name]} if keyed != "none" else {}
    if keyed == "insert-update":
        options["enable_upsert"] = False
    config, target = target_for(dialect, f"{schema}.{name}", **options)  # as a template or -i would give them
    entry = {"columns": [name, f"{name} 2"], "staging": "st_stage_x"}
    target_table, staging, commits = ("", schema, name), ("", schema, "st_stage_x"), ("", schema, COMMITS_TABLE)
    statements = [*[(sql, {target_table, staging}) for sql in move_statements(target, entry, config)],
                  (f"DROP TABLE {target.ident}", {target_table}), (f"TRUNCATE TABLE {target.ident}", {target_table}),
                  (f"SELECT 1 FROM {target.qualified(COMMITS_TABLE)}", {commits}),
                  (f"CREATE TABLE {target.ident} ({target.dialect.column(name)} INTEGER)", {target_table})]
    for sql, expected in statements:
        tree = one_statement(sql, read)
        assert tables(tree) == expected, sql
        names = identifiers(tree)
        if sql.startswith(("INSERT", "CREATE")):
            assert name in names, sql


@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize("name", HOSTILE)
def test_the_source_reads_a_hostile_table_path_and_splits_on_a_hostile_column(dialect, name):
    url, read = DIALECTS[dialect]
    path = f"s; DROP TABLE audit; --.{name}"
    spec = SourceTable("t", None, path, None, None, None, None)
    base = _base_query(spec, {}, dialect_of(url))
    assert tables(one_statement(base, read)) == {("", "s; DROP TABLE audit; --", name)}
    for kind in ("numeric", "string"):
        for where in _predicates(dialect_of(url), name, kind, 3, Decimal(1), Decimal(9), True, True):
            tree = one_statement(f"SELECT * FROM ({base}) t WHERE {where}", read)
            assert name in identifiers(tree)


def test_postgresql_and_mysql_quote_every_name_as_written_and_the_generic_dialect_leaves_only_plain_names_bare():
    """Plain names stay unquoted in the generic dialect, as SeaTunnel writes them, so that the
    database folds them (``orders`` is ``ORDERS`` on Oracle); everything else is quoted exactly."""
    assert target_for("postgresql", "Sales.MixedCase")[1].ident == '"Sales"."MixedCase"'
    assert target_for("mysql", "Sales.MixedCase")[1].ident == "`Sales`.`MixedCase`"
    assert target_for("generic", "Sales.MixedCase")[1].ident == "Sales.MixedCase"
    assert target_for("generic", 'dbo."ORDER"')[1].ident == 'dbo."ORDER"'  # quoted by the user: exact
    assert target_for("generic", "dbo.Bestellungen_ä")[1].ident == 'dbo."Bestellungen_ä"'  # ASCII only bare
    assert target_for("generic", "cat.dbo.orders")[1].qualified(COMMITS_TABLE) == "cat.dbo.seatunnel_commits"
    # the injection of the issue: a second statement before, one table name now
    ident = target_for("generic", "dbo.orders; DROP TABLE dbo.audit; --")[1].ident
    assert ident == 'dbo."orders; DROP TABLE dbo"."audit; --"'
    assert len(sqlglot.parse(f"DELETE FROM {ident}")) == 1
    assert dialect_of("jdbc:h2:mem:x").column('a"b') == '"a""b"'
    assert dialect_of("jdbc:mysql://h/d").column("c`d") == "`c``d`"


def test_a_name_splits_on_dots_outside_quotes_and_a_quoted_part_is_one_exact_name():
    assert split_name("db.sch.orders") == ["db", "sch", "orders"]
    assert split_name(' sch . "my.table" ') == ["sch", '"my.table"']
    assert split_name('`my``tick`.t') == ['"my`tick"', "t"]
    assert split_name('"say ""hi"""') == ['"say ""hi"""'] and unquote('"say ""hi"""') == 'say "hi"'
    assert split_name('a"b.c') == ['a"b', "c"]  # a quote inside an unquoted part is part of the name
    for bad, why in [("a..b", "part 2 is empty"), (".a", "part 1 is empty"), ("a.", "part 2 is empty"),
                     ('""', "part 1 is empty"), ("a\x00b", "NUL"), ('"abc', "not closed"),
                     ('"a"b.c', "text follows"), ("a.b.c.d", "at most 3")]:
        with pytest.raises(NameProblem, match=why):
            split_name(bad)
    target = target_for("postgresql", 'sch."my.table"')[1]
    assert target.ident == '"sch"."my.table"' and target.label == 'sch."my.table"'


def test_a_postgresql_database_name_cannot_change_the_url():
    url = "jdbc:postgresql://db:5432/shop?ssl=false"
    hostile = "x?socketFactory=evil&a=/b"
    switched = url_with_database(url, hostile)
    assert switched == "jdbc:postgresql://db:5432/x%3FsocketFactory%3Devil%26a%3D%2Fb?ssl=false"
    assert url_database(switched) == hostile
    target = target_for("postgresql", f'{hocon_quoted(hostile)}.public.orders')[1]
    assert target.conn.url == url_with_database(DIALECTS["postgresql"][0], hostile) and target.base_conn is not None


def test_the_dialect_option_overrides_the_url():
    pg = "jdbc:postgresql://db:5432/shop"
    assert connection_of({"url": pg, "driver": "x", "dialect": "Generic"}).dialect.name == "generic"
    assert connection_of({"url": "jdbc:h2:mem:x", "driver": "x", "dialect": "Postgres"}).dialect.name == "postgresql"
    assert connection_of({"url": pg, "driver": "x", "dialect": "nosuchdb"}).dialect.name == "postgresql"  # unknown: URL
    assert connection_of({"url": pg, "driver": "x"}).dialect.name == "postgresql"


# ------------------------------------------------------------------------------------------------
# compile time
# ------------------------------------------------------------------------------------------------

CONN = 'url = "jdbc:postgresql://db:5432/shop", driver = "org.postgresql.Driver"'
FAKE = 'FakeSource { schema = { fields { id = int } } }'


@pytest.mark.parametrize("block, message", [
    (f'source {{ Jdbc {{ {CONN}, table_path = "public..orders" }} }}', "table_path 'public..orders' is not a name"),
    (f'source {{ Jdbc {{ {CONN}, table_list = [{{ table_path = "\\"open" }}] }} }}', "is not closed"),
    (f'sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "a\\u0000b" }} }}', "NUL character"),
    (f'sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "w.x.y.z" }} }}', "at most 3"),
    (f'sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "t", database = "\\"\\"" }} }}', "is empty"),
])
def test_what_cannot_be_a_name_is_refused_at_compile_time_naming_the_plugin_and_key(config_error, block, message):
    source = f"source {{ {FAKE} }}\n" if block.startswith("sink") else ""
    sink = "sink { Console { } }\n" if block.startswith("source") else ""
    err = config_error(source + block + "\n" + sink)
    problem = next(p for p in err.problems if message in p.message)
    assert problem.plugin and "Jdbc" in problem.plugin
    assert problem.key in ("table_path", "table_list[0].table_path", "table", "database")


def test_hostile_names_a_database_can_hold_plan(plan_of):
    table = 'dbo.orders; DROP TABLE dbo.audit; --'
    plan = plan_of(f'source {{ Jdbc {{ {CONN}, table_path = "x; DROP TABLE audit; --" }} }}\n'
                   f'sink {{ Jdbc {{ {CONN}, generate_sink_sql = true, table = "{table}", dialect = "generic" }} }}\n')
    assert plan.pipelines and not plan.warnings


# ------------------------------------------------------------------------------------------------
# end to end on PostgreSQL
# ------------------------------------------------------------------------------------------------

TABLE = "orders; DROP TABLE audit; --"
COLUMN = 'a"b'


@pytest.fixture(scope="module")
def db(db):
    db.sql("CREATE TABLE audit (id int); INSERT INTO audit VALUES (1);"
           'CREATE SCHEMA "pg schema; DROP TABLE audit; --"; CREATE SCHEMA "generic schema; DROP TABLE audit; --"')
    return db


def connection(db, dialect: str) -> str:
    return (f'url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}", password = "{db.password}", '
            f'dialect = "{dialect}"')


@pytest.mark.parametrize("dialect, schema", [("postgresql", "pg schema; DROP TABLE audit; --"),
                                             ("generic", "generic schema; DROP TABLE audit; --")])
def test_a_sink_and_a_source_on_a_hostile_table_and_column_write_and_read_and_audit_stays(
        run_job, spark, db, dialect, schema):
    assert connection_of({"url": db.url, "driver": "org.postgresql.Driver", "dialect": dialect}).dialect.name == dialect
    path = f"{schema}.{TABLE}"
    rows = [[1, "one"], [2, 'two "quoted"'], [3, None]]
    fake = ('FakeSource { plugin_output = "fake", schema = { fields { id = int, "a\\"b" = string } }, rows = ['
            + ", ".join(f"{{ kind = INSERT, fields = {json.dumps(r)} }}" for r in rows) + "] }")
    sink = f'Jdbc {{ {connection(db, dialect)}, generate_sink_sql = true, table = "{path}", primary_keys = ["id"] }}'
    job = f'env {{ job.mode = "BATCH" }}\nsource {{ {fake} }}\nsink {{ {sink} }}\n'
    (metrics,) = run_job(job, run_id=f"hostile-{dialect}-1")
    assert metrics["write_count"] == 3
    quoted = f'"{schema}"."{TABLE}"'
    assert db.sql(f'SELECT id, "a""b" FROM {quoted} ORDER BY id') == [["1", "one"], ["2", 'two "quoted"'],
                                                                       ["3", None]]
    # again, truncating first: DROP_DATA on the hostile table
    run_job(job.replace("primary_keys", 'data_save_mode = "DROP_DATA", primary_keys'), run_id=f"hostile-{dialect}-2")
    assert db.sql(f"SELECT count(*) FROM {quoted}") == [["3"]]

    source = {"url": db.url, "driver": "org.postgresql.Driver", "user": db.user, "password": db.password,
              "dialect": dialect, "table_path": path, "split.size": 1}
    conn = connection_of(source)
    (spec,) = source_tables(source, "src", conn)
    df, splits = read_table(spark, conn, spec, source)
    assert splits == 3  # the table's primary key was found by its hostile name: one split per row
    assert df.columns == ["id", COLUMN, ROW_KIND]
    assert sorted(tuple(r) for r in df.select("id", f"`{COLUMN}`").collect()) == [
        (1, "one"), (2, 'two "quoted"'), (3, None)]
    assert db.sql("SELECT count(*) FROM audit") == [["1"]]
    staged = db.sql(f"SELECT count(*) FROM pg_tables WHERE schemaname = '{schema}' AND tablename LIKE 'st_stage_%'")
    assert staged == [["0"]]
