"""Reading files into tables, for every file store's source: the table id, the ``k=v`` partition
columns of a file's path, the ``read_columns`` projection and the plan's parallelism. LocalFile,
S3File (with the object stores, HDFS and the file servers), Hive, Delta, Iceberg and Paimon read
through these functions.

A file source parses a block's options once (:func:`source_options`) and hands the typed value to
its listing, its reading (:func:`.formats.read_files`) and its projection (:func:`projected_columns`)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from typing import Any

from ...spi import SOURCE
from ...spi.options import lookup
from ...spi.optionspec import ParsedOptions
from ...spi.sessions import is_connect
from .options import FILE, config_error, java_regex_literal
from .optionspec import FILE_SPEC


def table_id(config: Mapping[str, Any], output: str | None) -> str:
    schema = lookup(config, "schema")  # the block's schema (declared a map; the compiler checks it)
    if isinstance(schema, Mapping) and schema.get("table"):
        return str(schema["table"])
    return output or "default"


def source_options(config: Mapping[str, Any]) -> ParsedOptions:
    """A file source block's typed options (a ``tables_configs`` item is a block), parsed once for its
    listing, reading and projection."""
    return FILE_SPEC.run_time(config, SOURCE)


def partition_keys(file_path: str) -> list[str]:
    """``k`` of every ``k=v`` directory of ``file_path``, in path order (a repeated key once)."""
    keys: list[str] = []
    for segment in os.path.dirname(file_path).split("/"):
        if "=" in segment:
            key = segment.split("=", 1)[0]
            if key not in keys:
                keys.append(key)
    return keys


def projected_columns(options: ParsedOptions, available: list[str]) -> list[str]:
    """The columns ``read_columns`` (of the block's :func:`source_options`) names (matched exactly, else
    case-insensitively), in its order; all of ``available`` when it is unset."""
    wanted = [str(c) for c in options["read_columns"] or ()]
    if not wanted:
        return available
    by_lower = {c.lower(): c for c in reversed(available)}  # the first of equal names, as a scan finds it
    chosen = []
    for name in wanted:
        match = name if name in available else by_lower.get(name.lower())
        if match is None:
            close = difflib.get_close_matches(name, available, n=1)
            raise config_error(f"read_columns names '{name}', which is not a field of the files"
                               + (f"; did you mean '{close[0]}'?" if close else ""))
        chosen.append(match)
    return chosen


def select_list(data_columns: list[str], keys: list[str]) -> list[Any]:
    """The select list of a table: its data columns, then one string column per partition key (the
    value of the row's file's ``key=...`` directory, null when the file has none)."""
    from pyspark.sql import functions as F

    from ...spi.rows import quote

    columns = [F.col(quote(c)) for c in data_columns]
    path = F.col(FILE)
    for key in keys:
        if key in data_columns:
            raise config_error(f"the partition directory '{key}=...' clashes with the field '{key}'; "
                               "rename one, or set parse_partition_from_path = false")
        pattern = "^.*/" + java_regex_literal(key) + "=([^/]*)/"
        value = F.replace(F.regexp_extract(path, pattern, 1), F.lit("%3A"), F.lit(":"))  # as the sink escapes
        columns.append(F.when(path.rlike(pattern), value).alias(key))
    return columns


def at_parallelism(df: Any, parallelism: int, streaming: bool = False) -> Any:
    """``df`` in exactly ``parallelism`` partitions: Spark's file splits coalesced when there are more
    (no shuffle), the rows repartitioned when there are fewer. A stream's micro-batches are
    coalesced to one partition, or repartitioned (their splits are not known in advance). On Spark
    Connect (whose client does not see the splits) the files are coalesced: fewer splits than
    ``parallelism`` (small files) stay fewer, as SeaTunnel's readers, one per file, do."""
    if streaming:
        return df.coalesce(1) if parallelism == 1 else df.repartition(parallelism)
    if is_connect(df.sparkSession):  # a Connect client cannot see the splits without running a job
        return df.coalesce(parallelism)
    have = df.rdd.getNumPartitions()
    if have > parallelism:
        return df.coalesce(parallelism)
    if have < parallelism:
        return df.repartition(parallelism)
    return df
