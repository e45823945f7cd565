"""LocalFile: text, csv, json, parquet and orc files on a local (or shared) file system.

**Source** (``read``). ``path`` is a file or a directory walked recursively; empty files,
names starting with ``.`` or ``_`` (``_SUCCESS`` included) and directories starting with
``.`` (or ``_`` without a ``=``) are skipped. Text lines are read by Spark and split with
native functions (the ``field_delimiter`` is a regex, as in SeaTunnel); blank text/csv
fields become null; values are cast to the ``schema`` types (dates and timestamps in the
auto-detected SeaTunnel formats). csv goes through Spark's csv parser, json through
Spark's json reader (scalars read as text and converted like SeaTunnel's converter),
parquet and orc keep their own schema. ``k=v`` directories in a file's path become string
columns (``parse_partition_from_path``, default true). Partitions: Spark's file splits
decide them, unless the plugin block itself sets ``parallelism`` (then the rows are
repartitioned to it). Files are read whole (one task per file) when
``skip_header_row_number`` needs line numbers or a text file is not UTF-8.

**Sink** (``prepare``/``commit``/``abort``), a two-phase commit keyed by run id, pipeline
key, sink and table (engine notes §3.6):

* ``prepare`` runs the save modes (:func:`handle_save_mode`, once per run, sink and target:
  a marker keeps retries and split clones from running them again; a once-per-run
  ``prepare`` task will call the same function), then one Spark write into
  ``<path>/.seatunnel-staging/<run>/<pipeline>/<sink>/<table>/attempt-<n>/data``, or under
  ``<tmp_path>/seatunnel-staging/`` when ``tmp_path`` is set (staging on another file system
  is published by a copy to a hidden temporary name, then an atomic rename). The staging
  directory is hidden: Spark and this source skip dot-directories. It returns the staged
  files with their final names, ``<file_name_expression>_<part>`` plus the suffixes
  (``.txt.gz``, ``.csv``, ``.snappy.parquet``...), ``<part>`` counting from 0 per directory
  and ``${transactionId}`` = ``T_<pipeline>_<run>_<sink>_<attempt>``: split clones of one
  sink (several pipelines writing one path) never collide.
* ``commit`` is roll-forward: it first writes the commit journal (JSON, atomically)
  ``<path>/.seatunnel-commits/.pending/<key>.json`` naming every move (staged file → final
  file), then renames every file into place (creating partition directories; each rename is
  atomic, so no reader ever sees a partly written file), then records the commit by renaming
  the journal to the marker ``<path>/.seatunnel-commits/<run>/<pipeline>/<sink>/<table>.committed``
  (one atomic step), then deletes the staging. The journal and the marker live with the
  target, not with the staging: a retry on another machine whose ``tmp_path`` staging is
  gone still finds them.
* At ``prepare``, before anything is written, earlier attempts of the same (run, pipeline,
  sink, table) are settled: a marker means it already committed, and the sink writes nothing
  (a retry after a commit is a no-op; the rows still pass once through Spark's ``noop`` sink,
  since the executor's counters wait for an action). A journal without a marker is a commit
  that stopped half way (a killed driver): its remaining moves are finished idempotently
  (a move whose staged file is gone and whose final file exists is done) and the commit is
  recorded; nothing is rewritten. Should that be impossible (the staged files are lost), the
  files the journal published are deleted and the data is written afresh. Staging without a
  journal (a write or a prepare that never reached its commit) is discarded.
* ``abort`` (a failure the driver survived) deletes the attempt's staging; if a commit had
  started (journal, no marker), the files it moved are moved back first, then the journal is
  removed. An abort that is itself killed leaves the journal: the retry rolls forward.
* Readers: the source skips the files named by a pending journal of the target it reads
  (listing the journals before and after the files), so it never sees a commit that is in
  progress or was interrupted; other readers see its files appear one by one while it runs
  (a few renames) and, after a kill, until the retry finishes it.
* Fault injection (``runtime/faults.py``, only with ``SEATUNNEL_FAULTS`` set): the write
  carries the ``sink.write`` fault, ``commit`` fires ``sink.move`` before each rename and
  ``sink.commit`` between the last rename and the marker.

**STREAMING** (:func:`read_stream`, :func:`retire`; docs/streaming.md): ``path`` is read as a file
stream (new files each micro-batch); the sink writes each micro-batch with ``prepare``/``commit``
above, the run id naming the batch.

Deviations from SeaTunnel are listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..spi import (
    SINK,
    SOURCE,
    BatchSource,
    Connector,
    Dataset,
    InsertOnly,
    Lineage,
    RetiresCommits,
    RunContext,
    SaveModes,
    SchemaInference,
    StreamingSource,
    TwoPhaseSink,
    Vertex,
)
from ..spi.options import MISSING, as_bool, as_int, as_list, checked_bool, checked_int, lookup
from ..spi.schema import DataType, Schema, schema_from_options

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem

log = logging.getLogger("seatunnel.localfile")

DEVIATIONS = """\
* Text output ends every row with row_delimiter, the last one included (Spark's text writer);
  SeaTunnel writes it only between rows.
* A compressed text/csv/json file is named x_0.txt.gz (the codec's extension last, so that Spark
  and Hadoop readers decompress it); SeaTunnel names it x_0.gz.txt. parquet/orc: x_0.snappy.parquet.
* csv output is quoted where needed (RFC 4180, quotes doubled); SeaTunnel writes it unquoted.
* enable_header_write writes the names of the columns actually written; SeaTunnel writes all
  input field names even when sink_columns or partitioning removes some.
* compress_codec: lzo is not available in Spark for text/csv/json/parquet, nor brotli for
  parquet/orc (compile-time errors); beyond SeaTunnel, text/csv/json accept gzip, bzip2,
  deflate, lz4 and snappy, parquet lz4_raw, orc zstd. Reading detects codecs by extension.
* Text output in an encoding other than UTF-8 goes through Spark's csv writer (Spark's text
  writer is UTF-8 only): a line containing a line break is wrapped in NUL characters.
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
"""

FORMATS = ("text", "csv", "json", "parquet", "orc")
#: csv columns of these types are read by Spark's own parser, typed (see ``_read_files``)
_CSV_NATIVE = ("string", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal")
_SEATUNNEL_ONLY_FORMATS = ("excel", "xml", "binary")
FORMAT_SUFFIX = {"text": ".txt", "csv": ".csv", "json": ".json", "parquet": ".parquet", "orc": ".orc"}
_LINE_CODECS = {"none": ("none", ""), "gzip": ("gzip", ".gz"), "bzip2": ("bzip2", ".bz2"),
                "deflate": ("deflate", ".deflate"), "lz4": ("lz4", ".lz4"), "snappy": ("snappy", ".snappy")}
#: format -> compress_codec -> (Spark's compression name, file name suffix)
CODECS = {
    "text": _LINE_CODECS, "csv": _LINE_CODECS, "json": _LINE_CODECS,
    "parquet": {"none": ("none", ""), "snappy": ("snappy", ".snappy"), "lz4": ("lz4", ".lz4"),
                "lz4_raw": ("lz4_raw", ".lz4raw"), "gzip": ("gzip", ".gz"), "zstd": ("zstd", ".zstd")},
    "orc": {"none": ("none", ""), "snappy": ("snappy", ".snappy"), "lz4": ("lz4", ".lz4"),
            "zlib": ("zlib", ".zlib"), "lzo": ("lzo", ".lzo"), "zstd": ("zstd", ".zstd")},
}
_UNAVAILABLE_CODECS = {"lzo", "brotli"}

SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")

STAGING_DIR = ".seatunnel-staging"
COMMITS_DIR = ".seatunnel-commits"
BOOKKEEPING = (STAGING_DIR, COMMITS_DIR)
#: under COMMITS_DIR: the journals of commits in progress (a name no run id can take: ``_safe`` never starts with '.')
PENDING_DIR = ".pending"
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
DEFAULT_DELIMITER = "\u0001"
DEFAULT_FILE_NAME = "${transactionId}"
_PART = "__st_part_"
_LINE = "__st_line"
_FILE = "__st_file"

_DATE_FORMATS = ("yyyy-MM-dd", "yyyy/MM/dd", "yyyy.MM.dd", "yyyyMMdd")
_TIMESTAMP_FORMATS = ("yyyy-MM-dd HH:mm:ss[.SSSSSSSSS]", "yyyy-MM-dd'T'HH:mm:ss[.SSSSSSSSS]",
                      "yyyy/MM/dd HH:mm:ss[.SSSSSSSSS]", "yyyy.MM.dd HH:mm:ss[.SSSSSSSSS]",
                      "yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm", "yyyyMMddHHmmss", "yyyyMMdd HH:mm:ss")
_TIME_FORMATS = ("HH:mm:ss[.SSSSSSSSS]", "HH:mm")


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

def _opt(config: Mapping[str, Any], key: str, default: Any = None, *fallbacks: str) -> Any:
    for name in (key, *fallbacks):
        value = lookup(config, name)
        if value is not MISSING and value is not None:
            return value
    return default


def _flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    return checked_bool(_opt(config, key), key, default, _config_error)


def _count(config: Mapping[str, Any], key: str, default: int, minimum: int) -> int:
    return checked_int(_opt(config, key), key, default, minimum, _config_error)


def _config_error(message: str) -> Exception:
    from ..spi.errors import RuntimeConfigError

    return RuntimeConfigError(message)


def _format_of(config: Mapping[str, Any]) -> str:
    fmt = _opt(config, "file_format_type")
    if fmt is None:
        raise _config_error("file_format_type is required (text, csv, json, parquet or orc)")
    fmt = str(fmt).strip().lower()
    if fmt not in FORMATS:
        raise _config_error(f"unsupported file_format_type {fmt!r}: use one of {', '.join(FORMATS)}")
    return fmt


def _is_utf8(encoding: str) -> bool:
    return re.sub(r"[-_\s]", "", encoding).lower() == "utf8"


def _java_regex_literal(text: str) -> str:
    """``text`` as a Java regex matching it literally (non-alphanumeric ASCII escaped)."""
    return "".join("\\" + c if ord(c) < 128 and not c.isalnum() else c for c in text)


def _safe(text: str) -> str:
    """A file-name-safe form of ``text`` (a short hash keeps distinct inputs distinct)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", text)
    if cleaned != text or not cleaned or cleaned.startswith("."):
        cleaned = f"{cleaned.lstrip('.') or 'x'}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"
    return cleaned


