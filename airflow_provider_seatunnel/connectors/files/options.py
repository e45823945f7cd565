"""Reading a LocalFile block: option values with their defaults, formats and codecs, the names of
the sink's bookkeeping directories, and what differs from SeaTunnel (:data:`DEVIATIONS`)."""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Mapping
from typing import Any

from ...spi.errors import RuntimeConfigError
from ...spi.options import MISSING, lookup

log = logging.getLogger("seatunnel.localfile")

DEVIATIONS = """\
* Text output ends every row with row_delimiter, the last one included (Spark's text writer);
  SeaTunnel writes it only between rows.
* A compressed text/csv/json file is named x_0.txt.gz (the codec's extension last, so that Spark
  and Hadoop readers decompress it); SeaTunnel names it x_0.gz.txt. parquet/orc: x_0.snappy.parquet.
* csv output is quoted where needed (RFC 4180, quotes doubled); SeaTunnel writes it unquoted.
* enable_header_write writes the names of the columns actually written; SeaTunnel writes all
  input field names even when sink_columns or partitioning removes some.
* compress_codec: lzo for text/csv/json/xml writes lzop files (.lzo) with the LZO codec Spark ships
  (aircompressor's); lzo for parquet and brotli for parquet/orc are not runnable (Parquet's LZO and
  Brotli codecs are not in Spark); beyond SeaTunnel, text/csv/json accept gzip, bzip2, deflate,
  lz4 and snappy, parquet lz4_raw, orc zstd. Reading detects codecs by extension.
* encoding: a charset beyond UTF-8/16/32, ISO-8859-1 and US-ASCII (GBK, Big5...) turns on the
  session's spark.sql.legacy.javaCharsets (Spark refuses them otherwise). Text in an ASCII-compatible
  charset is transcoded line by line with encode(); in UTF-16/32 it goes through Spark's csv writer,
  which wraps a line containing a line break in NUL characters.
* xml: written by Spark's XML writer: characters the charset of a non-UTF, non-ISO-8859-1 file
  (GBK...) would hold are written as character references (&#x4e2d;), a null as an empty element
  or attribute; blank values are read as null (SeaTunnel: ""). Rows are read from xml_row_tag
  elements at any depth.
* binary: each file is assembled in one row (files up to 2 GB), the chunks grouped by
  relativePath; compress_codec does not apply. A gap or repeat in partIndex fails the job.
* excel: .xlsx only (openpyxl, the excel extra, on the driver and the executors): an .xls (Excel 97-2003)
  file fails the read (SeaTunnel reads it with POI); files are recognised by their content, not by the
  .xlsx/.xls suffix SeaTunnel requires. The header row is written unless enable_header_write = false
  (SeaTunnel always writes it); the written columns are contiguous (SeaTunnel leaves the cells of
  unwritten columns empty); a file rolls over at a sheet's 1,048,576 rows (SeaTunnel fails).
  max_rows_in_memory is accepted and not needed (openpyxl's write-only mode holds no rows), and so is
  compress_codec (ignored: x_0.xlsx, never x_0.lzo.xlsx). Reading: a blank cell is null (SeaTunnel
  fails on it), an error cell null (SeaTunnel: ""), a formula its cached value (SeaTunnel fails); rows
  without a value in the schema's columns are skipped (SeaTunnel gives a row of nulls, and stops at
  the sheet's count of rows when rows are missing in between); text cells take date_format,
  datetime_format and time_format before the usual patterns (SeaTunnel: the default patterns only);
  integers and decimals in text or beyond 2^53 keep their digits (SeaTunnel goes through a double).
  Timestamps keep milliseconds (Excel stores a fraction of a day).
* A null or empty partition value is written as __HIVE_DEFAULT_PARTITION__, as Spark and Hive do
  (SeaTunnel fails on null and writes 'k=' for "", a directory Spark refuses to read); ':' in a
  partition value as %3A (Hadoop paths cannot hold ':'); the source turns %3A back into ':'.
* Staging is under the target path (hidden), not under tmp_path, unless tmp_path is set.
* DROP_DATA and RECREATE_SCHEMA keep the hidden .seatunnel-staging and .seatunnel-commits
  directories (a sibling pipeline's staging and the commit records of earlier runs).
* json timestamps are written in Spark's form (2024-01-02T03:04:05.000), nulls as null.
* The source skips file names starting with "_" (Spark cannot read them); SeaTunnel reads them.
* Partition columns come from the directories of the first file, not from its file name.
* The legacy save_mode option is accepted and ignored (SeaTunnel's LocalFile does not read it).
* custom_filename and have_partition are accepted and ignored, as in SeaTunnel.
* archive_compress_codec: entries are unpacked on the driver into a local spool (spark.local.dir, as the
  FTP source's downloads) that Spark reads: executors on other machines need that directory shared. csv
  entries may end .csv or .txt (SeaTunnel reads csv with the text reader and takes .txt entries only);
  empty entries are skipped; a listed file that is not an archive of the codec fails the read
  (SeaTunnel's zip reader reads nothing from it); an archive that expands beyond max(256 MiB, 200 times
  its size) or holds more than 100,000 entries is refused as a possible bomb. BATCH only.
* commit_lock_timeout (seconds, default 600) is this package's: how long a commit waits for the
  target's commit lock before it fails (transient, naming the holder).
"""

