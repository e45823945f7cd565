"""The field types a SeaTunnel 2.3.8 file sink refuses to write, by format (compile time, no Spark).

SeaTunnel's file sinks (LocalFile, S3File, the file servers, HdfsFile, the object stores) share one writer
per format. Its parquet writer has no TIME and no NULL type, its orc writer no NULL type: the job fails on
the first row ("Unsupported data type"). A sink whose input has such a field, where the input's schema is
known, gets a *not portable* problem at ``file_format_type``; a sink that leaves out an option SeaTunnel's
writer of its format requires (where this project has a default) gets one at that option
(:func:`~...spi.portability.not_portable`: a warning, an error under strict). Top-level fields are checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...spi.portability import not_portable
from .options import written

if TYPE_CHECKING:
    from ...spi.options import JobConfig, PluginConfig, Problem
    from ...spi.schema import Schema

__all__ = ["REFUSED_TYPES", "REQUIRED_OPTIONS", "required_option_problems", "writer_type_problems"]

#: format -> the SeaTunnel types its SeaTunnel 2.3.8 writer refuses, each with what to write instead
REFUSED_TYPES: dict[str, dict[str, str]] = {
    "parquet": {"time": "cast it to a string, or write orc, json, csv or text",
                "null": "give the field a type (CAST), or write json, csv or text"},
    "orc": {"null": "give the field a type (CAST), or write json, csv or text"},
}

#: format -> the sink options SeaTunnel 2.3.8 requires for it (this project defaults them), with what to write
REQUIRED_OPTIONS: dict[str, dict[str, str]] = {
    "xml": {"xml_use_attr_format": "set xml_use_attr_format = false (this project's default) or true"},
}


def required_option_problems(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """A not-portable problem per option the sink's format requires on SeaTunnel and the block leaves out."""
    fmt = str(written(plugin.options, "file_format_type") or "").strip().lower()
    return [not_portable(job, plugin, f"SeaTunnel's {fmt} writer requires '{key}' (the job fails there without "
                         f"it); here it defaults", key="file_format_type", hint=hint)
            for key, hint in REQUIRED_OPTIONS.get(fmt, {}).items() if not plugin.has(key)]


def writer_type_problems(plugin: PluginConfig, job: JobConfig, schema: Schema) -> list[Problem]:
    """A not-portable problem per field of ``schema`` whose type the sink's format refuses on SeaTunnel."""
    fmt = str(written(plugin.options, "file_format_type") or "").strip().lower()
    refused = REFUSED_TYPES.get(fmt, {})
    return [not_portable(job, plugin, f"field '{f.name}' is a {f.type.name.upper()}, which SeaTunnel's {fmt} "
                         f"writer refuses (\"Unsupported data type\")", key="file_format_type",
                         hint=refused[f.type.name])
            for f in schema.fields if f.type.name in refused]