# ---------------------------------------------------------------------------------------------
# Table placeholders (§9): ${database_name}, ${table_name}, ... expanded per table
# ---------------------------------------------------------------------------------------------

_TABLE_PLACEHOLDER = re.compile(r"\$\{(database_name|schema_name|table_name|schema_full_name|table_full_name|"
                                r"field_names)(?::([^}]*))?\}")


def table_parts(table_key: str) -> tuple[str | None, str | None, str]:
    """(database, schema, table) of a table id: ``t``, ``db.t`` or ``db.schema.t``."""
    parts = str(table_key).split(".")
    if len(parts) == 1:
        return None, None, parts[0]
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], ".".join(parts[1:-1]), parts[-1]


def expand_table_placeholders(text: str, table_key: str, field_names: list[str] | None = None) -> str:
    """``text`` with the table placeholders of ``table_key`` replaced (``${table_name:default}`` too)."""
    database, schema, table = table_parts(table_key)
    known = [p for p in (database, schema) if p]
    values: dict[str, str | None] = {
        "database_name": database, "schema_name": schema, "table_name": table,
        "schema_full_name": ".".join(known) if known else None,
        "table_full_name": ".".join([*known, table]),
        "field_names": ",".join(field_names) if field_names is not None else None,
    }

    def sub(m: re.Match) -> str:
        value = values[m.group(1)]
        if m.group(1) == "field_names" and value is None:
            return m.group(0)
        if value:
            return value
        return m.group(2).strip() if m.group(2) is not None else ""

    return _TABLE_PLACEHOLDER.sub(sub, text)


def _table_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None = None) -> dict:
    """The sink's options for one table: top-level strings with table placeholders expanded."""
    return {k: expand_table_placeholders(v, table_key, field_names) if isinstance(v, str) else v
            for k, v in config.items()}


def _target_path(config: Mapping[str, Any]) -> str:
    path = _opt(config, "path")
    if path is None or not str(path).strip():
        raise _config_error("path is required")
    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    return os.path.abspath(os.path.expanduser(path))


# ---------------------------------------------------------------------------------------------
# Java date-time patterns (filename_time_format)
# ---------------------------------------------------------------------------------------------

_JAVA_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)
_JAVA_LETTERS = set("yuMLdDHkKhmsSaEn")


def java_pattern_problem(pattern: str) -> str | None:
    """Why a Java DateTimeFormatter pattern cannot be rendered here, or None."""
    for m in _JAVA_TOKEN.finditer(pattern):
        token = m.group(0)
        if token[0].isalpha() and token[0] not in _JAVA_LETTERS:
            return f"unsupported pattern letter {token[0]!r} in {pattern!r}"
        if token.startswith("'") and (len(token) < 2 or not token.endswith("'")):
            return f"unterminated quote in {pattern!r}"
    return None


def format_java_datetime(pattern: str, moment: datetime) -> str:
    """``moment`` rendered with a Java DateTimeFormatter pattern (``yyyy.MM.dd`` → ``2024.01.31``).

    Letters are translated to their Python ``strftime`` meaning (y→%Y, MM→%m, dd→%d, HH→%H,
    mm→%M, ss→%S, ...); fractions (S), unpadded numbers and quoted literals are rendered directly.
    """
    out = []
    for m in _JAVA_TOKEN.finditer(pattern):
        token = m.group(0)
        letter, n = token[0], len(token)
        if token.startswith("'"):
            out.append(token[1:-1].replace("''", "'") if n > 1 else "'")
        elif not letter.isalpha():
            out.append(token)
        elif letter in "yu":
            out.append(moment.strftime("%y") if n == 2 else str(moment.year).zfill(n))
        elif letter in "ML":
            out.append(moment.strftime("%B") if n >= 4 else moment.strftime("%b") if n == 3
                       else str(moment.month).zfill(n))
        elif letter == "d":
            out.append(str(moment.day).zfill(n))
        elif letter == "D":
            out.append(str(moment.timetuple().tm_yday).zfill(n))
        elif letter == "H":
            out.append(str(moment.hour).zfill(n))
        elif letter == "k":
            out.append(str(moment.hour or 24).zfill(n))
        elif letter == "K":
            out.append(str(moment.hour % 12).zfill(n))
        elif letter == "h":
            out.append(str(moment.hour % 12 or 12).zfill(n))
        elif letter == "m":
            out.append(str(moment.minute).zfill(n))
        elif letter == "s":
            out.append(str(moment.second).zfill(n))
        elif letter == "S":
            out.append(f"{moment.microsecond:06d}000"[:n].ljust(n, "0"))
        elif letter == "n":
            out.append(str(moment.microsecond * 1000).zfill(n))
        elif letter == "a":
            out.append(moment.strftime("%p"))
        elif letter == "E":
            out.append(moment.strftime("%A") if n >= 4 else moment.strftime("%a"))
        else:
            raise ValueError(f"unsupported pattern letter {letter!r} in {pattern!r}")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Source
# ---------------------------------------------------------------------------------------------

def _table_id(config: Mapping[str, Any], output: str | None) -> str:
    schema = _opt(config, "schema")
    if isinstance(schema, Mapping) and schema.get("table"):
        return str(schema["table"])
    return output or "default"


def list_input_files(config: Mapping[str, Any]) -> list[str]:
    """The files the source reads, sorted: recursive, without empty, hidden and filtered-out files."""
    root = _target_path(config)
    if not os.path.exists(root):
        raise _config_error(f"path {root} does not exist")
    pattern_text = _opt(config, "file_filter_pattern")
    try:
        pattern = re.compile(str(pattern_text)) if pattern_text is not None else None
    except re.error as e:
        raise _config_error(f"file_filter_pattern {pattern_text!r} is not a valid regex: {e}") from None
    partitions = [str(p) for p in as_list(_opt(config, "read_partitions"))]

    def keep(full: str) -> bool:
        name = os.path.basename(full)
        if name.startswith((".", "_")):
            return False
        if pattern is not None and not pattern.fullmatch(name):
            return False
        if partitions and not any(p in full for p in partitions):
            return False
        return os.path.getsize(full) > 0

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
    """The final files named by the journals of commits not yet recorded."""
    out: set[str] = set()
    if journals is None or not os.path.isdir(journals):
        return out
    for name in os.listdir(journals):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(journals, name), encoding="utf-8") as fh:
                out.update(dst for _, dst in json.load(fh).get("moves", ()))
        except (OSError, ValueError):  # recorded (renamed to its marker) meanwhile, or being written
            continue
    return out


def partition_keys(file_path: str) -> list[str]:
    """``k`` of every ``k=v`` directory of ``file_path``, in path order (a repeated key once)."""
    keys: list[str] = []
    for segment in os.path.dirname(file_path).split("/"):
        if "=" in segment:
            key = segment.split("=", 1)[0]
            if key not in keys:
                keys.append(key)
    return keys


def _plain_path(column: Any, encoded: bool) -> Any:
    """A file path column as a plain absolute path (Spark's ``_metadata.file_path`` is a URI)."""
    from pyspark.sql import functions as F

    if encoded:  # '+' is literal in a Hadoop URI; url_decode would turn it into a space
        column = F.url_decode(F.replace(column, F.lit("+"), F.lit("%2B")))
    return F.regexp_replace(column, r"^file:(//)?", "")


_WHITESPACE = " \t\n\r\f\u000b"


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


