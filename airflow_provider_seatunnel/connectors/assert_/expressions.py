"""Assert's per-value checks as native Spark expressions (no Python UDF): type checks, the field_value
rules, ``equals_to`` comparisons, and the text of an offending value.

A declared ``timestamp`` accepts Spark's timestamp with and without time zone, ``time`` any TIME,
``"null"`` any column whose values are all null. Decimals are equal only with equal scales (as
BigDecimals are); MIN and MAX hold for numeric columns only; lengths are Java's ``String.valueOf``
lengths. A value breaks its rule when the check is null (a null never passes MIN).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ...spi.schema import DataType
from .rules import ValueRule
from .values import convert_expected


def _inner(part: DataType | None) -> DataType:
    """The element, key or value type of an array or map type (the type parser always sets it)."""
    if part is None:
        raise ValueError("an array or map type needs its element types")
    return part


def spark_type_name(t: Any) -> str:
    """A Spark type written as a SeaTunnel type string."""
    from pyspark.sql import types as T

    simple = [(T.StringType, "string"), (T.BooleanType, "boolean"), (T.ByteType, "tinyint"),
              (T.ShortType, "smallint"), (T.IntegerType, "int"), (T.LongType, "bigint"), (T.FloatType, "float"),
              (T.DoubleType, "double"), (T.BinaryType, "bytes"), (T.DateType, "date"),
              (T.TimestampNTZType, "timestamp"), (T.TimestampType, "timestamp"), (T.NullType, "null")]
    for cls, name in simple:
        if isinstance(t, cls):
            return name
    if isinstance(t, T.TimeType):
        return "time"
    if isinstance(t, T.DecimalType):
        return f"decimal({t.precision}, {t.scale})"
    if isinstance(t, T.ArrayType):
        return f"array<{spark_type_name(t.elementType)}>"
    if isinstance(t, T.MapType):
        return f"map<{spark_type_name(t.keyType)}, {spark_type_name(t.valueType)}>"
    if isinstance(t, T.StructType):
        return "{" + ", ".join(f"{f.name} = {spark_type_name(f.dataType)}" for f in t.fields) + "}"
    return t.simpleString()


def type_matches(declared: DataType, actual: Any, strict: bool = False) -> bool:
    """Whether a Spark type is the declared SeaTunnel type (nested types recursively).

    A decimal needs the same scale; its precision is checked per value (a value's precision
    may not exceed the declared one), or equal when ``strict`` (column rules). A declared
    ``timestamp`` accepts Spark's timestamp with and without time zone, ``time`` any TIME,
    ``"null"`` any type (its values must be null) unless ``strict``.
    """
    from pyspark.sql import types as T

    name = declared.name
    if declared.storage is not declared:  # a vector: its values' type
        return type_matches(declared.storage, actual, strict)
    if name == "null":  # any column: its values must all be null (checked per value)
        return not strict or isinstance(actual, T.NullType)
    if name == "decimal":
        return (isinstance(actual, T.DecimalType) and actual.scale == declared.scale
                and (not strict or actual.precision == min(declared.precision or 0, 38)))
    if name == "timestamp":
        return isinstance(actual, (T.TimestampNTZType, T.TimestampType))
    if name == "time":
        return isinstance(actual, T.TimeType)
    if name == "string":
        return isinstance(actual, (T.StringType, T.CharType, T.VarcharType))
    if name == "array":
        return isinstance(actual, T.ArrayType) and type_matches(_inner(declared.element), actual.elementType, strict)
    if name == "map":
        return (isinstance(actual, T.MapType) and type_matches(_inner(declared.key), actual.keyType, strict)
                and type_matches(_inner(declared.element), actual.valueType, strict))
    if name == "row":
        return (isinstance(actual, T.StructType) and len(actual.fields) == len(declared.fields)
                and all(d.name == a.name and type_matches(d.type, a.dataType, strict)
                        for d, a in zip(declared.fields, actual.fields, strict=True)))
    return type(actual) is type(declared.to_spark())


def type_ok(col: Any, declared: DataType, actual: Any) -> Any:
    """Per value, SeaTunnel's type check once the column type matched: no nulls (except for
    a ``"null"`` type, which allows only nulls), nested values alike, decimal precision."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if declared.name == "null":
        return col.isNull()
    ok = col.isNotNull()
    if declared.name == "decimal" and actual.precision > (declared.precision or 0):
        digits = (declared.precision or 0) - (declared.scale or 0)
        bound_type = T.DecimalType(digits + 1, 0) if digits >= 0 else T.DecimalType(-digits, -digits)
        bound = F.lit(Decimal(10) ** digits).cast(bound_type)
        ok = ok & (F.abs(col) < bound)
    elif declared.name == "array":
        ok = ok & F.forall(col, lambda x: type_ok(x, _inner(declared.element), actual.elementType))
    elif declared.name == "map":
        ok = (ok & F.forall(F.map_keys(col), lambda x: type_ok(x, _inner(declared.key), actual.keyType))
              & F.forall(F.map_values(col), lambda x: type_ok(x, _inner(declared.element), actual.valueType)))
    elif declared.name == "row":
        for d, a in zip(declared.fields, actual.fields, strict=True):
            ok = ok & type_ok(col.getField(a.name), d.type, a.dataType)
    return ok


