"""How a CDC source follows its table's schema changes (``schema-changes.enabled``).

The capture state (``capture.json``) keeps the table's columns as the stream knows them
(:class:`Column`: name, Spark type, the database's type, and the column's identity when the
database has one: PostgreSQL's ``attnum``, stable across renames), the changes followed so far
(:class:`...spi.schemachange.SchemaChange`, numbered within the capture), and the *shapes* the
change log may still show: every column list the table had since the capture began, each with
the current name of each of its columns (None: dropped since).

:func:`follow` compares the state's columns with the table's columns now (:func:`diff`: by
identity, else by name with the renames a DDL statement named) and records what changed. A
stream's reader names the values of a change by the shape it was logged in (:func:`current_names`):
a row logged before a rename lands in the renamed column, a dropped column's value is left out,
and a shape the state does not know (a change made while the stream runs) fails the micro-batch
for a replay after the next run followed it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ...spi.errors import PipelineError
from ...spi.rows import ADDED_COLUMN
from ...spi.schemachange import ADD, DROP, MODIFY, RENAME, SchemaChange, decode, encode, with_changes


@dataclass(frozen=True)
class Column:
    """A captured column: its name, Spark type (simple string), the database's type text, its identity
    (None when the database has none) and what the change log says of its type (``""``: nothing)."""

    name: str
    spark_type: str
    sql_type: str = ""
    ident: int | None = None
    log_type: str = ""


def columns_of(state: Mapping[str, Any]) -> list[Column] | None:
    items = state.get("columns")
    return None if items is None else [Column(**c) for c in items]


def capture_id(state: Mapping[str, Any]) -> str:
    """The capture's identity: the table and the position its snapshot stands at."""
    position = state.get("position", state.get("lsn"))
    text = f"{state.get('table')}\x00{json.dumps(position, sort_keys=True)}\x00{state.get('slot', '')}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pairs(before: Sequence[Column], after: Sequence[Column],
           renames: Mapping[str, str]) -> list[tuple[Column | None, Column | None]]:
    """(old, new) column pairs: by identity when both sides have one, else by name or a named rename."""
    identified = all(c.ident is not None for c in [*before, *after])
    key_of = (lambda c: ("id", c.ident)) if identified else (lambda c: ("name", renames.get(c.name, c.name)))
    new_key = (lambda c: ("id", c.ident)) if identified else (lambda c: ("name", c.name))
    now = {new_key(c): c for c in after}
    pairs: list[tuple[Column | None, Column | None]] = [(c, now.pop(key_of(c), None)) for c in before]
    pairs.extend((None, c) for c in after if new_key(c) in now)
    return pairs


def diff(table: str, before: Sequence[Column], after: Sequence[Column], *, capture: str = "", first: int = 0,
         position: str = "", renames: Mapping[str, str] | None = None) -> tuple[SchemaChange, ...]:
    """The changes that turn ``before`` into ``after``, in the order a sink applies them: drops,
    renames, type changes, adds; numbered from ``first``."""
    drops, moves, modifies, adds = [], [], [], []
    for old, new in _pairs(before, after, renames or {}):
        if new is None and old is not None:
            drops.append(dict(kind=DROP, column=old.name, old_type=old.spark_type, old_sql=old.sql_type))
        elif old is None and new is not None:
            adds.append(dict(kind=ADD, column=new.name, new_type=new.spark_type, new_sql=new.sql_type))
        elif old is not None and new is not None:
            if old.name != new.name:
                moves.append(dict(kind=RENAME, column=old.name, new_name=new.name, old_type=old.spark_type,
                                  new_type=new.spark_type, old_sql=old.sql_type, new_sql=new.sql_type))
            if (old.spark_type, old.sql_type) != (new.spark_type, new.sql_type):
                modifies.append(dict(kind=MODIFY, column=new.name, old_type=old.spark_type, new_type=new.spark_type,
                                     old_sql=old.sql_type, new_sql=new.sql_type))
    ordered = [*drops, *moves, *modifies, *adds]
    return tuple(SchemaChange(table=table, capture=capture, ordinal=first + i, position=position, **c)
                 for i, c in enumerate(ordered))


