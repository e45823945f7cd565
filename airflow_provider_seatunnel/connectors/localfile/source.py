"""The LocalFile source: the files under ``path`` (or of each ``tables_configs`` item), in BATCH
and as a file stream in STREAMING.

``path`` is a file or a directory walked recursively; empty files, names starting with ``.`` or
``_`` (``_SUCCESS`` included) and directories starting with ``.`` (or ``_`` without a ``=``) are
skipped, and so are the files a sink's commit in progress (or interrupted) is publishing. ``k=v``
directories in a file's path become string columns (``parse_partition_from_path``, default true).

Each table comes in exactly the parallelism the plan gives the source (its vertex's): SeaTunnel
distributes the files over that many readers. Spark's file splits are coalesced to it when there
are more (no shuffle), and the rows repartitioned to it when there are fewer.

STREAMING: ``path`` is read as a file stream (new files each micro-batch; docs/streaming.md), in
the formats and with the options of the batch source.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.journals import read_sealed
from ...spi.options import lookup
from ...spi.optionspec import ParsedOptions
from ...spi.rows import with_kind
from ...spi.schema import schema_from_options
from ..files.formats import read_files
from ..files.options import (
    COMMITS_DIR,
    FILE,
    PENDING_DIR,
    config_error,
    log,
    target_path,
)
from ..files.reading import (
    at_parallelism,
    partition_keys,
    projected_columns,
    select_list,
    source_options,
    table_id,
)
from ..files.records import TamperedRecord, existing_key, record_name

#: files older than this (relative to the newest seen) would be ignored by Spark's file stream: never, in practice
_STREAM_MAX_FILE_AGE = "36500d"


# ---------------------------------------------------------------------------------------------
# Listing
# ---------------------------------------------------------------------------------------------

def _file_filter(o: ParsedOptions) -> Callable[[str], bool]:
    """Whether a file is read: not hidden, matching ``file_filter_pattern`` and ``read_partitions``, not empty."""
    pattern_text = o["file_filter_pattern"]
    try:
        pattern = re.compile(str(pattern_text)) if pattern_text is not None else None
    except re.error as e:
        raise config_error(f"file_filter_pattern {pattern_text!r} is not a valid regex: {e}") from None
    partitions = [str(p) for p in o["read_partitions"] or ()]

    def keep(full: str) -> bool:
        name = os.path.basename(full)
        if name.startswith((".", "_")):
            return False
        if pattern is not None and not pattern.fullmatch(name):
            return False
        if partitions and not any(p in full for p in partitions):
            return False
        return os.path.getsize(full) > 0

    return keep


def list_input_files(config: Mapping[str, Any], options: ParsedOptions | None = None) -> list[str]:
    """The files the source reads, sorted: recursive, without empty, hidden and filtered-out files
    (``options``: the block's, when the caller parsed them)."""
    root = target_path(config)
    if not os.path.exists(root):
        raise config_error(f"path {root} does not exist")
    keep = _file_filter(options if options is not None else source_options(config))
    journals = _pending_journals_dir(root)
    hidden = _pending_files(journals)
    if os.path.isfile(root):
        found = [root] if keep(root) else []
    else:
        found = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames
                                 if not d.startswith(".") and not (d.startswith("_") and "=" not in d))
            found.extend(full for full in (os.path.join(dirpath, f) for f in sorted(filenames)) if keep(full))
    hidden |= _pending_files(journals)  # a commit that started while we listed
    if hidden:
        skipped = [f for f in found if f in hidden]
        if skipped:
            log.info("LocalFile: skipping %d file(s) of a commit in progress or interrupted (%s)", len(skipped),
                     journals)
        found = [f for f in found if f not in hidden]
    return sorted(found)


