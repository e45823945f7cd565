"""A Jdbc ``table_list`` copied into a Jdbc sink reads its tables of one row type together
(connectors/jdbc/together.py, runtime/together.py): one UNION ALL query per group, its tasks the
splits of a large table and batches of small ones, staged by one write. Against real servers
(PostgreSQL, tests/pg.py; MariaDB, tests/mysql.py): every target equals its source (count and an
ordered checksum), per-table counts are each table's own, a table of another row type is read on
its own, and a restore after a failed commit writes every table exactly once."""

from __future__ import annotations

import logging

import pytest

from airflow_provider_seatunnel.connectors.jdbc import commit as jdbc_commit
from airflow_provider_seatunnel.spi.errors import PipelineError
from tests import mysql, pg

#: (table, rows): one that splits (split.size 100), small ones, an empty one; all of one row type
SAME = [("big", 450), ("s_1", 7), ("s_2", 30), ("s_3", 1), ("s_4", 99), ("empty", 0)]
#: a table of another row type (read on its own)
OTHER = ("odd", 12)


def _setup(family: str) -> str:
    if family == "pg":
        rows = "SELECT g, 'n-' || g || '-{t}', g * 1.5 FROM generate_series(1, {n}) g"
        odd = f"CREATE TABLE odd (id int PRIMARY KEY, at date); INSERT INTO odd SELECT g, DATE '2024-01-01' + g " \
              f"FROM generate_series(1, {OTHER[1]}) g"
    else:
        rows = "SELECT seq, CONCAT('n-', seq, '-{t}'), seq * 1.5 FROM seq_1_to_{n}"
        odd = f"CREATE TABLE odd (id int PRIMARY KEY, at date); INSERT INTO odd SELECT seq, DATE '2024-01-01' " \
              f"+ INTERVAL seq DAY FROM seq_1_to_{OTHER[1]}"
    out = []
    for t, n in SAME:
        out.append(f"CREATE TABLE {t} (id int PRIMARY KEY, name varchar(40), amount decimal(10,2))")
        if n:
            out.append(f"INSERT INTO {t} " + rows.format(t=t, n=n))
    return "; ".join([*out, odd])


@pytest.fixture(scope="module")
def pgdb():
    with pg.running(_setup("pg")) as server:
        yield server


@pytest.fixture(scope="module")
def my():
    with mysql.running(_setup("my")) as server:
        yield server


def _job(url: str, driver: str, user: str, password: str, target: str, prefix: str, split_size: int = 100,
         names: list[str] | None = None, keys: str = '"${primary_key}"') -> str:
    conn = f'url = "{url}", driver = "{driver}", user = "{user}", password = "{password}"'
    tables = ", ".join(f'{{ table_path = "{prefix}{t}" }}' for t in names or [t for t, _ in [*SAME, OTHER]])
    return f"""
        env {{ job.mode = "BATCH", parallelism = 2, multi_table.concurrent_tables = 1 }}
        source {{ Jdbc {{ {conn}, plugin_output = "db", split.size = {split_size}, table_list = [{tables}] }} }}
        sink {{ Jdbc {{ {conn}, plugin_input = "db", generate_sink_sql = true, table = "{target}",
                       primary_keys = [{keys}], schema_save_mode = "CREATE_SCHEMA_WHEN_NOT_EXIST" }} }}
    """


def _checksums(sql, tables: list[str], schema: str, pg_family: bool) -> dict[str, tuple[str, str]]:
    """Each table's count and ordered checksum (md5 of its rows as text, in key order)."""
    out = {}
    for t in tables:
        if pg_family:
            row = sql(f"SELECT count(*), md5(coalesce(string_agg(id || '|' || t.*::text, ',' ORDER BY id), '')) "
                      f"FROM {schema}.{t} t")
        else:
            row = sql(f"SELECT count(*), md5(coalesce(group_concat(CONCAT_WS('|', id, name, amount) ORDER BY id), ''))"
                      f" FROM {schema}.{t}")
        out[t] = tuple(row[0])
    return out


