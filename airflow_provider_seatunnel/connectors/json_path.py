"""JsonPath transform: extracts values from JSON by path into typed columns.

``columns`` lists ``{src_field, dest_field, path, dest_type = "string",
column_error_handle_way}``; ``row_error_handle_way`` is FAIL (default) or SKIP. The source
field may be a string, bytes (UTF-8 text), an array or a map (as JSON) or a row (as a JSON
array of its field values), serialised as SeaTunnel's Jackson does (dates and timestamps inside
as java.time's number arrays, e.g. ``[2024, 1, 2]``). A null source gives null. A
destination named like an existing field overwrites it in place, the others are appended.

A path that does not exist, or a value that does not convert to ``dest_type``, is an
error, handled by the column's ``column_error_handle_way`` when set (FAIL: the job fails;
SKIP: the column is null; SKIP_ROW: the row is dropped), else by ``row_error_handle_way``
(FAIL, or SKIP: the row is dropped). The first column in config order whose error fails
or drops the row decides, as in SeaTunnel.

Spark translation: Spark's ``get_json_object`` reads the path, so paths must be definite:
``$``, ``.name``, ``['name']`` and ``[n]`` (n >= 0). Deep scans (``..``), wildcards
(``*``), filters (``[?(...)]``), slices, unions, negative indexes and functions are
rejected at compile time. Existence is checked natively on the parent (its object keys,
or its array length), so a present JSON null is a null value, not an error. Scalars are
cast with ``try_cast`` (bytes: base64, as Jackson reads them; boolean: ``true`` when the
text is true, as Java's ``parseBoolean``); arrays, maps and rows use ``from_json``. Deviation:
inside a row-typed destination a field that does not convert becomes null instead of an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..spi import TRANSFORM, Capabilities, Connector, Dataset, RunContext, SchemaInference, Transform, Vertex
from ..spi.optionspec import Option, OptionSpec, ParsedOptions
from ..spi.rows import quote
from .common import kind_columns, missing_message, single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import DataType, Schema

NAME = "JsonPath"
WAYS = ("FAIL", "SKIP", "SKIP_ROW")
SOURCE_TYPES = ("string", "bytes", "array", "map", "row")
_SIMPLE_NAME = re.compile(r"[A-Za-z0-9_$@-]+")


# ---------------------------------------------------------------- paths

def parse_path(path: str) -> list[tuple[str, Any]]:
    """The segments of a definite JSONPath: ``("key", name)`` or ``("index", n)``; ValueError otherwise."""
    s = path.strip()
    if not s.startswith("$"):
        raise ValueError("a JSONPath starts with $")
    segments: list[tuple[str, Any]] = []
    i, n = 1, len(s)
    while i < n:
        if s.startswith("..", i):
            raise ValueError("deep scan (..) is not supported")
        if s[i] == ".":
            j = i + 1
            while j < n and s[j] not in ".[":
                j += 1
            name = s[i + 1:j].strip()
            if not name:
                raise ValueError(f"an empty name at position {i + 1}")
            if name == "*":
                raise ValueError("wildcards (*) are not supported")
            if name.endswith(")"):
                raise ValueError(f"functions ({name}) are not supported")
            segments.append(("key", name))
            i = j
        elif s[i] == "[":
            j = i + 1
            if j < n and s[j] in "'\"":
                close = s.find(s[j], j + 1)
                if close == -1 or not s.startswith("]", close + 1):
                    raise ValueError(f"an unclosed quoted name at position {i + 1}")
                segments.append(("key", s[j + 1:close]))
                i = close + 2
                continue
            close = s.find("]", j)
            if close == -1:
                raise ValueError(f"an unclosed [ at position {i + 1}")
            inner = s[j:close].strip()
            if inner.isdigit():
                segments.append(("index", int(inner)))
            elif inner == "*":
                raise ValueError("wildcards ([*]) are not supported")
            elif inner.startswith("?"):
                raise ValueError("filters ([?(...)]) are not supported")
            elif ":" in inner:
                raise ValueError("array slices ([a:b]) are not supported")
            elif "," in inner:
                raise ValueError("unions ([a,b]) are not supported")
            elif inner.startswith("-"):
                raise ValueError("negative indexes are not supported")
            else:
                raise ValueError(f"cannot read [{inner}]")
            i = close + 1
        else:
            raise ValueError(f"unexpected {s[i]!r} at position {i + 1}")
    for kind, value in segments:
        if kind == "key" and "'" in value:
            raise ValueError(f"names with a quote ({value}) are not supported")
    return segments


def spark_path(segments: list[tuple[str, Any]]) -> str:
    """The path as Spark's ``get_json_object`` reads it."""
    out = "$"
    for kind, value in segments:
        if kind == "index":
            out += f"[{value}]"
        elif _SIMPLE_NAME.fullmatch(value):
            out += f".{value}"
        else:
            out += f"['{value}']"
    return out


