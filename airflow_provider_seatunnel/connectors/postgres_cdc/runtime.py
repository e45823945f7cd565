"""Postgres-CDC on the Spark driver: every table's snapshot taken at one slot's consistent point, the stream.

Once per stream, for all the source's tables (the source's state, ``capture.json`` under its state
directory, says it was done; each table's own under ``<table>/``):

1. one publication ``<slot>_pub`` covering the tables and one logical replication slot
   (``pgoutput``) are created; with ``startup.mode = initial`` the slot is created over a
   replication connection that exports its snapshot (``CREATE_REPLICATION_SLOT ...
   EXPORT_SNAPSHOT``): the snapshot sees every transaction committed before the slot's consistent
   point, the slot every one after it;
2. the driver reads every table inside that snapshot (``SET TRANSACTION SNAPSHOT``, one transaction,
   the values in PostgreSQL's text form, as ``pgoutput`` sends them) and writes it to
   ``<table>/snapshot/``; each table's state records its Spark schema; then the source's state
   records the slot, its consistent point and the tables (:mod:`..cdc.stream`).

A run killed before the source's state exists starts over (the slot is dropped and created again:
no micro-batch has read from it). The one stream (:mod:`.datasource`) then reads the snapshot files
and the changes after the consistent point as its first micro-batch, and the changes after that in
later ones; the runtime splits each micro-batch by table. In BATCH mode the source reads the tables
once (no slot).
"""

from __future__ import annotations

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
    changed_tables,
    chunks_of,
    load_state,
    local_dir,
    refuse_orphan_checkpoint,
    save_state,
    schema_of,
    shared_stream,
    table_dir,
    table_spec,
    write_snapshot,
)
from . import retire
from .datasource import NAME, SPEC_OPTION, connect
from .options import PgCdcOptions, parse
from .pgoutput import lsn_int, lsn_text

log = logging.getLogger("seatunnel.postgres_cdc")
#: rows per snapshot file (and per fetch of the snapshot's cursor)
SNAPSHOT_CHUNK = 50_000


def options_of(vertex: Vertex) -> PgCdcOptions:
    """The vertex's settings; a wrong option is the deterministic ``RuntimeConfigError`` naming it."""
    return run_time_options(parse, vertex, PgCdcOptions)


def slot_name(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, index: int = 0) -> str:
    """The source's one slot, whatever table (``index``) asks: ``slot.name``, else one derived from the
    pipeline and the source."""
    import hashlib

    if opts.slot:
        return opts.slot
    digest = hashlib.sha256(f"{ctx.pipeline_key}\x00{vertex.ref}".encode()).hexdigest()[:16]
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

def _quoted(table: str) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in table.split(".", 1))


def _publication(conn: Any, name: str, tables: tuple[str, ...]) -> None:
    """The publication ``name`` covering exactly ``tables`` (created, or its tables set)."""
    listed = ", ".join(_quoted(t) for t in tables)
    if conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,)).fetchone() is None:
        conn.execute(f"CREATE PUBLICATION {name} FOR TABLE {listed}")
    else:
        conn.execute(f"ALTER PUBLICATION {name} SET TABLE {listed}")


def _drop_slot(conn: Any, slot: str) -> None:
    if conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchone() is not None:
        conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))


def _write_tables(opts: PgCdcOptions, snapshot: str, schemas: dict[str, Any], root: str) -> dict[str, int]:
    """Every table read inside the exported ``snapshot`` (one transaction, values as text) to its
    snapshot directory; the rows of each."""
    counts = {}
    with connect(opts.conn) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        conn.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        for table, schema in schemas.items():
            names = [f.name for f in schema.fields]
            listed = ", ".join('"' + n.replace('"', '""') + '"::text' for n in names)
            with conn.cursor(name="seatunnel_snapshot") as cursor:
                cursor.itersize = SNAPSHOT_CHUNK
                cursor.execute(f"SELECT {listed} FROM {_quoted(table)}")
                directory = os.path.join(table_dir(root, table), "snapshot")
                counts[table] = write_snapshot(chunks_of(cursor, SNAPSHOT_CHUNK), names, directory)
        conn.execute("COMMIT")
    return counts


