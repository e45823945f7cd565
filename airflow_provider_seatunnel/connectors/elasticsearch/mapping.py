"""Types and values between an index and rows (pure Python: the driver and Spark's Python workers).

* :func:`fields_of_mapping`: an index's mapping (``GET /<index>/_mapping``) as SeaTunnel types, as
  SeaTunnel's type converter maps them: ``keyword``/``text`` and the other textual types ``string``,
  ``long`` ``bigint``, ``integer`` ``int``, ``short`` ``smallint``, ``byte`` ``tinyint``, ``double``
  ``double``, ``float``/``half_float`` ``float``, ``boolean``, ``date``/``date_nanos`` ``timestamp``,
  ``unsigned_long`` ``decimal(20, 0)``, an object ``map<string, string>``; nested fields by dotted
  name; every mapping of a pattern's indices merged (the first type of a name wins).
* :func:`document`: a row as the JSON document SeaTunnel's sink writes (dates and times as Java's
  ``toString``: ``2024-01-02T10:00`` without seconds when they are zero).
* :func:`doc_id`: a row's ``_id`` from the primary keys, joined by ``key_delimiter``.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi.schema import DataType, Field, Schema, parse_type

ES_TYPES = {"long": "bigint", "integer": "int", "token_count": "int", "short": "smallint", "byte": "tinyint",
            "double": "double", "rank_feature": "double", "scaled_float": "double", "float": "float",
            "half_float": "float", "boolean": "boolean", "date": "timestamp", "date_nanos": "timestamp",
            "unsigned_long": "decimal(20, 0)", "object": "map<string, string>"}
#: the document id, readable as a field of ``source``
ID_FIELD = "_id"


def _walk(properties: Mapping[str, Any], prefix: str, out: dict[str, str]) -> None:
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            continue
        full = f"{prefix}{name}"
        kind = str(spec.get("type") or ("object" if "properties" in spec else "keyword"))
        out.setdefault(full, ES_TYPES.get(kind, "string"))


def fields_of_mapping(answer: Mapping[str, Any]) -> dict[str, str]:
    """Field name -> SeaTunnel type string, of every index in a ``_mapping`` answer."""
    out: dict[str, str] = {}
    for index in sorted(answer):
        body = answer[index]
        mappings = body.get("mappings", {}) if isinstance(body, Mapping) else {}
        properties = mappings.get("properties", {}) if isinstance(mappings, Mapping) else {}
        if isinstance(properties, Mapping):
            _walk(properties, "", out)
    return out


def read_schema(mapped: Mapping[str, str], source: Sequence[str] | None,
                array_column: Mapping[str, str]) -> Schema:
    """The rows of a source given ``source`` (None: every mapped field), typed by the mapping and
    ``array_column``; a field neither maps is refused (as SeaTunnel)."""
    names = list(source) if source else list(mapped)
    fields = []
    for name in names:
        if name in array_column:
            fields.append(Field(name, parse_type(array_column[name])))
        elif name == ID_FIELD:
            fields.append(Field(name, parse_type("string")))
        elif name in mapped:
            fields.append(Field(name, parse_type(mapped[name])))
        else:
            raise KeyError(name)
    return Schema(tuple(fields))


def hit_value(hit: Mapping[str, Any], name: str) -> Any:
    """A field of a search hit: ``_id``, else the ``_source`` member (a dotted name through objects)."""
    if name == ID_FIELD:
        return hit.get("_id")
    source = hit.get("_source") or {}
    if name in source:
        return source[name]
    value: Any = source
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def java_text(value: dt.date | dt.datetime | dt.time) -> str:
    """Java's ``toString`` of a LocalDate, LocalDateTime or LocalTime: ``HH:mm``, seconds only when a
    second or fraction is set, the fraction in groups of three digits."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat() + "T" + java_text(value.time())
    if isinstance(value, dt.time):
        text = f"{value.hour:02d}:{value.minute:02d}"
        if value.second or value.microsecond:
            text += f":{value.second:02d}"
        if value.microsecond:
            text += "." + (f"{value.microsecond // 1000:03d}" if value.microsecond % 1000 == 0
                           else f"{value.microsecond:06d}")
        return text
    return value.isoformat()


def plain(value: Any) -> Any:
    """A Spark Python value as SeaTunnel's sink serialises it: temporal values as Java's text, bytes as
    a list of numbers, decimals kept (:func:`..values.to_json` writes their exact digits)."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return java_text(value)
    if isinstance(value, decimal.Decimal):
        return value  # written as its exact digits (values.to_json)
    if isinstance(value, (bytes, bytearray)):
        return list(bytes(value))
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def document(names: Sequence[str], row: Sequence[Any]) -> dict[str, Any]:
    return {n: plain(v) for n, v in zip(names, row, strict=True)}


def key_part(value: Any, name: str) -> str:
    """One primary key value as text (Java's ``toString``); null, arrays, maps and rows are refused."""
    if value is None:
        raise ValueError(f"the primary key field '{name}' is null")
    if isinstance(value, (list, tuple, Mapping)) or hasattr(value, "asDict"):
        raise ValueError(f"the primary key field '{name}' is not a scalar")
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return java_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def doc_id(positions: Sequence[tuple[int, str]], delimiter: str, row: Sequence[Any]) -> str:
    return delimiter.join(key_part(row[i], name) for i, name in positions)


def is_scalar(t: DataType) -> bool:
    return t.name not in ("array", "map", "row")
