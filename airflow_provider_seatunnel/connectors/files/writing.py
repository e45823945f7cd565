"""How the file stores write each format: text and csv rendered as SeaTunnel's text serializer writes
values (csv quoted by ``csv_string_quote_mode``: :mod:`.csvquote`), json and the columnar formats by Spark's
own writers, xml and binary by :mod:`.documents`, excel by :mod:`.excel`. Reading them: :mod:`.formats`.

:func:`writer` builds the Spark writer of a table's rows in the format; ``partition_by`` fields become
staging partition directories; text and csv files end without a row delimiter (:mod:`.lastrow`). A store
saves it inside :func:`write_settings` (parquet's timestamp unit).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.rows import data_columns, quote
from .. import temporal
from ..javatext import java_decimal_column
from . import columnar, documents, excel
from .csvquote import csv_field, csv_header
from .formats import use_charset, use_lzop
from .lastrow import LAST_ROW_FORMATS, NEWLINE_END_FORMATS, LastRowWrite, delimiter_bytes
from .options import CODECS, NESTED_SEPARATORS, PART, ascii_compatible, config_error, is_utf8


def java_string(column: Any, dtype: Any) -> Any:
    """A partition or xml value as Java's ``toString`` renders it (:func:`.temporal.java_text`)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if temporal.is_timestamp(dtype) or temporal.is_time(dtype):
        return temporal.java_text(column, dtype)
    if isinstance(dtype, T.BinaryType):
        return F.decode(column, "UTF-8")
    if isinstance(dtype, T.DecimalType):
        return java_decimal_column(column, dtype.scale)
    return column.cast("string")


def _render_nested(column: Any, dtype: Any, level: int, opts: Mapping[str, Any]) -> Any:
    """An array, map or row as text: its parts joined by the separator of the next level."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    seps = opts["separators"]
    sep1 = seps[level + 1] if level + 1 < len(seps) else chr(2 + level)
    sep2 = seps[level + 2] if level + 2 < len(seps) else chr(3 + level)

    def text(value: Any, of: Any, at: int) -> Any:
        return F.coalesce(render_text(value, of, at, opts), F.lit(""))

    if isinstance(dtype, T.ArrayType):
        return F.array_join(F.transform(column, lambda x: text(x, dtype.elementType, level + 1)), sep1)
    if isinstance(dtype, T.MapType):
        def entry(e: Any) -> Any:
            return F.concat(text(e.getField("key"), dtype.keyType, level + 2), F.lit(sep2),
                            text(e.getField("value"), dtype.valueType, level + 2))
        return F.array_join(F.transform(F.map_entries(column), entry), sep1)
    parts = [text(column.getField(f.name), f.dataType, level + 1) for f in dtype.fields]
    return F.when(column.isNull(), F.lit(None).cast("string")).otherwise(F.concat_ws(sep1, *parts))


def render_text(column: Any, dtype: Any, level: int, opts: Mapping[str, Any]) -> Any:
    """A column as SeaTunnel's text serializer writes it (null stays null: the caller makes it "")."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, T.StringType):
        return column
    if isinstance(dtype, T.DateType):
        return F.date_format(column, opts["date"])
    if temporal.is_timestamp(dtype) or temporal.is_time(dtype):
        return temporal.temporal_text(column, dtype, opts)
    if isinstance(dtype, T.BinaryType):
        return F.decode(column, "UTF-8")
    if isinstance(dtype, T.NullType):
        return F.lit(None).cast("string")
    if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
        return _render_nested(column, dtype, level, opts)
    if isinstance(dtype, T.DecimalType):
        return java_decimal_column(column, dtype.scale)
    return column.cast("string")


def resolve_columns(available: list[str], wanted: list[str], what: str) -> list[str]:
    """The columns ``wanted`` names (case-insensitively), as ``available`` spells them."""
    by_lower = {c.lower(): c for c in available}
    out = []
    for name in wanted:
        match = by_lower.get(name.lower())
        if match is None:
            close = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
            raise config_error(f"{what} names '{name}', which is not "
                               + ("a sink column (partition fields must in sink columns)" if what == "partition_by"
                                  else "an input field")
                               + (f"; did you mean '{by_lower[close[0]]}'?" if close else "")
                               + f" (fields: {', '.join(available)})")
        out.append(match)
    return out


@dataclass(frozen=True)
class _Layout:
    """What a table's writer writes: the file's columns, and the staging partition columns."""

    written: list[str]
    types: dict[str, Any]
    part_cols: list[str]
    part_exprs: list[Any]


