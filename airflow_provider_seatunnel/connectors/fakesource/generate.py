"""FakeSource's rows as native Spark expressions: random values drawn per row, and the literal ``rows``.

Randomness is a hash of (a salt, the draw's number within the table, the row id, the element
index), so values differ between rows, partitions and sources, yet a DataFrame recomputed (a
retried task, a second action) gives the same rows. Random values keep to their type's range, the
``*.min``/``*.max`` options (half-open ``[min, max)``) and the templates; the year of a random date
is this year. A ``defaultValue`` replaces every drawn value of its column.
"""

from __future__ import annotations

import math
import string
import struct
from datetime import datetime
from typing import Any

from ...spi.rows import ROW_KIND, ROW_KINDS, kind_literal
from ...spi.schema import VECTORS, DataType, TypeError_
from .options import Column, Table
from .values import FLOAT_RANGES, INT_RANGES, convert, row_values, text_of

LETTERS = string.ascii_letters
#: random date/time parts when there is no template: half-open ranges
PART_RANGES = {"month": (1, 13), "day": (1, 29), "hour": (0, 24), "minute": (0, 60), "second": (0, 60)}


def _next_float32_down(value: float) -> float:
    """The largest float32 below ``value`` (> 0)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<f", struct.pack("<I", bits - 1))[0]


def _float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


class Random:
    """Builds the random value expression of each column of one table.

    Every draw is ``xxhash64(salt, stream, row id, element indices…)``: ``stream`` numbers
    the draws of the table, so no two draws of a row share a hash.
    """

    def __init__(self, table: Table, salt: int, row_id: Any):
        self.table = table
        self.salt = salt
        self.row_id = row_id
        self.stream = 0
        self.year = datetime.now().year

    def _hash(self, idx: list) -> Any:
        from pyspark.sql import functions as F

        self.stream += 1
        return F.xxhash64(F.lit(self.salt), F.lit(self.stream), self.row_id, *idx)

    def below(self, n: int, idx: list) -> Any:
        """A long in [0, n)."""
        from pyspark.sql import functions as F

        return F.pmod(self._hash(idx), F.lit(n))

    def unit(self, idx: list) -> Any:
        """A double in [0, 1)."""
        from pyspark.sql import functions as F

        return F.shiftrightunsigned(self._hash(idx), 11).cast("double") * F.lit(2.0 ** -53)

    def pick(self, values: list, spark_type: Any, idx: list) -> Any:
        from pyspark.sql import functions as F

        if len(values) == 1:
            return F.lit(values[0]).cast(spark_type)
        options = F.array(*[F.lit(v).cast(spark_type) for v in values])
        return F.element_at(options, (self.below(len(values), idx) + 1).cast("int"))

    def int_range(self, low: int, high: int, spark_type: Any, idx: list) -> Any:
        from pyspark.sql import functions as F

        if high <= low:
            return F.lit(low).cast(spark_type)
        return (F.lit(low).cast("bigint") + self.below(high - low, idx)).cast(spark_type)

    def letters(self, length: int, idx: list) -> Any:
        from pyspark.sql import functions as F

        if length <= 0:
            return F.lit("")
        chars = F.transform(F.sequence(F.lit(0), F.lit(length - 1)),
                            lambda j: F.substr(F.lit(LETTERS), self.below(len(LETTERS), [*idx, j]) + 1, F.lit(1)))
        return F.array_join(chars, "")

    def digits(self, count: int, idx: list) -> Any:
        """``count`` random decimal digits as a string (leading zeros kept)."""
        from pyspark.sql import functions as F

        chunks = []
        while count > 0:
            k = min(count, 18)
            chunks.append(F.lpad(self.below(10 ** k, idx).cast("string"), k, "0"))
            count -= k
        return F.concat(*chunks)

    def part(self, name: str, template: str, idx: list) -> Any:
        """One date/time part: a template item, or its random range (the year: this year)."""
        from pyspark.sql import functions as F

        values = self.table.templates.get(template)
        if values:
            return self.pick(values, "int", idx)
        if name == "year":
            return F.lit(self.year)
        low, high = PART_RANGES[name]
        return self.int_range(low, high, "int", idx)


    def value(self, dt: DataType, meta: Column, idx: list) -> Any:
        """The expression of one value of type ``dt`` (``idx``: the element indices it sits under)."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        name = dt.name
        if name == "null":
            return F.lit(None).cast(T.NullType())
        if meta.has_default and name not in ("array", "map", "row"):
            return literal(convert(text_of(meta.default), dt, base64_bytes=False), dt)
        if name in VECTORS:
            return self._vector(dt, idx)
        if name in ("array", "map", "row"):
            return self._nested(dt, meta, idx)
        if name in ("date", "timestamp", "time"):
            return self._temporal(name, idx)
        if name in FLOAT_RANGES:
            return self._floating(name, dt.to_spark(), meta, idx)
        return self._scalar(dt, meta, idx)

    def _scalar(self, dt: DataType, meta: Column, idx: list) -> Any:
        """A string, boolean, integer, decimal or bytes value."""
        from pyspark.sql import functions as F

        name, spark_type, t = dt.name, dt.to_spark(), self.table
        if name == "string":
            if "string.template" in t.templates:
                return self.pick(t.templates["string.template"], spark_type, idx)
            return self.letters(meta.length if meta.length is not None else t.sizes["string.length"], idx)
        if name == "boolean":
            return self.below(2, idx) == F.lit(1)
        if name in INT_RANGES:
            if f"{name}.template" in t.templates:
                return self.pick(t.templates[f"{name}.template"], spark_type, idx)
            low, high = t.ranges[name]
            return self.int_range(int(low), int(high), spark_type, idx)
        if name == "decimal":
            precision, scale = min(dt.precision or 10, 38), dt.scale or 0
            whole = self.digits(precision - scale, idx) if precision > scale else F.lit("0")
            text = F.concat(whole, F.lit("."), self.digits(scale, idx)) if scale else whole
            return text.cast(spark_type)
        if name == "bytes":
            return self.letters(t.sizes["bytes.length"], idx).cast("binary")
        raise TypeError_(f"FakeSource cannot generate {dt}")

    def _floating(self, name: str, spark_type: Any, meta: Column, idx: list) -> Any:
        """A float or double from its template or its ``[min, max)`` range, rounded to ``columnScale``."""
        from pyspark.sql import functions as F

        t = self.table
        if f"{name}.template" in t.templates:
            out = self.pick(t.templates[f"{name}.template"], spark_type, idx)
        else:
            low, high = t.ranges[name]
            if name == "float":
                low, high = _float32(low), _float32(high)
            if high <= low:
                out = F.lit(low).cast(spark_type)
            else:
                top = _next_float32_down(high) if name == "float" else math.nextafter(high, 0.0)
                drawn = (F.lit(low) + self.unit(idx) * F.lit(high - low)).cast(spark_type)
                out = F.least(drawn, F.lit(top).cast(spark_type))
        return F.round(out, meta.scale).cast(spark_type) if meta.scale is not None else out

    def _temporal(self, name: str, idx: list) -> Any:
        """A date, time or timestamp from its parts (templates or random ranges)."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        parts: dict[str, Any] = {}
        if name != "time":
            parts.update(year=self.part("year", "date.year.template", idx),
                         month=self.part("month", "date.month.template", idx),
                         day=self.part("day", "date.day.template", idx))
        if name != "date":
            parts.update(hour=self.part("hour", "time.hour.template", idx),
                         minute=self.part("minute", "time.minute.template", idx),
                         second=self.part("second", "time.second.template", idx))
        if name == "date":
            return F.make_date(parts["year"], parts["month"], parts["day"])
        if name == "time":
            return F.make_time(parts["hour"], parts["minute"], parts["second"].cast(T.DecimalType(16, 6)))
        return F.make_timestamp_ntz(parts["year"], parts["month"], parts["day"], parts["hour"],
                                    parts["minute"], parts["second"])

    def _vector_value(self, idx: list) -> Any:
        """A float of ``[vector.float.min, vector.float.max)``."""
        from pyspark.sql import functions as F

        low, high = (_float32(v) for v in self.table.ranges["vector.float"])
        if high <= low:
            return F.lit(low).cast("float")
        drawn = (F.lit(low) + self.unit(idx) * F.lit(high - low)).cast("float")
        return F.least(drawn, F.lit(_next_float32_down(high)).cast("float"))

    def _vector(self, dt: DataType, idx: list) -> Any:
        """A vector as SeaTunnel's FakeSource makes one: ``vector.dimension`` floats (a sparse vector: that
        many entries at random int indexes), or ``binary.vector.dimension`` / 8 random bytes."""
        from pyspark.sql import functions as F

        spark_type = dt.to_spark()
        if dt.name == "binary_vector":
            size = self.table.sizes["binary.vector.dimension"] // 8
            if size == 0:
                return F.lit(b"").cast(spark_type)
            hexes = F.transform(F.sequence(F.lit(0), F.lit(size - 1)),
                                lambda i: F.lpad(F.hex(self.below(256, [*idx, i])), 2, "0"))
            return F.unhex(F.array_join(hexes, ""))
        size = self.table.sizes["vector.dimension"]
        if size == 0:
            return (F.create_map() if dt.name == "sparse_float_vector" else F.array()).cast(spark_type)
        if dt.name != "sparse_float_vector":
            return F.transform(F.sequence(F.lit(0), F.lit(size - 1)), lambda i: self._vector_value([*idx, i]))
        entries = F.transform(F.sequence(F.lit(0), F.lit(size - 1)),
                              lambda i: F.struct(self.below(2**31 - 1, [*idx, i]).cast("int").alias("k"),
                                                 self._vector_value([*idx, i]).alias("v")))
        unique = F.transform(F.array(entries), lambda es: F.filter(
            es, lambda e, i: ~F.exists(F.slice(es, i + 2, F.lit(size)), lambda o: o["k"] == e["k"])))
        return F.map_from_entries(F.element_at(unique, 1))

    def _nested(self, dt: DataType, meta: Column, idx: list) -> Any:
        """An array (``array.size`` elements), a map (``map.size`` entries) or a row."""
        from pyspark.sql import functions as F

        spark_type = dt.to_spark()
        if dt.name == "row":
            return F.struct(*[self.value(f.type, meta, idx).alias(f.name) for f in dt.fields])
        element = _inner(dt.element, dt)
        if dt.name == "array":
            size = self.table.sizes["array.size"]
            if size == 0:
                return F.array().cast(spark_type)
            return F.transform(F.sequence(F.lit(0), F.lit(size - 1)), lambda i: self.value(element, meta, [*idx, i]))
        key = _inner(dt.key, dt)
        size = self.table.sizes["map.size"]
        if size == 0:
            return F.create_map().cast(spark_type)
        entries = F.transform(F.sequence(F.lit(0), F.lit(size - 1)),
                              lambda i: F.struct(self.value(key, meta, [*idx, i]).alias("k"),
                                                 self.value(element, meta, [*idx, i]).alias("v")))
        # Drawn keys may repeat: like a HashMap, the last entry of a key wins. The entries are
        # bound to a lambda variable (transform over a one-element array) to be drawn only once.
        unique = F.transform(F.array(entries), lambda es: F.filter(
            es, lambda e, i: ~F.exists(F.slice(es, i + 2, F.lit(size)), lambda o: o["k"] == e["k"])))
        return F.map_from_entries(F.element_at(unique, 1))


def _inner(part: DataType | None, dt: DataType) -> DataType:
    """The element (or key) type of an array or map type."""
    if part is None:
        raise TypeError_(f"FakeSource cannot generate {dt}")
    return part


def literal(value: Any, dt: DataType) -> Any:
    """A Spark literal expression of type ``dt`` for a value from :func:`.values.convert`."""
    from pyspark.sql import functions as F

    spark_type = dt.to_spark()
    if value is None:
        return F.lit(None).cast(spark_type)
    if dt.name in VECTORS:
        return literal(value, dt.storage)
    name = dt.name
    if name in ("string", "boolean", "bytes") or name in INT_RANGES or name in FLOAT_RANGES:
        return F.lit(value).cast(spark_type)
    if name in ("decimal", "date", "timestamp", "time"):
        return F.lit(str(value) if name == "decimal" else value.isoformat()).cast(spark_type)
    if name == "array":
        return F.array(*[literal(v, _inner(dt.element, dt)) for v in value]).cast(spark_type)
    if name == "map":
        if not value:
            return F.create_map().cast(spark_type)
        return F.map_from_arrays(F.array(*[literal(k, _inner(dt.key, dt)) for k, _ in value]),
                                 F.array(*[literal(v, _inner(dt.element, dt)) for _, v in value])).cast(spark_type)
    if name == "row":
        return F.struct(*[literal(v, f.type).alias(f.name) for v, f in zip(value, dt.fields, strict=True)])
    raise TypeError_(f"no literal for {dt}")


def random_frame(table: Table, ids: Any, salt: int) -> Any:
    """Random rows of ``table``, one per ``id`` of ``ids`` (a DataFrame of row numbers; its partitions
    are the readers). ``salt`` seeds every draw."""
    from pyspark.sql import functions as F

    gen = Random(table, salt, F.col("id"))
    values = [gen.value(f.type, table.columns.get(f.name, Column()), []).alias(f.name) for f in table.schema.fields]
    # Cast the whole row to the declared struct: every column gets its declared (nullable) type.
    row = F.struct(*values).cast(table.schema.to_spark()).alias("__st_row")
    return ids.select(row).select("__st_row.*", kind_literal(0).alias(ROW_KIND))


def rows_frame(table: Table, splits: Any) -> Any:
    """The ``rows`` list of ``table`` once per row of ``splits`` (each reader emits the whole list once
    per split it owns), in the partitions of ``splits``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    row_type = T.StructType([*table.schema.to_spark().fields, T.StructField(ROW_KIND, T.ByteType(), False)])
    structs = []
    for item in table.rows or []:
        values = row_values(item["fields"], table.schema.fields)
        columns = [literal(v, f.type).alias(f.name) for v, f in zip(values, table.schema.fields, strict=True)]
        kind = kind_literal(ROW_KINDS.index(text_of(item["kind"]))).alias(ROW_KIND)
        structs.append(F.struct(*columns, kind).cast(row_type))
    if not structs:
        # No rows, but every reader still there: a filter no optimizer folds away keeps the partitions.
        return splits.where(F.spark_partition_id() < F.lit(0)).select(
            *[F.lit(None).cast(f.dataType).alias(f.name) for f in row_type.fields])
    return splits.select(F.inline(F.array(*structs)))
