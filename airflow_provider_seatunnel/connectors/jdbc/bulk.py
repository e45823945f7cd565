"""The Jdbc sink's bookkeeping for many tables of one database at once: a few statements for all of
them, never a few per table.

A whole-database copy commits hundreds of tables into one database. Per table, its attempt token,
its check after the staging write and its commit each cost several round trips and (for the token)
a transaction of their own. Here the same rows are read and written for every table of a bookkeeping
location (the schema or database holding ``seatunnel_fences``/``seatunnel_commits``) with one
statement per kind of row (``IN`` lists of at most :data:`CHUNK` keys):

* :func:`take_tokens`: every table's token incremented (or its fence row inserted at 1) in ONE
  transaction; each table still has its own fence row and token, so a newer attempt of any one
  table still supersedes exactly that table. A concurrent attempt inserting a fence row first (a
  unique violation), a deadlock or a serialization failure rolls the whole transaction back and it is
  taken again.
* :func:`newest_tokens`: every table's newest token with one query.
* :func:`publish_fast`: the commit transaction's claims (one ``UPDATE`` holding every fence row
  whose token is still the attempt's), the commit-log check, the staged-row counts (one ``GROUP BY``
  per shared staging table), each table's moves, and one commit-log row per table written by one
  ``INSERT``. It answers only when every table publishes: a table superseded, committed already or
  whose staging lost rows makes it answer None, and the caller rolls the transaction back and commits
  the tables one savepoint at a time (:mod:`.commit`), which answers each table's outcome.

Only the families whose statements here were tested against real servers (:data:`FAMILIES`); the
others keep the per-table statements. The keys are the commit log's hex digests and the numbers
integers, written as literals; every other value is bound.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.twophase import Outcome, Published, Staged
from ..sqlclient.connection import execute, query
from ..sqlclient.errors import state_of, statement_errors
from .commit import COMMITS_TABLE, FENCES_TABLE, drop_data_once, warn_plain_deletes
from .commit import publish_tables as publish_one_by_one
from .statements import TAG_COLUMN, move_statements
from .target import KIND_COLUMN, Target

log = logging.getLogger("seatunnel.jdbc")

#: the families whose multi-row statements here were tested against real servers
FAMILIES = ("postgresql", "mysql", "sqlite")
#: at most this many keys in one ``IN`` list or rows in one ``INSERT``
CHUNK = 100
#: times a batch of tokens is taken again after a conflict with a concurrent attempt
_TAKE_TRIES = 5
_HEX = re.compile(r"[0-9a-f]{1,64}")


def batched(target: Target) -> bool:
    """Whether the tables next to ``target`` are kept with the statements here."""
    return target.dialect.family in FAMILIES


def _key(key: str) -> str:
    """A commit-log key as a literal: only hex digests are written so."""
    if not _HEX.fullmatch(key):
        raise ValueError(f"not a commit-log key: {key!r}")
    return f"'{key}'"


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def in_list(keys: Sequence[str]) -> str:
    return ", ".join(_key(k) for k in keys)


def _tokens(connection: Any, fences: str, keys: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in chunks(keys):
        rows = query(connection, f"SELECT commit_id, token FROM {fences} WHERE commit_id IN ({in_list(part)})")
        out.update((str(key), int(token or 0)) for key, token in rows)
    return out


def _committed(connection: Any, commits: str, keys: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for part in chunks(keys):
        out.update(str(r[0]) for r in query(connection, f"SELECT commit_id FROM {commits} WHERE commit_id IN "
                                                        f"({in_list(part)})"))
    return out


class _Conflict(Exception):
    """A concurrent attempt changed the fence rows meanwhile: the batch is taken again."""


def _take_all(connection: Any, target: Target, ctx: RunContext, vertex: Vertex,
              labels: Mapping[str, str]) -> dict[str, tuple[int, bool]]:
    """:func:`take_tokens`' statements in the open transaction."""
    fences, keys = target.qualified(FENCES_TABLE), sorted(labels)
    attempt = int(ctx.attempt)
    updated = sum(execute(connection, f"UPDATE {fences} SET token = token + 1, attempt = {attempt}, "
                                      f"taken_at = CURRENT_TIMESTAMP WHERE commit_id IN ({in_list(part)})")
                  for part in chunks(keys))
    present = _tokens(connection, fences, keys)
    if len(present) != updated:  # a row inserted after the UPDATE: not incremented by it
        raise _Conflict
    missing = [k for k in keys if k not in present]
    for part in chunks(missing):
        rows = ", ".join(f"({_key(k)}, 1, 0, ?, ?, ?, ?, {attempt}, CURRENT_TIMESTAMP)" for k in part)
        params = tuple(v for k in part for v in (ctx.run_id, ctx.pipeline_key, vertex.ref, labels[k]))
        execute(connection, f"INSERT INTO {fences} (commit_id, token, claims, run_id, pipeline, sink, table_name, "
                            f"attempt, taken_at) VALUES {rows}", params)
    tokens = {**present, **_tokens(connection, fences, missing)} if missing else present
    done = _committed(connection, target.qualified(COMMITS_TABLE), keys)
    return {k: (tokens[k], k in done) for k in keys}


