"""Restore-trial targets on HBase (:mod:`restore_faults`): two tables of a private standalone HBase
(``tests/hbase_server.py``, started once per benchmark run, its Thrift gateway), written by two Hbase sinks of one
pipeline:

* ``rf_hb_plain``: row key ``id``, every field in the family ``cf``;
* ``rf_hb_joined``: row key ``id|grp`` (two key fields, ``rowkey_delimiter = "|"``: they are no cells), ``name``
  in the family ``a``.

Before every trial both tables are dropped, with the sink's commit log and staging tables, created again with ten
versions a cell, and each given one row of an earlier run, ``(-1, "old", "g0")``. A reader sees every version of
each row's ``name`` cell: a put repeated with a new timestamp (a duplicate) shows as a second row. *Raw* counts the
rows left in the sink's staging table ``seatunnel_staging``.

The sink's publish fires ``sink.move`` twice per table: before its claim and after it, before the copy
(:data:`MOVES`: two sinks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
MOVES = 4
READING = (
    "The targets are two tables of a private standalone HBase 2.6 (`tests/hbase_server.py`), read through its "
    "Thrift gateway with every version of each row's `name` cell (a put repeated with another timestamp would "
    "show as a duplicate): `rf_hb_plain` (row key `id`) and `rf_hb_joined` (row key `id|grp`, `name` in the "
    "family `a`). "
    "*Visible after attempt 1* is what a scan of each table returns (`old`: only the earlier row, `all`: "
    "everything, `PARTIAL`: a copy killed after the claim, which the restore finishes); *staging rows* counts the "
    "rows of the sink's `seatunnel_staging` table after attempt 1 → after the restore.")


def _server(resources: Any) -> Any:
    if getattr(resources, "hbase", None) is None:
        from tests import hbase_server

        resources.hbase = hbase_server.start()
        resources.callback(resources.hbase.stop)
    return resources.hbase


def hbase_sinks(rows: int, resources: Any, sink_cls: Callable[..., Any]) -> list[Any]:
    """The two sinks of the trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seeder(table: str, families: list[str], joined: bool) -> Callable[[], None]:
        def seed() -> None:
            bookkeeping = () if joined else ("seatunnel_commits", "seatunnel_staging")
            server.drop(table, *bookkeeping)
            conn = server.connection()
            try:
                conn.create_table(table, {f: {"max_versions": 10} for f in families})
                cells = {b"a:name": b"old"} if joined else {b"cf:name": b"old", b"cf:grp": b"g0"}
                conn.table(table).put(b"-1|g0" if joined else b"-1", cells)
            finally:
                conn.close()
        return seed

    def reader(table: str, joined: bool) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            family = "a" if joined else "cf"
            out = []
            for key, cells in server.rows(table).items():
                ident, _, grp = key.decode().partition("|")
                if not joined:
                    grp = cells[b"cf:grp"].decode()
                for value, _ts in server.cells(table, key, f"{family}:name".encode()):
                    out.append((int(ident), value.decode(), grp))
            return out
        return read

    def staging() -> int:
        conn = server.connection()
        try:
            return len(list(conn.table("seatunnel_staging").scan())) if b"seatunnel_staging" in conn.tables() else 0
        finally:
            conn.close()

    where = server.options()
    return [
        sink_cls("Hbase plain", f'Hbase {{ plugin_input = "rows", {where}, table = "rf_hb_plain", '
                                'rowkey_column = ["id"], family_name { all_columns = "cf" } }',
                 seeder("rf_hb_plain", ["cf"], False), reader("rf_hb_plain", False), staging, list(OLD)),
        sink_cls("Hbase joined", f'Hbase {{ plugin_input = "rows", {where}, table = "rf_hb_joined", '
                                 'rowkey_column = ["id", "grp"], rowkey_delimiter = "|", '
                                 'family_name { name = "a" } }',
                 seeder("rf_hb_joined", ["a"], True), reader("rf_hb_joined", True), None, list(OLD)),
    ]
