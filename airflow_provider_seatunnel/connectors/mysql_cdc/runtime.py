"""MySQL-CDC on the Spark driver: every table's snapshot at one binlog position, then one stream.

Once per stream, for all the source's tables (the source's ``capture.json`` under its state
directory says it was done, each table's own under ``<table>/``, :mod:`..cdc.stream`):

1. one consistent snapshot and the binlog position it stands at: MariaDB gives the position of a
   ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` itself (``binlog_snapshot_file``/``_position``),
   no lock taken; MySQL holds ``FLUSH TABLES WITH READ LOCK`` while the transaction starts and the
   position is read (``RELOAD`` privilege);
2. every table read in that transaction, streamed to ``<table>/snapshot/`` as Parquet files of text
   values (:data:`SNAPSHOT_CHUNK` rows per file) by the driver; the columns of all the tables come
   from one ``information_schema`` query (SeaTunnel's MySQL type mapping, :func:`spark_type`);
3. each table's state records its Spark schema, then the source's the position and the tables.

The stream (:mod:`.datasource`) reads the snapshot files and the binlog after the position in its
first micro-batch, the binlog since in later ones, one replica connection for every table. A run
killed before the source's state exists takes the snapshot again. With ``startup.mode = latest`` the
stream starts at the binlog's end. BATCH mode reads the tables once.
"""

from __future__ import annotations

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
    text_schema,
    typed,
    write_snapshot,
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
    return table_schemas(spark, opts, (table,))[table]


def table_schemas(spark: Any, opts: MyCdcOptions, tables: tuple[str, ...]) -> dict[str, Any]:
    """The Spark schemas of ``tables`` (``database.table``) from one ``information_schema`` query."""
    from pyspark.sql import types as T

    databases = sorted({t.split(".", 1)[0] for t in tables})
    with connect(opts.conn) as c, c.cursor() as cur:
        cur.execute("SELECT table_schema, table_name, column_name, data_type, column_type, numeric_precision, "
                    "numeric_scale FROM information_schema.columns WHERE table_schema IN (" +
                    ", ".join(["%s"] * len(databases)) + ") ORDER BY table_schema, table_name, ordinal_position",
                    databases)
        rows = cur.fetchall()
    found: dict[str, list[Any]] = {}
    for r in rows:
        found.setdefault(f"{r[0]}.{r[1]}", []).append(r[2:])
    missing = [t for t in tables if t not in found]
    if missing:
        raise RuntimeConfigError(f"table {', '.join(missing)} does not exist (or the user may not see it)")
    return {t: T.StructType([T.StructField(str(r[0]), T._parse_datatype_string(spark_type(r[1], r[2], r[3], r[4])))
                             for r in found[t]]) for t in tables}


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
    cursor.execute("SELECT " + ", ".join(f"`{c}`" for c in columns) + " FROM " +
                   ".".join(f"`{p}`" for p in table.split(".", 1)))
    return write_snapshot(chunks_of(cursor, SNAPSHOT_CHUNK), columns, directory)


def take_snapshots(spark: Any, opts: MyCdcOptions, tables: tuple[str, ...], root: str,
                   directory_of: Any = None) -> dict[str, Any]:
    """Every table's snapshot in one consistent transaction, at one binlog position: each table's state
    saved in its directory (``directory_of(table)``, default ``<root>/<table>``); the source's state
    (the position and tables), which the caller saves."""
    import pymysql.cursors

    directory_of = directory_of or (lambda t: table_dir(root, t))
    schemas = table_schemas(spark, opts, tables)
    counts: dict[str, int] = {}
    with connect(opts.conn) as c:
        mariadb = "mariadb" in str(c.get_server_info()).lower()
        if opts.startup_mode == "latest":
            position = binlog_end(opts.conn)
            for table in tables:
                counts[table] = write_snapshot(iter(()), [], os.path.join(directory_of(table), "snapshot"))
        else:
            with c.cursor(pymysql.cursors.SSCursor) as cursor:
                cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                position = _snapshot_position(cursor, mariadb)
                for table in tables:
                    counts[table] = _write_snapshot(cursor, table, [f.name for f in schemas[table].fields],
                                                    os.path.join(directory_of(table), "snapshot"))
                cursor.execute("COMMIT")
    for table in tables:
        state = {"table": table, "position": position, "schema": schemas[table].json(), "mariadb": mariadb,
                 "rows": counts[table]}
        if opts.schema_changes:
            start(state, table_columns(opts, table, schemas[table]))
            state["ddl_scanned"] = position
        save_state(directory_of(table), state)
    log.info("MySQL-CDC: %d table(s) captured from binlog %s:%d (%d snapshot rows)", len(tables), position["file"],
             position["pos"], sum(counts.values()))
    return {"position": position, "mariadb": mariadb, "tables": list(tables)}


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
    """All the source's tables as one stream read by one replica connection (a
    :class:`...spi.sharedstream.SharedStream`)."""
    opts = options_of(vertex)
    root = local_dir(ctx.state_dir(vertex), "MySQL-CDC")
    os.makedirs(root, exist_ok=True)
    server_id = opts.server_id(0, f"{ctx.pipeline_key}:{vertex.ref}")
    source = load_state(root)
    if source is None:
        refuse_orphan_checkpoint(ctx, ", ".join(opts.tables), root, "MySQL-CDC")
        source = take_snapshots(ctx.spark, opts, opts.tables, root)
        save_state(root, source)
    elif sorted(source["tables"]) != sorted(opts.tables):
        raise changed_tables(source["tables"], opts.tables, "MySQL-CDC")
    tables, schemas = {}, {}
    for table in opts.tables:
        directory = table_dir(root, table)
        state = load_state(directory)
        if state is None:
            raise RuntimeConfigError(f"MySQL-CDC: the capture state of {table} is missing under {root}: delete the "
                                     "pipeline's checkpoint directory to start it over (a new snapshot)")
        if opts.schema_changes:
            _follow(ctx, vertex, opts, table, state, directory, server_id)
        tables[table] = table_spec(state, os.path.join(directory, "snapshot"), opts.schema_changes)
        schemas[table] = schema_of(state)
    spec = {"conn": opts.conn, "snapshot_position": source["position"], "server_id": server_id,
            "mariadb": source["mariadb"], "tables": tables}
    _register(ctx.spark)
    return shared_stream(ctx.spark, NAME, SPEC_OPTION, spec, schemas)


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """BATCH: every table once, as it is now: one consistent read of all the tables on the driver, kept
    in Spark's cache (the files it went through are removed)."""
    import shutil
    import tempfile

    opts = options_of(vertex)
    out: Dataset = {}
    directory = tempfile.mkdtemp(prefix="seatunnel-mysql-cdc-")
    try:
        take_snapshots(ctx.spark, opts, opts.tables, directory)
        for table in opts.tables:
            state = load_state(table_dir(directory, table))
            assert state is not None
            schema = schema_of(state)
            path = os.path.join(table_dir(directory, table), "snapshot")
            raw = ctx.spark.read.schema(text_schema(schema)).parquet(path) \
                if state["rows"] else ctx.spark.createDataFrame([], text_schema(schema))
            out[table] = ctx.materialize(with_kind(typed(raw, schema)))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return out
