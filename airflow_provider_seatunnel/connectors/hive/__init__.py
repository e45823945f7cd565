"""Hive: tables of a Hive metastore, read and written through Spark's Hive support.

The metastore is a property of the Spark session: the connector declares the session settings it
needs (:class:`~...spi.NeedsSession`: ``spark.sql.catalogImplementation=hive`` and
``spark.hadoop.hive.metastore.uris``, plus the block's Hadoop settings), the runtime builds the
pipeline's session with them, and the compiler refuses two Hive blocks naming different metastores
(:mod:`.checks`). Options: :mod:`.options`.

**Source** (:mod:`.source`): an existing text, ORC or Parquet table, ``read_partitions`` and
``read_columns`` applied, at the plan's parallelism. Its schema is known at run time only.

**Sink**, a two-phase commit keyed by run id, pipeline key, sink and upstream table, on an
existing table (SeaTunnel's Hive sink creates none):

* storage verbs (:mod:`.sink`; the engine runs the two phases): ``stage`` writes the rows through
  a staging table created ``LIKE`` the target in a hidden directory under the table's location
  (one Spark write; the target's format, SerDe and partition layout);
* ``publish`` (:mod:`.commits`) claims the slot's journal in one atomic file creation, moves the
  staged files into the partitions' directories and adds each new partition with one metastore
  operation, then records the commit; ``overwrite = true`` sets aside, in the same commit, what
  the written partitions (the table, without partitions) held before the run.
* A restore finishes a claimed commit (or writes nothing when the slot is recorded); an attempt
  overtaken by a newer token raises ``Superseded``; guarantees and limits: docs/hive.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    Connector,
    Dataset,
    Lineage,
    NeedsSession,
    RunContext,
    Unnamed,
    Vertex,
)
from ...spi.options import option
from . import checks
from .options import NAME, SPEC, metastore_uris, session_conf, split_table
from .sink import HiveSinkVerbs

__all__ = ["CONNECTOR", "Hive"]


def assets(options: Mapping[str, Any]) -> list[str | Unnamed]:
    """``hive://host:port/database.table`` (OpenLineage's naming of Hive tables), the first metastore's."""
    table, uri = option(options, "table_name"), option(options, "metastore_uri")
    if table is None or uri is None:
        return [Unnamed("a Hive table the options do not name", at_run_time=False)]
    if "${" in str(table):
        return [Unnamed(f"table_name '{table}'")]
    try:
        database, name = split_table(table)
        first = metastore_uris(uri).split(",")[0]
    except ValueError:
        return [Unnamed(f"table_name '{table}'", at_run_time=False)]
    return [f"hive://{first[len('thrift://'):].rstrip('/')}/{database}.{name}"]


class Hive(Connector, NeedsSession, Lineage, BatchSource, HiveSinkVerbs):
    name = NAME
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, inserts_only=True)
    option_spec = SPEC  # required and identity (table_name, metastore_uri) come from it
    description = "Reads and writes Hive tables (text, ORC, Parquet) through a Hive metastore."

    check = staticmethod(checks.check)

    session_conf = staticmethod(session_conf)

    assets = staticmethod(assets)

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .source import read

        return read(ctx, vertex)


CONNECTOR = Hive()
