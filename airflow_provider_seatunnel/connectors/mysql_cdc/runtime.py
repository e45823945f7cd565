"""MySQL-CDC on the Spark driver: each table's snapshot at a binlog position, then its stream.

Per captured table, once per stream (``<table>/capture.json`` under the source's state directory
says it was done, :mod:`..cdc.stream`):

1. a consistent snapshot and the binlog position it stands at: MariaDB gives the position of a
   ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` itself (``binlog_snapshot_file``/``_position``),
   no lock taken; MySQL holds ``FLUSH TABLES WITH READ LOCK`` while the transaction starts and the
   position is read (``RELOAD`` privilege);
2. the table read in that transaction, streamed to ``<table>/snapshot/`` as Parquet files of text
   values (:data:`SNAPSHOT_CHUNK` rows per file) by the driver;
3. the state file records the position and the table's Spark schema (SeaTunnel's MySQL type
   mapping, :func:`spark_type`).

The stream (:mod:`.datasource`) reads the snapshot files and the binlog after the position in its
first micro-batch, the binlog since in later ones. A run killed before the state file exists takes
the snapshot again. With ``startup.mode = latest`` the stream starts at the binlog's end.
BATCH mode reads the tables once.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError, RuntimeConfigError
from ...spi.options import run_time_options
from ...spi.pysources import register_once
from ...spi.rows import with_kind
from ..cdc.schemachange import Column, follow, start
from ..cdc.stream import (
    KIND_COLUMN,
    load_state,
    local_dir,
    refuse_orphan_checkpoint,
    save_state,
    schema_of,
    table_dir,
    text_schema,
    text_value,
    typed,
)
from .datasource import NAME, SPEC_OPTION, binlog_end, connect
from .options import MyCdcOptions, parse
from .schemachange import compose, require_row_metadata, scan

log = logging.getLogger("seatunnel.mysql_cdc")
SNAPSHOT_CHUNK = 50_000
_INTEGERS = {"tinyint": ("tinyint", "smallint"), "smallint": ("smallint", "int"), "mediumint": ("int", "int"),
             "int": ("int", "bigint"), "integer": ("int", "bigint"), "bigint": ("bigint", "decimal(20,0)")}


def options_of(vertex: Vertex) -> MyCdcOptions:
    """The vertex's settings; a wrong option is the deterministic ``RuntimeConfigError`` naming it."""
    return run_time_options(parse, vertex, MyCdcOptions)


def spark_type(data_type: str, column_type: str, precision: Any, scale: Any) -> str:
    """A MySQL column's Spark type, as SeaTunnel maps MySQL types (DDL string)."""
    t, full = data_type.lower(), column_type.lower()
    if (t == "tinyint" and full.startswith("tinyint(1)")) or (t == "bit" and full in ("bit(1)", "bit")):
        return "boolean"
    if t in _INTEGERS:
        return _INTEGERS[t][1 if "unsigned" in full else 0]
    if t in ("float",):
        return "float"
    if t in ("double", "real"):
        return "double"
    if t in ("decimal", "numeric"):
        p, s = int(precision or 10), int(scale or 0)
        return f"decimal({p},{s})" if p <= 38 else "string"
    if t == "date":
        return "date"
    if t in ("datetime", "timestamp"):
        return "timestamp_ntz"
    if t == "time":
        return "time"
    if t == "year":
        return "int"
    if t in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bit", "geometry"):
        return "binary"
    return "string"  # char, varchar, text, enum, set, json


def table_schema(spark: Any, opts: MyCdcOptions, table: str) -> Any:
    """The table's Spark schema from ``information_schema``."""
    database, name = table.split(".", 1)
    with connect(opts.conn) as c, c.cursor() as cur:
        cur.execute("SELECT column_name, data_type, column_type, numeric_precision, numeric_scale FROM "
                    "information_schema.columns WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
                    (database, name))
        rows = cur.fetchall()
    if not rows:
        raise RuntimeConfigError(f"table {table} does not exist (or the user may not see it)")
    ddl = ", ".join(f"`{r[0]}` {spark_type(r[1], r[2], r[3], r[4])}" for r in rows)
    return spark.createDataFrame([], ddl).schema


def _snapshot_position(cursor: Any, mariadb: bool) -> dict[str, Any]:
    """Start the consistent snapshot on ``cursor``'s connection; the binlog position it stands at."""
    if mariadb:
        cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cursor.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
        status = {k.lower(): v for k, v in cursor.fetchall()}
        return {"file": status["binlog_snapshot_file"], "pos": int(status["binlog_snapshot_position"])}
    cursor.execute("FLUSH TABLES WITH READ LOCK")
    try:
        cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cursor.execute("SHOW MASTER STATUS")
        row = cursor.fetchone()
    finally:
        cursor.execute("UNLOCK TABLES")
    return {"file": row[0], "pos": int(row[1])}


def _write_snapshot(cursor: Any, table: str, columns: list[str], directory: str) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        os.remove(os.path.join(directory, old))
    schema = pa.schema([pa.field(c, pa.string()) for c in columns] + [pa.field(KIND_COLUMN, pa.int8())])
    cursor.execute("SELECT " + ", ".join(f"`{c}`" for c in columns) + " FROM " +
                   ".".join(f"`{p}`" for p in table.split(".", 1)))
    rows, part = 0, 0
    while True:
        chunk = cursor.fetchmany(SNAPSHOT_CHUNK)
        if not chunk:
            break
        arrays = [pa.array([text_value(r[i]) for r in chunk], pa.string()) for i in range(len(columns))]
        arrays.append(pa.array([0] * len(chunk), pa.int8()))
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), os.path.join(directory, f"part-{part:05d}.parquet"))
        rows, part = rows + len(chunk), part + 1
    return rows


