"""BSON documents to rows and rows to BSON documents, as SeaTunnel's MongoDB connector maps them.

Pure Python over the driver's ``bson`` package (imported by the functions that need it), used inside
Spark's Python workers. Reading, per declared field type (SeaTunnel's converter):

* ``boolean`` from a BSON boolean; ``int`` from an int32 only; ``bigint`` from an int32 or int64;
  ``double`` from any number; ``bytes`` from binary; ``date``/``timestamp`` from a date-time (or a
  BSON timestamp's seconds), in the worker's time zone; ``decimal(p, s)`` from a decimal128, rounded
  half-up to ``s`` (null when it needs more than ``p`` digits; an infinite or NaN one: NaN is null,
  infinity an error);
* ``string`` from a string, an ObjectId (its hex), a document (relaxed extended JSON), anything else
  as canonical extended JSON ``{"_value": ...}`` (so a writer can give the value its type back);
* ``array``, ``map`` (string keys) and ``row`` from arrays and documents, element by element;
* a missing field, null or undefined is null; another BSON type than the field's is a
  :class:`MongoValueError`. ``tinyint``, ``smallint``, ``float`` and ``time`` cannot be read
  (refused at compile time, as SeaTunnel does when it builds its converter).

Writing: int types to int32 (``bigint`` int64), float types to double, ``decimal`` to decimal128,
``bytes`` to binary, ``date`` (midnight) and ``timestamp`` to date-times of the worker's time zone, a
string that is ``{"_value": ...}`` extended JSON to that value, else a string; nested types
element by element; null to null.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from ...spi.schema import DataType, Schema

VALUE_FIELD = "_value"

Converter = Callable[[Any], Any]


class MongoValueError(ValueError):
    """A BSON value the declared type cannot hold."""


def _bad(value: Any, wanted: str) -> MongoValueError:
    return MongoValueError(f"cannot convert {type(value).__name__} value {str(value)[:80]!r} to {wanted}")


def _is_null(value: Any) -> bool:
    from bson.decimal128 import Decimal128

    if value is None or type(value).__name__ == "Undefined":
        return True
    return isinstance(value, Decimal128) and value.to_decimal().is_nan()


def _int32(value: Any) -> int:
    from bson.int64 import Int64

    if isinstance(value, int) and not isinstance(value, (bool, Int64)):
        return int(value)
    raise _bad(value, "int")


def _int64(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    raise _bad(value, "bigint")


def _double(value: Any) -> float:
    from bson.decimal128 import Decimal128

    if isinstance(value, Decimal128):
        return float(value.to_decimal())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise _bad(value, "double")


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _bad(value, "boolean")


def _bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise _bad(value, "bytes")


def _local_datetime(value: Any) -> dt.datetime:
    from bson.timestamp import Timestamp

    if isinstance(value, Timestamp):
        instant = dt.datetime.fromtimestamp(value.time, dt.UTC)
    elif isinstance(value, dt.datetime):
        instant = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    else:
        raise _bad(value, "timestamp")
    return instant.astimezone().replace(tzinfo=None)


def text_of(value: Any) -> str:
    """SeaTunnel's string of a BSON value."""
    from bson import ObjectId, json_util
    from bson.json_util import CANONICAL_JSON_OPTIONS, RELAXED_JSON_OPTIONS

    if isinstance(value, str):
        return value
    if isinstance(value, ObjectId):
        return str(value)
    if isinstance(value, Mapping):
        return str(json_util.dumps(value, json_options=RELAXED_JSON_OPTIONS))
    return str(json_util.dumps({VALUE_FIELD: value}, json_options=CANONICAL_JSON_OPTIONS))


def _decimal(precision: int, scale: int) -> Converter:
    def convert(value: Any) -> decimal.Decimal | None:
        from bson.decimal128 import Decimal128

        if not isinstance(value, Decimal128):
            raise _bad(value, f"decimal({precision}, {scale})")
        d = value.to_decimal()
        if not d.is_finite():
            raise MongoValueError("cannot convert an infinite decimal128 to a decimal")
        d = d.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
        return None if len(d.as_tuple().digits) > precision else d
    return convert


def reader_of(t: DataType) -> Converter:
    """The converter of one BSON value to the field type ``t`` (null-safe)."""
    inner = _reader(t)

    def convert(value: Any) -> Any:
        return None if _is_null(value) else inner(value)
    return convert