def _shape(columns: Sequence[Column]) -> dict[str, Any]:
    return {"names": [c.name for c in columns], "types": [c.log_type for c in columns],
            "to": [c.name for c in columns]}


def _carried(to: list[str | None], changes: Sequence[SchemaChange]) -> list[str | None]:
    """A shape's current names after ``changes``: renamed columns follow, dropped ones become None."""
    for change in changes:
        if change.kind == RENAME:
            to = [change.new_name if t == change.column else t for t in to]
        elif change.kind == DROP:
            to = [None if t == change.column else t for t in to]
    return to


def start(state: dict[str, Any], current: Sequence[Column]) -> None:
    """Record the stream's columns and first shape in a state that has none (a new capture, or one
    made before schema changes were followed): the columns of the state's schema, with what the
    table says of those it still has by that name."""
    from pyspark.sql import types as T

    if state.get("columns") is not None:
        return
    now = {c.name: c for c in current}
    fields = T.StructType.fromJson(json.loads(state["schema"])).fields
    columns = [now.get(f.name) or Column(f.name, f.dataType.simpleString()) for f in fields]
    state["columns"] = [asdict(c) for c in columns]
    state["shapes"] = [_shape(columns)]


def follow(state: dict[str, Any], current: Sequence[Column], schema: Any, position: str = "",
           renames: Mapping[str, str] | None = None) -> tuple[SchemaChange, ...]:
    """Follow the table's columns now (``current``; ``schema``: its Spark schema): the changes since the
    state's columns are recorded, the shapes carried and the stream's schema replaced (a column added
    since the capture marked :data:`...spi.rows.ADDED_COLUMN`, every column carrying the capture's
    changes). The changes found now; the caller saves the state."""
    from pyspark.sql import types as T

    before = columns_of(state) or list(current)
    earlier = decode(state.get("changes"))
    changes = diff(str(state["table"]), before, current, capture=capture_id(state), first=len(earlier),
                   position=position, renames=renames)
    if not changes:
        return ()
    known = [{**s, "to": _carried(list(s["to"]), changes)} for s in state.get("shapes") or [_shape(before)]]
    state["shapes"] = [*known, _shape(current)]
    state["columns"] = [asdict(c) for c in current]
    every = (*earlier, *changes)
    state["changes"] = encode(every)
    added = {c.new_name if c.kind == RENAME else c.column for c in every if c.kind in (ADD, RENAME)}
    fields = [T.StructField(f.name, f.dataType, True, {ADDED_COLUMN: True} if f.name in added else {})
              for f in schema.fields]
    state["schema"] = with_changes(T.StructType(fields), every).json()
    return changes


def snapshot_names(spec: Mapping[str, Any]) -> dict[str, str]:
    """The snapshot files' name of each stream column whose name changed since the capture began."""
    shapes = spec.get("shapes") or ()
    if not shapes:
        return {}
    first = shapes[0]
    return {to: name for name, to in zip(first["names"], first["to"], strict=True) if to is not None and to != name}


def current_names(spec: Mapping[str, Any], names: Sequence[str], types: Sequence[str] = ()) -> list[str | None] | None:
    """The stream's names for the columns of a change logged with ``names`` (and ``types``, when the log
    says them): the latest known shape that matches; None when no shape matches."""
    for shape in reversed(spec.get("shapes") or ()):
        if list(shape["names"]) != list(names):
            continue
        if types and any(shape["types"]) and list(shape["types"]) != list(types):
            continue
        return list(shape["to"])
    return None


def named(spec: Mapping[str, Any], names: Sequence[str], types: Sequence[str] = ()) -> list[str | None]:
    """:func:`current_names`, or with ``schema-changes.enabled`` off the names as logged (a column the
    stream lacks is left out, a missing one is null, as SeaTunnel reads them). With the option on, a
    shape the capture state does not know is a change made while the stream ran: a transient
    :class:`PipelineError` (the next run follows it, then replays the same changes)."""
    if not spec.get("schema_changes"):
        return list(names)
    found = current_names(spec, names, types)
    if found is None:
        raise PipelineError(f"{spec['table']} changed its columns while the stream ran (now {', '.join(names)}): "
                            "the pipeline fails now and its next run (a retry) follows the change and replays "
                            "these changes")
    return found