def _parse_value(column: Any, dtype: DataType, level: int, how: Mapping[str, Any]) -> Any:
    """A string column converted to ``dtype`` as SeaTunnel's text/json converters do.

    ``how``: ``blank_null`` (blank text → null), ``bytes`` ("utf8" or "base64"),
    ``separators`` (field delimiter, then \\u0002, \\u0003... for nested levels),
    ``date``/``datetime``/``time`` (the configured format, tried before the auto-detected ones).
    """
    from pyspark.sql import functions as F

    if how["blank_null"]:
        column = _blank_to_null(column)
    name = dtype.name
    seps = how["separators"]
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
    if name == "date":
        formats = [how["date"], *_DATE_FORMATS]
        parsed = F.coalesce(*[F.try_to_date(column, f) for f in dict.fromkeys(formats)])
        return _parse_failed(column, parsed, "a date")
    if name == "timestamp":
        formats = [how["datetime"], *_TIMESTAMP_FORMATS]
        parsed = F.coalesce(*[F.try_to_timestamp(column, F.lit(f)) for f in dict.fromkeys(formats)])
        return _parse_failed(column, parsed.cast("timestamp_ntz"), "a timestamp")
    if name == "time":
        formats = [how["time"], *_TIME_FORMATS]
        parsed = F.coalesce(*[F.try_to_time(column, F.lit(f)) for f in dict.fromkeys(formats)])
        return _parse_failed(column, parsed.cast(dtype.to_spark()), "a time")
    sep1 = seps[level + 1] if level + 1 < len(seps) else chr(2 + level)
    sep2 = seps[level + 2] if level + 2 < len(seps) else chr(3 + level)
    if name == "array":
        parsed = F.transform(F.split(column, _java_regex_literal(sep1), -1),
                             lambda x: _parse_value(x, dtype.element, level + 1, how))
    elif name == "map":
        def entry(e: Any) -> Any:
            kv = F.split(e, _java_regex_literal(sep2), 2)
            return F.struct(_parse_value(F.get(kv, 0), dtype.key, level + 2, how).alias("key"),
                            _parse_value(F.get(kv, 1), dtype.element, level + 2, how).alias("value"))
        parsed = F.map_from_entries(F.transform(F.split(column, _java_regex_literal(sep1), -1), entry))
    elif name == "row":
        parts = F.split(column, _java_regex_literal(sep1), -1)
        parsed = F.struct(*[_parse_value(F.get(parts, i), f.type, level + 1, how).alias(f.name)
                            for i, f in enumerate(dtype.fields)])
    else:
        raise _config_error(f"type {dtype} cannot be read from text")
    return F.when(column.isNull(), F.lit(None).cast(dtype.to_spark())).otherwise(parsed)


def _lines_whole_files(spark: Any, files: list[str], encoding: str, row_delimiter: str | None,
                       skip: int) -> Any:
    """One row per line (``__st_line``, ``__st_file``), reading each file whole: line numbers
    per file (for ``skip_header_row_number``) and any charset Spark's ``decode`` knows."""
    from pyspark.sql import functions as F

    raw = spark.read.format("binaryFile").load(files)
    text = F.decode(F.col("content"), encoding)
    splitter = _java_regex_literal(row_delimiter) if row_delimiter else r"\r\n|\r|\n"
    lines = raw.select(_plain_path(F.col("path"), encoded=False).alias(_FILE),
                       F.posexplode(F.split(text, splitter, -1)).alias("pos", _LINE),
                       F.size(F.split(text, splitter, -1)).alias("n"))
    # the text after a final line terminator is not a line
    lines = lines.where((F.col("pos") >= skip) & ~((F.col("pos") == F.col("n") - 1) & (F.col(_LINE) == "")))
    return lines.select(_LINE, _FILE)


def _read_files(ctx: Any, config: Mapping[str, Any], files: list[str], with_file: bool = True) -> Any:
    """The rows of ``files`` with the schema's columns (all of them), plus ``__st_file`` (each
    row's file) when ``with_file``: reading the file metadata costs every row, so only
    partitioned paths ask for it."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    # reading the file path costs every row (and, planning in a cold JVM, time): only when wanted
    file_col = [_plain_path(F.col("_metadata.file_path"), encoded=True).alias(_FILE)] if with_file else []
    carry_file = [F.col(_FILE)] if with_file else []

    spark = ctx.spark
    fmt = _format_of(config)
    encoding = str(_opt(config, "encoding", "UTF-8"))
    row_delimiter = _opt(config, "row_delimiter")
    row_delimiter = str(row_delimiter) if row_delimiter not in (None, "") else None
    skip = _count(config, "skip_header_row_number", 0, 0) if fmt in ("text", "csv") else 0
    codec = str(_opt(config, "compress_codec", "none")).lower()
    if codec in _UNAVAILABLE_CODECS and fmt in ("text", "csv", "json"):  # others: detected by extension
        raise _config_error(f"compress_codec {codec} is not available in Spark")

    if fmt in ("parquet", "orc"):
        if not files:
            raise _config_error(f"no {fmt} files to read under {_target_path(config)}: the schema comes from them")
        df = spark.read.format(fmt).load(files)
        df = df.select(*[F.col(f"`{c}`").cast(T.TimestampNTZType()).alias(c)
                         if isinstance(df.schema[c].dataType, T.TimestampType) else F.col(f"`{c}`")
                         for c in df.columns],
                       *file_col)
        return df

    schema = schema_from_options(config)
    if schema is None:
        raise _config_error(f"schema is required to read {fmt} files")
    how = {"blank_null": fmt != "json", "bytes": "base64" if fmt == "json" else "utf8",
           "date": str(_opt(config, "date_format", "yyyy-MM-dd")),
           "datetime": str(_opt(config, "datetime_format", "yyyy-MM-dd HH:mm:ss")),
           "time": str(_opt(config, "time_format", "HH:mm:ss"))}
    if not files:
        empty = T.StructType([*schema.to_spark().fields, T.StructField(_FILE, T.StringType())])
        return spark.createDataFrame([], empty)

    if fmt == "text":
        delimiter = str(_opt(config, "field_delimiter", DEFAULT_DELIMITER, "delimiter"))
        how = {**how, "separators": [delimiter, "\u0002", "\u0003", "\u0004", "\u0005", "\u0006"]}
        if skip or not _is_utf8(encoding):
            lines = _lines_whole_files(spark, files, encoding, row_delimiter, skip)
        else:
            reader = spark.read.format("text")
            if row_delimiter:
                reader = reader.option("lineSep", row_delimiter)
            lines = reader.load(files).select(F.col("value").alias(_LINE),
                                              *file_col)
        parts = F.split(F.col(_LINE), delimiter, -1)
        return lines.select(*[_parse_value(F.get(parts, i), f.type, 0, how).alias(f.name)
                              for i, f in enumerate(schema.fields)], *carry_file)

    if fmt == "csv":
        delimiter = str(_opt(config, "field_delimiter", ",", "delimiter"))
        how = {**how, "separators": [delimiter, "\u0002", "\u0003", "\u0004", "\u0005", "\u0006"]}
        as_text = T.StructType([T.StructField(f.name, T.StringType()) for f in schema.fields])
        options = {"sep": delimiter, "quote": '"', "escape": '"', "mode": "PERMISSIVE"}
        if skip <= 1 and all(f.type.name in _CSV_NATIVE for f in schema.fields):
            # Fast path: Spark parses these types as SeaTunnel does (an empty field is null, a
            # value that does not parse fails the job); only blank strings need a look.
            reader = (spark.read.format("csv").schema(schema.to_spark()).options(**{**options, "mode": "FAILFAST"})
                      .option("encoding", encoding).option("header", "true" if skip == 1 else "false"))
            if row_delimiter:
                reader = reader.option("lineSep", row_delimiter)
            loaded = reader.load(files)
            return loaded.select(*[(_blank_to_null(F.col(f"`{f.name}`")) if f.type.name == "string"
                                    else F.col(f"`{f.name}`")).alias(f.name) for f in schema.fields],
                                 *file_col)
        if skip > 1:
            lines = _lines_whole_files(spark, files, encoding, row_delimiter, skip)
            ddl = ", ".join("`" + f.name.replace("`", "``") + "` STRING" for f in schema.fields)
            parsed = F.from_csv(F.col(_LINE), ddl, options)
            rows = lines.select(parsed.alias("r"), *carry_file)
            raw = rows.select(*[F.col("r").getField(f.name).alias(f.name) for f in schema.fields], *carry_file)
        else:
            reader = spark.read.format("csv").schema(as_text).options(**options).option("encoding", encoding)
            reader = reader.option("header", "true" if skip == 1 else "false")
            if row_delimiter:
                reader = reader.option("lineSep", row_delimiter)
            loaded = reader.load(files)
            raw = loaded.select(*[F.col(f"`{f.name}`") for f in schema.fields],
                                *file_col)
        return raw.select(*[_parse_value(F.col(f"`{f.name}`"), f.type, 0, how).alias(f.name)
                            for f in schema.fields], *carry_file)

    # json: scalars are read as their JSON text and converted like SeaTunnel's converter
    nested = ("array", "map", "row")
    how = {**how, "separators": [",", "\u0002", "\u0003"]}
    read_schema = T.StructType([T.StructField(f.name, f.type.to_spark() if f.type.name in nested else T.StringType())
                                for f in schema.fields])
    reader = spark.read.format("json").schema(read_schema).option("mode", "FAILFAST")
    if not _is_utf8(encoding):
        reader = reader.option("encoding", encoding)
    if row_delimiter:
        reader = reader.option("lineSep", row_delimiter)
    loaded = reader.load(files)
    return loaded.select(*[(F.col(f"`{f.name}`") if f.type.name in nested
                            else _parse_value(F.col(f"`{f.name}`"), f.type, 0, how)).alias(f.name)
                           for f in schema.fields],
                         *file_col)


def _read_columns(config: Mapping[str, Any], available: list[str]) -> list[str]:
    """The columns ``read_columns`` names (matched exactly, else case-insensitively), in its order;
    all of ``available`` when it is unset."""
    wanted = [str(c) for c in as_list(_opt(config, "read_columns"))]
    if not wanted:
        return available
    by_lower = {c.lower(): c for c in reversed(available)}  # the first of equal names, as a scan finds it
    chosen = []
    for name in wanted:
        match = name if name in available else by_lower.get(name.lower())
        if match is None:
            close = difflib.get_close_matches(name, available, n=1)
            raise _config_error(f"read_columns names '{name}', which is not a field of the files"
                                + (f"; did you mean '{close[0]}'?" if close else ""))
        chosen.append(match)
    return chosen


def _read_table(ctx: Any, config: Mapping[str, Any], output: str | None) -> tuple[str, Any]:
    from pyspark.sql import functions as F

    from ..spi.rows import with_kind

    files = list_input_files(config)
    keys = partition_keys(files[0]) if files and _flag(config, "parse_partition_from_path", True) else []
    df = _read_files(ctx, config, files, with_file=bool(keys))
    available = [c for c in df.columns if c != _FILE]
    data_columns = _read_columns(config, available)
    if not keys and data_columns == available and len(available) == len(df.columns):
        return _table_id(config, output), with_kind(df)  # the files' columns as they are: no projection
    columns = [F.col(f"`{c}`") for c in data_columns]
    if keys:
        path = F.col(_FILE)
        for key in keys:
            if key in data_columns:
                raise _config_error(f"the partition directory '{key}=...' clashes with the field '{key}'; "
                                    "rename one, or set parse_partition_from_path = false")
            pattern = "^.*/" + _java_regex_literal(key) + "=([^/]*)/"
            value = F.replace(F.regexp_extract(path, pattern, 1), F.lit("%3A"), F.lit(":"))  # as the sink escapes
            columns.append(F.when(path.rlike(pattern), value).alias(key))
    return _table_id(config, output), with_kind(df.select(*columns))


def _tables(ctx: Any, vertex: Any, read_one: Any) -> dict[str, Any]:
    """``{table id: DataFrame}`` of ``path`` or of each ``tables_configs`` item, read by ``read_one``
    (batch or stream), repartitioned to the block's own ``parallelism`` when it sets one."""
    configs = lookup(vertex.config, "tables_configs")
    items = configs if isinstance(configs, list) and configs else [vertex.config]
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping):
            raise _config_error("each tables_configs item must be a block of LocalFile options")
        table, df = read_one(ctx, item, vertex.output if item is vertex.config else None)
        if table in out:
            raise _config_error(f"two tables_configs items read the table '{table}': give each its own "
                                "schema.table")
        out[table] = df
    own = as_int(lookup(vertex.config, "parallelism"))
    if own:
        out = {t: df.repartition(own) for t, df in out.items()}
    return out


