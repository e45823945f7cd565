"""Message bodies to rows and rows to bodies and keys, as native Spark expressions (no Python UDFs), as
SeaTunnel's Rocketmq connector reads and writes them.

* ``json``: a body is one JSON object (:mod:`..jsoncolumns`); a body that is not one fails the read.
* ``text``: a body's fields joined by ``field.delimiter``, in the schema's order; a missing or blank field is
  null; each is cast to its field's type (a value that does not cast fails the read, as SeaTunnel's text
  reader does). Writing joins the fields' text, null as the empty string.
* The key of a written message (``partition.key.fields``) is the JSON object of those fields, in either
  format (SeaTunnel serializes keys as JSON).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...spi.rows import data_columns, quote
from ...spi.schema import Schema
from ..jsoncolumns import json_rows, json_text
from ..temporal import is_time, is_timestamp, json_ready, temporal_text

#: SeaTunnel's text writer's default patterns (a value's fraction of a second kept)
TEXT_PATTERNS = {"datetime": "yyyy-MM-dd HH:mm:ss", "time": "HH:mm:ss", "fractions": ("timestamp", "time")}

_COMPLEX = frozenset({"array", "map", "row"})


def _cast(text: Any, dtype: Any) -> Any:
    from pyspark.sql import functions as F

    if dtype.name == "string":
        return text
    if dtype.name in _COMPLEX:
        return F.from_json(text, dtype.to_spark(), {"mode": "FAILFAST"})
    if dtype.name == "bytes":
        return text.cast("binary")
    # ANSI cast: a value that is not of the type fails the read
    return F.when(text.isNull(), F.lit(None).cast(dtype.to_spark())).otherwise(
        text.cast(dtype.to_spark()) if dtype.name not in ("boolean",) else F.lower(text).cast("boolean"))


def rows_of(raw: Any, fmt: str, delimiter: str, schema: Schema) -> Any:
    """``raw``'s binary column ``body`` as rows of ``schema``."""
    from pyspark.sql import functions as F

    if fmt == "json":
        return json_rows(raw, "body", schema)
    parts = raw.select(F.split(F.col("body").cast("string"), re.escape(delimiter), -1).alias("__p"))

    def field(i: int) -> Any:
        text = F.get(F.col("__p"), i)
        return F.when(F.trim(text) != "", text)

    return parts.select(*[_cast(field(i), f.type).alias(f.name) for i, f in enumerate(schema.fields)])


def body_of(df: Any, fmt: str, delimiter: str) -> Any:
    """A string column: each row's data columns as a message body in ``fmt``."""
    from pyspark.sql import functions as F

    if fmt == "json":
        return json_text(df)
    types = {f.name: f.dataType for f in df.schema.fields}
    return F.concat_ws(delimiter, *[F.coalesce(_text(c, types[c]), F.lit("")) for c in data_columns(df)])


def _text(column: str, dtype: Any) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = F.col(quote(column))
    if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
        return F.to_json(json_ready(col, dtype))
    if is_time(dtype) or is_timestamp(dtype):
        return temporal_text(col, dtype, TEXT_PATTERNS)
    return col.cast("string")


def key_of(df: Any, fields: Sequence[str]) -> Any:
    """A string column: the JSON object of ``fields``, nulls included (None: messages without a key)."""
    from pyspark.sql import functions as F

    return json_text(df, fields) if fields else F.lit(None).cast("string")
