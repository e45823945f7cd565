"""Postgres-CDC on the Spark driver: the snapshot taken at a slot's consistent point, the streams.

Per captured table, once per stream (its state under the source's state directory,
``<table>/snapshot.json``, says it was done):

1. a publication ``<slot>_pub`` for the table and a logical replication slot (``pgoutput``) are
   created; with ``startup.mode = initial`` the slot is created over a replication connection that
   exports its snapshot (``CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT``): the snapshot sees every
   transaction committed before the slot's consistent point, the slot every one after it;
2. Spark reads the table through JDBC inside that snapshot (``SET TRANSACTION SNAPSHOT``, split
   over the plan's parallelism on an integer primary key) and writes it, as text, to
   ``<table>/snapshot/``; then the state file records the slot and its consistent point.

A run killed before the state file exists starts over (the slot is dropped and created again: no
micro-batch has read from it). The stream (:mod:`.datasource`) then reads the snapshot files and
the changes after the consistent point as its first micro-batch, and the changes after that in
later ones. In BATCH mode the source reads the tables once (no slot).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.rows import ROW_KIND, with_kind
from .datasource import KIND_COLUMN, NAME, SPEC_OPTION, connect
from .options import OptionError, PgCdcOptions, parse
from .pgoutput import lsn_int, lsn_text

log = logging.getLogger("seatunnel.postgres_cdc")
_REGISTERED: set[str] = set()


def options_of(vertex: Vertex) -> PgCdcOptions:
    try:
        return parse(vertex.config)
    except OptionError as e:
        raise RuntimeConfigError(f"option '{e.key}': {e.message}" + (f" ({e.hint})" if e.hint else "")) from None


def slot_name(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, index: int) -> str:
    """``slot.name`` (``_<n>`` appended from the second table on), else one derived from the pipeline."""
    import hashlib

    if opts.slot:
        return opts.slot if index == 0 else f"{opts.slot}_{index}"
    digest = hashlib.sha256(f"{ctx.pipeline_key}\x00{vertex.ref}\x00{opts.tables[index]}".encode()).hexdigest()[:16]
    return f"seatunnel_{digest}"


def _jdbc(spark: Any, opts: PgCdcOptions, env: Any) -> dict[str, str]:
    from ..jdbc.connection import connection_of, ensure_driver

    conn = connection_of({"url": opts.url, "driver": "org.postgresql.Driver", "user": opts.user,
                          "password": opts.password})
    ensure_driver(spark, conn, env)
    return conn.spark_options()


def _typed_read(ctx: RunContext, opts: PgCdcOptions, table: str, parallelism: int, init: str | None = None) -> Any:
    """The table through Spark's JDBC source (inside an exported snapshot when ``init`` is given),
    split on an integer primary key when the plan asks for more than one reader."""
    options = _jdbc(ctx.spark, opts, ctx.plan.env)
    reader = ctx.spark.read.format("jdbc").options(**options).option("dbtable", table).option("fetchsize", "10000")
    if init:
        reader = reader.option("sessionInitStatement", init)
    bounds = _split_bounds(opts, table, init) if parallelism > 1 else None
    if bounds is not None:
        column, low, high = bounds
        reader = (reader.option("partitionColumn", column).option("lowerBound", str(low))
                  .option("upperBound", str(high + 1)).option("numPartitions", str(parallelism)))
    return reader.load()


def _split_bounds(opts: PgCdcOptions, table: str, init: str | None) -> tuple[str, int, int] | None:
    schema, name = table.split(".", 1)
    with connect(opts.conn, autocommit=True) as conn:
        if init:
            conn.execute(init)
        keys = conn.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_index i JOIN pg_attribute a "
            "ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indisprimary AND "
            "i.indrelid = (quote_ident(%s) || '.' || quote_ident(%s))::regclass", (schema, name)).fetchall()
        if len(keys) != 1 or keys[0][1] not in ("integer", "bigint", "smallint"):
            return None
        column = keys[0][0]
        low, high = conn.execute(f'SELECT min("{column}"), max("{column}") FROM {table}').fetchone()
        if init:
            conn.execute("COMMIT")
    return (column, int(low), int(high)) if low is not None else None


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """BATCH: each table once, as it is now."""
    opts = options_of(vertex)
    return {f"{opts.database}.{t}": with_kind(_typed_read(ctx, opts, t, max(1, int(vertex.parallelism))))
            for t in opts.tables}


# ---------------------------------------------------------------------------------------------
# STREAMING
# ---------------------------------------------------------------------------------------------

def _local(uri: str) -> str:
    if uri.startswith("file:"):
        return uri[len("file:"):].replace("///", "/", 1) if uri.startswith("file:///") else uri[len("file:"):]
    if "://" in uri:
        raise RuntimeConfigError(f"Postgres-CDC keeps its snapshot under checkpoint.root, which must be a local (or "
                                 f"shared, mounted) directory here; found {uri}")
    return uri


def _to_text(df: Any) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = []
    for f in df.schema.fields:
        c = F.col(f"`{f.name}`")
        text = F.concat(F.lit("\\x"), F.lower(F.hex(c))) if isinstance(f.dataType, T.BinaryType) else c.cast("string")
        columns.append(text.alias(f.name))
    return df.select(*columns, F.lit(0).cast("tinyint").alias(KIND_COLUMN))


def _publication(conn: Any, name: str, table: str) -> None:
    if conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,)).fetchone() is None:
        conn.execute(f"CREATE PUBLICATION {name} FOR TABLE {table}")


def _drop_slot(conn: Any, slot: str) -> None:
    if conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchone() is not None:
        conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))


def take_snapshot(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, table: str, slot: str,
                  directory: str) -> dict[str, Any]:
    """Create the slot (and publication) and write the table's snapshot at its consistent point."""
    publication = f"{slot}_pub"
    with connect(opts.conn, autocommit=True) as conn:
        _publication(conn, publication, table)
        _drop_slot(conn, slot)  # no state file: nothing has read from an earlier slot of this name
    snapshot_dir = os.path.join(directory, "snapshot")
    if opts.startup_mode == "latest":
        with connect(opts.conn, autocommit=True) as conn:
            row = conn.execute("SELECT lsn::text FROM pg_create_logical_replication_slot(%s, 'pgoutput')",
                               (slot,)).fetchone()
        lsn = lsn_int(row[0])
    else:
        replication = connect(opts.conn, autocommit=True, replication="database")
        try:
            res = replication.pgconn.exec_(f"CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput EXPORT_SNAPSHOT".encode())
            if res.error_message:
                raise RuntimeConfigError(f"cannot create the replication slot {slot}: "
                                         f"{res.error_message.decode(errors='replace').strip()} (the user needs the "
                                         "REPLICATION attribute; the server wal_level = logical)")
            lsn, snapshot = lsn_int(res.get_value(0, 1).decode()), res.get_value(0, 2).decode()
            init = f"BEGIN ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT '{snapshot}'"
            typed = _typed_read(ctx, opts, table, max(1, int(vertex.parallelism)), init)
            _to_text(typed).write.mode("overwrite").parquet(snapshot_dir)
        finally:
            replication.close()
    state = {"slot": slot, "publication": publication, "lsn": lsn, "table": table,
             "schema": (typed.schema.json() if opts.startup_mode != "latest" else None)}
    if state["schema"] is None:
        state["schema"] = _typed_read(ctx, opts, table, 1).schema.json()
    tmp = os.path.join(directory, "snapshot.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
    os.replace(tmp, os.path.join(directory, "snapshot.json"))
    log.info("Postgres-CDC %s: %s captured from LSN %s (slot %s, publication %s)%s", vertex.ref, table,
             lsn_text(lsn), slot, publication,
             "" if opts.startup_mode == "latest" else f"; snapshot written to {snapshot_dir}")
    return state


def _register(spark: Any) -> None:
    from .datasource import PostgresCdcDataSource

    app = f"{spark.sparkContext.applicationId}:{id(spark)}"
    if app not in _REGISTERED:
        spark.dataSource.register(PostgresCdcDataSource)
        _REGISTERED.add(app)


def _stream(ctx: RunContext, opts: PgCdcOptions, state: dict[str, Any], directory: str) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = T.StructType.fromJson(json.loads(state["schema"]))
    text = T.StructType([T.StructField(f.name, T.StringType()) for f in schema.fields] +
                        [T.StructField(KIND_COLUMN, T.ByteType())])
    spec = {"conn": opts.conn, "slot": state["slot"], "publication": state["publication"], "table": state["table"],
            "snapshot": os.path.join(directory, "snapshot"), "snapshot_lsn": state["lsn"],
            "columns": [f.name for f in schema.fields]}
    _register(ctx.spark)
    raw = ctx.spark.readStream.format(NAME).schema(text).option(SPEC_OPTION, json.dumps(spec)).load()
    columns = []
    for f in schema.fields:
        c = F.col(f"`{f.name}`")
        # bytea is '\\x<hex>' in both the snapshot and pgoutput; booleans 't'/'f' cast as 'true'/'false' do
        binary = isinstance(f.dataType, T.BinaryType)
        value = F.unhex(F.substring(c, 3, 1 << 30)) if binary else c.cast(f.dataType)
        columns.append(value.alias(f.name))
    return raw.select(*columns, F.col(KIND_COLUMN).alias(ROW_KIND))


def _refuse_orphan_checkpoint(ctx: RunContext, table: str, root: str) -> None:
    """A pipeline checkpoint whose queries already ran, without this source's state: its offsets
    name a slot that is gone; starting over would lose the changes in between."""
    stream = ctx.stream
    if stream is None:
        return
    queries = os.path.join(_local(stream.checkpoint), "queries")
    if os.path.isdir(queries) and any(os.scandir(queries)):
        raise RuntimeConfigError(f"the stream of {table} has a checkpoint ({queries}) but no capture state under "
                                 f"{root}: delete the pipeline's checkpoint directory to start it over (a new "
                                 "snapshot)")


def read_stream(ctx: RunContext, vertex: Vertex) -> Dataset:
    opts = options_of(vertex)
    root = _local(ctx.state_dir(vertex))
    out: Dataset = {}
    for index, table in enumerate(opts.tables):
        directory = os.path.join(root, table.replace("/", "_"))
        os.makedirs(directory, exist_ok=True)
        marker = os.path.join(directory, "snapshot.json")
        slot = slot_name(ctx, vertex, opts, index)
        if os.path.exists(marker):
            with open(marker, encoding="utf-8") as f:
                state = json.load(f)
        else:
            _refuse_orphan_checkpoint(ctx, table, root)
            state = take_snapshot(ctx, vertex, opts, table, slot, directory)
        out[f"{opts.database}.{table}"] = _stream(ctx, opts, state, directory)
    return out
