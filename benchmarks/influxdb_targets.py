"""Restore-trial targets on InfluxDB 1.x (:mod:`restore_faults`): two measurements of a private influxd
(``tests/influxdb_server.py``, started once per benchmark run), written by two InfluxDB sinks of one pipeline:

* ``rf_time``: ``key_time = "id"`` (the row's id is the point's time in ns), ``key_tags = ["grp"]``: a rewrite
  of a row replaces its point, so a duplicate cannot show; a lost row shows;
* ``rf_proc``: no ``key_time`` (each point's time is the attempt's staging time plus its row number),
  ``key_tags = ["grp"]``, ``batch_size = 100``: a row written by two attempts shows twice.

Before every trial the database ``rf`` and the sink's bookkeeping database ``_seatunnel`` are dropped and
both measurements get a point of an earlier run (``(-1, "old", "g0")``). A reader sees what ``SELECT``
returns. The publish writes the staged points ``batch_size`` a request (``sink.move`` before each), so a
driver killed in the middle of it leaves part of the rows visible until the restore rolls the claimed
publish forward: such a trial shows ``PARTIAL`` after attempt 1, and the restore must still land every row
once. *Raw* counts the points left in the sink's staging.
"""

from __future__ import annotations

from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
DB = "rf"
#: sink.move occurrences per run of 5,000 rows: 5 requests of 1,024 points, 50 of 100
MOVES = 55


def _server(resources: Any) -> Any:
    if getattr(resources, "influxdb", None) is None:
        from tests import influxdb_server

        resources.influxdb = influxdb_server.start()
        resources.callback(resources.influxdb.stop)
    return resources.influxdb


def influxdb_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of InfluxDB's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seed_time() -> None:  # the first sink's seed: earlier trials' staging and commit log go too
        server.execute('DROP DATABASE "_seatunnel"')
        server.reset(DB)
        server.write(DB, ['rf_time,grp=g0 name="old" -1'])

    def seed_proc() -> None:
        server.write(DB, ['rf_proc,grp=g0 id=-1i,name="old" 1'])

    def read_time() -> list[Row]:
        return [(int(p["time"]), p["name"], p["grp"]) for p in server.query("SELECT * FROM rf_time", DB)]

    def read_proc() -> list[Row]:
        return [(int(p["id"]), p["name"], p["grp"]) for p in server.query("SELECT * FROM rf_proc", DB)]

    def staging() -> int:
        try:
            found = server.query('SELECT count("line") FROM "staging"."stage"', "_seatunnel")
        except Exception:
            return 0
        return int(found[0]["count"]) if found else 0

    conn = f'{server.options()}, database = "{DB}"'
    return [
        sink_cls("InfluxDB key_time", f'InfluxDB {{ plugin_input = "rows", {conn}, measurement = "rf_time", '
                                      'key_time = "id", key_tags = ["grp"] }',
                 seed_time, read_time, staging, list(OLD)),
        sink_cls("InfluxDB processing time", f'InfluxDB {{ plugin_input = "rows", {conn}, measurement = "rf_proc", '
                                             'key_tags = ["grp"], batch_size = 100 }',
                 seed_proc, read_proc, None, list(OLD)),
    ]


READING = ("The targets are two measurements of a private influxd 1.6 (`tests/influxdb_server.py`), read with "
           "`SELECT`: `rf_time` (`key_time = \"id\"`: a rewritten row replaces its point) and `rf_proc` (no "
           "`key_time`: each point's time is its attempt's staging time plus its row number, so a row written by "
           "two attempts shows twice). *Visible after attempt 1* is what a reader sees (`old`: only the earlier "
           "point, `all`: everything, `PARTIAL`: part of a claimed publish, written a request at a time without a "
           "transaction, which the restore rolls forward); *staged points* counts the points in the sink's "
           "`_seatunnel` staging after attempt 1 → after the restore.")
