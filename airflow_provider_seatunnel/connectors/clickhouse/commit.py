"""The ClickHouse sink's commit log, its claimed publish and the roll forward of a claim (:mod:`.staging` holds
the bookkeeping tables).

ClickHouse makes two things atomic that the commit is built on: creating a table (one creator of a name
wins) and ``ALTER TABLE ... MOVE PARTITION ... TO TABLE`` (a partition's parts leave the staging table and
appear in the target in one step; a second MOVE finds nothing left to move). So:

* :class:`ClickhouseCommitLog` ``take_token`` *settles* the commit first: recorded (``done_k``) -> committed;
  claimed but not recorded (an attempt killed while publishing) -> rolled forward (:func:`roll_forward`) and
  recorded -> committed; otherwise it takes the next token (creates ``tok_k_<n+1>``).
* :func:`publish`: ALREADY when recorded; SUPERSEDED when a newer token was taken or another attempt holds the
  claim; MISMATCH when a staging table lost rows; otherwise it claims (creates ``claim_k``) and rolls forward:
  with primary_key the keys' rows are deleted from the target once (``deleted_k`` marks it), then every
  staged partition is MOVEd (``sink.move`` before each), then ``done_k`` records the commit.

The writers' staging tables are gathered into one before the publish, so an unpartitioned target's commit is
ONE move. What is not atomic: a commit whose rows fall in several partitions of a partitioned target becomes
visible partition by partition (a reader may see part of it until the restore or the publish finishes);
with primary_key the delete and the moves are separate steps, and on a target that is not a
ReplacingMergeTree ordered by the key (whose deletes name only deleted keys, never a moved row's) a roll
forward run while the claiming attempt still moves its partitions may delete rows that attempt has just
moved (both attempts alive at once, inside one publish). A target that is not a
*MergeTree is written by ``INSERT ... SELECT`` from each staging table, which a restore cannot finish
without risking a second copy: it fails naming the target instead.
"""

from __future__ import annotations

import logging
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import DataError, PipelineError
from ...spi.twophase import CommitId, Outcome, Published, Staged
from . import client, staging
from .client import quote
from .options import Endpoint

log = logging.getLogger("seatunnel.clickhouse")


def _target(detail: dict[str, Any]) -> str:
    return f"{quote(detail['database'])}.{quote(detail['table'])}"


def _delete_keys(endpoint: Endpoint, detail: dict[str, Any], key_tables: list[str]) -> None:
    """Delete the target's rows of every key the commit replaces or deletes (one mutation, waited for)."""
    if not key_tables:
        return
    keys = ", ".join(quote(k) for k in detail["primary_key"])
    union = " UNION ALL ".join(f"SELECT {keys} FROM {staging.full(t)}" for t in key_tables)
    where = f"({keys}) IN ({union})"
    if detail.get("lightweight_delete"):
        sql = f"DELETE FROM {_target(detail)} WHERE {where} SETTINGS lightweight_deletes_sync = 2"
    else:
        sql = f"ALTER TABLE {_target(detail)} DELETE WHERE {where} SETTINGS mutations_sync = 2"
    client.execute(endpoint, sql, doing=f"cannot delete the replaced rows of {detail['database']}.{detail['table']}")


def roll_forward(endpoint: Endpoint, key: str, token: int, detail: dict[str, Any],
                 ctx: RunContext | None, vertex: Vertex | None) -> int:
    """Finish attempt ``token``'s claimed publish: the keyed deletes (once), then every staged partition
    moved into the target, then the commit record. The rows the commit holds."""
    found = staging.tables(endpoint, key)
    if staging.name("done", key) in found:
        return int(found[staging.name("done", key)].get("rows", 0))
    tables = staging.staged_of(found, key, token)
    try:
        _finish(endpoint, key, found, tables, detail, ctx, vertex)
    except PipelineError:
        done = staging.tables(endpoint, key).get(staging.name("done", key))
        if done is None:
            raise
        log.info("ClickHouse: commit %s was finished by another attempt meanwhile", key)  # it dropped the staging
        return int(done.get("rows", 0))
    rows = int(detail.get("rows", 0))
    staging.create(endpoint, staging.name("done", key), {"token": token, "rows": rows})
    for table in [*tables, staging.name("man", key, token), staging.name("deleted", key), staging.name("claim", key)]:
        staging.drop(endpoint, table)
    for n in staging.tokens(found, key):
        staging.drop(endpoint, staging.name("tok", key, n))
    return rows


