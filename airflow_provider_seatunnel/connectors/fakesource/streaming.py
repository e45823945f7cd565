"""FakeSource in a STREAMING job: SeaTunnel's unbounded reader.

Each parallel reader reads its splits (``split.num`` of them over its ``row.num`` rows; with ``rows``,
each split emits the whole list) one per ``split.read-interval`` ms, then idles: the stream stays open
with no new data. The splits are written once, as small files under the source's state directory, and
read as a file stream, ``checkpoint.interval / split.read-interval`` splits per reader per micro-batch
(at least one). Every micro-batch comes in exactly ``parallelism`` partitions, one per reader. The rows
come from native expressions over each split's row numbers (numbered as the batch reader numbers
them), with a salt derived from the pipeline, the source and the table, so a replayed micro-batch
generates the same rows. A stream keeps the splits of its first run: later option changes take effect
with a new checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.hadoop import read_text, write_once
from .generate import random_frame, rows_frame
from .options import Table

log = logging.getLogger("seatunnel.runtime")

#: the schema of a split file (one JSON line per split)
SPLIT_SCHEMA = "reader INT, split INT, start BIGINT, count BIGINT"


def split_files(table: Table, parallelism: int, created_ms: int) -> dict[str, tuple[str, int]]:
    """The split files of one table: each reader's splits of ``ceil(row.num / split.num)`` rows (the last one
    the rest), rows numbered as the batch reader numbers them; modification times order them by split."""
    rows = table.row_num
    per_split = math.ceil(rows / table.sizes["split.num"]) if rows > 0 else 0
    files = {}
    for reader in range(parallelism):
        for split in range(table.splits_per_reader):
            count = per_split if table.rows is not None else min(per_split, rows - split * per_split)
            record = {"reader": reader, "split": split, "start": reader * rows + split * per_split, "count": count}
            files[f"split-{split:06d}-{reader:04d}.json"] = (json.dumps(record) + "\n", created_ms + split * 1000)
    return files


def stream_table(ctx: RunContext, vertex: Vertex, number: int, table: Table, parallelism: int) -> Any:
    """The streaming DataFrame of the ``number``-th table of the source, in ``parallelism`` partitions."""
    from pyspark.sql import functions as F

    spark = ctx.spark
    directory = f"{ctx.state_dir(vertex)}/table-{number}-{hashlib.sha1(table.key.encode()).hexdigest()[:8]}"
    _write_splits(spark, vertex, directory, table, parallelism)
    per_batch = parallelism * _splits_per_batch(ctx, table.sizes["split.read-interval"])
    splits = (spark.readStream.format("json").schema(SPLIT_SCHEMA).option("maxFilesPerTrigger", per_batch)
              .load(f"{directory}/splits"))
    # A micro-batch's files are scanned in as many partitions as the scan likes (none for no file):
    # one partition per reader, whatever the files.
    splits = splits.coalesce(1) if parallelism == 1 else splits.repartition(parallelism)
    if table.rows is not None:
        return rows_frame(table, splits)
    ids = splits.select(F.explode(F.sequence(F.col("start"), F.col("start") + F.col("count") - 1))
                        .alias("id")).where(F.col("id").isNotNull())
    digest = hashlib.sha256(f"{ctx.pipeline_key}|{vertex.ref}|{table.key}".encode()).digest()
    return random_frame(table, ids, salt=int.from_bytes(digest[:8], "big") >> 2)


def _write_splits(spark: Any, vertex: Vertex, directory: str, table: Table, parallelism: int) -> None:
    """The split files, written on the stream's first run; later runs keep them (and say so when the
    options now describe other splits)."""
    shape = {"table": table.key, "row.num": table.row_num, "split.num": table.sizes["split.num"],
             "parallelism": parallelism, "rows": len(table.rows) if table.rows is not None else None}
    created = write_once(spark, f"{directory}/splits", split_files(table, parallelism, int(time.time() * 1000)))
    if created:
        write_once(spark, f"{directory}/shape", {"shape.json": (json.dumps(shape), int(time.time() * 1000))})
        return
    known = read_text(spark, f"{directory}/shape/shape.json")
    if known is not None and json.loads(known) != shape:
        log.warning("FakeSource %s: table %s: the stream keeps the splits of its first run (%s); the options now "
                    "say %s (a new checkpoint would use them)", vertex.ref, table.key, known, json.dumps(shape))


def _splits_per_batch(ctx: RunContext, read_interval_ms: int) -> int:
    """How many splits a reader emits per micro-batch: those it reads in ``checkpoint.interval``
    ms, one per ``read_interval_ms`` (at least one)."""
    interval = ctx.stream.interval_ms if ctx.stream is not None else 10_000
    return max(1, interval // max(1, int(read_interval_ms)))