FORMATS = ("text", "csv", "json", "parquet", "orc", "xml", "binary", "excel")
#: SeaTunnel's formats this package plans but cannot run (none now)
SEATUNNEL_ONLY_FORMATS: tuple[str, ...] = ()
#: the formats whose source needs a ``schema``
SCHEMA_FORMATS = ("text", "csv", "json", "xml", "excel")
FORMAT_SUFFIX = {"text": ".txt", "csv": ".csv", "json": ".json", "parquet": ".parquet", "orc": ".orc", "xml": ".xml",
                 "binary": "", "excel": ".xlsx"}
#: the lzop codec (``.lzo`` files) of aircompressor, which Spark ships: a Hadoop codec in pure Java
LZOP_CODEC = "io.airlift.compress.lzo.LzopCodec"
LINE_CODECS = {"none": ("none", ""), "gzip": ("gzip", ".gz"), "bzip2": ("bzip2", ".bz2"),
               "deflate": ("deflate", ".deflate"), "lz4": ("lz4", ".lz4"), "snappy": ("snappy", ".snappy"),
               "lzo": (LZOP_CODEC, ".lzo")}
#: format -> compress_codec -> (Spark's compression name, file name suffix)
CODECS = {
    "text": LINE_CODECS, "csv": LINE_CODECS, "json": LINE_CODECS, "xml": LINE_CODECS, "binary": {"none": ("none", "")},
    "parquet": {"none": ("none", ""), "snappy": ("snappy", ".snappy"), "lz4": ("lz4", ".lz4"),
                "lz4_raw": ("lz4_raw", ".lz4raw"), "gzip": ("gzip", ".gz"), "zstd": ("zstd", ".zstd")},
    "orc": {"none": ("none", ""), "snappy": ("snappy", ".snappy"), "lz4": ("lz4", ".lz4"),
            "zlib": ("zlib", ".zlib"), "lzo": ("lzo", ".lzo"), "zstd": ("zstd", ".zstd")},
}
#: SeaTunnel's codecs that a format here lacks (not runnable, rather than unknown)
UNAVAILABLE_CODECS = {"lzo", "brotli"}
#: excel: every codec name is accepted and none applies (workbooks are zip files already)
CODECS["excel"] = {name: ("none", "") for name in sorted({*(c for f in CODECS.values() for c in f),
                                                          *UNAVAILABLE_CODECS})}

SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")

