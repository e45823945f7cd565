"""The MySQL-CDC stream as a PySpark Python streaming data source (runs in Spark's Python workers).

One stream per source, for all its captured tables, read by one replica connection (one server id).
Offsets are binlog positions ``{"file": name, "pos": n}``, ordered by
the file's sequence number then the position; a micro-batch ``(start, end]`` holds every
transaction whose commit event (``XID``, or a ``COMMIT`` query for non-transactional tables) ends
at a position after ``start`` and at or before ``end``. The stream starts at ``{"file": "",
"pos": -1}``: its first micro-batch also holds every table's snapshot files, written by the driver at
one binlog position, placed before the changes.

* ``latestOffset``: the server's binlog end (``SHOW MASTER STATUS``);
* ``read`` of a change partition: the binlog from ``start`` on, read as a replica (the
  ``mysql-replication`` client, row events of the captured tables only, each row named by its
  table) up to ``end``; a replayed micro-batch
  reads the same range again (the server keeps binlogs for ``expire_logs_days``);
* ``commit``: nothing to release (a binlog has no consumer position).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from ..cdc.schemachange import named
from ..cdc.stream import ChangeStreamSource, SnapshotThenChanges, text_value

NAME = "seatunnel_mysql_cdc"
#: the option holding the spec; its name matches Spark's redaction pattern (it holds the password)
SPEC_OPTION = "seatunnel.mysql_cdc.secret"
INITIAL = {"file": "", "pos": -1}
#: how long a micro-batch's binlog read may take to reach its end before the micro-batch fails
READ_PATIENCE_S = 120.0


def position_key(offset: Mapping[str, Any]) -> tuple[int, int]:
    """A binlog position as an ordered pair: the file's sequence number, the position."""
    name = str(offset.get("file") or "")
    suffix = name.rsplit(".", 1)[-1]
    return (int(suffix) if suffix.isdigit() else -1, int(offset.get("pos", -1)))


def connect(conn: Mapping[str, Any], **kw: Any) -> Any:
    import pymysql

    return pymysql.connect(host=conn["host"], port=int(conn["port"]), user=conn["user"], password=conn["passwd"],
                           connect_timeout=30, autocommit=True, **kw)


def binlog_end(conn: Mapping[str, Any]) -> dict[str, Any]:
    with connect(conn) as c, c.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
    if row is None:
        raise RuntimeError("the server writes no binlog: start it with log_bin, binlog_format = ROW")
    return {"file": row[0], "pos": int(row[1])}


def _rows(event: Any) -> Iterator[tuple[dict, int]]:
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    for row in event.rows:
        if isinstance(event, WriteRowsEvent):
            yield row["values"], 0
        elif isinstance(event, UpdateRowsEvent):
            yield row["before_values"], 1
            yield row["after_values"], 2
        elif isinstance(event, DeleteRowsEvent):
            yield row["values"], 3


def read_changes(spec: Mapping[str, Any], start: Mapping[str, Any], end: Mapping[str, Any],
                 patience_s: float = READ_PATIENCE_S) -> Iterator[tuple]:
    """The captured tables' rows changed by transactions committed in ``(start, end]``: (table id, text
    values, kind).

    The read must reach ``end``: a dump that ends short of it (the server's end of binlog for its
    readers trails the position ``SHOW MASTER STATUS`` reports while a group commit completes; a
    connection dropped) is read again from the last transaction it completed, until ``end`` or
    ``patience_s`` seconds, then the micro-batch fails (and is replayed): never a short range taken
    for a whole one, whose missing changes the next micro-batch would skip."""
    position, stop = dict(start), position_key(end)
    deadline = time.monotonic() + patience_s
    while True:
        rows: list[tuple] = []
        reached, position = yield_from_dump(spec, position, stop, rows)
        yield from rows
        if reached:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the binlog of {', '.join(spec['tables'])} could be read to "
                               f"{position['file']}:{position['pos']} only, "
                               f"not to the micro-batch's end {end['file']}:{end['pos']}, within "
                               f"{patience_s:.0f} s: the micro-batch fails and is replayed")
        time.sleep(0.1)


def yield_from_dump(spec: Mapping[str, Any], start: Mapping[str, Any], stop: tuple[int, int],
                    rows: list[tuple]) -> tuple[bool, dict[str, Any]]:
    """One binlog dump from ``start`` (a transaction boundary): the rows of the transactions it
    completed up to ``stop`` appended to ``rows``; whether it reached ``stop``, and the end of the
    last transaction it completed (where to read on from)."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import QueryEvent, RotateEvent, XidEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    tables: Mapping[str, Any] = spec["tables"]
    pairs = [tid.split(".", 1) for tid in tables]
    stream = BinLogStreamReader(
        connection_settings=dict(spec["conn"]), server_id=int(spec["server_id"]), resume_stream=True, blocking=False,
        log_file=start["file"], log_pos=int(start["pos"]), only_schemas=sorted({p[0] for p in pairs}),
        only_tables=sorted({p[1] for p in pairs}),
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, XidEvent, QueryEvent, RotateEvent],
        enable_logging=False)  # file and position: the classic dump (the MariaDB mode streams from a GTID)
    pending: list[tuple] = []
    done = dict(start)
    try:
        for event in stream:
            if isinstance(event, RotateEvent):
                continue
            here = {"file": stream.log_file, "pos": event.packet.log_pos}
            if position_key(here) > stop:
                return True, done
            if isinstance(event, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
                tid = f"{event.schema}.{event.table}"
                table = tables.get(tid)
                if table is None:  # a table of the same name in another captured database
                    continue
                names, columns = _stream_names(table, [c.name for c in event.columns]), list(table["columns"])
                for values, kind in _rows(event):
                    row = {new: values.get(old) for old, new in names}
                    pending.append((tid, [text_value(row.get(c)) for c in columns], kind))
            elif isinstance(event, XidEvent) or (isinstance(event, QueryEvent) and
                                                 str(event.query).strip().upper() == "COMMIT"):
                rows.extend(pending)
                pending, done = [], here
        # the dump ended at the server's end for readers: reached if it passed ``stop`` (filtered events count)
        return position_key({"file": stream.log_file, "pos": stream.log_pos}) >= stop, done
    finally:
        stream.close()


def _stream_names(spec: Mapping[str, Any], names: list[str]) -> list[tuple[str, str]]:
    """(logged name, stream name) of a row event's columns: followed schema changes name them by the shape
    they were logged in (:func:`..cdc.schemachange.named`); a dropped column is left out."""
    return [(old, new) for old, new in zip(names, named(spec, names), strict=True) if new is not None]


class _StreamReader(SnapshotThenChanges):
    def initialOffset(self) -> dict:
        return dict(INITIAL)

    def snapshot_offset(self) -> dict[str, Any]:
        return dict(self.spec["snapshot_position"])

    order = staticmethod(position_key)

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        candidates = [binlog_end(self.spec["conn"]), dict(self.spec["snapshot_position"])]
        if start and position_key(start)[1] >= 0:
            candidates.append(dict(start))
        return max(candidates, key=position_key)

    def changes(self, start: dict[str, Any], end: dict[str, Any]) -> Iterator[tuple]:
        return read_changes(self.spec, start, end)

    def commit(self, end: dict) -> None:
        """Nothing to release: the server keeps its binlogs for ``expire_logs_days`` whatever readers did."""


class MySqlCdcDataSource(ChangeStreamSource):
    """``spark.readStream.format("seatunnel_mysql_cdc")`` given the spec option."""

    format_name, spec_option, stream_reader = NAME, SPEC_OPTION, _StreamReader
