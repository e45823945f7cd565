"""The Elasticsearch source and the sink's staging writes as a PySpark Python data source, so Spark plans
them as any source or sink: one partition per reader, one write task per partition. Run time only.

The spec (endpoint with credentials, what to read or stage) travels in one option, :data:`SPEC_OPTION`,
whose name Spark's redaction rule matches: plans and the UI show it as ``*********(redacted)``.

* Reading: ``parallelism`` partitions, each one slice of a sliced scroll (``slice: {id, max}``; one
  reader: a plain scroll) over the index with the query and the fields (``_source``), ``scroll_size``
  hits per page, the search context kept ``scroll_time`` and cleared at the end. A value converts to its
  field's type leniently (SeaTunnel's JSON rules, :mod:`..values`; a date also as epoch milliseconds).
* Staging: each write task bulk-indexes its rows (``max_batch_size`` per request, ``max_retry_count``
  tries) into the attempt's hidden staging index, each with its final ``_id``: the primary keys joined
  by ``key_delimiter``, else an id of the commit, token, partition and position, so a retried task
  overwrites its own documents rather than adding to them. Row kinds as SeaTunnel's writer treats them:
  UPDATE_BEFORE rows are skipped; with primary keys each key's staging document is the operation the copy
  applies to the target (:func:`staged_op`): ``u`` merge the row (INSERT, UPDATE_AFTER: SeaTunnel's
  ``doc_as_upsert``), ``d`` delete the document (DELETE), ``r`` replace it (a row after a DELETE of its key
  in the same task: the delete then the upsert); the task's last row of a key wins. Without primary keys a
  DELETE row has no document to name and fails the task (SeaTunnel's bulk request fails on it too).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError, PipelineError
from ...spi.rows import ROW_KIND
from ...spi.schema import DataType, parse_fields
from ...spi.specsource import SpecSource
from ..values import ValueFormatError, convert, to_json
from .client import Client, SearchError, quote
from .mapping import doc_id, document, hit_value
from .options import Endpoint

NAME = "seatunnel_elasticsearch"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.elasticsearch.secret"


class ElasticsearchDataSource(SpecSource):
    """``spark.read.format("seatunnel_elasticsearch")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec, [f.name for f in schema.fields])


# ------------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------------

@dataclass
class SlicePartition(InputPartition):
    slice: int
    slices: int


def _value(value: Any, t: DataType) -> Any:
    if t.name == "timestamp" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value / 1000, dt.UTC).replace(tzinfo=None)
    if t.name not in ("array", "string") and isinstance(value, list) and len(value) == 1:
        value = value[0]  # a field holding one value in an array (Elasticsearch has no array type)
    return convert(value, t)


