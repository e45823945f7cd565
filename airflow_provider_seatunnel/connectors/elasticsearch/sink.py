"""The Elasticsearch sink's storage verbs, on the Spark driver: the commit log, staging, the fenced commit.

Elasticsearch has no transactions; what it has is an atomic conditional write of one document
(``if_seq_no``/``if_primary_term``, ``op_type=create``) and writes by document id that a replay repeats
to the same state. The sink builds the engine's protocol from those:

* **Commit log**: the hidden index :data:`COMMITS` holds one document per commit key: its newest attempt
  token, its state (``open``, ``claimed``, ``committed``), the staging index and target. ``take_token``
  raises the token by a conditional write (a lost race reads again); a commit found ``claimed`` (an
  attempt died while copying) is rolled forward first, and then counts as committed.
* **stage**: ONE Spark write (:mod:`.datasource`) of the rows into the attempt's hidden staging index
  ``seatunnel_staging_<commit key>_<token>``, each document with its final ``_id``.
* **publish**: reads the log; ``ALREADY`` when committed, ``SUPERSEDED`` when a newer token was taken,
  ``MISMATCH`` when the staging holds other than the rows staged (without primary keys; with them rows of
  one key collapse into one document); otherwise the **claim**, one conditional write of
  ``state=claimed`` under the attempt's token, is the commit point: from then on the copy is decided and
  a restore finishes it. The copy, after DROP_DATA's delete of the target's documents (RECREATE_SCHEMA:
  the index dropped and created): without primary keys one ``_reindex`` from the staging into the target
  (ids kept, so a copy repeated after a crash lands the same documents once); with primary keys the
  staged operation of each key (:func:`apply_ops`: merge with ``doc_as_upsert``, replace, delete), sent
  by bulk requests from a scroll of the staging: each operation ends in the same document however often
  it is repeated. Then ``state=committed`` and the staging index deleted. ``sink.move`` fires before the
  claim and before the copy.
* **Save modes** (:meth:`ElasticsearchSinkVerbs.apply_save_modes`): once per run and target (a marker
  document in :data:`COMMITS`): ``ERROR_WHEN_SCHEMA_NOT_EXIST`` and ``ERROR_WHEN_DATA_EXISTS`` fail the
  run, ``CREATE_SCHEMA_WHEN_NOT_EXIST`` creates the index (dynamic mapping, as SeaTunnel's catalog
  does); the destructive modes wait for the first commit's copy.

A reader may see a copy in progress (some of the table's documents): Elasticsearch cannot publish many
documents at once. The guarantee is exactly-once in what the target finally holds, never a duplicate nor a
loss, with or without primary keys.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
from collections.abc import Mapping
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import DataError, RuntimeConfigError
from ...spi.pysources import register_for_write
from ...spi.rows import ROW_KIND, data_columns, keys_in_arrival_order
from ...spi.rows import quote as column
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from ..files.placeholders import expand_table_placeholders
from ..values import to_json
from .client import Client, SearchError, quote
from .options import Endpoint, SearchOptions

log = logging.getLogger("seatunnel.elasticsearch")

#: the commit log: one document per commit key, and the save-mode markers
COMMITS = "seatunnel_commits"
STAGING_PREFIX = "seatunnel_staging_"
_HIDDEN = {"settings": {"index": {"hidden": True, "number_of_shards": 1, "auto_expand_replicas": "0-1"}}}
_TRIES = 20
#: documents per page and bulk request of a keyed copy, at least
_COPY_BATCH = 500


def staging_index(commit_key: str, token: int) -> str:
    return f"{STAGING_PREFIX}{commit_key}_{int(token)}"


def target_index(options: SearchOptions, table: str, columns: list[str] | None = None) -> str:
    """The index a table lands in: the ``index`` option with the table placeholders expanded, lower-cased
    (as SeaTunnel's index names)."""
    return expand_table_placeholders(options.index, table, columns).lower()


def _ensure(client: Client, index: str, body: Mapping[str, Any] | None = None) -> None:
    status, found = client.request("PUT", "/" + quote(index), dict(body or {}), ok=(400,))
    if status == 400 and "already_exists" not in json.dumps(found):
        raise SearchError(f"cannot create the index {index!r}: {found}", 400)


class CommitDoc:
    """One document of the commit log as read: its source and its sequence numbers."""

    def __init__(self, found: Mapping[str, Any]):
        self.source: dict[str, Any] = dict(found.get("_source") or {})
        self.seq_no, self.term = int(found.get("_seq_no", 0)), int(found.get("_primary_term", 0))

    @property
    def token(self) -> int:
        return int(self.source.get("token", 0))

    @property
    def state(self) -> str:
        return str(self.source.get("state", "open"))


class CommitLog:
    """Attempt tokens and commit records in the cluster's :data:`COMMITS` index."""

    def __init__(self, client: Client):
        self.client = client
        self._ready = False

    def read(self, key: str) -> CommitDoc | None:
        if not self._ready:  # the log's index, created once by whichever attempt comes first
            _ensure(self.client, COMMITS, _HIDDEN)
            self._ready = True
        status, found = self.client.request("GET", f"/{COMMITS}/_doc/{key}", ok=(404,))
        return CommitDoc(found) if status == 200 and found.get("found") else None

    def write(self, key: str, source: Mapping[str, Any], after: CommitDoc | None) -> bool:
        """Write ``source`` only if the document is still ``after`` (None: absent); False on a lost race."""
        params: dict[str, Any] = {"refresh": "true"}
        if after is None:
            params["op_type"] = "create"
        else:
            params.update(if_seq_no=after.seq_no, if_primary_term=after.term)
        status, _ = self.client.request("PUT", f"/{COMMITS}/_doc/{key}", dict(source), params=params, ok=(409,))
        return status != 409

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        for _ in range(_TRIES):
            doc = self.read(commit.key)
            if doc is None:
                if self.write(commit.key, {"token": 1, "state": "open", "table": commit.table}, None):
                    return 1, False
                continue
            if doc.state == "claimed":
                roll_forward(self.client, commit.key, doc)
                continue
            if self.write(commit.key, {**doc.source, "token": doc.token + 1}, doc):
                return doc.token + 1, doc.state == "committed"
        raise SearchError(f"cannot take an attempt token in {COMMITS}: {_TRIES} conflicting writes")

    def newest_token(self, commit: CommitId) -> int:
        doc = self.read(commit.key)
        return doc.token if doc is not None else 0


def _reset(client: Client, target: str, how: str) -> None:
    if how == "RECREATE_SCHEMA":
        client.delete_index(target)
        _ensure(client, target)
    elif how == "DROP_DATA" and client.exists(target):
        client.request("POST", f"/{quote(target)}/_delete_by_query",
                       {"query": {"match_all": {}}}, params={"refresh": "true", "conflicts": "proceed"})


def roll_forward(client: Client, key: str, doc: CommitDoc) -> int:
    """Finish a claimed commit: the reset its save modes ask, the copy, the record; the documents copied."""
    src = doc.source
    staging, target = str(src["staging"]), str(src["target"])
    if src.get("reset"):
        _reset(client, target, str(src["reset"]))
    copied = 0
    if client.exists(staging) and src.get("ops"):
        copied = apply_ops(client, staging, target, int(src.get("batch") or _COPY_BATCH))
    elif client.exists(staging):
        _, answer = client.request("POST", "/_reindex", {"source": {"index": staging}, "dest": {"index": target}},
                                   params={"refresh": "true", "wait_for_completion": "true"})
        failures = answer.get("failures") or []
        if failures:
            raise SearchError(f"copying {staging} into {target}: {len(failures)} failure(s), the first: "
                              f"{json.dumps(failures[0])[:300]}")
        copied = int(answer.get("total", 0))
    elif src.get("rows"):
        raise SearchError(f"the staging index {staging} of a claimed commit is gone: {target} may miss documents")
    record = {**src, "state": "committed", "committed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    if not CommitLog(client).write(key, record, doc):
        log.info("commit %s was finished by another attempt", key)
    if src.get("reset") and src.get("marker"):
        _mark(client, str(src["marker"]), {"reset_done": True})
    client.delete_index(staging)
    return copied


def _bulk_lines(target: str, hit: Mapping[str, Any]) -> list[bytes]:
    """The bulk action of one staged operation on the target (its ``_id`` kept)."""
    meta = {"_index": target, "_id": hit["_id"]}
    source = hit.get("_source") or {}
    op = source.get("op")
    if op == "d":
        return [json.dumps({"delete": meta}).encode()]
    doc = to_json(source.get("doc") or {}).encode()
    if op == "r":
        return [json.dumps({"index": meta}).encode(), doc]
    return [json.dumps({"update": meta}).encode(), b'{"doc": ' + doc + b', "doc_as_upsert": true}']


def apply_ops(client: Client, staging: str, target: str, batch: int) -> int:
    """Apply a keyed staging's operations to ``target`` (scrolled in pages of ``batch``, one bulk request a
    page); every operation is idempotent, so a restore repeats a half-done copy safely. The count applied."""
    _ensure(client, target)
    client = Client(client.endpoint, client.tries, client.timeout, exact=True)  # decimals kept to the digit
    body = {"size": batch, "query": {"match_all": {}}, "sort": ["_doc"]}
    _, page = client.request("POST", f"/{quote(staging)}/_search", body, params={"scroll": "5m"})
    scroll_id, applied = page.get("_scroll_id"), 0
    try:
        while hits := (page.get("hits") or {}).get("hits") or []:
            lines = [line + b"\n" for hit in hits for line in _bulk_lines(target, hit)]
            errors = client.bulk(lines)
            if errors:
                raise SearchError(f"copying {staging} into {target}: {len(errors)} document(s) refused, the first: "
                                  f"{errors[0]}")
            applied += len(hits)
            _, page = client.request("POST", "/_search/scroll", {"scroll": "5m", "scroll_id": scroll_id})
            scroll_id = page.get("_scroll_id", scroll_id)
    finally:
        if scroll_id:
            with contextlib.suppress(SearchError):
                client.request("DELETE", "/_search/scroll", {"scroll_id": [scroll_id]}, ok=(404,))
    client.refresh(target)
    return applied


def _mark(client: Client, marker: str, fields: Mapping[str, Any]) -> None:
    client.request("POST", f"/{COMMITS}/_update/{marker}", {"doc": dict(fields)}, params={"refresh": "true"},
                   ok=(404,))


def marker_key(ctx: RunContext, vertex: Vertex, target: str) -> str:
    return "savemode-" + digest(ctx.save_mode_run_id, ctx.pipeline_key, vertex.ref, target)


def apply_save_modes(client: Client, options: SearchOptions, target: str, marker: str) -> None:
    """The save modes of one target, once per run (the marker): checks now, resets at the first copy."""
    status, found = client.request("GET", f"/{COMMITS}/_doc/{marker}", ok=(404,))
    if status == 200 and found.get("found"):
        return
    exists = client.exists(target)
    schema, data = options.schema_save_mode, options.data_save_mode
    if schema == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise RuntimeConfigError(f"the index {target!r} does not exist (schema_save_mode = "
                                 "ERROR_WHEN_SCHEMA_NOT_EXIST)")
    if data == "ERROR_WHEN_DATA_EXISTS" and exists:
        client.refresh(target)
        if client.count(target) > 0:
            raise DataError(f"the index {target!r} holds documents (data_save_mode = ERROR_WHEN_DATA_EXISTS)")
    if schema in ("CREATE_SCHEMA_WHEN_NOT_EXIST", "RECREATE_SCHEMA") and not exists:
        _ensure(client, target)
    reset = "RECREATE_SCHEMA" if schema == "RECREATE_SCHEMA" and exists else (
        "DROP_DATA" if data == "DROP_DATA" else "")
    client.request("PUT", f"/{COMMITS}/_doc/{marker}", {"target": target, "reset": reset, "reset_done": False},
                   params={"refresh": "true", "op_type": "create"}, ok=(409,))


def pending_reset(client: Client, marker: str) -> str:
    status, found = client.request("GET", f"/{COMMITS}/_doc/{marker}", ok=(404,))
    source = found.get("_source") or {} if status == 200 else {}
    return "" if source.get("reset_done") else str(source.get("reset") or "")


def stage(ctx: RunContext, vertex: Vertex, options: SearchOptions, commit: CommitId, token: int, df: Any) -> Staged:
    """ONE Spark write of the table's rows into the attempt's staging index."""
    from .datasource import NAME, SPEC_OPTION, ElasticsearchDataSource

    assert options.endpoint is not None
    from pyspark.sql import functions as F

    client = Client(options.endpoint, options.max_retry_count)
    columns = data_columns(df)
    target = target_index(options, commit.table, columns)
    missing = [k for k in options.primary_keys if k not in columns]
    if missing:
        raise RuntimeConfigError(f"primary_keys {missing} are not fields of the rows ({', '.join(columns)})")
    df = keys_in_arrival_order(df, options.primary_keys, int(vertex.parallelism))  # shuffled changes: in order
    data = df.select(*[F.col(column(c)) for c in columns], *([F.col(ROW_KIND)] if ROW_KIND in df.columns else []))
    staging = staging_index(commit.key, token)
    client.delete_index(staging)  # a killed write of this same token: begin again
    _ensure(client, staging, {"settings": {"index": {"hidden": True, "number_of_shards": 1,
                                                     "number_of_replicas": 0, "refresh_interval": "-1"}}})
    spec = {"endpoint": options.endpoint.to_json(), "staging": staging, "commit_key": commit.key, "token": token,
            "primary_keys": list(options.primary_keys), "key_delimiter": options.key_delimiter,
            "max_batch_size": options.max_batch_size, "max_retry_count": options.max_retry_count}
    register_for_write(ctx.spark, data, ElasticsearchDataSource)
    data.write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
    client.refresh(staging)
    staged_docs = client.count(staging)
    log.info("Elasticsearch %s: staged %d document(s) for %s in %s", vertex.ref, staged_docs, target, staging)
    return Staged(commit, token, f"{options.endpoint.label} index {target!r}", staged_docs, ((staging, staged_docs),),
                  {"staging": staging, "index": target, "keyed": bool(options.primary_keys),
                   "batch": max(options.max_batch_size, _COPY_BATCH),
                   "marker": marker_key(ctx, vertex, target)})


def publish(ctx: RunContext, vertex: Vertex, endpoint: Endpoint, staged: Staged) -> Published:
    """The fenced claim, then the copy (see the module's docstring)."""
    client = Client(endpoint)
    commits = CommitLog(client)
    key, d = staged.commit.key, staged.detail
    ctx.fault_point("sink.move", vertex)
    for _ in range(_TRIES):
        doc = commits.read(key)
        if doc is None:
            return Published(Outcome.SUPERSEDED, newest=0)
        if doc.state == "committed":
            return Published(Outcome.ALREADY)
        if doc.state == "claimed":
            roll_forward(client, key, doc)
            return Published(Outcome.ALREADY)
        if doc.token != staged.token:
            return Published(Outcome.SUPERSEDED, newest=doc.token)
        client.refresh(str(d["staging"]))
        found = client.count(str(d["staging"])) if client.exists(str(d["staging"])) else 0
        if found != staged.rows:
            return Published(Outcome.MISMATCH, found=found, where=f"index {d['staging']}", expected=staged.rows)
        claim = {**doc.source, "state": "claimed", "staging": d["staging"], "target": d["index"],
                 "rows": staged.rows, "reset": pending_reset(client, str(d["marker"])), "marker": d["marker"],
                 "ops": bool(d.get("keyed")), "batch": int(d.get("batch") or 1000),
                 "run_id": ctx.run_id, "sink": vertex.ref, "attempt": ctx.attempt}
        if not commits.write(key, claim, doc):
            continue  # a newer attempt took a token meanwhile: read again
        ctx.fault_point("sink.move", vertex)
        claimed = commits.read(key)
        assert claimed is not None
        roll_forward(client, key, claimed)
        return Published(Outcome.PUBLISHED, rows=staged.rows)
    raise SearchError(f"cannot claim the commit {key}: {_TRIES} conflicting writes")


def discard(endpoint: Endpoint, staged: Staged) -> None:
    """Delete the attempt's staging, unless its commit was claimed: the restore copies it from there."""
    client = Client(endpoint)
    doc = CommitLog(client).read(staged.commit.key)
    if doc is not None and doc.state == "claimed" and doc.token == staged.token:
        log.info("commit %s is claimed: its staging stays for the restore", staged.commit.key)
        return
    client.delete_index(str(staged.detail.get("staging") or staging_index(staged.commit.key, staged.token)))


def discard_older(endpoint: Endpoint, commit: CommitId, token: int) -> int:
    """Delete the staging indices of tokens below ``token`` (they can never commit)."""
    client = Client(endpoint)
    _, found = client.request("GET", f"/_cat/indices/{STAGING_PREFIX}{commit.key}_*",
                              params={"format": "json", "h": "index", "expand_wildcards": "all"}, ok=(404,))
    dropped = 0
    for row in found if isinstance(found, list) else []:
        name = str(row.get("index", ""))
        tail = name.rpartition("_")[2]
        if tail.isdigit() and int(tail) < token:
            client.delete_index(name)
            dropped += 1
    return dropped
