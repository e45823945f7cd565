"""Kafka record values to rows and back, as native Spark expressions (no Python UDFs).

Reading (:func:`decode`): a record's value is parsed as JSON into ``map<string, string>`` (a
nested value keeps its JSON text) and every field of the schema is then converted from that text
(numbers, booleans, dates, timestamps, decimals by a cast; arrays, maps and rows parsed again with
their type), so ``"42"`` and ``42`` both read as an ``int``, as SeaTunnel's JSON reader does.

* ``json``: one row (INSERT) per record; ``text``: the value split at ``field_delimiter``, the
  parts given to the schema's fields in order; no schema: the value as the one field ``content``;
* change logs, each record one or more rows with their row kind:

  ============== ======================================== ============================================
  format         record                                   rows
  ============== ======================================== ============================================
  debezium_json  ``{before, after, op}`` (in ``payload``  ``c``/``r``: +I after; ``u``: -U before,
                 with ``debezium_record_include_schema``) +U after; ``d``: -D before
  canal_json     ``{data: [..], old: [..], type}``        INSERT: +I each; UPDATE: -U (``data``
                                                          overlaid by ``old``), +U ``data``;
                                                          DELETE: -D each
  ogg_json       ``{before, after, op_type}``             ``I``: +I; ``U``: -U, +U; ``D``: -D
  maxwell_json   ``{data, old, type}``                    insert: +I; update: -U (overlaid), +U;
                                                          delete: -D
  ============== ======================================== ============================================

  Records of other operations (DDL, truncates, tombstones) give no rows.

Malformed records: ``format_error_handle_way = fail`` fails a ``json`` read (Spark's FAILFAST JSON
parsing); ``skip`` drops them (and reads a value that does not fit its type as null). Change-log
formats drop records they cannot parse whatever the option says, as SeaTunnel's Kafka source does.
Text: a blank or missing field is null.

``avro``: raw Avro binary records of the schema SeaTunnel derives from the row type (:func:`avro_schema`),
read with ``from_avro``.

Writing (:func:`encode`): ``json`` writes the fields as an object (dates and timestamps in ISO
form); ``text`` joins them with ``field_delimiter`` (null as the empty string); ``debezium_json``
writes ``{before, after, op}`` (+I/+U: ``op = c`` with ``after``; -U/-D: ``op = d`` with
``before``); ``canal_json`` and ``ogg_json`` write ``{data, type}`` (``INSERT`` for +I/+U,
``DELETE`` for -U/-D), as SeaTunnel writes them (``maxwell_json`` too). The key (``partition_key_fields``) is the key
fields written the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...spi.rows import ROW_KIND, data_columns, quote
from ...spi.schema import Schema
from ..temporal import json_ready
from .options import TEXT_FIELD, TopicSpec

_COMPLEX = ("array", "map", "row")
#: a JSON object with every value as text (nested values keep their JSON)
STRING_MAP = "map<string, string>"
_DEBEZIUM_KINDS = {"c": 0, "r": 0, "u": (1, 2), "d": 3}
_ISO = {"timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]", "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]",
        "dateFormat": "yyyy-MM-dd", "ignoreNullFields": "false"}


def _typed(text: Any, dtype: Any, lenient: bool) -> Any:
    """The column ``text`` (a string) as ``dtype``: cast, or parsed JSON for arrays, maps and rows."""
    from pyspark.sql import functions as F

    spark_type = dtype.to_spark()
    if dtype.name in _COMPLEX:
        return F.from_json(text, spark_type, {"mode": "PERMISSIVE"})
    if dtype.name == "string":
        return text
    if dtype.name == "bytes":
        return text.cast("binary")
    return text.try_cast(spark_type) if lenient else text.cast(spark_type)


def _fields(schema: Schema, get: Any, lenient: bool) -> list[Any]:
    """The schema's fields, each from ``get(name)`` (a string column)."""
    return [_typed(get(f.name), f.type, lenient).alias(f.name) for f in schema.fields]


def _json_map(value: Any, strict: bool) -> Any:
    from pyspark.sql import functions as F

    mode = "FAILFAST" if strict else "PERMISSIVE"
    return F.from_json(value, STRING_MAP, {"mode": mode})