def _finish(endpoint: Endpoint, key: str, found: dict[str, Any], tables: list[str], detail: dict[str, Any],
            ctx: RunContext | None, vertex: Vertex | None) -> None:
    """The data steps of a claimed publish: the keyed deletes (once), then the staged partitions moved."""
    rows_tables = [t for t in tables if t.startswith("stg_")]
    if detail.get("primary_key") and staging.name("deleted", key) not in found:
        _delete_keys(endpoint, detail, [t for t in tables if t.startswith("del_")])
        staging.create(endpoint, staging.name("deleted", key))
    if detail["mode"] == "move":
        for table in rows_tables:
            for partition in staging.partitions(endpoint, table):
                if ctx is not None and vertex is not None:
                    ctx.fault_point("sink.move", vertex)
                client.execute(endpoint, f"ALTER TABLE {staging.full(table)} MOVE PARTITION ID "
                                         f"{client.literal(partition)} TO TABLE {_target(detail)}",
                               doing=f"cannot move the staged rows into {detail['database']}.{detail['table']}")
    else:
        columns = ", ".join(quote(c) for c in detail["columns"])
        for table in rows_tables:
            if ctx is not None and vertex is not None:
                ctx.fault_point("sink.move", vertex)
            client.execute(endpoint, f"INSERT INTO {_target(detail)} ({columns}) SELECT {columns} FROM "
                                     f"{staging.full(table)}",
                           doing=f"cannot insert the staged rows into {detail['database']}.{detail['table']}")


class ClickhouseCommitLog:
    """Attempt tokens, claims and commit records as tables of :data:`.staging.DATABASE`."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        staging.ensure(self.endpoint)
        key = commit.key
        found = staging.tables(self.endpoint, key)
        done = found.get(staging.name("done", key))
        if done is not None:
            return int(done.get("token", 0)), True
        claim = found.get(staging.name("claim", key))
        if claim is not None:
            token = int(claim["token"])
            if claim["detail"]["mode"] != "move":
                raise DataError(f"an attempt of commit {key} was killed while inserting into "
                                f"{claim['detail']['database']}.{claim['detail']['table']} (not a *MergeTree table: "
                                "its insert cannot be finished without a second copy): check the table, then drop "
                                f"{staging.DATABASE}.claim_{key} to write again")
            log.info("ClickHouse: attempt %d of commit %s was publishing: rolling it forward", token, key)
            roll_forward(self.endpoint, key, token, claim["detail"], None, None)
            return token, True
        token = max(staging.tokens(found, key), default=0) + 1
        while not staging.create(self.endpoint, staging.name("tok", key, token)):
            token += 1
        return token, False

    def newest_token(self, commit: CommitId) -> int:
        """The newest token taken (a recorded or claimed commit's token counts: its token tables are gone)."""
        key = commit.key
        found = staging.tables(self.endpoint, key)
        marks = [int(found[staging.name(k, key)].get("token", 0)) for k in ("done", "claim")
                 if staging.name(k, key) in found]
        return max([*staging.tokens(found, key), *marks], default=0)


def publish(endpoint: Endpoint, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """The claimed publish of one attempt (see the module's docstring)."""
    key, token = staged.commit.key, staged.token
    found = staging.tables(endpoint, key)
    if staging.name("done", key) in found:
        return Published(Outcome.ALREADY)
    claim = found.get(staging.name("claim", key))
    newest = max(staging.tokens(found, key), default=0)
    if claim is not None and int(claim["token"]) != token:
        return Published(Outcome.SUPERSEDED, newest=max(newest, int(claim["token"])))
    if claim is None:
        if newest != token:
            return Published(Outcome.SUPERSEDED, newest=newest)
        for table, rows in staged.parts:
            held = staging.count(endpoint, table) if table in found else 0
            if held != rows:
                return Published(Outcome.MISMATCH, found=held, where=f"{staging.DATABASE}.{table}", expected=rows)
        detail = {**staged.detail, "rows": staged.rows}
        if not staging.create(endpoint, staging.name("claim", key), {"token": token, "detail": detail}):
            again = staging.tables(endpoint, key).get(staging.name("claim", key), {})
            if int(again.get("token", -1)) != token:
                return Published(Outcome.SUPERSEDED, newest=int(again.get("token", newest)))
    rows = roll_forward(endpoint, key, token, {**staged.detail, "rows": staged.rows}, ctx, vertex)
    return Published(Outcome.PUBLISHED, rows=rows)


def discard(endpoint: Endpoint, key: str, token: int) -> None:
    """Delete an attempt's staging, unless its publish was claimed (a restore rolls that forward)."""
    found = staging.tables(endpoint, key)
    claim = found.get(staging.name("claim", key))
    if claim is not None and int(claim["token"]) == token and staging.name("done", key) not in found:
        return
    staging.drop_attempt(endpoint, found, key, token)


def discard_older(endpoint: Endpoint, key: str, token: int) -> int:
    """Delete the staging of every token below ``token`` but a claimed one; the attempts deleted."""
    found = staging.tables(endpoint, key)
    claim = found.get(staging.name("claim", key))
    claimed = int(claim["token"]) if claim is not None else None
    older = [t for t in staging.staged_tokens(found, key) if t < token and t != claimed]
    for t in older:
        staging.drop_attempt(endpoint, found, key, t)
    return len(older)


__all__ = ["ClickhouseCommitLog", "discard", "discard_older", "publish", "roll_forward"]
