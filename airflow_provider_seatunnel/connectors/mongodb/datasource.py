"""The MongoDB source and the sink's staging writes as a PySpark Python data source
(``pyspark.sql.datasource``): one partition per reader, one write task per partition. Run time only
(imports PySpark).

The whole spec (the uri with its credentials, what to read or stage) travels in one option,
:data:`SPEC_OPTION`, whose name Spark's redaction rule matches: plans and the UI show it as
``*********(redacted)``.

* Reading: ``partitions()`` counts the documents ``match.query`` selects and cuts them, in the order
  of ``partition.split-key`` then ``_id`` (a total order, the same for every reader), into exactly
  ``parallelism`` runs of near-equal size; ``read()`` reads its run (skip and limit over that order)
  with ``fetch.size`` documents per batch and converts each (:mod:`.bsonrows`).
* Staging: each write task attempt inserts its rows as operations into the attempt's staging
  collection (:mod:`.commit`), each tagged with the task attempt and numbered in order; Spark's
  ``commit`` (once every task succeeded) records which task attempts count and their rows in the
  collection's manifest document; ``abort`` deletes the failed attempts' operations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError
from ...spi.rows import ROW_KIND
from ...spi.schema import parse_fields
from ...spi.specsource import SpecSource
from .bsonrows import MongoValueError, document_writer, row_reader, text_of
from .client import connected
from .commit import MANIFEST, staged_op

NAME = "seatunnel_mongodb"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.mongodb.secret"
#: the server error code of a feature it lacks (FerretDB: ``noCursorTimeout``)
NOT_IMPLEMENTED = 238

log = logging.getLogger("seatunnel.mongodb")


class MongoDataSource(SpecSource):
    """``spark.read.format("seatunnel_mongodb")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec, schema)


# ------------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------------

@dataclass
class RunPartition(InputPartition):
    """One reader's run of the ordered documents: skip ``start``, read ``size``."""

    start: int
    size: int


def runs(total: int, readers: int) -> list[tuple[int, int]]:
    """``total`` documents in ``readers`` contiguous runs of near-equal size (some empty when few)."""
    size, extra = divmod(total, readers)
    out, start = [], 0
    for i in range(readers):
        n = size + (1 if i < extra else 0)
        out.append((start, n))
        start += n
    return out


def _ejson(text: str | None) -> Any:
    from bson import json_util

    return json_util.loads(text) if text else None


def _order(split_key: str) -> list[tuple[str, int]]:
    return [("_id", 1)] if split_key == "_id" else [(split_key, 1), ("_id", 1)]


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        spec = self.spec
        with connected(spec["uri"], f"cannot count the documents of {spec['label']}") as client:
            total = client[spec["database"]][spec["collection"]].count_documents(_ejson(spec["query"]) or {})
        return [RunPartition(start, size) for start, size in runs(total, max(1, int(spec["parallelism"])))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        spec = self.spec
        start, size = int(getattr(partition, "start", 0)), int(getattr(partition, "size", 0))
        if size <= 0:
            return
        schema = parse_fields(spec["schema"])
        convert = row_reader(schema)
        with connected(spec["uri"], f"cannot read {spec['label']}") as client:
            for doc in _cursor(client, spec, start, size):
                try:
                    yield (text_of(doc),) if spec["flat"] else convert(doc)
                except MongoValueError as e:
                    raise DataError(f"document {text_of(doc.get('_id'))} of {spec['label']}: {e}") from None


def _cursor(client: Any, spec: Mapping[str, Any], start: int, size: int) -> Iterator[Any]:
    """The run's documents; without ``noCursorTimeout`` where the server lacks it (FerretDB)."""
    import pymongo.errors

    collection = client[spec["database"]][spec["collection"]]

    def find(no_timeout: bool) -> Any:
        return (collection.find(_ejson(spec["query"]) or {}, _ejson(spec["projection"]),
                                no_cursor_timeout=no_timeout)
                .sort(_order(spec["split_key"])).skip(start).limit(size)
                .batch_size(int(spec["fetch_size"])).max_time_ms(int(spec["max_time_ms"])))

    cursor = find(bool(spec["no_timeout"]))
    try:
        first = next(cursor, None)
    except pymongo.errors.OperationFailure as e:
        if e.code != NOT_IMPLEMENTED or "noCursorTimeout" not in str(e):
            raise
        log.warning("the server does not support noCursorTimeout: %s is read with the server's cursor timeout",
                    spec["label"])
        cursor = find(False)
        first = next(cursor, None)
    if first is None:
        return
    yield first
    yield from cursor


# ------------------------------------------------------------------------------------------------
# staging writes
# ------------------------------------------------------------------------------------------------

@dataclass
class StagedPart(WriterCommitMessage):
    """What one write task staged: its task attempt, the operations it staged, its partition."""

    attempt: str
    rows: int
    partition: int


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any], schema: Any):
        from pyspark.sql.types import StructType

        self.spec = spec
        names = [f.name for f in schema.fields]
        self.kind_at = names.index(ROW_KIND) if ROW_KIND in names else None
        self.data = [i for i, n in enumerate(names) if n != ROW_KIND]
        self.struct = StructType([schema.fields[i] for i in self.data])

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        attempt = f"{task.stageId()}.{task.taskAttemptId()}" if task is not None else "0.0"
        to_doc = document_writer(self.struct)
        keys = tuple(spec["primary_key"])
        batch, buffer, seq = max(1, int(spec["batch"])), [], 0
        with connected(spec["uri"], f"cannot stage rows for {spec['label']}") as client:
            stage = client[spec["database"]][spec["stage"]]
            for row in iterator:
                kind = int(row[self.kind_at]) if self.kind_at is not None else 0
                op = staged_op(to_doc([row[i] for i in self.data]), kind, keys, bool(spec["upsert"]))
                if op is None:
                    continue
                op.update({"_id": f"{partition:06d}:{attempt}:{seq:012d}", "a": attempt})
                buffer.append(op)
                seq += 1
                if len(buffer) >= batch:
                    stage.insert_many(buffer, ordered=True)
                    buffer.clear()
            if buffer:
                stage.insert_many(buffer, ordered=True)
        return StagedPart(attempt, seq, partition)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        spec = self.spec
        staged = sorted((m for m in messages if isinstance(m, StagedPart)), key=lambda m: m.partition)
        parts = [{"a": m.attempt, "r": m.rows, "p": m.partition} for m in staged]  # no nested arrays: FerretDB
        with connected(spec["uri"], f"cannot record the staged rows of {spec['label']}") as client:
            client[spec["database"]][spec["stage"]].replace_one({"_id": MANIFEST}, {"_id": MANIFEST, "parts": parts},
                                                                 upsert=True)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        spec = self.spec
        attempts = [m.attempt for m in messages if isinstance(m, StagedPart)]
        if attempts:
            with connected(spec["uri"], f"cannot discard staged rows of {spec['label']}") as client:
                client[spec["database"]][spec["stage"]].delete_many({"a": {"$in": attempts}})
