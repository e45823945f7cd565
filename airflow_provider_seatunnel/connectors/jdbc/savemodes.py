"""The Jdbc sink's save modes: ``schema_save_mode`` (create, recreate, require the target table)
then ``data_save_mode`` (drop the data, append, require it empty, run ``custom_sql``).

``DROP_DATA`` deletes nothing here: the rows are deleted by the run's first commit into the
target, in the transaction that inserts the new rows (:mod:`.commit`), so a failed or killed run
leaves the target as it was. ``RECREATE_SCHEMA`` drops and creates the table here, before the
data is written (MySQL cannot drop and create a table inside a transaction).

They run once per run, sink and target: a row in ``seatunnel_savemodes``, inserted first in the
transaction of the actions, keeps retries and the other pipelines of a split (which write the same
sink) from repeating them; a STREAMING job applies them once per stream. On MySQL, where DDL
commits the open transaction, a named lock serializes the attempts instead and the row is inserted
after the actions. Created tables get their
columns from the data's Spark types (:meth:`..sqlclient.dialects.Dialect.sql_type`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.rows import HIDDEN
from ...spi.twophase import digest
from ..sqlclient.connection import connect, execute, pool_of, query, rollback_quietly, transaction
from ..sqlclient.errors import state_of, statement_errors
from .bulk import batched, chunks, in_list, run_all
from .commit import SAVEMODES_TABLE
from .options import config_error, sink_options, text
from .target import Target, listed_tables, resolve_keys, table_exists, target_of

log = logging.getLogger("seatunnel.jdbc")

#: what ``DROP_DATA`` reports: the rows go in the run's first commit into the target
DROP_AT_COMMIT = "drop at commit:"


def create_table_sql(target: Target, schema: Any, config: Mapping[str, Any]) -> str:
    """CREATE TABLE for the target from the data's Spark schema (column types:
    :meth:`..sqlclient.dialects.Dialect.sql_type`; primary key from primary_keys)."""
    dialect = target.dialect
    if schema is None:
        raise config_error(f"cannot create {target.label}: its columns are not known")
    fields = [f for f in schema.fields if f.name not in HIDDEN]
    keys = resolve_keys(target.primary_keys, [f.name for f in fields])
    columns = []
    for f in fields:
        sql_type = dialect.field_type(f, key=f.name in keys)
        if sql_type is None:
            raise config_error(f"cannot create {target.label}: the {dialect.name} dialect has no column type for "
                               f"the field {f.name} ({f.dataType.simpleString()})")
        columns.append(f"{dialect.column(target.ide(f.name))} {sql_type}" + (" NOT NULL" if f.name in keys else ""))
    if keys and sink_options(config)["create_index"]:
        columns.append(f"PRIMARY KEY ({', '.join(dialect.column(target.ide(k)) for k in keys)})")
    return f"CREATE TABLE {target.ident} ({', '.join(columns)})"


#: SQLSTATEs of a ``CREATE ... IF NOT EXISTS`` that met a concurrent creator of the same object: PostgreSQL
#: raises a unique violation of its catalog (or duplicate_schema) when both passed the existence test
_CREATED_MEANWHILE = ("23505", "42P06")


def create_container(connection: Any, target: Target) -> None:
    """The target's schema (PostgreSQL) or database (MySQL) created when missing. A concurrent creator
    (another table of the job, another job) may create it between the statement's existence test and
    its insert: the statement then fails with a duplicate, and is run once more (on an auto-commit
    connection), which finds the schema the other one committed."""
    dialect = target.dialect
    if dialect.family == "postgresql" and target.schema:
        statement = f"CREATE SCHEMA IF NOT EXISTS {dialect.part(target.schema)}"
    elif dialect.family == "mysql" and target.database:
        statement = f"CREATE DATABASE IF NOT EXISTS {dialect.part(target.database)}"
    else:
        return
    try:
        execute(connection, statement)
    except statement_errors() as e:
        if state_of(e) not in _CREATED_MEANWHILE or not connection.getAutoCommit():
            raise
        log.info("Jdbc: %s was created meanwhile by a concurrent writer", target.schema or target.database)
        execute(connection, statement)


def container_ready(target: Target) -> tuple:
    """The key of the job's memo (:attr:`..sqlclient.pool.Pool.memo`) saying the target's schema or
    database exists and holds the bookkeeping tables (the commit log made sure of both this run)."""
    return ("bookkeeping", target.home, True)


def _create_table(connection: Any, target: Target, schema: Any, config: Mapping[str, Any],
                  ready: bool = False) -> str:
    """CREATE TABLE for the target (:func:`create_table_sql`), its schema (PostgreSQL) or database
    (MySQL) created first when missing (unless ``ready``: this run made sure of it)."""
    statement = create_table_sql(target, schema, config)
    if not ready:
        create_container(connection, target)
    execute(connection, statement)
    for after in target.dialect.after_create:
        execute(connection, after.format(table=target.ident))
    return f"created {target.label}"


def _apply_schema_mode(connection: Any, target: Target, config: Mapping[str, Any], schema: Any, mode: str,
                       done: list[str], ready: bool = False) -> bool:
    """The schema save mode ``mode`` on the target table; whether the table exists afterwards."""
    assert target.table is not None
    exists = table_exists(connection, target, target.ide(target.table))
    if mode == "RECREATE_SCHEMA":
        if exists:
            execute(connection, f"DROP TABLE {target.ident}")
            done.append(f"dropped {target.label}")
        done.append(_create_table(connection, target, schema, config, ready))
        return True
    if mode == "CREATE_SCHEMA_WHEN_NOT_EXIST" and not exists:
        done.append(_create_table(connection, target, schema, config, ready))
        return True
    if mode == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise config_error(f"The sink table not exist: {target.label} "
                           "(schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST)")
    return exists


def apply_save_modes(connection: Any, target: Target, config: Mapping[str, Any], schema: Any,
                     ready: bool = False) -> list[str]:
    """``schema_save_mode`` then ``data_save_mode`` on the target table; what was done (``ready``: the
    target's schema or database is known to exist)."""
    o = sink_options(config)
    schema_mode, data_mode = o["schema_save_mode"], o["data_save_mode"]
    done: list[str] = []
    exists = _apply_schema_mode(connection, target, config, schema, schema_mode, done, ready)
    if data_mode == "DROP_DATA" and exists:  # deleted in the commit transaction that adds the new rows
        done.append(f"{DROP_AT_COMMIT} {target.label}")
    elif data_mode == "ERROR_WHEN_DATA_EXISTS" and exists:
        if query(connection, f"SELECT 1 FROM {target.ident}", limit=1):
            raise config_error(f"The target data source already has data: {target.label} "
                               "(data_save_mode = ERROR_WHEN_DATA_EXISTS)")
    elif data_mode == "CUSTOM_PROCESSING":
        custom = text(o["custom_sql"])
        if not custom:
            raise config_error("custom_sql is required when data_save_mode is CUSTOM_PROCESSING")
        execute(connection, custom)
        done.append("ran custom_sql")
    return done


def handle_save_mode(spark: Any, vertex_config: Mapping[str, Any], table_key: str, schema: Any) -> list[str]:
    """Apply the save modes of a Jdbc sink block to one upstream table (``schema``: its Spark
    StructType, used to create the table). No once-per-run marker: the caller decides when."""
    config, target = target_of(vertex_config, table_key,
                               [f.name for f in schema.fields] if schema is not None else None)
    if target.table is None:
        return []  # SeaTunnel runs no save mode for a sink with a query
    with connect(spark, target.conn, autocommit=False) as connection:
        try:
            done = apply_save_modes(connection, target, config, schema)
            connection.commit()
        except BaseException:
            rollback_quietly(connection)
            raise
    return done


def save_mode_once(ctx: RunContext, vertex: Vertex, connection: Any, target: Target, config: Mapping[str, Any],
                   schema: Any) -> None:
    """The save modes, unless this run already applied them to this sink and target (a retry,
    a split clone). The marker row is inserted first, in the transaction of the actions: a
    concurrent clone waits for it, then finds it."""
    # a STREAMING micro-batch applies save modes once per stream, not per batch
    key = digest(ctx.save_mode_run_id, vertex.ref, target.label, length=64)
    if target.dialect.family == "mysql":
        _save_mode_once_locked(ctx, vertex, connection, target, config, schema, key)
        return
    marker = target.qualified(SAVEMODES_TABLE)
    with transaction(connection):
        if query(connection, f"SELECT 1 FROM {marker} WHERE savemode_id = ?", (key,)):
            connection.rollback()
            return
        try:
            execute(connection, f"INSERT INTO {marker} (savemode_id, run_id, sink, table_name, actions, done_at) "
                                "VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)",
                    (key, ctx.run_id, vertex.ref, target.label, ""))
        except statement_errors() as e:
            if state_of(e).startswith("23"):  # a concurrent clone applied them
                connection.rollback()
                return
            raise
        done = apply_save_modes(connection, target, config, schema,
                                container_ready(target) in pool_of(ctx.spark, target.conn).memo)
        execute(connection, f"UPDATE {marker} SET actions = ? WHERE savemode_id = ?", ("; ".join(done)[:4000], key))
        connection.commit()
        for action in done:
            log.info("Jdbc %s: save mode: %s", vertex.ref, action)


#: the save modes :func:`save_modes_once_many` applies to many tables at once: at most a CREATE TABLE each
_AT_ONCE = {"schema_save_mode": ("CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE"),
            "data_save_mode": ("APPEND_DATA", "DROP_DATA")}

#: one table of :func:`save_modes_once_many`: its target, its sink options, its Spark schema
Item = tuple[Target, Mapping[str, Any], Any]


def at_once(items: Sequence[Item]) -> bool:
    """Whether :func:`save_modes_once_many` can apply the tables' save modes (else one by one): several
    tables of one database and schema of the families :func:`.bulk.batched` keeps, but not MySQL's
    (its DDL commits the open transaction), each a target table with a save mode that at most creates it."""
    if len(items) < 2:
        return False
    first = items[0][0]
    return all(batched(t) and t.dialect.family != "mysql" and t.table is not None and t.conn.url == first.conn.url
               and t.conn.user == first.conn.user and t.home == first.home
               and all(sink_options(c)[k] in allowed for k, allowed in _AT_ONCE.items()) for t, c, _ in items)


def save_modes_once_many(ctx: RunContext, vertex: Vertex, connection: Any, items: Sequence[Item]) -> bool:
    """:func:`save_mode_once` of several tables (:func:`at_once` said so) in ONE transaction: the markers
    looked up with one query, the tables next to them listed once (:func:`.target.listed_tables`), the
    markers of the tables not done yet inserted with one statement and their CREATE TABLE statements
    run. False (nothing done, rolled back) when a concurrent clone inserted a marker first: the caller
    applies them one by one then, which finds that clone's markers."""
    target0 = items[0][0]
    marker = target0.qualified(SAVEMODES_TABLE)
    keyed = [(digest(ctx.save_mode_run_id, vertex.ref, t.label, length=64), t, c, schema) for t, c, schema in items]
    with transaction(connection):
        done = {str(r[0]) for part in chunks([k for k, _, _, _ in keyed])
                for r in query(connection, f"SELECT savemode_id FROM {marker} WHERE savemode_id IN ({in_list(part)})")}
        todo = [one for one in keyed if one[0] not in done]
        if not todo:
            connection.rollback()
            return True
        listed = listed_tables(connection, target0)
        planned = [(key, t, _planned(t, c, schema, listed.has(t, t.ide(t.table or "")))) for key, t, c, schema in todo]
        statements = [one for _, _, (each, _) in planned for one in each]
        if statements and container_ready(target0) not in pool_of(ctx.spark, target0.conn).memo:
            create_container(connection, target0)
        for part in chunks(planned):
            rows = ", ".join(f"({in_list([key])}, ?, ?, ?, ?, CURRENT_TIMESTAMP)" for key, _, _ in part)
            params = tuple(v for _, t, (_, actions) in part
                           for v in (ctx.run_id, vertex.ref, t.label, "; ".join(actions)[:4000]))
            try:
                execute(connection, f"INSERT INTO {marker} (savemode_id, run_id, sink, table_name, actions, done_at) "
                                    f"VALUES {rows}", params)
            except statement_errors() as e:
                if state_of(e).startswith("23"):  # a concurrent clone applied some of them
                    connection.rollback()
                    return False
                raise
        run_all(connection, statements)
        connection.commit()
    for _, _, (_, actions) in planned:
        for action in actions:
            log.info("Jdbc %s: save mode: %s", vertex.ref, action)
    return True


def _planned(target: Target, config: Mapping[str, Any], schema: Any, exists: bool) -> tuple[list[str], list[str]]:
    """The statements and the actions of one table's save modes (:data:`_AT_ONCE`'s), the table
    existing or not."""
    o = sink_options(config)
    statements, actions = [], []
    if not exists and o["schema_save_mode"] == "ERROR_WHEN_SCHEMA_NOT_EXIST":
        raise config_error(f"The sink table not exist: {target.label} (schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST)")
    if not exists and o["schema_save_mode"] == "CREATE_SCHEMA_WHEN_NOT_EXIST":
        statements = [create_table_sql(target, schema, config),
                      *(after.format(table=target.ident) for after in target.dialect.after_create)]
        actions.append(f"created {target.label}")
        exists = True
    if o["data_save_mode"] == "DROP_DATA" and exists:
        actions.append(f"{DROP_AT_COMMIT} {target.label}")
    return statements, actions


#: seconds a MySQL attempt waits for another one applying the same save modes
_LOCK_WAIT_SEC = 600


def _save_mode_once_locked(ctx: RunContext, vertex: Vertex, connection: Any, target: Target,
                           config: Mapping[str, Any], schema: Any, key: str) -> None:
    """MySQL: a DDL statement commits the open transaction, so the marker cannot be inserted before
    the actions in their transaction. Instead, a named lock (``GET_LOCK``, released when the
    connection closes) serializes the attempts; the marker is inserted once the actions are done:
    a failure or a kill before it leaves no marker, and the retry applies the save modes again."""
    marker = target.qualified(SAVEMODES_TABLE)
    (got,), = query(connection, "SELECT GET_LOCK(?, ?)", (f"st_{key[:40]}", _LOCK_WAIT_SEC))
    if got != "1":
        raise RuntimeError(f"could not take the save-mode lock of {target.label} in {_LOCK_WAIT_SEC} s")
    try:
        if query(connection, f"SELECT 1 FROM {marker} WHERE savemode_id = ?", (key,)):
            return
        with transaction(connection):
            done = apply_save_modes(connection, target, config, schema)
            execute(connection, f"INSERT INTO {marker} (savemode_id, run_id, sink, table_name, actions, done_at) "
                                "VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)",
                    (key, ctx.run_id, vertex.ref, target.label, "; ".join(done)[:4000]))
            connection.commit()
        for action in done:
            log.info("Jdbc %s: save mode: %s", vertex.ref, action)
    finally:
        query(connection, "SELECT RELEASE_LOCK(?)", (f"st_{key[:40]}",))


def create_database(spark: Any, target: Target) -> None:
    """CREATE DATABASE for a PostgreSQL target whose ``database`` does not exist yet."""
    assert target.base_conn is not None and target.database
    with connect(spark, target.base_conn) as connection:
        try:
            execute(connection, f"CREATE DATABASE {target.dialect.part(target.database)}")
            log.info("Jdbc: created the database %s", target.database)
        except statement_errors() as e:
            if state_of(e) != "42P04":  # duplicate_database: a concurrent pipeline created it
                raise
