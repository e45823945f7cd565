"""The Iceberg source: tables read by Iceberg's Spark reader, batch or streaming.

BATCH (:func:`read`): each table's current snapshot, or the one ``use_snapshot_id``/``use_snapshot_timestamp``
name (time travel), or the rows appended after ``start_snapshot_id`` up to ``end_snapshot_id`` (an
incremental read), ``read_columns`` projected, in exactly the plan's parallelism (Spark's splits
coalesced when there are more, the rows repartitioned when there are fewer). Every row is an INSERT. A
``table_list`` gives one dataset per table, named ``<namespace>.<table>``.

STREAMING (:func:`read_stream`): Iceberg's streaming source, which reads the rows each new snapshot
appends. Where a new stream starts (``stream_scan_strategy``): ``FROM_LATEST_SNAPSHOT`` the table's
current snapshot (its appended rows, then every later snapshot), ``FROM_EARLIEST_SNAPSHOT`` and
``TABLE_SCAN_THEN_INCREMENTAL`` the first snapshot (every row ever appended), ``FROM_SNAPSHOT_ID`` /
``FROM_SNAPSHOT_TIMESTAMP`` the snapshot named or committed at that time. The pipeline's checkpoint keeps
where it is, so a scheduled ``available_now`` run reads the snapshots committed since the last one. A
snapshot that rewrites or deletes rows (an overwrite, a MERGE) fails the stream, as Iceberg's streaming
source does.
"""

from __future__ import annotations

from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError, root_cause
from ...spi.rows import ROW_KIND, quote, with_kind
from ..files.reading import at_parallelism
from ..lakehouse import read_columns
from .options import SourceOptions, TableRef
from .tables import ensure_iceberg, identifier, register, snapshot_millis, table_exists, table_state


def _table(ctx: RunContext, opts: SourceOptions, ref: TableRef) -> tuple[str, str]:
    """(the Spark catalog, the table's identifier); a :class:`RuntimeConfigError` for a missing table."""
    ensure_iceberg(ctx.spark)
    catalog = register(ctx.spark, opts.catalog)
    if not table_exists(ctx.spark, catalog, ref):
        raise RuntimeConfigError(f"the Iceberg table {ref.namespace}.{ref.table} does not exist in catalog "
                                 f"{opts.catalog.name}")
    return catalog, identifier(catalog, ref)


def _selection(opts: SourceOptions) -> str | None:
    """Which snapshots the options select, as messages name it (None: the newest)."""
    for key, value in (("use_snapshot_id", opts.snapshot_id), ("use_snapshot_timestamp", opts.snapshot_timestamp),
                       ("start_snapshot_id", opts.start_snapshot_id)):
        if value is not None:
            return f"{key} {value}"
    return None


def _load(spark: Any, name: str, opts: SourceOptions) -> Any:
    """The table as the options select it: time travel, or the appends after a snapshot."""
    if opts.snapshot_id is not None:
        return spark.sql(f"SELECT * FROM {name} VERSION AS OF {int(opts.snapshot_id)}")
    if opts.snapshot_timestamp is not None:
        return spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF timestamp_millis({int(opts.snapshot_timestamp)})")
    if opts.start_snapshot_id is not None:
        reader = spark.read.option("start-snapshot-id", str(opts.start_snapshot_id))
        if opts.end_snapshot_id is not None:
            reader = reader.option("end-snapshot-id", str(opts.end_snapshot_id))
        return reader.table(name)
    return spark.read.table(name)


def _dataset_name(opts: SourceOptions, ref: TableRef) -> str:
    return "default" if len(opts.tables) == 1 else f"{ref.namespace}.{ref.table}"


def _projected(df: Any, opts: SourceOptions) -> Any:
    """The table's rows, only ``read_columns`` (as the table spells them, in their order) when it is set."""
    if not opts.read_columns:
        return df
    return df.select(*[quote(c) for c in read_columns(opts.read_columns, [c for c in df.columns if c != ROW_KIND],
                                                      opts.case_sensitive)])


def read(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    """Each table (time travel and ``read_columns`` applied) at ``vertex.parallelism`` partitions."""
    out: Dataset = {}
    for ref in opts.tables:
        _, name = _table(ctx, opts, ref)
        try:
            df = _load(ctx.spark, name, opts)
            df.schema  # noqa: B018 - time travel resolves the snapshot when the read is analysed
        except Exception as e:
            if _selection(opts) is None:
                raise
            raise RuntimeConfigError(f"{_selection(opts)}: {root_cause(e)}") from e
        out[_dataset_name(opts, ref)] = with_kind(at_parallelism(_projected(df, opts), max(1, int(vertex.parallelism))))
    return out


def _start(ctx: RunContext, opts: SourceOptions, catalog: str, ref: TableRef) -> int | None:
    """``stream-from-timestamp`` for a new stream (epoch milliseconds), None: from the first snapshot."""
    strategy = opts.stream_scan_strategy
    if strategy == "FROM_SNAPSHOT_TIMESTAMP":
        return opts.start_snapshot_timestamp
    if strategy == "FROM_SNAPSHOT_ID":
        millis = snapshot_millis(ctx.spark, catalog, ref, int(opts.start_snapshot_id or 0))
        if millis is None:
            raise RuntimeConfigError(f"start_snapshot_id {opts.start_snapshot_id}: no such snapshot of "
                                     f"{ref.namespace}.{ref.table}")
        return millis
    if strategy == "FROM_LATEST_SNAPSHOT":
        head = table_state(ctx.spark, catalog, ref).head
        return snapshot_millis(ctx.spark, catalog, ref, head) if head is not None else None
    return None


def read_stream(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    """The table's new snapshots as a stream, from the pipeline's checkpoint (see the module docstring)."""
    ref = opts.tables[0]
    catalog, name = _table(ctx, opts, ref)
    reader = ctx.spark.readStream
    start = _start(ctx, opts, catalog, ref)
    if start is not None:
        reader = reader.option("stream-from-timestamp", str(start))
    return {"default": with_kind(_projected(reader.table(name), opts))}