def search_body(spec: Mapping[str, Any], slice_id: int, slices: int) -> dict[str, Any]:
    names = [n for n in parse_fields(spec["schema"]).names if n != "_id"]
    body: dict[str, Any] = {"size": int(spec["scroll_size"]), "query": spec["query"], "_source": names,
                            "sort": ["_doc"]}
    if slices > 1:
        body["slice"] = {"id": slice_id, "max": slices}
    return body


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        n = max(1, int(self.spec["parallelism"]))
        return [SlicePartition(i, n) for i in range(n)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        spec = self.spec
        schema = parse_fields(spec["schema"])
        client = Client(Endpoint.from_json(spec["endpoint"]))
        body = search_body(spec, getattr(partition, "slice", 0), getattr(partition, "slices", 1))
        scroll = str(spec["scroll_time"])
        _, page = client.request("POST", f"/{quote(spec['index'])}/_search", body, params={"scroll": scroll})
        scroll_id = page.get("_scroll_id")
        try:
            while True:
                hits = (page.get("hits") or {}).get("hits") or []
                if not hits:
                    return
                for hit in hits:
                    row = []
                    for f in schema.fields:
                        try:
                            row.append(_value(hit_value(hit, f.name), f.type))
                        except ValueFormatError as e:
                            raise DataError(f"index {spec['index']!r}, document {hit.get('_id')!r}, field "
                                            f"'{f.name}': {e}") from None
                    yield tuple(row)
                _, page = client.request("POST", "/_search/scroll", {"scroll": scroll, "scroll_id": scroll_id})
                scroll_id = page.get("_scroll_id", scroll_id)
        finally:
            if scroll_id:
                with contextlib.suppress(SearchError):  # the context expires after scroll_time anyway
                    client.request("DELETE", "/_search/scroll", {"scroll_id": [scroll_id]}, ok=(404,))


# ------------------------------------------------------------------------------------------------
# staging writes
# ------------------------------------------------------------------------------------------------

@dataclass
class StagedPart(WriterCommitMessage):
    """What one write task staged: its partition and rows."""

    partition: int
    rows: int


#: row kinds (``spi.rows``)
_UPDATE_BEFORE, _DELETE = 1, 3
#: the operations of a keyed staging document: merge the row, replace the document, delete it
MERGE, REPLACE, DELETE = "u", "r", "d"


def staged_op(kind: int, deleted_before: bool) -> str:
    """The operation a keyed row stages: DELETE deletes; an upsert merges, or replaces the document when
    the same task deleted its key before (SeaTunnel's delete then ``doc_as_upsert`` leaves the row alone)."""
    if kind == _DELETE:
        return DELETE
    return REPLACE if deleted_before else MERGE


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any], names: list[str]):
        self.spec = spec
        self.kind_at = names.index(ROW_KIND) if ROW_KIND in names else None
        self.data = [i for i, n in enumerate(names) if n != ROW_KIND]
        self.names = [names[i] for i in self.data]

    def _ids(self, partition: int) -> Any:
        spec = self.spec
        keys = list(spec["primary_keys"])
        if keys:
            positions = [(self.names.index(k), k) for k in keys]
            return lambda row, n: doc_id(positions, spec["key_delimiter"], row)
        prefix = f"{spec['commit_key'][:20]}-{int(spec['token'])}-{partition}-"
        return lambda row, n: prefix + str(n)

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        client = Client(Endpoint.from_json(spec["endpoint"]), tries=int(spec["max_retry_count"]))
        id_of = self._ids(partition)
        keyed = bool(spec["primary_keys"])
        deleted: set[str] = set()  # keys this task deleted (bounded by its DELETE rows)
        batch, rows, lines = max(1, int(spec["max_batch_size"])), 0, []
        action = {"index": {"_index": spec["staging"]}}
        for full in iterator:
            kind = int(full[self.kind_at] or 0) if self.kind_at is not None else 0
            if kind == _UPDATE_BEFORE:
                continue
            row = [full[i] for i in self.data]
            if kind == _DELETE and not keyed:
                raise DataError("a DELETE row cannot be written without primary_keys (no document id names the "
                                "document to delete): set primary_keys, or filter the row kinds out")
            try:
                action["index"]["_id"] = key = id_of(row, rows)
            except ValueError as e:
                raise DataError(str(e)) from None
            doc: dict[str, Any] = document(self.names, row)
            if keyed:
                op = staged_op(kind, key in deleted)
                if op == DELETE:
                    deleted.add(key)
                doc = {"op": op} if op == DELETE else {"op": op, "doc": doc}
            lines.append(json.dumps(action).encode() + b"\n" + to_json(doc).encode() + b"\n")
            rows += 1
            if len(lines) >= batch:
                _send(client, lines)
        _send(client, lines)
        return StagedPart(partition, rows)


def _send(client: Client, lines: list[bytes]) -> None:
    if not lines:
        return
    errors = client.bulk(lines)
    lines.clear()
    if errors:
        text = f"{len(errors)} document(s) refused, the first: {errors[0]}"
        if any(e.startswith(("mapper_parsing_exception", "document_parsing_exception", "illegal_argument"))
               for e in errors):
            raise DataError(text)
        raise PipelineError(text)
