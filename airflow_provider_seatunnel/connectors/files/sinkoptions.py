"""The options of a file sink's write and the save-mode action that defers a drop to the commit,
shared by every file store's sink (LocalFile, S3File and the stores built on it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...spi import SINK
from ..temporal import kept_fractions
from .options import (
    CODECS,
    DATA_SAVE_MODES,
    DEFAULT_DELIMITER,
    DEFAULT_FILE_NAME,
    SCHEMA_SAVE_MODES,
    config_error,
    format_of,
)
from .optionspec import FILE_SPEC
from .placeholders import java_pattern_problem


def sink_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The options of one table's write: typed by the file spec once, then the rules it cannot state
    (the format's codecs, the file name's time pattern)."""
    fmt = format_of(config)
    o = FILE_SPEC.run_time(config, SINK)
    codec = o["compress_codec"].strip().lower()
    if codec not in CODECS[fmt]:
        raise config_error(f"compress_codec {codec!r} is not available for {fmt} files: use one of "
                           + ", ".join(CODECS[fmt]))
    expression = o["file_name_expression"] if o["file_name_expression"].strip() else DEFAULT_FILE_NAME
    problem = java_pattern_problem(o["filename_time_format"])
    if problem:
        raise config_error(f"filename_time_format: {problem}")
    header = o["enable_header_write"]
    return {
        "format": fmt, "codec": codec,
        "delimiter": "," if fmt == "csv" else (o["field_delimiter"] if o.given("field_delimiter")
                                               else DEFAULT_DELIMITER),
        "row_delimiter": o["row_delimiter"] or "\n",
        "header": bool(header), "quote_mode": o["csv_string_quote_mode"],
        "xml_root_tag": o["xml_root_tag"], "xml_row_tag": o["xml_row_tag"], "xml_attr": o["xml_use_attr_format"],
        "xml_whitespace": o["xml_whitespace"],
        "sheet_name": o["sheet_name"],  # excel; its header is written unless set false
        "excel_header": header is not False,
        "encoding": o["encoding"],
        "sink_columns": [str(c) for c in o["sink_columns"] or ()],
        "partition_by": [str(c) for c in o["partition_by"] or ()],
        "partition_dir_expression": o["partition_dir_expression"],
        "partition_in_file": o["is_partition_field_write_in_file"],
        "file_name_expression": expression, "filename_time_format": o["filename_time_format"],
        "batch_size": o["batch_size"], "transactional": o["is_enable_transaction"],
        "date": o["date_format"], "datetime": o["datetime_format"], "time": o["time_format"],
        "fractions": kept_fractions(o.given),
        "parquet_timestamp_unit": o["parquet_timestamp_unit"],  # unset formats keep a value's fraction of a second
    }


def save_modes(config: Mapping[str, Any], error: Callable[[str], Exception] = config_error) -> tuple[str, str]:
    """``schema_save_mode`` and ``data_save_mode`` upper-case (their declared defaults when unset); a mode
    outside :data:`.options.SCHEMA_SAVE_MODES` / :data:`.options.DATA_SAVE_MODES` raises ``error(message)``."""
    o = FILE_SPEC.run_time(config, SINK)
    modes = []
    for key, allowed in (("schema_save_mode", SCHEMA_SAVE_MODES), ("data_save_mode", DATA_SAVE_MODES)):
        value = o[key].strip().upper()
        if value not in allowed:
            raise error(f"unknown {key} {value!r}: use one of {', '.join(allowed)}")
        modes.append(value)
    return modes[0], modes[1]


#: the action a save mode reports when the target's current content goes at commit time
DROP_AT_COMMIT = "drop at commit:"


def drops_at_commit(actions: list[str]) -> bool:
    return any(a.startswith(DROP_AT_COMMIT) for a in actions)
