"""What the change data capture sources share: a stream of text rows with row kinds whose first
micro-batch starts with a snapshot written as files, the capture state kept beside them, and the
cast back to the tables' types.

A CDC source captures each table once per stream: the driver takes the snapshot at a position of
the database's change log (a replication slot's consistent point, a binlog position) and writes it
under ``<state dir>/<table>/snapshot/`` as Parquet files of text values plus the row-kind column
:data:`KIND_COLUMN`; ``<table>/capture.json`` then records the position and the table's Spark
schema (written last, atomically: a run killed before it starts the capture over). The stream's
reader (a PySpark Python data source, in Spark's Python workers) reads those files as the first
part of its first micro-batch (:func:`read_snapshot`), then the change log; the driver casts the
text back (:func:`typed`) with native expressions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from ...spi import RunContext
from ...spi.errors import RuntimeConfigError
from ...spi.rows import ROW_KIND
from .schemachange import snapshot_names

KIND_COLUMN = "__st_kind"
STATE_FILE = "capture.json"


class SnapshotPart(InputPartition):
    """One snapshot file of a stream's first micro-batch."""

    def __init__(self, path: str):
        self.path = path


class ChangePart(InputPartition):
    """The changes of a micro-batch: from offset ``start`` to offset ``end``."""

    def __init__(self, start: dict[str, Any], end: dict[str, Any]):
        self.start, self.end = start, end


class SnapshotThenChanges(DataSourceStreamReader):
    """A CDC stream's reader: the first micro-batch (from :meth:`initialOffset`) is the snapshot files
    followed by the changes after the snapshot's position, later ones the changes between their offsets.

    A subclass says where changes start after the snapshot (:meth:`snapshot_offset`), how offsets
    order (:meth:`order`), the latest offset (:meth:`latestOffset`) and how a range's changes are read
    (:meth:`changes`)."""

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def snapshot_offset(self) -> dict[str, Any]:
        raise NotImplementedError

    def order(self, offset: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def changes(self, start: dict[str, Any], end: dict[str, Any]) -> Iterator[tuple]:
        raise NotImplementedError

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        parts: list[InputPartition] = []
        begin = start
        if start == self.initialOffset():
            parts.extend(SnapshotPart(f) for f in snapshot_files(self.spec["snapshot"]))
            begin = self.snapshot_offset()
        if self.order(end) > self.order(begin):
            parts.append(ChangePart(dict(begin), dict(end)))
        return parts

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, SnapshotPart):
            yield from read_snapshot(partition, list(self.spec["columns"]), snapshot_names(self.spec))
            return
        assert isinstance(partition, ChangePart)
        yield from self.changes(partition.start, partition.end)


class ChangeStreamSource(DataSource):
    """A CDC connector's PySpark data source: ``spark.readStream.format(<format_name>)`` with the job's spec
    (JSON) in the option ``spec_option`` streams through ``stream_reader``. A connector declares the three as
    class attributes of a subclass (registered by class: Spark pickles it by reference)."""

    format_name: ClassVar[str]
    #: the option holding the spec; its name matches Spark's redaction pattern (the spec holds the password)
    spec_option: ClassVar[str]
    stream_reader: ClassVar[type[SnapshotThenChanges]]

    @classmethod
    def name(cls) -> str:
        return cls.format_name

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return self.stream_reader(json.loads(self.options[self.spec_option]))


def snapshot_files(directory: str) -> list[str]:
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".parquet"))


