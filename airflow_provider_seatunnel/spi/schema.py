"""SeaTunnel data types and row schemas, in pure Python (usable at compile time).

Type strings follow SeaTunnel (case-insensitive, spaces ignored): ``string``, ``boolean``,
``tinyint``, ``smallint``, ``int``, ``bigint``, ``float``, ``double``, ``decimal(p,s)``,
``"null"``, ``bytes``, ``date``, ``time``, ``timestamp``, ``array<T>``, ``map<K,V>``, the vector
types (:data:`VECTORS`), and rows written as nested objects (``{a = int, b = string}``). Legacy aliases: ``long``,
``short``, ``byte``. :meth:`DataType.to_spark` maps to Spark types (imported lazily).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config.limits import DEFAULT_LIMITS

SCALARS = ("string", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "null",
           "bytes", "date", "time", "timestamp")
_ALIASES = {"long": "bigint", "short": "smallint", "byte": "tinyint", "integer": "int", "bool": "boolean",
            "str": "string", "varchar": "string", "text": "string", "binary": "bytes", "datetime": "timestamp"}
_ARRAY_ELEMENTS = ("string", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double")
NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")
#: SeaTunnel's vector types (Milvus, the Embedding transform) -> the type their values take here: Spark has
#: no vector type, so float vectors are arrays of floats (a float16/bfloat16 value widened to a float),
#: a binary vector its bytes (8 dimensions a byte), a sparse vector a map of index -> value
VECTORS = {"float_vector": "array<float>", "float16_vector": "array<float>", "bfloat16_vector": "array<float>",
           "binary_vector": "bytes", "sparse_float_vector": "map<int, float>"}


class TypeError_(ValueError):
    """A type string SeaTunnel would reject."""


@dataclass(frozen=True)
class DataType:
    """A SeaTunnel type: ``name`` plus its parts (decimal precision/scale, element types, row fields)."""

    name: str  # one of SCALARS, or "decimal", "array", "map", "row"
    precision: int | None = None
    scale: int | None = None
    element: DataType | None = None  # array element, map value
    key: DataType | None = None  # map key
    fields: tuple[Field, ...] = ()  # row fields

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision}, {self.scale})"
        if self.name == "array":
            return f"array<{self.element}>"
        if self.name == "map":
            return f"map<{self.key}, {self.element}>"
        if self.name == "row":
            return "{" + ", ".join(f"{f.name} = {f.type}" for f in self.fields) + "}"
        return self.name

    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC

    @property
    def storage(self) -> DataType:
        """The type whose values this one holds: a vector's (:data:`VECTORS`), else itself."""
        return parse_type(VECTORS[self.name]) if self.name in VECTORS else self

    def to_json(self) -> Any:
        if self.name == "row":
            return {f.name: f.type.to_json() for f in self.fields}
        return str(self)

    def to_spark(self) -> Any:
        """The Spark SQL type (imports pyspark: runtime only)."""
        from pyspark.sql import types as T

        simple = {
            "string": T.StringType(), "boolean": T.BooleanType(), "tinyint": T.ByteType(),
            "smallint": T.ShortType(), "int": T.IntegerType(), "bigint": T.LongType(),
            "float": T.FloatType(), "double": T.DoubleType(), "null": T.NullType(),
            "bytes": T.BinaryType(), "date": T.DateType(), "timestamp": T.TimestampNTZType(),
        }
        if self.name in simple:
            return simple[self.name]
        if self.name in VECTORS:
            return self.storage.to_spark()
        if self.name == "time":
            return T.TimeType(6)
        if self.name == "decimal":
            return T.DecimalType(min(self.precision or 10, 38), self.scale or 0)
        if self.name == "array" and self.element is not None:
            return T.ArrayType(self.element.to_spark(), True)
        if self.name == "map" and self.key is not None and self.element is not None:
            return T.MapType(self.key.to_spark(), self.element.to_spark(), True)
        if self.name == "row":
            return T.StructType([T.StructField(f.name, f.type.to_spark(), True) for f in self.fields])
        raise TypeError_(f"no Spark type for {self}")


