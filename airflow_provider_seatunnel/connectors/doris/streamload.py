"""Doris's Stream Load protocol over the family's HTTP client (:mod:`..streamload.http`).

* ``PUT /api/{db}/{table}/_stream_load`` with basic auth, a ``label`` header and ``two_phase_commit: true``
  loads the body in a transaction that is only *prepared*; the JSON answer holds ``Status`` (``Success``,
  ``Label Already Exists``, ``Fail``...), ``TxnId`` and ``NumberLoadedRows``. A label is unique per
  database: a label whose load is committed can never load again; a label whose prepared transaction is
  still open answers ``Label Already Exists`` with ``ExistingJobStatus`` ``PREPARE`` (the loader then
  aborts that transaction and loads again: a retried Spark task reuses its label).
* ``PUT /api/{db}/_stream_load_2pc`` with ``txn_id`` and ``txn_operation: commit|abort`` decides it.
* A frontend answers a load with ``307`` to a backend: the request is sent again there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..streamload.http import HttpClient, StreamLoadError, StreamLoadRefused, refused, seg
from ..streamload.http import message as _msg

#: a transaction answer that means the commit (or abort) was already made
_DONE = re.compile(r"already (visible|committed|commited)|is VISIBLE|status is VISIBLE", re.IGNORECASE)
_ABORTED = re.compile(r"already abort|is ABORTED|not found|does not exist|not exist", re.IGNORECASE)
_EXISTING_TXN = re.compile(r"relate to txn \[(\d+)\]|txn[_ ]?id\s*[:=]?\s*\[?(\d+)", re.IGNORECASE)


class Client(HttpClient):
    """Doris's loads and two-phase decisions."""

    def load(self, db: str, table: str, label: str, headers: Mapping[str, str], body: bytes | str) -> dict[str, Any]:
        """Prepare one transaction holding ``body`` (bytes, or the path of a file) under ``label``; a prepared
        transaction of the same label (a retried task's) is aborted first. The successful load's answer."""
        path = f"/api/{seg(db)}/{seg(table)}/_stream_load"
        all_headers = {**headers, "label": label, "two_phase_commit": "true", "Expect": "100-continue",
                       "Content-Type": "text/plain; charset=UTF-8"}
        for _ in range(2):
            answer = self.put(path, all_headers, body)
            status = str(answer.get("Status") or answer.get("status") or "")
            if status in ("Success", "Publish Timeout"):
                return answer
            if status == "Label Already Exists" and str(answer.get("ExistingJobStatus", "")).upper() in (
                    "PREPARE", "PRECOMMITTED", "RUNNING"):
                txn = existing_txn(answer)
                if txn is None:
                    raise StreamLoadError(f"label {label!r} is taken by an open load: {_msg(answer)}")
                self.decide(db, txn, "abort")
                continue
            raise refused(f"Stream Load of label {label!r} into {db}.{table}: {status}: {_msg(answer)}")
        raise StreamLoadError(f"label {label!r} is still taken after aborting its open transaction")

    def decide(self, db: str, txn_id: int | str, operation: str) -> str:
        """Commit or abort a prepared transaction, named by its id (an int) or its label (a str): ``done``,
        ``already`` (decided so before) or ``aborted`` (committing a transaction that was aborted, or is
        unknown)."""
        which = {"txn_id": str(int(txn_id))} if isinstance(txn_id, int) else {"label": str(txn_id)}
        answer = self.put(f"/api/{seg(db)}/_stream_load_2pc", {**which, "txn_operation": operation})
        status = str(answer.get("status") or answer.get("Status") or "")
        message = _msg(answer)
        if status == "Success":
            return "done"
        if operation == "commit" and _DONE.search(message):
            return "already"
        if _ABORTED.search(message):
            return "aborted" if operation == "commit" else "already"
        raise refused(f"{operation} of transaction {txn_id} in {db}: {status}: {message}")


def existing_txn(answer: Mapping[str, Any]) -> int | None:
    """The transaction of an existing label, from a ``Label Already Exists`` answer."""
    for key in ("ExistingTxnId", "TxnId"):
        if str(answer.get(key) or "").isdigit() and int(answer[key]) > 0:
            return int(answer[key])
    m = _EXISTING_TXN.search(_msg(answer))
    return int(m.group(1) or m.group(2)) if m else None


__all__ = ["Client", "StreamLoadError", "StreamLoadRefused", "existing_txn", "refused"]
