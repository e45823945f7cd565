"""Schema changes a CDC source followed (``schema-changes.enabled``), as its sinks receive them.

A source that follows a change of its table's columns (add, drop, rename, type change) declares the
stream's new schema and records the change as a :class:`SchemaChange`: the source table, the kind,
the column, its new name or type, and its identity (:attr:`SchemaChange.key`: the capture it
belongs to and its ordinal there; a new snapshot is a new capture). The changes travel with the
rows as Spark column metadata (:data:`METADATA_KEY` on every data column, all changes of the
capture in order: :func:`with_changes`, :func:`changes_of`).

A sink follows the kinds it declares (:func:`follows`: the ``follows_schema_changes`` attribute of
its connector; every sink takes an added column, as the rows simply carry it). A change a sink does
not follow fails the pipeline before anything is written (:func:`refuse_unfollowed`), naming the
table and the change; so does a type change that is not a safe widening (:func:`widens`) at a sink
that applies type changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .errors import RuntimeConfigError

ADD, DROP, RENAME, MODIFY = "add_column", "drop_column", "rename_column", "modify_column"
KINDS = (ADD, DROP, RENAME, MODIFY)
#: Spark column metadata key holding the JSON list of the capture's changes
METADATA_KEY = "seatunnel.schema_changes"
#: what a sink follows unless it declares more: an added column (the rows carry it)
DEFAULT_FOLLOWS = frozenset({ADD})

_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_LENGTH = re.compile(r"\((\d+)\)")


@dataclass(frozen=True)
class SchemaChange:
    """One change of a source table's columns. Types are Spark's (``int``, ``decimal(10,2)``), with the
    source's own SQL type beside (``varchar(20)``: Spark types do not carry lengths)."""

    table: str
    kind: str
    column: str  # the name before the change (add: the new column)
    new_name: str | None = None  # rename
    old_type: str | None = None  # drop, modify, rename
    new_type: str | None = None  # add, modify, rename
    old_sql: str | None = None
    new_sql: str | None = None
    capture: str = ""  # the capture (snapshot) the change belongs to
    ordinal: int = 0  # its place among the capture's changes
    position: str = ""  # the stream position where it was followed (informational)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown schema change kind {self.kind!r}")

    @property
    def key(self) -> str:
        """Its identity: a sink records it when applied, so that a replay never applies it twice."""
        return f"{self.capture}#{self.ordinal}"

    def describe(self) -> str:
        """The change as a sentence naming the table and the column."""
        if self.kind == ADD:
            what = f"ADD COLUMN {self.column} {self.new_sql or self.new_type}"
        elif self.kind == DROP:
            what = f"DROP COLUMN {self.column}"
        elif self.kind == RENAME:
            what = f"RENAME COLUMN {self.column} TO {self.new_name}"
        else:
            what = f"MODIFY COLUMN {self.column} {self.old_sql or self.old_type} -> {self.new_sql or self.new_type}"
        return f"{what} of {self.table}"


def encode(changes: Iterable[SchemaChange]) -> str:
    return json.dumps([asdict(c) for c in changes], sort_keys=True)


def decode(text: str | None) -> tuple[SchemaChange, ...]:
    return tuple(SchemaChange(**item) for item in json.loads(text)) if text else ()


def with_changes(schema: Any, changes: Sequence[SchemaChange]) -> Any:
    """``schema`` (a Spark StructType) with ``changes`` in every field's metadata (none: unchanged)."""
    from pyspark.sql import types as T

    if not changes:
        return schema
    text = encode(changes)
    return T.StructType([T.StructField(f.name, f.dataType, f.nullable, {**(f.metadata or {}), METADATA_KEY: text})
                         for f in schema.fields])


def changes_of(schema: Any) -> tuple[SchemaChange, ...]:
    """The changes a DataFrame's schema carries (the first field that has them; none: ``()``)."""
    for f in schema.fields:
        text = (f.metadata or {}).get(METADATA_KEY)
        if text:
            return decode(text)
    return ()


def follows(connector: Any) -> frozenset[str]:
    """The change kinds a sink connector follows (its ``follows_schema_changes``, else an added column)."""
    return frozenset(getattr(connector, "follows_schema_changes", DEFAULT_FOLLOWS))


def refuse_unfollowed(changes: Iterable[SchemaChange], kinds: frozenset[str], sink: str) -> None:
    """Fail (deterministically) on the first change whose kind ``sink`` does not follow."""
    for change in changes:
        if change.kind not in kinds:
            raise RuntimeConfigError(f"{sink} cannot follow the schema change {change.describe()}: it follows "
                                     f"{', '.join(sorted(kinds)) or 'none'}; nothing after it is written (recreate "
                                     "the target and restart the capture, or write to a sink that follows it)")


def _length(sql: str | None) -> int | None:
    found = _LENGTH.search(sql or "")
    return int(found.group(1)) if found else None


def _decimal_widens(old: str, new: str) -> bool:
    n = _DECIMAL.fullmatch(new)
    if not n:
        return False
    p2, s2 = int(n.group(1)), int(n.group(2))
    o = _DECIMAL.fullmatch(old)
    if o:
        p, s = int(o.group(1)), int(o.group(2))
        return s2 >= s and p2 - s2 >= p - s
    return old in _DIGITS and p2 - s2 >= _DIGITS[old]


def widens(change: SchemaChange) -> bool:
    """Whether a type change keeps every value: a wider integer, a decimal with at least the integer
    and fraction digits, float to double, an integer of at most 32 bits to double, a longer (or
    unbounded) string. A narrowing, or a change between unrelated types, does not."""
    old, new = change.old_type or "", change.new_type or ""
    if old == new:
        if old != "string":
            return True
        before, after = _length(change.old_sql), _length(change.new_sql)
        return after is None or (before is not None and after >= before)
    if old in _INTEGRAL and new in _INTEGRAL:
        return _INTEGRAL.index(new) >= _INTEGRAL.index(old)
    if new.startswith("decimal"):
        return _decimal_widens(old, new)
    if new == "double":
        return old in ("float", "tinyint", "smallint", "int")
    return False


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() == "true"


def pipeline_follows(vertices: Iterable[Any]) -> bool:
    """Whether a source of the pipeline follows schema changes (``schema-changes.enabled``, or Debezium's
    ``include.schema.changes``): a lake sink then creates its tables able to take every kind of change."""
    for v in vertices:
        if getattr(v, "kind", "") != "source":
            continue
        config = getattr(v, "config", None) or {}
        debezium = config.get("debezium")
        if _truthy(config.get("schema-changes.enabled")) or (
                isinstance(debezium, dict) and _truthy(debezium.get("include.schema.changes"))):
            return True
    return False