def _per_table(metrics: list[dict], key: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for m in metrics:
        for tables in m[key].values():
            for table, rows in tables.items():
                found[table.rsplit(".", 1)[-1]] = rows
    return found


EXPECTED = {t: n for t, n in [*SAME, OTHER]}
NAMES = [t for t, _ in SAME]


def test_postgres_tables_read_together_land_equal_with_their_own_counts(run_job, pgdb, caplog):
    caplog.set_level(logging.INFO, logger="seatunnel")
    job = _job(pgdb.url, "org.postgresql.Driver", pgdb.user, pgdb.password, "copy.${table_name}", "public.")
    metrics = run_job(job, run_id="together-pg")
    assert "reading 6 tables of one row type" in caplog.text and "staged 6 tables with one write (read together)" in caplog.text
    assert "with one query in 7 task(s)" in caplog.text  # big's 5 splits, the 5 others in 2 (as many as readers)
    assert _per_table(metrics, "per_table_read") == EXPECTED
    assert _per_table(metrics, "per_table") == EXPECTED
    tables = [*NAMES, OTHER[0]]
    assert _checksums(pgdb.sql, NAMES, "copy", True) == _checksums(pgdb.sql, NAMES, "public", True)
    assert pgdb.sql("SELECT count(*), min(at)::text FROM copy.odd") == [["12", "2024-01-02"]]
    # the created targets keep the source's types, as a table read on its own does (the union keeps them)
    assert pgdb.sql("SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale "
                    "FROM information_schema.columns WHERE table_schema = 'copy' AND table_name = 's_2' "
                    "ORDER BY ordinal_position") == [["id", "integer", None, "32", "0"],
                                                    ["name", "character varying", "40", None, None],
                                                    ["amount", "numeric", None, "10", "2"]]
    assert pgdb.sql("SELECT count(*) FROM copy.seatunnel_commits WHERE run_id = 'together-pg'") == [[str(len(tables))]]
    assert pgdb.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]


def test_postgres_tables_read_whole_by_their_primary_key_are_staged_unmerged_and_counted_in_the_staging(
        run_job, pgdb, caplog):
    caplog.set_level(logging.INFO, logger="seatunnel")
    job = _job(pgdb.url, "org.postgresql.Driver", pgdb.user, pgdb.password, "whole.${table_name}", "public.",
               split_size=100_000)  # no table splits: each read by one statement, distinct by its key
    metrics = run_job(job, run_id="together-whole")
    assert "staged 6 tables with one write (read together; every row staged, counted in the staging)" in caplog.text
    assert _per_table(metrics, "per_table_read") == EXPECTED
    assert _per_table(metrics, "per_table") == EXPECTED
    assert _checksums(pgdb.sql, NAMES, "whole", True) == _checksums(pgdb.sql, NAMES, "public", True)


def test_postgres_rows_sharing_the_sinks_key_are_merged_and_counted_as_read(run_job, pgdb, caplog):
    caplog.set_level(logging.INFO, logger="seatunnel")
    # the source's key (id, v) is wider than the sink's (id): rows of one id are merged to the last one
    pgdb.sql("CREATE SCHEMA dup; " + "; ".join(
        f"CREATE TABLE dup.d_{i} (id int, v int, name text, PRIMARY KEY (id, v)); "
        f"INSERT INTO dup.d_{i} SELECT g % 3, g, 'n' || g FROM generate_series(1, 10) g" for i in (1, 2)))
    job = _job(pgdb.url, "org.postgresql.Driver", pgdb.user, pgdb.password, "merged.${table_name}", "dup.",
               split_size=100_000, names=["d_1", "d_2"], keys='"id"')
    metrics = run_job(job, run_id="together-merged")
    assert "staged 2 tables with one write (read together)" in caplog.text
    assert _per_table(metrics, "per_table_read") == {"d_1": 10, "d_2": 10}  # the rows the source gave the sink
    for t in ("d_1", "d_2"):
        assert pgdb.sql(f"SELECT count(*), count(DISTINCT id) FROM merged.{t}") == [["3", "3"]]


