"""Sql's options, declared once: ``query`` (one Spark SQL SELECT) and ``watermark`` (STREAMING)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi.optionspec import Option, OptionSpec

__all__ = ["SPEC", "WATERMARK_KEY", "query_of", "watermark_of"]

WATERMARK_KEY = "watermark"

SPEC = OptionSpec((
    Option("query", required=True, description="One Spark SQL SELECT over the inputs (each named by its table)."),
    Option(WATERMARK_KEY, "any", description="STREAMING: { column, delay } (or a list of them), the event-time "
           "watermark of an input column a windowed aggregation needs."),
))


def query_of(options: Mapping[str, Any]) -> str | None:
    """The block's query when the spec finds nothing wrong with the block; None otherwise (it reports why)."""
    o = SPEC.valid(options)
    return None if o is None else o["query"]


def watermark_of(options: Mapping[str, Any]) -> Any:
    """The ``watermark`` option as written (None when unset): :func:`.streaming.read_watermarks` reads it."""
    return SPEC.parse(options)[WATERMARK_KEY]
