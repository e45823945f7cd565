"""``query_params``: the Jdbc source's ``?`` placeholders filled with literals written from the values' types."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.jdbc.params import bind_query, placeholders
from airflow_provider_seatunnel.connectors.sqlclient.databases import dialect_of
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

PG = dialect_of("jdbc:postgresql://h/db")
MYSQL = dialect_of("jdbc:mysql://h/db")
MSSQL = dialect_of("jdbc:sqlserver://h;databaseName=db")
SQLITE = dialect_of("jdbc:sqlite:/tmp/x.db")


def test_values_become_literals_of_their_type():
    sql = "select * from t where at >= ? and at < ? and n = ? and ok = ? and gone is ? and r = ?"
    bound = bind_query(sql, ["2024-05-07T00:00:00+00:00", "2024-05-08T00:00:00+00:00", 5, True, None, 1.5], SQLITE)
    assert bound == ("select * from t where at >= '2024-05-07T00:00:00+00:00' and at < '2024-05-08T00:00:00+00:00' "
                     "and n = 5 and ok = TRUE and gone is NULL and r = 1.5")


@pytest.mark.parametrize("dialect, expected", [
    (SQLITE, "'O''Brien'' or ''1''=''1'"),
    (PG, "E'O''Brien'' or ''1''=''1'"),
    (MYSQL, "'O''Brien'' or ''1''=''1'"),
])
def test_a_quote_in_a_value_stays_inside_its_literal(dialect, expected):
    assert bind_query("select ?", ["O'Brien' or '1'='1"], dialect) == f"select {expected}"


def test_a_backslash_cannot_end_the_literal_where_the_server_reads_escapes():
    value = "x\\' or 1=1 -- "
    assert bind_query("select ?", [value], MYSQL) == "select 'x\\\\'' or 1=1 -- '"
    assert bind_query("select ?", [value], PG) == "select E'x\\\\'' or 1=1 -- '"
    assert bind_query("select ?", [value], SQLITE) == "select 'x\\'' or 1=1 -- '"  # no escapes there


def test_placeholders_inside_quotes_and_comments_are_text_and_double_marks_are_one():
    sql = "select '?', \"a?\", `b?` -- ?\n/* ? */ from t where j ?? 'k' and id = ?"
    assert [sql[a:b] for a, b in placeholders(sql)] == ["??", "?"]
    assert bind_query(sql, [7], SQLITE).endswith("where j ? 'k' and id = 7")
    assert bind_query("select [a?] from t where x = ?", [1], MSSQL) == "select [a?] from t where x = 1"
    assert bind_query("select a[?] from t", [1], PG) == "select a[1] from t"  # an array subscript there
    assert bind_query("select 'it''s ?' where x = ?", ["y"], SQLITE) == "select 'it''s ?' where x = 'y'"
    assert bind_query("select 'a\\' where x = ?", ["y"], PG) == "select 'a\\' where x = E'y'"  # standard strings


@pytest.mark.parametrize("params, message", [
    (["a"], r"1 value\(s\) for 2 '\?' placeholder"),
    (["a", "b", "c"], r"3 value\(s\) for 2"),
    ("a", "must be a list"),
    ([["a"], "b"], "must be a string, a number"),
    ([float("nan"), 1], "not a finite number"),
    (["a\x00", 1], "NUL"),
])
def test_what_cannot_be_bound_is_a_config_error(params, message):
    with pytest.raises(RuntimeConfigError, match=message):
        bind_query("select * from t where a = ? and b = ?", params, PG)


def test_without_params_the_query_is_used_as_written():
    assert bind_query("select '?' , ?", None, PG) == "select '?' , ?"


def test_validate_counts_the_placeholders_and_needs_a_query(write_conf):
    from airflow_provider_seatunnel.config.errors import ConfigError
    from airflow_provider_seatunnel.plan.compiler import compile_job

    block = ('source { Jdbc { url = "jdbc:postgresql://h/db", driver = "org.postgresql.Driver", plugin_output = "s"\n'
             '  %s } }\nsink { Console { plugin_input = "s" } }\n')
    ok = compile_job(write_conf(block % 'query = "select * from t where a = ? and b = \'?\'", query_params = ["x"]'),
                     use_cache=False)
    assert ok.pipelines
    with pytest.raises(ConfigError, match=r"query_params has 2 value\(s\) for 1"):
        compile_job(write_conf(block % 'query = "select * from t where a = ?", query_params = ["x", 1]',
                               "two.conf"), use_cache=False)
    with pytest.raises(ConfigError, match="query_params needs a query"):
        compile_job(write_conf(block % 'table_path = "public.t", query_params = ["x"]', "path.conf"), use_cache=False)
    with pytest.raises(ConfigError, match=r"table_list\[0\]\.query_params"):
        compile_job(write_conf(block % 'table_list = [{ query = "select 1", query_params = [1] }]', "list.conf"),
                    use_cache=False)
