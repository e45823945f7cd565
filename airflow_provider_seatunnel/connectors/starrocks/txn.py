"""StarRocks's Stream Load transaction interface over the family's HTTP client (:mod:`..streamload.http`).

Every call names the transaction by its ``label`` and ``db`` headers (basic auth):

* ``POST /api/transaction/begin`` (with ``table``) starts it: ``Status`` ``OK`` and its ``TxnId``; a label in
  use answers ``LABEL_ALREADY_EXISTS`` with ``ExistingJobStatus``;
* ``PUT /api/transaction/load`` (with ``table`` and the load properties: ``format``, ``columns``,
  ``column_separator``...) writes a body into it; a frontend may answer ``307`` to a backend;
* ``POST /api/transaction/prepare`` pre-commits it (durable, invisible);
* ``POST /api/transaction/commit`` makes it visible (``OK``, ``Transaction already commited`` when done
  before); ``POST /api/transaction/rollback`` aborts it. ``FAILED`` with ``Transcation Not Exist`` names an
  unknown (or expired) transaction.

A label bound to an open or prepared transaction (a retried Spark task's) is rolled back before the label
begins again; a label can never begin again once its transaction is committed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..streamload.http import HttpClient, StreamLoadError, refused
from ..streamload.http import message as _msg

_DONE = re.compile(r"already commit|already visible|is VISIBLE|is COMMITTED", re.IGNORECASE)
_ABORTED = re.compile(r"not exist|abort|rolled back|not found", re.IGNORECASE)
#: a begin of a label already bound: the states of a transaction still open (rolled back, then begun again)
_OPEN = ("RUNNING", "PREPARE", "PREPARED", "PRECOMMITTED", "LOADING")


class TxnClient(HttpClient):
    """StarRocks's transaction calls, by label."""

    def _call(self, action: str, db: str, label: str, headers: Mapping[str, str] | None = None,
              body: bytes | str = b"", method: str = "POST") -> tuple[str, dict[str, Any]]:
        answer = self.request(method, f"/api/transaction/{action}",
                              {**(headers or {}), "label": label, "db": db, "Expect": "100-continue"}, body)
        return str(answer.get("Status") or answer.get("status") or ""), answer

    def begin(self, db: str, table: str, label: str) -> int:
        """Begin the transaction of ``label``; an open one of the same label (a retried task's) is rolled back
        first. Its id."""
        for _ in range(2):
            status, answer = self._call("begin", db, label, {"table": table})
            if status == "OK":
                return int(answer.get("TxnId") or 0)
            if status == "LABEL_ALREADY_EXISTS" and str(answer.get("ExistingJobStatus", "")).upper() in _OPEN:
                self.decide(db, label, "abort")
                continue
            raise refused(f"begin of label {label!r} in {db}.{table}: {status}: {_msg(answer)}")
        raise StreamLoadError(f"label {label!r} is still taken after rolling back its open transaction")

    def load(self, db: str, table: str, label: str, headers: Mapping[str, str], body: bytes | str) -> dict[str, Any]:
        """Write ``body`` (bytes, or the path of a file) into the open transaction of ``label``."""
        status, answer = self._call("load", db, label, {**headers, "table": table}, body, method="PUT")
        if status != "OK":
            raise refused(f"load of label {label!r} into {db}.{table}: {status}: {_msg(answer)}")
        return answer

    def prepare(self, db: str, label: str) -> dict[str, Any]:
        """Pre-commit the transaction of ``label``: durable, not visible."""
        status, answer = self._call("prepare", db, label)
        if status != "OK":
            raise refused(f"prepare of label {label!r} in {db}: {status}: {_msg(answer)}")
        return answer

    def decide(self, db: str, txn: Any, operation: str) -> str:
        """Commit or roll back (``abort``) the prepared transaction of a label: ``done``, ``already`` (decided
        so before) or ``aborted`` (committing one that was rolled back, or is unknown)."""
        action = "commit" if operation == "commit" else "rollback"
        status, answer = self._call(action, db, str(txn))
        message = _msg(answer)
        if status == "OK":
            return "already" if _DONE.search(message) else "done"
        if operation == "commit" and _DONE.search(message):
            return "already"
        if _ABORTED.search(message):
            return "aborted" if operation == "commit" else "already"
        raise refused(f"{action} of label {txn!r} in {db}: {status}: {message}")


__all__ = ["TxnClient"]
