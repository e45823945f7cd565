"""The S3File source: the objects under ``path`` in ``bucket`` (or each ``tables_configs`` item's),
read by Spark through ``s3a://`` with LocalFile's readers (:func:`..files.formats.read_files`).

``path`` is an object or a key prefix listed recursively; empty objects, names starting with
``.`` or ``_``, folders starting with ``.`` (the sink's ``.seatunnel-*`` bookkeeping) or with
``_`` without a ``=``, and objects filtered out by ``file_filter_pattern``/``read_partitions`` are
skipped, and so are the final keys of a commit in progress or interrupted
(:func:`.commits.hidden_keys`, listed before and after the objects): a reader never sees a
half-published commit. ``k=v`` folders become string columns, as in LocalFile. :func:`read`
takes the plugin's :class:`.options.Dialect` (S3File's by default).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.options import MISSING, lookup
from ...spi.optionspec import ParsedOptions
from ...spi.rows import with_kind
from . import storecommits as commits
from .options import FILE
from .reading import at_parallelism, partition_keys, projected_columns, select_list, source_options, table_id
from .s3options import S3, Dialect, S3Settings, config_error, log
from .store import Store


def _keep(o: ParsedOptions, plugin: str) -> Any:
    """Whether an object (key relative to the listed prefix, size) is read."""
    text = o["file_filter_pattern"]
    try:
        pattern = re.compile(str(text)) if text is not None else None
    except re.error as e:
        raise config_error(f"file_filter_pattern {text!r} is not a valid regex: {e}", plugin) from None
    partitions = [str(p) for p in o["read_partitions"] or ()]

    def keep(key: str, relative: str, size: int) -> bool:
        *folders, name = relative.split("/")
        if name.startswith((".", "_")) or size == 0:
            return False
        if any(f.startswith(".") or (f.startswith("_") and "=" not in f) for f in folders):
            return False
        if pattern is not None and not pattern.fullmatch(name):
            return False
        return not partitions or any(p in key for p in partitions)

    return keep


def list_input_keys(bucket: Store, s: S3Settings, config: Mapping[str, Any],
                    options: ParsedOptions | None = None) -> list[str]:
    """The keys the source reads, sorted (``options``: the block's, when the caller parsed them)."""
    keep = _keep(options if options is not None else source_options(config), s.traits.plugin)
    hidden = commits.hidden_keys(bucket, s.prefix)
    folder = s.prefix + "/" if s.prefix else ""
    found = [k for k, size in bucket.objects(folder) if keep(k, k[len(folder):], size)]
    if not found and s.prefix:  # ``path`` names one object
        size = bucket.size(s.prefix)
        found = [s.prefix] if size else []
    hidden |= commits.hidden_keys(bucket, s.prefix)  # a commit that started while we listed
    skipped = [k for k in found if k in hidden]
    if skipped:
        log.info("%s: skipping %d object(s) of a commit in progress or interrupted", s.traits.plugin, len(skipped))
    return sorted(k for k in found if k not in hidden)


def _read_table(ctx: RunContext, config: Mapping[str, Any], output: str | None,
                dialect: Dialect) -> tuple[str, Any]:
    from .formats import read_files

    s = dialect.settings(config)
    dialect.reach(ctx.spark, s)
    bucket = dialect.open(s)
    o = source_options(config)
    keys = list_input_keys(bucket, s, config, o)
    fmt = (o["file_format_type"] or "").strip().lower()
    if not keys and fmt in ("parquet", "orc"):
        raise config_error(f"no {fmt} objects to read under {bucket.uri(s.prefix)}: the schema comes from them",
                           s.traits.plugin)
    files = dialect.inputs(ctx.spark, bucket, s, keys)
    partitioned = bool(files) and o["parse_partition_from_path"]
    part_keys = partition_keys(keys[0]) if partitioned else []
    df = read_files(ctx.spark, config, o, files, with_file=bool(part_keys))
    available = [c for c in df.columns if c != FILE]
    data_columns = projected_columns(o, available)
    if not part_keys and data_columns == available and len(available) == len(df.columns):
        return table_id(config, output), with_kind(df)
    return table_id(config, output), with_kind(df.select(*select_list(data_columns, part_keys)))


def read(ctx: RunContext, vertex: Vertex, dialect: Dialect = S3) -> Dataset:
    """The objects under ``path`` (or each ``tables_configs`` item's) as ``{table id: DataFrame}``,
    each at the vertex's parallelism."""
    configs = lookup(vertex.config, "tables_configs")
    items = configs if isinstance(configs, list) and configs else [vertex.config]
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping):
            raise config_error(f"each tables_configs item must be a block of {dialect.plugin} options", dialect.plugin)
        merged = item if item is vertex.config else {**_connection_keys(vertex.config, dialect.shared), **item}
        table, df = _read_table(ctx, merged, vertex.output if item is vertex.config else None, dialect)
        if table in out:
            raise config_error(f"two tables_configs items read the table '{table}': give each its own schema.table",
                               dialect.plugin)
        out[table] = df
    parallelism = max(1, int(vertex.parallelism))
    return {t: at_parallelism(df, parallelism) for t, df in out.items()}


def _connection_keys(config: Mapping[str, Any], shared: tuple[str, ...]) -> dict[str, Any]:
    """What a tables_configs item takes from its block when it does not set it."""
    out = {}
    for key in shared:
        value = lookup(config, key)  # copied as written: the item's own spec types it
        if value is not MISSING and value is not None:
            out[key] = value
    return out
