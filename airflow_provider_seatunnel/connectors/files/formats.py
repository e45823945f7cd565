"""How the file stores read each format: text, csv, json, parquet, orc (xml and binary: :mod:`.documents`;
excel: :mod:`.excel`). Writing them: :mod:`.writing`.

Reading: text lines are read by Spark and split with native functions (the ``field_delimiter`` is
a regex, as in SeaTunnel); blank text/csv fields become null; values are cast to the ``schema``
types (dates and timestamps in the auto-detected SeaTunnel formats). csv goes through Spark's csv
parser, json through Spark's json reader (scalars read as text and converted like SeaTunnel's
converter), parquet and orc keep their own schema. Files are read whole (one task per file) when
``skip_header_row_number`` needs line numbers or a text file is not UTF-8.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.optionspec import ParsedOptions
from ...spi.rows import quote
from ...spi.schema import DataType, Schema, schema_from_options
from . import archives, documents, excel
from .options import (
    DEFAULT_DELIMITER,
    FILE,
    JAVA_CHARSETS_CONF,
    LINE,
    LINE_CODECS,
    LZOP_CODEC,
    NESTED_SEPARATORS,
    UNAVAILABLE_CODECS,
    config_error,
    format_of,
    is_utf8,
    java_regex_literal,
    needs_java_charsets,
    target_path,
)

#: csv columns of these types are read by Spark's own parser, typed (see :func:`_read_csv`)
_CSV_NATIVE = ("string", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal")
_DATE_FORMATS = ("yyyy-MM-dd", "yyyy/MM/dd", "yyyy.MM.dd", "yyyyMMdd")
_TIMESTAMP_FORMATS = ("yyyy-MM-dd HH:mm:ss[.SSSSSSSSS]", "yyyy-MM-dd'T'HH:mm:ss[.SSSSSSSSS]",
                      "yyyy/MM/dd HH:mm:ss[.SSSSSSSSS]", "yyyy.MM.dd HH:mm:ss[.SSSSSSSSS]",
                      "yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm", "yyyyMMddHHmmss", "yyyyMMdd HH:mm:ss")
_TIME_FORMATS = ("HH:mm:ss[.SSSSSSSSS]", "HH:mm")
_WHITESPACE = " \t\n\r\f\u000b"


# ---------------------------------------------------------------------------------------------
# Reading: values
# ---------------------------------------------------------------------------------------------

def plain_path(column: Any, encoded: bool) -> Any:
    """A file path column as a plain absolute path (Spark's ``_metadata.file_path`` is a URI)."""
    from pyspark.sql import functions as F

    if encoded:  # '+' is literal in a Hadoop URI; url_decode would turn it into a space
        column = F.url_decode(F.replace(column, F.lit("+"), F.lit("%2B")))
    return F.regexp_replace(column, r"^file:(//)?", "")


def _blank_to_null(column: Any) -> Any:
    """Blank text (empty or only whitespace) as null, as SeaTunnel reads text and csv. The
    common case, a first byte above ' ' (``>= '!'`` in byte order: no copy of the value),
    avoids the trim; a blank value matches no branch (null)."""
    from pyspark.sql import functions as F

    return F.when(column >= F.lit("!"), column).when(F.btrim(column, F.lit(_WHITESPACE)) != F.lit(""), column)


def _parse_failed(column: Any, parsed: Any, what: str) -> Any:
    from pyspark.sql import functions as F

    message = F.concat(F.lit(f"LocalFile: cannot parse {what} from '"), column, F.lit("'"))
    return F.when(column.isNotNull() & parsed.isNull(), F.raise_error(message)).otherwise(parsed)


def _parse_temporal(column: Any, dtype: DataType, how: Mapping[str, Any]) -> Any:
    """A date, timestamp or time from text: the configured format first, then the auto-detected ones."""
    from pyspark.sql import functions as F

    if dtype.name == "date":
        formats = [how["date"], *_DATE_FORMATS]
        parsed = F.coalesce(*[F.try_to_date(column, f) for f in dict.fromkeys(formats)])
        return _parse_failed(column, parsed, "a date")
    if dtype.name == "timestamp":
        formats = [how["datetime"], *_TIMESTAMP_FORMATS]
        parsed = F.coalesce(*[F.try_to_timestamp(column, F.lit(f)) for f in dict.fromkeys(formats)])
        return _parse_failed(column, parsed.cast("timestamp_ntz"), "a timestamp")
    formats = [how["time"], *_TIME_FORMATS]
    parsed = F.coalesce(*[F.try_to_time(column, F.lit(f)) for f in dict.fromkeys(formats)])
    return _parse_failed(column, parsed.cast(dtype.to_spark()), "a time")


def _parse_nested(column: Any, dtype: DataType, level: int, how: Mapping[str, Any]) -> Any:
    """An array, map or row from text: its parts split by the separator of the next level."""
    from pyspark.sql import functions as F

    seps = how["separators"]
    sep1 = seps[level + 1] if level + 1 < len(seps) else chr(2 + level)
    sep2 = seps[level + 2] if level + 2 < len(seps) else chr(3 + level)
    element, key = dtype.element, dtype.key
    if dtype.name == "array" and element is not None:
        parsed = F.transform(F.split(column, java_regex_literal(sep1), -1),
                             lambda x: parse_value(x, element, level + 1, how))
    elif dtype.name == "map" and element is not None and key is not None:
        def entry(e: Any) -> Any:
            kv = F.split(e, java_regex_literal(sep2), 2)
            return F.struct(parse_value(F.get(kv, 0), key, level + 2, how).alias("key"),
                            parse_value(F.get(kv, 1), element, level + 2, how).alias("value"))
        parsed = F.map_from_entries(F.transform(F.split(column, java_regex_literal(sep1), -1), entry))
    elif dtype.name == "row":
        parts = F.split(column, java_regex_literal(sep1), -1)
        parsed = F.struct(*[parse_value(F.get(parts, i), f.type, level + 1, how).alias(f.name)
                            for i, f in enumerate(dtype.fields)])
    else:
        raise config_error(f"type {dtype} cannot be read from text")
    return F.when(column.isNull(), F.lit(None).cast(dtype.to_spark())).otherwise(parsed)


def parse_value(column: Any, dtype: DataType, level: int, how: Mapping[str, Any]) -> Any:
    """A string column converted to ``dtype`` as SeaTunnel's text/json converters do.

    ``how``: ``blank_null`` (blank text → null), ``bytes`` ("utf8" or "base64"),
    ``separators`` (field delimiter, then \\u0002, \\u0003... for nested levels),
    ``date``/``datetime``/``time`` (the configured format, tried before the auto-detected ones).
    """
    from pyspark.sql import functions as F

    if how["blank_null"]:
        column = _blank_to_null(column)
    name = dtype.name
    if name == "string":
        return column
    if name == "null":
        return F.lit(None).cast(dtype.to_spark())
    if name == "boolean":
        return F.when(column.isNull(), F.lit(None).cast("boolean")).otherwise(F.lower(F.trim(column)) == "true")
    if dtype.is_numeric:
        return column.cast(dtype.to_spark())
    if name == "bytes":
        return F.unbase64(column) if how["bytes"] == "base64" else column.cast("binary")
    if name in ("date", "timestamp", "time"):
        return _parse_temporal(column, dtype, how)
    return _parse_nested(column, dtype, level, how)


# ---------------------------------------------------------------------------------------------
# Reading: files
# ---------------------------------------------------------------------------------------------

@dataclass
class _Reading:
    """What reading one table's files needs: the session, the options read once, the files."""

    spark: Any
    config: Mapping[str, Any]
    files: list[str]
    with_file: bool
    fmt: str
    encoding: str
    row_delimiter: str | None
    skip: int
    options: ParsedOptions
    schema: Schema | None = None
    how: Mapping[str, Any] | None = None

    @property
    def file_col(self) -> list[Any]:
        """The row's file as a select-list item (reading the path costs every row: only when wanted)."""
        from pyspark.sql import functions as F

        return [plain_path(F.col("_metadata.file_path"), encoded=True).alias(FILE)] if self.with_file else []

    @property
    def carry_file(self) -> list[Any]:
        from pyspark.sql import functions as F

        return [F.col(FILE)] if self.with_file else []

    def lines_whole_files(self) -> Any:
        """One row per line (``__st_line``, ``__st_file``), reading each file whole: line numbers
        per file (for ``skip_header_row_number``) and any charset Spark's ``decode`` knows."""
        from pyspark.sql import functions as F

        raw = self.spark.read.format("binaryFile").load(self.files)
        text = F.decode(F.col("content"), self.encoding)
        splitter = java_regex_literal(self.row_delimiter) if self.row_delimiter else r"\r\n|\r|\n"
        lines = raw.select(plain_path(F.col("path"), encoded=False).alias(FILE),
                           F.posexplode(F.split(text, splitter, -1)).alias("pos", LINE),
                           F.size(F.split(text, splitter, -1)).alias("n"))
        # the text after a final line terminator is not a line
        lines = lines.where((F.col("pos") >= self.skip) & ~((F.col("pos") == F.col("n") - 1) & (F.col(LINE) == "")))
        return lines.select(LINE, FILE)

    def with_line_sep(self, reader: Any) -> Any:
        return reader.option("lineSep", self.row_delimiter) if self.row_delimiter else reader


def field_delimiter(o: ParsedOptions, default: str) -> str:
    """``field_delimiter`` (or ``delimiter``) as set, else the format's ``default`` (text: \\u0001; csv, xml: ',')."""
    return o["field_delimiter"] if o.given("field_delimiter") else default


def use_charset(spark: Any, encoding: str) -> None:
    """Let the session's readers, writers and ``encode``/``decode`` take ``encoding``: Spark accepts
    only the UTF and ISO-8859-1/US-ASCII charsets unless its Java charsets are enabled (a session
    setting that only widens what is accepted; it is never turned off again)."""
    if needs_java_charsets(encoding):
        spark.conf.set(JAVA_CHARSETS_CONF, "true")


def use_lzop(spark: Any) -> None:
    """Let Hadoop's readers decompress ``.lzo`` (lzop) files: Spark ships the codec, Hadoop's codec
    list does not name it. Adds it to the session's ``io.compression.codecs`` (never removes one)."""
    context = getattr(spark, "sparkContext", None)
    if context is None:  # a stream-reading stand-in: its session registered it
        return
    conf = context._jsc.hadoopConfiguration()
    current = conf.get("io.compression.codecs") or ""
    if LZOP_CODEC not in current:
        conf.set("io.compression.codecs", ",".join(c for c in (current, LZOP_CODEC) if c))


def read_files(spark: Any, config: Mapping[str, Any], o: ParsedOptions, files: list[str],
               with_file: bool = True) -> Any:
    """The rows of ``files`` with the schema's columns (all of them), plus ``__st_file`` (each
    row's file) when ``with_file``: reading the file metadata costs every row, so only
    partitioned paths ask for it. ``spark`` is the session (or its stream-reading stand-in); ``o``
    the block's options (:func:`.reading.source_options`)."""
    fmt = format_of(config)
    # unset or empty: any line break ends a row (the declared default is the sink's)
    row_delimiter = o["row_delimiter"] if o.given("row_delimiter") and o["row_delimiter"] != "" else None
    r = _Reading(spark, config, files, with_file, fmt, encoding=o["encoding"], row_delimiter=row_delimiter,
                 skip=o["skip_header_row_number"] if fmt in ("text", "csv") else 0, options=o)
    use_charset(spark, r.encoding)
    codec = o["compress_codec"].lower()
    if codec in UNAVAILABLE_CODECS and codec not in LINE_CODECS and fmt in ("text", "csv", "json", "xml"):
        raise config_error(f"compress_codec {codec} is not available in Spark")
    use_lzop(spark)  # codecs are detected by extension: .lzo too
    if archives.applies(fmt, o["archive_compress_codec"]):
        if getattr(spark, "sparkContext", None) is None:  # a stream-reading stand-in (compile time refuses it)
            raise config_error("archive_compress_codec is read in BATCH only")
        files = archives.unpack(spark, files, fmt, o["archive_compress_codec"])
        r.files = files
    if fmt in ("parquet", "orc"):
        return _read_columnar(r)
    if fmt == "binary":
        if not files:
            raise config_error(f"no files to read under {target_path(config)}")
        return documents.read_binary(r)
    r.schema = schema_from_options(config)
    if r.schema is None:
        raise config_error(f"schema is required to read {fmt} files")
    r.how = {"blank_null": fmt not in ("json", "excel"), "bytes": "base64" if fmt == "json" else "utf8",
             "date": o["date_format"], "datetime": o["datetime_format"], "time": o["time_format"]}
    if not files:
        from pyspark.sql import types as T

        empty = T.StructType([*r.schema.to_spark().fields, T.StructField(FILE, T.StringType())])
        return spark.createDataFrame([], empty)
    readers: dict[str, Callable[[_Reading, Schema, Mapping[str, Any]], Any]] = {
        "text": _read_text, "csv": _read_csv, "json": _read_json, "xml": documents.read_xml, "excel": excel.read_excel}
    return readers[fmt](r, r.schema, r.how)


def _read_columnar(r: _Reading) -> Any:
    """parquet and orc: the files' own schema (timestamps without time zone, as SeaTunnel reads them)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not r.files:
        raise config_error(f"no {r.fmt} files to read under {target_path(r.config)}: the schema comes from them")
    df = r.spark.read.format(r.fmt).load(r.files)
    return df.select(*[F.col(quote(c)).cast(T.TimestampNTZType()).alias(c)
                       if isinstance(df.schema[c].dataType, T.TimestampType) else F.col(quote(c))
                       for c in df.columns],
                     *r.file_col)


def _read_text(r: _Reading, schema: Schema, how: Mapping[str, Any]) -> Any:
    from pyspark.sql import functions as F

    delimiter = field_delimiter(r.options, DEFAULT_DELIMITER)
    how = {**how, "separators": [delimiter, *NESTED_SEPARATORS]}
    if r.skip or not is_utf8(r.encoding):
        lines = r.lines_whole_files()
    else:
        reader = r.with_line_sep(r.spark.read.format("text"))
        lines = reader.load(r.files).select(F.col("value").alias(LINE), *r.file_col)
    parts = F.split(F.col(LINE), delimiter, -1)
    return lines.select(*[parse_value(F.get(parts, i), f.type, 0, how).alias(f.name)
                          for i, f in enumerate(schema.fields)], *r.carry_file)


def _read_csv(r: _Reading, schema: Schema, how: Mapping[str, Any]) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    delimiter = field_delimiter(r.options, ",")
    how = {**how, "separators": [delimiter, *NESTED_SEPARATORS]}
    options = {"sep": delimiter, "quote": '"', "escape": '"', "mode": "PERMISSIVE"}
    header = "true" if r.skip == 1 else "false"
    if r.skip <= 1 and all(f.type.name in _CSV_NATIVE for f in schema.fields):
        # Fast path: Spark parses these types as SeaTunnel does (an empty field is null, a
        # value that does not parse fails the job); only blank strings need a look.
        reader = (r.spark.read.format("csv").schema(schema.to_spark()).options(**{**options, "mode": "FAILFAST"})
                  .option("encoding", r.encoding).option("header", header))
        loaded = r.with_line_sep(reader).load(r.files)
        return loaded.select(*[(_blank_to_null(F.col(quote(f.name))) if f.type.name == "string"
                                else F.col(quote(f.name))).alias(f.name) for f in schema.fields],
                             *r.file_col)
    if r.skip > 1:
        ddl = ", ".join(quote(f.name) + " STRING" for f in schema.fields)
        rows = r.lines_whole_files().select(F.from_csv(F.col(LINE), ddl, options).alias("r"), *r.carry_file)
        raw = rows.select(*[F.col("r").getField(f.name).alias(f.name) for f in schema.fields], *r.carry_file)
    else:
        as_text = T.StructType([T.StructField(f.name, T.StringType()) for f in schema.fields])
        reader = r.spark.read.format("csv").schema(as_text).options(**options).option("encoding", r.encoding)
        loaded = r.with_line_sep(reader.option("header", header)).load(r.files)
        raw = loaded.select(*[F.col(quote(f.name)) for f in schema.fields], *r.file_col)
    return raw.select(*[parse_value(F.col(quote(f.name)), f.type, 0, how).alias(f.name)
                        for f in schema.fields], *r.carry_file)


def _read_json(r: _Reading, schema: Schema, how: Mapping[str, Any]) -> Any:
    """json: scalars are read as their JSON text and converted like SeaTunnel's converter."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    nested = ("array", "map", "row")
    how = {**how, "separators": [",", "\u0002", "\u0003"]}
    read_schema = T.StructType([T.StructField(f.name, f.type.to_spark() if f.type.name in nested else T.StringType())
                                for f in schema.fields])
    reader = r.spark.read.format("json").schema(read_schema).option("mode", "FAILFAST")
    if not is_utf8(r.encoding):  # Spark wants the line separator of a non-UTF-8 json file spelled out
        reader = reader.option("encoding", r.encoding).option("lineSep", r.row_delimiter or "\n")
    loaded = r.with_line_sep(reader).load(r.files)
    return loaded.select(*[(F.col(quote(f.name)) if f.type.name in nested
                            else parse_value(F.col(quote(f.name)), f.type, 0, how)).alias(f.name)
                           for f in schema.fields],
                         *r.file_col)
