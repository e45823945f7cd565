"""The Hbase sink's commit log, fenced claim and roll-forward copy, on the Spark driver.

HBase has no multi-row transaction; what it has is an atomic counter and ``checkAndPut`` on one row, and
puts that are idempotent per (row, column, timestamp). The sink builds the engine's protocol from those:

* **Commit log**: the table :data:`COMMITS` (family ``c``) holds one row per commit key: ``c:token``, the
  attempt counter (``atomicIncrement``), ``c:manifest-<token>`` (the staged parts an attempt's Spark write
  recorded), ``c:claim`` and ``c:committed``. ``take_token`` first rolls forward a claimed, unfinished
  commit (it then counts as committed), then raises the counter.
* **Staging**: the table :data:`STAGING` (families ``m``: row key and cell timestamp, ``d``: the cells as
  ``family:qualifier``), one row per put under ``<commit key>:<token>:<partition>:<task attempt>:``.
* **publish**: ``ALREADY`` when committed, ``SUPERSEDED`` when the counter moved on, ``MISMATCH`` when the
  staged parts hold other than the rows staged; otherwise the **claim**, ONE ``checkAndPut`` of ``c:claim``
  conditional on ``c:token`` still holding the attempt's token, is the commit point: from then on the copy is
  decided and a restore finishes it. The copy puts every staged row into the target with its staged
  timestamp (a copy repeated after a crash writes the same cells again: HBase keeps one cell per row,
  column and timestamp), then ``c:committed`` is written and the staging deleted.
* **Save modes**: once per run and target (a marker row): ``ERROR_WHEN_SCHEMA_NOT_EXIST`` and
  ``ERROR_WHEN_DATA_EXISTS`` fail the run, ``CREATE_SCHEMA_WHEN_NOT_EXIST`` creates the table with the
  sink's families; ``DROP_DATA`` and ``RECREATE_SCHEMA`` wait for the first claimed copy (the table dropped
  and created again with the sink's families).

A reader may see a copy in progress (some of the rows): HBase cannot publish many rows at once. The
guarantee is exactly-once in what the target finally holds: never a duplicate cell nor a loss.
"""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import DataError, RuntimeConfigError
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from .client import Hbase

log = logging.getLogger("seatunnel.hbase")

COMMITS = "seatunnel_commits"
STAGING = "seatunnel_staging"
#: the put attribute HBase reads a cell TTL from (milliseconds, an 8-byte long)
TTL_ATTRIBUTE = b"_ttl"
_TOKEN, _CLAIM, _COMMITTED = b"c:token", b"c:claim", b"c:committed"
_READY: set[str] = set()
#: staged rows per copy request
COPY_BATCH = 1000


def part_prefix(commit_key: str, token: int, partition: int, attempt: str) -> str:
    return f"{token_prefix(commit_key, token)}{partition:05d}:{attempt}:"


def token_prefix(commit_key: str, token: int) -> str:
    return f"{commit_key}:{token:010d}:"


def manifest_column(token: int) -> bytes:
    return f"c:manifest-{token}".encode()


