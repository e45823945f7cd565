"""Restore-trial targets on Doris's protocol (:mod:`restore_faults`): two tables behind the Stream Load stand-in
(``tests/streamload_server.py``: Doris's load and two-phase commit HTTP protocol in front of a private MariaDB,
started once per benchmark run; no Doris server installs here), written by two Doris sinks of one pipeline:

* ``rf_doris_plain``: csv loads into a table without a key (Doris's Duplicate Key model: a duplicate would
  show as a second row);
* ``rf_doris_keyed``: json loads into a table keyed by ``id`` (Unique Key: a row replaces the row of its key);
  it also holds a stale row with id 0 that the input replaces.

Before every trial both tables are created again, the sink's commit log dropped, and each given the row of an
earlier run, ``(-1, "old", "g0")``. A reader sees what the ``mariadb`` client selects. *Raw* counts the
transactions prepared and not decided yet in the stand-in (never visible; Doris would abort them at its
timeout).

The sink's publish fires ``sink.move`` twice per table: before its claim and after it, before the commits of
the transactions (:data:`MOVES`: two sinks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
MOVES = 4
READING = (
    "The targets are two tables behind the Stream Load stand-in (`tests/streamload_server.py`: Doris's load and "
    "two-phase commit protocol in front of a private MariaDB; not a real Doris), read with the `mariadb` client: "
    "`rf_doris_plain` (csv, no key) and `rf_doris_keyed` (json, keyed by id; it also holds a stale row with id 0 "
    "that the input replaces). *Visible after attempt 1* is what a reader of each table sees (`old`: only the "
    "earlier rows, `all`: everything, `PARTIAL`: a commit killed between its writers' transactions, which the "
    "restore finishes); *prepared transactions* counts the transactions prepared and never decided after attempt "
    "1 → after the restore.")


def _servers(resources: Any) -> Any:
    if getattr(resources, "streamload", None) is None:
        from tests import mysql
        from tests.streamload_server import StreamLoadServer

        my = mysql.start()
        resources.callback(my.stop)
        resources.streamload = StreamLoadServer(my, my.user, my.password)
        resources.callback(resources.streamload.stop)
    return resources.streamload


def seeder(my: Any, table: str, keyed: bool) -> Callable[[], None]:
    """Before a trial: ``table`` of the stand-in's MariaDB created again holding the earlier run's row (keyed: by
    ``id``, with a stale row the input replaces); the plain table's seed also drops the sinks' commit log."""
    def seed() -> None:
        old = [*OLD, (0, "stale", "g9")] if keyed else OLD
        values = ", ".join(f"({i}, '{n}', '{g}')" for i, n, g in old)
        my.sql(("DROP TABLE IF EXISTS seatunnel_commit_log; " if not keyed else "")
               + f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id BIGINT"
               + (" PRIMARY KEY" if keyed else "") + f", name LONGTEXT, grp LONGTEXT); "
               f"INSERT INTO {table} VALUES {values}")
    return seed


def reader(my: Any, table: str) -> Callable[[], list[Row]]:
    """The rows a reader of ``table`` sees now."""
    return lambda: [(int(i), str(n), str(g)) for i, n, g in my.sql(f"SELECT id, name, grp FROM {table}")]


def doris_sinks(rows: int, resources: Any, sink_cls: Callable[..., Any]) -> list[Any]:
    """The two sinks of the trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _servers(resources)
    my = server.db

    def prepared() -> int:
        return len(server.prepared())

    conn = (f'fenodes = "{server.fenodes}", query-port = {my.port}, username = "{my.user}", '
            f'password = "{my.password}", database = "{my.database}", sink.label-prefix = "rf"')
    return [
        sink_cls("Doris plain", f'Doris {{ plugin_input = "rows", {conn}, table = "rf_doris_plain", '
                                'doris.config = { format = "csv", column_separator = "," } }',
                 seeder(my, "rf_doris_plain", False), reader(my, "rf_doris_plain"), prepared, list(OLD)),
        sink_cls("Doris keyed", f'Doris {{ plugin_input = "rows", {conn}, table = "rf_doris_keyed", '
                                'doris.config = { format = "json", read_json_by_line = "true" } }',
                 seeder(my, "rf_doris_keyed", True), reader(my, "rf_doris_keyed"), None,
                 [*OLD, (0, "stale", "g9")], True),
    ]
