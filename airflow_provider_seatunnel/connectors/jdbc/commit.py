"""The Jdbc sink's commit: one database transaction per table that moves the staged rows into the
target and records the commit in the commit log, keyed by run id, pipeline, sink and table.

``seatunnel_commits`` (the commit log) and ``seatunnel_savemodes`` (the save-mode markers) live
next to the target and are created when missing. The commit: if the log holds the key, nothing;
else the move statements, then the log row, then COMMIT; then the staging table is dropped. A kill
anywhere before the database commit rolls everything back; a retry of the same run rewrites the
staging and commits once; a retry after the commit finds the log row. Two attempts committing at
once are serialized by the log's primary key: the second rolls back.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from contextlib import suppress
from typing import Any

from ...spi import RunContext, Vertex
from .connection import connect, execute, query, rollback_quietly
from .errors import reraise, state_of
from .options import mask
from .statements import move_statements
from .target import KIND_COLUMN, Target, table_exists, target_of

log = logging.getLogger("seatunnel.jdbc")

COMMITS_TABLE = "seatunnel_commits"
SAVEMODES_TABLE = "seatunnel_savemodes"

_BOOKKEEPING = {
    COMMITS_TABLE: "(commit_id VARCHAR(64) NOT NULL PRIMARY KEY, run_id VARCHAR(512) NOT NULL, "
                   "pipeline VARCHAR(512) NOT NULL, sink VARCHAR(255) NOT NULL, table_name VARCHAR(1024) NOT NULL, "
                   "attempt INTEGER, rows_moved BIGINT, committed_at TIMESTAMP)",
    SAVEMODES_TABLE: "(savemode_id VARCHAR(64) NOT NULL PRIMARY KEY, run_id VARCHAR(512) NOT NULL, "
                     "sink VARCHAR(255) NOT NULL, table_name VARCHAR(1024) NOT NULL, actions VARCHAR(4000), "
                     "done_at TIMESTAMP)",
}


def digest(*parts: Any) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()


def commit_id(ctx: RunContext, vertex: Vertex, table_key: str) -> str:
    """The commit-log key of (run, pipeline, sink, table)."""
    return digest(ctx.run_id, ctx.pipeline_key, vertex.ref, table_key)


def ensure_bookkeeping(connection: Any, target: Target) -> None:
    """Create the commit log and the save-mode markers next to the target when missing."""
    from py4j.protocol import Py4JJavaError

    for name, columns in _BOOKKEEPING.items():
        if table_exists(connection, target, name):
            continue
        try:
            execute(connection, f"CREATE TABLE {target.qualified(name)} {columns}")
        except Py4JJavaError:
            if not table_exists(connection, target, name):  # else a concurrent pipeline created it
                raise


def is_committed(connection: Any, target: Target, key: str) -> bool:
    return bool(query(connection, f"SELECT 1 FROM {target.qualified(COMMITS_TABLE)} WHERE commit_id = ?", (key,)))


def drop_quietly(connection: Any, ident: str) -> None:
    from py4j.protocol import Py4JError

    with suppress(Py4JError):  # it may not exist (or be gone already)
        execute(connection, f"DROP TABLE {ident}")


def _record_commit(connection: Any, target: Target, ctx: RunContext, vertex: Vertex, entry: Mapping[str, Any],
                   moved: int) -> bool:
    """Insert the commit-log row; False when a concurrent attempt recorded it first."""
    from py4j.protocol import Py4JJavaError

    try:
        execute(connection, f"INSERT INTO {target.qualified(COMMITS_TABLE)} (commit_id, run_id, pipeline, sink, "
                            "table_name, attempt, rows_moved, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                            "CURRENT_TIMESTAMP)",
                (entry["commit_id"], ctx.run_id, ctx.pipeline_key, vertex.ref, target.label, int(ctx.attempt), moved))
    except Py4JJavaError as e:
        if state_of(e).startswith("23"):
            return False
        raise
    return True


def commit_table(ctx: RunContext, vertex: Vertex, entry: Mapping[str, Any]) -> None:
    """One table's transaction: unless the commit log has the row, move the staged rows into
    the target and record the commit; then drop the staging table."""
    config, target = target_of(vertex.config, entry["table"], entry["columns"])
    conn = target.conn
    try:
        with connect(ctx.spark, conn, autocommit=False) as connection:
            try:
                if is_committed(connection, target, entry["commit_id"]):
                    connection.rollback()
                    log.info("Jdbc %s: %s was already committed by this run", vertex.ref, target.label)
                else:
                    _move_and_record(ctx, vertex, connection, target, entry, config)
            except BaseException:
                rollback_quietly(connection)
                raise
            connection.setAutoCommit(True)
            drop_quietly(connection, target.qualified(entry["staging"]))
    except Exception as e:
        raise reraise(e, f"cannot commit into {target.label}", conn) from None


def _move_and_record(ctx: RunContext, vertex: Vertex, connection: Any, target: Target, entry: Mapping[str, Any],
                     config: Mapping[str, Any]) -> None:
    staging = target.qualified(entry["staging"])
    if target.query is None and not target.primary_keys:
        (deletes,), = query(connection, f"SELECT COUNT(*) FROM {staging} s WHERE "
                                        f"s.{target.dialect.column(KIND_COLUMN)} IN (1, 3)")
        if int(deletes or 0):
            log.warning("Jdbc %s: %s DELETE/UPDATE_BEFORE rows are written as plain rows (set "
                        "primary_keys to apply them)", vertex.ref, deletes)
    moved = sum(execute(connection, sql) for sql in move_statements(target, entry, config))
    ctx.fault_point("sink.commit", vertex)  # data moved, commit not recorded
    if _record_commit(connection, target, ctx, vertex, entry, moved):
        connection.commit()
        log.info("Jdbc %s: committed %d rows into %s", vertex.ref, moved, target.label)
    else:
        connection.rollback()
        log.info("Jdbc %s: a concurrent attempt committed %s first", vertex.ref, target.label)


def abort_entry(ctx: RunContext, target: Target, entry: Mapping[str, Any]) -> None:
    """Drop one table's staging table (best effort: the next attempt replaces it anyway)."""
    try:
        with connect(ctx.spark, target.conn) as connection:
            drop_quietly(connection, target.qualified(entry["staging"]))
    except Exception as e:
        log.warning("Jdbc: could not drop the staging table %s: %s", entry["staging"],
                    mask(str(e), target.conn.password))


def retire_table(ctx: RunContext, vertex: Vertex, entry: Mapping[str, Any], stream: str) -> None:
    """Delete the commit-log rows of stream ``stream``'s micro-batches before this one for one table."""
    _, target = target_of(vertex.config, entry["table"], entry["columns"])
    with connect(ctx.spark, target.conn) as connection:
        execute(connection, f"DELETE FROM {target.qualified(COMMITS_TABLE)} WHERE run_id LIKE ? AND run_id <> ? "
                            "AND pipeline = ? AND sink = ? AND table_name = ?",
                (f"{stream}:batch-%", ctx.run_id, ctx.pipeline_key, vertex.ref, target.label))