def _equals(col: Any, expected: Any, declared: DataType, actual: Any) -> Any:
    """Whether ``col`` equals the converted ``equals_to`` value: arrays element-wise, maps by
    keys and values (in any order), rows field by field, decimals with their scale."""
    from pyspark.sql import functions as F

    if expected is None:
        return col.isNull()
    name = declared.name
    if name == "array":
        out = F.size(col) == len(expected)
        for i, item in enumerate(expected):
            out = out & _equals(F.try_element_at(col, F.lit(i + 1)), item, _inner(declared.element), actual.elementType)
        return out
    if name == "map":
        out = F.size(col) == len(expected)
        for key, item in expected.items():
            k = _literal(key, _inner(declared.key), actual.keyType)
            out = out & F.array_contains(F.map_keys(col), k) & _equals(F.try_element_at(col, k), item,
                                                                       _inner(declared.element), actual.valueType)
        return out
    if name == "row":
        out = F.lit(True)
        for item, d, a in zip(expected, declared.fields, actual.fields, strict=True):
            out = out & _equals(col.getField(a.name), item, d.type, a.dataType)
        return out
    if name == "decimal":
        exponent = expected.as_tuple().exponent
        digits = len(expected.as_tuple().digits)
        if -exponent != actual.scale or digits > actual.precision:
            return F.lit(False)  # BigDecimal equality needs the same scale
    return col.eqNullSafe(_literal(expected, declared, actual))


def _literal(value: Any, declared: DataType, actual: Any) -> Any:
    from pyspark.sql import functions as F

    if declared.name == "timestamp":
        return F.lit(value.isoformat(sep=" ")).cast(actual)
    if declared.name == "time":
        return F.lit(value.isoformat()).cast(actual)
    if declared.name == "bytes":
        return F.lit(bytearray(value))
    return F.lit(value).cast(actual)


def _java_length(col: Any, actual: Any) -> Any:
    """The length of ``String.valueOf(value)`` (a null counts as ""), as SeaTunnel measures it.

    Strings count UTF-16 units; timestamps and times follow Java's ISO text (seconds left
    out when zero, fractions in 3 or 6 digits); bytes count bytes; other values use
    Spark's text form (which matches Java's for numbers, dates and booleans).
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(actual, T.StringType):
        length = F.length(col) + F.length(F.regexp_replace(col, r"[\x{0}-\x{FFFF}]", ""))
    elif isinstance(actual, (T.TimestampType, T.TimestampNTZType, T.TimeType)):
        seconds = F.extract(F.lit("SECOND"), col)
        micros = (seconds * 1000000).cast("long") % 1000000
        length = (F.lit(16 if not isinstance(actual, T.TimeType) else 5)
                  + F.when((F.floor(seconds) != 0) | (micros != 0), 3).otherwise(0)
                  + F.when(micros == 0, 0).when(micros % 1000 == 0, 4).otherwise(7))
    elif isinstance(actual, T.BinaryType):
        length = F.length(col)
    else:
        length = F.length(col.cast("string"))
    return F.coalesce(length, F.lit(0))


def display(col: Any, actual: Any) -> Any:
    """An offending value as text for the failure message."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(actual, T.StringType):
        text = F.concat(F.lit("'"), col, F.lit("'"))
    elif isinstance(actual, T.BinaryType):
        text = F.concat(F.lit("0x"), F.hex(col))
    else:
        text = col.cast("string")
    return F.coalesce(text, F.lit("null"))


def value_fails(col: Any, rule: ValueRule, declared: DataType, actual: Any) -> Any:
    """Whether a value breaks one field_value entry (its rule type and its equals_to)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    fails = F.lit(False)
    kind = rule.rule_type
    if kind == "NULL":
        fails = col.isNotNull()
    elif kind == "NOT_NULL":
        fails = col.isNull()
    elif kind in ("MIN", "MAX"):
        if isinstance(actual, T.NumericType):  # Java: the value must be a Number
            number = col.cast("double")
            beyond = number < rule.rule_value if kind == "MIN" else number > rule.rule_value
            fails = col.isNull() | F.isnan(number) | beyond
        else:
            fails = F.lit(True)
    elif kind in ("MIN_LENGTH", "MAX_LENGTH"):
        length = _java_length(col, actual)
        fails = length < rule.rule_value if kind == "MIN_LENGTH" else length > rule.rule_value
    if rule.has_equals:
        expected = convert_expected(rule.equals_to, declared)
        fails = fails | (col.isNotNull() & ~F.coalesce(_equals(col, expected, declared, actual), F.lit(False)))
    return F.coalesce(fails, F.lit(True))

