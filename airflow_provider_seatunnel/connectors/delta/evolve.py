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
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError, root_cause
from ...spi.schemachange import ADD, DROP, KINDS, RENAME, SchemaChange, widens
from ...spi.twophase import digest
from . import fence
from .tables import TableState, sql_path

log = logging.getLogger("seatunnel.delta")

#: what the Delta sink follows
FOLLOWS = frozenset(KINDS)
#: the table property holding the ids of the followed changes (comma separated)
PROPERTY = "seatunnel.schema_changes"
COLUMN_MAPPING, TYPE_WIDENING = "delta.columnMapping.mode", "delta.enableTypeWidening"
#: the properties of a table the sink creates for a pipeline that follows schema changes
CREATE_PROPERTIES = {COLUMN_MAPPING: "name", TYPE_WIDENING: "true"}
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
#: the field metadata key Spark keeps a column's declared char/varchar type under
CHAR_VARCHAR = "__CHAR_VARCHAR_TYPE_STRING"


def change_id(change: SchemaChange) -> str:
    return digest(change.key, length=16)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Step:
    """One change to follow and the DDL it needs (None: the table shows its result already)."""

    change: SchemaChange
    ddl: str | None


def _columns(state: TableState) -> dict[str, tuple[str, str]]:
    """lower-case name -> (name, type) of the table's top-level columns: Spark's type, or the
    ``varchar(n)``/``char(n)`` a string column is declared with (Delta checks its length on write)."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(state.schema_json)) if state.schema_json else StructType([])
    return {f.name.lower(): (f.name, str((f.metadata or {}).get(CHAR_VARCHAR) or f.dataType.simpleString()))
            for f in schema.fields}


def _new_type(current: str, change: SchemaChange) -> str:
    """The column's type after a type change: a string keeps a declared length when the table's column
    has one (the source's new ``varchar(n)``, else unbounded)."""
    new = change.new_type or ""
    if new != "string" or not current.startswith(("varchar", "char")):
        return new
    sql = (change.new_sql or "").lower()
    length = re.search(r"char\w*\s*\((\d+)\)", sql)
    return f"varchar({length.group(1)})" if length else "string"


def _step(table: str, columns: dict[str, tuple[str, str]], change: SchemaChange) -> str | None:
    """The DDL for ``change`` given the table's columns (updated as if applied), None when not needed."""
    name = change.column.lower()
    if change.kind == ADD:
        if name in columns:
            return None
        columns[name] = (change.column, change.new_type or "string")
        return f"ALTER TABLE {table} ADD COLUMNS ({_quote(change.column)} {change.new_type or 'string'})"
    if name not in columns:
        return None
    if change.kind == DROP:
        return f"ALTER TABLE {table} DROP COLUMN {_quote(columns.pop(name)[0])}"
    if change.kind == RENAME:
        new = change.new_name or ""
        if new.lower() in columns:
            return None
        old, kind = columns.pop(name)
        columns[new.lower()] = (new, kind)
        return f"ALTER TABLE {table} RENAME COLUMN {_quote(old)} TO {_quote(new)}"
    current = columns[name]
    new_type = _new_type(current[1], change)
    if current[1] == new_type or (new_type == "string" and current[1] == "string"):
        return None
    columns[name] = (current[0], new_type)
    return f"ALTER TABLE {table} ALTER COLUMN {_quote(current[0])} TYPE {new_type}"


def _refusal(label: str, state: TableState, step: Step) -> str | None:
    """Why ``step`` cannot be applied to the table (None: it can)."""
    change = step.change
    if change.kind == "modify_column" and not widens(change):
        return "not a safe widening (values could be lost)"
    if step.ddl is None:
        return None
    where = sql_path(state.path)
    if change.kind in (DROP, RENAME) and (state.table_property(COLUMN_MAPPING) or "none") == "none":
        return (f"Delta drops and renames columns only with column mapping; set it on the table first: ALTER TABLE "
                f"{where} SET TBLPROPERTIES ('{COLUMN_MAPPING}' = 'name')")
    if change.kind == "modify_column" and change.new_type != "string" and \
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
    recorded = set((state.table_property(PROPERTY) or "").split(","))
    todo = [c for c in changes if change_id(c) not in recorded]
    if todo:  # applied by a commit a kill kept from being recorded in the property
        found = noted()
        todo = [c for c in todo if change_id(c) not in found]
    columns, table = _columns(state), sql_path(state.path)
    steps = [Step(c, _step(table, columns, c)) for c in sorted(todo, key=lambda c: c.ordinal)]
    for step in steps:
        why = _refusal(label, state, step)
        if why:
            raise RuntimeConfigError(f"{label} cannot follow the schema change {step.change.describe()} into the "
                                     f"Delta table {state.path}: {why}; nothing after it is written")
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
    for step in steps:
        if step.ddl is None:
            log.info("Delta %s: %s recorded (the table had it)", label, step.change.describe())
            continue
        try:
            _commit(spark, step.ddl, {**note, "kind": "schema_change", "change_id": change_id(step.change),
                                      "change": step.change.describe()})
        except Exception as e:
            if "Concurrent" in root_cause(e) or "CONCURRENT" in root_cause(e):
                raise  # another writer: transient
            raise RuntimeConfigError(f"{label} cannot follow the schema change {step.change.describe()} into the "
                                     f"Delta table {state.path}: Delta refused it ({root_cause(e)}); nothing after "
                                     "it is written") from e
        log.info("Delta %s: applied %s to %s", label, step.change.describe(), state.path)
    ids = ",".join(change_id(c) for c in sorted(changes, key=lambda c: c.ordinal))
    if steps or (changes and state.exists and state.table_property(PROPERTY) != ids):
        _commit(spark, f"ALTER TABLE {sql_path(state.path)} SET TBLPROPERTIES ('{PROPERTY}' = '{ids}')",
                {**note, "kind": "schema_changes_recorded"})
    return [s.change for s in steps]