def capture(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, root: str) -> dict[str, Any]:
    """Create the slot and publication of all the source's tables and write every table's snapshot at
    the slot's consistent point; each table's state, then the source's (written last)."""
    slot = slot_name(ctx, vertex, opts)
    publication = f"{slot}_pub"
    line = retire.lineage(ctx, vertex, opts.conn)
    with connect(opts.conn, autocommit=True) as conn:
        _publication(conn, publication, opts.tables)
        retire.mark(conn, publication, line, slot)
        _drop_slot(conn, slot)  # no source state: nothing has read from an earlier slot of this name
    schemas = {t: _typed_read(ctx, opts, t, 1).schema for t in opts.tables}
    counts: dict[str, int] = {}
    if opts.startup_mode == "latest":
        with connect(opts.conn, autocommit=True) as conn:
            row = conn.execute("SELECT lsn::text FROM pg_create_logical_replication_slot(%s, 'pgoutput')",
                               (slot,)).fetchone()
        lsn = lsn_int(row[0])
        for t in opts.tables:
            write_snapshot(iter(()), [], os.path.join(table_dir(root, t), "snapshot"))
    else:
        replication = connect(opts.conn, autocommit=True, replication="database")
        try:
            res = replication.pgconn.exec_(f"CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput EXPORT_SNAPSHOT".encode())
            if res.error_message:
                raise RuntimeConfigError(f"cannot create the replication slot {slot}: "
                                         f"{res.error_message.decode(errors='replace').strip()} (the user needs the "
                                         "REPLICATION attribute; the server wal_level = logical and a free slot "
                                         "of max_replication_slots)")
            lsn, snapshot = lsn_int(res.get_value(0, 1).decode()), res.get_value(0, 2).decode()
            counts = _write_tables(opts, snapshot, schemas, root)
        finally:
            replication.close()
    for table, schema in schemas.items():
        state = {"slot": slot, "publication": publication, "lsn": lsn, "table": table, "schema": schema.json()}
        if opts.schema_changes:
            start(state, columns(opts, table, schema))
        save_state(table_dir(root, table), state)
    source = {"slot": slot, "publication": publication, "lsn": lsn, "tables": list(opts.tables)}
    save_state(root, source)
    retire.retire(opts.conn, line, slot, ctx.label(vertex))  # the job's earlier captures, now replaced
    log.info("Postgres-CDC %s: %d table(s) captured from LSN %s (one slot %s, publication %s)%s", vertex.ref,
             len(opts.tables), lsn_text(lsn), slot, publication,
             "" if opts.startup_mode == "latest" else f"; {sum(counts.values()):,} snapshot rows written under {root}")
    return source


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


def read_stream(ctx: RunContext, vertex: Vertex) -> Dataset:
    """All the source's tables as one stream over one slot (a :class:`...spi.sharedstream.SharedStream`)."""
    opts = options_of(vertex)
    root = local_dir(ctx.state_dir(vertex), "Postgres-CDC")
    os.makedirs(root, exist_ok=True)
    source = load_state(root)
    release = _hold(ctx, vertex, opts, source)
    try:
        return _stream(ctx, vertex, opts, root, source, release)
    except BaseException:
        release()
        raise


def _hold(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, source: dict[str, Any] | None) -> Any:
    """The lock on the stream's slot, held from before its capture (:mod:`.retire`); a new capture's slot
    must not be one a running stream (another job or attempt with this ``slot.name``) holds."""
    slot = source["slot"] if source is not None else slot_name(ctx, vertex, opts)
    if source is None and retire.in_use(opts.conn, slot):
        raise RuntimeConfigError(f"Postgres-CDC: the replication slot {slot} is in use by a running stream (another "
                                 "job or attempt with this slot.name): give this source a slot.name of its own, or "
                                 "stop that stream first")
    return retire.hold(opts.conn, slot)


def _stream(ctx: RunContext, vertex: Vertex, opts: PgCdcOptions, root: str, source: dict[str, Any] | None,
            release: Any) -> Dataset:
    if source is None:
        refuse_orphan_checkpoint(ctx, ", ".join(opts.tables), root, "Postgres-CDC")
        source = capture(ctx, vertex, opts, root)
    elif sorted(source["tables"]) != sorted(opts.tables):
        raise changed_tables(source["tables"], opts.tables, "Postgres-CDC")
    retire.exists(opts.conn, source["slot"])
    tables, schemas = {}, {}
    for table in opts.tables:
        directory = table_dir(root, table)
        state = load_state(directory)
        if state is None:
            raise RuntimeConfigError(f"Postgres-CDC: the capture state of {table} is missing under {root}: delete "
                                     "the pipeline's checkpoint directory to start it over (a new snapshot)")
        if opts.schema_changes:
            _follow(ctx, vertex, opts, table, state, directory)
        tid = f"{opts.database}.{table}"
        tables[tid] = table_spec(state, os.path.join(directory, "snapshot"), opts.schema_changes)
        schemas[tid] = schema_of(state)
    spec = {"conn": opts.conn, "slot": source["slot"], "publication": source["publication"],
            "snapshot_lsn": source["lsn"], "database": opts.database, "tables": tables}
    _register(ctx.spark)
    return shared_stream(ctx.spark, NAME, SPEC_OPTION, spec, schemas, release)
