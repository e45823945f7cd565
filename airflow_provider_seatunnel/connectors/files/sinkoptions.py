"""The options of a file sink's write and the save-mode action that defers a drop to the commit,
shared by every file store's sink (LocalFile, S3File and the stores built on it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi.options import as_list
from .options import CODECS, DEFAULT_DELIMITER, DEFAULT_FILE_NAME, config_error, count, flag, format_of, opt
from .placeholders import java_pattern_problem


def sink_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The options of one table's write, read and checked once."""
    fmt = format_of(config)
    codec = str(opt(config, "compress_codec", "none")).strip().lower()
    if codec not in CODECS[fmt]:
        raise config_error(f"compress_codec {codec!r} is not available for {fmt} files: use one of "
                           + ", ".join(CODECS[fmt]))
    row_delimiter = opt(config, "row_delimiter", "\n")
    expression = str(opt(config, "file_name_expression", DEFAULT_FILE_NAME))
    if not expression.strip():
        expression = DEFAULT_FILE_NAME
    time_format = str(opt(config, "filename_time_format", "yyyy.MM.dd"))
    problem = java_pattern_problem(time_format)
    if problem:
        raise config_error(f"filename_time_format: {problem}")
    return {
        "format": fmt, "codec": codec,
        "delimiter": "," if fmt == "csv" else str(opt(config, "field_delimiter", DEFAULT_DELIMITER, "delimiter")),
        "row_delimiter": str(row_delimiter) if row_delimiter != "" else "\n",
        "header": flag(config, "enable_header_write", False),
        "xml_root_tag": str(opt(config, "xml_root_tag", "RECORDS")),
        "xml_row_tag": str(opt(config, "xml_row_tag", "RECORD")),
        "xml_attr": flag(config, "xml_use_attr_format", False),
        "sheet_name": opt(config, "sheet_name"),  # excel; its header is written unless set false
        "excel_header": flag(config, "enable_header_write", True),
        "encoding": str(opt(config, "encoding", "UTF-8")),
        "sink_columns": [str(c) for c in as_list(opt(config, "sink_columns"))],
        "partition_by": [str(c) for c in as_list(opt(config, "partition_by"))],
        "partition_dir_expression": opt(config, "partition_dir_expression"),
        "partition_in_file": flag(config, "is_partition_field_write_in_file", False),
        "file_name_expression": expression, "filename_time_format": time_format,
        "batch_size": count(config, "batch_size", 1000000, 1),
        "date": str(opt(config, "date_format", "yyyy-MM-dd")),
        "datetime": str(opt(config, "datetime_format", "yyyy-MM-dd HH:mm:ss")),
        "time": str(opt(config, "time_format", "HH:mm:ss")),
    }


#: the action a save mode reports when the target's current content goes at commit time
DROP_AT_COMMIT = "drop at commit:"


def drops_at_commit(actions: list[str]) -> bool:
    return any(a.startswith(DROP_AT_COMMIT) for a in actions)