def read(ctx: Any, vertex: Any) -> dict[str, Any]:
    """The files under ``path`` (or each ``tables_configs`` item) as ``{table id: DataFrame}``."""
    return _tables(ctx, vertex, _read_table)


# ---------------------------------------------------------------------------------------------
# Save modes (§8): the file catalog
# ---------------------------------------------------------------------------------------------

def _mode(config: Mapping[str, Any], key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = str(_opt(config, key, default)).strip().upper()
    if value not in allowed:
        raise _config_error(f"unknown {key} {value!r}: use one of {', '.join(allowed)}")
    return value


def _clear_dir(path: str) -> None:
    """Delete everything under ``path`` but this sink's bookkeeping (staging, commit markers)."""
    for name in os.listdir(path):
        if name in BOOKKEEPING:
            continue
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        else:
            os.remove(full)


def handle_save_mode(vertex_config: Mapping[str, Any], table_key: str) -> list[str]:
    """Apply ``schema_save_mode`` then ``data_save_mode`` to the table's target directory.

    The file catalog: the table exists when ``path`` is a directory; create = mkdir; drop
    and truncate delete its content (keeping the hidden staging and commit bookkeeping);
    data exists when a file lies directly under ``path``. Returns what was done.
    Raises RuntimeConfigError for ERROR_WHEN_SCHEMA_NOT_EXIST / ERROR_WHEN_DATA_EXISTS.
    """
    config = _table_config(vertex_config, table_key)
    path = _target_path(config)
    schema_mode = _mode(config, "schema_save_mode", "CREATE_SCHEMA_WHEN_NOT_EXIST", SCHEMA_SAVE_MODES)
    data_mode = _mode(config, "data_save_mode", "APPEND_DATA", DATA_SAVE_MODES)
    if os.path.exists(path) and not os.path.isdir(path):
        raise _config_error(f"the sink path {path} is a file, not a directory")
    done: list[str] = []
    exists = os.path.isdir(path)
    if schema_mode == "RECREATE_SCHEMA":
        if exists:
            _clear_dir(path)
            done.append(f"dropped {path}")
        os.makedirs(path, exist_ok=True)
        done.append(f"created {path}")
    elif schema_mode == "CREATE_SCHEMA_WHEN_NOT_EXIST":
        if not exists:
            os.makedirs(path, exist_ok=True)
            done.append(f"created {path}")
    elif schema_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise _config_error(f"The sink table not exist: {path} (schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST)")
    exists = os.path.isdir(path)
    if data_mode == "DROP_DATA":
        if exists:
            _clear_dir(path)
            done.append(f"truncated {path}")
    elif data_mode == "ERROR_WHEN_DATA_EXISTS":
        if exists and any(e.is_file() for e in os.scandir(path)):
            raise _config_error(f"The target data source already has data: {path} "
                                "(data_save_mode = ERROR_WHEN_DATA_EXISTS)")
    elif data_mode == "CUSTOM_PROCESSING":
        raise _config_error("data_save_mode CUSTOM_PROCESSING is not supported by file sinks")
    return done


# ---------------------------------------------------------------------------------------------
# Sink: staging, commit, abort
# ---------------------------------------------------------------------------------------------

def _write_json_atomic(path: str, payload: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _move(src: str, dst: str) -> None:
    """Publish ``src`` as ``dst`` atomically (an existing ``dst`` is replaced, as SeaTunnel does)."""
    _rename(src, dst)


def _rename(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.replace(src, dst)
    except OSError as e:
        if e.errno != 18:  # EXDEV: staging on another file system
            raise
        tmp = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.{uuid.uuid4().hex[:8]}.copying")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        os.remove(src)


def _can_roll_forward(moves: list[list[str]]) -> bool:
    """Every move is done (final file there, staged file gone) or can still be done (staged file there)."""
    return all(os.path.exists(src) or os.path.exists(dst) for src, dst in moves)


def _apply_moves(moves: list[list[str]]) -> int:
    """Finish the moves of a journal, skipping those already done; the number moved now."""
    moved = 0
    for src, dst in moves:
        if os.path.exists(src):
            _move(src, dst)
            moved += 1
        elif not os.path.exists(dst):
            raise _config_error(f"staged file {src} is missing and {dst} was never published")
    return moved


def _drop_copy_leftovers(moves: list[list[str]]) -> None:
    """Delete the hidden ``.<name>.<hex>.copying`` files a copy killed half way left next to final files."""
    for _, dst in moves:
        folder, name = os.path.split(dst)
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            if entry.startswith(f".{name}.") and entry.endswith(".copying"):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, entry))


def _record_commit(journal: str, marker: str, **extra: Any) -> None:
    """Record a commit: the journal becomes the marker (one atomic rename; rewritten first with ``extra``)."""
    if extra:
        with open(journal, encoding="utf-8") as fh:
            _write_json_atomic(journal, {**json.load(fh), **extra})
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    os.replace(journal, marker)
    _drop_empty_dir(os.path.dirname(journal))


def _drop_empty_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _remove_tree(path: str, stop: str) -> None:
    """Delete ``path`` and its empty parents up to (and including, if empty) ``stop``."""
    shutil.rmtree(path, ignore_errors=True)
    parent = os.path.dirname(path)
    stop = os.path.normpath(stop)
    while parent.startswith(stop) and len(parent) >= len(stop):
        try:
            os.rmdir(parent)
        except OSError:
            break
        if os.path.normpath(parent) == stop:
            break
        parent = os.path.dirname(parent)


def _slot(ctx: Any, vertex: Any, table: str, target: str, config: Mapping[str, Any]) -> dict[str, str]:
    """Where one (run, pipeline, sink, table) keeps its staging and commit marker."""
    run, pipeline = _safe(str(ctx.run_id)), _safe(str(ctx.pipeline_key))
    sink, table_dir = _safe(vertex.ref.replace("[", "-").rstrip("]")), _safe(table)
    tmp_path = _opt(config, "tmp_path")
    if tmp_path:
        base = os.path.join(os.path.abspath(os.path.expanduser(str(tmp_path))), "seatunnel-staging")
        root = os.path.join(base, hashlib.sha1(target.encode()).hexdigest()[:12], run, pipeline, sink, table_dir)
    else:
        base = os.path.join(target, STAGING_DIR)
        root = os.path.join(base, run, pipeline, sink, table_dir)
    return {
        "base": base, "root": root, "attempt": os.path.join(root, f"attempt-{int(ctx.attempt)}"),
        "marker": os.path.join(target, COMMITS_DIR, run, pipeline, sink, f"{table_dir}.committed"),
        "journal": os.path.join(target, COMMITS_DIR, PENDING_DIR,
                                hashlib.sha1(f"{run}/{pipeline}/{sink}/{table_dir}".encode()).hexdigest()[:24]
                                + ".json"),
        # a STREAMING micro-batch applies save modes once per stream, not per batch (runtime/streaming.py)
        "savemode": _savemode_marker(target, str(getattr(ctx, "save_mode_run_id", ctx.run_id)), vertex.ref),
    }


def _savemode_marker(target: str, run_id: str, sink_ref: str) -> str:
    """The marker saying this run already applied the sink's save modes to ``target``."""
    sink = _safe(sink_ref.replace("[", "-").rstrip("]"))
    return os.path.join(target, COMMITS_DIR, _safe(run_id), "savemode", f"{sink}.savemode")


def _transaction_id(ctx: Any, vertex: Any, table: str, several_tables: bool) -> str:
    sink = re.sub(r"\D", "", vertex.ref) or _safe(vertex.ref)
    middle = f"_{_safe(table)}" if several_tables else ""
    return f"T_{_safe(str(ctx.pipeline_key))}_{_safe(str(ctx.run_id))}_{sink}{middle}_{int(ctx.attempt)}"


def _java_string(column: Any, dtype: Any) -> Any:
    """A partition value as Java's ``toString`` renders it (timestamps ISO, seconds kept only when set)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, (T.TimestampNTZType, T.TimestampType)):
        plain = F.date_format(column, "yyyy-MM-dd'T'HH:mm")
        seconds = F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss")
        fraction = F.regexp_replace(F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), "0+$", "")
        return (F.when(F.date_format(column, "ss.SSSSSS") == "00.000000", plain)
                .when(F.date_format(column, "SSSSSS") == "000000", seconds).otherwise(fraction))
    if isinstance(dtype, T.BinaryType):
        return F.decode(column, "UTF-8")
    return column.cast("string")


def _render_text(column: Any, dtype: Any, level: int, opts: Mapping[str, Any]) -> Any:
    """A column as SeaTunnel's text serializer writes it (null stays null: the caller makes it "")."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    seps = opts["separators"]
    sep1 = seps[level + 1] if level + 1 < len(seps) else chr(2 + level)
    sep2 = seps[level + 2] if level + 2 < len(seps) else chr(3 + level)
    if isinstance(dtype, T.StringType):
        return column
    if isinstance(dtype, T.DateType):
        return F.date_format(column, opts["date"])
    if isinstance(dtype, (T.TimestampNTZType, T.TimestampType)):
        return F.date_format(column, opts["datetime"])
    if type(dtype).__name__ == "TimeType":
        return F.date_format(F.make_timestamp_ntz(date=F.lit("1970-01-01").cast("date"), time=column), opts["time"])
    if isinstance(dtype, T.BinaryType):
        return F.decode(column, "UTF-8")
    if isinstance(dtype, T.NullType):
        return F.lit(None).cast("string")
    if isinstance(dtype, T.ArrayType):
        return F.array_join(F.transform(column, lambda x: F.coalesce(_render_text(x, dtype.elementType, level + 1,
                                                                                  opts), F.lit(""))), sep1)
    if isinstance(dtype, T.MapType):
        def entry(e: Any) -> Any:
            key = F.coalesce(_render_text(e.getField("key"), dtype.keyType, level + 2, opts), F.lit(""))
            value = F.coalesce(_render_text(e.getField("value"), dtype.valueType, level + 2, opts), F.lit(""))
            return F.concat(key, F.lit(sep2), value)
        return F.array_join(F.transform(F.map_entries(column), entry), sep1)
    if isinstance(dtype, T.StructType):
        parts = [F.coalesce(_render_text(column.getField(f.name), f.dataType, level + 1, opts), F.lit(""))
                 for f in dtype.fields]
        return F.when(column.isNull(), F.lit(None).cast("string")).otherwise(F.concat_ws(sep1, *parts))
    return column.cast("string")


def _sink_options(config: Mapping[str, Any]) -> dict[str, Any]:
    fmt = _format_of(config)
    codec = str(_opt(config, "compress_codec", "none")).strip().lower()
    if codec not in CODECS[fmt]:
        raise _config_error(f"compress_codec {codec!r} is not available for {fmt} files: use one of "
                            + ", ".join(CODECS[fmt]))
    row_delimiter = _opt(config, "row_delimiter", "\n")
    expression = str(_opt(config, "file_name_expression", DEFAULT_FILE_NAME))
    if not expression.strip():
        expression = DEFAULT_FILE_NAME
    time_format = str(_opt(config, "filename_time_format", "yyyy.MM.dd"))
    problem = java_pattern_problem(time_format)
    if problem:
        raise _config_error(f"filename_time_format: {problem}")
    return {
        "format": fmt, "codec": codec,
        "delimiter": "," if fmt == "csv" else str(_opt(config, "field_delimiter", DEFAULT_DELIMITER, "delimiter")),
        "row_delimiter": str(row_delimiter) if row_delimiter != "" else "\n",
        "header": _flag(config, "enable_header_write", False),
        "encoding": str(_opt(config, "encoding", "UTF-8")),
        "sink_columns": [str(c) for c in as_list(_opt(config, "sink_columns"))],
        "partition_by": [str(c) for c in as_list(_opt(config, "partition_by"))],
        "partition_dir_expression": _opt(config, "partition_dir_expression"),
        "partition_in_file": _flag(config, "is_partition_field_write_in_file", False),
        "file_name_expression": expression, "filename_time_format": time_format,
        "batch_size": _count(config, "batch_size", 1000000, 1),
        "date": str(_opt(config, "date_format", "yyyy-MM-dd")),
        "datetime": str(_opt(config, "datetime_format", "yyyy-MM-dd HH:mm:ss")),
        "time": str(_opt(config, "time_format", "HH:mm:ss")),
    }


def _resolve_columns(available: list[str], wanted: list[str], what: str) -> list[str]:
    by_lower = {c.lower(): c for c in available}
    out = []
    for name in wanted:
        match = by_lower.get(name.lower())
        if match is None:
            close = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
            raise _config_error(f"{what} names '{name}', which is not "
                                + ("a sink column (partition fields must in sink columns)" if what == "partition_by"
                                   else "an input field")
                                + (f"; did you mean '{by_lower[close[0]]}'?" if close else "")
                                + f" (fields: {', '.join(available)})")
        out.append(match)
    return out


def _writer(ctx: Any, vertex: Any, df: Any, opts: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """The Spark writer of ``df``'s data, and the partition field names (``partition_by`` as written)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from ..spi.rows import data_columns

    available = data_columns(df)
    columns = _resolve_columns(available, opts["sink_columns"], "sink_columns") if opts["sink_columns"] else available
    partitions = _resolve_columns(columns, opts["partition_by"], "partition_by") if opts["partition_by"] else []
    written = columns if opts["partition_in_file"] else [c for c in columns if c not in partitions]
    types = {f.name: f.dataType for f in df.schema.fields}
    part_cols = [f"{_PART}{i}" for i in range(len(partitions))]
    # null and "" both land in __HIVE_DEFAULT_PARTITION__ (Spark cannot read a 'k=' directory)
    part_exprs = [_java_string(F.col(f"`{p}`"), types[p]).alias(c) for p, c in zip(partitions, part_cols, strict=True)]
    fmt, encoding, header = opts["format"], opts["encoding"], opts["header"]
    own = as_int(lookup(vertex.config, "parallelism"))
    if own:
        df = df.repartition(own)
    df = ctx.with_write_faults(vertex, df)  # a no-op unless SEATUNNEL_FAULTS arms sink.write

    if fmt in ("text", "csv"):
        render = {**opts, "separators": [opts["delimiter"], "\u0002", "\u0003", "\u0004", "\u0005", "\u0006"]}
        rendered = [F.coalesce(_render_text(F.col(f"`{c}`"), types[c], 0, render), F.lit("")) for c in written]
    if fmt == "text":
        base = df.select(*part_exprs, *[F.col(f"`{c}`") for c in written])
        line = F.concat_ws(opts["delimiter"], *rendered) if rendered else F.lit("")
        header_text = opts["delimiter"].join(written)
        if _is_utf8(encoding):
            if header:  # the first row of every output file (and of every batch_size rows) carries the header
                if part_cols:
                    index = F.row_number().over(Window.partitionBy(*part_cols).orderBy(*part_cols)) - 1
                else:
                    index = F.monotonically_increasing_id() - F.shiftleft(F.spark_partition_id().cast("bigint"), 33)
                first = (index % opts["batch_size"]) == 0
                line = F.when(first, F.concat(F.lit(header_text + opts["row_delimiter"]), line)).otherwise(line)
            out = base.select(*part_cols, line.alias("value"))
            writer = out.write.format("text").option("lineSep", opts["row_delimiter"])
        else:  # Spark's text writer is UTF-8 only: one string column through the csv writer
            out = base.select(*part_cols, line.alias(header_text if header else "value"))
            writer = (out.write.format("csv").options(sep="\ue000", quote="\u0000", escapeQuotes="false",
                                                      ignoreLeadingWhiteSpace="false",
                                                      ignoreTrailingWhiteSpace="false", emptyValue="",
                                                      nullValue="", lineSep=opts["row_delimiter"],
                                                      encoding=encoding)
                      .option("header", "true" if header else "false"))
    elif fmt == "csv":
        out = df.select(*part_exprs, *[r.alias(c) for r, c in zip(rendered, written, strict=True)])
        writer = out.write.format("csv").options(
            sep=",", quote='"', escape='"', ignoreLeadingWhiteSpace="false", ignoreTrailingWhiteSpace="false",
            emptyValue="", nullValue="", lineSep=opts["row_delimiter"], encoding=encoding,
            header="true" if header else "false")
    else:
        out = df.select(*part_exprs, *[F.col(f"`{c}`") for c in written])
        writer = out.write.format(fmt)
        if fmt == "json":
            writer = writer.options(ignoreNullFields="false", lineSep=opts["row_delimiter"])
            if not _is_utf8(encoding):
                writer = writer.option("encoding", encoding)
    writer = writer.option("compression", CODECS[fmt][opts["codec"]][0])
    writer = writer.option("maxRecordsPerFile", opts["batch_size"]).mode("overwrite")
    if part_cols:
        writer = writer.partitionBy(*part_cols)
    return writer, list(opts["partition_by"])  # directories name the fields as partition_by spells them


def _unescape_partition(text: str) -> str | None:
    """A Spark partition directory value back to the written string (None for null)."""
    if text == HIVE_NULL:
        return None
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def _partition_dir(expression: str | None, names: list[str], values: list[str | None]) -> str:
    # ':' in a path segment breaks Hadoop paths (Spark could not read the files): escaped as Hive does
    rendered = [HIVE_NULL if v is None else v.replace(":", "%3A") for v in values]
    if not expression:
        return "".join(f"{k}={v}/" for k, v in zip(names, rendered, strict=True))
    mapping = {f"k{i}": k for i, k in enumerate(names)} | {f"v{i}": v for i, v in enumerate(rendered)}
    return re.sub(r"\$\{(k\d+|v\d+)\}", lambda m: mapping.get(m.group(1), m.group(0)), str(expression))


def _file_base_name(opts: Mapping[str, Any], transaction: str, now: datetime, unique: str) -> str:
    values = {"transactionId": transaction, "uuid": unique,
              "now": format_java_datetime(opts["filename_time_format"], now)}
    return re.sub(r"\$\{(transactionId|uuid|now)\}", lambda m: values[m.group(1)], opts["file_name_expression"])


def _staged_moves(data_dir: str, target: str, opts: Mapping[str, Any], partitions: list[str],
                  base_name: str) -> list[list[str]]:
    """(staged file, final file) pairs: partition directories mapped through the expression,
    names ``<base>_<part>`` numbered from 0 per final directory, with the suffixes."""
    codec_suffix, format_suffix = CODECS[opts["format"]][opts["codec"]][1], FORMAT_SUFFIX[opts["format"]]
    # readers pick a text codec by the last extension: x.txt.gz (SeaTunnel: x.gz.txt, unreadable)
    suffix = format_suffix + codec_suffix if opts["format"] in ("text", "csv", "json") else codec_suffix + format_suffix
    staged = []
    for dirpath, dirnames, filenames in os.walk(data_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            empty = os.path.getsize(full) == 0 and opts["format"] in ("text", "csv", "json")
            if name.startswith((".", "_")) or empty:
                continue
            staged.append(full)
    counters: dict[str, int] = {}
    moves = []
    root = os.path.normpath(target)
    for full in sorted(staged):
        rel_dir = os.path.relpath(os.path.dirname(full), data_dir)
        values: list[str | None] = [None] * len(partitions)
        if rel_dir != ".":
            for segment in rel_dir.split(os.sep):
                key, _, raw = segment.partition("=")
                values[int(key[len(_PART):])] = _unescape_partition(raw)
        final_dir = _partition_dir(opts["partition_dir_expression"], partitions, values) if partitions else ""
        final_dir = os.path.normpath(os.path.join(root, final_dir))
        if final_dir != root and not final_dir.startswith(root + os.sep):
            raise _config_error(f"the partition directory {final_dir} is outside the sink path {root}")
        index = counters.get(final_dir, 0)
        counters[final_dir] = index + 1
        moves.append([full, os.path.join(final_dir, f"{base_name}_{index}{suffix}")])
    return moves


def _settle(vertex: Any, table: str, slot: Mapping[str, str]) -> str | None:
    """Settle the earlier attempts of this (run, pipeline, sink, table) before writing: "committed"
    (a marker: nothing to do), "recovered" (a journal without marker: the interrupted commit is
    finished now), or None (write the data; staging of failed attempts is discarded)."""
    marker, journal = slot["marker"], slot["journal"]
    status = None
    folder, name = os.path.split(journal)
    if os.path.isdir(folder):  # a journal write killed half way leaves its temporary file
        for entry in os.listdir(folder):
            if entry.startswith(f".{name}.") and entry.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, entry))
    if os.path.exists(marker):
        status = "committed"
    elif os.path.isfile(journal):
        with open(journal, encoding="utf-8") as fh:
            recorded = json.load(fh)
        moves = recorded.get("moves", [])
        _drop_copy_leftovers(moves)
        if _can_roll_forward(moves):
            moved = _apply_moves(moves)
            _record_commit(journal, marker, recovered=True)
            log.info("LocalFile %s: finished the interrupted commit of table %s (%d of %d files moved now)",
                     vertex.ref, table, moved, len(moves))
            status = "recovered"
        else:  # the staging is gone (tmp_path on a lost disk): take back what was published, write again
            published = [dst for _, dst in moves if os.path.exists(dst)]
            for dst in published:
                os.remove(dst)
            os.remove(journal)
            _drop_empty_dir(os.path.dirname(journal))
            log.warning("LocalFile %s: the staged files of an interrupted commit of table %s are lost; removed the "
                        "%d file(s) it had published, writing the data again", vertex.ref, table, len(published))
    if os.path.exists(slot["root"]):  # staging of failed attempts, or of a commit finished above
        _remove_tree(slot["root"], slot["base"])
    _drop_empty_dir(folder)
    return status


def _save_mode_once(ctx: Any, vertex: Any, config: Mapping[str, Any], table: str, slot: Mapping[str, str]) -> None:
    """Run the save modes unless this run already did for this sink and target (a retry, a clone)."""
    if os.path.exists(slot["savemode"]):
        return
    done = handle_save_mode(config, table)
    _write_json_atomic(slot["savemode"], {"run_id": ctx.run_id, "sink": vertex.ref, "table": table,
                                          "actions": done, "at": datetime.now().isoformat()})
    for action in done:
        log.info("LocalFile %s: save mode %s", vertex.ref, action)


def save_mode(run_id: str, vertex: Any) -> list[str] | None:
    """Apply the sink's save modes for ``run_id`` before its pipelines run (the Airflow group's
    ``prepare`` task), leaving the marker that stops the pipelines (and their retries) from
    applying them again. None when the target depends on the data's tables (placeholders in
    ``path``): each pipeline then applies them once, as it meets each table."""
    path = _opt(vertex.config, "path")
    if path is None or _TABLE_PLACEHOLDER.search(str(path)):
        return None
    config = _table_config(vertex.config, "")
    marker = _savemode_marker(_target_path(config), run_id, vertex.ref)
    if os.path.exists(marker):
        return []
    done = handle_save_mode(config, "")
    _write_json_atomic(marker, {"run_id": run_id, "sink": vertex.ref, "table": "", "actions": done,
                                "at": datetime.now().isoformat()})
    return done


def assets(options: Mapping[str, Any]) -> list[str]:
    """The file URI of the data read or written: ``path`` up to its first placeholder
    (``{{ ds }}``, ``${table_name}``), so that every run's data is one Airflow asset."""
    path = _opt(options, "path")
    if path is None or not str(path).strip():
        return []
    text = str(path)
    text = text[len("file://"):] if text.startswith("file://") else text
    static = re.split(r"\$\{|\{\{|\{%", text, maxsplit=1)[0]
    if static != text:
        static = static.rsplit("/", 1)[0] or "/"
    return [f"file://{os.path.abspath(os.path.expanduser(static))}"]


