"""The Postgres-CDC stream as a PySpark Python streaming data source (runs in Spark's Python workers).

One stream per source, for all its captured tables, over one replication slot and one publication
covering them. Offsets are ``{"lsn": n}``: a micro-batch ``[start, end)`` holds every transaction
whose commit record lies at ``start <= lsn < end``. The stream starts at ``{"lsn": -1}``: its first
micro-batch also holds every table's snapshot (the files the driver wrote at the slot's consistent
point, partitions placed before the changes' partition so that they arrive first).

* ``latestOffset``: the server's flushed WAL position (every commit record below it is decodable);
* ``read`` of a change partition: the slot's changes up to ``end`` decoded with ``pgoutput``
  (``pg_logical_slot_peek_binary_changes``: nothing is consumed), the transactions before ``start``
  skipped; each row named by its table (the relation's ``schema.table`` in the source's database).
  The slot keeps everything after its confirmed position, so a replayed micro-batch reads the same
  changes;
* ``commit(end)``: Spark recorded the micro-batch: the slot's confirmed position advances to
  ``end`` (the server may then drop the WAL before it). Never before.

Every value travels as text (pgoutput's text form, the snapshot cast to text); the driver casts
them back to the table's types with native expressions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from ...spi.errors import RuntimeConfigError
from ..cdc.schemachange import named
from ..cdc.stream import ChangeStreamSource, SnapshotThenChanges
from .pgoutput import UNCHANGED, lsn_int, lsn_text, relation_changes, transactions

NAME = "seatunnel_postgres_cdc"
#: the option holding the spec; its name matches Spark's redaction pattern (it holds the password)
SPEC_OPTION = "seatunnel.postgres_cdc.secret"


def connect(conn: Mapping[str, Any], **kw: Any) -> Any:
    import psycopg

    return psycopg.connect(host=conn["host"], port=conn["port"], dbname=conn["dbname"], user=conn["user"],
                           password=conn.get("password"), connect_timeout=30, **kw)


def read_changes(spec: Mapping[str, Any], start: int, end: int) -> Iterator[tuple[Any, ...]]:
    """The captured tables' rows changed by transactions committed at ``start <= lsn < end``: (table id,
    text values, kind)."""
    tables: Mapping[str, Any] = spec["tables"]
    database = spec["database"]
    with connect(spec["conn"], autocommit=True) as conn:
        rows = conn.execute(
            "SELECT data FROM pg_logical_slot_peek_binary_changes(%s, %s::pg_lsn, NULL, 'proto_version', '1', "
            "'publication_names', %s)", (spec["slot"], lsn_text(end), spec["publication"]))
        for tx in transactions((r[0] for r in rows), {}):
            if not start <= tx.commit_lsn < end:
                continue
            names: dict[int, list[str | None]] = {}
            for relation, values, kind in relation_changes(tx, partial(_columns, tables, database),
                                                           partial(_names, tables, database, names)):
                if any(v is UNCHANGED for v in values):
                    raise RuntimeConfigError(f"a change of {relation.qualified} lacks a large (TOASTed) value it "
                                             f"did not modify: run ALTER TABLE {relation.qualified} REPLICA IDENTITY "
                                             "FULL so that changes carry whole rows")
                yield f"{database}.{relation.qualified}", values, kind


def _columns(tables: Mapping[str, Any], database: str, relation: Any) -> list[str] | None:
    table = tables.get(f"{database}.{relation.qualified}")
    return None if table is None else list(table["columns"])


def _names(tables: Mapping[str, Any], database: str, known: dict[int, list[str | None]],
           relation: Any) -> list[str | None]:
    """The stream's name of each column of ``relation`` (followed schema changes: by the shape it was
    logged in, :func:`..cdc.schemachange.named`), once per relation message."""
    if id(relation) not in known:
        known[id(relation)] = named(tables[f"{database}.{relation.qualified}"], relation.columns, relation.types)
    return known[id(relation)]


class _StreamReader(SnapshotThenChanges):
    def initialOffset(self) -> dict:
        return {"lsn": -1}

    def snapshot_offset(self) -> dict[str, Any]:
        return {"lsn": int(self.spec["snapshot_lsn"])}

    def order(self, offset: Mapping[str, Any]) -> int:
        return int(offset.get("lsn", -1))

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        with connect(self.spec["conn"], autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_flush_lsn()::text").fetchone()
        flushed = lsn_int(row[0])
        begin = int((start or {}).get("lsn", -1))
        return {"lsn": max(flushed, begin, int(self.spec["snapshot_lsn"]))}

    def changes(self, start: dict[str, Any], end: dict[str, Any]) -> Iterator[tuple]:
        return read_changes(self.spec, int(start["lsn"]), int(end["lsn"]))

    def commit(self, end: dict) -> None:
        """Advance the slot's confirmed position to ``end`` (only forward)."""
        stop = int(end.get("lsn", -1))
        if stop < 0:
            return
        with connect(self.spec["conn"], autocommit=True) as conn:
            row = conn.execute("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
                               (self.spec["slot"],)).fetchone()
            if row is not None and row[0] is not None and lsn_int(row[0]) < stop:
                conn.execute("SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (self.spec["slot"], lsn_text(stop)))


class PostgresCdcDataSource(ChangeStreamSource):
    """``spark.readStream.format("seatunnel_postgres_cdc")`` given the spec option."""

    format_name, spec_option, stream_reader = NAME, SPEC_OPTION, _StreamReader