def _layout(df: Any, opts: Mapping[str, Any]) -> _Layout:
    from pyspark.sql import functions as F

    available = data_columns(df)
    columns = resolve_columns(available, opts["sink_columns"], "sink_columns") if opts["sink_columns"] else available
    partitions = resolve_columns(columns, opts["partition_by"], "partition_by") if opts["partition_by"] else []
    types = {f.name: f.dataType for f in df.schema.fields}
    part_cols = [f"{PART}{i}" for i in range(len(partitions))]
    # null and "" both land in __HIVE_DEFAULT_PARTITION__ (Spark cannot read a 'k=' directory)
    part_exprs = [java_string(F.col(quote(p)), types[p]).alias(c) for p, c in zip(partitions, part_cols, strict=True)]
    written = columns if opts["partition_in_file"] else [c for c in columns if c not in partitions]
    return _Layout(written, types, part_cols, part_exprs)


def _rendered(layout: _Layout, opts: Mapping[str, Any]) -> list[Any]:
    """The written columns as text (text; csv quoted by :func:`.csvquote.csv_field`), null as ""."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    render = {**opts, "separators": [opts["delimiter"], *NESTED_SEPARATORS]}
    texts = [render_text(F.col(quote(c)), layout.types[c], 0, render) for c in layout.written]
    if opts["format"] == "csv":
        texts = [csv_field(t, isinstance(layout.types[c], T.StringType), opts)
                 for t, c in zip(texts, layout.written, strict=True)]
    return [F.coalesce(t, F.lit("")) for t in texts]


def file_starts(part_cols: list[str], batch_size: int) -> Any:
    """Whether a row is the first of its output file, as Spark's line writer rolls files over (every
    ``batch_size`` rows of a task, and of each partition directory)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if part_cols:
        index = F.row_number().over(Window.partitionBy(*part_cols).orderBy(*part_cols)) - 1
    else:
        index = F.monotonically_increasing_id() - F.shiftleft(F.spark_partition_id().cast("bigint"), 33)
    return (index % batch_size) == 0


def _text_writer(df: Any, layout: _Layout, opts: Mapping[str, Any]) -> Any:
    """text and csv: one line per row, the written columns joined by the field delimiter."""
    from pyspark.sql import functions as F

    rendered = _rendered(layout, opts)
    part_cols, header, encoding = layout.part_cols, opts["header"], opts["encoding"]
    base = df.select(*layout.part_exprs, *[F.col(quote(c)) for c in layout.written])
    line = F.concat_ws(opts["delimiter"], *rendered) if rendered else F.lit("")
    header_text = opts["delimiter"].join(csv_header(layout.written, opts) if opts["format"] == "csv"
                                         else layout.written)
    transcode = not is_utf8(encoding) and ascii_compatible(encoding, opts["delimiter"], opts["row_delimiter"])
    if not is_utf8(encoding) and not transcode:
        # Spark's text writer is UTF-8 only and UTF-16/32 lines cannot be transcoded one by one:
        # one string column through the csv writer
        out = base.select(*part_cols, line.alias(header_text if header else "value"))
        return (out.write.format("csv").options(sep="\ue000", quote="\u0000", escapeQuotes="false",
                                                ignoreLeadingWhiteSpace="false", ignoreTrailingWhiteSpace="false",
                                                emptyValue="", nullValue="", lineSep=opts["row_delimiter"],
                                                encoding=encoding)
                .option("header", "true" if header else "false"))
    if header:  # the first row of every output file (and of every batch_size rows) carries the header
        line = F.when(file_starts(part_cols, opts["batch_size"]),
                      F.concat(F.lit(header_text + opts["row_delimiter"]), line)).otherwise(line)
    if transcode:  # the line's bytes in the charset, as a string the text writer copies byte for byte
        line = F.encode(line, encoding).cast("string")
    out = base.select(*part_cols, line.alias("value"))
    return out.write.format("text").option("lineSep", opts["row_delimiter"])