def _prepare_table(ctx: Any, vertex: Any, table: str, df: Any, several: bool) -> dict[str, Any]:
    from ..spi.rows import data_columns

    config = _table_config(vertex.config, table, data_columns(df))
    opts = _sink_options(config)
    target = _target_path(config)
    slot = _slot(ctx, vertex, table, target, config)
    entry: dict[str, Any] = {"table": table, "target": target, "marker": slot["marker"], "journal": slot["journal"],
                             "staging": slot["attempt"], "base": slot["base"], "moves": []}
    status = _settle(vertex, table, slot)
    if status == "committed":
        log.info("LocalFile %s: table %s of run %s already committed to %s; nothing to write",
                 vertex.ref, table, ctx.run_id, target)
    if status:
        # The executor's row counters count in an action over this DataFrame:
        # run it without writing anything (the rows are those the earlier attempt committed).
        df.write.format("noop").mode("overwrite").save()
        return {**entry, "status": status}
    if _flag(config, "is_enable_transaction", True) is False:
        log.info("LocalFile %s: is_enable_transaction = false; files are still staged and committed", vertex.ref)
    _save_mode_once(ctx, vertex, config, table, slot)
    writer, partitions = _writer(ctx, vertex, df, opts)
    data_dir = os.path.join(slot["attempt"], "data")
    try:
        writer.save("file://" + data_dir)
        transaction = _transaction_id(ctx, vertex, table, several)
        base_name = _file_base_name(opts, transaction, datetime.now(), str(uuid.uuid4()))
        moves = _staged_moves(data_dir, target, opts, partitions, base_name)
    except BaseException:
        _remove_tree(slot["attempt"], slot["base"])
        raise
    return {**entry, "status": "staged", "moves": moves, "transaction": transaction}


