"""How LocalFile reads and writes xml and binary files.

**xml**: Spark's XML data source. A written file is one root element (``xml_root_tag``, default
RECORDS) holding one ``xml_row_tag`` element (default RECORD) per row, its fields as child
elements or, with ``xml_use_attr_format``, as attributes; values are written as Java's
``toString`` renders them (arrays and maps as JSON, rows joined by the field delimiter, null as
an empty value). Reading takes the ``xml_row_tag`` elements anywhere in the file (both it and
``xml_use_attr_format`` must be set, as in SeaTunnel) and converts the schema's fields from text (a
value's surrounding spaces kept).

**binary**: a file becomes rows of ``data`` (at most 1024 bytes each), ``relativePath`` (the file's
path under ``path``, its name when ``path`` is a file) and ``partIndex`` (0, 1, ...); writing
puts the chunks of each ``relativePath`` back together, in ``partIndex`` order (a gap or repeat
fails the job), into ``path``/``relativePath``. A file is assembled in one row (up to 2 GB).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...spi.rows import data_columns, quote
from ...spi.schema import Schema
from ..files.placeholders import unescape_partition
from .options import PART, config_error, is_utf8, target_path

#: the columns of a binary table, as SeaTunnel's binary reader gives them
BINARY_COLUMNS = ("data", "relativePath", "partIndex")
BINARY_CHUNK = 1024
_ATTR = "_"  # Spark's prefix of the columns that are attributes


# ---------------------------------------------------------------------------------------------
# xml
# ---------------------------------------------------------------------------------------------

def read_xml(r: Any, schema: Schema, how: Mapping[str, Any]) -> Any:
    """The ``xml_row_tag`` elements of the files as rows of the schema's fields (text converted)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .formats import field_delimiter, parse_value

    o = r.options
    if not (o.given("xml_row_tag") and o.given("xml_use_attr_format")):
        raise config_error("xml_row_tag and xml_use_attr_format must be set to read xml files")
    row_tag = o["xml_row_tag"]
    prefix = _ATTR if o["xml_use_attr_format"] else ""
    delimiter = field_delimiter(o, ",")
    how = {**how, "separators": [delimiter, "\u0002", "\u0003"]}
    as_text = T.StructType([T.StructField(prefix + f.name, T.StringType()) for f in schema.fields])
    loaded = (r.spark.read.format("xml").schema(as_text)
              .options(rowTag=str(row_tag), attributePrefix=_ATTR, encoding=r.encoding, mode="FAILFAST",
                       ignoreSurroundingSpaces="false")
              .load(r.files))

    def value(name: str, dtype: Any) -> Any:
        column = F.col(quote(prefix + name))
        if dtype.name in ("array", "map"):  # written as JSON
            return F.from_json(F.when(F.trim(column) != "", column), dtype.to_spark())
        return parse_value(column, dtype, 0, how)

    return loaded.select(*[value(f.name, f.type).alias(f.name) for f in schema.fields], *r.file_col)


def _xml_text(column: Any, dtype: Any, delimiter: str) -> Any:
    """A value as SeaTunnel's xml writer renders it (Java's ``toString``; null stays null)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .writing import java_string

    if isinstance(dtype, (T.ArrayType, T.MapType)):
        return F.to_json(column)
    if isinstance(dtype, T.StructType):
        parts = [F.coalesce(_xml_text(column.getField(f.name), f.dataType, delimiter), F.lit(""))
                 for f in dtype.fields]
        return F.when(column.isNotNull(), F.concat_ws(delimiter, *parts))
    return java_string(column, dtype)


#: what an element's text and an attribute's value escape (``&`` first), as SeaTunnel's writer does, and the
#: whitespace an attribute keeps only as a character reference (an XML reader turns it into spaces)
_TEXT_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#xd;"))
_ATTR_ESCAPES = (*_TEXT_ESCAPES, ('"', "&quot;"))
_ATTR_WHITESPACE = (("\t", "&#x9;"), ("\n", "&#xa;"))
#: ``xml_whitespace`` values: values as they are, or SeaTunnel 2.3.8's rewriting of them
XML_WHITESPACE = ("KEEP", "NORMALIZE")


def _escaped(column: Any, escapes: tuple[tuple[str, str], ...]) -> Any:
    from pyspark.sql import functions as F

    for char, reference in escapes:
        column = F.replace(column, F.lit(char), F.lit(reference))
    return column


def xml_ends(opts: Mapping[str, Any]) -> tuple[str, str]:
    """What each written xml file ends with, and what replaces it (:class:`.lastrow.LastRowWrite`): a UTF-8
    file's last row's line separator gives way to the root's end tag and a newline; Spark's xml writer (other
    charsets) ends with the root's end tag, and gets the newline."""
    if is_utf8(opts["encoding"]):
        return "\n", f"\n</{opts['xml_root_tag']}>\n"
    return "", "\n"


