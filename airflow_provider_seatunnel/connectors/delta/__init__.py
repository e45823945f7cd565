"""Delta: Delta Lake tables as source (batch, time travel, streaming) and sink (appends, upserts, save
modes), exactly once through Delta's own idempotent commits.

SeaTunnel has no Delta connector; the options follow its lakehouse connectors (Paimon, Iceberg):
:mod:`.options`. The table is a directory (``path``, or ``warehouse`` + ``database`` + ``table``).

* **Source** (:mod:`.source`): Delta's Spark reader at the plan's parallelism; STREAMING from the
  pipeline's checkpoint (a scheduled run reads the commits made since the last one).
* **Sink** (:mod:`.sink`, storage verbs): ``stage`` computes the rows once into Spark's cache, ``publish`` makes them
  one Delta commit that carries the run's identity (``txnAppId``/``txnVersion``), which Delta checks
  inside its optimistic commit: a restore or an overlapping attempt never commits a run twice. Save
  modes apply once, in the run's first commit to the table (``DROP_DATA`` as that commit's overwrite).

Spark needs Delta's jars built for its minor version and a session started with Delta's SQL extension
and catalog (:mod:`.checks`: :class:`~...spi.NeedsJars`, :class:`~...spi.NeedsSession`); the run
checks both (:mod:`.tables`). The user's docs: docs/delta.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    UNRENDERED,
    BatchSource,
    Capabilities,
    ChangeEmitter,
    Connector,
    Dataset,
    Lineage,
    NeedsJars,
    NeedsSession,
    RunContext,
    SchemaInference,
    StreamingSource,
    TableLineage,
    Unnamed,
    Vertex,
)
from ...spi.options import run_time_options
from . import checks
from .evolve import FOLLOWS
from .options import NAME, SPEC, SourceOptions, parse
from .sink import DeltaSinkVerbs

__all__ = ["CONNECTOR", "Delta"]


def _source(vertex: Vertex) -> SourceOptions:
    return run_time_options(parse, vertex, SourceOptions)


def _uri(location: str) -> str | Unnamed:
    """A table directory as OpenLineage names it: ``file:///abs/path``, ``s3://bucket/key`` (S3A's and
    S3N's schemes as S3's), other URIs as written."""
    if UNRENDERED.search(location):
        return Unnamed(f"Delta table {location!r}")
    if location.startswith("/"):
        return "file://" + location.rstrip("/")
    for scheme in ("s3a://", "s3n://"):
        if location.startswith(scheme):
            return "s3://" + location[len(scheme):].rstrip("/")
    if location.startswith("file:") and not location.startswith("file://"):
        return "file:///" + location[len("file:"):].lstrip("/").rstrip("/")
    return location.rstrip("/")


class Delta(Connector, SchemaInference, NeedsJars, NeedsSession, Lineage, TableLineage, ChangeEmitter, BatchSource,
            StreamingSource, DeltaSinkVerbs):
    name = NAME
    #: with primary_keys; without, every row is appended as it is (docs/delta.md)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, deletes=True)
    option_spec = SPEC  # identity: path, warehouse, database, table; the table's two forms: options.table_of
    description = "Reads (batch, time travel, streaming) and writes Delta Lake tables, exactly once."
    #: a CDC source's added, dropped and renamed columns and widened types (:mod:`.evolve`)
    follows_schema_changes = FOLLOWS

    # compile time ------------------------------------------------------------------------------

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)

    #: Delta's Spark jars for the installed PySpark's minor version, its session settings
    jars = staticmethod(checks.delta_jars)
    session_conf = staticmethod(checks.session_conf)

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """A source's rows are INSERTs, but for a stream of the change data feed."""
        if vertex.kind != SOURCE:
            return inputs_change
        return bool(SPEC.run_time(vertex.config, SOURCE)["change_data_feed"])

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """The table's directory as a URI (``file:///data/delta/orders``)."""
        return [_uri(location) for location in checks.assets_of(options)]

    def table_assets(self, options: Mapping[str, Any], table: str) -> list[str | Unnamed]:
        from ..files.placeholders import expand_table_placeholders

        return [_uri(expand_table_placeholders(location, table)) for location in checks.assets_of(options)]

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex, _source(vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read_stream

        return read_stream(ctx, vertex, _source(vertex))


CONNECTOR = Delta()