def _pending_journals_dir(root: str) -> str | None:
    """The pending-journal directory of the sink target holding ``root`` (``root`` or its nearest
    ancestor with a commit directory), or None."""
    current = root if os.path.isdir(root) else os.path.dirname(root)
    while True:
        if os.path.isdir(os.path.join(current, COMMITS_DIR)):
            return os.path.join(current, COMMITS_DIR, PENDING_DIR)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _pending_files(journals: str | None) -> set[str]:
    """The final files named by the journals of commits not yet recorded.

    Only journals sealed by the target (:mod:`.records`) count: a planted or edited journal hides
    nothing (it is logged, and the sink's next commit refuses it); and hiding only ever removes
    files from those listed under the source's own path, so no journal makes the source read
    anything else."""
    out: set[str] = set()
    if journals is None or not os.path.isdir(journals):
        return out
    target = os.path.dirname(os.path.dirname(journals))
    key = existing_key(target)
    for name in os.listdir(journals):
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = os.path.join(journals, name)
        try:
            if key is None:
                raise TamperedRecord(f"refusing the commit record {path}: its target has no journal key")
            record = read_sealed(path, key, record_name(target, path))
            out.update(dst for _, dst in record.get("moves", ()) if isinstance(dst, str))
        except TamperedRecord as e:
            log.warning("LocalFile: ignoring a commit journal this target did not seal: %s", e)
        except (OSError, ValueError, TypeError):  # recorded (renamed to its marker) meanwhile
            continue
    return out


def _read_table(spark: Any, config: Mapping[str, Any], output: str | None) -> tuple[str, Any]:
    o = source_options(config)
    files = list_input_files(config, o)
    binary = (o["file_format_type"] or "").strip().lower() == "binary"  # fixed columns: no partitions
    keys = partition_keys(files[0]) if files and not binary and o["parse_partition_from_path"] else []
    df = read_files(spark, config, o, files, with_file=bool(keys))
    available = [c for c in df.columns if c != FILE]
    data_columns = projected_columns(o, available)
    if not keys and data_columns == available and len(available) == len(df.columns):
        return table_id(config, output), with_kind(df)  # the files' columns as they are: no projection
    return table_id(config, output), with_kind(df.select(*select_list(data_columns, keys)))


ReadOne = Callable[[Any, Mapping[str, Any], str | None], tuple[str, Any]]