def xml_writer(df: Any, layout: Any, opts: Mapping[str, Any]) -> Any:
    """xml: a document per file, the root element ``xml_root_tag`` holding an ``xml_row_tag`` element per
    row, its fields child elements (indented by tabs) or attributes, written as SeaTunnel 2.3.8 writes them:
    the declaration, an empty line, ``&`` ``<`` ``>`` escaped in text (``"`` too in attributes), null as an
    empty value. Unlike SeaTunnel, values keep their whitespace (``xml_whitespace = KEEP``): an attribute's
    tabs and line breaks as character references; ``NORMALIZE`` gives SeaTunnel's bytes (element text
    trimmed, each run of whitespace one space; attribute whitespace raw). UTF-8 files are written as lines
    by Spark's text writer (the document's start before each file's first row, its end by
    :func:`xml_ends`); other charsets by Spark's xml writer (characters the charset lacks as references)."""
    from pyspark.sql import functions as F

    from .writing import file_starts

    if not is_utf8(opts["encoding"]):
        return _spark_xml_writer(df, layout, opts)
    delimiter, row_tag, attr = opts["delimiter"], opts["xml_row_tag"], opts["xml_attr"]
    normalize = opts.get("xml_whitespace", "KEEP") == "NORMALIZE"
    fields = []
    for c in layout.written:
        value = F.coalesce(_xml_text(_col(c), layout.types[c], delimiter), F.lit(""))
        if attr:
            value = _escaped(value, _ATTR_ESCAPES if normalize else (*_ATTR_ESCAPES, *_ATTR_WHITESPACE))
            fields.append(F.concat(F.lit(f' {c}="'), value, F.lit('"')))
        else:
            if normalize:
                value = F.trim(F.regexp_replace(value, r"[ \t\n\r\f]+", " "))
            fields.append(F.concat(F.lit(f"\n\t\t<{c}>"), _escaped(value, _TEXT_ESCAPES), F.lit(f"</{c}>")))
    if attr:
        row = F.concat(F.lit(f"\t<{row_tag}"), *fields, F.lit("/>"))
    else:
        row = F.concat(F.lit(f"\t<{row_tag}>"), *fields, F.lit(f"\n\t</{row_tag}>"))
    start = f'<?xml version="1.0" encoding="{opts["encoding"]}"?>\n\n<{opts["xml_root_tag"]}>\n'
    line = F.when(file_starts(layout.part_cols, opts["batch_size"]), F.concat(F.lit(start), row)).otherwise(row)
    out = df.select(*layout.part_exprs, line.alias("value"))
    return out.write.format("text").option("lineSep", "\n")


def _spark_xml_writer(df: Any, layout: Any, opts: Mapping[str, Any]) -> Any:
    """xml in a charset other than UTF-8: Spark's xml writer, the written columns as text."""
    prefix = _ATTR if opts["xml_attr"] else ""
    delimiter = opts["delimiter"]
    out = df.select(*layout.part_exprs,
                    *[_xml_text(_col(c), layout.types[c], delimiter).alias(prefix + c) for c in layout.written])
    return out.write.format("xml").options(
        rootTag=opts["xml_root_tag"], rowTag=opts["xml_row_tag"], attributePrefix=_ATTR, nullValue="",
        encoding=opts["encoding"], indent="\t", declaration=f'version="1.0" encoding="{opts["encoding"]}"')


