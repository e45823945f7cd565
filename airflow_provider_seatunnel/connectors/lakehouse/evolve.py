"""What the lake sinks (Delta, Iceberg) share to follow a CDC source's schema changes
(``schema-changes.enabled``): which of the changes a micro-batch's rows carry a table still needs, and
the operation each needs against the table's columns.

A change is identified by :func:`change_id` (its capture and ordinal, digested). A table records the
ids it followed (a table property, :data:`PROPERTY`; the sink says how the record and the change are
kept together); a change recorded there is skipped. A change whose result the table already shows is
recorded without an operation: the added column present, the dropped one absent, the renamed one under
its new name, the type already the new one (a table the sink created after the change, or a restore
past an applied change). Every other change gets its :class:`Op`, planned against the table's columns
as the earlier changes leave them, in the changes' order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...spi.errors import RuntimeConfigError
from ...spi.schemachange import ADD, DROP, MODIFY, RENAME, SchemaChange, widens
from ...spi.twophase import digest

#: the table property holding the ids of the followed changes (comma separated)
PROPERTY = "seatunnel.schema_changes"


def change_id(change: SchemaChange) -> str:
    return digest(change.key, length=16)


@dataclass(frozen=True)
class Op:
    """One operation on the table: ``add`` (column, type), ``drop`` (column), ``rename`` (column, new
    name), ``type`` (column, new type); the column as the table spells it."""

    kind: str
    column: str
    arg: str = ""


@dataclass(frozen=True)
class Step:
    """One change to follow and its operation (None: the table shows its result already)."""

    change: SchemaChange
    op: Op | None


def new_type(current: str, change: SchemaChange) -> str:
    """A column's type after a type change: a string keeps a declared length when the table's column has
    one (``varchar(n)``: the source's new length, else unbounded)."""
    new = change.new_type or ""
    if new != "string" or not current.startswith(("varchar", "char")):
        return new
    length = re.search(r"char\w*\s*\((\d+)\)", (change.new_sql or "").lower())
    return f"varchar({length.group(1)})" if length else "string"


def _op(columns: dict[str, tuple[str, str]], change: SchemaChange) -> Op | None:
    """The operation for ``change`` given the table's columns (lower-case name -> (name, type)), updated
    as if it was applied; None when not needed."""
    name = change.column.lower()
    if change.kind == ADD:
        if name in columns:
            return None
        columns[name] = (change.column, change.new_type or "string")
        return Op("add", change.column, change.new_type or "string")
    if name not in columns:
        return None
    if change.kind == DROP:
        return Op("drop", columns.pop(name)[0])
    if change.kind == RENAME:
        new = change.new_name or ""
        if new.lower() in columns:
            return None
        old, kind = columns.pop(name)
        columns[new.lower()] = (new, kind)
        return Op("rename", old, new)
    current = columns[name]
    target = new_type(current[1], change)
    if current[1] == target or (target == "string" and current[1] == "string"):
        return None
    columns[name] = (current[0], target)
    return Op("type", current[0], target)


def plan(columns: dict[str, tuple[str, str]], recorded: str | None, changes: Sequence[SchemaChange],
         noted: Callable[[], set[str]]) -> list[Step]:
    """The steps following the changes not recorded (``recorded``: the table's :data:`PROPERTY`;
    ``noted``: the ids the table's history records, asked only when the property lacks some)."""
    done = set((recorded or "").split(","))
    todo = [c for c in changes if change_id(c) not in done]
    if todo:
        found = noted()
        todo = [c for c in todo if change_id(c) not in found]
    columns = dict(columns)
    return [Step(c, _op(columns, c)) for c in sorted(todo, key=lambda c: c.ordinal)]


def refusal(label: str, table: str, change: SchemaChange, why: str) -> RuntimeConfigError:
    return RuntimeConfigError(f"{label} cannot follow the schema change {change.describe()} into {table}: {why}; "
                              "nothing after it is written")


def check_widening(label: str, table: str, steps: Sequence[Step]) -> None:
    """A type change that is not a safe widening fails (values could be lost)."""
    for step in steps:
        if step.change.kind == MODIFY and not widens(step.change):
            raise refusal(label, table, step.change, "not a safe widening (values could be lost)")


def recorded_ids(changes: Sequence[SchemaChange]) -> str:
    """The :data:`PROPERTY` value once every one of ``changes`` is followed."""
    return ",".join(change_id(c) for c in sorted(changes, key=lambda c: c.ordinal))
