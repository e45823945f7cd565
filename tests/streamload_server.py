"""A Stream Load stand-in: Doris's load HTTP protocol on loopback, in front of the tests' MariaDB.

No Doris server can be installed here, so the Doris sink is tested against this real HTTP server, which
follows the documented protocol:

* a frontend (``fe_port``) answers every ``PUT /api/...`` with ``307 Temporary Redirect`` to a backend
  (``be_port``), as Doris's frontend does; the client sends the request again there;
* ``PUT /api/{db}/{table}/_stream_load`` with basic auth and a ``label``: the body parsed by the ``format``
  header (csv: ``column_separator``, ``line_delimiter``, ``\\N`` for null, fields by position; json: one object
  per line with ``read_json_by_line``, an array with ``strip_outer_array``, fields by name), and
  ``hidden_columns: __DORIS_DELETE_SIGN__`` (deletes by the table's primary key). With ``two_phase_commit:
  true`` the transaction is prepared (held here, invisible), else committed at once. A label of a committed
  or prepared transaction answers ``Label Already Exists`` (``ExistingJobStatus`` ``FINISHED`` or
  ``PREPARE``, Doris's message naming the transaction); an aborted label may load again. A row that does
  not parse fails the whole load (Doris's default ``max_filter_ratio`` 0);
* ``PUT /api/{db}/_stream_load_2pc`` with ``txn_id`` (or the ``label``) and ``txn_operation: commit|abort``: a commit writes the
  transaction's rows into MariaDB's ``db.table`` in ONE MariaDB transaction (``REPLACE`` when the table has
  a primary key: Doris's Unique Key model; ``INSERT`` otherwise: Duplicate Key), then it is ``VISIBLE``.

StarRocks's Stream Load **transaction interface**, on the same ports (the frontend answers the decisions
itself and redirects only the loads), each call naming the transaction by its ``label`` and ``db`` headers:

* ``POST /api/transaction/begin`` (``table``): ``OK`` with a ``TxnId``; a label bound to a transaction not
  rolled back answers ``LABEL_ALREADY_EXISTS`` with ``ExistingJobStatus`` (``RUNNING``, ``PREPARED`` or
  ``VISIBLE``);
* ``PUT /api/transaction/load``: the body parsed by ``format`` (``JSON``: one array with
  ``strip_outer_array``, fields by name; ``CSV``: the ``columns`` header's names, ``column_separator``,
  ``row_delimiter`` ending every row), ``__op`` 1 deleting by the primary key; a transaction already
  prepared answers ``Transcation State Invalid``, an unknown one ``TXN_NOT_EXISTS``;
* ``POST /api/transaction/prepare`` (durable, invisible), ``/commit`` (the rows written as a Doris commit
  writes them; ``Transaction already commited`` when done before) and ``/rollback``; an unknown label
  answers ``Transcation Not Exist``.

SelectDB Cloud's internal stage and ``COPY INTO``: ``PUT /copy/upload`` (basic auth, ``fileName``) answers
``307`` with a presigned address on the backend port (``/stage/<user>/<file>?signature=...``), where a plain
``PUT`` without credentials stores the file (the newest upload of a name wins); ``POST /copy/query`` with JSON
``{"cluster", "sql"}`` runs ``COPY INTO `db`.`table` FROM @~('{f1,f2}') PROPERTIES (...)``: the files not copied
before are parsed (``file.type`` csv or json by line, ``file.column_separator``, ``file.line_delimiter``,
``__DORIS_DELETE_SIGN__`` with ``copy.use_delete_sign``) and written in one MariaDB transaction; a file copied
before is filtered, and when none is left the answer is SelectDB's ``No files can be copied, matched N files,
filtered N files because files may be loading or loaded``.

The MySQL protocol (DDL, queries, the sink's commit log) goes to MariaDB directly. What differs from Doris:
prepared transactions never time out here; the data model is MariaDB's table; no ``ErrorURL`` is served.
:attr:`StreamLoadServer.requests` counts the requests by kind, for the tests.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pymysql

from .mysql import MyServer

DELETE_SIGN = "__DORIS_DELETE_SIGN__"
OP = "__op"
#: a StarRocks transaction begun and still loading (Doris's transactions start prepared)
BEGUN = "BEGUN"


class _Txn:
    def __init__(self, txn_id: int, db: str, table: str, label: str, rows: list[tuple[dict[str, Any], bool]]):
        self.id, self.db, self.table, self.label, self.rows = txn_id, db, table, label, rows
        self.state = "PREPARE"


class StreamLoadServer:
    """The stand-in: a frontend and a backend HTTP server over one MariaDB (see the module docstring)."""

    def __init__(self, db: MyServer, user: str, password: str):
        self.db, self.user, self.password = db, user, password
        self.lock = threading.Lock()
        self.txns: dict[int, _Txn] = {}
        self.labels: dict[tuple[str, str], int] = {}
        self.next_txn = 1000
        self.requests: collections.Counter[str] = collections.Counter()
        self.stage: dict[str, bytes] = {}
        self.copied: set[str] = set()
        self.be = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(backend=True))
        self.fe = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(backend=False))
        for server in (self.be, self.fe):
            threading.Thread(target=server.serve_forever, daemon=True).start()

    @property
    def fe_port(self) -> int:
        return int(self.fe.server_address[1])

    @property
    def be_port(self) -> int:
        return int(self.be.server_address[1])

    @property
    def fenodes(self) -> str:
        return f"127.0.0.1:{self.fe_port}"

    def stop(self) -> None:
        for server in (self.fe, self.be):
            server.shutdown()
            server.server_close()

    def prepared(self) -> list[int]:
        """The transactions prepared (or begun: StarRocks) and not decided yet."""
        with self.lock:
            return [t.id for t in self.txns.values() if t.state in ("PREPARE", BEGUN)]

    def transactions(self, table: str) -> int:
        """The transactions loaded into ``table`` (one per writer that had rows), committed or not."""
        with self.lock:
            return sum(1 for t in self.txns.values() if t.table == table)

    # storage -----------------------------------------------------------------------------------

    def _connect(self, db: str) -> Any:
        return pymysql.connect(host="127.0.0.1", port=self.db.port, user=self.db.user, password=self.db.password,
                               database=db, autocommit=False, charset="utf8mb4")

    def _columns(self, db: str, table: str) -> tuple[list[str], list[str]]:
        conn = self._connect(db)
        try:
            with conn.cursor() as c:
                c.execute("SELECT column_name, column_key FROM information_schema.columns WHERE table_schema = %s "
                          "AND table_name = %s ORDER BY ordinal_position", (db, table))
                rows = c.fetchall()
        finally:
            conn.close()
        return [r[0] for r in rows], [r[0] for r in rows if r[1] == "PRI"]

    def _apply(self, txn: _Txn) -> None:
        columns, keys = self._columns(txn.db, txn.table)
        conn = self._connect(txn.db)
        verb = "REPLACE" if keys else "INSERT"
        names = ", ".join(f"`{c}`" for c in columns)
        try:
            with conn.cursor() as c:
                for row, delete in txn.rows:
                    if delete:
                        c.execute(f"DELETE FROM `{txn.table}` WHERE " + " AND ".join(f"`{k}` = %s" for k in keys),
                                  [row.get(k) for k in keys])
                    else:
                        c.execute(f"{verb} INTO `{txn.table}` ({names}) VALUES ({', '.join(['%s'] * len(columns))})",
                                  [_value(row.get(col)) for col in columns])
            conn.commit()
        finally:
            conn.close()

    def _parse(self, db: str, table: str, headers: Any, body: bytes) -> list[tuple[dict[str, Any], bool]]:
        columns, _ = self._columns(db, table)
        if not columns:
            raise ValueError(f"errCode = 7, detailMessage = Unknown table '{table}'")
        hidden = DELETE_SIGN in str(headers.get("hidden_columns") or "")
        names = [*columns, DELETE_SIGN] if hidden else columns
        fmt = str(headers.get("format") or "csv").lower()
        text = body.decode("utf-8")
        out: list[tuple[dict[str, Any], bool]] = []
        if fmt == "json":
            if str(headers.get("strip_outer_array") or "").lower() == "true":
                items = json.loads(text or "[]")
            else:
                items = [json.loads(line) for line in text.split("\n") if line.strip()]
            for item in items:
                lowered = {str(k).lower(): v for k, v in item.items()}
                row = {c: lowered.get(c.lower()) for c in columns}
                out.append((row, str(lowered.get(DELETE_SIGN.lower(), "0")) == "1"))
            return out
        sep = _unescape(str(headers.get("column_separator") or "\\t"))
        delim = _unescape(str(headers.get("line_delimiter") or "\\n"))
        for line in text.split(delim) if text else []:
            cells = line.split(sep)
            if len(cells) != len(names):
                raise ValueError(f"too many filtered rows: a line has {len(cells)} column(s), the table "
                                 f"{len(names)}")
            values = {n: None if v == "\\N" else v for n, v in zip(names, cells, strict=True)}
            out.append(({c: values[c] for c in columns}, values.get(DELETE_SIGN) == "1"))
        return out

    # protocol ----------------------------------------------------------------------------------

    def load(self, db: str, table: str, headers: Any, body: bytes) -> dict[str, Any]:
        label = str(headers.get("label") or "")
        try:
            rows = self._parse(db, table, headers, body)
        except (ValueError, UnicodeDecodeError) as e:
            return {"Status": "Fail", "Label": label, "Message": str(e)[:300], "NumberTotalRows": 0,
                    "NumberLoadedRows": 0}
        two_phase = str(headers.get("two_phase_commit") or "").lower() == "true"
        with self.lock:
            existing = self.labels.get((db, label))
            if existing is not None and self.txns[existing].state != "ABORTED":
                old = self.txns[existing]
                return {"Status": "Label Already Exists", "Label": label,
                        "ExistingJobStatus": "PREPARE" if old.state == "PREPARE" else "FINISHED",
                        "Message": f"errCode = 2, detailMessage = Label [{label}] has already been used, "
                                   f"relate to txn [{old.id}]"}
            self.next_txn += 1
            txn = _Txn(self.next_txn, db, table, label, rows)
            self.txns[txn.id] = txn
            self.labels[(db, label)] = txn.id
        if not two_phase:
            self._apply(txn)
            txn.state = "VISIBLE"
        return {"TxnId": txn.id, "Label": label, "Status": "Success", "TwoPhaseCommit": str(two_phase).lower(),
                "Message": "OK", "NumberTotalRows": len(rows), "NumberLoadedRows": len(rows),
                "NumberFilteredRows": 0, "LoadBytes": len(body)}

    # StarRocks's transaction interface -------------------------------------------------------------

    def _by_label(self, db: str, label: str) -> _Txn | None:
        txn_id = self.labels.get((db, label))
        return self.txns.get(txn_id) if txn_id is not None else None

    def _parse_starrocks(self, db: str, table: str, headers: Any, body: bytes) -> list[tuple[dict[str, Any], bool]]:
        columns, _ = self._columns(db, table)
        if not columns:
            raise ValueError(f"Unknown table '{table}'")
        text = body.decode("utf-8")
        out: list[tuple[dict[str, Any], bool]] = []
        if str(headers.get("format") or "csv").lower() == "json":
            items = json.loads(text or "[]")
            items = items if isinstance(items, list) else [items]
            for item in items:
                lowered = {str(k).lower(): v for k, v in item.items()}
                out.append(({c: _json_cell(lowered.get(c.lower())) for c in columns}, str(lowered.get(OP, 0)) == "1"))
            return out
        named = [n.strip().strip("`") for n in str(headers.get("columns") or "").split(",") if n.strip()]
        names = named or columns
        sep = _unescape(str(headers.get("column_separator") or "\\t"))
        delim = _unescape(str(headers.get("row_delimiter") or "\\n"))
        lines = text.split(delim)
        if lines and lines[-1] == "":
            lines.pop()  # every row ends with the delimiter
        for line in lines:
            cells = line.split(sep)
            if len(cells) != len(names):
                raise ValueError(f"too many filtered rows: a line has {len(cells)} column(s), expected {len(names)}")
            values = {n: None if v == "\\N" else v for n, v in zip(names, cells, strict=True)}
            out.append(({c: values.get(c) for c in columns}, values.get(OP) == "1"))
        return out

    def transaction(self, action: str, headers: Any, body: bytes) -> dict[str, Any]:
        """One call of StarRocks's transaction interface (the module docstring)."""
        db, label, table = str(headers.get("db") or ""), str(headers.get("label") or ""), str(headers.get("table") or "")
        if action == "load":
            try:
                rows = self._parse_starrocks(db, table, headers, body)
            except (ValueError, UnicodeDecodeError, AttributeError) as e:
                with self.lock:
                    txn = self._by_label(db, label)
                    if txn is not None and txn.state == BEGUN:
                        txn.state = "ABORTED"  # a failed load rolls the transaction back
                return {"Label": label, "Status": "FAILED", "Message": str(e)[:300]}
        with self.lock:
            txn = self._by_label(db, label)
            if action == "begin":
                if txn is not None and txn.state != "ABORTED":
                    status = {BEGUN: "RUNNING", "PREPARE": "PREPARED"}.get(txn.state, "VISIBLE")
                    return {"Status": "LABEL_ALREADY_EXISTS", "ExistingJobStatus": status,
                            "Message": f"Label [{label}] has already been used."}
                self.next_txn += 1
                txn = _Txn(self.next_txn, db, table, label, [])
                txn.state = BEGUN
                self.txns[txn.id], self.labels[(db, label)] = txn, txn.id
                return {"Status": "OK", "Message": "", "Label": label, "TxnId": txn.id, "BeginTxnTimeMs": 0}
            if txn is None or (txn.state == "ABORTED" and action != "rollback"):
                message = "TXN_NOT_EXISTS" if action == "load" else "Transcation Not Exist"
                return {"Label": label, "Status": "FAILED", "Message": message}
            answer = {"TxnId": txn.id, "Label": label, "Status": "OK", "Message": ""}
            if action == "load":
                if txn.state != BEGUN:
                    return {**answer, "Status": "FAILED", "Message": "Transcation State Invalid"}
                txn.rows.extend(rows)
                return {**answer, "Seq": 0, "NumberTotalRows": len(rows), "NumberLoadedRows": len(rows),
                        "NumberFilteredRows": 0, "NumberUnselectedRows": 0, "LoadBytes": len(body)}
            if action == "prepare":
                if txn.state != BEGUN:
                    return {**answer, "Status": "FAILED", "Message": "Transcation State Invalid"}
                txn.state = "PREPARE"
                return {**answer, "NumberLoadedRows": len(txn.rows)}
            if action == "rollback":
                if txn.state in (BEGUN, "PREPARE"):
                    txn.state = "ABORTED"
                    return answer
                if txn.state == "ABORTED":
                    return {**answer, "Status": "FAILED", "Message": "Transcation Not Exist"}
                return {**answer, "Status": "FAILED", "Message": "Transaction already commited, cannot roll back"}
            if action != "commit":
                return {**answer, "Status": "FAILED", "Message": f"unknown operation {action}"}
            if txn.state in ("VISIBLE", "COMMITTED"):
                return {**answer, "Message": "Transaction already commited"}
            if txn.state != "PREPARE":
                return {**answer, "Status": "FAILED", "Message": "Transcation State Invalid"}
            txn.state = "COMMITTED"
        try:
            self._apply(txn)
        except Exception as e:  # the rows do not fit the table: the commit fails, the transaction stays prepared
            txn.state = "PREPARE"
            return {**answer, "Status": "FAILED", "Message": f"commit failed: {e}"}
        txn.state = "VISIBLE"
        return answer

    # SelectDB Cloud's stage and COPY INTO ---------------------------------------------------------------

    def copy_into(self, request: dict[str, Any]) -> dict[str, Any]:
        """One ``/copy/query`` (the module docstring)."""
        sql = str(request.get("sql") or "")
        m = re.match(r"COPY INTO `?([^`.]+)`?\.`?([^`\s]+)`? FROM @~\('\{(.*)\}'\)\s*PROPERTIES\s*\((.*)\)\s*$",
                     sql, re.DOTALL)
        if not m or not request.get("cluster"):
            return {"code": 1, "msg": "failed", "data": {"code": "1", "exception": f"cannot run {sql[:200]!r}"}}
        db, table, names, props = m.group(1), m.group(2), m.group(3).split(","), m.group(4)
        properties = {_sql_text(k): _sql_text(v) for k, v in re.findall(r"'((?:[^'\\]|\\.)*)'='((?:[^'\\]|\\.)*)'", props)}
        with self.lock:
            matched = [n for n in names if n in self.stage]
            todo = [n for n in matched if n not in self.copied]
            if not todo:
                message = (f"errCode = 2, detailMessage = No files can be copied, matched {len(matched)} files, "
                           f"filtered {len(matched)} files because files may be loading or loaded")
                return {"code": 0, "msg": "success", "data": {"code": "0", "result": {"state": "CANCELLED",
                                                                                     "msg": message}}}
            self.copied.update(todo)
            bodies = [self.stage[n] for n in todo]
        headers = {"format": properties.get("file.type", "csv"), "read_json_by_line": "true",
                   "column_separator": properties.get("file.column_separator", "\\t"),
                   "line_delimiter": properties.get("file.line_delimiter", "\\n"),
                   "hidden_columns": DELETE_SIGN if properties.get("copy.use_delete_sign") == "true" else ""}
        try:
            rows = [row for body in bodies for row in self._parse(db, table, headers, body)]
            self._apply(_Txn(0, db, table, "", rows))
        except Exception as e:  # the files stay not copied
            with self.lock:
                self.copied.difference_update(todo)
            return {"code": 0, "msg": "success", "data": {"code": "1", "exception": str(e)[:300],
                                                          "result": {"state": "CANCELLED", "msg": str(e)[:300]}}}
        return {"code": 0, "msg": "success", "data": {"code": "0", "result": {
            "state": "FINISHED", "msg": "", "loadedRows": str(len(rows)), "filterRows": "0"}}}

    def decide(self, db: str, headers: Any) -> dict[str, Any]:
        operation = str(headers.get("txn_operation") or "").lower()
        label = str(headers.get("label") or "")
        with self.lock:
            by_label = self.labels.get((db, label)) if label else None
        try:
            txn_id = by_label if by_label is not None else int(str(headers.get("txn_id") or ""))
        except ValueError:
            return {"status": "ANALYSIS_ERROR", "msg": f"errCode = 7, detailMessage = no transaction of label "
                                                       f"[{label}] not found" if label else "txn_id is required"}
        with self.lock:
            txn = self.txns.get(txn_id)
            if txn is None or txn.db != db:
                return {"status": "ANALYSIS_ERROR", "msg": f"errCode = 7, detailMessage = transaction [{txn_id}] "
                                                           "not found"}
            if txn.state != "PREPARE":
                state = txn.state.lower()
                return {"status": "ANALYSIS_ERROR", "msg": f"errCode = 2, detailMessage = transaction [{txn_id}] is "
                                                           f"already {state}, not pre-committed."}
            if operation == "abort":
                txn.state = "ABORTED"
                return {"status": "Success", "msg": f"transaction [{txn_id}] abort successfully."}
            if operation != "commit":
                return {"status": "ANALYSIS_ERROR", "msg": f"unknown txn_operation {operation!r}"}
            txn.state = "COMMITTED"  # decided: visible once written (Doris: COMMITTED, then VISIBLE)
        try:
            self._apply(txn)
        except Exception as e:  # the rows do not fit the table: the commit fails, the transaction stays prepared
            txn.state = "PREPARE"
            return {"status": "Fail", "msg": f"errCode = 2, detailMessage = commit of transaction [{txn_id}] "
                                             f"failed: {e}"}
        txn.state = "VISIBLE"
        return {"status": "Success", "msg": f"transaction [{txn_id}] commit successfully."}

    def _handler(self, backend: bool) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: dict[str, Any], location: str = "") -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self.do_PUT()

            def do_PUT(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if backend and self.path.startswith("/stage/"):  # a presigned address: no credentials
                    path, _, query = self.path.partition("?")
                    if query != f"signature={_sign(path)}":
                        self._answer(403, {"msg": "SignatureDoesNotMatch"})
                        return
                    server.requests["stage_put"] += 1
                    with server.lock:
                        server.stage[path.rsplit("/", 1)[1]] = body
                    self._answer(200, {})
                    return
                expected = "Basic " + base64.b64encode(f"{server.user}:{server.password}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    server.requests["unauthorized"] += 1
                    self._answer(401, {"status": "FAILED", "msg": "Unauthorized"})
                    return
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts == ["copy", "upload"]:
                    server.requests["copy_upload"] += 1
                    name = str(self.headers.get("fileName") or "")
                    path = f"/stage/{server.user}/{urllib.parse.quote(name, safe='')}"
                    self._answer(307, {}, f"http://127.0.0.1:{server.be_port}{path}?signature={_sign(path)}")
                    return
                if parts == ["copy", "query"]:
                    server.requests["copy_query"] += 1
                    self._answer(200, server.copy_into(json.loads(body or b"{}")))
                    return
                if len(parts) == 3 and parts[:2] == ["api", "transaction"] and (backend or parts[2] != "load"):
                    server.requests[f"txn_{parts[2]}"] += 1  # StarRocks: the frontend decides, a backend loads
                    self._answer(200, server.transaction(parts[2], self.headers, body))
                    return
                if not backend:
                    server.requests["redirect"] += 1
                    self._answer(307, {}, f"http://127.0.0.1:{server.be_port}{self.path}")
                    return
                if len(parts) == 4 and parts[0] == "api" and parts[3] == "_stream_load":
                    server.requests["load"] += 1
                    self._answer(200, server.load(parts[1], parts[2], self.headers, body))
                elif len(parts) == 3 and parts[0] == "api" and parts[2] == "_stream_load_2pc":
                    server.requests[str(self.headers.get("txn_operation") or "").lower()] += 1
                    self._answer(200, server.decide(parts[1], self.headers))
                else:
                    self._answer(404, {"status": "FAILED", "msg": f"no such API {self.path}"})

        return Handler


def _value(value: Any) -> Any:
    """A loaded value as MariaDB takes it: Doris's boolean text ``true``/``false`` as 1/0."""
    if isinstance(value, str) and value in ("true", "false"):
        return int(value == "true")
    return value


def _sql_text(literal: str) -> str:
    """A quoted SQL literal's text (backslash escapes undone)."""
    return re.sub(r"\\(.)", lambda m: m.group(1), literal)


def _sign(path: str) -> str:
    """The stand-in's presigned-address signature of a stage path."""
    return hashlib.sha256(f"stage:{path}".encode()).hexdigest()[:32]


def _json_cell(value: Any) -> Any:
    """A JSON value as MariaDB takes it (numbers and text as they are, nested values as JSON text)."""
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def _unescape(text: str) -> str:
    if text.startswith("\\x") and len(text) == 4:
        return chr(int(text[2:], 16))
    return text.replace("\\t", "\t").replace("\\n", "\n")