@dataclass(frozen=True)
class Field:
    name: str
    type: DataType


@dataclass(frozen=True)
class Schema:
    """An ordered row schema."""

    fields: tuple[Field, ...]

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def get(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        lowered = name.lower()
        return next((f for f in self.fields if f.name.lower() == lowered), None)

    def with_field(self, field: Field) -> Schema:
        """This schema with ``field``: a field of the same name is replaced in place, else it
        is appended (how Copy, Split and JsonPath write their outputs)."""
        fields = list(self.fields)
        at = next((i for i, f in enumerate(fields) if f.name == field.name), None)
        if at is None:
            fields.append(field)
        else:
            fields[at] = field
        return Schema(tuple(fields))

    def to_json(self) -> dict[str, Any]:
        return {f.name: f.type.to_json() for f in self.fields}

    def to_spark(self) -> Any:
        from pyspark.sql import types as T

        return T.StructType([T.StructField(f.name, f.type.to_spark(), True) for f in self.fields])


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for c in text:
        if c in "<({[":
            depth += 1
        elif c in ">)}]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def _nesting(text: str) -> int:
    """How deep the brackets of a type string nest (``map<string, array<int>>``: 2)."""
    deepest = depth = 0
    for c in text:
        depth += (c in "<({[") - (c in ">)}]")
        deepest = max(deepest, depth)
    return deepest


def _squeeze(spec: str) -> str:
    """``spec`` without whitespace, except inside a row type's braces, where a newline separates
    fields as it does in any HOCON object (``map<string, {a = int⏎b = string}>``)."""
    out, depth = [], 0
    for c in spec:
        depth += (c == "{") - (c == "}")
        if depth > 0 or not c.isspace():
            out.append(c)
    return "".join(out)


def parse_type(spec: Any) -> DataType:
    """A :class:`DataType` from a type string or a nested row object; raises TypeError_."""
    if isinstance(spec, Mapping):
        return DataType("row", fields=tuple(Field(str(k), parse_type(v)) for k, v in spec.items()))
    if not isinstance(spec, str):
        raise TypeError_(f"unsupported type {spec!r}: write a type string such as \"int\" or a row object")
    text = _squeeze(spec)
    if _nesting(text) > DEFAULT_LIMITS.max_depth:
        raise TypeError_(f"the type {spec[:80]!r}... nests deeper than {DEFAULT_LIMITS.max_depth} levels")
    lowered = text.lower()
    if lowered.startswith("{"):
        from ..config.hocon import parse, resolve, to_plain

        try:
            obj = to_plain(resolve(parse(f"row = {spec}"), lambda name: None))
        except ValueError as e:
            raise TypeError_(f"cannot read the row type {spec!r}: {e}") from None
        return parse_type(obj["row"])
    lowered = _ALIASES.get(lowered, lowered)
    if lowered in SCALARS or lowered in VECTORS:
        return DataType(lowered)
    m = re.fullmatch(r"decimal\((\d+),(\d+)\)", lowered)
    if m:
        return DataType("decimal", precision=int(m.group(1)), scale=int(m.group(2)))
    if lowered.startswith("decimal"):
        raise TypeError_(f"decimal type should assign precision and scale information: {spec!r} "
                         "(write decimal(10, 2))")
    if lowered.startswith("array<") and lowered.endswith(">"):
        element = parse_type(text[6:-1])
        if element.name not in _ARRAY_ELEMENTS:
            raise TypeError_(f"unsupported array element type {element} in {spec!r}: arrays hold "
                             + ", ".join(_ARRAY_ELEMENTS))
        return DataType("array", element=element)
    if lowered.startswith("map<") and lowered.endswith(">"):
        inner = text[4:-1]
        parts = _split_top(inner)
        if len(parts) < 2:
            raise TypeError_(f"a map type needs a key and a value type: {spec!r}")
        key_text, value_text = parts[0], ",".join(parts[1:])
        return DataType("map", key=parse_type(key_text), element=parse_type(value_text))
    raise TypeError_(f"unknown type {spec!r}")


def parse_fields(fields: Mapping[str, Any]) -> Schema:
    return Schema(tuple(Field(str(name), parse_type(spec)) for name, spec in fields.items()))


def schema_from_options(options: Mapping[str, Any]) -> Schema | None:
    """The ``schema`` option of a source (``fields`` or ``columns`` form); None if absent."""
    schema = options.get("schema")
    if not isinstance(schema, Mapping):
        return None
    if "fields" in schema and "columns" in schema:
        raise TypeError_("schema config can't contain both [fields] and [columns]")
    if isinstance(schema.get("fields"), Mapping):
        return parse_fields(schema["fields"])
    if isinstance(schema.get("columns"), list):
        out = []
        for col in schema["columns"]:
            if not isinstance(col, Mapping) or "name" not in col or "type" not in col:
                raise TypeError_("schema.columns.* needs a name and a type")
            out.append(Field(str(col["name"]), parse_type(col["type"])))
        return Schema(tuple(out))
    return None


@dataclass(frozen=True)
class ConstraintKey:
    """A constraint key of a table: its name, type (``UNIQUE_KEY``, ``INDEX_KEY``...) and columns, each
    with its sort order (``ASC`` unless declared)."""

    name: str
    type: str
    columns: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type,
                "columns": [{"column": c, "sort": s} for c, s in self.columns]}


