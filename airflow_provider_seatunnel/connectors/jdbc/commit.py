"""The Jdbc sink's commit: one database transaction per database (URL and login) that moves the staged
rows of all its tables into their targets and records each table's commit in the commit log, keyed by
run id, pipeline, sink and table (one commit-log row per table).

``seatunnel_commits`` (the commit log), ``seatunnel_fences`` (the attempt tokens) and
``seatunnel_savemodes`` (the save-mode markers) live next to the target and are created when
missing. Before it stages, an attempt takes its token (:func:`take_token`: the key's row
incremented in its own transaction); its staging table is named by it. The commit transaction, per
table under its own savepoint (:func:`publish_tables`):

1. claims the key's fence row *if it still holds the attempt's token* (an UPDATE that locks the
   row until COMMIT: a newer attempt taking a token waits for this commit, then finds it);
   0 rows: a newer attempt exists, so the table's savepoint is rolled back and it answers
   SUPERSEDED (the engine drops its staging and raises :class:`~...spi.fencing.Superseded`);
2. if the log holds the key, nothing more (an earlier attempt committed);
3. checks the staging table holds the rows the attempt wrote (else MISMATCH:
   :class:`~...spi.fencing.StagingMismatch`);
4. ``DROP_DATA``: the run's first commit into the target deletes its rows (a marker row in
   ``seatunnel_savemodes``, inserted under a savepoint, makes it once per run and sink);
5. the move statements, the log row (with the rows moved);

then one COMMIT for every table of the database; then the stagings are dropped. The same steps for
every table at once, with a few statements for all of them, come first where the caller passes them
(:func:`.bulk.publish_fast`); when one table cannot publish they are rolled back and the tables go
one savepoint at a time as above. A kill anywhere
before the database commit rolls every table of the transaction back; a retry after it finds each
table's log row.

Retention: after the commit, the bookkeeping rows (and ``seatunnel_schema_changes``') older than the
sink's ``bookkeeping_retention_days`` (default 30; 0 keeps them forever) are deleted next to each
target written (:func:`prune_bookkeeping`): one DELETE per table and database transaction, never the
rows of the committing run, best effort (a failure is a warning, the commit stands). A restore needs
only its own run's rows, and a fence row is renewed by every attempt, so only a run cleared or re-run
after the retention finds no record: it writes again what it wrote then.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.schema import TableKeys
from ...spi.twophase import Outcome, Published, Staged, digest
from ..sqlclient.connection import connect, execute, query, rollback_quietly
from ..sqlclient.errors import access_errors, reraise, state_of, statement_errors
from .options import mask, sink_options
from .statements import move_statements, staged_source
from .target import KIND_COLUMN, Target, table_exists, target_of

log = logging.getLogger("seatunnel.jdbc")

COMMITS_TABLE = "seatunnel_commits"
SAVEMODES_TABLE = "seatunnel_savemodes"
FENCES_TABLE = "seatunnel_fences"

#: the bookkeeping tables' columns (``{bigint}``, ``{timestamp}``: the dialect's types for them,
#: :attr:`..sqlclient.dialects.Dialect.bookkeeping`: Oracle has no BIGINT, SQL Server's TIMESTAMP is a row version)
_BOOKKEEPING = {
    COMMITS_TABLE: "(commit_id VARCHAR(64) NOT NULL PRIMARY KEY, run_id VARCHAR(512) NOT NULL, "
                   "pipeline VARCHAR(512) NOT NULL, sink VARCHAR(255) NOT NULL, table_name VARCHAR(1024) NOT NULL, "
                   "attempt INTEGER, rows_moved {bigint}, committed_at {timestamp})",
    FENCES_TABLE: "(commit_id VARCHAR(64) NOT NULL PRIMARY KEY, token {bigint} NOT NULL, claims {bigint} NOT NULL, "
                  "run_id VARCHAR(512) NOT NULL, pipeline VARCHAR(512) NOT NULL, sink VARCHAR(255) NOT NULL, "
                  "table_name VARCHAR(1024) NOT NULL, attempt INTEGER, taken_at {timestamp})",
    SAVEMODES_TABLE: "(savemode_id VARCHAR(64) NOT NULL PRIMARY KEY, run_id VARCHAR(512) NOT NULL, "
                     "sink VARCHAR(255) NOT NULL, table_name VARCHAR(1024) NOT NULL, actions VARCHAR(4000), "
                     "done_at {timestamp})",
}


#: the sink option: the days the bookkeeping rows are kept (0: forever)
RETENTION_OPTION = "bookkeeping_retention_days"
#: the bookkeeping tables the retention prunes, each with its time column and whether it names the run
_AGED = ((COMMITS_TABLE, "committed_at", True), (FENCES_TABLE, "taken_at", True),
         (SAVEMODES_TABLE, "done_at", True), ("seatunnel_schema_changes", "applied_at", False))
#: a timestamp literal per dialect family (default: JDBC's escape, which every driver but SQLite's reads)
_TIMESTAMP_LITERAL = {"sqlite": "'{}'"}


def prune_bookkeeping(connection: Any, target: Target, run_id: str, days: int, now: datetime | None = None) -> int:
    """Delete the bookkeeping rows next to ``target`` older than ``days`` (by their time column, in
    the database's session time: within a day), except the run ``run_id``'s; the rows deleted. A
    table not there is skipped. ``days`` 0 or less: nothing."""
    if days <= 0:
        return 0
    cutoff = (now or datetime.now(UTC)).replace(tzinfo=None) - timedelta(days=days)
    stamp = _TIMESTAMP_LITERAL.get(target.dialect.family, "{{ts '{}'}}").format(cutoff.strftime("%Y-%m-%d %H:%M:%S"))
    deleted = 0
    for table, column, named in _AGED:
        if not named and not table_exists(connection, target, table):  # the others: ensure_bookkeeping's
            continue
        where = f"{column} < {stamp}" + (" AND run_id <> ?" if named else "")
        deleted += execute(connection, f"DELETE FROM {target.qualified(table)} WHERE {where}",
                           (run_id,) if named else ())
    return deleted


def _prune_after_commit(ctx: RunContext, connection: Any, members: Sequence[tuple[int, dict, Target, Any]]) -> None:
    """:func:`prune_bookkeeping` once per bookkeeping location of the committed tables (best effort)."""
    done: set[str] = set()
    for _, config, target, _ in members:
        where = target.qualified(COMMITS_TABLE)
        if where in done:
            continue
        done.add(where)
        try:
            deleted = prune_bookkeeping(connection, target, ctx.run_id, int(sink_options(config)[RETENTION_OPTION]))
        except Exception as e:
            log.warning("Jdbc: could not prune the bookkeeping rows next to %s: %s", target.label,
                        mask(str(e), target.conn.password))
            continue
        if deleted:
            log.info("Jdbc: deleted %d bookkeeping rows older than the retention next to %s", deleted, target.label)


def bookkeeping_sql(target: Target) -> list[tuple[str, str]]:
    """(table, CREATE TABLE statement) of each bookkeeping table next to the target."""
    bigint, timestamp = target.dialect.bookkeeping
    return [(name, f"CREATE TABLE {target.qualified(name)} {columns.format(bigint=bigint, timestamp=timestamp)}")
            for name, columns in _BOOKKEEPING.items()]


def ensure_bookkeeping(connection: Any, target: Target) -> None:
    """Create the commit log and the save-mode markers next to the target when missing."""
    for name, statement in bookkeeping_sql(target):
        if table_exists(connection, target, name):
            continue
        try:
            execute(connection, statement)
        except statement_errors():
            if not table_exists(connection, target, name):  # else a concurrent pipeline created it
                raise


def is_committed(connection: Any, target: Target, key: str) -> bool:
    return bool(query(connection, f"SELECT 1 FROM {target.qualified(COMMITS_TABLE)} WHERE commit_id = ?", (key,)))


def drop_quietly(connection: Any, ident: str) -> None:
    with suppress(*access_errors()):  # it may not exist (or be gone already)
        execute(connection, f"DROP TABLE {ident}")


def _record_commit(connection: Any, target: Target, ctx: RunContext, vertex: Vertex, entry: Mapping[str, Any],
                   moved: int) -> bool:
    """Insert the commit-log row; False when a concurrent attempt recorded it first."""
    try:
        execute(connection, f"INSERT INTO {target.qualified(COMMITS_TABLE)} (commit_id, run_id, pipeline, sink, "
                            "table_name, attempt, rows_moved, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                            "CURRENT_TIMESTAMP)",
                (entry["commit_id"], ctx.run_id, ctx.pipeline_key, vertex.ref, target.label, int(ctx.attempt), moved))
    except statement_errors() as e:
        if state_of(e).startswith("23"):
            return False
        raise
    return True


def take_token(connection: Any, target: Target, ctx: RunContext, vertex: Vertex, key: str) -> int:
    """Take the next attempt token of ``key`` (its own transaction). Waits while another attempt's
    commit holds the key's fence row."""
    fences = target.qualified(FENCES_TABLE)
    connection.setAutoCommit(False)
    try:
        for _ in range(3):
            if not execute(connection, f"UPDATE {fences} SET token = token + 1, attempt = ?, "
                                       "taken_at = CURRENT_TIMESTAMP WHERE commit_id = ?", (int(ctx.attempt), key)):
                try:
                    execute(connection, f"INSERT INTO {fences} (commit_id, token, claims, run_id, pipeline, sink, "
                                        "table_name, attempt, taken_at) VALUES (?, 1, 0, ?, ?, ?, ?, ?, "
                                        "CURRENT_TIMESTAMP)",
                            (key, ctx.run_id, ctx.pipeline_key, vertex.ref, target.label, int(ctx.attempt)))
                except statement_errors() as e:
                    if not state_of(e).startswith("23"):
                        raise
                    connection.rollback()  # a concurrent attempt inserted it: increment it instead
                    continue
            token = newest_token(connection, target, key)
            connection.commit()
            return token
        raise RuntimeError(f"could not take an attempt token for {target.label}")
    except BaseException:
        rollback_quietly(connection)
        raise
    finally:
        connection.setAutoCommit(True)


def _claim(connection: Any, target: Target, entry: Mapping[str, Any]) -> bool:
    """Lock the key's fence row for this transaction if it still holds the attempt's token."""
    return bool(execute(connection, f"UPDATE {target.qualified(FENCES_TABLE)} SET claims = claims + 1 "
                                    "WHERE commit_id = ? AND token = ?", (entry["commit_id"], int(entry["token"]))))


def newest_token(connection: Any, target: Target, key: str) -> int:
    rows = query(connection, f"SELECT token FROM {target.qualified(FENCES_TABLE)} WHERE commit_id = ?", (key,))
    return int(rows[0][0] or 0) if rows else 0


def entry_of(staged: Staged) -> dict[str, Any]:
    """What the transaction statements take from one table's commit message."""
    return {"commit_id": staged.commit.long_key, "token": staged.token, "staged_rows": staged.rows,
            **staged.detail}


def publish_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """One table's transaction (:func:`publish_tables` of one table)."""
    return publish_tables(ctx, vertex, [staged])[0]


def publish_tables(ctx: RunContext, vertex: Vertex, staged: Sequence[Staged],
                   fast: Fast | None = None) -> list[Published]:
    """The tables' commits, one database transaction per database (URL and login) for all its tables,
    taken in the order of their names (concurrent clones lock fence rows in the same order); the
    answers in the order of ``staged``. Per table, under its own savepoint: if the attempt's token is
    still the newest and the commit log has no row, the staged rows move into the target and the
    commit is recorded; otherwise the savepoint is rolled back and the table answers SUPERSEDED,
    ALREADY or MISMATCH, the other tables of the transaction going on. One COMMIT then makes every
    moved table and its commit-log row visible together; a failure (or a kill) before it leaves all of
    them as they were. The stagings are dropped afterwards, unless an attempt was overtaken or its
    staging lost rows (the engine discards it then)."""
    groups: dict[tuple, list[tuple[int, dict, Target, dict[str, Any]]]] = {}
    for i, one in enumerate(staged):
        entry = entry_of(one)
        config, target = target_of(vertex.config, one.commit.table, entry["columns"],
                                   TableKeys.from_json(entry.get("keys")))
        conn = target.conn
        groups.setdefault((conn.url, conn.user, tuple(sorted(conn.connection_properties().items()))), []).append(
            (i, config, target, entry))
    answers: dict[int, Published] = {}
    for members in groups.values():
        members.sort(key=lambda m: (m[2].label, m[3]["commit_id"]))
        answers.update(_publish_group(ctx, vertex, members, fast))
    return [answers[i] for i in range(len(staged))]


def _publish_group(ctx: RunContext, vertex: Vertex, members: list[tuple[int, dict, Target, dict[str, Any]]],
                   fast: Fast | None = None) -> dict[int, Published]:
    """One transaction over the tables of one database (see :func:`publish_tables`): every table at
    once by ``fast`` where it answers, else (rolled back) one savepoint per table."""
    conn = members[0][2].conn
    label = members[0][2].label if len(members) == 1 else f"{len(members)} tables"
    out: dict[int, Published] = {}
    try:
        with connect(ctx.spark, conn, autocommit=False) as connection:
            try:
                found = _try_fast(ctx, vertex, connection, members, fast)
                if found is not None:
                    out = found
                else:
                    for i, config, target, entry in members:
                        out[i] = _publish_one(ctx, vertex, connection, target, entry, config)
                connection.commit()
            except BaseException:
                rollback_quietly(connection)
                raise
            connection.setAutoCommit(True)
            _drop_stagings(connection, [(m[2], m[3]["staging"]) for m in members
                                        if out[m[0]].outcome is not Outcome.MISMATCH])
            _prune_after_commit(ctx, connection, members)
    except Exception as e:
        raise reraise(e, f"cannot commit into {label}", conn) from None
    return out


#: a commit of every table of one database at once (:func:`.bulk.publish_fast`): their answers, or None
Fast = Callable[[RunContext, Vertex, Any, Sequence[tuple[int, dict, Target, dict[str, Any]]]],
                "dict[int, Published] | None"]


def _try_fast(ctx: RunContext, vertex: Vertex, connection: Any, members: list[tuple[int, dict, Target, dict[str, Any]]],
              fast: Fast | None) -> dict[int, Published] | None:
    """``fast``'s answers for several tables, or None (its statements rolled back): the tables then go
    one savepoint at a time, which answers each table's own outcome or raises its own error."""
    if fast is None or len(members) < 2:
        return None
    savepoint = connection.setSavepoint()
    try:
        found = fast(ctx, vertex, connection, members)
    except statement_errors() as e:
        log.info("Jdbc %s: committing table by table (%s)", vertex.ref, mask(str(e), members[0][2].conn.password))
        found = None
    if found is None:
        connection.rollback(savepoint)
    return found


def _publish_one(ctx: RunContext, vertex: Vertex, connection: Any, target: Target, entry: Mapping[str, Any],
                 config: Mapping[str, Any]) -> Published:
    """One table in the open transaction, under a savepoint rolled back unless its rows moved."""
    savepoint = connection.setSavepoint()
    if not _claim(connection, target, entry):
        connection.rollback(savepoint)
        return Published(Outcome.SUPERSEDED, newest=newest_token(connection, target, entry["commit_id"]))
    if is_committed(connection, target, entry["commit_id"]):
        connection.rollback(savepoint)
        return Published(Outcome.ALREADY)
    answer = _move_and_record(ctx, vertex, connection, target, entry, config)
    if answer.outcome is not Outcome.PUBLISHED:
        connection.rollback(savepoint)
    return answer


def _drop_stagings(connection: Any, stagings: list[tuple[Target, str]]) -> None:
    """Drop the staging tables (best effort): in one statement where the dialect drops several at once."""
    stagings = list({(target.qualified(name), name): (target, name) for target, name in stagings}.values())
    if len(stagings) > 1 and stagings[0][0].dialect.family in ("postgresql", "mysql"):
        try:
            execute(connection, "DROP TABLE " + ", ".join(t.qualified(name) for t, name in stagings))
            return
        except statement_errors():
            pass  # one is gone already: each on its own
    for target, name in stagings:
        drop_quietly(connection, target.qualified(name))


def _staged_rows(connection: Any, staging: str) -> int:
    (found,), = query(connection, f"SELECT COUNT(*) FROM {staging} st_rows")
    return int(found or 0)


def warn_plain_deletes(vertex: Vertex, connection: Any, target: Target, entry: Mapping[str, Any]) -> None:
    """Without primary keys (and a ``query``), a warning counting the DELETE/UPDATE_BEFORE rows staged,
    which are written as plain rows."""
    if target.query is None and not target.primary_keys:
        (deletes,), = query(connection, f"SELECT COUNT(*) FROM {staged_source(target, entry)} s WHERE "
                                        f"s.{target.dialect.column(KIND_COLUMN)} IN (1, 3)")
        if int(deletes or 0):
            log.warning("Jdbc %s: %s DELETE/UPDATE_BEFORE rows are written as plain rows (set "
                        "primary_keys to apply them)", vertex.ref, deletes)


def drop_data_once(ctx: RunContext, vertex: Vertex, connection: Any, target: Target,
                    config: Mapping[str, Any]) -> int | None:
    """``DROP_DATA``: delete the target's rows in this transaction if no earlier commit of the run
    (or stream) did; the rows deleted, or None when it was done before."""
    if target.table is None or sink_options(config)["data_save_mode"] != "DROP_DATA":
        return None
    key = digest(ctx.save_mode_run_id, vertex.ref, target.label, "DROP_DATA", length=64)
    savepoint = connection.setSavepoint()
    try:
        execute(connection, f"INSERT INTO {target.qualified(SAVEMODES_TABLE)} (savemode_id, run_id, sink, "
                            "table_name, actions, done_at) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)",
                (key, ctx.run_id, vertex.ref, target.label, f"dropped the data of {target.label} at commit"))
    except statement_errors() as e:
        if not state_of(e).startswith("23"):
            raise
        connection.rollback(savepoint)  # an earlier commit of this run dropped it
        return None
    return execute(connection, f"DELETE FROM {target.ident}")


def _move_and_record(ctx: RunContext, vertex: Vertex, connection: Any, target: Target, entry: Mapping[str, Any],
                     config: Mapping[str, Any]) -> Published:
    """In the claimed transaction: the staging checked, DROP_DATA once, the moves, the commit record
    (the caller commits, or rolls the table's savepoint back when it did not publish)."""
    staging = staged_source(target, entry)
    found = _staged_rows(connection, staging)
    if found != int(entry["staged_rows"]):
        return Published(Outcome.MISMATCH, found=found, where=f"table {entry['staging']}")
    warn_plain_deletes(vertex, connection, target, entry)
    dropped = drop_data_once(ctx, vertex, connection, target, config)
    moved = sum(execute(connection, sql) for sql in move_statements(target, entry, config))
    ctx.fault_point("sink.commit", vertex)  # data moved, commit not recorded
    if not _record_commit(connection, target, ctx, vertex, entry, moved):
        log.info("Jdbc %s: a concurrent attempt committed %s first", vertex.ref, target.label)
        return Published(Outcome.ALREADY)
    if dropped is not None:
        log.info("Jdbc %s: data_save_mode DROP_DATA deleted %d rows of %s in the commit", vertex.ref, dropped,
                 target.label)
    return Published(Outcome.PUBLISHED, rows=moved)


def drop_staging(ctx: RunContext, target: Target, staging: str) -> None:
    """Drop one table's staging table (best effort: the next attempt replaces it anyway)."""
    try:
        with connect(ctx.spark, target.conn) as connection:
            drop_quietly(connection, target.qualified(staging))
    except Exception as e:
        log.warning("Jdbc: could not drop the staging table %s: %s", staging, mask(str(e), target.conn.password))


def retire_table(ctx: RunContext, vertex: Vertex, staged: Staged, stream: str) -> None:
    """Delete the commit-log rows of stream ``stream``'s micro-batches before this one for one table."""
    _, target = target_of(vertex.config, staged.commit.table, list(staged.detail.get("columns") or ()))
    with connect(ctx.spark, target.conn) as connection:
        for table in (COMMITS_TABLE, FENCES_TABLE):
            execute(connection, f"DELETE FROM {target.qualified(table)} WHERE run_id LIKE ? AND run_id <> ? "
                                "AND pipeline = ? AND sink = ? AND table_name = ?",
                    (f"{stream}:batch-%", ctx.run_id, ctx.pipeline_key, vertex.ref, target.label))
