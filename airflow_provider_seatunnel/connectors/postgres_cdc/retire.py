"""The replication slots of a job's earlier captures: marked, held while they stream, dropped once
replaced.

A capture covers a fixed set of tables; a job whose ``table-names`` change gets a new pipeline
identity, so a new checkpoint, a new capture and (unless ``slot.name`` is set) a new slot. The old
slot would keep the server's WAL from that moment on, forever. So:

* **marked**: the publication of every capture this provider creates carries a comment naming the
  provider, the capture's *lineage* and its slot. The lineage is what stays when the tables change:
  the job's checkpoint directory (``<checkpoint.root>/<job name>``), the source's plugin and output,
  and the server and database. Another job, a job of the same name under another checkpoint root, a
  slot or publication this provider did not create: none of them share it;
* **held**: a stream holds a shared advisory lock named after its slot for as long as it runs (one
  connection of the driver; the server releases it when the driver dies, however it dies). Several
  attempts of one stream may hold it at once;
* **dropped**: once a new capture of the lineage is in place (its state written), each earlier slot
  of the lineage is dropped, with its publication, under the exclusive form of that lock, taken
  without waiting: a slot whose stream runs now (another attempt, the old configuration still
  deployed somewhere) or that a reader holds right now is left alone, and a warning names it and the
  statements that drop it. A stream that starts meanwhile waits for the lock, then finds its slot
  gone and fails, saying what to delete.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from .datasource import connect

log = logging.getLogger("seatunnel.postgres_cdc")
#: the start of the comment on a publication this provider created
MARK = "airflow-provider-seatunnel capture "


def lineage(ctx: RunContext, vertex: Vertex, conn: Mapping[str, Any]) -> str:
    """What the captures of one source of one job share, whatever tables they cover."""
    stream = ctx.stream
    job_dir = stream.checkpoint.rstrip("/").rsplit("/", 1)[0] if stream is not None else ""
    key = [job_dir, vertex.plugin.lower(), vertex.output, conn["host"], int(conn["port"]), conn["dbname"]]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:24]


def lock_key(slot: str) -> int:
    """The advisory lock (a signed 64-bit key) a stream of ``slot`` holds while it runs."""
    return int.from_bytes(hashlib.sha256(f"seatunnel-slot:{slot}".encode()).digest()[:8], "big", signed=True)


def mark(conn: Any, publication: str, line: str, slot: str) -> None:
    """Say on ``publication`` that this provider created it for ``slot``, a capture of lineage ``line``."""
    text = MARK + json.dumps({"lineage": line, "slot": slot}, sort_keys=True)
    conn.execute(f"COMMENT ON PUBLICATION {publication} IS '{text}'")


def earlier(conn: Any, line: str, slot: str) -> list[tuple[str, str]]:
    """The (slot, publication) of every capture of lineage ``line`` but ``slot``'s, by the marks."""
    rows = conn.execute("SELECT pubname, obj_description(oid, 'pg_publication') FROM pg_publication "
                        "WHERE obj_description(oid, 'pg_publication') LIKE %s ORDER BY pubname",
                        (MARK + "%",)).fetchall()
    found = []
    for publication, comment in rows:
        try:
            marked = json.loads(comment[len(MARK):])
        except ValueError:
            continue
        if isinstance(marked, dict) and marked.get("lineage") == line and marked.get("slot") not in (None, slot):
            found.append((str(marked["slot"]), str(publication)))
    return found


def _how_to_drop(slot: str, publication: str) -> str:
    return f"SELECT pg_drop_replication_slot('{slot}'); DROP PUBLICATION IF EXISTS {publication}"


def retire(params: Mapping[str, Any], line: str, slot: str, label: str) -> list[str]:
    """Drop the earlier captures of lineage ``line`` (all but ``slot``'s) whose stream does not run; the
    slots dropped. One that runs, or that the server refuses to drop, is left with a warning."""
    dropped = []
    with connect(params, autocommit=True) as conn:
        for old, publication in earlier(conn, line, slot):
            key = lock_key(old)
            if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                log.warning("%s: the slot %s of an earlier capture of this job (before its tables changed) is in "
                            "use by a running stream, so it is kept; once that stream is gone for good, drop it: %s",
                            label, old, _how_to_drop(old, publication))
                continue
            try:
                row = conn.execute("SELECT active FROM pg_replication_slots WHERE slot_name = %s", (old,)).fetchone()
                if row is not None and row[0]:
                    log.warning("%s: the slot %s of an earlier capture of this job is being read right now, so it "
                                "is kept; drop it once no one reads it: %s", label, old,
                                _how_to_drop(old, publication))
                    continue
                if row is not None:
                    conn.execute("SELECT pg_drop_replication_slot(%s)", (old,))
                conn.execute(f"DROP PUBLICATION IF EXISTS {publication}")
                dropped.append(old)
                log.info("%s: dropped the slot %s and publication %s of an earlier capture of this job (its tables "
                         "changed; the slot held the server's WAL back)", label, old, publication)
            except Exception as e:  # e.g. no REPLICATION attribute: the new capture runs all the same
                log.warning("%s: could not drop the slot %s of an earlier capture of this job (%s); drop it: %s",
                            label, old, str(e).strip(), _how_to_drop(old, publication))
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
    return dropped


def hold(params: Mapping[str, Any], slot: str) -> Callable[[], None]:
    """Hold ``slot``'s lock (shared) for as long as a stream captures or reads it; the function that
    lets it go (the server lets it go too when this process dies)."""
    conn = connect(params, autocommit=True)
    try:
        conn.execute("SELECT pg_advisory_lock_shared(%s)", (lock_key(slot),))
    except BaseException:
        conn.close()
        raise
    return conn.close


def exists(params: Mapping[str, Any], slot: str) -> None:
    """A capture's slot must be there: one dropped fails the run, saying what to delete."""
    with connect(params, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchone() is None:
            raise RuntimeConfigError(f"Postgres-CDC: the replication slot {slot} of this capture is gone (dropped by "
                                     "hand, or as an earlier capture when the job's tables changed): delete the "
                                     "pipeline's checkpoint directory to start it over (a new snapshot)")


def in_use(params: Mapping[str, Any], slot: str) -> bool:
    """Whether a running stream holds ``slot``'s lock (asked without waiting)."""
    with connect(params, autocommit=True) as conn:
        key = lock_key(slot)
        if conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            return False
    return True