def take_snapshot(spark: Any, opts: MyCdcOptions, table: str, directory: str) -> dict[str, Any]:
    import pymysql.cursors

    schema = table_schema(spark, opts, table)
    columns = [f.name for f in schema.fields]
    with connect(opts.conn) as c:
        mariadb = "mariadb" in str(c.get_server_info()).lower()
        snapshot_dir = os.path.join(directory, "snapshot")
        if opts.startup_mode == "latest":
            position, rows = binlog_end(opts.conn), 0
            _write_snapshot_empty(snapshot_dir)
        else:
            with c.cursor(pymysql.cursors.SSCursor) as cursor:
                cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                position = _snapshot_position(cursor, mariadb)
                rows = _write_snapshot(cursor, table, columns, snapshot_dir)
                cursor.execute("COMMIT")
    state = {"table": table, "position": position, "schema": schema.json(), "mariadb": mariadb, "rows": rows}
    if opts.schema_changes:
        start(state, table_columns(opts, table, schema))
        state["ddl_scanned"] = position
    save_state(directory, state)
    log.info("MySQL-CDC: %s captured from binlog %s:%d (%d snapshot rows)", table, position["file"], position["pos"],
             rows)
    return state


def _write_snapshot_empty(directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        os.remove(os.path.join(directory, old))


def table_columns(opts: MyCdcOptions, table: str, schema: Any) -> list[Column]:
    """The table's columns now (``schema``: their Spark types) with their MySQL types."""
    spark_types = {f.name: f.dataType.simpleString() for f in schema.fields}
    database, name = table.split(".", 1)
    with connect(opts.conn) as c, c.cursor() as cur:
        cur.execute("SELECT column_name, column_type FROM information_schema.columns WHERE table_schema = %s AND "
                    "table_name = %s ORDER BY ordinal_position", (database, name))
        rows = cur.fetchall()
    return [Column(r[0], spark_types.get(r[0], "string"), str(r[1])) for r in rows]


def _follow(ctx: RunContext, vertex: Vertex, opts: MyCdcOptions, table: str, state: dict[str, Any],
            directory: str, server_id: int) -> None:
    """``schema-changes.enabled``: record the table's schema changes since the last run in its state: its
    columns now, with the renames the binlog logged since the last run (read again until no ALTER
    TABLE came in between, so that both tell the same state)."""
    position = dict(state.get("ddl_scanned") or state["position"])
    pairs: list[tuple[str, str]] = []
    for _ in range(5):
        found, position = scan(opts.conn, server_id, table, position)
        pairs.extend(found or [])
        schema = table_schema(ctx.spark, opts, table)
        now = table_columns(opts, table, schema)
        later, after = scan(opts.conn, server_id, table, position)
        if later is None:
            break
        pairs.extend(later)
        position = after
    else:
        raise PipelineError(f"{table} keeps changing its columns: its schema changes cannot be followed now")
    start(state, now)
    changes = follow(state, now, schema, f"{position['file']}:{position['pos']}", compose({}, pairs))
    require_row_metadata(opts.conn, changes)
    state["ddl_scanned"] = position
    save_state(directory, state)
    if changes:
        log.info("MySQL-CDC %s: %s changed: %s; the stream follows from now on", vertex.ref, table,
                 "; ".join(c.describe() for c in changes))


def _register(spark: Any) -> None:
    from .datasource import MySqlCdcDataSource

    register_once(spark, MySqlCdcDataSource)


def read_stream(ctx: RunContext, vertex: Vertex) -> Dataset:
    opts = options_of(vertex)
    root = local_dir(ctx.state_dir(vertex), "MySQL-CDC")
    out: Dataset = {}
    _register(ctx.spark)
    for index, table in enumerate(opts.tables):
        directory = table_dir(root, table)
        server_id = opts.server_id(index, f"{ctx.pipeline_key}:{vertex.ref}")
        state = load_state(directory)
        if state is None:
            refuse_orphan_checkpoint(ctx, table, root, "MySQL-CDC")
            state = take_snapshot(ctx.spark, opts, table, directory)
        elif opts.schema_changes:
            _follow(ctx, vertex, opts, table, state, directory, server_id)
        schema = schema_of(state)
        spec = {"conn": opts.conn, "table": table, "columns": [f.name for f in schema.fields],
                "snapshot": os.path.join(directory, "snapshot"), "snapshot_position": state["position"],
                "server_id": server_id, "mariadb": state["mariadb"], "schema_changes": opts.schema_changes,
                "shapes": state.get("shapes") if opts.schema_changes else None}
        raw = ctx.spark.readStream.format(NAME).schema(text_schema(schema)).option(SPEC_OPTION, json.dumps(spec)).load()
        out[table] = typed(raw, schema)
    return out


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """BATCH: each table once, as it is now: one consistent read per table on the driver, kept in
    Spark's cache (the files it went through are removed)."""
    import shutil
    import tempfile

    opts = options_of(vertex)
    out: Dataset = {}
    for table in opts.tables:
        directory = tempfile.mkdtemp(prefix="seatunnel-mysql-cdc-")
        try:
            state = take_snapshot(ctx.spark, opts, table, directory)
            schema = schema_of(state)
            raw = ctx.spark.read.schema(text_schema(schema)).parquet(os.path.join(directory, "snapshot")) \
                if state["rows"] else ctx.spark.createDataFrame([], text_schema(schema))
            out[table] = ctx.materialize(with_kind(typed(raw, schema)))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    return out