# ---------------------------------------------------------------- options

SPEC = OptionSpec((
    Option("columns", "list", required=True, description="One object per extracted value: src_field, path (a "
           "JSONPath), dest_field, dest_type (string), column_error_handle_way."),
    Option("row_error_handle_way", default="FAIL", description="FAIL or SKIP: what a row whose value cannot be "
           "extracted does (a column's column_error_handle_way wins)."),
))


def _columns(o: ParsedOptions | None) -> list[dict[str, Any]]:
    """The ``columns`` objects (none when the block is invalid)."""
    return [] if o is None else [dict(c) for c in o["columns"] if isinstance(c, Mapping)]


def _way(value: Any) -> str | None:
    return None if value is None else str(value).strip().upper()


def _action(column: Mapping[str, Any], row_way: str) -> str:
    """What an error in ``column`` does: ``fail``, ``null`` or ``drop``."""
    way = _way(column.get("column_error_handle_way"))
    if way is None:
        return "drop" if row_way == "SKIP" else "fail"
    return {"SKIP": "null", "SKIP_ROW": "drop"}.get(way, "fail")


# ---------------------------------------------------------------- run time

def _jackson(col: Any, dtype: Any) -> Any:
    """``col`` reshaped so that Spark's ``to_json`` writes it as SeaTunnel's Jackson does: a date as
    ``[year, month, day]``, a timestamp as ``[year, month, day, hour, minute]`` plus the second when
    the second or the nanoseconds are not zero, plus the nanoseconds when not zero (java.time's
    array form), inside arrays and maps too; other values as they are."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, DateType, MapType, TimestampNTZType, TimestampType

    if isinstance(dtype, DateType):
        return F.when(col.isNotNull(), F.array(F.year(col), F.month(col), F.dayofmonth(col)))
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        nanos = (F.date_format(col, "SSSSSS").cast("int") * 1000)
        fields = [F.year(col), F.month(col), F.dayofmonth(col), F.hour(col), F.minute(col)]
        return (F.when(col.isNull(), F.lit(None))
                .when(nanos > 0, F.array(*fields, F.second(col), nanos))
                .when(F.second(col) > 0, F.array(*fields, F.second(col)))
                .otherwise(F.array(*fields)))
    if isinstance(dtype, ArrayType) and _has_time(dtype.elementType):
        return F.transform(col, lambda x: _jackson(x, dtype.elementType))
    if isinstance(dtype, MapType) and _has_time(dtype.valueType):
        return F.transform_values(col, lambda k, v: _jackson(v, dtype.valueType))
    return col


def _has_time(dtype: Any) -> bool:
    from pyspark.sql.types import ArrayType, DateType, MapType, TimestampNTZType, TimestampType

    if isinstance(dtype, ArrayType):
        return _has_time(dtype.elementType)
    if isinstance(dtype, MapType):
        return _has_time(dtype.valueType)
    return isinstance(dtype, (DateType, TimestampType, TimestampNTZType))


def _json_text(df: Any, field: str) -> Any:
    """The source field as JSON text, as SeaTunnel serialises it (Jackson): an array or a map as JSON, a
    row as the JSON array of its field values; dates and timestamps in them as java.time's arrays
    (:func:`_jackson`). Natively: Spark's ``to_json``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BinaryType, MapType, StringType, StructType

    from ..spi.errors import RuntimeConfigError

    col = F.col(quote(field))
    dtype = df.schema[field].dataType
    if isinstance(dtype, StringType):
        return col
    if isinstance(dtype, BinaryType):
        return col.cast("string")
    if isinstance(dtype, (ArrayType, MapType)):
        return F.to_json(_jackson(col, dtype))
    if isinstance(dtype, StructType):
        values = []
        for f in dtype.fields:
            one = F.to_json(F.array(_jackson(col.getField(f.name), f.dataType)))  # "[<value as JSON>]"
            values.append(F.substring(one, F.lit(2), F.length(one) - 2))
        text = F.concat(F.lit("["), F.concat_ws(",", *values), F.lit("]")) if values else F.lit("[]")
        return F.when(col.isNull(), F.lit(None)).otherwise(text)
    raise RuntimeConfigError(f"the source field '{field}' is {dtype.simpleString()}: JsonPath reads "
                             + ", ".join(SOURCE_TYPES))


