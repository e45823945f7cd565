"""The MongoDB sink's bookkeeping in the target database: attempt tokens, staging, the fenced commit.

Pure Python over a ``pymongo`` database (the Spark writers and the driver share it). Per commit key
``K`` (a digest of run id, pipeline, sink and table) the collection :data:`COMMITS` holds one
document ``{_id: K, token, claimed, committed, ...}``, and each attempt stages into its own collection
``__seatunnel_stage_<K>_<token>``: one document per row, the operation SeaTunnel's writer would send
(``i`` insert, ``I`` insert of a row with its own ``_id``, ``u`` update by key, ``s`` upsert by key,
``x`` delete by key), plus the manifest (:data:`MANIFEST`: the task attempts that count).

MongoDB has no atomic multi-document step without transactions (which FerretDB lacks), so the commit
is a claimed, replayable log:

* :func:`take_token` increments ``token`` atomically (``findAndModify`` with upsert) and answers
  whether the commit is recorded; a commit **claimed** but not recorded (an attempt died while
  applying it) is first completed from the claimed staging (:func:`roll_forward`): it is then recorded;
* :func:`publish` checks the staging holds what the attempt staged, refuses an insert whose own
  ``_id`` exists already (nothing done), then **claims** the commit with one conditional
  ``findAndModify`` that matches only while ``token`` is still the attempt's and nothing was claimed
  or recorded: an older attempt can never claim after a newer one took a token. It applies the
  operations in staging order (ordered bulk writes of ``buffer-flush.max-rows``), records the commit
  and drops the staging;
* applying is idempotent: inserts carry ``_id`` s fixed at staging, so a replay after a partial apply
  skips the duplicates it finds, and updates, upserts and deletes by key replayed in order end in the
  same documents. A commit is therefore applied once whoever finishes it, but a reader may see part of
  it while it is applied.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...spi.errors import DataError
from ...spi.twophase import Outcome, Published

COMMITS = "__seatunnel_commits"
STAGE_PREFIX = "__seatunnel_stage_"
MANIFEST = "manifest"
DUPLICATE_KEY = 11000
#: row kinds (``spi.rows``): INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE
_INSERT, _UPDATE_BEFORE, _UPDATE_AFTER, _DELETE = 0, 1, 2, 3

log = logging.getLogger("seatunnel.mongodb")


def stage_name(k: str, token: int) -> str:
    return f"{STAGE_PREFIX}{k}_{int(token)}"


def token_of_stage(name: str, k: str) -> int | None:
    prefix = f"{STAGE_PREFIX}{k}_"
    if not name.startswith(prefix):
        return None
    try:
        return int(name[len(prefix):])
    except ValueError:
        return None


def staged_op(doc: dict[str, Any], kind: int, keys: Sequence[str], upsert: bool) -> dict[str, Any] | None:
    """The staged operation of one row, as SeaTunnel's writer maps row kinds (None: skipped)."""
    from bson import ObjectId

    if kind == _UPDATE_BEFORE:
        return None
    if kind == _INSERT and not upsert:
        if "_id" in doc and doc["_id"] is not None:
            return {"o": "I", "d": doc}
        return {"o": "i", "d": {"_id": ObjectId(), **{k: v for k, v in doc.items() if k != "_id"}}}
    key = {k: doc[k] for k in keys if k in doc}
    if not key:
        raise DataError("an UPDATE or DELETE row (or any row with upsert-enable) needs primary-key fields to find "
                        "its document: set primary-key")
    if kind == _DELETE:
        return {"o": "x", "f": key}
    return {"o": "s" if upsert else "u", "f": key, "d": {k: v for k, v in doc.items() if k != "_id"}}


# ------------------------------------------------------------------------------------------------
# the commit log
# ------------------------------------------------------------------------------------------------

