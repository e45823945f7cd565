"""What the change data capture sources share: one stream of all the captured tables' rows (text
values, a row kind, the table's id) whose first micro-batch starts with a snapshot written as files,
the capture state kept beside them, and the split back into the tables' typed rows.

A CDC source captures all its tables at once, once per stream: the driver takes the snapshot of
every table at one position of the database's change log (a replication slot's consistent point, a
binlog position) and writes it under ``<state dir>/<table>/snapshot/`` as Parquet files of text
values plus the row-kind column :data:`KIND_COLUMN`; ``<table>/capture.json`` records the table's
Spark schema, and ``<state dir>/capture.json`` (written last, atomically: a run killed before it
starts the capture over) the source's position and tables. The stream's reader (a PySpark Python
data source, in Spark's Python workers) reads those files as the first part of its first
micro-batch, then the change log (one reader for every table), each row as (:data:`TABLE_COLUMN`,
:data:`VALUES_COLUMN`, :data:`KIND_COLUMN`). :func:`shared_stream` makes that stream the source's
:class:`...spi.sharedstream.SharedStream`: the runtime runs one query over it and splits each
micro-batch by table (:func:`split`), casting the text back (:func:`typed`) with native expressions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from ...spi import RunContext
from ...spi.errors import RuntimeConfigError
from ...spi.rows import ROW_KIND, quote
from ...spi.sharedstream import TABLE_COLUMN, SharedStream
from ...spi.specsource import SpecSource
from .schemachange import snapshot_names

KIND_COLUMN = "__st_kind"
VALUES_COLUMN = "__st_values"
STATE_FILE = "capture.json"
#: at most this many partitions read the snapshot files of a first micro-batch
SNAPSHOT_PARTS = 8


class SnapshotPart(InputPartition):
    """Snapshot files of a stream's first micro-batch: (table id, path) each."""

    def __init__(self, files: list[tuple[str, str]]):
        self.files = files


class ChangePart(InputPartition):
    """The changes of a micro-batch: from offset ``start`` to offset ``end``."""

    def __init__(self, start: dict[str, Any], end: dict[str, Any]):
        self.start, self.end = start, end


class SnapshotThenChanges(DataSourceStreamReader):
    """A CDC stream's reader: the first micro-batch (from :meth:`initialOffset`) is the snapshot files
    of every table followed by the changes after the snapshot's position, later ones the changes
    between their offsets. The spec's ``tables`` maps each table id to its own spec (``columns``,
    ``snapshot`` directory, ``table``, schema-change ``shapes``).

    A subclass says where changes start after the snapshot (:meth:`snapshot_offset`), how offsets
    order (:meth:`order`), the latest offset (:meth:`latestOffset`) and how a range's changes are read
    (:meth:`changes`: ``(table id, values, kind)`` rows)."""

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
            files = [(tid, f) for tid, t in self.spec["tables"].items() for f in snapshot_files(t["snapshot"])]
            count = min(len(files), SNAPSHOT_PARTS)
            parts.extend(SnapshotPart(files[i::count]) for i in range(count))
            begin = self.snapshot_offset()
        if self.order(end) > self.order(begin):
            parts.append(ChangePart(dict(begin), dict(end)))
        return parts

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, SnapshotPart):
            for tid, path in partition.files:
                yield from read_snapshot(path, tid, self.spec["tables"][tid])
            return
        assert isinstance(partition, ChangePart)
        yield from self.changes(partition.start, partition.end)


class ChangeStreamSource(SpecSource):
    """A CDC connector's PySpark data source: ``spark.readStream.format(<format_name>)`` with the job's spec
    (JSON) in the option ``spec_option`` streams through ``stream_reader``. A connector declares the three as
    class attributes of a subclass (registered by class: Spark pickles it by reference)."""

    stream_reader: ClassVar[type[SnapshotThenChanges]]

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return self.stream_reader(self.spec)


def snapshot_files(directory: str) -> list[str]:
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".parquet"))


def read_snapshot(path: str, tid: str, spec: Mapping[str, Any]) -> Iterator[Any]:
    """The Arrow batches of a snapshot file of table ``tid`` in the stream's layout: the table id, the
    values of the stream's ``columns`` as a list of text (a column the table gained after the snapshot
    is null; one renamed since read from its name in the file) and the row kind."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    columns, renamed = list(spec["columns"]), snapshot_names(spec)
    files = [renamed.get(c, c) for c in columns]
    n, k = table.num_rows, len(columns)
    arrays = [table.column(f).combine_chunks() if f in table.column_names else pa.nulls(n, pa.string())
              for f in files]
    flat = pa.concat_arrays([a.cast(pa.string()) for a in arrays]) if arrays else pa.array([], pa.string())
    order = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).ravel()
    values = pa.ListArray.from_arrays(pa.array(np.arange(0, n * k + 1, k, dtype=np.int32) if k else
                                               np.zeros(n + 1, dtype=np.int32)), flat.take(pa.array(order)))
    kinds = table.column(KIND_COLUMN).combine_chunks().cast(pa.int8())
    schema = pa.schema([pa.field(TABLE_COLUMN, pa.string()), pa.field(VALUES_COLUMN, pa.list_(pa.string())),
                        pa.field(KIND_COLUMN, pa.int8())])
    yield from pa.Table.from_arrays([pa.array([tid] * n, pa.string()), values, kinds], schema=schema).to_batches()


def raw_schema() -> Any:
    """The shared stream's declared schema: the table id, the values as text, the row kind."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(TABLE_COLUMN, T.StringType()),
                         T.StructField(VALUES_COLUMN, T.ArrayType(T.StringType())),
                         T.StructField(KIND_COLUMN, T.ByteType())])


