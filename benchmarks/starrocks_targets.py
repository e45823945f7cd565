"""Restore-trial targets on StarRocks's protocol (:mod:`restore_faults`; SelectDBCloud's:
:func:`selectdb_sinks`): two tables behind the Stream Load stand-in (``tests/streamload_server.py``:
StarRocks's Stream Load transaction interface in front of a private MariaDB, started once per benchmark
run and shared with the Doris trials; no StarRocks server installs here),
written by two StarRocks sinks of one pipeline:

* ``rf_sr_plain``: csv loads into a table without a key (StarRocks's Duplicate Key model: a duplicate would
  show as a second row);
* ``rf_sr_keyed``: json loads into a table keyed by ``id`` (Primary Key: a row replaces the row of its key);
  it also holds a stale row with id 0 that the input replaces.

Before every trial both tables are created again, the sink's commit log dropped, and each given the row of an
earlier run, ``(-1, "old", "g0")``. A reader sees what the ``mariadb`` client selects. *Raw* counts the
transactions begun or prepared and not decided yet in the stand-in (never visible; StarRocks would abort them
at its timeouts).

The sink's publish fires ``sink.move`` twice per table: before its claim and after it, before the commits of
the transactions (:data:`MOVES`: two sinks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from doris_targets import _servers, reader, seeder

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
MOVES = 4
READING = (
    "The targets are two tables behind the Stream Load stand-in (`tests/streamload_server.py`: StarRocks's "
    "Stream Load transaction interface in front of a private MariaDB; not a real StarRocks), read with the "
    "`mariadb` client: `rf_sr_plain` (csv, no key) and `rf_sr_keyed` (json, keyed by id; it also holds a stale row "
    "with id 0 that the input replaces). *Visible after attempt 1* is what a reader of each table sees (`old`: only "
    "the earlier rows, `all`: everything, `PARTIAL`: a commit killed between its writers' transactions, which the "
    "restore finishes); *open transactions* counts the transactions begun or prepared and never decided after "
    "attempt 1 → after the restore.")


def starrocks_sinks(rows: int, resources: Any, sink_cls: Callable[..., Any]) -> list[Any]:
    """The two sinks of the trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _servers(resources)
    my = server.db

    def open_transactions() -> int:
        return len(server.prepared())

    conn = (f'nodeUrls = ["{server.fenodes}"], base-url = "jdbc:mysql://127.0.0.1:{my.port}/{my.database}", '
            f'username = "{my.user}", password = "{my.password}", database = "{my.database}", labelPrefix = "rf"')
    return [
        sink_cls("StarRocks plain", f'StarRocks {{ plugin_input = "rows", {conn}, table = "rf_sr_plain", '
                                    'starrocks.config = { format = "CSV", column_separator = "," } }',
                 seeder(my, "rf_sr_plain", False), reader(my, "rf_sr_plain"), open_transactions, list(OLD)),
        sink_cls("StarRocks keyed", f'StarRocks {{ plugin_input = "rows", {conn}, table = "rf_sr_keyed", '
                                    'starrocks.config = { format = "JSON" } }',
                 seeder(my, "rf_sr_keyed", True), reader(my, "rf_sr_keyed"), None, [*OLD, (0, "stale", "g9")], True),
    ]


SELECTDB_READING = (
    "The targets are two tables behind the Stream Load stand-in's SelectDB Cloud side (`tests/streamload_server.py`: "
    "the internal stage and COPY INTO in front of a private MariaDB; not a real SelectDB Cloud), read with the "
    "`mariadb` client: `rf_sd_plain` (csv, no key) and `rf_sd_keyed` (json, keyed by id; it also holds a stale row "
    "with id 0 that the input replaces). *Visible after attempt 1* as for StarRocks; *staged files* counts the "
    "files on the stage never copied after attempt 1 → after the restore (never visible; the stage expires them).")


def selectdb_sinks(rows: int, resources: Any, sink_cls: Callable[..., Any]) -> list[Any]:
    """The two SelectDBCloud sinks of the trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _servers(resources)
    my = server.db

    def staged() -> int:
        with server.lock:
            return len(set(server.stage) - server.copied)

    conn = (f'load-url = "{server.fenodes}", jdbc-url = "127.0.0.1:{my.port}", cluster-name = "c1", '
            f'username = "{my.user}", password = "{my.password}", sink.label-prefix = "rf"')
    return [
        sink_cls("SelectDBCloud plain", f'SelectDBCloud {{ plugin_input = "rows", {conn}, table.identifier = '
                                        f'"{my.database}.rf_sd_plain", selectdb.config = {{ file.type = "csv", '
                                        'file.column_separator = "," } }',
                 seeder(my, "rf_sd_plain", False), reader(my, "rf_sd_plain"), staged, list(OLD)),
        sink_cls("SelectDBCloud keyed", f'SelectDBCloud {{ plugin_input = "rows", {conn}, table.identifier = '
                                        f'"{my.database}.rf_sd_keyed", selectdb.config = {{ file.type = "json" }} }}',
                 seeder(my, "rf_sd_keyed", True), reader(my, "rf_sd_keyed"), None, [*OLD, (0, "stale", "g9")], True),
    ]