def take_token(db: Any, k: str, target: str, batch: int) -> tuple[int, bool]:
    """The next attempt token of ``k`` and whether ``k`` is committed (a claimed commit completed first)."""
    from pymongo import ReturnDocument

    doc = db[COMMITS].find_one_and_update({"_id": k}, {"$inc": {"token": 1}}, upsert=True,
                                          return_document=ReturnDocument.AFTER)
    if doc.get("committed"):
        return int(doc["token"]), True
    if doc.get("claimed"):
        roll_forward(db, k, int(doc["claimed"]), target, batch)
        return int(doc["token"]), True
    return int(doc["token"]), False


def newest_token(db: Any, k: str) -> int:
    doc = db[COMMITS].find_one({"_id": k}, {"token": 1})
    return int(doc["token"]) if doc else 0


def manifest(db: Any, k: str, token: int) -> list[tuple[str, int, int]]:
    """The task attempts Spark committed: (attempt, rows, partition), by partition."""
    doc = db[stage_name(k, token)].find_one({"_id": MANIFEST}) or {}
    return [(str(p["a"]), int(p["r"]), int(p["p"])) for p in doc.get("parts", [])]


def _ops(db: Any, k: str, token: int, attempts: Sequence[str], batch: int,
         only: str | None = None) -> Iterator[dict[str, Any]]:
    query: dict[str, Any] = {"a": {"$in": list(attempts)}}
    if only:
        query["o"] = only
    yield from db[stage_name(k, token)].find(query).sort("_id", 1).batch_size(batch)


def _write_model(op: Mapping[str, Any]) -> Any:
    from pymongo import DeleteOne, InsertOne, UpdateOne

    kind = op["o"]
    if kind in ("i", "I"):
        return InsertOne(op["d"])
    if kind == "x":
        return DeleteOne(op["f"])
    if not op["d"]:
        return None  # nothing to set
    return UpdateOne(op["f"], {"$set": op["d"]}, upsert=kind == "s")


def _bulk(target: Any, models: list[Any], resume: bool) -> None:
    """One ordered bulk write; on a replay, an insert finding its document already skips it."""
    from pymongo.errors import BulkWriteError

    while models:
        try:
            target.bulk_write(models, ordered=True)
            return
        except BulkWriteError as e:
            first = (e.details.get("writeErrors") or [{}])[0]
            if not resume or first.get("code") != DUPLICATE_KEY:
                raise
            models = models[int(first["index"]) + 1:]


def apply(db: Any, k: str, token: int, target: str, batch: int, resume: bool) -> int:
    """Apply the staged operations of ``token`` to ``target`` in order; the rows applied."""
    attempts = [a for a, _, _ in manifest(db, k, token)]
    models: list[Any] = []
    rows = 0
    for op in _ops(db, k, token, attempts, batch):
        rows += 1
        model = _write_model(op)
        if model is not None:
            models.append(model)
        if len(models) >= batch:
            _bulk(db[target], models, resume)
            models = []
    if models:
        _bulk(db[target], models, resume)
    return rows


def _record(db: Any, k: str, token: int, rows: int) -> None:
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    db[COMMITS].update_one({"_id": k, "claimed": token}, {"$set": {"committed": True, "rows": rows,
                                                                   "committed_at": now}})
    db.drop_collection(stage_name(k, token))


def roll_forward(db: Any, k: str, claimed: int, target: str, batch: int) -> int:
    """Complete the claimed commit of attempt ``claimed`` (its attempt died applying it) and record it."""
    log.info("completing the claimed commit of attempt token %d into %s", claimed, target)
    rows = apply(db, k, claimed, target, batch, resume=True)
    _record(db, k, claimed, rows)
    return rows