def decode(raw: Any, spec: TopicSpec) -> Any:
    """The rows of the Kafka records ``raw`` (Spark's Kafka source: ``value`` binary...) with the
    hidden row-kind column."""
    from pyspark.sql import functions as F

    from ...spi.rows import kind_literal

    value = F.col("value").cast("string")
    lenient = spec.error_way == "skip"
    schema = spec.output_schema()
    if spec.schema is None or not spec.schema.fields:
        return raw.select(value.alias(TEXT_FIELD), kind_literal(0).alias(ROW_KIND))
    if spec.format == "avro":
        from pyspark.sql.avro.functions import from_avro

        mode = "FAILFAST" if spec.error_way == "fail" else "PERMISSIVE"
        record = from_avro(F.col("value"), avro_schema(spec.schema.to_spark()), {"mode": mode}).alias("__r")
        rows = raw.where(F.col("value").isNotNull()).select(record).where(F.col("__r").isNotNull())
        return rows.select(*[F.col(f"__r.{quote(f.name)}").cast(f.type.to_spark()).alias(f.name)
                             for f in spec.schema.fields], kind_literal(0).alias(ROW_KIND))
    if spec.format == "text":
        parts = F.split(value, re.escape(spec.field_delimiter), -1)
        rows = raw.where(F.col("value").isNotNull()).select(parts.alias("__p"))

        def part(name: str) -> Any:  # blank and missing trailing fields are null
            text = F.get(F.col("__p"), schema.names.index(name))
            return F.when(F.trim(text) != "", text)

        return rows.select(*_fields(schema, part, lenient), kind_literal(0).alias(ROW_KIND))
    # SeaTunnel drops change-log records it cannot parse whatever format_error_handle_way says
    strict = spec.format == "json" and spec.error_way == "fail"
    parsed = raw.select(_json_map(value, strict).alias("__m"))
    parsed = parsed.where(F.col("__m").isNotNull())
    if spec.format == "json":
        return parsed.select(*_fields(schema, lambda n: F.col("__m")[n], lenient), kind_literal(0).alias(ROW_KIND))
    changes = _CHANGES[spec.format](F.col("__m"), spec)
    exploded = parsed.select(F.explode(changes).alias("__c"))
    m, o = F.col("__c.m"), F.col("__c.o")

    def get(name: str) -> Any:
        return F.when(F.map_contains_key(o, name), o[name]).otherwise(m[name])

    return exploded.select(*_fields(schema, get, lenient), F.col("__c.k").cast("tinyint").alias(ROW_KIND))


# ---------------------------------------------------------------------------------------------
# Change logs: each record -> array<struct<m: map (the row), o: map (overlaid on m, or null), k: kind>>
# ---------------------------------------------------------------------------------------------

def _map_of(text: Any) -> Any:
    from pyspark.sql import functions as F

    return F.from_json(text, STRING_MAP)


