"""The Jdbc connector's driver-side calls through a Python driver (what a Spark Connect session
uses, connectors/sqlclient/pyconnection.py) answer as the JDBC driver in Spark's JVM does: the same
column types, keys, indexes, tables, values as text, transactions and error classes, each asked of
both against the same real PostgreSQL and MariaDB servers."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.jdbc.catalog import catalog_keys, primary_key
from airflow_provider_seatunnel.connectors.jdbc.source import path_parts
from airflow_provider_seatunnel.connectors.jdbc.target import target_of
from airflow_provider_seatunnel.connectors.sqlclient import connection as jdbc
from airflow_provider_seatunnel.connectors.sqlclient.errors import db_error, state_of, statement_errors
from airflow_provider_seatunnel.connectors.sqlclient.pyconnection import (
    PyConnection,
    open_connection,
    parse_url,
    to_python_placeholders,
)
from airflow_provider_seatunnel.spi.errors import DataError, PipelineError, RuntimeConfigError
from tests import mysql, pg

PG_SETUP = """
    CREATE TABLE typed (id int PRIMARY KEY, name varchar(10), code char(3), amount numeric(10,2), big bigint,
                        small smallint, ratio double precision, real_v real, flag boolean, day date,
                        at timestamp, at_tz timestamptz, clock time, raw bytea, doc text, tags text[]);
    INSERT INTO typed VALUES (1, 'ann', 'abc', 1.50, 10000000000, 3, 0.5, 1.25, true, '2024-01-02',
                              '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02', '10:11:12.5', '\\x0102',
                              'long', '{a,b}');
    CREATE TABLE keyed (a int, b text, c int, d int, PRIMARY KEY (b, a));
    CREATE UNIQUE INDEX keyed_c ON keyed (c DESC);
    CREATE INDEX keyed_cd ON keyed (d, c);
    CREATE TABLE "a_b" (v int);
    CREATE TABLE axb (v int PRIMARY KEY);
    CREATE SCHEMA other;
    CREATE TABLE other.keyed (z int PRIMARY KEY);
"""

MY_SETUP = """
    CREATE TABLE typed (id INT PRIMARY KEY, name VARCHAR(10), code CHAR(3), amount DECIMAL(10,2), big BIGINT,
                        small SMALLINT, tiny TINYINT, ratio DOUBLE, flag BOOLEAN, day DATE, at DATETIME(6),
                        clock TIME(6), raw VARBINARY(8), doc JSON, txt LONGTEXT, blob_v BLOB, yr YEAR);
    INSERT INTO typed VALUES (1, 'ann', 'abc', 1.50, 10000000000, 3, -4, 0.5, TRUE, '2024-01-02',
                              '2024-01-02 03:04:05.123456', '10:11:12.5', X'0102', '{"a": 1}', 'long', X'03', 2024);
    CREATE TABLE keyed (a INT, b VARCHAR(10), c INT, d INT, PRIMARY KEY (b, a), UNIQUE KEY keyed_c (c DESC),
                        KEY keyed_cd (d, c));
    CREATE TABLE a_b (v INT);
    CREATE TABLE axb (v INT PRIMARY KEY);
    CREATE DATABASE other;
    CREATE TABLE other.keyed (z INT PRIMARY KEY);
