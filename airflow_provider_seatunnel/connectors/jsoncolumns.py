"""JSON message bodies to rows and rows to JSON text, as native Spark expressions (no Python UDFs), as
SeaTunnel's json format reads and writes a message (shared by the queue connectors: RabbitMQ, ActiveMQ,
Pulsar, Rocketmq; a message key is written as a body of its fields).

Reading (:func:`json_rows`): a body is parsed into ``map<string, string>`` (a nested value keeps its JSON
text), failing on a body that is not a JSON object (SeaTunnel's reader fails the job too); each schema
field is then converted from its member's text: numbers, booleans, dates, timestamps and decimals by a
cast (``"42"`` and ``42`` both read as an int), ``bytes`` from base64, arrays, maps and rows parsed again
with their type. An absent member is null.

Writing (:func:`json_text`): the data columns as one JSON object, null fields included, dates as
``yyyy-MM-dd`` and timestamps and times in ISO form (a fraction only when there is one), as SeaTunnel's
json writer writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..spi.errors import RuntimeConfigError
from ..spi.rows import data_columns, quote
from ..spi.schema import Schema
from .temporal import json_ready

#: Spark's JSON writer settings giving SeaTunnel's text of dates and timestamps, nulls kept
JSON_WRITE = {"timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]",
              "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]", "dateFormat": "yyyy-MM-dd",
              "ignoreNullFields": "false"}
_COMPLEX = frozenset({"array", "map", "row"})


def _typed(text: Any, dtype: Any) -> Any:
    from pyspark.sql import functions as F

    if dtype.name in _COMPLEX:
        return F.from_json(text, dtype.to_spark(), {"mode": "FAILFAST"})
    if dtype.name == "string":
        return text
    if dtype.name == "bytes":
        return F.unbase64(text)
    return text.cast(dtype.to_spark())


def json_rows(df: Any, body: str, schema: Schema) -> Any:
    """``df``'s column ``body`` (binary or string) parsed as one JSON object a row into ``schema``'s fields."""
    from pyspark.sql import functions as F

    parsed = F.from_json(F.col(body).cast("string"), "map<string, string>", {"mode": "FAILFAST"})
    members = df.select(parsed.alias("__m"))
    return members.select(*[_typed(F.col("__m")[f.name], f.type).alias(f.name) for f in schema.fields])


def json_text(df: Any, columns: Sequence[str] | None = None) -> Any:
    """A string column: each row's data columns (or ``columns``: a message key's fields) as SeaTunnel's
    json writer writes the row, null fields included."""
    from pyspark.sql import functions as F

    if columns is None:
        columns = data_columns(df)
    else:
        missing = [c for c in columns if c not in data_columns(df)]
        if missing:  # a key's fields: the config is wrong, retrying cannot help
            raise RuntimeConfigError(f"the key field(s) {', '.join(missing)} are not fields of the input (its "
                                     f"fields: {', '.join(data_columns(df))})")
    types = {f.name: f.dataType for f in df.schema.fields}
    row = F.struct(*[json_ready(F.col(quote(c)), types[c]).alias(c) for c in columns])
    return F.to_json(row, JSON_WRITE)