def _after(prefix: bytes) -> bytes:
    """The first key after every key starting with ``prefix`` (its stop row)."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


def ensure_bookkeeping(h: Hbase) -> None:
    """The commit log and staging tables, created by whichever attempt comes first."""
    if h.label in _READY:
        return
    tables = h.tables()
    if COMMITS not in tables:
        h.create(COMMITS, ["c"])
    if STAGING not in tables:
        h.create(STAGING, ["m", "d"])
    _READY.add(h.label)


def delete_prefix(h: Hbase, prefix: str) -> int:
    """Delete the staging rows under ``prefix``; the rows deleted."""
    start = prefix.encode()
    keys = [k for k, _ in h.scan(STAGING, start, _after(start), [b"m:row"], caching=COPY_BATCH)]
    for i in range(0, len(keys), COPY_BATCH):
        h.delete_rows(STAGING, keys[i:i + COPY_BATCH], ["m", "d"])
    return len(keys)


def _count(h: Hbase, prefix: str) -> int:
    start = prefix.encode()
    return sum(1 for _ in h.scan(STAGING, start, _after(start), [b"m:row"], caching=COPY_BATCH))


def _long(value: bytes | None) -> int:
    return struct.unpack(">q", value)[0] if value and len(value) == 8 else 0


class HbaseCommitLog:
    """Attempt tokens and commit records in :data:`COMMITS`."""

    def __init__(self, h: Hbase):
        self.h = h
        ensure_bookkeeping(h)

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        row = self.h.get(COMMITS, commit.key.encode())
        if _CLAIM in row and _COMMITTED not in row:
            roll_forward(self.h, commit.key, json.loads(row[_CLAIM]))
        token = self.h.increment(COMMITS, commit.key.encode(), _TOKEN, 1)
        row = self.h.get(COMMITS, commit.key.encode())
        if _CLAIM in row and _COMMITTED not in row:  # claimed before our increment: finish it
            roll_forward(self.h, commit.key, json.loads(row[_CLAIM]))
            return token, True
        return token, _COMMITTED in row

    def newest_token(self, commit: CommitId) -> int:
        return _long(self.h.get(COMMITS, commit.key.encode()).get(_TOKEN))


def staged_parts(h: Hbase, commit_key: str, token: int) -> list[tuple[str, int, int]]:
    """The parts the attempt's Spark write recorded: (prefix, rows, partition)."""
    raw = h.get(COMMITS, commit_key.encode()).get(manifest_column(token))
    return [(str(p), int(r), int(n)) for p, r, n in json.loads(raw)] if raw else []


def roll_forward(h: Hbase, key: str, claim: Mapping[str, Any], before_record: Callable[[], None] | None = None
                 ) -> int:
    """Finish a claimed commit: the reset its save modes ask, the copy, the record; the rows copied.
    ``before_record`` runs once the rows are in place (the ``sink.commit`` fault point)."""
    target, families = str(claim["target"]), list(claim["families"])
    marker = str(claim.get("marker") or "")
    if claim.get("reset") and marker and b"c:reset_done" not in h.get(COMMITS, marker.encode()):
        if h.exists(target):
            h.drop(target)
        h.create(target, families)
        h.put_rows(COMMITS, [(marker.encode(), [(b"c:reset_done", b"1")])])
    elif not h.exists(target):
        h.create(target, families)
    attributes = {TTL_ATTRIBUTE: struct.pack(">q", int(claim["ttl"]))} if int(claim.get("ttl", -1)) > 0 else {}
    copied = 0
    for prefix, _rows in claim["parts"]:
        copied += _copy(h, str(prefix), target, bool(claim.get("wal")), attributes)
    if before_record is not None:
        before_record()
    h.put_rows(COMMITS, [(key.encode(), [(_COMMITTED, json.dumps({"token": claim["token"], "rows": copied})
                                          .encode())])])
    delete_prefix(h, token_prefix(key, int(claim["token"])))
    return copied


def _copy(h: Hbase, prefix: str, target: str, wal: bool, attributes: dict[bytes, bytes]) -> int:
    """Put the staged rows under ``prefix`` into ``target``, in their staged order, each with its timestamp
    (consecutive rows of one timestamp in one request)."""
    start = prefix.encode()
    batch: list[tuple[bytes, list[tuple[bytes, bytes]]]] = []
    batch_ts, copied = None, 0
    for _, cells in h.scan(STAGING, start, _after(start), caching=COPY_BATCH):
        rowkey, ts = cells.get(b"m:row", b""), _long(cells.get(b"m:ts"))
        data = [(c[2:], v) for c, v in sorted(cells.items()) if c.startswith(b"d:")]
        if batch and (ts != batch_ts or len(batch) >= COPY_BATCH):
            h.put_rows(target, batch, batch_ts, wal, attributes)
            batch = []
        batch_ts = ts
        if data:
            batch.append((rowkey, data))
        copied += 1
    if batch:
        h.put_rows(target, batch, batch_ts, wal, attributes)
    return copied


