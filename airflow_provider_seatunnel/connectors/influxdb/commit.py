"""The InfluxDB sink's storage verbs on the driver: the commit log, the claimed publish and its roll forward.

InfluxDB has no transaction and no conditional write; a point is identified by (measurement, tag set,
time) and a rewrite of it replaces it. So the commit is a claimed journal rolled forward:

* :class:`InfluxCommitLog` ``take_token`` first *settles* the commit: recorded (``done``) -> committed; a
  claim whose staging is whole (an attempt killed while publishing) -> rolled forward (its staged points
  written again: the same points, so nothing twice) and recorded -> committed; otherwise the next token.
* :func:`publish`: refuses when the commit is recorded (ALREADY), a newer token was taken or another
  attempt claimed it (SUPERSEDED), or the staging lacks rows (MISMATCH); refuses a field whose type the
  measurement holds with another type (a data error, before any write); then writes the claim, reads it
  back (an overlapping attempt's later claim wins, this one backs off), writes the staged points
  ``batch_size`` a request (``sink.move`` before each) and records the commit.

Fencing is as strong as InfluxDB allows: two attempts whose claims land within one read-back of each other
may both write. With ``key_time`` they write the same points (no duplicate); without it, each attempt's
staging time differs and both sets may land. docs/influxdb.md says so.
"""

from __future__ import annotations

import logging
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import DataError
from ...spi.twophase import CommitId, Outcome, Published, Staged
from . import client, staging
from .options import Endpoint, InfluxOptions

log = logging.getLogger("seatunnel.influxdb")

#: InfluxDB's field type of each SeaTunnel type the sink writes
INFLUX_TYPES = {"boolean": "boolean", "smallint": "integer", "int": "integer", "bigint": "integer",
                "tinyint": "integer", "float": "float", "double": "float", "string": "string"}


def roll_forward(endpoint: Endpoint, detail: dict[str, Any], commit_key: str, token: int,
                 ctx: RunContext | None, vertex: Vertex | None) -> int:
    """Write an attempt's staged points into the target, ``batch_size`` a request; the points written."""
    batch, written = max(1, int(detail["batch_size"])), 0
    buffer: list[str] = []

    def flush() -> None:
        if ctx is not None and vertex is not None:
            ctx.fault_point("sink.move", vertex)
        client.write(endpoint, detail["database"], buffer, detail.get("rp"), float(detail["write_timeout"]),
                     int(detail["max_retries"]), int(detail["backoff_ms"]), int(detail["max_backoff_ms"]),
                     doing=f"cannot write into {detail['database']!r}")
        buffer.clear()

    for line in staging.staged_lines(endpoint, commit_key, token):
        buffer.append(line)
        written += 1
        if len(buffer) >= batch:
            flush()
    if buffer:
        flush()
    return written


def detail_of(options: InfluxOptions) -> dict[str, Any]:
    """What a roll forward needs of the block (no credentials)."""
    return {"database": options.database, "rp": options.rp, "batch_size": options.batch_size,
            "write_timeout": options.write_timeout, "max_retries": options.max_retries,
            "backoff_ms": options.backoff_ms, "max_backoff_ms": options.max_backoff_ms}


class InfluxCommitLog:
    """Attempt tokens, claims and commit records in ``_seatunnel.commits`` (:mod:`.staging`)."""

    def __init__(self, endpoint: Endpoint, options: InfluxOptions) -> None:
        self.endpoint, self.options = endpoint, options

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        staging.ensure(self.endpoint)
        entries = staging.read_log(self.endpoint, commit.key)
        if "done" in entries:
            return entries["done"][0], True
        claim = entries.get("claim")
        if claim is not None and staging.count_staged(self.endpoint, commit.key, claim[0]) == claim[1]:
            log.info("InfluxDB: attempt %d of commit %s was publishing: rolling it forward", claim[0], commit.key)
            roll_forward(self.endpoint, detail_of(self.options), commit.key, claim[0], None, None)
            staging.write_log(self.endpoint, commit.key, "done", claim[0], claim[1])
            staging.drop_staging(self.endpoint, commit.key, claim[0])
            return claim[0], True
        if claim is not None:  # its staging expired or was lost: the claim can never be finished
            log.warning("InfluxDB: attempt %d of commit %s claimed its publish but its staging is gone: staging "
                        "again", claim[0], commit.key)
            staging.drop_log(self.endpoint, commit.key, "claim")
        token = max(entries.get("token", (0, 0))[0], claim[0] if claim else 0) + 1
        staging.write_log(self.endpoint, commit.key, "token", token)
        return token, False

    def newest_token(self, commit: CommitId) -> int:
        return staging.read_log(self.endpoint, commit.key).get("token", (0, 0))[0]


def check_types(endpoint: Endpoint, staged: Staged) -> None:
    """Refuse a field the measurement holds with another type (InfluxDB would write the rest of a batch)."""
    detail = staged.detail
    held = staging.field_types(endpoint, detail["database"], detail["measurement"])
    for name, kind in detail["field_kinds"].items():
        want = INFLUX_TYPES.get(kind)
        if name in held and want and held[name] != want:
            raise DataError(f"the field '{name}' of measurement {detail['measurement']!r} holds {held[name]} "
                            f"values; this sink writes {kind} ({want}): nothing was written")


def publish(endpoint: Endpoint, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """The claimed publish of one attempt (see the module's docstring)."""
    key, token = staged.commit.key, staged.token
    entries = staging.read_log(endpoint, key)
    if "done" in entries:
        return Published(Outcome.ALREADY)
    newest = entries.get("token", (0, 0))[0]
    claim = entries.get("claim")
    if newest != token or (claim is not None and claim[0] != token):
        return Published(Outcome.SUPERSEDED, newest=max(newest, claim[0] if claim else 0))
    found = staging.count_staged(endpoint, key, token)
    if found != staged.rows:
        return Published(Outcome.MISMATCH, found=found, where=f"{staging.DATABASE} staging of attempt {token}")
    check_types(endpoint, staged)
    staging.write_log(endpoint, key, "claim", token, staged.rows)
    entries = staging.read_log(endpoint, key)
    if entries.get("claim", (0, 0))[0] != token or entries.get("token", (0, 0))[0] != token:
        return Published(Outcome.SUPERSEDED, newest=max(entries.get("claim", (0, 0))[0],
                                                        entries.get("token", (0, 0))[0]))
    written = roll_forward(endpoint, dict(staged.detail), key, token, ctx, vertex)
    staging.write_log(endpoint, key, "done", token, written)
    staging.drop_staging(endpoint, key, token)
    return Published(Outcome.PUBLISHED, rows=written)


def discard(endpoint: Endpoint, commit_key: str, token: int) -> None:
    """Delete an attempt's staging, unless its publish started (a restore rolls that forward)."""
    claim = staging.read_log(endpoint, commit_key).get("claim")
    if claim is not None and claim[0] == token:
        return
    staging.drop_staging(endpoint, commit_key, token)


def discard_older(endpoint: Endpoint, commit_key: str, token: int) -> int:
    """Delete the staging of every token below ``token`` but a claimed one; the attempts deleted."""
    claim = staging.read_log(endpoint, commit_key).get("claim")
    older = [t for t in staging.staged_tokens(endpoint, commit_key) if t < token and (claim is None or t != claim[0])]
    for t in older:
        staging.drop_staging(endpoint, commit_key, t)
    return len(older)
