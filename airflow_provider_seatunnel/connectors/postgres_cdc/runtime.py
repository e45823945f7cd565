"""Postgres-CDC on the Spark driver: the snapshot taken at a slot's consistent point, the streams.

Per captured table, once per stream (its state under the source's state directory,
``<table>/capture.json``, says it was done):

1. a publication ``<slot>_pub`` for the table and a logical replication slot (``pgoutput``) are
   created; with ``startup.mode = initial`` the slot is created over a replication connection that
   exports its snapshot (``CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT``): the snapshot sees every
   transaction committed before the slot's consistent point, the slot every one after it;
2. Spark reads the table through JDBC inside that snapshot (``SET TRANSACTION SNAPSHOT``, split
   over the plan's parallelism on an integer primary key) and writes it, as text, to
   ``<table>/snapshot/``; then the state file (``<table>/capture.json``) records the slot and its
   consistent point (:mod:`..cdc.stream`).

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
from ...spi.options import run_time_options
from ...spi.pysources import register_once
from ...spi.rows import with_kind
from ..cdc.schemachange import Column, follow, start
from ..cdc.stream import (
    as_text,
    load_state,
    local_dir,
    refuse_orphan_checkpoint,
    save_state,
    schema_of,
    table_dir,
    text_schema,
    typed,
)
from .datasource import NAME, SPEC_OPTION, connect
from .options import PgCdcOptions, parse
from .pgoutput import lsn_int, lsn_text

log = logging.getLogger("seatunnel.postgres_cdc")


def options_of(vertex: Vertex) -> PgCdcOptions:
    """The vertex's settings; a wrong option is the deterministic ``RuntimeConfigError`` naming it."""
    return run_time_options(parse, vertex, PgCdcOptions)


def slot_name(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, index: int) -> str:
    """``slot.name`` (``_<n>`` appended from the second table on), else one derived from the pipeline."""
    import hashlib

    if opts.slot:
        return opts.slot if index == 0 else f"{opts.slot}_{index}"
    digest = hashlib.sha256(f"{ctx.pipeline_key}\x00{vertex.ref}\x00{opts.tables[index]}".encode()).hexdigest()[:16]
    return f"seatunnel_{digest}"


def _jdbc(spark: Any, opts: PgCdcOptions, env: Any) -> dict[str, str]:
    from ..sqlclient.connection import connection_of, ensure_driver

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
            table_df = _typed_read(ctx, opts, table, max(1, int(vertex.parallelism)), init)
            as_text(table_df).write.mode("overwrite").parquet(snapshot_dir)
        finally:
            replication.close()
    schema = (table_df if opts.startup_mode != "latest" else _typed_read(ctx, opts, table, 1)).schema
    state = {"slot": slot, "publication": publication, "lsn": lsn, "table": table, "schema": schema.json()}
    if opts.schema_changes:
        start(state, columns(opts, table, schema))
    save_state(directory, state)
    log.info("Postgres-CDC %s: %s captured from LSN %s (slot %s, publication %s)%s", vertex.ref, table,
             lsn_text(lsn), slot, publication,
             "" if opts.startup_mode == "latest" else f"; snapshot written to {snapshot_dir}")
    return state


def columns(opts: PgCdcOptions, table: str, schema: Any) -> list[Column]:
    """The table's columns now (``schema``: their Spark types), each with its ``attnum`` (stable across
    renames) and the type pgoutput names in its relation messages."""
    spark_types = {f.name: f.dataType.simpleString() for f in schema.fields}
    namespace, name = table.split(".", 1)
    with connect(opts.conn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.atttypid, a.atttypmod "
            "FROM pg_attribute a WHERE a.attrelid = (quote_ident(%s) || '.' || quote_ident(%s))::regclass "
            "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum", (namespace, name)).fetchall()
    return [Column(r[1], spark_types.get(r[1], "string"), r[2], int(r[0]), f"{r[3]}:{r[4]}") for r in rows]


def _follow(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, table: str, state: dict[str, Any],
            directory: str) -> None:
    """``schema-changes.enabled``: record the table's schema changes since the last run in its state."""
    schema = _typed_read(ctx, opts, table, 1).schema
    now = columns(opts, table, schema)
    start(state, now)
    with connect(opts.conn, autocommit=True) as conn:
        position = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
    changes = follow(state, now, schema, position)
    save_state(directory, state)
    if changes:
        log.info("Postgres-CDC %s: %s changed: %s; the stream follows from now on", vertex.ref, table,
                 "; ".join(c.describe() for c in changes))


def _register(spark: Any) -> None:
    from .datasource import PostgresCdcDataSource

    register_once(spark, PostgresCdcDataSource)


def _stream(ctx: RunContext, opts: PgCdcOptions, state: dict[str, Any], directory: str) -> Any:
    schema = schema_of(state)
    spec = {"conn": opts.conn, "slot": state["slot"], "publication": state["publication"], "table": state["table"],
            "snapshot": os.path.join(directory, "snapshot"), "snapshot_lsn": state["lsn"],
            "columns": [f.name for f in schema.fields], "schema_changes": opts.schema_changes,
            "shapes": state.get("shapes") if opts.schema_changes else None}
    _register(ctx.spark)
    raw = ctx.spark.readStream.format(NAME).schema(text_schema(schema)).option(SPEC_OPTION, json.dumps(spec)).load()
    return typed(raw, schema)


def read_stream(ctx: RunContext, vertex: Vertex) -> Dataset:
    opts = options_of(vertex)
    root = local_dir(ctx.state_dir(vertex), "Postgres-CDC")
    out: Dataset = {}
    for index, table in enumerate(opts.tables):
        directory = table_dir(root, table)
        state = load_state(directory)
        if state is None:
            refuse_orphan_checkpoint(ctx, table, root, "Postgres-CDC")
            state = take_snapshot(ctx, vertex, opts, table, slot_name(ctx, vertex, opts, index), directory)
        elif opts.schema_changes:
            _follow(ctx, vertex, opts, table, state, directory)
        out[f"{opts.database}.{table}"] = _stream(ctx, opts, state, directory)
    return out