def publish(ctx: RunContext, vertex: Vertex, h: Hbase, staged: Staged) -> Published:
    """The fenced claim, then the copy (see the module's docstring)."""
    key = staged.commit.key
    row = h.get(COMMITS, key.encode())
    if _COMMITTED in row:
        return Published(Outcome.ALREADY)
    if _CLAIM in row:
        roll_forward(h, key, json.loads(row[_CLAIM]))
        return Published(Outcome.ALREADY)
    newest = _long(row.get(_TOKEN))
    if newest != staged.token:
        return Published(Outcome.SUPERSEDED, newest=newest)
    for prefix, rows in staged.parts:
        found = _count(h, prefix)
        if found != rows:
            return Published(Outcome.MISMATCH, found=found, where=f"staging rows {prefix}", expected=rows)
    d = staged.detail
    claim = {"token": staged.token, "parts": [list(p) for p in staged.parts], "target": staged.target,
             "families": d["families"], "wal": d["wal"], "ttl": d["ttl"], "reset": _pending_reset(h, d["marker"]),
             "marker": d["marker"], "run_id": ctx.run_id, "sink": vertex.ref, "attempt": ctx.attempt}
    if not h.check_and_put(COMMITS, key.encode(), _TOKEN, struct.pack(">q", staged.token),
                           (_CLAIM, json.dumps(claim).encode())):
        newest = _long(h.get(COMMITS, key.encode()).get(_TOKEN))
        return Published(Outcome.SUPERSEDED, newest=newest)
    ctx.fault_point("sink.move", vertex)
    roll_forward(h, key, claim, lambda: ctx.fault_point("sink.commit", vertex))
    return Published(Outcome.PUBLISHED, rows=staged.rows)


def discard(h: Hbase, staged: Staged) -> None:
    """Delete the attempt's staging, unless its commit was claimed: the restore copies it from there."""
    row = h.get(COMMITS, staged.commit.key.encode())
    if _CLAIM in row and _COMMITTED not in row and json.loads(row[_CLAIM]).get("token") == staged.token:
        log.info("commit %s is claimed: its staging stays for the restore", staged.commit.key)
        return
    delete_prefix(h, token_prefix(staged.commit.key, staged.token))


def discard_older(h: Hbase, commit: CommitId, token: int) -> int:
    """Delete the staging rows of tokens below ``token`` (they can never commit); the rows deleted."""
    dropped = 0
    for older in range(max(1, token - 50), token):
        dropped += delete_prefix(h, token_prefix(commit.key, older))
    return dropped


# ------------------------------------------------------------------------------------------------
# save modes
# ------------------------------------------------------------------------------------------------

def marker_key(ctx: RunContext, vertex: Vertex, target: str) -> str:
    return "savemode-" + digest(ctx.save_mode_run_id, ctx.pipeline_key, vertex.ref, target)


def _pending_reset(h: Hbase, marker: str) -> str:
    row = h.get(COMMITS, marker.encode())
    return "" if b"c:reset_done" in row else row.get(b"c:reset", b"").decode()


def apply_save_modes(h: Hbase, target: str, families: Sequence[str], schema_mode: str, data_mode: str,
                     marker: str) -> None:
    """The save modes of one target, once per run (the marker): checks and creation now, resets at the first
    claimed copy. A table without one of the sink's families fails the run before anything is staged."""
    if h.get(COMMITS, marker.encode()):
        return
    exists = h.exists(target)
    if schema_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise RuntimeConfigError(f"the table {target!r} does not exist (schema_save_mode = "
                                 "ERROR_WHEN_SCHEMA_NOT_EXIST)")
    if data_mode == "ERROR_WHEN_DATA_EXISTS" and exists and next(iter(h.scan(target, caching=1)), None):
        raise DataError(f"the table {target!r} holds rows (data_save_mode = ERROR_WHEN_DATA_EXISTS)")
    if not exists and schema_mode in ("CREATE_SCHEMA_WHEN_NOT_EXIST", "RECREATE_SCHEMA"):
        h.create(target, families)
        exists = True
    reset = "RECREATE_SCHEMA" if schema_mode == "RECREATE_SCHEMA" else (
        "DROP_DATA" if data_mode == "DROP_DATA" else "")
    if exists and not reset:
        missing = sorted(set(families) - h.families(target))
        if missing:
            raise RuntimeConfigError(f"the table {target!r} has no column family {', '.join(missing)} "
                                     "(check family_name)")
    h.put_rows(COMMITS, [(marker.encode(), [(b"c:reset", reset.encode()), (b"c:target", target.encode())])])
