"""SelectDB Cloud's load protocol over the family's HTTP client (:mod:`..streamload.http`): files uploaded to
the user's internal stage, then copied into a table.

* ``PUT /copy/upload`` (basic auth, header ``fileName``) answers ``307`` with the stage's object-storage address
  (a presigned URL); the file's bytes are sent there with a plain ``PUT`` and no credentials (the address
  carries its own signature; the warehouse's password never leaves for another host);
* ``POST /copy/query`` (basic auth, JSON ``{"cluster": ..., "sql": "COPY INTO db.table FROM @~('{file}')
  PROPERTIES (...)"}``) copies: ``code`` 0 and ``data.result.state`` ``FINISHED``. A file copied before is
  filtered: ``No files can be copied, matched N files, filtered N files because files may be loading or loaded``
  (N > 0: done before; 0 files matched: the file is gone from the stage, expired).

A staged file that is never copied is never visible; the stage drops it when it expires.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from ...spi.errors import AccessDenied
from ..streamload.http import HttpClient, StreamLoadError, refused

_COPIED_BEFORE = re.compile(r"No files can be copied, matched (\d+) files, filtered (\d+) files")


def copy_sql(database: str, table: str, files: list[str], properties: Mapping[str, str]) -> str:
    """SeaTunnel's COPY INTO statement of staged files."""
    props = ",".join(f"'{_lit(k)}'='{_lit(v)}'" for k, v in properties.items())
    names = ",".join(_lit(f) for f in files)
    return f"COPY INTO `{database}`.`{table}` FROM @~('{{{names}}}') PROPERTIES ({props})"


def _lit(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("'", "\\'")


def ref_of(table: str, file: str, cluster: str, properties: Mapping[str, str]) -> str:
    """A staged file as the commit log records it: everything its COPY INTO needs but the credentials."""
    return json.dumps({"table": table, "file": file, "cluster": cluster, "properties": dict(properties)},
                      sort_keys=True)


class CopyClient(HttpClient):
    """Uploads to the internal stage and COPY INTO, by file."""

    def upload(self, file_name: str, body: bytes | str) -> None:
        """Stage ``body`` (bytes, or the path of a file) as ``file_name``."""
        node = self.fenodes[0]
        location = self._stage_address(node, file_name)
        parts = urllib.parse.urlsplit(location)
        conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            conn = conn_class(parts.hostname or "", parts.port, timeout=self.timeout)
            try:
                size = len(body) if isinstance(body, bytes) else os.path.getsize(body)
                with (open(body, "rb") if isinstance(body, str) else _Bytes(body)) as data:
                    conn.request("PUT", parts.path + (f"?{parts.query}" if parts.query else ""), body=data,
                                 headers={"Content-Length": str(size)})
                    response = conn.getresponse()
                    response.read(1024 * 1024)
                if response.status == 200:
                    return
                if response.status < 500:
                    raise refused(f"the stage refused the upload of {file_name}: HTTP {response.status}")
                last = StreamLoadError(f"HTTP {response.status} from the stage")
            except (OSError, http.client.HTTPException) as e:
                last = e
            finally:
                conn.close()
            self._pause(attempt)
        raise StreamLoadError(f"the upload of {file_name} failed: {last}")

    def _stage_address(self, node: str, file_name: str) -> str:
        """The object-storage address of a new staged file (the ``307`` of ``/copy/upload``, not followed)."""
        conn = http.client.HTTPConnection(*_split(node), timeout=self.timeout)
        try:
            conn.request("PUT", "/copy/upload", body=b"", headers={"fileName": file_name, "Expect": "100-continue",
                                                                   "Authorization": self._auth,
                                                                   "Content-Length": "0"})
            response = conn.getresponse()
            text = response.read(64 * 1024)
        except (OSError, http.client.HTTPException) as e:
            raise StreamLoadError(f"{node}/copy/upload failed: {e}") from None
        finally:
            conn.close()
        if response.status in (401, 403):
            raise AccessDenied(f"{node} refused the credentials (HTTP {response.status}): check username and password")
        location = response.getheader("Location") or ""
        if response.status != 307 or not location:
            raise refused(f"{node}/copy/upload answered HTTP {response.status}: {text[:300]!r}")
        return location

    def decide(self, db: str, txn: Any, operation: str) -> str:
        """Copy a staged file (``commit``): ``done``, ``already`` (copied before) or ``aborted`` (gone from the
        stage). ``abort`` has nothing to do: a file never copied is never visible."""
        if operation != "commit":
            return "done"
        ref = json.loads(str(txn))
        sql = copy_sql(db, str(ref["table"]), [str(ref["file"])], ref.get("properties") or {})
        answer = self.request("POST", "/copy/query", {"Content-Type": "application/json"},
                              json.dumps({"cluster": ref.get("cluster", ""), "sql": sql}).encode())
        data: dict[str, Any] = answer["data"] if isinstance(answer.get("data"), dict) else {}
        result: dict[str, Any] = data["result"] if isinstance(data.get("result"), dict) else {}
        message = str(result.get("msg") or data.get("exception") or answer.get("msg") or "")[:500]
        before = _COPIED_BEFORE.search(message)
        if before:
            return "already" if int(before.group(1)) > 0 else "aborted"
        if answer.get("code") == 0 and str(data.get("code", "0")) != "1" and result.get("state") == "FINISHED":
            return "done"
        raise refused(f"COPY INTO {db}.{ref['table']} of {ref['file']}: {message or answer}")


class _Bytes:
    def __init__(self, data: bytes):
        self.data = data

    def __enter__(self) -> bytes:
        return self.data

    def __exit__(self, *exc: Any) -> None:
        return None


def _split(node: str) -> tuple[str, int]:
    host, _, port = node.rpartition(":")
    return host, int(port)


__all__ = ["CopyClient", "copy_sql", "ref_of"]