def _exists(text: Any, segments: list[tuple[str, Any]]) -> Any:
    """Whether the path exists in ``text`` (checked on its parent: object keys or array length)."""
    from pyspark.sql import functions as F

    if not segments:
        return F.get_json_object(text, "$").isNotNull()
    parent = text if len(segments) == 1 else F.get_json_object(text, spark_path(segments[:-1]))
    kind, value = segments[-1]
    if kind == "index":
        return F.coalesce(F.json_array_length(parent) > F.lit(value), F.lit(False))
    return F.coalesce(F.array_contains(F.json_object_keys(parent), F.lit(value)), F.lit(False))


def _convert(raw: Any, dtype: DataType) -> tuple[Any, Any]:
    """``(value, conversion failed)`` of the extracted text ``raw`` as ``dtype``."""
    from pyspark.sql import functions as F

    never = F.lit(False)
    if dtype.name == "string":
        return raw, never
    if dtype.name == "null":
        return F.lit(None), never
    if dtype.name == "boolean":
        return F.when(raw.isNull(), F.lit(None)).otherwise(F.lower(raw) == F.lit("true")), never
    if dtype.name == "bytes":
        value = F.try_to_binary(raw, F.lit("base64"))
    elif dtype.name in ("array", "map", "row"):
        value = F.from_json(raw, dtype.to_spark())
        if dtype.name == "row":
            return value, raw.isNotNull() & F.json_object_keys(raw).isNull()
    else:
        value = F.trim(raw).try_cast(dtype.to_spark())
    return value, raw.isNotNull() & value.isNull()