def _tables(ctx: RunContext, vertex: Vertex, read_one: ReadOne, streaming: bool) -> Dataset:
    """``{table id: DataFrame}`` of ``path`` or of each ``tables_configs`` item, read by ``read_one``
    (batch or stream), each at the vertex's parallelism."""
    configs = lookup(vertex.config, "tables_configs")
    items = configs if isinstance(configs, list) and configs else [vertex.config]
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping):
            raise config_error("each tables_configs item must be a block of LocalFile options")
        table, df = read_one(ctx.spark, item, vertex.output if item is vertex.config else None)
        if table in out:
            raise config_error(f"two tables_configs items read the table '{table}': give each its own "
                               "schema.table")
        out[table] = df
    parallelism = max(1, int(vertex.parallelism))
    return {t: at_parallelism(df, parallelism, streaming) for t, df in out.items()}


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The files under ``path`` (or each ``tables_configs`` item) as ``{table id: DataFrame}``."""
    return _tables(ctx, vertex, _read_table, streaming=False)


# ---------------------------------------------------------------------------------------------
# STREAMING: a directory as a file stream
# ---------------------------------------------------------------------------------------------

class _StreamReader:
    """``spark.read``'s builder over ``spark.readStream`` for :func:`.formats.read_files`: ``load`` streams
    the directory whatever file list it is given (the files present now only decide a parquet/orc schema)."""

    def __init__(self, stream: _StreamSpark):
        self._stream = stream
        self._reader = stream.spark.readStream
        self._format: str | None = None
        self._has_schema = False

    def format(self, fmt: str) -> _StreamReader:
        self._reader, self._format = self._reader.format(fmt), fmt
        return self

    def schema(self, schema: Any) -> _StreamReader:
        self._reader, self._has_schema = self._reader.schema(schema), True
        return self

    def option(self, key: str, value: Any) -> _StreamReader:
        self._reader = self._reader.option(key, value)
        return self

    def options(self, **options: Any) -> _StreamReader:
        self._reader = self._reader.options(**options)
        return self

    def load(self, paths: Any = None) -> Any:
        if not self._has_schema and self._format in ("parquet", "orc"):
            self._reader = self._reader.schema(self._stream.file_schema(self._format))
        elif not self._has_schema and self._format == "binaryFile":  # whole files (line numbers, other charsets)
            self._reader = self._reader.schema("path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY")
        return (self._reader.option("recursiveFileLookup", "true").option("maxFileAge", _STREAM_MAX_FILE_AGE)
                .load("file://" + self._stream.root))


class _StreamSpark:
    """The SparkSession :func:`.formats.read_files` sees when it reads a stream (``read`` is a stream reader)."""

    def __init__(self, spark: Any, root: str, files: list[str], config: Mapping[str, Any]):
        self.spark, self.root, self.files, self.config = spark, root, files, config

    @property
    def read(self) -> _StreamReader:
        return _StreamReader(self)

    def file_schema(self, fmt: str) -> Any:
        """A parquet/orc stream's schema: the files' own (those present now), else the ``schema`` option."""
        if self.files:
            return self.spark.read.format(fmt).load(self.files).schema
        declared = schema_from_options(self.config)
        if declared is None:
            raise config_error(f"no {fmt} files under {self.root} yet: set schema {{ fields {{ ... }} }} so the "
                               "stream knows its columns before the first file arrives")
        return declared.to_spark()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.spark, name)


def _stream_filtered(df: Any, o: ParsedOptions) -> Any:
    """The rows of the files ``file_filter_pattern`` and ``read_partitions`` keep (new files are not listed)."""
    from pyspark.sql import functions as F

    pattern = o["file_filter_pattern"]
    partitions = [str(p) for p in o["read_partitions"] or ()]
    if pattern is not None:
        name = F.regexp_extract(F.col(FILE), r"([^/]*)$", 1)
        df = df.where(name.rlike(f"^(?:{pattern})$"))
    if partitions:
        keep = F.lit(False)
        for part in partitions:
            keep = keep | F.col(FILE).contains(part)
        df = df.where(keep)
    return df


def _stream_table(spark: Any, config: Mapping[str, Any], output: str | None) -> tuple[str, Any]:
    """One table of a LocalFile stream: the files under ``path``, new ones picked up by each micro-batch."""
    root = target_path(config)
    if not os.path.isdir(root):
        raise config_error(f"a STREAMING LocalFile source reads a directory; {root} "
                           + ("is a file" if os.path.exists(root) else "does not exist"))
    o = source_options(config)
    files = list_input_files(config, o)  # present now: partition keys, parquet/orc schema
    keys = partition_keys(files[0]) if files and o["parse_partition_from_path"] else []
    filtered = o["file_filter_pattern"] is not None or bool(o["read_partitions"])
    df = read_files(_StreamSpark(spark, root, files, config), config, o, [root], with_file=bool(keys or filtered))
    df = _stream_filtered(df, o)
    data_columns = projected_columns(o, [c for c in df.columns if c != FILE])
    return table_id(config, output), with_kind(df.select(*select_list(data_columns, keys)))


def read_stream(ctx: RunContext, vertex: Vertex) -> Dataset:
    """``path`` (a directory; or each ``tables_configs`` item) as a file stream: ``{table id: DataFrame}``.

    Each micro-batch reads the files that appeared since the last one (Spark's file source, its
    list of files read kept in the checkpoint); files are never read twice, a changed file is
    not read again. The formats and options are the batch source's."""
    return _tables(ctx, vertex, _stream_table, streaming=True)
