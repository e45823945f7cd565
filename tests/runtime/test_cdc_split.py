"""A shared CDC stream's micro-batch split into its tables (connectors/cdc/stream.py): the projection
built as SQL text (:func:`typed_rows`) gives the rows, types and column metadata that :func:`typed` of
the column-by-column filter and projection (:func:`_project` here) gives, for every type the stream
casts and a table id that needs quoting."""

from __future__ import annotations

from decimal import Decimal

from airflow_provider_seatunnel.connectors.cdc.stream import (
    KIND_COLUMN,
    VALUES_COLUMN,
    raw_schema,
    typed,
    typed_rows,
)
from airflow_provider_seatunnel.spi.rows import ROW_KIND
from airflow_provider_seatunnel.spi.sharedstream import TABLE_COLUMN


def _project(raw, tid, schema):
    """The reference split: table ``tid``'s rows of ``raw``, one text column per column of ``schema``
    and the row kind, built column by column with the Python API (as the split did before)."""
    from pyspark.sql import functions as F

    values = F.col(VALUES_COLUMN)
    return raw.filter(F.col(TABLE_COLUMN) == F.lit(tid)).select(
        *[values.getItem(i).alias(f.name) for i, f in enumerate(schema.fields)], F.col(KIND_COLUMN))


def _schema():
    from pyspark.sql import types as T

    return T.StructType([
        T.StructField("id", T.IntegerType(), False, {"seatunnel.catalog_keys": "{}"}),
        T.StructField("name", T.StringType(), True, {"__CHAR_VARCHAR_TYPE_STRING": "varchar(40)"}),
        T.StructField("amount", T.DecimalType(10, 2)),
        T.StructField("ok", T.BooleanType()),
        T.StructField("at", T.TimestampNTZType()),
        T.StructField("day", T.DateType()),
        T.StructField("blob", T.BinaryType()),
        T.StructField("big", T.LongType()),
        T.StructField("ratio", T.DoubleType()),
    ])


ODD = "db.public.it's \\\\ odd"  # a quote and a backslash in the table id


def _raw(spark):
    rows = [
        ("db.public.a", ["1", "x", "1.50", "t", "2024-01-02 03:04:05.123456", "2024-01-02", "\\x6869", "9007199254740993",
                         "0.25"], 0),
        ("db.public.a", ["2", None, None, "false", None, None, None, None, None], 3),
        (ODD, ["3", "y", "2.00", "1", "2024-02-03 00:00:00", "2024-02-03", "\\x", "-1", "1e3"], 2),
        ("db.public.b", ["4", "z", "3.00", "0", None, None, None, None, None], 0),
    ]
    return spark.createDataFrame(rows, raw_schema())


def test_the_sql_projection_equals_the_column_by_column_one(spark):
    raw, schema = _raw(spark), _schema()
    for tid in ("db.public.a", ODD, "db.public.missing"):
        fast, slow = typed_rows(raw, tid, schema), typed(_project(raw, tid, schema), schema)
        assert [(f.name, f.dataType, f.metadata) for f in fast.schema.fields] == \
            [(f.name, f.dataType, f.metadata) for f in slow.schema.fields]
        assert sorted(fast.collect(), key=str) == sorted(slow.collect(), key=str)
    one = typed_rows(raw, "db.public.a", schema).orderBy("id").collect()
    assert one[0]["amount"] == Decimal("1.50") and one[0]["ok"] is True and one[0]["blob"] == bytearray(b"hi")
    assert one[0]["big"] == 9007199254740993 and one[1][ROW_KIND] == 3 and one[1]["name"] is None
    assert typed_rows(raw, ODD, schema).collect()[0]["id"] == 3