def prepare(ctx: Any, vertex: Any, data: dict) -> dict[str, Any]:
    """Run the save modes, then write each table into its hidden staging directory (one Spark
    write per table: the action that also counts the rows); return what commit publishes."""
    entries: list[dict[str, Any]] = []
    try:
        for table, df in data.items():
            entries.append(_prepare_table(ctx, vertex, table, df, len(data) > 1))
    except BaseException:
        abort(ctx, vertex, {"tables": entries})
        raise
    return {"tables": entries}


def commit(ctx: Any, vertex: Any, info: Mapping[str, Any]) -> None:
    """Publish the staged files: journal, renames, marker (the journal renamed), then drop the staging."""

    for entry in info.get("tables", ()):
        if entry.get("status") != "staged":
            continue
        record = {"run_id": ctx.run_id, "pipeline": ctx.pipeline_key, "sink": vertex.ref, "table": entry["table"],
                  "attempt": ctx.attempt, "transaction": entry.get("transaction"),
                  "files": [dst for _, dst in entry["moves"]], "at": datetime.now().isoformat(),
                  "moves": entry["moves"]}
        _write_json_atomic(entry["journal"], record)
        for src, dst in entry["moves"]:
            ctx.fault_point("sink.move", vertex)
            _move(src, dst)
        ctx.fault_point("sink.commit", vertex)
        _record_commit(entry["journal"], entry["marker"])
        _remove_tree(entry["staging"], entry["base"])
        log.info("LocalFile %s: committed %d files of table %s to %s", vertex.ref, len(entry["moves"]),
                 entry["table"], entry["target"])