def _native_writer(df: Any, layout: _Layout, opts: Mapping[str, Any]) -> Any:
    """json, parquet and orc: Spark's own writers. json: timestamps and times as ISO text first; parquet
    and orc: timestamps as instants, orc times as timestamps of 1970-01-01 (:func:`.temporal.zoned`;
    parquet's unit: :func:`write_settings`); parquet: tinyint and smallint as int (:func:`.columnar.parquet_type`)."""
    from pyspark.sql import functions as F

    fmt, millis = opts["format"], opts["format"] == "parquet" and opts["parquet_timestamp_unit"] == "MILLIS"

    def column(name: str) -> Any:
        dtype, value = layout.types[name], F.col(quote(name))
        if fmt == "parquet" and columnar.parquet_type(dtype) != dtype:  # tinyint, smallint: plain INT32
            dtype = columnar.parquet_type(dtype)
            value = value.cast(dtype)
        if not temporal.has_temporal(dtype):
            return value.alias(name)
        if fmt == "json":
            return temporal.json_ready(value, dtype).alias(name)
        where = f"{opts.get('where', 'file sink')}, field '{name}'"
        return temporal.map_temporal(value, dtype,
                                     lambda c, t: temporal.zoned(c, t, where, millis, fmt == "orc")).alias(name)

    out = df.select(*layout.part_exprs, *[column(c) for c in layout.written])
    writer = out.write.format(opts["format"])
    if opts["format"] == "json":
        writer = writer.options(ignoreNullFields="false", lineSep=opts["row_delimiter"])
        if not is_utf8(opts["encoding"]):
            writer = writer.option("encoding", opts["encoding"])
    return writer


_WRITERS: dict[str, Callable[[Any, _Layout, Mapping[str, Any]], Any]] = {
    "text": _text_writer, "csv": _text_writer, "json": _native_writer, "parquet": _native_writer,
    "orc": _native_writer, "xml": documents.xml_writer, "binary": documents.binary_writer, "excel": excel.excel_writer}


def writer(ctx: RunContext, vertex: Vertex, df: Any, opts: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """The Spark writer of ``df``'s data as it is partitioned (one file per non-empty partition and
    partition directory, more past ``batch_size`` rows), and the partition field names
    (``partition_by`` as written)."""
    opts = {**opts, "where": f"{vertex.ref}"}
    layout = _layout(df, opts)
    use_charset(df.sparkSession, opts["encoding"])
    use_lzop(df.sparkSession)
    df = ctx.with_write_faults(vertex, df)  # a no-op unless a restore trial arms sink.write
    fmt = opts["format"]
    out = _WRITERS[fmt](df, layout, opts).option("compression", CODECS[fmt][opts["codec"]][0])
    # excel: each row is a whole workbook (its writer rolls over past batch_size rows)
    out = out.option("maxRecordsPerFile", 1 if fmt == "excel" else opts["batch_size"]).mode("overwrite")
    part_cols = [f"{PART}0"] if fmt == "binary" else layout.part_cols  # binary: a directory per file
    if part_cols:
        out = out.partitionBy(*part_cols)
    if fmt in LAST_ROW_FORMATS:  # no row delimiter after a file's last row
        tail = delimiter_bytes(df.sparkSession, opts["row_delimiter"], opts["encoding"])
        out = LastRowWrite(out, df.sparkSession, tail, compressed=opts["codec"] != "none")
    elif fmt in NEWLINE_END_FORMATS:  # the document's end, and a newline after it
        tail, end = (delimiter_bytes(df.sparkSession, t, opts["encoding"]) for t in documents.xml_ends(opts))
        out = LastRowWrite(out, df.sparkSession, tail, compressed=opts["codec"] != "none", end=end)
    return out, list(opts["partition_by"])  # directories name the fields as partition_by spells them


_PARQUET_TIMESTAMPS = "spark.sql.parquet.outputTimestampType"
_SETTINGS = threading.Lock()


@contextmanager
def write_settings(spark: Any, opts: Mapping[str, Any]) -> Iterator[None]:
    """Around the save of :func:`writer`'s writer: parquet timestamps as SeaTunnel's type, INT64
    timestamp-millis adjusted to UTC (``parquet_timestamp_unit = MICROS``: micros). Spark takes the unit
    from the session only: it is set for this save and restored after (one file save at a time)."""
    if opts["format"] != "parquet":
        yield
        return
    with _SETTINGS:
        before = spark.conf.get(_PARQUET_TIMESTAMPS, None)
        spark.conf.set(_PARQUET_TIMESTAMPS, f"TIMESTAMP_{opts['parquet_timestamp_unit']}")
        try:
            yield
        finally:
            if before is None:
                spark.conf.unset(_PARQUET_TIMESTAMPS)
            else:
                spark.conf.set(_PARQUET_TIMESTAMPS, before)
