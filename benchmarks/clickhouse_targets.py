"""Restore-trial targets on the ClickHouse stand-in (:mod:`restore_faults`): two tables of one stand-in
(``tests/clickhouse_server.py``: ClickHouse's engine, chDB, behind a loopback HTTP server; started once per
benchmark run), written by two Clickhouse sinks of one pipeline:

* ``rf.plain``: an unpartitioned MergeTree (the writers' staging is gathered into one table whose one
  partition is MOVEd in one step), every row appended: a row written by two attempts shows twice;
* ``rf.keyed``: a ReplacingMergeTree ordered by ``id`` written with ``primary_key = "id"`` (the keys' rows
  deleted by a mutation, then the new rows moved in), ``bulk_size = 100``.

Before every trial the database ``rf`` and the sink's bookkeeping database ``_seatunnel`` are dropped and
both tables get a row of an earlier run (``(-1, "old", "g0")``). A reader sees what ``SELECT`` returns
(``FINAL`` for the keyed table). Each table's publish is one MOVE (``sink.move`` before it); the keyed one
deletes the keys' rows first. A driver killed between the two sinks' publishes leaves one table written
and the other not until the restore finishes the claimed publish, and the restore must land every row once.
*Raw* counts the rows left in the sink's staging tables.
"""

from __future__ import annotations

from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
DB = "rf"
#: sink.move occurrences per run: one MOVE per table
MOVES = 2


def _server(resources: Any) -> Any:
    if getattr(resources, "clickhouse", None) is None:
        from tests import clickhouse_server

        resources.clickhouse = clickhouse_server.start()
        resources.callback(resources.clickhouse.stop)
    return resources.clickhouse


def clickhouse_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Clickhouse's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seed_plain() -> None:  # the first sink's seed: earlier trials' staging and commit log go too
        server.query("DROP DATABASE IF EXISTS _seatunnel SYNC")
        server.query(f"DROP DATABASE IF EXISTS {DB} SYNC")
        server.query(f"CREATE DATABASE {DB}")
        server.query(f"CREATE TABLE {DB}.plain (id Int64, name String, grp String) ENGINE = MergeTree ORDER BY id")
        server.query(f"INSERT INTO {DB}.plain VALUES (-1, 'old', 'g0')")

    def seed_keyed() -> None:
        server.query(f"CREATE TABLE {DB}.keyed (id Int64, name String, grp String) ENGINE = ReplacingMergeTree "
                     "ORDER BY id")
        server.query(f"INSERT INTO {DB}.keyed VALUES (-1, 'old', 'g0')")

    def read(table: str) -> Any:
        final = " FINAL" if table == "keyed" else ""
        return lambda: [(int(r["id"]), r["name"], r["grp"])
                        for r in server.rows(f"SELECT id, name, grp FROM {DB}.{table}{final}")]

    def staging() -> int:
        tables = server.rows("SELECT name FROM system.tables WHERE database = '_seatunnel' AND name LIKE 'stg_%'")
        return sum(int(server.rows(f"SELECT count() AS n FROM _seatunnel.`{t['name']}`")[0]["n"]) for t in tables)

    conn = (f'host = "{server.host}:{server.port}", username = "{server.user}", password = "{server.password}", '
            f'database = "{DB}"')
    return [
        sink_cls("Clickhouse plain", f'Clickhouse {{ plugin_input = "rows", {conn}, table = "plain" }}',
                 seed_plain, read("plain"), staging, list(OLD)),
        sink_cls("Clickhouse keyed", f'Clickhouse {{ plugin_input = "rows", {conn}, table = "keyed", '
                                     'primary_key = "id", bulk_size = 100 }',
                 seed_keyed, read("keyed"), None, list(OLD)),
    ]


READING = ("The targets are two tables of the ClickHouse stand-in (`tests/clickhouse_server.py`: ClickHouse's engine, "
           "chDB, behind a loopback HTTP server), read with `SELECT`: `rf.plain` (an unpartitioned MergeTree: a row "
           "written by two attempts shows twice) and `rf.keyed` (a ReplacingMergeTree written with `primary_key`, "
           "read `FINAL`). *Visible after attempt 1* is what a reader sees (`old`: only the earlier row, `all`: "
           "everything, `PARTIAL`: part of a claimed publish, which the restore finishes); *staging rows* counts "
           "the rows in the sink's `_seatunnel` staging tables after attempt 1 → "
           "after the restore.")