def abort(ctx: Any, vertex: Any, info: Mapping[str, Any]) -> None:
    """Discard the attempt's staging; a commit that had started (journal, no marker) is rolled back first."""
    for entry in (info or {}).get("tables", ()):
        if entry.get("status") != "staged":
            continue
        journal = entry.get("journal")
        if journal and os.path.isfile(journal) and not os.path.exists(entry["marker"]):
            for src, dst in entry["moves"]:
                if not os.path.exists(src) and os.path.exists(dst):
                    _rename(dst, src)
            os.remove(journal)
            _drop_empty_dir(os.path.dirname(journal))
        _remove_tree(entry["staging"], entry["base"])


# ---------------------------------------------------------------------------------------------
# STREAMING (runtime/streaming.py, docs/streaming.md): a directory as a file stream; the sink
# writes micro-batches with prepare/commit above (the run id names the batch)
# ---------------------------------------------------------------------------------------------

#: files older than this (relative to the newest seen) would be ignored by Spark's file stream: never, in practice
_STREAM_MAX_FILE_AGE = "36500d"


class _StreamReader:
    """``spark.read``'s builder over ``spark.readStream`` for :func:`_read_files`: ``load`` streams the
    directory whatever file list it is given (the files present now only decide a parquet/orc schema)."""

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
    """The SparkSession :func:`_read_files` sees when it reads a stream (``read`` is a stream reader)."""

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
            raise _config_error(f"no {fmt} files under {self.root} yet: set schema {{ fields {{ ... }} }} so the "
                                "stream knows its columns before the first file arrives")
        return declared.to_spark()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.spark, name)


def _stream_table(ctx: Any, config: Mapping[str, Any], output: str | None) -> tuple[str, Any]:
    """One table of a LocalFile stream: the files under ``path``, new ones picked up by each micro-batch."""
    from dataclasses import replace

    from pyspark.sql import functions as F

    from ..spi.rows import with_kind

    root = _target_path(config)
    if not os.path.isdir(root):
        raise _config_error(f"a STREAMING LocalFile source reads a directory; {root} "
                            + ("is a file" if os.path.exists(root) else "does not exist"))
    files = list_input_files(config)  # present now: partition keys, parquet/orc schema
    keys = partition_keys(files[0]) if files and _flag(config, "parse_partition_from_path", True) else []
    pattern = _opt(config, "file_filter_pattern")
    partitions = [str(p) for p in as_list(_opt(config, "read_partitions"))]
    stream_ctx = replace(ctx, spark=_StreamSpark(ctx.spark, root, files, config))
    df = _read_files(stream_ctx, config, [root], with_file=bool(keys or pattern is not None or partitions))
    if pattern is not None:
        name = F.regexp_extract(F.col(_FILE), r"([^/]*)$", 1)
        df = df.where(name.rlike(f"^(?:{pattern})$"))
    if partitions:
        keep = F.lit(False)
        for part in partitions:
            keep = keep | F.col(_FILE).contains(part)
        df = df.where(keep)
    data_columns = _read_columns(config, [c for c in df.columns if c != _FILE])
    columns = [F.col(f"`{c}`") for c in data_columns]
    for key in keys:
        if key in data_columns:
            raise _config_error(f"the partition directory '{key}=...' clashes with the field '{key}'; "
                                "rename one, or set parse_partition_from_path = false")
        pattern_key = "^.*/" + _java_regex_literal(key) + "=([^/]*)/"
        value = F.replace(F.regexp_extract(F.col(_FILE), pattern_key, 1), F.lit("%3A"), F.lit(":"))
        columns.append(F.when(F.col(_FILE).rlike(pattern_key), value).alias(key))
    return _table_id(config, output), with_kind(df.select(*columns))


def read_stream(ctx: Any, vertex: Any) -> dict[str, Any]:
    """``path`` (a directory; or each ``tables_configs`` item) as a file stream: ``{table id: DataFrame}``.

    Each micro-batch reads the files that appeared since the last one (Spark's file source, its
    list of files read kept in the checkpoint); files are never read twice, a changed file is
    not read again. The formats and options are the batch source's."""
    return _tables(ctx, vertex, _stream_table)


def retire(ctx: Any, vertex: Any, info: Mapping[str, Any]) -> None:
    """STREAMING: micro-batch ``ctx.batch_id`` of stream ``ctx.stream_id`` committed (``info``: its ``prepare``
    result); drop the commit markers of the stream's earlier micro-batches, which Spark will never replay."""
    batch_id, stream = getattr(ctx, "batch_id", None), getattr(ctx, "stream_id", "")
    if batch_id is None or not stream:
        return
    earlier = re.compile(re.escape(stream) + r"_batch-(\d+)-[0-9a-f]{6}")  # _safe() of "<stream>:batch-<n>"
    for entry in (info or {}).get("tables", ()):
        marker = entry.get("marker")
        if not marker:
            continue
        commits = os.path.normpath(os.path.join(entry["target"], COMMITS_DIR))
        run_dir = os.path.relpath(marker, commits).split(os.sep, 1)
        if len(run_dir) != 2 or not os.path.isdir(commits):
            continue
        for name in os.listdir(commits):
            m = earlier.fullmatch(name)
            if m is None or int(m.group(1)) >= batch_id:
                continue
            old = os.path.join(commits, name, run_dir[1])
            if not os.path.exists(old):
                continue
            os.remove(old)
            parent = os.path.dirname(old)
            while os.path.normpath(parent).startswith(commits + os.sep):
                try:
                    os.rmdir(parent)
                except OSError:
                    break
                parent = os.path.dirname(parent)


# ---------------------------------------------------------------------------------------------
# Compile time
# ---------------------------------------------------------------------------------------------

def _enum_problem(job: JobConfig, plugin: PluginConfig, key: str, value: Any, allowed: tuple[str, ...],
                  upper: bool = True) -> Problem | None:
    text = str(value).strip()
    norm = text.upper() if upper else text.lower()
    if norm in allowed:
        return None
    close = difflib.get_close_matches(norm, list(allowed), n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(allowed)}"
    return job.problem(f"unknown {key} '{text}'", plugin, key=key, hint=hint)