def _existing_ids(db: Any, k: str, token: int, attempts: Sequence[str], target: str, batch: int) -> Any:
    """The first ``_id`` of a staged insert that the target holds already or that two rows share."""
    seen: set[Any] = set()
    chunk: list[Any] = []

    def clash(ids: list[Any]) -> Any:
        found = db[target].find_one({"_id": {"$in": ids}}, {"_id": 1})
        return found["_id"] if found else None

    for op in _ops(db, k, token, attempts, batch, only="I"):
        doc_id = op["d"]["_id"]
        key = repr(doc_id)
        if key in seen:
            return doc_id
        seen.add(key)
        chunk.append(doc_id)
        if len(chunk) >= batch:
            hit = clash(chunk)
            if hit is not None:
                return hit
            chunk = []
    return clash(chunk) if chunk else None


def _settled(db: Any, k: str, token: int) -> Published | None:
    """ALREADY when the commit is recorded, SUPERSEDED when a newer token was taken, else None."""
    doc = db[COMMITS].find_one({"_id": k}) or {}
    if doc.get("committed"):
        return Published(Outcome.ALREADY)
    if int(doc.get("token") or 0) != token:
        return Published(Outcome.SUPERSEDED, newest=int(doc.get("token") or 0))
    return None


def publish(db: Any, k: str, token: int, parts: Sequence[tuple[str, int]], target: str, batch: int,
            record: Mapping[str, Any]) -> Published:
    """Check, claim, apply and record one staged table (see the module's docstring)."""
    from pymongo import ReturnDocument

    settled = _settled(db, k, token)
    if settled is not None:
        return settled
    stage = db[stage_name(k, token)]
    for attempt, rows in parts:
        found = stage.count_documents({"a": attempt})
        if found != rows:
            return Published(Outcome.MISMATCH, where=f"task attempt {attempt}", found=found, expected=rows)
    attempts = [a for a, _ in parts]
    duplicate = _existing_ids(db, k, token, attempts, target, batch)
    if duplicate is not None:
        raise DataError(f"a row's _id {duplicate!r} is in {target} already or in two rows (duplicate key): "
                        "nothing was committed")
    claim = db[COMMITS].find_one_and_update(
        {"_id": k, "token": token, "committed": {"$ne": True}, "claimed": {"$exists": False}},
        {"$set": {"claimed": token, **record}}, return_document=ReturnDocument.AFTER)
    if claim is None:
        return _settled(db, k, token) or Published(Outcome.SUPERSEDED, newest=newest_token(db, k))
    rows = apply(db, k, token, target, batch, resume=False)
    _record(db, k, token, rows)
    return Published(Outcome.PUBLISHED, rows=rows)


def claimed_token(db: Any, k: str) -> int | None:
    """The attempt whose staging a claimed, unrecorded commit applies (never to be dropped)."""
    doc = db[COMMITS].find_one({"_id": k}, {"claimed": 1, "committed": 1}) or {}
    return None if doc.get("committed") or not doc.get("claimed") else int(doc["claimed"])


def discard(db: Any, k: str, token: int) -> None:
    """Drop the staging of ``token`` unless its commit is claimed (then it is what completes it)."""
    if claimed_token(db, k) != token:
        db.drop_collection(stage_name(k, token))


def drop_older(db: Any, k: str, token: int) -> int:
    """Drop the staging of tokens below ``token`` (attempts that can never commit); how many."""
    keep = claimed_token(db, k)
    dropped = 0
    for name in db.list_collection_names():
        older = token_of_stage(name, k)
        if older is not None and older < token and older != keep:
            db.drop_collection(name)
            dropped += 1
    return dropped


def retire(db: Any, pipeline: str, sink: str, table: str, stream: str, run_id: str) -> int:
    """STREAMING: delete the commit records of the stream's micro-batches before ``run_id``."""
    result = db[COMMITS].delete_many({"pipeline": pipeline, "sink": sink, "table": table, "committed": True,
                                      "run_id": {"$regex": f"^{_regex_escape(stream)}:batch-", "$ne": run_id}})
    return int(result.deleted_count)


def _regex_escape(text: str) -> str:
    import re

    return re.escape(text)