def _reader(t: DataType) -> Converter:
    simple: dict[str, Converter] = {"boolean": _boolean, "int": _int32, "bigint": _int64, "double": _double,
                                    "bytes": _bytes, "string": text_of, "timestamp": _local_datetime,
                                    "date": lambda v: _local_datetime(v).date(), "null": lambda v: None}
    if t.name in simple:
        return simple[t.name]
    if t.name == "decimal":
        return _decimal(int(t.precision or 38), int(t.scale or 0))
    if t.name == "array":
        assert t.element is not None
        element = reader_of(t.element)

        def array(value: Any) -> list[Any]:
            if not isinstance(value, list):
                raise _bad(value, str(t))
            return [element(v) for v in value]
        return array
    if t.name == "map":
        assert t.element is not None
        if t.key is None or t.key.name != "string":
            raise MongoValueError(f"BSON documents have string keys only: {t} cannot be read")
        value_of = reader_of(t.element)

        def as_map(value: Any) -> dict[str, Any]:
            if not isinstance(value, Mapping):
                raise _bad(value, str(t))
            return {str(k): value_of(v) for k, v in value.items()}
        return as_map
    if t.name == "row":
        row = row_reader(Schema(t.fields))

        def as_row(value: Any) -> tuple[Any, ...]:
            if not isinstance(value, Mapping):
                raise _bad(value, str(t))
            return row(value)
        return as_row
    raise MongoValueError(f"SeaTunnel's MongoDB source cannot read type {t}")


def row_reader(schema: Schema) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """A document to the schema's row: each field by name, converted."""
    fields = [(f.name, reader_of(f.type)) for f in schema.fields]

    def read(doc: Mapping[str, Any]) -> tuple[Any, ...]:
        out = []
        for name, convert in fields:
            try:
                out.append(convert(doc.get(name)))
            except MongoValueError as e:
                raise MongoValueError(f"field '{name}': {e}") from None
        return tuple(out)
    return read


# ------------------------------------------------------------------------------------------------
# rows to documents (Spark's Python values; the writer passes Spark's field types)
# ------------------------------------------------------------------------------------------------

def _string_value(text: str) -> Any:
    """A string, or the value of ``{"_value": ...}`` extended JSON (SeaTunnel's round trip of other types)."""
    if text.startswith("{") and text.endswith("}") and VALUE_FIELD in text:
        from bson import json_util

        try:
            doc = json_util.loads(text)
        except (ValueError, TypeError):
            return text
        if isinstance(doc, Mapping) and VALUE_FIELD in doc:
            return doc[VALUE_FIELD]
    return text


def _midnight(value: dt.date) -> dt.datetime:
    return dt.datetime(value.year, value.month, value.day).astimezone()


def writer_of(spark_type: Any) -> Converter:
    """The converter of one Spark value of ``spark_type`` to its BSON value (null-safe)."""
    from bson.decimal128 import Decimal128
    from bson.int64 import Int64
    from pyspark.sql import types as T

    inner: Converter
    if isinstance(spark_type, T.LongType):
        inner = Int64
    elif isinstance(spark_type, (T.IntegerType, T.ShortType, T.ByteType)):
        inner = int
    elif isinstance(spark_type, (T.FloatType, T.DoubleType)):
        inner = float
    elif isinstance(spark_type, T.DecimalType):
        inner = Decimal128
    elif isinstance(spark_type, T.StringType):
        inner = _string_value
    elif isinstance(spark_type, T.BinaryType):
        inner = bytes
    elif isinstance(spark_type, (T.TimestampType, T.TimestampNTZType)):
        inner = lambda v: v.astimezone() if v.tzinfo is None else v  # noqa: E731
    elif isinstance(spark_type, T.DateType):
        inner = _midnight
    elif isinstance(spark_type, T.ArrayType):
        element = writer_of(spark_type.elementType)
        inner = lambda v: [element(x) for x in v]  # noqa: E731
    elif isinstance(spark_type, T.MapType):
        value_of = writer_of(spark_type.valueType)
        inner = lambda v: {str(k): value_of(x) for k, x in v.items()}  # noqa: E731
    elif isinstance(spark_type, T.StructType):
        inner = document_writer(spark_type)
    else:
        inner = lambda v: v  # noqa: E731 - booleans, nulls

    def convert(value: Any) -> Any:
        return None if value is None else inner(value)
    return convert


def document_writer(struct: Any) -> Callable[[Any], dict[str, Any]]:
    """A Spark row (a tuple in the struct's field order) to its document."""
    fields = [(f.name, writer_of(f.dataType)) for f in struct.fields]

    def write(row: Any) -> dict[str, Any]:
        return {name: convert(row[i]) for i, (name, convert) in enumerate(fields)}
    return write