def take_tokens(connection: Any, target: Target, ctx: RunContext, vertex: Vertex,
                labels: Mapping[str, str]) -> dict[str, tuple[int, bool]]:
    """The next attempt token of each key of ``labels`` (key -> the target's label, recorded with a
    new fence row) and whether the log has its commit record, in ONE transaction. Waits while another
    attempt's commit holds a key's fence row."""
    connection.setAutoCommit(False)
    try:
        for _ in range(_TAKE_TRIES):
            try:
                out = _take_all(connection, target, ctx, vertex, labels)
                connection.commit()
                return out
            except _Conflict:
                connection.rollback()
            except statement_errors() as e:
                if not state_of(e).startswith(("23", "40")):  # a unique violation, a deadlock
                    raise
                connection.rollback()
        raise RuntimeError(f"could not take the attempt tokens of {len(labels)} tables next to {target.label}")
    except BaseException:
        connection.rollback()
        raise
    finally:
        connection.setAutoCommit(True)


def newest_tokens(connection: Any, target: Target, keys: Sequence[str]) -> dict[str, int]:
    """The newest token of each key (0: none taken)."""
    found = _tokens(connection, target.qualified(FENCES_TABLE), sorted(keys))
    return {k: found.get(k, 0) for k in keys}


#: one table of a commit: (its position in the caller's list, its config, its target, its entry)
Member = tuple[int, dict, Target, dict[str, Any]]


def _claim_all(connection: Any, fences: str, members: Sequence[Member]) -> bool:
    """Every member's fence row locked for this transaction if it still holds the attempt's token."""
    claimed = 0
    for part in chunks(members):
        holds = " OR ".join(f"(commit_id = {_key(e['commit_id'])} AND token = {int(e['token'])})"
                            for _, _, _, e in part)
        claimed += execute(connection, f"UPDATE {fences} SET claims = claims + 1 WHERE {holds}")
    return claimed == len(members)


def _staged_counts(connection: Any, members: Sequence[Member]) -> set[int] | None:
    """Whether every member's staging still holds the rows its attempt wrote (None: not), counted once
    per staging table (per number for a shared one); the members (positions) whose staged rows hold
    no DELETE row."""
    by_staging: dict[str, list[Member]] = {}
    for m in members:
        by_staging.setdefault(m[2].qualified(m[3]["staging"]), []).append(m)
    no_deletes: set[int] = set()
    for staging, parts in by_staging.items():
        dialect = parts[0][2].dialect
        deletes = f"COUNT(CASE WHEN {dialect.column(KIND_COLUMN)} = 3 THEN 1 END)"
        if any(e.get("tag") is not None for _, _, _, e in parts):
            tag = dialect.column(TAG_COLUMN)
            rows = query(connection, f"SELECT {tag}, COUNT(*), {deletes} FROM {staging} GROUP BY {tag}")
            counts = {int(t): (int(n or 0), int(d or 0)) for t, n, d in rows if t is not None}
        elif len(parts) == 1:
            (n, d), = query(connection, f"SELECT COUNT(*), {deletes} FROM {staging} st_rows")
            counts = {-1: (int(n or 0), int(d or 0))}
        else:
            return None
        for i, _, _, e in parts:
            found, deleted = counts.get(-1 if e.get("tag") is None else int(e["tag"]), (0, 0))
            if found != int(e["staged_rows"]):
                return None
            if not deleted:
                no_deletes.add(i)
    return no_deletes


