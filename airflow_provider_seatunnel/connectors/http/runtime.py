"""The Http source on the Spark driver: one DataFrame of the Python data source (:mod:`.datasource`)
in exactly ``vertex.parallelism`` partitions, with the row-kind column; a streaming one in a
STREAMING job."""

from __future__ import annotations

import json
import logging
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.pysources import register_once
from ...spi.rows import with_kind

log = logging.getLogger("seatunnel.http")



def _register(spark: Any) -> None:
    from .datasource import HttpDataSource

    register_once(spark, HttpDataSource)


def _reader(ctx: RunContext, vertex: Vertex, streaming: bool) -> Any:
    from .datasource import NAME, SPEC_OPTION, checked

    options = checked(vertex.config)
    parallelism = max(1, int(vertex.parallelism))
    spec = {"options": dict(vertex.config), "parallelism": parallelism}
    _register(ctx.spark)
    pages = "no paging" if options.paging is None else (
        f"pages {options.paging.pages[0]}..{options.paging.pages[-1]}" if options.paging.pages
        else f"pages from {options.paging.start_page_number} until one has fewer than {options.paging.batch_size} "
             "records")
    log.info("Http %s: %s %s (%s, format %s)%s with %d reader(s)", vertex.ref, options.method, options.label, pages,
             options.format, " as a stream" if streaming else "", parallelism)
    source = ctx.spark.readStream if streaming else ctx.spark.read
    return source.format(NAME).schema(options.output_schema().to_spark()).option(SPEC_OPTION, json.dumps(spec))


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The responses as rows, in ``vertex.parallelism`` partitions."""
    return {"default": with_kind(_reader(ctx, vertex, streaming=False).load())}


def read_stream(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The responses of one poll per micro-batch, each in ``vertex.parallelism`` partitions."""
    return {"default": with_kind(_reader(ctx, vertex, streaming=True).load())}
