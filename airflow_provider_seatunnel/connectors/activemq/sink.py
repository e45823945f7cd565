"""The ActiveMQ sink as storage verbs (``spi/twophase.py``): exactly once through the broker's transactions.

Per (run id, pipeline, sink, table), a digest named ``<key>`` below:

* **stage** (:mod:`.datasource`): one Spark write; each write task sends its rows to the attempt's own
  staging queue ``seatunnel.stage.<key>.<nonce>`` in one broker transaction (whole or nothing), each
  message tagged with its task attempt; Spark's commit leaves the manifest of the task attempts it took.
* **publish**: the driver connects with the client id ``seatunnel.fence.<key>`` (or ``client_id``): the broker
  refuses that id to a second connection while the first lives, so two attempts never publish at once (the
  later one fails transiently). Holding it, a commit record (a message of ``seatunnel.commit.<key>``,
  expiring after :data:`.options.RECORD_TTL_MS`) means the run published already; else ONE transaction
  receives the staged messages of the manifest's tasks, sends each to ``queue_name``, acknowledges them and
  sends the record, and commits. A driver killed before that commit leaves nothing in the queue (the broker
  rolls the transaction back and the staged messages return); after it, the restore finds the record.
* **discard**: drains the attempt's staging queue (an attempt killed outright leaves its staging, whose
  messages expire after :data:`.options.RECORD_TTL_MS`).

The broker holds a publish's transaction whole until its commit: very large runs need the broker's memory or
store for it (``systemUsage`` of activemq.xml).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import PipelineError
from ...spi.options import run_time_options
from ...spi.pysources import register_for_write
from ...spi.twophase import CommitId, Outcome, Published, Staged, StoreFenced
from ..jsoncolumns import json_text
from .client import TIMEOUT_S, browse, connected, drain
from .options import RECORD_TTL_MS, ActiveMQOptions, Endpoint, parse
from .stomp import queue

log = logging.getLogger("seatunnel.activemq")

COMMIT_PREFIX = "seatunnel.commit."
FENCE_PREFIX = "seatunnel.fence."
STAGE_PREFIX = "seatunnel.stage."
#: messages the broker sends the publish's consumer ahead of its acknowledgements
PREFETCH = 1000


def options_of(vertex: Vertex) -> ActiveMQOptions:
    return run_time_options(parse, vertex, ActiveMQOptions)


def _endpoint(vertex: Vertex) -> Endpoint:
    endpoint = options_of(vertex).endpoint
    assert endpoint is not None
    return endpoint


def is_committed(vertex: Vertex, commit: CommitId) -> bool:
    """Whether the commit record of ``commit`` is in the broker."""
    with connected(_endpoint(vertex), "cannot read the commit record") as conn:
        return bool(browse(conn, COMMIT_PREFIX + commit.key))


def stage(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """One Spark write into a staging queue of this attempt; the manifest names the task attempts and rows."""
    from .datasource import NAME, SPEC_OPTION, ActiveMQDataSource

    options = options_of(vertex)
    endpoint = options.endpoint
    assert endpoint is not None
    staging = f"{STAGE_PREFIX}{commit.key}.{uuid.uuid4().hex[:12]}"
    spec = {"endpoint": endpoint.to_json(), "staging": staging}
    register_for_write(ctx.spark, df, ActiveMQDataSource)
    df.select(json_text(df).alias("body")).write.format(NAME).mode("append") \
        .option(SPEC_OPTION, json.dumps(spec)).save()
    with connected(endpoint, "cannot read the staging manifest") as conn:
        manifests = [json.loads(b) for b in _take(conn, staging + ".manifest")]
    if len(manifests) != 1:
        raise PipelineError(f"the staging {staging} has {len(manifests)} manifests, not one")
    parts = tuple((f"{p}.{a}", int(n)) for p, a, n in manifests[0])
    return Staged(commit, token, f"{endpoint.label} queue {options.queue!r}", sum(n for _, n in parts), parts,
                  {"staging": staging, "queue": options.queue})


def _take(conn: Any, name: str) -> list[bytes]:
    sub = "take-" + name
    conn.subscribe(queue(name), sub, ack="auto")
    out = []
    while (frame := conn.receive(1.0)) is not None:
        out.append(frame.body)
    conn.unsubscribe(sub)
    return out


def _fence(vertex: Vertex, commit: CommitId) -> str:
    return options_of(vertex).client_id or FENCE_PREFIX + commit.key


def publish(ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """Move the staged messages into the queue and record the commit in one broker transaction (fenced)."""
    from .datasource import TASK_HEADER

    endpoint = _endpoint(vertex)
    fence = _fence(vertex, staged.commit)
    try:
        with connected(endpoint, f"cannot commit into {staged.target}", client_id=fence) as conn:
            if browse(conn, COMMIT_PREFIX + staged.commit.key):
                return Published(Outcome.ALREADY)
            return _move(conn, staged, {name for name, _ in staged.parts}, TASK_HEADER)
    except PipelineError as e:
        if "already connected" in str(e):
            raise PipelineError(f"another attempt of this run is committing into {staged.target} (it holds the "
                                f"client id {fence}): retry once it ended") from None
        raise


def _move(conn: Any, staged: Staged, winners: set[str], header: str) -> Published:
    staging, target = staged.detail["staging"], queue(str(staged.detail["queue"]))
    conn.subscribe(queue(staging), "move", headers={"activemq.prefetchSize": str(PREFETCH)})
    tx = conn.begin()
    moved = 0
    while moved < staged.rows:
        frame = conn.receive(TIMEOUT_S)
        if frame is None:
            conn.abort(tx)
            return Published(Outcome.MISMATCH, found=moved, where=staging, expected=staged.rows)
        if frame.headers.get(header) in winners:
            conn.send(target, frame.body, tx, {"persistent": "true"})
            moved += 1
        conn.ack(frame, tx)
    record = json.dumps({"rows": moved, "at": time.time()}).encode()
    conn.send(queue(COMMIT_PREFIX + staged.commit.key), record, tx,
              {"persistent": "true", "expires": str(int(time.time() * 1000) + RECORD_TTL_MS)})
    conn.commit(tx)
    log.info("ActiveMQ: %d messages committed into %s", moved, staged.target)
    return Published(Outcome.PUBLISHED, rows=moved)


def discard(ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    staging = staged.detail.get("staging")
    if not staging:
        return
    with connected(_endpoint(vertex), "cannot drain the staging") as conn:
        drain(conn, str(staging))


class ActiveMQSinkVerbs:
    """The sink's storage verbs; the broker's transaction with the commit record fences (no token)."""

    stage = staticmethod(stage)
    publish = staticmethod(publish)
    discard = staticmethod(discard)

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> StoreFenced:
        return StoreFenced(lambda commit: is_committed(vertex, commit))