def _maps_of(text: Any) -> Any:
    """A JSON array of objects, or one object, as ``array<map>``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    as_list = F.from_json(text, T.ArrayType(T.MapType(T.StringType(), T.StringType())))
    return F.when(F.ltrim(text).startswith("["), as_list).otherwise(F.array(_map_of(text)))


def _change(m: Any, kind: int, o: Any = None) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    overlay = o if o is not None else F.lit(None).cast(T.MapType(T.StringType(), T.StringType()))
    return F.struct(m.alias("m"), overlay.alias("o"), F.lit(kind).alias("k"))


def _none() -> Any:
    from pyspark.sql import functions as F

    return F.filter(F.array(_change(_map_of(F.lit("{}")), 0)), lambda c: F.lit(False))


def _debezium(record: Any, spec: TopicSpec) -> Any:
    from pyspark.sql import functions as F

    body = _map_of(record["payload"]) if spec.include_schema else record
    body = F.coalesce(body, record) if spec.include_schema else body
    before, after, op = _map_of(body["before"]), _map_of(body["after"]), body["op"]
    return (F.when(op.isin("c", "r"), F.array(_change(after, 0)))
            .when(op == "u", F.array(_change(before, 1), _change(after, 2)))
            .when(op == "d", F.array(_change(before, 3)))
            .otherwise(_none()))


def _canal_like(record: Any, insert: str, update: str, delete: str) -> Any:
    """canal_json and maxwell_json: ``data`` (and ``old`` for updates), ``type``."""
    from pyspark.sql import functions as F

    data, old, kind = _maps_of(record["data"]), _maps_of(record["old"]), F.upper(record["type"])
    pairs = F.arrays_zip(data.alias("d"), F.coalesce(old, F.array()).alias("o"))
    updates = F.flatten(F.transform(pairs, lambda p: F.array(_change(p["d"], 1, p["o"]), _change(p["d"], 2))))
    return (F.when(kind == insert, F.transform(data, lambda d: _change(d, 0)))
            .when(kind == update, updates)
            .when(kind == delete, F.transform(data, lambda d: _change(d, 3)))
            .otherwise(_none()))


def _canal(record: Any, spec: TopicSpec) -> Any:
    from pyspark.sql import functions as F

    return F.when(F.coalesce(record["isDdl"], F.lit("false")) == "true", _none()).otherwise(
        _canal_like(record, "INSERT", "UPDATE", "DELETE"))


def _maxwell(record: Any, spec: TopicSpec) -> Any:
    return _canal_like(record, "INSERT", "UPDATE", "DELETE")


def _ogg(record: Any, spec: TopicSpec) -> Any:
    from pyspark.sql import functions as F

    before, after, op = _map_of(record["before"]), _map_of(record["after"]), F.upper(record["op_type"])
    return (F.when(op == "I", F.array(_change(after, 0)))
            .when(op == "U", F.array(_change(before, 1), _change(after, 2)))
            .when(op == "D", F.array(_change(before, 3)))
            .otherwise(_none()))


_CHANGES = {"debezium_json": _debezium, "canal_json": _canal, "ogg_json": _ogg, "maxwell_json": _maxwell}


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

def _json_of(columns: Sequence[str]) -> Any:
    from pyspark.sql import functions as F

    return F.to_json(F.struct(*[F.col(quote(c)) for c in columns]), _ISO)


def _text_of(columns: Sequence[str], delimiter: str) -> Any:
    from pyspark.sql import functions as F

    return F.concat_ws(delimiter, *[F.coalesce(F.col(quote(c)).cast("string"), F.lit("")) for c in columns])


def _is_insert() -> Any:
    from pyspark.sql import functions as F

    return F.coalesce(F.col(ROW_KIND), F.lit(0)).isin(0, 2)


def encode_value(df: Any, fmt: str, delimiter: str) -> Any:
    """The value column (a string) of ``df``'s rows in ``fmt``."""
    from pyspark.sql import functions as F

    columns = data_columns(df)
    if fmt == "text":
        return _text_of(columns, delimiter)
    if fmt == "avro":
        from pyspark.sql import types as T
        from pyspark.sql.avro.functions import to_avro

        data = T.StructType([f for f in df.schema.fields if f.name in columns])
        return to_avro(F.struct(*[F.col(quote(c)) for c in columns]), avro_schema(data))
    # json text of timestamps and times as SeaTunnel's json serializer writes them (no zero fraction)
    types = {f.name: f.dataType for f in df.schema.fields}
    row = F.struct(*[json_ready(F.col(quote(c)), types[c]).alias(c) for c in columns])
    if fmt == "json":
        return F.to_json(row, _ISO)
    if fmt == "debezium_json":
        ins = _is_insert()
        envelope = F.struct(F.when(~ins, row).alias("before"), F.when(ins, row).alias("after"),
                            F.when(ins, F.lit("c")).otherwise(F.lit("d")).alias("op"))
        return F.to_json(envelope, _ISO)
    # canal_json, ogg_json
    kind = F.when(_is_insert(), F.lit("INSERT")).otherwise(F.lit("DELETE"))
    envelope = F.struct(row.alias("data"), kind.alias("type"))
    return F.to_json(envelope, _ISO)


def encode_key(fields: Sequence[str], fmt: str, delimiter: str) -> Any:
    """The record key of ``partition_key_fields`` (None: records without a key): text for ``text``,
    else JSON."""
    if not fields:
        return None
    return _text_of(fields, delimiter) if fmt == "text" else _json_of(fields)


def _avro_type(name: str, dtype: Any) -> Any:
    """SeaTunnel's Avro type for a Spark type: no nulls, ``tinyint``/``smallint`` as ``int``, decimals as
    ``bytes`` with the decimal logical type, timestamps as ``local-timestamp-millis``, rows as records named
    after their field."""
    from pyspark.sql import types as T

    simple = {T.StringType: "string", T.BinaryType: "bytes", T.ByteType: "int", T.ShortType: "int",
              T.IntegerType: "int", T.LongType: "long", T.FloatType: "float", T.DoubleType: "double",
              T.BooleanType: "boolean", T.NullType: "null"}
    for spark_type, avro in simple.items():
        if isinstance(dtype, spark_type):
            return avro
    if isinstance(dtype, T.DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": dtype.precision, "scale": dtype.scale}
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        return {"type": "long", "logicalType": "local-timestamp-millis"}
    if isinstance(dtype, T.DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(dtype, T.ArrayType):
        return {"type": "array", "items": _avro_type(name, dtype.elementType)}
    if isinstance(dtype, T.MapType):
        return {"type": "map", "values": _avro_type(name, dtype.valueType)}
    if isinstance(dtype, T.StructType):
        return {"type": "record", "name": name, "fields": [{"name": f.name, "type": _avro_type(f.name, f.dataType)}
                                                           for f in dtype.fields]}
    raise ValueError(f"format avro cannot hold the field {name} of type {dtype.simpleString()} (as in SeaTunnel)")


def avro_schema(struct: Any) -> str:
    """The Avro schema SeaTunnel derives from a row type (the record ``SeaTunnelRecord``), as JSON:
    records are raw Avro binary of that schema, no header, no registry."""
    import json

    return json.dumps({"type": "record", "name": "SeaTunnelRecord",
                       "fields": [{"name": f.name, "type": _avro_type(f.name, f.dataType)} for f in struct.fields]})