def _cast_sql(value: str, dtype: Any) -> str:
    """``value`` (SQL text of a text column) as ``dtype``: the stream's one cast rule (binary from
    ``\\x<hex>``, else a cast of the text; the columns are atomic), for :func:`typed_rows` and
    :func:`typed` alike."""
    from pyspark.sql import types as T

    if isinstance(dtype, T.BinaryType):
        return f"unhex(substring({value}, 3, {1 << 30}))"
    return f"CAST({value} AS {dtype.simpleString()})"


def typed_rows(raw: Any, tid: str, schema: Any) -> Any:
    """The rows of table ``tid`` in the shared stream ``raw``, typed as ``schema`` (:func:`_cast_sql`),
    built with three calls into Spark's JVM: the filter and the projection as SQL
    text, then the columns' metadata (``DataFrame.to``); per column, the Python API would make several
    (a micro-batch of 200 tables re-builds 200 of them)."""
    from pyspark.sql import types as T

    casts = [_cast_sql(f"{quote(VALUES_COLUMN)}[{i}]", f.dataType) for i, f in enumerate(schema.fields)]
    literal = "'" + tid.replace("\\", "\\\\").replace("'", "\\'") + "'"
    columns = [f"{c} AS {quote(f.name)}" for c, f in zip(casts, schema.fields, strict=True)]
    rows = raw.where(f"{quote(TABLE_COLUMN)} = {literal}").selectExpr(
        *columns, f"{quote(KIND_COLUMN)} AS {quote(ROW_KIND)}")
    # the metadata of schema's fields; nullable as the casts make them (a cast's result may be null)
    shape = T.StructType([*(T.StructField(f.name, f.dataType, True, f.metadata or {}) for f in schema.fields),
                          T.StructField(ROW_KIND, T.ByteType(), True)])
    return rows.to(shape)


def split(batch: Any, tables: Sequence[str], schemas: Mapping[str, Any]) -> dict[str, Any]:
    """A micro-batch of the shared stream as each of ``tables``' typed rows."""
    return {tid: typed_rows(batch, tid, schemas[tid]) for tid in tables}


def shared_stream(spark: Any, format_name: str, spec_option: str, spec: Mapping[str, Any],
                  schemas: Mapping[str, Any], on_release: Callable[[], None] | None = None) -> SharedStream:
    """The source's one stream of every table (``schemas``: each table id's Spark schema) as its tables;
    ``on_release``: called once the stream ended."""
    raw = spark.readStream.format(format_name).schema(raw_schema()).option(spec_option, json.dumps(spec)).load()
    tables = {tid: typed_rows(raw, tid, schema) for tid, schema in schemas.items()}
    return SharedStream(tables, raw, partial(split, schemas=dict(schemas)), on_release)


def table_spec(state: Mapping[str, Any], snapshot: str, schema_changes: bool) -> dict[str, Any]:
    """What the stream's reader needs of one captured table (``state``: its capture state)."""
    schema = schema_of(state)
    return {"table": state["table"], "columns": [f.name for f in schema.fields], "snapshot": snapshot,
            "schema_changes": schema_changes, "shapes": state.get("shapes") if schema_changes else None}


def changed_tables(before: Sequence[str], now: Sequence[str], plugin: str) -> RuntimeConfigError:
    """The error of a capture whose table list changed since it began."""
    gone, new = sorted(set(before) - set(now)), sorted(set(now) - set(before))
    what = "; ".join(x for x in (f"added {', '.join(new)}" if new else "",
                                 f"removed {', '.join(gone)}" if gone else "") if x)
    return RuntimeConfigError(f"{plugin}: the tables of its capture changed since the capture began ({what}): one "
                              "capture covers a fixed set of tables; delete the pipeline's checkpoint directory to "
                              "start it over (a new snapshot of every table), or capture the new tables in a job of "
                              "their own")


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
    """A snapshot file's schema: every column of ``schema`` as a string, plus the row kind."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, T.StringType()) for f in schema.fields] +
                        [T.StructField(KIND_COLUMN, T.ByteType())])


def typed(raw: Any, schema: Any) -> Any:
    """The stream's text columns cast back to ``schema``'s types (booleans from ``t``/``true``/``1``,
    binary from ``\\x<hex>``), the row kind into the hidden column."""
    from pyspark.sql import functions as F

    columns = [F.expr(_cast_sql(quote(f.name), f.dataType)).alias(f.name, metadata=f.metadata or {})
               for f in schema.fields]
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


def write_snapshot(chunks: Iterator[Sequence[Sequence[Any]]], columns: Sequence[str], directory: str) -> int:
    """Write a table's snapshot (``chunks`` of rows, values as a database client returned them) to
    ``directory`` as Parquet files of text values and the INSERT row kind, one file per chunk (what
    was there is removed first); the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        os.remove(os.path.join(directory, old))
    schema = pa.schema([pa.field(c, pa.string()) for c in columns] + [pa.field(KIND_COLUMN, pa.int8())])
    rows = 0
    for part, chunk in enumerate(chunks):
        arrays = [pa.array([text_value(r[i]) for r in chunk], pa.string()) for i in range(len(columns))]
        arrays.append(pa.array([0] * len(chunk), pa.int8()))
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), os.path.join(directory, f"part-{part:05d}.parquet"))
        rows += len(chunk)
    return rows


def chunks_of(cursor: Any, size: int) -> Iterator[Sequence[Sequence[Any]]]:
    """A DB-API cursor's rows, ``size`` at a time."""
    while True:
        chunk = cursor.fetchmany(size)
        if not chunk:
            return
        yield chunk
