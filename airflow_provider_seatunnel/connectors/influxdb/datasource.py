"""The InfluxDB source and the sink's staging writes as a PySpark Python data source, so Spark plans them as
any source or sink: one partition per reader, one write task per partition. Run time only (imports PySpark).

The spec (endpoint with credentials, what to read or stage) travels in one option, :data:`SPEC_OPTION`,
whose name Spark's redaction rule matches: plans and the UI show it as ``*********(redacted)``.

* Reading: the split queries are dealt in contiguous runs over exactly ``parallelism`` partitions; each
  partition runs its queries and yields their answers' rows chunk by chunk (:mod:`.points`).
* Staging: each write task turns its rows into points and writes them, ``batch_size`` a request, as
  staging points of the bookkeeping database (:mod:`.staging`): tags commit, token and partition, the line
  as a string field, the row's number as its time offset; a retried task overwrites its own points. It
  returns its partition and rows; Spark's commit hands them to the driver.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.specsource import SpecSource
from . import client
from .options import Endpoint
from .points import PointWriter, row_reader
from .staging import DATABASE, STAGING_RP, staging_lines, write_manifest

NAME = "seatunnel_influxdb"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.influxdb.secret"


class InfluxDataSource(SpecSource):
    """``spark.read.format("seatunnel_influxdb")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec, [f.name for f in schema.fields])


@dataclass
class QueriesPartition(InputPartition):
    queries: list[str]


def deal(queries: Sequence[str], readers: int) -> list[list[str]]:
    """``queries`` in ``readers`` contiguous runs of near-equal size (some empty when they are few)."""
    size, extra = divmod(len(queries), readers)
    out, start = [], 0
    for i in range(readers):
        end = start + size + (1 if i < extra else 0)
        out.append(list(queries[start:end]))
        start = end
    return out


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        return [QueriesPartition(run) for run in deal(self.spec["queries"], max(1, int(self.spec["parallelism"])))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        spec = self.spec
        endpoint = Endpoint.from_json(spec["endpoint"])
        names, kinds = spec["names"], spec["kinds"]
        for q in getattr(partition, "queries", []):
            for series in client.query(endpoint, spec["database"], q, spec["epoch"], float(spec["timeout"]),
                                       doing="cannot read the query's answer"):
                read = row_reader(names, kinds, series.get("columns") or [], series.get("tags"))
                for values in series.get("values") or ():
                    yield read(values)


@dataclass
class StagedPart(WriterCommitMessage):
    """What one write task staged: its partition and its rows."""

    partition: int
    rows: int


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any], names: list[str]):
        self.spec, self.names = spec, names

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        endpoint = Endpoint.from_json(spec["endpoint"])
        points = PointWriter(spec["measurement"], self.names, spec["kinds"], spec["key_time"], spec["key_tags"],
                             int(spec["unit_ns"]))
        base, stride = int(spec["base_ns"]), max(1, int(spec["partitions"]))
        batch, rows, buffer = max(1, int(spec["batch_size"])), 0, []
        for row in iterator:
            buffer.append(points.line(row, base + rows * stride + partition))
            rows += 1
            if len(buffer) >= batch:
                self._flush(endpoint, partition, rows - len(buffer), buffer)
        self._flush(endpoint, partition, rows - len(buffer), buffer)
        return StagedPart(partition, rows)

    def _flush(self, endpoint: Endpoint, partition: int, first: int, buffer: list[str]) -> None:
        spec = self.spec
        lines = staging_lines(spec["commit_key"], int(spec["token"]), partition, first, buffer, int(spec["base_ns"]))
        client.write(endpoint, DATABASE, lines, STAGING_RP, float(spec["write_timeout"]),
                     int(spec["max_retries"]), int(spec["backoff_ms"]), int(spec["max_backoff_ms"]),
                     doing="cannot stage rows")
        buffer.clear()

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Record the parts Spark committed (partition, rows) as the attempt's manifest."""
        spec = self.spec
        parts = sorted([m.partition, m.rows] for m in messages if isinstance(m, StagedPart))
        write_manifest(Endpoint.from_json(spec["endpoint"]), spec["commit_key"], int(spec["token"]), parts,
                       int(spec["base_ns"]))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to do: the engine discards the attempt's staging."""


def now_ns() -> int:
    """The processing time of a staging attempt, in nanoseconds (microsecond steps)."""
    return time.time_ns() // 1000 * 1000