def test_postgres_restore_after_a_failed_commit_writes_every_table_once(run_job, pgdb, monkeypatch):
    job = _job(pgdb.url, "org.postgresql.Driver", pgdb.user, pgdb.password, "again.${table_name}", "public.")
    real = jdbc_commit.publish_tables
    calls = []

    def publish_half(ctx, vertex, staged):  # the first attempt commits the first three tables, then dies
        calls.append(1)
        if len(calls) == 1:
            real(ctx, vertex, staged[:3])
            raise RuntimeError("killed during the commit")
        return real(ctx, vertex, staged)

    from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC

    monkeypatch.setattr(JDBC, "publish_all", publish_half)
    with pytest.raises(PipelineError):
        run_job(job, run_id="together-restore")
    metrics = run_job(job, run_id="together-restore")  # the restore: three committed, four to write
    assert _per_table(metrics, "per_table_read") == EXPECTED  # committed ones pass their rows through
    assert _checksums(pgdb.sql, NAMES, "again", True) == _checksums(pgdb.sql, NAMES, "public", True)
    assert pgdb.sql("SELECT count(*) FROM again.seatunnel_commits WHERE run_id = 'together-restore'") == [["7"]]
    assert pgdb.sql("SELECT count(*) FROM again.odd") == [["12"]]


def test_mariadb_tables_read_together_land_equal_with_their_own_counts(run_job, my, caplog):
    caplog.set_level(logging.INFO, logger="seatunnel")
    driver = "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver"
    job = _job(my.url, driver, my.user, my.password, "c_${table_name}", "")
    metrics = run_job(job, run_id="together-my")
    assert "reading 6 tables of one row type" in caplog.text and "staged 6 tables with one write (read together)" in caplog.text
    assert _per_table(metrics, "per_table_read") == EXPECTED
    assert _per_table(metrics, "per_table") == EXPECTED
    copies = _checksums(my.sql, [f"c_{t}" for t in NAMES], my.database, False)
    assert list(copies.values()) == list(_checksums(my.sql, NAMES, my.database, False).values())
    assert my.sql("SELECT count(*) FROM c_odd") == [["12"]]


#: tables whose shapes differ from SAME's in one detail each (a length, a sign or scale, a charset, a string key)
SHAPES = {
    "pg": ["CREATE TABLE w_1 (id int PRIMARY KEY, name varchar(41), amount decimal(10,2))",
           "CREATE TABLE u_1 (id bigint PRIMARY KEY, name varchar(40), amount decimal(10,2))",
           "CREATE TABLE c_1 (id int PRIMARY KEY, name varchar(40), amount decimal(10,3))",
           "CREATE TABLE k_1 (code varchar(10) PRIMARY KEY, n int); INSERT INTO k_1 VALUES ('a', 1), ('b', 2)"],
    "my": ["CREATE TABLE w_1 (id int PRIMARY KEY, name varchar(41), amount decimal(10,2))",
           "CREATE TABLE u_1 (id int unsigned PRIMARY KEY, name varchar(40), amount decimal(10,2))",
           "CREATE TABLE c_1 (id int PRIMARY KEY, name varchar(40) CHARACTER SET latin1, amount decimal(10,2))",
           "CREATE TABLE k_1 (code varchar(10) PRIMARY KEY, n int); INSERT INTO k_1 VALUES ('a', 1), ('b', 2)",
           # SAME's columns, one of them INVISIBLE (SELECT * leaves it out): a signature of its own
           "CREATE TABLE v_1 (id int PRIMARY KEY, name varchar(40), amount decimal(10,2) INVISIBLE)"],
}


