"""The Delta sink follows a CDC source's schema changes (``schema-changes.enabled``): add, drop and rename
a column, and widen its type, each applied to the table once.

Before a micro-batch's commit, the changes its rows carry (:func:`...spi.schemachange.changes_of`) that
the table has not recorded are applied in order, each as one Delta commit (``ALTER TABLE ... ADD COLUMNS``,
``DROP COLUMN``, ``RENAME COLUMN``, ``ALTER COLUMN ... TYPE``) whose ``userMetadata`` names the change
(``kind`` ``schema_change``, its ``change_id``): the DDL and its record are one commit. Then one more
commit sets the table property :data:`PROPERTY` to the ids of every change the rows carry, so later
micro-batches find them without reading the table's history. A restore after a kill between the two
finds the DDL commits in the history; a change whose result the table already shows (the added column
present, the dropped one absent, the renamed one under its new name, the type already the new one: a
table the sink created after the change) is recorded without DDL. So no change is applied twice or lost.

Delta drops and renames a column only with column mapping (``delta.columnMapping.mode`` ``name``) and
widens a type only with its type widening feature (``delta.enableTypeWidening``); the sink sets both on
the tables it creates for a pipeline whose source follows schema changes. On an existing table without
them, a change that needs them fails deterministically, naming the table, the change and the property to
set (enabling either upgrades the table's protocol: the table's owner decides). A type change that is not
a safe widening (:func:`...spi.schemachange.widens`), or one Delta refuses, fails the same way. Every
check runs before the first change is applied: nothing is written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...spi.errors import root_cause
from ...spi.schemachange import DROP, KINDS, MODIFY, RENAME, SchemaChange
from ..lakehouse.evolve import PROPERTY, Op, Step, change_id, check_widening, recorded_ids, refusal
from ..lakehouse.evolve import plan as plan_steps
from . import fence
from .tables import TableState, sql_path

log = logging.getLogger("seatunnel.delta")

__all__ = ["CHAR_VARCHAR", "COLUMN_MAPPING", "CREATE_PROPERTIES", "FOLLOWS", "PROPERTY", "TYPE_WIDENING",
           "change_id", "follow", "plan"]

#: what the Delta sink follows
FOLLOWS = frozenset(KINDS)
COLUMN_MAPPING, TYPE_WIDENING = "delta.columnMapping.mode", "delta.enableTypeWidening"
#: the properties of a table the sink creates for a pipeline that follows schema changes
CREATE_PROPERTIES = {COLUMN_MAPPING: "name", TYPE_WIDENING: "true"}
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
#: the field metadata key Spark keeps a column's declared char/varchar type under
CHAR_VARCHAR = "__CHAR_VARCHAR_TYPE_STRING"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _columns(state: TableState) -> dict[str, tuple[str, str]]:
    """lower-case name -> (name, type) of the table's top-level columns: Spark's type, or the
    ``varchar(n)``/``char(n)`` a string column is declared with (Delta checks its length on write)."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(state.schema_json)) if state.schema_json else StructType([])
    return {f.name.lower(): (f.name, str((f.metadata or {}).get(CHAR_VARCHAR) or f.dataType.simpleString()))
            for f in schema.fields}


def ddl(table: str, op: Op) -> str:
    """The ``ALTER TABLE`` statement of an operation."""
    if op.kind == "add":
        return f"ALTER TABLE {table} ADD COLUMNS ({_quote(op.column)} {op.arg})"
    if op.kind == "drop":
        return f"ALTER TABLE {table} DROP COLUMN {_quote(op.column)}"
    if op.kind == "rename":
        return f"ALTER TABLE {table} RENAME COLUMN {_quote(op.column)} TO {_quote(op.arg)}"
    return f"ALTER TABLE {table} ALTER COLUMN {_quote(op.column)} TYPE {op.arg}"


def _refusal(state: TableState, step: Step) -> str | None:
    """Why the table cannot take ``step``'s operation (None: it can)."""
    change, where = step.change, sql_path(state.path)
    if step.op is None:
        return None
    if change.kind in (DROP, RENAME) and (state.table_property(COLUMN_MAPPING) or "none") == "none":
        return (f"Delta drops and renames columns only with column mapping; set it on the table first: ALTER TABLE "
                f"{where} SET TBLPROPERTIES ('{COLUMN_MAPPING}' = 'name')")
    if change.kind == MODIFY and change.new_type != "string" and \
            (state.table_property(TYPE_WIDENING) or "").lower() != "true":
        return (f"Delta widens a column's type only with type widening; set it on the table first: ALTER TABLE "
                f"{where} SET TBLPROPERTIES ('{TYPE_WIDENING}' = 'true')")
    return None


def plan(state: TableState, changes: Sequence[SchemaChange], label: str,
         noted: Callable[[], set[str]]) -> list[Step]:
    """The steps following the changes the table has not recorded, checked: a change that cannot be
    followed fails here, before any is applied (see the module's docstring). ``noted``: the ids the
    table's history records (read only when the property lacks some)."""
    if not changes or not state.exists:
        return []
    steps = plan_steps(_columns(state), state.table_property(PROPERTY), changes, noted)
    where = f"the Delta table {state.path}"
    check_widening(label, where, steps)
    for step in steps:
        why = _refusal(state, step)
        if why:
            raise refusal(label, where, step.change, why)
    return steps


def _commit(spark: Any, statement: str, note: Mapping[str, Any]) -> None:
    before = spark.conf.get(USER_METADATA, None)
    spark.conf.set(USER_METADATA, json.dumps(dict(note), sort_keys=True))
    try:
        spark.sql(statement).collect()
    finally:
        if before is None:
            spark.conf.unset(USER_METADATA)
        else:
            spark.conf.set(USER_METADATA, before)


def follow(spark: Any, state: TableState, changes: Sequence[SchemaChange], label: str,
           note: Mapping[str, Any]) -> list[SchemaChange]:
    """Apply (and record) the changes the table has not recorded; those applied or recorded. ``note``: what
    every commit's ``userMetadata`` says of the run."""
    def noted() -> set[str]:
        return {str(n.get("change_id")) for n in fence.notes(spark, state.path) if n.get("kind") == "schema_change"}

    steps = plan(state, changes, label, noted)
    table = sql_path(state.path)
    for step in steps:
        if step.op is None:
            log.info("Delta %s: %s recorded (the table had it)", label, step.change.describe())
            continue
        try:
            _commit(spark, ddl(table, step.op), {**note, "kind": "schema_change", "change_id": change_id(step.change),
                                                 "change": step.change.describe()})
        except Exception as e:
            cause = root_cause(e)
            if "Concurrent" in cause or "CONCURRENT" in cause:
                raise  # another writer: transient
            raise refusal(label, f"the Delta table {state.path}", step.change, f"Delta refused it ({cause})") from e
        log.info("Delta %s: applied %s to %s", label, step.change.describe(), state.path)
    ids = recorded_ids(changes)
    if steps or (changes and state.exists and state.table_property(PROPERTY) != ids):
        _commit(spark, f"ALTER TABLE {table} SET TBLPROPERTIES ('{PROPERTY}' = '{ids}')",
                {**note, "kind": "schema_changes_recorded"})
    return [s.change for s in steps]