def _check_block(plugin: PluginConfig, job: JobConfig, options: Mapping[str, Any], prefix: str = "") -> list[Problem]:
    problems: list[Problem] = []
    sink = plugin.section == SINK

    def at(key: str) -> str:
        return prefix + key

    if _opt(options, "path") is None:
        problems.append(job.problem(f"the option '{at('path')}' is required", plugin, key=at("path"),
                                    hint="set path = \"/data/dir\""))
    raw_format = _opt(options, "file_format_type")
    fmt = None
    if raw_format is None:
        why = ("SeaTunnel's LocalFile sink fails without it ('No configuration setting found for key "
               "file_format_type')" if sink else "SeaTunnel requires it")
        problems.append(job.problem(f"the option '{at('file_format_type')}' is required: {why}", plugin,
                                    key=at("file_format_type"),
                                    hint="set file_format_type = \"text\" (or csv, json, parquet, orc)"))
    elif str(raw_format).strip().lower() in _SEATUNNEL_ONLY_FORMATS:
        problems.append(job.problem(f"file_format_type '{raw_format}' is not supported by this package", plugin,
                                    key=at("file_format_type"), hint=f"use one of {', '.join(FORMATS)}"))
    else:
        found = _enum_problem(job, plugin, at("file_format_type"), raw_format, FORMATS, upper=False)
        if found:
            problems.append(found)
        else:
            fmt = str(raw_format).strip().lower()

    codec = _opt(options, "compress_codec")
    if codec is not None and fmt is not None and (sink or fmt in ("text", "csv", "json")):
        name = str(codec).strip().lower()
        allowed = CODECS[fmt] if sink else ("none", *[c for c in _LINE_CODECS if c != "none"])
        if name in _UNAVAILABLE_CODECS:
            problems.append(job.problem(f"compress_codec '{name}' is not available in Spark", plugin,
                                        key=at("compress_codec"),
                                        hint=f"for {fmt} use one of {', '.join(CODECS[fmt])}"))
        elif name not in allowed:
            problems.append(_enum_problem(job, plugin, at("compress_codec"), name, tuple(allowed), upper=False))

    for key in ("skip_header_row_number",) + (("batch_size",) if sink else ()):
        value = _opt(options, key)
        minimum = 1 if key == "batch_size" else 0
        if value is not None and (as_int(value) is None or as_int(value) < minimum):
            problems.append(job.problem(f"{key} must be an integer >= {minimum}, found {value!r}", plugin,
                                        key=at(key)))
    booleans = ("enable_header_write", "is_partition_field_write_in_file", "custom_filename", "have_partition",
                "is_enable_transaction") if sink else ("parse_partition_from_path",)
    for key in booleans:
        value = _opt(options, key)
        if value is not None and as_bool(value) is None:
            problems.append(job.problem(f"{key} must be true or false, found {value!r}", plugin, key=at(key)))

    if sink:
        for key, allowed in (("schema_save_mode", SCHEMA_SAVE_MODES), ("data_save_mode", DATA_SAVE_MODES)):
            value = _opt(options, key)
            if value is None:
                continue
            found = _enum_problem(job, plugin, at(key), value, allowed)
            if found:
                problems.append(found)
            elif str(value).strip().upper() == "CUSTOM_PROCESSING":
                problems.append(job.problem("data_save_mode CUSTOM_PROCESSING is not supported by file sinks",
                                            plugin, key=at(key),
                                            hint="use DROP_DATA, APPEND_DATA or ERROR_WHEN_DATA_EXISTS"))
        expression = _opt(options, "file_name_expression")
        transactional = as_bool(_opt(options, "is_enable_transaction", True)) is not False
        if expression is not None and transactional and "${transactionId}" not in str(expression):
            problems.append(job.problem("file_name_expression must contains transactionId when "
                                        "is_enable_transaction is true", plugin, key=at("file_name_expression"),
                                        hint="add ${transactionId} to the expression (it keeps the files of "
                                             "retries and parallel pipelines apart)"))
        time_format = _opt(options, "filename_time_format")
        if time_format is not None:
            why = java_pattern_problem(str(time_format))
            if why:
                problems.append(job.problem(f"filename_time_format: {why}", plugin, key=at("filename_time_format"),
                                            hint="use a Java date pattern such as yyyy.MM.dd"))
    else:
        pattern = _opt(options, "file_filter_pattern")
        if pattern is not None:
            try:
                re.compile(str(pattern))
            except re.error as e:
                problems.append(job.problem(f"file_filter_pattern is not a valid regex: {e}", plugin,
                                            key=at("file_filter_pattern")))
        if fmt in ("text", "csv", "json") and not isinstance(_opt(options, "schema"), Mapping):
            problems.append(job.problem(f"the option '{at('schema')}' is required to read {fmt} files", plugin,
                                        key=at("schema"),
                                        hint="declare schema { fields { name = string, ... } }; parquet and orc "
                                             "files carry their own"))
    return problems


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Option checks: required path and file_format_type, formats, codecs, save modes, patterns."""
    tables = plugin.get("tables_configs")
    if plugin.section == SOURCE and tables is not None:
        if not isinstance(tables, list) or not tables or not all(isinstance(t, Mapping) for t in tables):
            return [job.problem("tables_configs must be a non-empty list of LocalFile option blocks", plugin,
                                key="tables_configs")]
        return [p for i, t in enumerate(tables) for p in _check_block(plugin, job, t, f"tables_configs[{i}].")]
    return _check_block(plugin, job, plugin.options)


def schema(plugin: PluginConfig, job: JobConfig, inputs: list[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """Source: the ``schema`` fields (``read_columns`` projected), known when partition columns
    cannot appear (``parse_partition_from_path = false``). Sink: checks ``sink_columns`` and
    ``partition_by`` against the input fields; no output."""
    problems: list[Problem] = []
    if plugin.section == SINK:
        if plugin.has("save_mode"):
            problems.append(job.problem("save_mode is a legacy option SeaTunnel's LocalFile does not read: it is "
                                        "ignored", plugin, key="save_mode", severity="warning",
                                        hint="use schema_save_mode and data_save_mode"))
        known = inputs[0] if inputs and all(i is not None for i in inputs) else None
        if known is None:
            return None, problems
        names = {n.lower(): n for n in known.names}
        sink_columns = [str(c) for c in as_list(plugin.get("sink_columns"))]
        for key, wanted in (("sink_columns", sink_columns), ("partition_by", as_list(plugin.get("partition_by")))):
            pool = {c.lower(): c for c in sink_columns} if key == "partition_by" and sink_columns else names
            for name in wanted:
                if str(name).lower() not in pool:
                    close = difflib.get_close_matches(str(name).lower(), list(pool), n=1)
                    where = "the sink_columns" if pool is not names else "the input fields"
                    problems.append(job.problem(f"{key} names '{name}', which is not among {where}", plugin, key=key,
                                                hint=f"did you mean '{pool[close[0]]}'?" if close
                                                else "fields: " + ", ".join(pool.values())))
        return None, problems

    if plugin.get("tables_configs") is not None:
        return None, problems
    fmt = str(plugin.get("file_format_type", "")).strip().lower()
    if fmt not in ("text", "csv", "json"):
        return None, problems
    declared = schema_from_options(plugin.options)
    if declared is None:
        return None, problems
    fields = list(declared.fields)
    read_columns = [str(c) for c in as_list(plugin.get("read_columns"))]
    if read_columns:
        chosen = []
        for name in read_columns:
            field = declared.get(name)
            if field is None:
                close = difflib.get_close_matches(name, declared.names, n=1)
                problems.append(job.problem(f"read_columns names '{name}', which is not a field of the schema",
                                            plugin, key="read_columns",
                                            hint=f"did you mean '{close[0]}'?" if close
                                            else "fields: " + ", ".join(declared.names)))
            else:
                chosen.append(field)
        fields = chosen
    if as_bool(plugin.get("parse_partition_from_path", True)) is not False:
        return None, problems  # k=v directories may add columns only the files reveal
    return Schema(tuple(fields)), problems


class LocalFile(Connector, SchemaInference, Lineage, SaveModes, BatchSource, InsertOnly, TwoPhaseSink,
                StreamingSource, RetiresCommits):
    name = "LocalFile"
    kinds = frozenset({SOURCE, SINK})
    identity = ("path",)
    committer = True
    stores_deletes = False
    description = "Reads or writes text, csv, json, parquet and orc files."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return check(plugin, job)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return schema(plugin, job, list(inputs))

    def assets(self, options: Mapping[str, Any]) -> list[str]:
        return assets(options)

    def save_mode(self, run_id: str, vertex: Vertex) -> list[str] | None:
        return save_mode(run_id, vertex)

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return read(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        return prepare(ctx, vertex, data)

    def commit(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        return commit(ctx, vertex, info)

    def abort(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        return abort(ctx, vertex, info)

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return read_stream(ctx, vertex)

    def retire(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        return retire(ctx, vertex, info)


CONNECTOR = LocalFile()