def _col(name: str) -> Any:
    from pyspark.sql import functions as F

    return F.col(quote(name))


# ---------------------------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------------------------

def read_binary(r: Any) -> Any:
    """Each file in chunks of 1024 bytes: ``data``, ``relativePath`` (under ``path``), ``partIndex``."""
    from pyspark.sql import functions as F

    from .formats import plain_path

    base = target_path(r.config)
    if os.path.isfile(base):
        relative = F.regexp_extract(F.col("path"), r"([^/]*)$", 1)
    else:
        relative = F.substring(plain_path(F.col("path"), encoded=False), len(base.rstrip("/")) + 2, 1 << 30)
    chunks = F.greatest(F.lit(1), F.ceil(F.length(F.col("content")) / F.lit(BINARY_CHUNK)).cast("int"))
    raw = r.spark.read.format("binaryFile").load(r.files)
    parts = raw.select(F.col("content"), relative.alias("relativePath"),
                       *([plain_path(F.col("path"), encoded=False).alias("__st_file")] if r.with_file else []),
                       F.explode(F.sequence(F.lit(0), chunks - 1)).alias("i"))
    data = F.substring(F.col("content"), F.col("i") * BINARY_CHUNK + 1, BINARY_CHUNK)
    return parts.select(data.alias("data"), F.col("relativePath"), F.col("i").cast("bigint").alias("partIndex"),
                        *([F.col("__st_file")] if r.with_file else []))


def binary_writer(df: Any, layout: Any, opts: Mapping[str, Any]) -> Any:
    """binary: one row per ``relativePath`` holding the file's bytes (its chunks in ``partIndex``
    order), written by the text writer under a staging partition named by the path (the writer
    ends the row with a line separator: :func:`binary_moves` cuts it)."""
    from pyspark.sql import functions as F

    columns = data_columns(df)
    if sorted(columns) != sorted(BINARY_COLUMNS):
        raise config_error("the binary format writes rows of data, relativePath and partIndex (read files with "
                           f"file_format_type = binary and do not change them); found {', '.join(columns)}")
    parts = F.array_sort(F.collect_list(F.struct(F.col("partIndex"), F.col("data"))))
    files = df.groupBy(F.col("relativePath").alias(f"{PART}0")).agg(parts.alias("p"))
    in_order = (F.element_at("p", 1).getField("partIndex") == 0) & (
        F.element_at("p", -1).getField("partIndex") == F.size("p") - 1) & (
        F.size(F.array_distinct(F.transform("p", lambda x: x.getField("partIndex")))) == F.size("p"))
    content = F.array_join(F.transform("p", lambda x: x.getField("data").cast("string")), "")
    message = F.concat(F.lit("binary file parts out of order: "), F.col(f"{PART}0"))
    out = files.select(F.col(f"{PART}0"), F.when(in_order, content).otherwise(F.raise_error(message)).alias("value"))
    return out.write.format("text").option("lineSep", "\n")


def binary_moves(data_dir: str, target: str) -> list[list[str]]:
    """(staged file, final file) pairs of a binary write: ``target``/``relativePath``, each staged
    file cut of the line separator the text writer appended."""
    root = os.path.normpath(target)
    moves = []
    for entry in sorted(os.scandir(data_dir), key=lambda e: e.name):
        if not entry.is_dir() or not entry.name.startswith(f"{PART}0="):
            continue
        relative = unescape_partition(entry.name.partition("=")[2])
        if not relative:
            raise config_error("a binary row has no relativePath")
        final = os.path.normpath(os.path.join(root, relative))
        if not final.startswith(root + os.sep):
            raise config_error(f"the binary file {final} is outside the sink path {root}")
        staged = [os.path.join(entry.path, n) for n in sorted(os.listdir(entry.path)) if not n.startswith((".", "_"))]
        if len(staged) != 1:
            raise config_error(f"the binary file {relative} was staged as {len(staged)} files")
        os.truncate(staged[0], os.path.getsize(staged[0]) - 1)
        moves.append([staged[0], final])
    return moves