@pytest.mark.parametrize("family", ["pg", "my"])
def test_many_tables_learnt_in_few_queries_equal_each_table_asked_alone(spark, request, family, monkeypatch):
    """Columns asked once per signature, split bounds in one query per key type, keys one listing per
    schema: each table's columns, splits and catalog keys as its own statements give them."""
    from airflow_provider_seatunnel.connectors.jdbc import together
    from airflow_provider_seatunnel.connectors.jdbc.catalog import catalog_keys
    from airflow_provider_seatunnel.connectors.jdbc.source import _base_query, _splits, path_parts, source_tables
    from airflow_provider_seatunnel.connectors.sqlclient.connection import Conn, connect, ensure_driver
    from airflow_provider_seatunnel.connectors.sqlclient.pool import close_pools

    server = request.getfixturevalue("pgdb" if family == "pg" else "my")
    server.sql("; ".join(SHAPES[family]))
    driver = "org.postgresql.Driver" if family == "pg" else (
        "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver")
    conn = Conn(server.url, driver, server.user, server.password)
    ensure_driver(spark, conn)
    names = [*NAMES, OTHER[0], "w_1", "u_1", "c_1", "k_1", *(["v_1"] if family == "my" else [])]
    config = {"url": server.url, "driver": driver, "split.size": 100,
              "table_list": [{"table_path": ("public." if family == "pg" else "") + t} for t in names]}
    specs = source_tables(config, "db", conn)
    described, bounds = [], []
    real_describe, real_query = together._describe, together.query
    monkeypatch.setattr(together, "_describe", lambda *a: described.append(1) or real_describe(*a))
    monkeypatch.setattr(together, "query", lambda *a: bounds.append(1) or real_query(*a))
    try:
        _, learnt = together._learn(spark, conn, specs, config)
        with connect(spark, conn) as connection:
            for spec, table in zip(specs, learnt, strict=True):
                base = _base_query(spec, config, conn.dialect)
                alone = real_describe(connection, base)
                assert table.described == alone, spec.table_path
                columns = [(n, c, s) for n, c, s, _t, _p in alone]
                assert table.splits == _splits(connection, conn, spec, base, config, columns), spec.table_path
                assert table.keys == catalog_keys(connection, path_parts(str(spec.table_path)), conn.dialect)
    finally:
        close_pools(spark)
    assert len(described) == len(names) - len(NAMES) + 1  # SAME's shape, odd, w_1, u_1, c_1, k_1 (, v_1): one each
    assert len(bounds) == 3  # one query per key type: the int keys, u_1's wider one, k_1's string key
    assert len(learnt[0].splits or []) == 5  # big: 450 rows, split.size 100


@pytest.mark.parametrize("family", ["pg", "my"])
def test_a_schemas_column_listing_in_one_json_cell_equals_it_row_by_row_and_falls_back_when_cut(spark, request,
                                                                                               family, caplog):
    """The column listing answered as one JSON cell gives every table the signature the row-by-row
    listing gives; MariaDB cutting the JSON at ``group_concat_max_len`` makes the listing go row by row."""
    from airflow_provider_seatunnel.connectors.jdbc import columns
    from airflow_provider_seatunnel.connectors.sqlclient.connection import Conn, connect, ensure_driver, execute, query
    from airflow_provider_seatunnel.connectors.sqlclient.pool import close_pools

    caplog.set_level(logging.INFO, logger="seatunnel")
    server = request.getfixturevalue("pgdb" if family == "pg" else "my")
    driver = "org.postgresql.Driver" if family == "pg" else (
        "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver")
    conn = Conn(server.url, driver, server.user, server.password)
    ensure_driver(spark, conn)
    where = ("public", None) if family == "pg" else (None, server.database)
    try:
        with connect(spark, conn) as connection:
            if family == "pg":
                rows = query(connection, f"SELECT {columns._PG_COLUMNS} {columns._PG_WHERE}", ("public",))
                packed = columns._pg_columns(connection, None, where[0])
            else:
                rows = query(connection, f"SELECT {columns._MY_COLUMNS} FROM information_schema.COLUMNS "
                                         "WHERE TABLE_SCHEMA = ?", (server.database,))
                packed = columns._my_columns(connection, where[1], None)
            assert "row by row" not in caplog.text
            assert packed == columns.signatures(rows) and len(packed) >= len(SAME) + 1
            if family == "my":
                execute(connection, "SET SESSION group_concat_max_len = 64")  # the JSON cut at 64 characters
                try:
                    assert columns._my_columns(connection, where[1], None) == packed
                finally:
                    execute(connection, "SET SESSION group_concat_max_len = DEFAULT")
                assert "the column listing row by row (ValueError)" in caplog.text
    finally:
        close_pools(spark)
