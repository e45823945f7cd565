"""The Jdbc sink follows a CDC source's schema changes (``schema-changes.enabled``) on PostgreSQL and
MySQL/MariaDB targets: add, drop and rename a column, and widen its type.

Before a micro-batch is staged, the changes its rows carry (:func:`...spi.schemachange.changes_of`)
that the target has not recorded are applied in order, each with its row in
``seatunnel_schema_changes`` next to the target (keyed by the target and the change's identity,
with the stream position it was followed at):

* PostgreSQL: the DDL and its row in one transaction (PostgreSQL's DDL is transactional);
* MySQL/MariaDB: the DDL commits by itself, then the row is inserted. A kill between the two is
  found by the next attempt: the DDL is skipped when the target already has its result (the added
  column present, the dropped one absent, the renamed one under its new name).

So a restore never applies a change twice nor loses one, and the staged rows of the micro-batch
meet the new columns. A type change that is not a safe widening (:func:`...spi.schemachange.widens`),
or any change into another database family, fails the write deterministically, naming the table
and the change, before anything of the micro-batch is staged.
"""

from __future__ import annotations

import logging
from typing import Any

from ...spi import Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.schemachange import ADD, DROP, KINDS, MODIFY, RENAME, SchemaChange, changes_of, widens
from ...spi.twophase import digest
from ..sqlclient.connection import columns_of, execute, query, rollback_quietly
from ..sqlclient.errors import statement_errors
from .target import Target, table_exists

log = logging.getLogger("seatunnel.jdbc")

CHANGES_TABLE = "seatunnel_schema_changes"
#: what the Jdbc sink follows (on PostgreSQL and MySQL targets; elsewhere an added column only)
FOLLOWS = frozenset(KINDS)
FAMILIES = ("postgresql", "mysql")


def _ensure_log(connection: Any, target: Target) -> None:
    if table_exists(connection, target, CHANGES_TABLE):
        return
    timestamp = target.dialect.bookkeeping[1]
    try:
        execute(connection, f"CREATE TABLE {target.qualified(CHANGES_TABLE)} (change_id VARCHAR(64) NOT NULL "
                            "PRIMARY KEY, table_name VARCHAR(1024) NOT NULL, change_text VARCHAR(4000) NOT NULL, "
                            f"position VARCHAR(255), applied_at {timestamp})")
    except statement_errors():
        if not table_exists(connection, target, CHANGES_TABLE):  # else a concurrent pipeline created it
            raise


def _sql_type(target: Target, change: SchemaChange) -> str:
    """The target's column type for the change's new type: a string keeps the source's length."""
    from pyspark.sql.types import _parse_datatype_string

    new = change.new_type or "string"
    if new == "string" and change.new_sql and "char" in change.new_sql.lower() and "(" in change.new_sql:
        return "VARCHAR" + change.new_sql[change.new_sql.index("("):]
    sql = target.dialect.sql_type(_parse_datatype_string(new))
    if sql is None:
        raise RuntimeConfigError(f"{target.label} cannot follow {change.describe()}: no "
                                 f"{target.dialect.family} type for {new}")
    return sql


def statements(target: Target, change: SchemaChange, present: set[str]) -> list[str]:
    """The DDL applying ``change`` to the target, none when the target already shows its result
    (``present``: the target's column names, lower case)."""
    table, col = target.ident, target.dialect.column
    name = target.ide(change.column)
    if change.kind == ADD:
        return [] if name.lower() in present else [f"ALTER TABLE {table} ADD COLUMN {col(name)} "
                                                   f"{_sql_type(target, change)}"]
    if change.kind == DROP:
        return [f"ALTER TABLE {table} DROP COLUMN {col(name)}"] if name.lower() in present else []
    if change.kind == RENAME:
        new = target.ide(change.new_name or "")
        if name.lower() not in present or new.lower() in present:
            return []
        return [f"ALTER TABLE {table} RENAME COLUMN {col(name)} TO {col(new)}"]
    if name.lower() not in present:
        return []
    if target.dialect.family == "postgresql":
        return [f"ALTER TABLE {table} ALTER COLUMN {col(name)} TYPE {_sql_type(target, change)}"]
    return [f"ALTER TABLE {table} MODIFY COLUMN {col(name)} {_sql_type(target, change)}"]


def _applied(connection: Any, target: Target) -> set[str]:
    rows = query(connection, f"SELECT change_id FROM {target.qualified(CHANGES_TABLE)}")
    return {str(r[0]) for r in rows}


def _apply(connection: Any, target: Target, change: SchemaChange, change_id: str) -> list[str]:
    """Apply one change and record it (see the module's docstring for the transaction)."""
    present = {name.lower() for name, _t, _s in columns_of(connection, f"SELECT * FROM {target.ident}")}
    ddl = statements(target, change, present)
    record = (f"INSERT INTO {target.qualified(CHANGES_TABLE)} (change_id, table_name, change_text, position, "
              "applied_at) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)")
    params = (change_id, target.label, change.describe()[:4000], change.position[:255])
    transactional = target.dialect.family == "postgresql"
    if transactional:
        connection.setAutoCommit(False)
    try:
        for statement in ddl:
            execute(connection, statement)
        execute(connection, record, params)
        if transactional:
            connection.commit()
    except BaseException:
        if transactional:
            rollback_quietly(connection)
        raise
    finally:
        if transactional:
            connection.setAutoCommit(True)
    return ddl


def follow_changes(vertex: Vertex, connection: Any, target: Target, schema: Any) -> list[SchemaChange]:
    """Apply the schema changes ``schema`` carries that the target has not recorded; those applied."""
    changes = changes_of(schema)
    if not changes or target.table is None or not table_exists(connection, target, target.ide(target.table)):
        return []
    family = target.dialect.family
    _ensure_log(connection, target)
    done = _applied(connection, target)
    applied = []
    for change in sorted(changes, key=lambda c: c.ordinal):
        change_id = digest(target.label, change.key, length=64)
        if change_id in done:
            continue
        if family not in FAMILIES and change.kind != ADD:
            raise RuntimeConfigError(f"{vertex.ref} cannot follow the schema change {change.describe()} into "
                                     f"{target.label}: the Jdbc sink follows drops, renames and type changes on "
                                     "PostgreSQL and MySQL only; nothing after it is written")
        if change.kind == MODIFY and not widens(change):
            raise RuntimeConfigError(f"{vertex.ref} cannot follow the schema change {change.describe()} into "
                                     f"{target.label}: not a safe widening (values could be lost); nothing after "
                                     "it is written")
        ddl = _apply(connection, target, change, change_id)
        applied.append(change)
        log.info("Jdbc %s: %s %s (%s)", vertex.ref, "applied" if ddl else "recorded (the target had it)",
                 change.describe(), target.label)
    return applied