"""


@pytest.fixture(scope="module")
def servers():
    with pg.running(PG_SETUP) as p, mysql.running(MY_SETUP) as m:
        yield {"postgresql": p, "mysql": m}


def _conn(server, family: str, **changes) -> jdbc.Conn:
    driver = "org.postgresql.Driver" if family == "postgresql" else mysql_driver()
    url = server.url if family == "postgresql" else server.url.replace("jdbc:mysql:", _my_scheme())
    conn = jdbc.Conn(url=url, driver=driver, user=server.user, password=server.password)
    for key, value in changes.items():
        setattr(conn, key, value)
    return conn


def mysql_driver() -> str:
    return "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver"


def _my_scheme() -> str:
    return "jdbc:mysql:" if mysql.connector_j() else "jdbc:mariadb:"


@pytest.fixture(params=["postgresql", "mysql"])
def both(request, servers, spark):
    """(family, server, conn, JVM connection, Python connection) of one database."""
    family = request.param
    conn = _conn(servers[family], family)
    jdbc.ensure_driver(spark, conn)
    with jdbc.connect(spark, conn) as java:
        python = open_connection(conn.url, conn.connection_properties())
        try:
            yield family, servers[family], conn, java, python
        finally:
            python.close()


def test_column_types_and_scales_are_the_jdbc_drivers(both):
    _, _, _, java, python = both
    assert isinstance(python, PyConnection)
    expected = jdbc.columns_of(java, "SELECT * FROM typed")
    assert jdbc.columns_of(python, "SELECT * FROM typed") == expected
    assert len(expected) >= 15


def test_values_read_as_text_are_the_jdbc_drivers(both):
    family, _, _, java, python = both
    numbers = "SELECT id, amount, big, small, ratio, day, name FROM typed"
    assert jdbc.query(python, numbers) == jdbc.query(java, numbers)
    assert jdbc.query(python, "SELECT COUNT(*), MIN(id), MAX(big) FROM typed WHERE id > ?", (0,)) == \
        jdbc.query(java, "SELECT COUNT(*), MIN(id), MAX(big) FROM typed WHERE id > ?", (0,))
    assert jdbc.query(python, "SELECT name FROM typed WHERE name LIKE 'a%' AND id = ?", (1,)) == [["ann"]]
    if family == "mysql":
        assert jdbc.query(python, "SELECT GET_LOCK(?, ?)", ("st_test", 1)) == \
            jdbc.query(java, "SELECT GET_LOCK(?, ?)", ("st_test_java", 1)) == [["1"]]


def test_keys_indexes_and_catalog_are_the_jdbc_drivers(both):
    _, _, conn, java, python = both
    for path in ("keyed", "other.keyed", "axb", "a_b", "typed"):
        parts = path_parts(path)
        assert catalog_keys(python, parts, conn.dialect) == catalog_keys(java, parts, conn.dialect), path
        assert primary_key(python, parts, conn.dialect) == primary_key(java, parts, conn.dialect), path
        # a job's memo (one listing per schema where the driver gives one) changes nothing
        assert catalog_keys(python, parts, conn.dialect, {}) == catalog_keys(java, parts, conn.dialect, {}), path
    keys = catalog_keys(python, ["keyed"], conn.dialect)
    assert keys.primary_key[1] == ("b", "a")
    assert {c.name: c.columns for c in keys.constraint_keys} == {
        "keyed_c": (("c", "DESC"),), "keyed_cd": (("d", "ASC"), ("c", "ASC"))}
    assert python.getCatalog() == java.getCatalog()
    assert python.getSchema() == java.getSchema()


def test_table_lookups_escape_like_patterns_as_the_jdbc_drivers(both):
    _, server, conn, java, python = both
    from airflow_provider_seatunnel.connectors.jdbc.target import table_exists

    for table in ("a_b", "axb", "keyed"):
        database = "seatunnel_test" if conn.dialect.family == "mysql" else None
        options = {"url": conn.url, "driver": conn.driver, "user": server.user, "password": server.password,
                   "generate_sink_sql": True,
                   "database": database or "seatunnel_test", "table": table if database else f"public.{table}"}
        _, target = target_of(options, table, ["v"])
        for name in ("a_b", "axb", "a%b", "aXb", "keyed", "missing"):
            assert table_exists(python, target, name) == table_exists(java, target, name), (table, name)
    assert table_exists(python, target, "a_b") and not table_exists(python, target, "a%b")


def test_transactions_savepoints_and_autocommit(both):
    _, _, conn, _, python = both
    jdbc.execute(python, "CREATE TABLE tx_t (v int PRIMARY KEY)")
    try:
        python.setAutoCommit(False)
        jdbc.execute(python, "INSERT INTO tx_t VALUES (?)", (1,))
        point = python.setSavepoint()
        jdbc.execute(python, "INSERT INTO tx_t VALUES (?)", (2,))
        python.rollback(point)
        jdbc.execute(python, "INSERT INTO tx_t VALUES (?)", (3,))
        other = open_connection(conn.url, conn.connection_properties())
        assert jdbc.query(other, "SELECT COUNT(*) FROM tx_t") == [["0"]]  # not committed yet
        python.setAutoCommit(True)  # commits, as JDBC's does
        assert jdbc.query(other, "SELECT v FROM tx_t ORDER BY v") == [["1"], ["3"]]
        python.setAutoCommit(False)
        assert jdbc.execute(python, "UPDATE tx_t SET v = v + 10 WHERE v > ?", (0,)) == 2
        python.rollback()
        python.setAutoCommit(True)
        assert jdbc.query(other, "SELECT v FROM tx_t ORDER BY v") == [["1"], ["3"]]
        other.close()
    finally:
        jdbc.execute(python, "DROP TABLE tx_t")


def test_failures_carry_the_jdbc_drivers_sql_state_class(both):
    _, _, _, java, python = both
    for connection in (java, python):
        with pytest.raises(statement_errors()) as duplicate:
            jdbc.execute(connection, "INSERT INTO axb VALUES (?)", (7,))
            jdbc.execute(connection, "INSERT INTO axb VALUES (?)", (7,))
        assert state_of(duplicate.value).startswith("23")
        assert isinstance(db_error(duplicate.value, "writing"), DataError)
        jdbc.execute(connection, "DELETE FROM axb")
        with pytest.raises(statement_errors()) as missing:
            jdbc.query(connection, "SELECT * FROM no_such_table")
        assert state_of(missing.value).startswith("42")
        assert isinstance(db_error(missing.value, "reading"), RuntimeConfigError)


def test_a_refused_password_and_an_unreachable_server_are_classified(both):
    from airflow_provider_seatunnel.connectors.sqlclient.pyconnection import as_statement_error

    _, server, conn, _, _ = both
    wrong = jdbc.Conn(url=conn.url, driver=conn.driver, user=server.user, password="not-the-password-123")
    try:
        open_connection(wrong.url, wrong.connection_properties()).close()
        raise AssertionError("the wrong password was accepted")
    except Exception as e:
        error = db_error(e, "connecting", wrong)
    assert isinstance(error, RuntimeConfigError), error
    assert "not-the-password-123" not in str(error)
    from tests.servers import free_port

    unreachable = jdbc.Conn(url=f"{conn.url.split('//')[0]}//127.0.0.1:{free_port()}/x", driver=conn.driver,
                            user="u", password="p", timeout=2)
    with pytest.raises(Exception) as caught:
        open_connection(unreachable.url, unreachable.connection_properties())
    error = db_error(caught.value, "connecting", unreachable)
    assert type(error) is PipelineError  # transient: a retry may reach it
    assert as_statement_error(ValueError("x")).sql_state is None


def test_urls_and_placeholders():
    assert parse_url("jdbc:postgresql://db.example:6543/sales?currentSchema=s&ssl=true") == \
        ("postgresql", "db.example", 6543, "sales", {"currentSchema": "s", "ssl": "true"})
    assert parse_url("jdbc:mariadb://[::1]/shop") == ("mysql", "::1", 3306, "shop", {})
    assert parse_url("jdbc:mysql://h:1/d;user=x") [4] == {"user": "x"}
    with pytest.raises(RuntimeConfigError, match="one host"):
        parse_url("jdbc:postgresql://a:1,b:2/db")
    with pytest.raises(RuntimeConfigError, match="PostgreSQL, MySQL and MariaDB"):
        parse_url("jdbc:sqlite:/tmp/x.db")
    assert to_python_placeholders("SELECT '?', \"a?\", `b%` FROM t WHERE a LIKE 'x%' AND b = ? AND c = ?") == \
        "SELECT '?', \"a?\", `b%%` FROM t WHERE a LIKE 'x%%' AND b = %s AND c = %s"
