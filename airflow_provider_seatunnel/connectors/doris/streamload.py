"""The Stream Load HTTP protocol, as a Doris frontend (or backend) speaks it.

* ``PUT /api/{db}/{table}/_stream_load`` with basic auth, a ``label`` header and ``two_phase_commit: true``
  loads the body in a transaction that is only *prepared*; the JSON answer holds ``Status`` (``Success``,
  ``Label Already Exists``, ``Fail``...), ``TxnId`` and ``NumberLoadedRows``. A label is unique per
  database: a label whose load is committed can never load again; a label whose prepared transaction is
  still open answers ``Label Already Exists`` with ``ExistingJobStatus`` ``PREPARE`` (the loader then
  aborts that transaction and loads again: a retried Spark task reuses its label).
* ``PUT /api/{db}/_stream_load_2pc`` with ``txn_id`` and ``txn_operation: commit|abort`` decides it.
* A frontend answers a load with ``307`` to a backend: the request is sent again there, credentials and
  body included (the redirect stays on the frontend's scheme).

Every request is bounded (a timeout), retried ``max_retries`` times when it fails in transit, and no
credential reaches an error text or a log. Failures are classified: refused credentials are
:class:`AccessDenied`, a refusal a retry repeats (the rows, the table) :class:`StreamLoadRefused` (a
``DataError``), the rest transient :class:`StreamLoadError`.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import random
import re
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from ...spi.errors import AccessDenied, DataError, PipelineError

#: a transaction answer that means the commit (or abort) was already made
_DONE = re.compile(r"already (visible|committed|commited)|is VISIBLE|status is VISIBLE", re.IGNORECASE)
_ABORTED = re.compile(r"already abort|is ABORTED|not found|does not exist|not exist", re.IGNORECASE)
_EXISTING_TXN = re.compile(r"relate to txn \[(\d+)\]|txn[_ ]?id\s*[:=]?\s*\[?(\d+)", re.IGNORECASE)
TIMEOUT = 600.0
MAX_REDIRECTS = 3


class StreamLoadError(PipelineError):
    """A Stream Load request failed in a way a retry may mend (the network, a busy or restarting node)."""


class StreamLoadRefused(DataError):
    """Doris refused a load or a transaction's decision for a reason a retry repeats (the rows, the table)."""


#: a refusal whose cause may pass: a retry may succeed
_PASSING = re.compile(r"timeout|timed out|unavailable|no available|too busy|try again|not ready", re.IGNORECASE)


def refused(message: str) -> PipelineError:
    """The error of a refusal: transient when its text says the cause may pass, else deterministic."""
    return StreamLoadError(message) if _PASSING.search(message) else StreamLoadRefused(message)


class Client:
    """Requests to the frontends ``fenodes`` (one picked at random per request, as SeaTunnel does)."""

    def __init__(self, fenodes: tuple[str, ...], username: str, password: str, max_retries: int = 3,
                 timeout: float = TIMEOUT):
        self.fenodes = fenodes
        self._auth = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        self.max_retries = max_retries
        self.timeout = timeout

    def _put_once(self, url: str, headers: Mapping[str, str], body: bytes | str) -> tuple[int, dict[str, Any]]:
        for _ in range(MAX_REDIRECTS + 1):
            parts = urllib.parse.urlsplit(url)
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port or 80, timeout=self.timeout)
            try:
                size = os.path.getsize(body) if isinstance(body, str) else len(body)
                with open(body, "rb") if isinstance(body, str) else contextlib.nullcontext(body) as data:
                    conn.request("PUT", parts.path + (f"?{parts.query}" if parts.query else ""), body=data,
                                 headers={**headers, "Authorization": self._auth, "Content-Length": str(size)})
                    response = conn.getresponse()
                text = response.read(16 * 1024 * 1024)
                if response.status in (301, 302, 307, 308):
                    location = response.getheader("Location") or ""
                    url = urllib.parse.urljoin(url, location)
                    continue
            finally:
                conn.close()
            try:
                answer = json.loads(text or b"{}")
            except ValueError:
                answer = {"status": "Fail", "msg": text[:300].decode(errors="replace")}
            return response.status, answer if isinstance(answer, dict) else {"msg": str(answer)[:300]}
        raise StreamLoadRefused(f"more than {MAX_REDIRECTS} redirects from {self.fenodes[0]}")

    def put(self, path: str, headers: Mapping[str, str], body: bytes | str = b"") -> dict[str, Any]:
        """PUT to a frontend, retried when it fails in transit; the JSON answer."""
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            node = random.choice(self.fenodes)
            try:
                status, answer = self._put_once(f"http://{node}{path}", headers, body)
            except (OSError, http.client.HTTPException) as e:
                last = e
                time.sleep(min(2.0, 0.2 * (attempt + 1)))
                continue
            if status == 401 or status == 403:
                raise AccessDenied(f"{node} refused the credentials (HTTP {status}): check username and password")
            if status >= 500:
                last = StreamLoadError(f"HTTP {status} from {node}: {str(answer)[:300]}")
                time.sleep(min(2.0, 0.2 * (attempt + 1)))
                continue
            if status >= 400:
                raise refused(f"HTTP {status} from {node}{path}: {str(answer)[:300]}")
            return answer
        raise StreamLoadError(f"Stream Load to {','.join(self.fenodes)} failed: {last}")

    def load(self, db: str, table: str, label: str, headers: Mapping[str, str], body: bytes | str) -> dict[str, Any]:
        """Prepare one transaction holding ``body`` (bytes, or the path of a file) under ``label``; a prepared
        transaction of the same label (a retried task's) is aborted first. The successful load's answer."""
        path = f"/api/{_seg(db)}/{_seg(table)}/_stream_load"
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
        answer = self.put(f"/api/{_seg(db)}/_stream_load_2pc", {**which, "txn_operation": operation})
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


def _msg(answer: Mapping[str, Any]) -> str:
    return str(answer.get("Message") or answer.get("msg") or "")[:500]


def _seg(name: str) -> str:
    return urllib.parse.quote(name, safe="")


__all__ = ["Client", "StreamLoadError", "StreamLoadRefused", "existing_txn", "refused"]
