"""The Delta source: a table read by Delta's Spark reader, batch or streaming.

BATCH (:func:`read`): the table's newest version, or the one ``use_version``/``use_timestamp`` name
(time travel), ``read_columns`` projected, in exactly the plan's parallelism (Spark's splits coalesced
when there are more, the rows repartitioned when there are fewer). Every row is an INSERT.

STREAMING (:func:`read_stream`): Delta's streaming source. A new stream reads the table as it is, then
every commit after it (``start_version``/``start_timestamp``: from that version on instead); the
pipeline's checkpoint keeps where it is, so a scheduled ``available_now`` run reads the commits made
since the last one. A commit that rewrites rows (an update, a delete, a MERGE) fails the stream unless
``skip_change_commits``; with ``change_data_feed`` the stream is the table's change data feed instead
(a table written with ``delta.enableChangeDataFeed = true``): inserts, updates (before and after) and
deletes, each with its row kind.
"""

from __future__ import annotations

from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError, root_cause
from ...spi.rows import ROW_KIND, kind_literal, quote, with_kind
from ..files.reading import at_parallelism
from ..lakehouse import read_columns
from .options import SourceOptions
from .tables import ensure_delta, table_state

#: the change data feed's columns: the change type (-> the row kind), the commit's version and time
CHANGE_TYPE = "_change_type"
CHANGE_COLUMNS = (CHANGE_TYPE, "_commit_version", "_commit_timestamp")
CHANGE_KINDS = {"insert": 0, "update_preimage": 1, "update_postimage": 2, "delete": 3}


def _table(ctx: RunContext, opts: SourceOptions) -> str:
    ensure_delta(ctx.spark, ctx.plan.env)
    path = opts.table.location()
    if not table_state(ctx.spark, path).exists:
        raise RuntimeConfigError(f"{path} is not a Delta table (it has no _delta_log)")
    return path


def _columns(df: Any, opts: SourceOptions) -> list[str]:
    """``read_columns`` as the table spells them (the change data feed's own columns are none of them)."""
    return read_columns(opts.read_columns, [c for c in df.columns if c not in CHANGE_COLUMNS and c != ROW_KIND],
                        opts.case_sensitive)


def read(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    """The table (time travel and ``read_columns`` applied) at ``vertex.parallelism`` partitions."""
    reader = ctx.spark.read.format("delta")
    if opts.version is not None:
        reader = reader.option("versionAsOf", str(opts.version))
    if opts.timestamp is not None:
        reader = reader.option("timestampAsOf", opts.timestamp)
    path = _table(ctx, opts)
    try:
        df = reader.load(path)
    except Exception as e:  # time travel resolves the version when the read is planned
        if opts.version is None and opts.timestamp is None:
            raise
        which = f"use_version {opts.version}" if opts.version is not None else f"use_timestamp {opts.timestamp}"
        raise RuntimeConfigError(f"{which}: {root_cause(e)}") from e
    if opts.read_columns:
        df = df.select(*[quote(c) for c in _columns(df, opts)])
    return {"default": with_kind(at_parallelism(df, max(1, int(vertex.parallelism))))}


def _row_kinds(df: Any) -> Any:
    """The change data feed's rows with their row kind; its own columns dropped."""
    from pyspark.sql import functions as F

    kind = kind_literal(0)
    for name, code in CHANGE_KINDS.items():
        kind = F.when(F.col(CHANGE_TYPE) == name, kind_literal(code)).otherwise(kind)
    data = [quote(c) for c in df.columns if c not in CHANGE_COLUMNS]
    return df.select(*data, kind.alias(ROW_KIND))


def read_stream(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    """The table's commits as a stream, from the pipeline's checkpoint (see the module docstring)."""
    reader = ctx.spark.readStream.format("delta")
    if opts.start_version is not None:
        reader = reader.option("startingVersion", opts.start_version)
    if opts.start_timestamp is not None:
        reader = reader.option("startingTimestamp", opts.start_timestamp)
    if opts.skip_change_commits:
        reader = reader.option("skipChangeCommits", "true")
    if opts.change_data_feed:
        reader = reader.option("readChangeFeed", "true")
    df = reader.load(_table(ctx, opts))
    df = _row_kinds(df) if opts.change_data_feed else with_kind(df)
    if opts.read_columns:
        df = df.select(*[quote(c) for c in _columns(df, opts)], ROW_KIND)
    return {"default": df}