class JsonPath(Connector, SchemaInference, Transform):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Extracts values from JSON text by path."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        from ..spi.schema import TypeError_, parse_type

        found: list[Problem] = []
        o = SPEC.valid(plugin.options)
        if o is None:
            return []  # the spec reports why: missing, or not a list
        raw = o["columns"]
        if not raw:
            return [job.problem("columns must not be empty", plugin, key="columns",
                                hint='columns = [{ src_field = "data", path = "$.a", dest_field = "a" }]')]
        row_way = _way(o["row_error_handle_way"])
        if row_way not in ("FAIL", "SKIP"):
            found.append(job.problem(f"row_error_handle_way must be FAIL or SKIP, found {row_way}", plugin,
                                     key="row_error_handle_way"))
        for i, column in enumerate(raw):
            where = f"columns[{i}]"
            if not isinstance(column, Mapping):
                found.append(job.problem(f"{where} must be an object", plugin, key="columns"))
                continue
            for key in ("src_field", "dest_field", "path"):
                if not str(column.get(key) or "").strip():
                    found.append(job.problem(f"{where}.{key} must not be empty", plugin, key="columns"))
            if column.get("path"):
                try:
                    parse_path(str(column["path"]))
                except ValueError as e:
                    found.append(job.problem(f"{where}.path {column['path']!r}: {e}", plugin, key="columns",
                                             hint="Spark reads definite paths: $.a.b, $['a b'], $.a[0]"))
            try:
                parse_type(column.get("dest_type", "string"))
            except TypeError_ as e:
                found.append(job.problem(f"{where}.dest_type: {e}", plugin, key="columns"))
            way = _way(column.get("column_error_handle_way"))
            if way is not None and way not in WAYS:
                found.append(job.problem(f"{where}.column_error_handle_way must be one of {', '.join(WAYS)}, "
                                         f"found {way}", plugin, key="columns"))
        return found

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        from ..spi.schema import Field, TypeError_, parse_type

        source = inputs[0] if inputs else None
        columns = _columns(SPEC.valid(plugin.options))
        if source is None or not columns:
            return None, []
        problems: list[Problem] = []
        out = source
        for column in columns:
            src = str(column.get("src_field") or "")
            found = source.get(src) if src in source.names else None
            if found is None:
                problems.append(job.problem(missing_message(NAME, [src]), plugin, key="columns",
                                            hint="the fields are: " + ", ".join(source.names)))
                continue
            if found.type.name not in SOURCE_TYPES:
                problems.append(job.problem(f"the source field '{src}' is {found.type}: JsonPath reads "
                                            + ", ".join(SOURCE_TYPES), plugin, key="columns"))
                continue
            try:
                new = Field(str(column.get("dest_field")), parse_type(column.get("dest_type", "string")))
            except TypeError_:
                return None, problems  # reported by the check
            out = out.with_field(new)
        return (None if problems else out), problems

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        from ..spi.errors import RuntimeConfigError
        from ..spi.rows import data_columns
        from ..spi.schema import TypeError_, parse_type

        o = SPEC.run_time(vertex.config)
        columns = _columns(o)
        if not columns:
            raise RuntimeConfigError("columns must not be empty")
        row_way = _way(o["row_error_handle_way"])
        plans = []
        for i, column in enumerate(columns):
            try:
                segments = parse_path(str(column.get("path") or ""))
                dtype = parse_type(column.get("dest_type", "string"))
            except (ValueError, TypeError_) as e:
                raise RuntimeConfigError(f"columns[{i}]: {e}") from None
            plans.append((str(column.get("src_field")), str(column.get("dest_field")), segments, dtype,
                          _action(column, row_way or "FAIL"), str(column.get("path"))))

        out = {}
        for table, df in single_input(inputs).items():
            known = data_columns(df)
            missing = [p[0] for p in plans if p[0] not in known]
            if missing:
                raise RuntimeConfigError(missing_message(NAME, list(dict.fromkeys(missing))))
            staged, decide, values = [], [], {}
            for i, (src, dest, segments, dtype, action, path) in enumerate(plans):
                text = _json_text(df, src)
                raw = F.get_json_object(text, spark_path(segments))
                value, bad_value = _convert(raw, dtype)
                bad_path = text.isNotNull() & ~_exists(text, segments)
                failed = f"__st_jp_err_{i}"
                staged += [F.when(bad_path, F.lit(1)).when(bad_value, F.lit(2)).otherwise(F.lit(0)).alias(failed),
                           F.when(bad_path | bad_value, F.lit(None)).otherwise(value).alias(f"__st_jp_val_{i}"),
                           F.substring(text, 1, 256).alias(f"__st_jp_txt_{i}")]
                values[dest] = F.col(f"__st_jp_val_{i}")
                if action == "null":
                    continue
                error = F.col(failed) > 0
                if action == "drop":
                    decide.append((error, F.lit(False)))
                    continue
                message = F.when(F.col(failed) == 1, F.concat(
                    F.lit(f"JsonPath transform error: the path {path} does not exist in the field '{src}' "
                          f"(dest_field {dest}); value: "), F.col(f"__st_jp_txt_{i}"))).otherwise(F.lit(
                        f"JsonPath data conversion failure, src_field={src}, dest_field={dest}, dest_type={dtype}"))
                decide.append((error, F.raise_error(message).cast("boolean")))
            work = df.select("*", *staged)
            if decide:
                keep = F.when(decide[0][0], decide[0][1])
                for condition, outcome in decide[1:]:
                    keep = keep.when(condition, outcome)
                work = work.where(keep.otherwise(F.lit(True)))
            result: dict[str, Any] = {c: F.col(quote(c)) for c in known}
            result.update(values)
            out[table] = work.select(*[col.alias(name) for name, col in result.items()], *kind_columns(df))
        return out


CONNECTOR = JsonPath()
