"""The Delta sink's attempt tokens, kept in the table's own log so the newest attempt of a run wins.

A commit's identity is Delta's ``txnAppId`` (one per run, pipeline, sink, target and upstream table);
Delta records the highest ``txnVersion`` written under it in the commit itself, and skips a write whose
version is not above it (a concurrent one fails with a conflict). In BATCH that one number is both the
commit log and the fence:

* an attempt **takes token n** by an empty append under the app id with version ``2n - 1`` (a commit
  of no files: the token is recorded atomically, by Delta's log, as any commit is);
* its data commit carries version ``2n``, so it lands only while no newer token was taken (a newer
  token's ``2m - 1`` is at least ``2n + 1``) and only once: the token sits in the data commit itself;
* an even version is a commit of the run's data (0: written before tokens existed); an odd one a token
  whose attempt has not committed. A take is never written over a data commit except when both race
  (the data lands between the taker's read and its write): the taker then finds the data commit in the
  table's history, which is what every taker reads whenever the version it starts from is odd.

Every commit's ``userMetadata`` says which it is (``kind``: ``token`` or ``data``, with the app id, the
token and a nonce), so the history answers whether the run's data landed and whether a take landed.
A table that does not exist yet has no log to take a token in: its first attempts hold token 0 and the
first to create the table wins (the others find the run committed). STREAMING takes no tokens: the
app id's version is the micro-batch, and the stream's checkpoint serialises its micro-batches.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .tables import table_state

#: how often a take is tried again when another attempt took the same token at the same moment
TAKE_TRIES = 5


def data_version(token: int) -> int:
    return 2 * token


def token_of(version: int | None) -> int:
    """The newest token a recorded version shows (0: none)."""
    return 0 if version is None else (version + 1) // 2


def notes(spark: Any, path: str) -> list[Mapping[str, Any]]:
    """The ``userMetadata`` of every commit in the table's history that holds a JSON object, newest first."""
    from .tables import sql_path

    found: list[Mapping[str, Any]] = []
    for row in spark.sql(f"DESCRIBE HISTORY {sql_path(path)}").select("userMetadata").collect():
        try:
            note = json.loads(row[0]) if row[0] else None
        except ValueError:
            continue
        if isinstance(note, dict):
            found.append(note)
    return found


def data_landed(spark: Any, path: str, app_id: str) -> bool:
    """Whether the history holds a data commit of the identity ``app_id``."""
    return any(n.get("kind") == "data" and n.get("app_id") == app_id for n in notes(spark, path))


def scope_has_data(spark: Any, path: str, scope: str) -> bool:
    """Whether the history holds a data commit of some identity of ``scope``."""
    return any(n.get("kind") == "data" and str(n.get("app_id", "")).startswith(scope) for n in notes(spark, path))


def _take(spark: Any, path: str, app_id: str, token: int, meta: str) -> None:
    """Token ``token`` as one empty append under ``app_id`` (version ``2 * token - 1``)."""
    empty = spark.read.format("delta").load(path).limit(0)
    (empty.write.format("delta").mode("append").option("txnAppId", app_id)
     .option("txnVersion", str(data_version(token) - 1)).option("userMetadata", meta).save(path))


@dataclass(frozen=True)
class Taken:
    """What taking a token found: the token, and whether the run's data commit is in the table."""

    token: int
    committed: bool


def take(spark: Any, path: str, app_id: str, meta: Mapping[str, Any]) -> Taken:
    """Take the next token of ``app_id`` in the table at ``path`` (see the module's docstring); ``meta`` is
    the commit's ``userMetadata`` (the kind, token and nonce are added)."""
    recorded = table_state(spark, path, app_id).committed
    for _ in range(TAKE_TRIES):
        if recorded is not None and recorded % 2 == 0:
            return Taken(token_of(recorded), True)
        if recorded is not None and data_landed(spark, path, app_id):
            return Taken(token_of(recorded), True)  # a take raced past the data commit (module docstring)
        token, nonce = token_of(recorded) + 1, uuid.uuid4().hex
        note = json.dumps({**meta, "kind": "token", "app_id": app_id, "token": token, "nonce": nonce},
                          sort_keys=True)
        try:
            _take(spark, path, app_id, token, note)
        except Exception as e:  # another writer under the app id at the same moment: read again
            if "Concurrent" not in str(e) and "CONCURRENT" not in str(e):
                raise
        history = notes(spark, path)
        if any(n.get("kind") == "data" and n.get("app_id") == app_id for n in history):
            return Taken(token, True)
        if any(n.get("nonce") == nonce for n in history):
            return Taken(token, False)
        recorded = table_state(spark, path, app_id).committed
    raise RuntimeError(f"could not take an attempt token in the Delta table {path}: other attempts of the run "
                       f"took them {TAKE_TRIES} times at the same moment")


def landed(spark: Any, path: str, app_id: str, nonce: str) -> bool:
    """Whether the data commit ``nonce`` is in the table (Delta skips a write it fences without an error)."""
    return any(n.get("nonce") == nonce and n.get("app_id") == app_id for n in notes(spark, path))


__all__ = ["Taken", "data_landed", "data_version", "landed", "notes", "scope_has_data", "take", "token_of"]
