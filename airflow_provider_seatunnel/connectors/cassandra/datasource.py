"""The Cassandra source and sink writers as a PySpark Python data source (``pyspark.sql.datasource``), so
Spark plans them as any source or sink: one partition per reader, one write task per partition. Run time
only (imports PySpark).

The whole spec (endpoint with credentials, what to read or write) travels in one option,
:data:`SPEC_OPTION`, whose name Spark's redaction rule matches: plans and the UI show it redacted.

* Reading: the driver hands over one query per reader (:mod:`.source`: a token range of the table, or the
  whole cql for the first reader); ``read()`` pages through its rows (``fetch_size`` rows a page) and
  converts each value (:mod:`.types`).
* Writing: each write task prepares one ``INSERT INTO table (fields) VALUES (?, ...)`` and writes its
  rows ``batch_size`` at a time, as concurrent single-row INSERTs (``async_write``, every one awaited) or
  as batch statements of ``batch_type``; before each group it checks the run's fence (:mod:`.sink`) and
  stops when a newer attempt of the run took it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError, PipelineError
from ...spi.specsource import SpecSource
from .client import consistency, quote, session_of
from .options import Endpoint
from .types import null_value, reader, writer

NAME = "seatunnel_cassandra"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.cassandra.secret"
FETCH_SIZE = 5000
#: single-row INSERTs in flight per write task (async_write), at most batch_size
MAX_IN_FLIGHT = 64


class CassandraDataSource(SpecSource):
    """``spark.read.format("seatunnel_cassandra")`` / ``df.write.format(...)``, given the spec option."""

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
class QueryPartition(InputPartition):
    """One reader's query and its bind values (a token range's bounds), or nothing to read."""

    cql: str | None
    bounds: list[int]


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        return [QueryPartition(p["cql"], list(p["bounds"])) for p in self.spec["partitions"]]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        from cassandra.query import SimpleStatement

        cql: str | None = getattr(partition, "cql", None)
        if cql is None:
            return
        bounds: list[int] = getattr(partition, "bounds", [])
        endpoint = Endpoint.from_json(self.spec["endpoint"])
        with session_of(endpoint, "cannot read", metadata=False) as session:
            level = consistency(endpoint.consistency)
            if bounds:
                statement: Any = session.prepare(cql)
                statement.consistency_level, statement.fetch_size = level, FETCH_SIZE
                rows = session.execute(statement.bind(bounds))
            else:
                rows = session.execute(SimpleStatement(cql, consistency_level=level, fetch_size=FETCH_SIZE))
            names = [c for c in rows.column_names]
            converts = [reader(t) for t in rows.column_types]
            nulls = [null_value(t) for t in rows.column_types]
            for row in rows:
                out = []
                for name, convert, null, value in zip(names, converts, nulls, row, strict=True):
                    try:
                        out.append(null if value is None else convert(value))
                    except DataError as e:
                        raise DataError(f"column {name!r}: {e}") from None
                yield tuple(out)


# ------------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------------

@dataclass
class Written(WriterCommitMessage):
    rows: int
    partition: int


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any], names: list[str]):
        self.spec, self.names = spec, names

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        endpoint = Endpoint.from_json(spec["endpoint"])
        fields: list[str] = spec["fields"]
        at = [self.names.index(f) for f in fields]
        size = max(1, int(spec["batch_size"]))
        rows = 0
        with session_of(endpoint, f"cannot write into {spec['table']}", metadata=False) as session:
            insert = session.prepare(f"INSERT INTO {spec['table']} ({', '.join(quote(f) for f in fields)}) "
                                     f"VALUES ({', '.join('?' for _ in fields)})")
            insert.consistency_level = consistency(endpoint.consistency)
            converts = [writer(c.type) for c in insert.column_metadata]
            fence = _Fence(session, spec)
            group: list[tuple[Any, ...]] = []
            for row in iterator:
                group.append(_values(row, at, fields, converts))
                if len(group) >= size:
                    rows += _flush(session, insert, group, spec, fence)
            rows += _flush(session, insert, group, spec, fence)
        return Written(rows, partition)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to publish: every INSERT is visible once written (the driver records the run's commit)."""

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to withdraw: written rows stay; a restore writes them again (idempotent upserts)."""


def _values(row: Any, at: list[int], fields: list[str], converts: list[Any]) -> tuple[Any, ...]:
    out = []
    for i, name, convert in zip(at, fields, converts, strict=True):
        value = row[i]
        try:
            out.append(None if value is None else convert(value))
        except (TypeError, ValueError, ArithmeticError) as e:
            raise DataError(f"the value {str(value)[:80]!r} of field {name!r} does not fit its column: {e}") from None
    return tuple(out)


class _Fence:
    """The run's attempt token, read (serially) before each group: a newer attempt stops this one."""

    def __init__(self, session: Any, spec: Mapping[str, Any]) -> None:
        from cassandra import ConsistencyLevel

        self.token, self.key = spec.get("token"), spec.get("commit_id")
        self.query = None
        if self.token is not None:
            self.query = session.prepare(f"SELECT attempt FROM {spec['commits']} WHERE id = ?")
            self.query.consistency_level = ConsistencyLevel.SERIAL
        self.session, self.target = session, spec["table"]

    def check(self) -> None:
        if self.query is None:
            return
        row = self.session.execute(self.query.bind([self.key])).one()
        newest = None if row is None else row[0]
        if newest != self.token:
            raise PipelineError(f"attempt token {self.token} for {self.target} was superseded by token {newest} "
                                "(another attempt of the same run id is writing it): this attempt stopped writing")


def _flush(session: Any, insert: Any, group: list[tuple[Any, ...]], spec: Mapping[str, Any], fence: _Fence) -> int:
    """Write ``group`` (then empty it) as concurrent INSERTs or as batches; the number of rows written."""
    from cassandra import InvalidRequest
    from cassandra.concurrent import execute_concurrent_with_args
    from cassandra.query import BatchStatement, BatchType

    if not group:
        return 0
    fence.check()
    n = len(group)
    if spec["async_write"]:
        execute_concurrent_with_args(session, insert, group, concurrency=min(MAX_IN_FLIGHT, n),
                                     raise_on_first_error=True)
    else:
        batch = BatchStatement(batch_type=getattr(BatchType, spec["batch_type"]),
                               consistency_level=insert.consistency_level)
        for values in group:
            batch.add(insert, values)
        try:
            session.execute(batch)
        except InvalidRequest as e:
            if "too large" not in str(e).lower():
                raise
            for values in group:  # as SeaTunnel: a refused batch is written row by row
                session.execute(insert, values)
    group.clear()
    return n
