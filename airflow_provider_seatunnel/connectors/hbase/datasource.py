"""The Hbase source and the sink's staging writes as a PySpark Python data source (``pyspark.sql.datasource``),
so Spark plans them as any source or sink: one partition per reader, one write task per partition. Run time
only (imports PySpark).

* Reading: ``partitions()`` lists the table's regions once and deals them in contiguous runs over exactly
  ``parallelism`` partitions; ``read()`` scans each region's key range (clipped to nothing else), ``caching``
  rows a round trip, the schema's ``family:qualifier`` columns only, and decodes each cell (:mod:`.codec`).
* Staging: each write task attempt turns its rows into puts (row key, cell timestamp, cells) and stores
  them as rows of the staging table under its own key prefix (:func:`.commit.part_prefix`); Spark's
  ``commit`` (once every task succeeded) records the prefixes and their row counts in the commit log,
  ``abort`` deletes them.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError
from ...spi.schema import parse_type
from ...spi.specsource import SpecSource
from .client import connected
from .codec import CellError, decoder, encoder
from .commit import COMMITS, STAGING, delete_prefix, manifest_column, part_prefix
from .options import ROWKEY_FIELD, Gateway

NAME = "seatunnel_hbase"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.hbase.secret"
#: rows per staging request at most (a request also stops at ``write_buffer_size`` bytes)
MAX_BATCH_ROWS = 2000


class HbaseDataSource(SpecSource):
    """``spark.read.format("seatunnel_hbase")`` / ``df.write.format(...)``, given the spec option."""

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
class RegionsPartition(InputPartition):
    ranges: list[tuple[bytes, bytes]]


def deal(items: Sequence[Any], readers: int) -> list[list[Any]]:
    """``items`` in ``readers`` contiguous runs of near-equal size (some empty when items are few)."""
    size, extra = divmod(len(items), readers)
    out, start = [], 0
    for i in range(readers):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return out


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        spec = self.spec
        with connected(Gateway.from_json(spec["gateway"]), f"cannot list the regions of {spec['table']!r}") as h:
            regions = h.regions(spec["table"])
        return [RegionsPartition(chunk) for chunk in deal(regions, max(1, int(spec["parallelism"])))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        spec = self.spec
        ranges: list[tuple[bytes, bytes]] = getattr(partition, "ranges", [])
        if not ranges:
            return
        fields = [(name, decoder(parse_type(kind))) for name, kind in spec["fields"]]
        columns = [name.encode() for name, _ in fields if name != ROWKEY_FIELD]
        gateway = Gateway.from_json(spec["gateway"])
        with connected(gateway, f"cannot scan {spec['table']!r}") as h:
            for start, stop in ranges:
                for key, cells in h.scan(spec["table"], start, stop, columns, int(spec["caching"]),
                                         int(spec["batch"])):
                    yield _row(fields, key, cells, spec["table"])


def _row(fields: list[tuple[str, Callable[[bytes], Any]]], key: bytes, cells: Mapping[bytes, bytes],
         table: str) -> tuple[Any, ...]:
    out = []
    for name, decode in fields:
        cell = key if name == ROWKEY_FIELD else cells.get(name.encode())
        try:
            out.append(None if cell is None else decode(cell))
        except CellError as e:
            raise DataError(f"table {table!r}, row {key[:80]!r}, column {name!r}: {e}") from None
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# staging writes
# ------------------------------------------------------------------------------------------------

@dataclass
class StagedPart(WriterCommitMessage):
    """What one write task attempt staged: its key prefix, the rows under it, its partition."""

    prefix: str
    rows: int
    partition: int


def put_builder(spec: Mapping[str, Any], names: Sequence[str]) -> Callable[[Sequence[Any], int], Any]:
    """A function turning a row into its put: (row key, cell timestamp, [(family:qualifier, value)])."""
    types = {name: parse_type(kind) for name, kind in spec["fields"]}
    keys = [names.index(k) for k in spec["rowkey_columns"]]
    version = names.index(spec["version_column"]) if spec.get("version_column") else -1
    skip = {*keys, version}
    cells = [(i, f"{spec['families'][name]}:{name}".encode(), encoder(types[name], spec["encoding"]))
             for i, name in enumerate(names) if i not in skip]
    delimiter, empty = str(spec["rowkey_delimiter"]), spec["null_mode"] == "empty"
    charset = "utf-8"

    def key_text(value: Any, at: int) -> str:
        if value is None:
            raise DataError(f"the rowkey_column field {names[at]!r} is null in a row")
        return ("true" if value else "false") if isinstance(value, bool) else str(value)

    def build(row: Sequence[Any], default_ts: int) -> Any:
        rowkey = delimiter.join(key_text(row[i], i) for i in keys).encode(charset)
        ts = default_ts
        if version >= 0:
            if row[version] is None:
                raise DataError(f"the version_column field {names[version]!r} is null in a row")
            ts = int(row[version])
        out = []
        for i, column, encode in cells:
            value = row[i]
            if value is None:
                if empty:
                    out.append((column, b""))
                continue
            try:
                out.append((column, encode(value)))
            except CellError as e:
                raise DataError(f"field {names[i]!r}: {e}") from None
        return rowkey, ts, out

    return build


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any], names: list[str]):
        self.spec, self.names = spec, names

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        attempt = f"{task.stageId()}.{task.taskAttemptId()}" if task is not None else "0.0"
        prefix = part_prefix(spec["commit_key"], int(spec["token"]), partition, attempt)
        build = put_builder(spec, self.names)
        started = int(time.time() * 1000)
        limit, rows, size = max(1, int(spec["write_buffer_size"])), 0, 0
        buffer: list[tuple[bytes, list[tuple[bytes, bytes]]]] = []
        with connected(Gateway.from_json(spec["gateway"]), "cannot stage rows") as h:
            for row in iterator:
                rowkey, ts, cells = build(row, started)
                staged = [(b"m:row", rowkey), (b"m:ts", struct.pack(">q", ts))]
                staged += [(b"d:" + column, value) for column, value in cells]
                buffer.append((f"{prefix}{rows:012d}".encode(), staged))
                rows += 1
                size += sum(len(c) + len(v) for c, v in staged)
                if size >= limit or len(buffer) >= MAX_BATCH_ROWS:
                    h.put_rows(STAGING, buffer, wal=True)
                    buffer, size = [], 0
            h.put_rows(STAGING, buffer, wal=True)
        return StagedPart(prefix, rows, partition)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        spec = self.spec
        parts = [[m.prefix, m.rows, m.partition] for m in messages if isinstance(m, StagedPart)]
        with connected(Gateway.from_json(spec["gateway"]), "cannot record the staged rows") as h:
            h.put_rows(COMMITS, [(spec["commit_key"].encode(),
                                  [(manifest_column(int(spec["token"])), json.dumps(parts).encode())])])

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        prefixes = [m.prefix for m in messages if isinstance(m, StagedPart)]
        if prefixes:
            with connected(Gateway.from_json(self.spec["gateway"]), "cannot discard staged rows") as h:
                for prefix in prefixes:
                    delete_prefix(h, prefix)
