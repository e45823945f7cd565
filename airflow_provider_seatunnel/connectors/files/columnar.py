"""The column types the columnar writers store, as SeaTunnel's writers store them."""

from __future__ import annotations

from typing import Any


def parquet_type(dtype: Any) -> Any:
    """The Spark type a parquet column of ``dtype`` is written as: every tinyint and smallint, nested ones
    too, as int. SeaTunnel writes parquet through an Avro schema, which has no narrower integer: such
    columns are plain INT32 without the INT(8)/INT(16) annotation (pyarrow reads ``int32``), and a reader
    gets them back as int. The values are the same; other types are kept."""
    from pyspark.sql import types as T

    if isinstance(dtype, (T.ByteType, T.ShortType)):
        return T.IntegerType()
    if isinstance(dtype, T.ArrayType):
        return T.ArrayType(parquet_type(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, T.MapType):
        return T.MapType(parquet_type(dtype.keyType), parquet_type(dtype.valueType), dtype.valueContainsNull)
    if isinstance(dtype, T.StructType):
        return T.StructType([T.StructField(f.name, parquet_type(f.dataType), f.nullable, f.metadata)
                             for f in dtype.fields])
    return dtype
