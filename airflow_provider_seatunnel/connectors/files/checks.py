"""LocalFile at compile time (no Spark): the option checks of a source or sink block (and of each
``tables_configs`` item), and the schema the source gives or the sink checks its input against."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import MISSING, JobConfig, OptionError, PluginConfig, Problem, as_bool, as_list
from ...spi.schema import Schema, schema_from_options
from .archives import ARCHIVE_CODECS
from .excel import sheet_name_problem
from .options import (
    CODECS,
    DATA_SAVE_MODES,
    FORMATS,
    LINE_CODECS,
    SCHEMA_FORMATS,
    SCHEMA_SAVE_MODES,
    SEATUNNEL_ONLY_FORMATS,
    UNAVAILABLE_CODECS,
    written,
)
from .optionspec import FILE_SPEC
from .placeholders import java_pattern_problem
from .portability import required_option_problems, writer_type_problems


def _enum_problem(job: JobConfig, plugin: PluginConfig, key: str, value: Any, allowed: tuple[str, ...],
                  upper: bool = True) -> Problem | None:
    text = str(value).strip()
    norm = text.upper() if upper else text.lower()
    if norm in allowed:
        return None
    close = difflib.get_close_matches(norm, list(allowed), n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(allowed)}"
    return job.problem(f"unknown {key} '{text}'", plugin, key=key, hint=hint)


class _Block:
    """One block being checked: where its keys are (``prefix``: a ``tables_configs`` item) and what was found."""

    def __init__(self, plugin: PluginConfig, job: JobConfig, options: Mapping[str, Any], prefix: str):
        self.plugin, self.job, self.options, self.prefix = plugin, job, options, prefix
        self.sink = plugin.section == SINK
        self.problems: list[Problem] = []

    def at(self, key: str) -> str:
        return self.prefix + key

    def report(self, message: str, key: str, hint: str | None = None) -> None:
        self.problems.append(self.job.problem(message, self.plugin, key=self.at(key), hint=hint))

    def warn(self, message: str, key: str, hint: str | None = None) -> None:
        self.problems.append(self.job.problem(message, self.plugin, key=self.at(key), hint=hint, severity="warning"))

    def cannot_run(self, message: str, key: str, hint: str | None = None) -> None:
        """Something this package cannot do yet: plans, fails validate and run."""
        self.problems.append(self.job.cannot_run(message, self.plugin, key=self.at(key), hint=hint))

    def enum(self, key: str, value: Any, allowed: tuple[str, ...], upper: bool = True) -> bool:
        """Report an unknown value of an enumeration; whether the value was known."""
        found = _enum_problem(self.job, self.plugin, self.at(key), value, allowed, upper=upper)
        if found is not None:
            self.problems.append(found)
        return found is None


def _check_format(b: _Block) -> str | None:
    """The problems of ``path`` and ``file_format_type``; the format when it is a known one."""
    if written(b.options, "path") is None:
        b.report(f"the option '{b.at('path')}' is required", "path", hint="set path = \"/data/dir\"")
    raw_format = written(b.options, "file_format_type")
    if raw_format is None:
        why = ("SeaTunnel's LocalFile sink fails without it ('No configuration setting found for key "
               "file_format_type')" if b.sink else "SeaTunnel requires it")
        b.report(f"the option '{b.at('file_format_type')}' is required: {why}", "file_format_type",
                 hint="set file_format_type = \"text\" (or csv, json, parquet, orc)")
        return None
    if str(raw_format).strip().lower() in SEATUNNEL_ONLY_FORMATS:
        b.cannot_run(f"file_format_type '{raw_format}' is not supported by this package", "file_format_type",
                     hint=f"use one of {', '.join(FORMATS)}")
        return None
    if not b.enum("file_format_type", raw_format, FORMATS, upper=False):
        return None
    return str(raw_format).strip().lower()


def _check_codec(b: _Block, fmt: str | None) -> None:
    codec = written(b.options, "compress_codec")
    if codec is None or fmt is None or not (b.sink or fmt in ("text", "csv", "json", "xml")):
        return
    name = str(codec).strip().lower()
    allowed = CODECS[fmt] if b.sink else ("none", *[c for c in LINE_CODECS if c != "none"])
    if fmt == "excel" and name != "none" and name in allowed:
        b.warn(f"compress_codec '{name}' does not apply to excel files: they are written uncompressed",
               "compress_codec", hint="remove compress_codec (an .xlsx workbook is a zip file already)")
        return
    if name in UNAVAILABLE_CODECS and name not in allowed:
        b.cannot_run(f"compress_codec '{name}' is not available in Spark", "compress_codec",
                     hint=f"for {fmt} use one of {', '.join(CODECS[fmt])}")
    elif name not in allowed:
        b.enum("compress_codec", name, tuple(allowed), upper=False)


def _check_values(b: _Block) -> None:
    """The typed values of a ``tables_configs`` item, by the file spec (the spec reports the block's own)."""
    if not b.prefix:
        return
    for option in FILE_SPEC.options:
        key, value = option.raw(b.options)
        if value is MISSING or option.type not in ("int", "bool") or not option.applies_to(b.plugin.section):
            continue
        try:
            option.coerce(key, value)
        except OptionError as e:
            b.report(e.message, key)


def _check_excel(b: _Block) -> None:
    """excel: the sink's sheet name and row window; a source path naming an .xls file."""
    if b.sink:
        sheet = written(b.options, "sheet_name")
        problem = sheet_name_problem(str(sheet)) if sheet is not None else None
        if problem:
            b.report(f"sheet_name: {problem}", "sheet_name")
    elif str(written(b.options, "path") or "").strip().lower().endswith(".xls"):
        b.cannot_run("reading .xls (Excel 97-2003) files is not supported by this package", "path",
                     hint="save the workbook as .xlsx (openpyxl reads only the zip-based format)")


def _seconds(value: object) -> float | None:
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if 0 < number < float("inf") else None


def _check_sink(b: _Block) -> None:
    for key, allowed in (("schema_save_mode", SCHEMA_SAVE_MODES), ("data_save_mode", DATA_SAVE_MODES)):
        value = written(b.options, key)
        if value is not None and b.enum(key, value, allowed) and str(value).strip().upper() == "CUSTOM_PROCESSING":
            b.report("data_save_mode CUSTOM_PROCESSING is not supported by file sinks", key,
                     hint="use DROP_DATA, APPEND_DATA or ERROR_WHEN_DATA_EXISTS")
    timeout = written(b.options, "commit_lock_timeout")
    if timeout is not None and (isinstance(timeout, bool) or _seconds(timeout) is None):
        b.report(f"commit_lock_timeout must be a number of seconds > 0, found {timeout!r}", "commit_lock_timeout",
                 hint="how long a commit waits for the target's commit lock (default 600)")
    expression = written(b.options, "file_name_expression")
    transactional = as_bool(written(b.options, "is_enable_transaction")) is not False
    if expression is not None and transactional and "${transactionId}" not in str(expression):
        b.report("file_name_expression must contains transactionId when is_enable_transaction is true",
                 "file_name_expression", hint="add ${transactionId} to the expression (it keeps the files of "
                                              "retries and parallel pipelines apart)")
    time_format = written(b.options, "filename_time_format")
    if time_format is not None:
        why = java_pattern_problem(str(time_format))
        if why:
            b.report(f"filename_time_format: {why}", "filename_time_format",
                     hint="use a Java date pattern such as yyyy.MM.dd")


def _check_archive(b: _Block) -> None:
    """``archive_compress_codec`` is one of SeaTunnel's codecs; archives are read in BATCH only (a file
    stream reads files as they are)."""
    codec = written(b.options, "archive_compress_codec")
    if codec is None or not b.enum("archive_compress_codec", codec, ARCHIVE_CODECS, upper=False):
        return
    streaming = str(b.job.env_get("job.mode", "BATCH")).strip().upper() == "STREAMING"
    if str(codec).strip().lower() != "none" and streaming:
        b.cannot_run(f"archive_compress_codec '{codec}' is read in BATCH only here", "archive_compress_codec",
                     hint="use job.mode = BATCH, or unpack the archives for a file stream")


def _check_source(b: _Block, fmt: str | None) -> None:
    _check_archive(b)
    pattern = written(b.options, "file_filter_pattern")
    if pattern is not None:
        try:
            re.compile(str(pattern))
        except re.error as e:
            b.report(f"file_filter_pattern is not a valid regex: {e}", "file_filter_pattern")
    if fmt in SCHEMA_FORMATS and not isinstance(written(b.options, "schema"), Mapping):
        b.report(f"the option '{b.at('schema')}' is required to read {fmt} files", "schema",
                 hint="declare schema { fields { name = string, ... } }; parquet and orc files carry their own")
    if fmt == "xml":
        for key in ("xml_row_tag", "xml_use_attr_format"):
            if written(b.options, key) is None:
                b.report(f"the option '{b.at(key)}' is required to read xml files", key,
                         hint="xml_row_tag names the row elements; xml_use_attr_format = true reads their "
                              "attributes, false their child elements")


def _check_block(plugin: PluginConfig, job: JobConfig, options: Mapping[str, Any], prefix: str = "") -> list[Problem]:
    b = _Block(plugin, job, options, prefix)
    fmt = _check_format(b)
    _check_codec(b, fmt)
    _check_values(b)
    if fmt == "excel":
        _check_excel(b)
    if b.sink:
        _check_sink(b)
    else:
        _check_source(b, fmt)
    return b.problems


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Option checks: required path and file_format_type, formats, codecs, save modes, patterns."""
    tables = plugin.get("tables_configs")
    if plugin.section == SOURCE and tables is not None:
        if not isinstance(tables, list) or not tables or not all(isinstance(t, Mapping) for t in tables):
            return [job.problem("tables_configs must be a non-empty list of LocalFile option blocks", plugin,
                                key="tables_configs")]
        return [p for i, t in enumerate(tables) for p in _check_block(plugin, job, t, f"tables_configs[{i}].")]
    return _check_block(plugin, job, plugin.options)


# ---------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------

def _sink_schema(plugin: PluginConfig, job: JobConfig, inputs: Sequence[Schema | None]) -> list[Problem]:
    """The sink's problems: the legacy ``save_mode``; with every input's schema known, the field types
    SeaTunnel's writer of the format refuses (:mod:`.portability`), ``sink_columns`` and ``partition_by``
    naming no input field."""
    problems: list[Problem] = []
    if plugin.has("save_mode"):
        problems.append(job.problem("save_mode is a legacy option SeaTunnel's LocalFile does not read: it is "
                                    "ignored", plugin, key="save_mode", severity="warning",
                                    hint="use schema_save_mode and data_save_mode"))
    problems += required_option_problems(plugin, job)
    known = inputs[0] if inputs and all(i is not None for i in inputs) else None
    if known is None:
        return problems
    problems += writer_type_problems(plugin, job, known)
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
    return problems


def _source_schema(plugin: PluginConfig, job: JobConfig) -> tuple[Schema | None, list[Problem]]:
    problems: list[Problem] = []
    fmt = str(plugin.get("file_format_type", "")).strip().lower()
    if plugin.get("tables_configs") is not None or fmt not in SCHEMA_FORMATS:
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


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """Source: the ``schema`` fields (``read_columns`` projected), known when partition columns
    cannot appear (``parse_partition_from_path = false``). Sink: checks ``sink_columns`` and
    ``partition_by`` against the input fields; no output."""
    if plugin.section == SINK:
        return None, _sink_schema(plugin, job, inputs)
    return _source_schema(plugin, job)


# ---------------------------------------------------------------------------------------------
# A store's own options (S3, the object stores, the file servers)
# ---------------------------------------------------------------------------------------------

class StoreBlock:
    """A store's options being checked in a block or a source's ``tables_configs`` item: :meth:`value`
    takes what an item does not set from its block (``shared``), :meth:`report` locates a problem at
    the item's key."""

    def __init__(self, plugin: PluginConfig, job: JobConfig, options: Mapping[str, Any], prefix: str,
                 shared: Mapping[str, Any]):
        self.plugin, self.job, self.options, self.prefix, self.shared = plugin, job, options, prefix, shared
        self.problems: list[Problem] = []

    def value(self, key: str) -> Any:
        found = written(self.options, key)
        return found if found is not None else written(self.shared, key)

    def report(self, message: str, key: str, hint: str | None = None, severity: str = "error") -> None:
        self.problems.append(self.job.problem(message, self.plugin, key=self.prefix + key, hint=hint,
                                              severity=severity))


def check_with_store(plugin: PluginConfig, job: JobConfig, store: Callable[[StoreBlock], None]) -> list[Problem]:
    """The file options' problems (:func:`check`), then ``store``'s over the block, or over each source
    ``tables_configs`` item (which takes the store options it does not set from its block)."""
    problems = check(plugin, job)
    tables = plugin.get("tables_configs")
    if plugin.section == SOURCE and isinstance(tables, list) and tables:
        blocks = [StoreBlock(plugin, job, item, f"tables_configs[{i}].", plugin.options)
                  for i, item in enumerate(tables) if isinstance(item, Mapping)]
    else:
        blocks = [StoreBlock(plugin, job, plugin.options, "", {})]
    for block in blocks:
        store(block)
        problems += block.problems
    return problems
