"""The Paimon source: a table's newest snapshot read by pypaimon on Spark's executors, batch only.

The driver plans the read (the table's splits of its newest snapshot, ``read_columns`` or the query's
columns projected) and hands the splits, pickled, to Spark at the plan's parallelism (at most one task
per split); each task reads its splits with pypaimon as Arrow batches (``mapInArrow``: no row passes
through Python one by one). The query's ``WHERE`` is applied by Spark to the rows read. Every row is an
INSERT (a keyed table's rows as merged at that snapshot). With ``catalog_type = hive`` the table's
directory is the one the metastore records (:mod:`.hive`).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError, root_cause
from ...spi.rows import with_kind
from ..files.reading import at_parallelism
from ..lakehouse import read_columns
from . import compat, hive
from .options import SourceOptions
from .tables import catalog_options, get_table, open_catalog

SPLIT_COLUMN = "split"


def read_splits(catalog: Mapping[str, str], identifier: str, columns: list[str] | None,
                batches: Iterator[Any]) -> Iterator[Any]:
    """The rows of the pickled splits in ``batches`` as Arrow batches (runs on an executor)."""
    table = open_catalog(catalog).get_table(identifier)
    builder = table.new_read_builder()
    if columns:
        builder = builder.with_projection(columns)
    read = builder.new_read()
    for part in batches:
        for blob in part.column(SPLIT_COLUMN).to_pylist():
            yield from read.to_arrow([pickle.loads(blob)]).to_batches()


def _planned(builder: Any, identifier: str) -> list[Any]:
    """The read's splits. A manifest without a field pypaimon expects (Paimon 0.7's, which SeaTunnel 2.3.8
    writes, has no ``_VALUE_STATS_COLS``) is a deterministic error naming the table and the field."""
    try:
        return list(builder.new_scan().plan().splits())
    except KeyError as e:
        raise RuntimeConfigError(
            f"the Paimon table {identifier} has metadata pypaimon cannot read (its manifests lack the field "
            f"{e.args[0]!r}): a table written by an older Paimon, such as SeaTunnel 2.3.8's (Paimon 0.7); "
            "rewrite it with a newer Paimon to read it here") from e


def read(ctx: RunContext, vertex: Vertex, opts: SourceOptions) -> Dataset:
    """The table's newest snapshot at up to ``vertex.parallelism`` partitions (see the module docstring)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    identifier = f"{opts.table.database}.{opts.table.table}"
    if opts.table.catalog_type == "hive" and opts.table.catalog_uri and \
            hive.location(opts.table.catalog_uri, opts.table.database, opts.table.table) is None:
        raise RuntimeConfigError(f"the Paimon table {identifier} does not exist in the Hive metastore "
                                 f"{opts.table.catalog_uri}")
    catalog = catalog_options(opts.table, opts.table.database, opts.table.table)
    table = get_table(open_catalog(catalog), identifier)
    if table is None:
        raise RuntimeConfigError(f"the Paimon table {identifier} does not exist in {catalog['warehouse']}")
    columns = read_columns(opts.read_columns, [str(f.name) for f in table.table_schema.fields],
                           opts.case_sensitive) if opts.read_columns else None
    builder = table.new_read_builder()
    if columns:
        builder = builder.with_projection(columns)
    schema = from_arrow_schema(builder.new_read().to_arrow([]).schema)
    splits = [(pickle.dumps(s),) for s in compat.merged(table, _planned(builder, identifier))]
    tasks = max(1, min(int(vertex.parallelism), len(splits)))
    blobs = ctx.spark.createDataFrame(splits, f"{SPLIT_COLUMN} binary").repartition(tasks)
    df = blobs.mapInArrow(lambda it: read_splits(catalog, identifier, columns, it), schema)
    if opts.where:
        try:
            df = df.where(opts.where)
        except Exception as e:
            raise RuntimeConfigError(f"query: its WHERE condition '{opts.where}' does not apply to the table: "
                                     f"{root_cause(e)}") from e
    return {"default": with_kind(at_parallelism(df, max(1, int(vertex.parallelism))))}