def read_snapshot(part: SnapshotPart, columns: list[str], renamed: Mapping[str, str] | None = None) -> Iterator[Any]:
    """The Arrow batches of a snapshot file as the stream declares them: ``columns`` (text; a column
    the table gained after the snapshot is null; one renamed since read from its name in the file,
    ``renamed``) and the row kind, all nullable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(part.path)
    files = [(renamed or {}).get(c, c) for c in columns]
    arrays = [table.column(f) if f in table.column_names else pa.nulls(table.num_rows, pa.string()) for f in files]
    arrays.append(table.column(KIND_COLUMN))
    schema = pa.schema([pa.field(c, pa.string()) for c in columns] + [pa.field(KIND_COLUMN, pa.int8())])
    yield from pa.Table.from_arrays(arrays, schema=schema).to_batches()


def local_dir(uri: str, plugin: str) -> str:
    """A state directory's local path (Python workers read the snapshot files from it)."""
    if uri.startswith("file://"):
        return uri[len("file://"):]
    if uri.startswith("file:"):
        return uri[len("file:"):]
    if "://" in uri:
        raise RuntimeConfigError(f"{plugin} keeps its snapshot under checkpoint.root, which must be a local (or "
                                 f"shared, mounted) directory here; found {uri}")
    return uri


def table_dir(root: str, table: str) -> str:
    directory = os.path.join(root, table.replace("/", "_"))
    os.makedirs(directory, exist_ok=True)
    return directory


def load_state(directory: str) -> dict[str, Any] | None:
    path = os.path.join(directory, STATE_FILE)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return dict(json.load(f))


def save_state(directory: str, state: Mapping[str, Any]) -> None:
    tmp = os.path.join(directory, STATE_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(state), f)
    os.replace(tmp, os.path.join(directory, STATE_FILE))


def refuse_orphan_checkpoint(ctx: RunContext, table: str, root: str, plugin: str) -> None:
    """A pipeline checkpoint whose queries already ran, without the capture state of ``table``: its
    offsets name a position of a capture that is gone; starting over would lose the changes between."""
    stream = ctx.stream
    if stream is None:
        return
    queries = os.path.join(local_dir(stream.checkpoint, plugin), "queries")
    if os.path.isdir(queries) and any(os.scandir(queries)):
        raise RuntimeConfigError(f"the stream of {table} has a checkpoint ({queries}) but no capture state under "
                                 f"{root}: delete the pipeline's checkpoint directory to start it over (a new "
                                 "snapshot)")


def as_text(df: Any) -> Any:
    """``df`` (a table's rows as Spark read them) as text columns plus an INSERT row kind: how a
    snapshot is written. Binary values as ``\\x<hex>``, as PostgreSQL writes bytea."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = []
    for f in df.schema.fields:
        c = F.col(f"`{f.name}`")
        text = F.concat(F.lit("\\x"), F.lower(F.hex(c))) if isinstance(f.dataType, T.BinaryType) else c.cast("string")
        columns.append(text.alias(f.name))
    return df.select(*columns, F.lit(0).cast("tinyint").alias(KIND_COLUMN))


def text_schema(schema: Any) -> Any:
    """The stream's declared schema: every column of ``schema`` as a string, plus the row kind."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, T.StringType()) for f in schema.fields] +
                        [T.StructField(KIND_COLUMN, T.ByteType())])


def typed(raw: Any, schema: Any) -> Any:
    """The stream's text columns cast back to ``schema``'s types (booleans from ``t``/``true``/``1``,
    binary from ``\\x<hex>``), the row kind into the hidden column."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = []
    for f in schema.fields:
        c = F.col(f"`{f.name}`")
        binary = isinstance(f.dataType, T.BinaryType)
        value = F.unhex(F.substring(c, 3, 1 << 30)) if binary else c.cast(f.dataType)
        columns.append(value.alias(f.name, metadata=f.metadata or {}))
    return raw.select(*columns, F.col(KIND_COLUMN).alias(ROW_KIND))


def schema_of(state: Mapping[str, Any]) -> Any:
    from pyspark.sql import types as T

    return T.StructType.fromJson(json.loads(state["schema"]))


def text_value(value: Any) -> str | None:
    """A value a database client returned, as the text the stream carries (None stays None)."""
    import datetime
    import decimal

    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(value).hex()
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.timedelta):  # MySQL TIME
        seconds = int(value.total_seconds())
        return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
