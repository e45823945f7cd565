"""MySQL-CDC's schema changes (``schema-changes.enabled``): what the binlog says of them.

MySQL has no column identity that survives a rename, so the columns are compared by name
(:func:`..cdc.schemachange.diff`) with the renames the binlog's ``ALTER TABLE`` statements name
(:func:`renames`: ``RENAME COLUMN a TO b``, ``CHANGE [COLUMN] a b <type>``), read on the driver
from where the last run stopped looking (:func:`scan`). A stream's reader names each row event's
values by the names the event carries, which are the names *when it was logged* only with
``binlog_row_metadata = FULL`` (MySQL 8.0.14+, MariaDB 10.5+): following a drop, a rename or a type
change needs it (:func:`require_row_metadata`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...spi.errors import RuntimeConfigError
from ...spi.schemachange import ADD, SchemaChange
from .datasource import binlog_end, connect, position_key

_ALTER = re.compile(r"^\s*ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?"
                    r"(?:`?(?P<db>[^`.\s]+)`?\.)?`?(?P<table>[^`.\s]+)`?\s+(?P<body>.*)$", re.I | re.S)
_NAME = r"`?(?P<{0}>[^`\s,]+)`?"
_RENAME = re.compile(r"^RENAME\s+COLUMN\s+(?:IF\s+EXISTS\s+)?" + _NAME.format("old") + r"\s+TO\s+" + _NAME.format("new")
                     + r"\s*$", re.I | re.S)
_CHANGE = re.compile(r"^CHANGE\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?" + _NAME.format("old") + r"\s+" + _NAME.format("new")
                     + r"\s", re.I | re.S)


def _clauses(body: str) -> list[str]:
    """An ALTER TABLE's clauses: its text split at the commas outside parentheses and quotes."""
    out: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for ch in body:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    out.append("".join(current).strip())
    return [c for c in out if c]


def renamed_columns(statement: str, table: str, schema: str) -> list[tuple[str, str]] | None:
    """The (old, new) column renames ``statement`` makes to ``table`` (``database.table``), in order;
    None when it does not alter that table. ``schema`` is the statement's default database."""
    found = _ALTER.match(statement)
    if not found:
        return None
    database, name = table.split(".", 1)
    if found.group("table").lower() != name.lower() or (found.group("db") or schema or "").lower() != database.lower():
        return None
    pairs = []
    for clause in _clauses(found.group("body")):
        match = _RENAME.match(clause) or _CHANGE.match(clause + " ")
        if match and match.group("old") != match.group("new"):
            pairs.append((match.group("old"), match.group("new")))
    return pairs


def compose(renames: Mapping[str, str], pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Renames from the state's names to the current ones, after ``pairs`` (in order)."""
    out = dict(renames)
    for old, new in pairs:
        carried = False
        for key, value in list(out.items()):
            if value == old:
                out[key], carried = new, True
        if not carried and old not in out:
            out[old] = new
    return out


def scan(conn: Mapping[str, Any], server_id: int, table: str,
         start: Mapping[str, Any]) -> tuple[list[tuple[str, str]] | None, dict[str, Any]]:
    """The (old, new) renames of ``table``'s columns logged from ``start`` to the binlog's end now (None:
    no statement altered the table), and that end (where the next scan starts)."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import QueryEvent

    end = binlog_end(conn)
    pairs: list[tuple[str, str]] | None = None
    if position_key(start) >= position_key(end):
        return pairs, end
    stream = BinLogStreamReader(connection_settings=dict(conn), server_id=server_id, resume_stream=True,
                                blocking=False, log_file=start["file"], log_pos=int(start["pos"]),
                                only_events=[QueryEvent], enable_logging=False)
    try:
        for event in stream:
            if position_key({"file": stream.log_file, "pos": event.packet.log_pos}) > position_key(end):
                break
            schema = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
            found = renamed_columns(str(event.query), table, schema)
            if found is not None:
                pairs = [*(pairs or []), *found]
    finally:
        stream.close()
    return pairs, end


def require_row_metadata(conn: Mapping[str, Any], changes: Iterable[SchemaChange]) -> None:
    """A drop, a rename or a type change is followed only when the binlog names the columns of each
    row event as they were then (``binlog_row_metadata = FULL``): else a row logged before the change
    would be read by today's columns."""
    others = [c for c in changes if c.kind != ADD]
    if not others:
        return
    import pymysql

    try:
        with connect(conn) as c, c.cursor() as cur:
            cur.execute("SELECT @@GLOBAL.binlog_row_metadata")
            row = cur.fetchone()
    except pymysql.MySQLError:  # a server without the setting
        row = None
    if str(row[0] if row else "").upper() != "FULL":
        raise RuntimeConfigError(f"cannot follow the schema change {others[0].describe()}: the server must log the "
                                 "columns' names (binlog_row_metadata = FULL, MySQL 8.0.14+ or MariaDB 10.5+)")
