"""The databases of :mod:`cdc` (the private servers of tests/pg.py and tests/mysql.py), driven through
their Python drivers (psycopg, PyMySQL; the connectors under test open their own connections).

Each gives its CDC source block, a table of ``rows`` rows of six columns (``create``), set-based
inserts, updates and deletes over id ranges, each statement its own transaction (``autocommit``),
its change log's position in bytes, and the latency table: ``(id, committed_at, pad)``, a row's
``committed_at`` the server's clock when it was inserted in its own transaction.
"""

from __future__ import annotations

from typing import Any


class Pg:
    """The PostgreSQL of tests/pg.py (wal_level = logical)."""

    plugin = "Postgres-CDC"

    def __init__(self, server: Any):
        self.server = server
        self.conn = self.connect()

    def connect(self) -> Any:
        import psycopg

        s = self.server
        return psycopg.connect(host="127.0.0.1", port=s.port, dbname=s.database, user=s.user, password=s.password,
                               autocommit=True)

    def run(self, sql: str, conn: Any = None) -> list[tuple]:
        cur = (conn or self.conn).execute(sql)
        return cur.fetchall() if cur.description else []

    def block(self, table: str) -> str:
        s = self.server
        return (f'Postgres-CDC {{ plugin_output = "c", base-url = "{s.url}", username = "{s.user}", '
                f'password = "{s.password}", table-names = ["{s.database}.public.{table}"] }}')

    def create(self, table: str, rows: int) -> None:
        self.run(f"CREATE TABLE {table} (id int PRIMARY KEY, name text, score numeric(10,2), at timestamp, "
                 f"ok boolean, note text); ALTER TABLE {table} REPLICA IDENTITY FULL")
        self.insert(table, 1, rows)

    def insert(self, table: str, low: int, high: int) -> None:
        self.run(f"INSERT INTO {table} SELECT g, 'name-' || g, (g % 10000) / 100.0, "
                 f"timestamp '2024-01-01' + g * interval '1 second', g % 2 = 0, repeat('x', 40) "
                 f"FROM generate_series({low}, {high}) g")

    def update(self, table: str, low: int, high: int) -> None:
        self.run(f"UPDATE {table} SET name = name || '-u', score = score + 1 WHERE id BETWEEN {low} AND {high}")

    def delete(self, table: str, low: int, high: int) -> None:
        self.run(f"DELETE FROM {table} WHERE id BETWEEN {low} AND {high}")

    def log_position(self) -> int:
        """The WAL position, in bytes."""
        return int(self.run("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")[0][0])

    def create_latency(self, table: str) -> None:
        self.run(f"CREATE TABLE {table} (id int PRIMARY KEY, committed_at double precision, pad text); "
                 f"ALTER TABLE {table} REPLICA IDENTITY FULL")

    def insert_latency(self, table: str, row_id: int, conn: Any = None) -> None:
        self.run(f"INSERT INTO {table} VALUES ({row_id}, extract(epoch FROM clock_timestamp()), 'x')", conn)


class My:
    """The MariaDB of tests/mysql.py (binlog_format = ROW, row image and metadata FULL)."""

    plugin = "MySQL-CDC"

    def __init__(self, server: Any):
        self.server = server
        self.conn = self.connect()

    def connect(self) -> Any:
        import pymysql

        s = self.server
        return pymysql.connect(host="127.0.0.1", port=s.port, user=s.user, password=s.password, database=s.database,
                               autocommit=True)

    def run(self, sql: str, conn: Any = None) -> list[tuple]:
        with (conn or self.conn).cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def block(self, table: str) -> str:
        s = self.server
        return (f'MySQL-CDC {{ plugin_output = "c", base-url = "{s.url}", username = "{s.user}", '
                f'password = "{s.password}", table-names = ["{s.database}.{table}"] }}')

    def create(self, table: str, rows: int) -> None:
        self.run(f"CREATE TABLE {table} (id INT PRIMARY KEY, name VARCHAR(40), score DECIMAL(10,2), at DATETIME, "
                 f"ok BOOLEAN, note VARCHAR(64))")
        self.insert(table, 1, rows)

    def insert(self, table: str, low: int, high: int) -> None:
        self.run(f"INSERT INTO {table} SELECT seq, CONCAT('name-', seq), (seq % 10000) / 100, "
                 f"TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, seq % 2 = 0, REPEAT('x', 40) "
                 f"FROM seq_{low}_to_{high}")

    def update(self, table: str, low: int, high: int) -> None:
        self.run(f"UPDATE {table} SET name = CONCAT(name, '-u'), score = score + 1 WHERE id BETWEEN {low} AND {high}")

    def delete(self, table: str, low: int, high: int) -> None:
        self.run(f"DELETE FROM {table} WHERE id BETWEEN {low} AND {high}")

    def log_position(self) -> int:
        """The binlog position (bytes into the current file; the benchmark's changes fit one file)."""
        return int(self.run("SHOW MASTER STATUS")[0][1])

    def create_latency(self, table: str) -> None:
        self.run(f"CREATE TABLE {table} (id INT PRIMARY KEY, committed_at DOUBLE, pad VARCHAR(8))")

    def insert_latency(self, table: str, row_id: int, conn: Any = None) -> None:
        self.run(f"INSERT INTO {table} VALUES ({row_id}, UNIX_TIMESTAMP(NOW(6)), 'x')", conn)