def _record_all(connection: Any, commits: str, ctx: RunContext, vertex: Vertex,
                moved: Sequence[tuple[Member, int]]) -> bool:
    """One commit-log row per table; False when fewer rows went in than tables."""
    inserted = 0
    for part in chunks(moved):
        rows = ", ".join(f"({_key(m[3]['commit_id'])}, ?, ?, ?, ?, {int(ctx.attempt)}, {int(n)}, CURRENT_TIMESTAMP)"
                         for m, n in part)
        params = tuple(v for m, _ in part for v in (ctx.run_id, ctx.pipeline_key, vertex.ref, m[2].label))
        inserted += execute(connection, f"INSERT INTO {commits} (commit_id, run_id, pipeline, sink, table_name, "
                                        f"attempt, rows_moved, committed_at) VALUES {rows}", params)
    return inserted == len(moved)


def run_all(connection: Any, statements: Sequence[str]) -> int:
    """Parameterless statements on one JDBC statement object (one call into the JVM each); the rows
    they changed."""
    if not hasattr(connection, "createStatement"):  # a Python driver's connection (Spark Connect)
        return sum(execute(connection, sql) for sql in statements)
    statement = connection.createStatement()
    try:
        return sum(max(int(statement.executeUpdate(sql)), 0) for sql in statements)
    finally:
        statement.close()


def publish_fast(ctx: RunContext, vertex: Vertex, connection: Any,
                 members: Sequence[Member]) -> dict[int, Published] | None:
    """Every member published in the open transaction (see the module), or None when one cannot be
    (the caller rolls the transaction back). The ``sink.commit`` fault point fires after each table's
    moves, before any commit-log row is written."""
    if not all(batched(m[2]) for m in members):
        return None
    by_home: dict[str, list[Member]] = {}
    for m in members:
        by_home.setdefault(m[2].qualified(FENCES_TABLE), []).append(m)
    no_deletes: set[int] = set()
    for fences, part in by_home.items():
        keys = [e["commit_id"] for _, _, _, e in part]
        if not _claim_all(connection, fences, part) or _committed(connection, part[0][2].qualified(COMMITS_TABLE),
                                                                  keys):
            return None
        found = _staged_counts(connection, part)
        if found is None:
            return None
        no_deletes |= found
    out: dict[int, Published] = {}
    for part in by_home.values():
        moved = []
        for m in part:
            i, config, target, entry = m
            warn_plain_deletes(vertex, connection, target, entry)
            dropped = drop_data_once(ctx, vertex, connection, target, config)
            if dropped is not None:
                log.info("Jdbc %s: data_save_mode DROP_DATA deleted %d rows of %s in the commit", vertex.ref,
                         dropped, target.label)
            rows = run_all(connection, move_statements(target, entry, config, no_deletes=i in no_deletes))
            ctx.fault_point("sink.commit", vertex)  # data moved, commit not recorded
            moved.append((m, rows))
            out[i] = Published(Outcome.PUBLISHED, rows=rows)
        if not _record_all(connection, part[0][2].qualified(COMMITS_TABLE), ctx, vertex, moved):
            return None
    return out


def publish_tables(ctx: RunContext, vertex: Vertex, staged: Sequence[Staged]) -> list[Published]:
    """:func:`.commit.publish_tables` with the tables of one database published at once where they can
    be (:func:`publish_fast`)."""
    return publish_one_by_one(ctx, vertex, staged, fast=publish_fast)