@dataclass(frozen=True)
class TableKeys:
    """A table's catalog keys: its primary key (name and columns) and its constraint keys.

    Keys survive a transform when every column they name is still in its output (by name); a key
    that loses a column is gone. The plan carries them, table by table, from the source that declares
    them to the sinks (``catalog`` of a plan vertex)."""

    primary_key: tuple[str, tuple[str, ...]] | None = None
    constraint_keys: tuple[ConstraintKey, ...] = ()

    @property
    def empty(self) -> bool:
        return self.primary_key is None and not self.constraint_keys

    def kept_by(self, names: Sequence[str]) -> TableKeys:
        """The keys whose columns are all among ``names`` (a transform's output fields)."""
        have = set(names)
        pk = self.primary_key if self.primary_key and set(self.primary_key[1]) <= have else None
        return TableKeys(pk, tuple(k for k in self.constraint_keys if {c for c, _ in k.columns} <= have))

    def to_json(self) -> dict[str, Any]:
        pk = self.primary_key
        return {"primary_key": {"name": pk[0], "columns": list(pk[1])} if pk else None,
                "constraint_keys": [k.to_json() for k in self.constraint_keys]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> TableKeys:
        if not d:
            return cls()
        pk = d.get("primary_key")
        keys = tuple(ConstraintKey(str(k.get("name")), str(k.get("type")),
                                   tuple((str(c["column"]), str(c.get("sort") or "ASC")) for c in k.get("columns", ())))
                     for k in d.get("constraint_keys") or ())
        return cls((str(pk["name"]), tuple(str(c) for c in pk["columns"])) if pk else None, keys)


def keys_from_options(schema: Any) -> TableKeys:
    """The keys a ``schema`` option declares: ``primaryKey { name, columnNames }`` and
    ``constraintKeys = [{ constraintName, constraintType, constraintColumns = [{ columnName, sortType }] }]``
    (sort ``ASC`` unless given). Raises TypeError_ for a malformed one."""
    if not isinstance(schema, Mapping):
        return TableKeys()
    pk = None
    raw_pk = schema.get("primaryKey")
    if raw_pk is not None:
        cols = raw_pk.get("columnNames") if isinstance(raw_pk, Mapping) else None
        name = raw_pk.get("name") if isinstance(raw_pk, Mapping) else None
        if not isinstance(name, str) or not isinstance(cols, list) or not cols:
            raise TypeError_("schema.primaryKey needs a name and columnNames = [column, ...]")
        pk = (name, tuple(str(c) for c in cols))
    keys = []
    raw_keys = schema.get("constraintKeys")
    for i, item in enumerate(raw_keys if isinstance(raw_keys, list) else ()):
        cols_raw = item.get("constraintColumns") if isinstance(item, Mapping) else None
        if not isinstance(item, Mapping) or not isinstance(cols_raw, list) or not item.get("constraintName"):
            raise TypeError_(f"schema.constraintKeys[{i}] needs constraintName, constraintType and "
                             "constraintColumns = [{ columnName, sortType }]")
        cols = tuple((str(c.get("columnName")), str(c.get("sortType") or "ASC").upper())
                     for c in cols_raw if isinstance(c, Mapping))
        keys.append(ConstraintKey(str(item["constraintName"]), str(item.get("constraintType") or "INDEX_KEY").upper(),
                                  cols))
    return TableKeys(pk, tuple(keys))


#: the Spark column metadata that carries a table's catalog keys read at run time (a Jdbc source's
#: primary and constraint keys), on each key column: a transform that keeps those columns keeps them
CATALOG_KEYS_METADATA = "seatunnel.catalog_keys"


def with_catalog_keys(df: Any, keys: TableKeys, *extra: Any) -> Any:
    """``df`` with ``keys`` in the metadata of every column they name, and the ``extra`` columns
    after its own: one projection, however many columns change (each DataFrame step costs the
    driver an analysis of the whole plan)."""
    import json

    from pyspark.sql import functions as F

    named = {c for c in ([*keys.primary_key[1]] if keys.primary_key else [])}
    named |= {c for k in keys.constraint_keys for c, _ in k.columns}
    fields = df.schema.fields
    if not named.intersection(f.name for f in fields):
        return df.select("*", *extra) if extra else df
    text = json.dumps(keys.to_json(), sort_keys=True)
    columns = [F.col("`" + f.name.replace("`", "``") + "`") for f in fields]
    columns = [c.alias(f.name, metadata={**f.metadata, CATALOG_KEYS_METADATA: text}) if f.name in named else c
               for c, f in zip(columns, fields, strict=True)]
    return df.select(*columns, *extra)


def schema_with_catalog_keys(schema: Any, keys: TableKeys, dropped: tuple[str, ...] = ()) -> Any:
    """The StructType of :func:`with_catalog_keys` for a DataFrame of ``schema`` (its columns
    ``dropped`` left out), built in Python: no DataFrame, no call into the JVM."""
    import json

    from pyspark.sql.types import StructField, StructType

    named = {c for c in ([*keys.primary_key[1]] if keys.primary_key else [])}
    named |= {c for k in keys.constraint_keys for c, _ in k.columns}
    text = json.dumps(keys.to_json(), sort_keys=True)
    return StructType([StructField(f.name, f.dataType, f.nullable,
                                   {**f.metadata, CATALOG_KEYS_METADATA: text} if f.name in named else f.metadata)
                       for f in schema.fields if f.name not in dropped])


def table_keys(vertex: Any, table: str, df: Any = None) -> TableKeys:
    """The catalog keys of ``table`` as the plan carries them to a sink (``catalog`` of its vertex:
    declared by the source, kept by every transform that kept their columns), else as the data's
    columns carry them (a Jdbc source reads its table's keys at run time; ``df`` None: none)."""
    catalog = getattr(vertex, "catalog", None) or {}
    planned = TableKeys.from_json(catalog.get(table)) if isinstance(catalog, Mapping) else TableKeys()
    return planned if not planned.empty or df is None else catalog_keys_of(df)


def catalog_keys_of(df: Any) -> TableKeys:
    """The catalog keys ``df``'s columns carry (:func:`with_catalog_keys`), as far as its columns
    still hold them; empty when none does."""
    import json

    for field in df.schema.fields:
        text = field.metadata.get(CATALOG_KEYS_METADATA)
        if text:
            return TableKeys.from_json(json.loads(text)).kept_by([f.name for f in df.schema.fields])
    return TableKeys()