STAGING_DIR = ".seatunnel-staging"
COMMITS_DIR = ".seatunnel-commits"
BOOKKEEPING = (STAGING_DIR, COMMITS_DIR)
#: under COMMITS_DIR: the journals of commits in progress (a name no run id can take: ``_safe`` never starts with '.')
PENDING_DIR = ".pending"
#: under COMMITS_DIR: what a commit's drop set aside until the commit is recorded
TRASH_DIR = ".trash"
DEFAULT_DELIMITER = "\u0001"
DEFAULT_FILE_NAME = "${transactionId}"
#: the separators of nested values in text, after the field delimiter (arrays, maps, rows)
NESTED_SEPARATORS = ("\u0002", "\u0003", "\u0004", "\u0005", "\u0006")
PART = "__st_part_"  # the staging's partition columns: __st_part_0, __st_part_1...
LINE = "__st_line"
FILE = "__st_file"


def written(options: Mapping[str, Any], key: str) -> Any:
    """``key``'s value as the block wrote it, None when unset or null. Only for what must see a value
    before (or without) the spec typing it: compile-time checks and assets report or skip a wrong value
    where :meth:`OptionSpec.run_time` would raise, and :func:`format_of`/:func:`target_path` give their
    own messages. A task's options come from ``<spec>.run_time(config, section)``."""
    value = lookup(options, key)
    return None if value is MISSING else value


def config_error(message: str) -> RuntimeConfigError:
    return RuntimeConfigError(message)


def format_of(config: Mapping[str, Any]) -> str:
    fmt = written(config, "file_format_type")
    if fmt is None:
        raise config_error(f"file_format_type is required ({', '.join(FORMATS)})")
    fmt = str(fmt).strip().lower()
    if fmt not in FORMATS:
        raise config_error(f"unsupported file_format_type {fmt!r}: use one of {', '.join(FORMATS)}")
    return fmt


def is_utf8(encoding: str) -> bool:
    return re.sub(r"[-_\s]", "", encoding).lower() == "utf8"


#: the charsets Spark's readers, writers and encode()/decode() accept by default; the others
#: (GBK, Big5, windows-1252...) only with ``spark.sql.legacy.javaCharsets``
SPARK_CHARSETS = ("iso88591", "usascii", "utf16", "utf16be", "utf16le", "utf32", "utf8")
JAVA_CHARSETS_CONF = "spark.sql.legacy.javaCharsets"


def needs_java_charsets(encoding: str) -> bool:
    return re.sub(r"[-_\s]", "", encoding).lower() not in SPARK_CHARSETS


def ascii_compatible(encoding: str, *texts: str) -> bool:
    """Whether ``encoding`` writes ASCII (and ``texts``: the delimiters) as UTF-8 does, byte for byte:
    a line transcoded alone then reads back as a line of the file (GBK, ISO-8859-1; not UTF-16)."""
    sample = "".join(texts) + "".join(chr(c) for c in range(32, 127)) + "\n"
    try:
        return sample.encode(encoding) == sample.encode("utf-8")
    except (LookupError, UnicodeError):
        return False


def java_regex_literal(text: str) -> str:
    """``text`` as a Java regex matching it literally (non-alphanumeric ASCII escaped)."""
    return "".join("\\" + c if ord(c) < 128 and not c.isalnum() else c for c in text)


def safe(text: str) -> str:
    """A file-name-safe form of ``text`` (a short hash keeps distinct inputs distinct)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", text)
    if cleaned != text or not cleaned or cleaned.startswith("."):
        cleaned = f"{cleaned.lstrip('.') or 'x'}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"
    return cleaned


def target_path(config: Mapping[str, Any]) -> str:
    """``path`` as an absolute local path (``file://`` dropped, ``~`` expanded)."""
    path = written(config, "path")
    if path is None or not str(path).strip():
        raise config_error("path is required")
    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    return os.path.abspath(os.path.expanduser(path))
