"""FakeSource: generated rows (random, ranged, templated or explicit ``rows``).

Random rows are built on the executors: ``spark.range(row.num × parallelism)`` in
``parallelism`` partitions (one per SeaTunnel reader), every column a native Spark
expression. Randomness is a hash of (a per-read random salt, the column's stream, the row
id, the element index), so values differ between rows, partitions and sources, yet a
DataFrame recomputed (a retried task, a second action) gives the same rows.

Options (SeaTunnel's keys and defaults): ``schema`` (``fields`` or ``columns`` with
``columnLength``/``columnScale``/``defaultValue``; ``table`` names the table),
``tables_configs`` (one full config per table, nothing inherited), ``rows``, ``row.num``
(5, rows per reader), ``split.num`` (1), ``split.read-interval`` (accepted, ignored in
batch), ``string.length``/``bytes.length``/``array.size``/``map.size`` (5), the ``*.template``
lists, the half-open ``*.min``/``*.max`` ranges and ``*.fake.mode``.

STREAMING jobs (:func:`read_stream`, docs/streaming.md): SeaTunnel's unbounded reader, each
reader's splits one per ``split.read-interval``, then idle.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import secrets
import string
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext
from typing import TYPE_CHECKING, Any

from ..spi import (
    SOURCE,
    BatchSource,
    ChangeEmitter,
    Connector,
    Dataset,
    RunContext,
    SchemaInference,
    StreamingSource,
    Vertex,
)
from ..spi.options import MISSING, as_int, as_list, lookup
from ..spi.schema import DataType, Field, Schema, TypeError_, schema_from_options

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem

ROW_KINDS = ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")
LETTERS = string.ascii_letters
FLOAT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
DOUBLE_MAX = 1.7976931348623157e308

#: option -> (default, smallest allowed)
SIZES = {"row.num": (5, 0), "split.num": (1, 1), "split.read-interval": (1, 0), "map.size": (5, 0),
         "array.size": (5, 0), "bytes.length": (5, 0), "string.length": (5, 0)}
#: integer type -> (default min, default max = the largest allowed value); SeaTunnel allows no negatives
INT_RANGES = {"tinyint": (0, 127), "smallint": (0, 32767), "int": (0, 2**31 - 1), "bigint": (0, 2**63 - 1)}
FLOAT_RANGES = {"float": (0.0, FLOAT_MAX), "double": (0.0, DOUBLE_MAX)}
#: the signed range of each integer type (template values, explicit values)
INT_LIMITS = {"tinyint": (-2**7, 2**7 - 1), "smallint": (-2**15, 2**15 - 1), "int": (-2**31, 2**31 - 1),
              "bigint": (-2**63, 2**63 - 1)}
#: date/time part templates -> allowed values
PART_TEMPLATES = {"date.year.template": (1, 9999), "date.month.template": (1, 12), "date.day.template": (1, 31),
                  "time.hour.template": (0, 23), "time.minute.template": (0, 59),
                  "time.second.template": (0, 59)}
#: random date/time parts when there is no template: half-open ranges
PART_RANGES = {"month": (1, 13), "day": (1, 29), "hour": (0, 24), "minute": (0, 60), "second": (0, 60)}
MODE_TYPES = ("string", "tinyint", "smallint", "int", "bigint", "float", "double")
SCHEMA_HINT = "schema { fields { id = bigint, name = string } }"

_INT_TEXT = re.compile(r"[+-]?\d+\Z")
_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|NaN|Infinity)[fFdD]?\Z")
_DATE = r"(?P<y>\d{4})(?:(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})|年(?P<m2>\d{2})月(?P<d2>\d{2})日)"
_TIME = (r"(?P<H>\d{1,2})(?::(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.(?P<F>\d{1,9}))?)?"
         r"|时(?P<M2>\d{2})分(?P<S2>\d{2})秒)")
_DATE_RE = re.compile(rf"{_DATE}\Z|(?P<cy>\d{{4}})(?P<cm>\d{{2}})(?P<cd>\d{{2}})\Z")
_TIME_RE = re.compile(r"(?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.(?P<F>\d{1,9}))?)?\Z")
_TIMESTAMP_RE = re.compile(rf"{_DATE}[T ]{_TIME}\Z")
_COMPACT_TIMESTAMP_RE = re.compile(r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})\Z")


# ---------------------------------------------------------------------------------------------
# Options, read the same way at compile time (check, schema) and at run time (read)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Issue:
    message: str
    key: str
    hint: str | None = None
    schema: bool = False  # reported by the schema hook (the others by check)


@dataclass(frozen=True)
class _Column:
    """What a column adds to its type (``columns`` form); passed down to elements and subfields."""

    length: int | None = None  # string length (``columnLength``: 0 in the columns form unless set)
    scale: int | None = None  # float/double rounding (``columnScale``)
    default: Any = None  # ``defaultValue`` as written (None: generate)
    has_default: bool = False


@dataclass
class _Table:
    """One table a FakeSource generates."""

    key: str
    schema: Schema
    columns: dict[str, _Column]
    prefix: str  # "" or "tables_configs[i]." for the problem keys
    sizes: dict[str, int] = field(default_factory=dict)
    templates: dict[str, list] = field(default_factory=dict)
    ranges: dict[str, tuple] = field(default_factory=dict)
    rows: list[Mapping] | None = None

    @property
    def row_num(self) -> int:
        return self.sizes["row.num"]

    @property
    def splits_per_reader(self) -> int:
        """How many splits each reader gets (each emits the whole ``rows`` list)."""
        rows, split_num = self.sizes["row.num"], self.sizes["split.num"]
        if rows <= 0:
            return 0
        per_split = math.ceil(rows / split_num)
        return math.ceil(rows / per_split)


class _BadValue(ValueError):
    """A value that cannot be read as its declared type; ``path`` says where inside the row."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text(value: Any) -> str:
    """A value as Java's ``toString``/Jackson's ``asText`` would give it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _number(value: Any) -> float | None:
    """A float from a number or numeric text; None if it is not one."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str) and _FLOAT_TEXT.match(value.strip()):
        text = value.strip().rstrip("fFdD")
        return float(text.replace("Infinity", "inf"))
    return None


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_TEXT.match(value.strip()):
        return int(value.strip())
    return None


def _parse_date(text: str) -> date:
    if text.strip().upper() == "CURRENT_DATE":
        return datetime.now().date()
    m = _DATE_RE.match(text.strip())
    if not m:
        raise _BadValue(f"cannot read {text!r} as a date (write yyyy-MM-dd, yyyy/MM/dd, yyyy.MM.dd, yyyyMMdd "
                        "or CURRENT_DATE)")
    if m.group("cy"):
        parts = m.group("cy"), m.group("cm"), m.group("cd")
    else:
        parts = m.group("y"), m.group("m") or m.group("m2"), m.group("d") or m.group("d2")
    try:
        return date(*(int(p) for p in parts))
    except ValueError as e:
        raise _BadValue(f"{text!r} is not a valid date: {e}") from None


def _fraction(digits: str | None) -> int:
    return int((digits or "0")[:6].ljust(6, "0"))


def _parse_time(text: str) -> time:
    if text.strip() == "CURRENT_TIME":
        return datetime.now().time()
    m = _TIME_RE.match(text.strip())
    if not m:
        raise _BadValue(f"cannot read {text!r} as a time (write HH:mm:ss[.fraction] or CURRENT_TIME)")
    try:
        return time(int(m.group("H")), int(m.group("M")), int(m.group("S") or 0), _fraction(m.group("F")))
    except ValueError as e:
        raise _BadValue(f"{text!r} is not a valid time: {e}") from None


def _parse_timestamp(text: str) -> datetime:
    stripped = text.strip()
    if stripped.upper() == "CURRENT_TIMESTAMP":
        return datetime.now()
    m = _TIMESTAMP_RE.match(stripped)
    compact = _COMPACT_TIMESTAMP_RE.match(stripped)
    try:
        if compact:
            return datetime(*(int(p) for p in compact.groups()))
        if m:
            return datetime(int(m.group("y")), int(m.group("m") or m.group("m2")), int(m.group("d") or m.group("d2")),
                            int(m.group("H")), int(m.group("M") or m.group("M2") or 0),
                            int(m.group("S") or m.group("S2") or 0), _fraction(m.group("F")))
    except ValueError as e:
        raise _BadValue(f"{text!r} is not a valid timestamp: {e}") from None
    raise _BadValue(f"cannot read {text!r} as a timestamp (write yyyy-MM-dd HH:mm:ss[.fraction], with 'T' or "
                    "a space, or yyyyMMddHHmmss, or CURRENT_TIMESTAMP)")


def _decimal(value: Any, dt: DataType) -> Decimal:
    text = _text(value).strip() if _is_number(value) or isinstance(value, str) else None
    try:
        if text is None:
            raise InvalidOperation
        number = Decimal(text)
        if not number.is_finite():
            raise InvalidOperation
    except InvalidOperation:
        raise _BadValue(f"cannot read {_text(value)!r} as {dt}") from None
    precision, scale = min(dt.precision or 10, 38), dt.scale or 0
    if number != 0 and number.adjusted() >= precision - scale:
        raise _BadValue(f"{text} does not fit {dt} (at most {precision - scale} digits before the point)")
    with localcontext(Context(prec=80)):
        number = number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    if len(number.as_tuple().digits) > precision and number != 0:
        raise _BadValue(f"{text} does not fit {dt} (at most {precision - scale} digits before the point)")
    return number


def convert(value: Any, dt: DataType, *, base64_bytes: bool = True) -> Any:
    """``value`` (from the config) as a Python value of type ``dt``; raises :class:`_BadValue`.

    Numbers come from numbers or their text; bytes from base64 (``rows``) or from the text's
    UTF-8 bytes (``defaultValue``); dates and timestamps from the formats SeaTunnel detects
    and ``CURRENT_DATE``/``CURRENT_TIME``/``CURRENT_TIMESTAMP``; arrays from lists, maps
    from objects (keys read from their text), rows from lists (by position) or objects
    (by name). A row is returned as a list of values in field order, a map as a list of
    ``(key, value)`` pairs.
    """
    if value is None or dt.name == "null":
        return None
    name = dt.name
    if name == "string":
        return _text(value)
    if name == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _BadValue(f"cannot read {_text(value)!r} as boolean (write true or false)")
    if name in INT_LIMITS:
        number = _integer(value) if not isinstance(value, (list, dict)) else None
        if number is None:
            raise _BadValue(f"cannot read {_text(value)!r} as {name}")
        low, high = INT_LIMITS[name]
        if not low <= number <= high:
            raise _BadValue(f"{number} is out of the {name} range [{low}, {high}]")
        return number
    if name in ("float", "double"):
        number = _number(value)
        if number is None:
            raise _BadValue(f"cannot read {_text(value)!r} as {name}")
        if name == "float" and math.isfinite(number) and abs(number) > FLOAT_MAX:
            raise _BadValue(f"{_text(value)} is out of the float range")
        return number
    if name == "decimal":
        return _decimal(value, dt)
    if name == "bytes":
        if not isinstance(value, str):
            raise _BadValue(f"cannot read {_text(value)!r} as bytes (write a base64 string)" if base64_bytes
                            else f"cannot read {_text(value)!r} as bytes")
        if not base64_bytes:
            return value.encode("utf-8")
        try:
            return base64.b64decode("".join(value.split()), validate=True)
        except (binascii.Error, ValueError):
            raise _BadValue(f"{value!r} is not base64 (bytes values are written in base64)") from None
    if name in ("date", "time", "timestamp"):
        if not isinstance(value, str):
            raise _BadValue(f"cannot read {_text(value)!r} as {name} (write it as a string)")
        return {"date": _parse_date, "time": _parse_time, "timestamp": _parse_timestamp}[name](value)
    if name == "array":
        if not isinstance(value, list):
            raise _BadValue(f"cannot read {_text(value)!r} as {dt} (write a list)")
        return [_nested(convert, v, dt.element, f"[{i}]", base64_bytes) for i, v in enumerate(value)]
    if name == "map":
        if not isinstance(value, Mapping):
            raise _BadValue(f"cannot read {_text(value)!r} as {dt} (write an object)")
        pairs: dict[Any, Any] = {}
        for k, v in value.items():
            key = _nested(convert, str(k), dt.key, f"[{k!r}]", base64_bytes)
            if key is None:
                raise _BadValue("a map key may not be null", f"[{k!r}]")
            pairs[key] = _nested(convert, v, dt.element, f"[{k!r}]", base64_bytes)
        return list(pairs.items())
    if name == "row":
        return _row_values(value, dt.fields, base64_bytes)
    raise _BadValue(f"no values for type {dt}")


def _nested(fn: Any, value: Any, dt: DataType, step: str, base64_bytes: bool) -> Any:
    try:
        return fn(value, dt, base64_bytes=base64_bytes)
    except _BadValue as e:
        raise _BadValue(str(e), step + e.path) from None


def _row_values(value: Any, fields: tuple[Field, ...], base64_bytes: bool = True) -> list:
    """A row's values in field order, from a list (by position) or an object (by name)."""
    if isinstance(value, list):
        if len(value) > len(fields):
            raise _BadValue(f"{len(value)} values for {len(fields)} fields ({', '.join(f.name for f in fields)})")
        given = dict(zip([f.name for f in fields], value, strict=False))
    elif isinstance(value, Mapping):
        unknown = [str(k) for k in value if str(k) not in {f.name for f in fields}]
        if unknown:
            raise _BadValue(f"field '{unknown[0]}' does not exist; fields: {', '.join(f.name for f in fields)}")
        given = {str(k): v for k, v in value.items()}
    else:
        raise _BadValue(f"cannot read {_text(value)!r} as a row (write a list or an object)")
    return [_nested(convert, given.get(f.name), f.type, f".{f.name}", base64_bytes) for f in fields]


def _walk_types(dt: DataType) -> list[DataType]:
    out = [dt]
    for inner in (dt.key, dt.element):
        if inner is not None:
            out.extend(_walk_types(inner))
    for f in dt.fields:
        out.extend(_walk_types(f.type))
    return out


def _leaf_types(dt: DataType) -> list[DataType]:
    return [t for t in _walk_types(dt) if t.name not in ("array", "map", "row")]


def _read_schema(opts: Mapping, prefix: str, issues: list[_Issue]) -> tuple[Schema | None, dict[str, _Column]]:
    raw = lookup(opts, "schema")
    key = f"{prefix}schema"
    if raw is MISSING or raw is None:
        issues.append(_Issue("FakeSource needs a schema: schema { fields { ... } }", key, SCHEMA_HINT, True))
        return None, {}
    if not isinstance(raw, Mapping):
        issues.append(_Issue("the schema must be an object: schema { fields { ... } }", key, SCHEMA_HINT, True))
        return None, {}
    try:
        schema = schema_from_options({"schema": raw})
    except TypeError_ as e:
        issues.append(_Issue(str(e), key, "see the type strings in the README", True))
        return None, {}
    if schema is None:
        issues.append(_Issue("the schema needs fields { name = type, ... } or columns = [{ name, type }, ...]",
                             key, SCHEMA_HINT, True))
        return None, {}
    bad = False
    for f in schema.fields:
        for t in _walk_types(f.type):
            if t.name == "decimal" and not ((t.precision or 0) >= 1 and (t.scale or 0) <= min(t.precision, 38)):
                issues.append(_Issue(f"field '{f.name}': {t} needs 1 <= precision and scale <= precision "
                                     "(Spark holds at most 38 digits)", key, None, True))
                bad = True
    names = [f.name for f in schema.fields]
    for name in sorted({n for n in names if names.count(n) > 1}):
        issues.append(_Issue(f"the field '{name}' is declared twice", key, None, True))
        bad = True
    columns = {f.name: _Column() for f in schema.fields}
    if isinstance(raw.get("columns"), list):
        for i, col in enumerate(raw["columns"]):
            ckey = f"{key}.columns[{i}]"
            length, scale = col.get("columnLength", 0), col.get("columnScale")
            meta = _Column(length=as_int(length) if length is not None else None,
                           scale=as_int(scale) if scale is not None else None,
                           default=col.get("defaultValue"), has_default=col.get("defaultValue") is not None)
            if length is not None and (meta.length is None or meta.length < 0):
                issues.append(_Issue(f"columnLength must be a whole number >= 0, not {_text(length)!r}", ckey))
            if scale is not None and (meta.scale is None or meta.scale < 0):
                issues.append(_Issue(f"columnScale must be a whole number >= 0, not {_text(scale)!r}", ckey))
            columns[str(col["name"])] = meta
    return (None if bad else schema), columns


def _table_key(opts: Mapping, prefix: str, fallback: str, issues: list[_Issue]) -> str:
    table = lookup(opts, "schema.table")
    if table is MISSING or table is None:
        return fallback
    text = _text(table).strip()
    parts = text.split(".")
    if not text or len(parts) > 3 or any(not p.strip() for p in parts):
        issues.append(_Issue(f"the table name {text!r} must be table, database.table or database.schema.table",
                             f"{prefix}schema.table"))
    return text


def _read_sizes(opts: Mapping, prefix: str, issues: list[_Issue]) -> dict[str, int]:
    sizes = {}
    for key, (default, smallest) in SIZES.items():
        raw = lookup(opts, key)
        value = default if raw is MISSING else as_int(raw)
        if value is None or value < smallest:
            issues.append(_Issue(f"{key} must be a whole number >= {smallest}, not {_text(raw)!r}", prefix + key))
            value = default
        sizes[key] = value
    return sizes


def _read_templates(opts: Mapping, prefix: str, issues: list[_Issue]) -> dict[str, list]:
    templates: dict[str, list] = {}
    kinds = {**{f"{t}.template": t for t in MODE_TYPES}, **{k: "int" for k in PART_TEMPLATES}}
    for key, kind in kinds.items():
        raw = lookup(opts, key)
        if raw is MISSING or raw is None:
            continue
        values = []
        for i, item in enumerate(as_list(raw)):
            try:
                value = convert(item, DataType(kind))
                if value is None:
                    raise _BadValue("null is not a template value")
            except _BadValue as e:
                issues.append(_Issue(f"item {i}: {e}", prefix + key))
                continue
            if key in PART_TEMPLATES:
                low, high = PART_TEMPLATES[key]
                if not low <= value <= high:
                    issues.append(_Issue(f"item {i}: {value} is not in [{low}, {high}]", prefix + key))
                    continue
            values.append(value)
        if values:
            templates[key] = values
    for t in MODE_TYPES:
        key = f"{t}.fake.mode"
        raw = lookup(opts, key)
        if raw is MISSING:
            continue
        mode = _text(raw).strip().upper()
        if mode not in ("RANGE", "TEMPLATE"):
            issues.append(_Issue(f"unknown mode {_text(raw)!r}: use RANGE or TEMPLATE", prefix + key))
        elif mode == "TEMPLATE" and f"{t}.template" not in templates:
            issues.append(_Issue(f"{t}.template is required because {key} is TEMPLATE", prefix + key,
                                 f"set {t}.template = [...]"))
    return templates


def _read_ranges(opts: Mapping, prefix: str, issues: list[_Issue]) -> dict[str, tuple]:
    ranges: dict[str, tuple] = {}
    for kind, (low, high) in {**INT_RANGES, **FLOAT_RANGES}.items():
        bounds = []
        for end, default in (("min", low), ("max", high)):
            key = f"{kind}.{end}"
            raw = lookup(opts, key)
            value = default if raw is MISSING else (as_int(raw) if kind in INT_RANGES else _number(raw))
            if value is None or not low <= value <= high:
                issues.append(_Issue(f"{key} should >= {low} and <= {_text(high)}, not {_text(raw)!r}",
                                     prefix + key))
                value = default
            bounds.append(value)
        if bounds[0] > bounds[1]:
            issues.append(_Issue(f"{kind}.min ({_text(bounds[0])}) is greater than {kind}.max ({_text(bounds[1])})",
                                 f"{prefix}{kind}.min", "values are drawn from [min, max)"))
            bounds = [low, high]
        ranges[kind] = tuple(bounds)
    return ranges


def _check_dates(table: _Table, issues: list[_Issue]) -> None:
    """Every date the templates can make must exist (SeaTunnel fails at run time otherwise)."""
    days = table.templates.get("date.day.template")
    if not days or max(days) <= 28 or not any(
            f.name in ("date", "timestamp") for c in table.schema.fields for f in _leaf_types(c.type)):
        return
    years = table.templates.get("date.year.template") or [datetime.now().year]
    months = table.templates.get("date.month.template") or list(range(1, 13))
    for y in sorted(set(years)):
        for m in sorted(set(months)):
            for d in sorted(set(days)):
                try:
                    date(y, m, d)
                except ValueError:
                    issues.append(_Issue(f"the templates can make the date {y}-{m:02d}-{d:02d}, which does not exist",
                                         f"{table.prefix}date.day.template",
                                         "keep date.day.template within the days of every month it can meet"))
                    return


def _check_defaults(table: _Table, issues: list[_Issue]) -> None:
    for i, f in enumerate(table.schema.fields):
        meta = table.columns.get(f.name, _Column())
        if not meta.has_default:
            continue
        for leaf in _leaf_types(f.type):
            try:
                convert(_text(meta.default), leaf, base64_bytes=False)
            except _BadValue as e:
                issues.append(_Issue(f"column '{f.name}': defaultValue: {e}",
                                     f"{table.prefix}schema.columns[{i}].defaultValue"))
                break


def _check_rows(table: _Table, raw: Any, issues: list[_Issue]) -> list[Mapping] | None:
    key = f"{table.prefix}rows"
    if not isinstance(raw, list):
        issues.append(_Issue("rows must be a list of { kind = INSERT, fields = [...] }", key))
        return None
    for i, row in enumerate(raw):
        where = f"{key}[{i}]"
        if not isinstance(row, Mapping):
            issues.append(_Issue(f"row {i} must be an object {{ kind = INSERT, fields = [...] }}", where))
            continue
        kind = row.get("kind")
        if kind is None:
            issues.append(_Issue(f"row {i} needs a kind ({', '.join(ROW_KINDS)})", f"{where}.kind"))
        elif _text(kind) not in ROW_KINDS:
            issues.append(_Issue(f"row {i}: unknown kind {_text(kind)!r}: use one of {', '.join(ROW_KINDS)} "
                                 "(upper case)", f"{where}.kind"))
        if row.get("fields") is None:
            issues.append(_Issue(f"row {i} needs fields = [...] or {{...}}", f"{where}.fields"))
            continue
        try:
            _row_values(row["fields"], table.schema.fields)
        except _BadValue as e:
            path = e.path.lstrip(".")
            name = re.split(r"[.\[]", path, maxsplit=1)[0] if path else ""
            what = f"row {i}, field '{name}'" + (f" ({path})" if path != name else "") if name else f"row {i}"
            issues.append(_Issue(f"{what}: {e}", f"{where}.fields" + (f".{name}" if name else "")))
    return raw


def _read_table(opts: Mapping, prefix: str, fallback: str, issues: list[_Issue]) -> _Table | None:
    if not isinstance(opts, Mapping):
        issues.append(_Issue("each tables_configs item must be a FakeSource config object", prefix.rstrip(".")))
        return None
    schema, columns = _read_schema(opts, prefix, issues)
    key = _table_key(opts, prefix, fallback, issues)
    sizes = _read_sizes(opts, prefix, issues)
    templates = _read_templates(opts, prefix, issues)
    ranges = _read_ranges(opts, prefix, issues)
    if schema is None:
        return None
    table = _Table(key=key, schema=schema, columns=columns, prefix=prefix, sizes=sizes, templates=templates,
                   ranges=ranges)
    _check_dates(table, issues)
    _check_defaults(table, issues)
    raw_rows = lookup(opts, "rows")
    if raw_rows is not MISSING and raw_rows is not None:
        table.rows = _check_rows(table, raw_rows, issues)
    return table


def _output_name(opts: Mapping) -> str | None:
    for key in ("plugin_output", "result_table_name"):
        value = opts.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def read_tables(options: Mapping, output: str | None = None) -> tuple[list[_Table], list[_Issue]]:
    """The tables a FakeSource config generates, and what is wrong with it."""
    issues: list[_Issue] = []
    configs = lookup(options, "tables_configs")
    if configs is MISSING or configs is None:
        table = _read_table(options, "", output or _output_name(options) or "default", issues)
        return ([table] if table else []), issues
    if not isinstance(configs, list) or not configs:
        issues.append(_Issue("tables_configs must be a non-empty list of FakeSource configs", "tables_configs",
                             "tables_configs = [ { schema { table = \"db.t1\", fields { ... } } }, ... ]", True))
        return [], issues
    tables: list[_Table] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(configs):
        prefix = f"tables_configs[{i}]."
        fallback = (_output_name(item) if isinstance(item, Mapping) else None) or "default"
        table = _read_table(item, prefix, fallback, issues)
        if table is None:
            continue
        if table.key in seen:
            issues.append(_Issue(f"table name: [{table.key}] must be unique (tables_configs[{seen[table.key]}] "
                                 "has it too)", f"{prefix}schema.table", "give every table its own schema.table"))
            continue
        seen[table.key] = i
        tables.append(table)
    return tables, issues


# ---------------------------------------------------------------------------------------------
# Compile-time hooks
# ---------------------------------------------------------------------------------------------


def _problem(job: JobConfig, plugin: PluginConfig, issue: _Issue) -> Problem:
    found = job.problem(issue.message, plugin, key=issue.key, hint=issue.hint)
    if "[" in issue.key:
        found = replace(found, line=plugin.line_of(issue.key.split("[", 1)[0]))
    return found


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Option problems: sizes, ranges, templates, modes, table names, rows, defaults."""
    _, issues = read_tables(plugin.options)
    return [_problem(job, plugin, i) for i in issues if not i.schema]


def schema(plugin: PluginConfig, job: JobConfig, inputs: list) -> tuple[Schema | None, list[Problem]]:
    """The output schema from ``schema`` (None for a multi-table source), with schema problems."""
    tables, issues = read_tables(plugin.options)
    problems = [_problem(job, plugin, i) for i in issues if i.schema]
    if problems or len(tables) != 1 or lookup(plugin.options, "tables_configs") is not MISSING:
        return None, problems
    return tables[0].schema, problems


# ---------------------------------------------------------------------------------------------
# Run time: Spark expressions
# ---------------------------------------------------------------------------------------------


def _next_float32_down(value: float) -> float:
    """The largest float32 below ``value`` (> 0)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<f", struct.pack("<I", bits - 1))[0]


def _float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


class _Random:
    """Builds the random value expression of each column of one table.

    Every draw is ``xxhash64(salt, stream, row id, element indices…)``: ``stream`` numbers
    the draws of the table, so no two draws of a row share a hash.
    """

    def __init__(self, table: _Table, salt: int, row_id: Any):
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

    def value(self, dt: DataType, meta: _Column, idx: list) -> Any:
        """The expression of one value of type ``dt``."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        name, spark_type, t = dt.name, dt.to_spark(), self.table
        if name == "null":
            return F.lit(None).cast(T.NullType())
        if meta.has_default and name not in ("array", "map", "row"):
            return literal(convert(_text(meta.default), dt, base64_bytes=False), dt)
        if name == "string":
            if "string.template" in t.templates:
                return self.pick(t.templates["string.template"], spark_type, idx)
            return self.letters(meta.length if meta.length is not None else t.sizes["string.length"], idx)
        if name == "boolean":
            return self.below(2, idx) == F.lit(1)
        if name in INT_RANGES:
            if f"{name}.template" in t.templates:
                return self.pick(t.templates[f"{name}.template"], spark_type, idx)
            return self.int_range(*t.ranges[name], spark_type, idx)
        if name in FLOAT_RANGES:
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
        if name == "decimal":
            precision, scale = min(dt.precision or 10, 38), dt.scale or 0
            whole = self.digits(precision - scale, idx) if precision > scale else F.lit("0")
            text = F.concat(whole, F.lit("."), self.digits(scale, idx)) if scale else whole
            return text.cast(spark_type)
        if name == "bytes":
            return self.letters(t.sizes["bytes.length"], idx).cast("binary")
        if name in ("date", "timestamp", "time"):
            parts = {}
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
        if name == "array":
            size = t.sizes["array.size"]
            if size == 0:
                return F.array().cast(spark_type)
            return F.transform(F.sequence(F.lit(0), F.lit(size - 1)),
                               lambda i: self.value(dt.element, meta, [*idx, i]))
        if name == "map":
            size = t.sizes["map.size"]
            if size == 0:
                return F.create_map().cast(spark_type)
            entries = F.transform(F.sequence(F.lit(0), F.lit(size - 1)),
                                  lambda i: F.struct(self.value(dt.key, meta, [*idx, i]).alias("k"),
                                                     self.value(dt.element, meta, [*idx, i]).alias("v")))
            # Drawn keys may repeat: like a HashMap, the last entry of a key wins. The entries are
            # bound to a lambda variable (transform over a one-element array) to be drawn only once.
            unique = F.transform(F.array(entries), lambda es: F.filter(
                es, lambda e, i: ~F.exists(F.slice(es, i + 2, F.lit(size)), lambda o: o["k"] == e["k"])))
            return F.map_from_entries(F.element_at(unique, 1))
        if name == "row":
            return F.struct(*[self.value(f.type, meta, idx).alias(f.name) for f in dt.fields])
        raise TypeError_(f"FakeSource cannot generate {dt}")


def literal(value: Any, dt: DataType) -> Any:
    """A Spark literal expression of type ``dt`` for a value from :func:`convert`."""
    from pyspark.sql import functions as F

    spark_type = dt.to_spark()
    if value is None:
        return F.lit(None).cast(spark_type)
    name = dt.name
    if name in ("string", "boolean", "bytes") or name in INT_RANGES or name in FLOAT_RANGES:
        return F.lit(value).cast(spark_type)
    if name in ("decimal", "date", "timestamp", "time"):
        return F.lit(str(value) if name == "decimal" else value.isoformat()).cast(spark_type)
    if name == "array":
        return F.array(*[literal(v, dt.element) for v in value]).cast(spark_type)
    if name == "map":
        if not value:
            return F.create_map().cast(spark_type)
        return F.map_from_arrays(F.array(*[literal(k, dt.key) for k, _ in value]),
                                 F.array(*[literal(v, dt.element) for _, v in value])).cast(spark_type)
    if name == "row":
        return F.struct(*[literal(v, f.type).alias(f.name) for v, f in zip(value, dt.fields, strict=True)])
    raise TypeError_(f"no literal for {dt}")


def _random_frame(spark: Any, table: _Table, parallelism: int, base: Any = None, salt: int | None = None) -> Any:
    """Random rows: one per ``id`` of ``base`` (default: ``row.num`` × ``parallelism`` ids)."""
    from pyspark.sql import functions as F

    from ..spi.rows import ROW_KIND, kind_literal

    if base is None:
        base = spark.range(0, table.row_num * parallelism, 1, parallelism)
    gen = _Random(table, secrets.randbits(62) if salt is None else salt, F.col("id"))
    values = [gen.value(f.type, table.columns.get(f.name, _Column()), []).alias(f.name) for f in table.schema.fields]
    # Cast the whole row to the declared struct: every column gets its declared (nullable) type.
    row = F.struct(*values).cast(table.schema.to_spark()).alias("__st_row")
    return base.select(row).select("__st_row.*", kind_literal(0).alias(ROW_KIND))


def _rows_frame(spark: Any, table: _Table, parallelism: int, base: Any = None) -> Any:
    """The ``rows`` list once per row of ``base`` (default: once per split of each reader)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..spi.rows import ROW_KIND, kind_literal

    row_type = T.StructType([*table.schema.to_spark().fields, T.StructField(ROW_KIND, T.ByteType(), False)])
    structs = []
    for item in table.rows or []:
        values = _row_values(item["fields"], table.schema.fields)
        columns = [literal(v, f.type).alias(f.name) for v, f in zip(values, table.schema.fields, strict=True)]
        kind = kind_literal(ROW_KINDS.index(_text(item["kind"]))).alias(ROW_KIND)
        structs.append(F.struct(*columns, kind).cast(row_type))
    # Each reader emits the whole list once per split it owns.
    if base is None:
        base = spark.range(0, parallelism * table.splits_per_reader, 1, parallelism)
    if not structs:
        return base.where(F.lit(False)).select(
            *[F.lit(None).cast(f.dataType).alias(f.name) for f in row_type.fields])
    return base.select(F.inline(F.array(*structs)))


def emits_changes(vertex: Any, inputs_change: bool) -> bool:
    """Whether an explicit ``rows`` item has a kind other than INSERT (random rows are INSERTs)."""
    tables, _ = read_tables(vertex.config, vertex.output)
    return any(_text(item.get("kind")) != "INSERT" for t in tables for item in (t.rows or ())
               if isinstance(item, Mapping))


def read(ctx: Any, vertex: Any) -> dict:
    """One DataFrame per table: random rows, or the explicit ``rows``, in ``parallelism`` partitions."""
    from ..spi.errors import RuntimeConfigError

    tables, issues = read_tables(vertex.config, vertex.output)
    if issues:
        raise RuntimeConfigError("; ".join(f"option '{i.key}': {i.message}" for i in issues))
    parallelism = max(1, int(vertex.parallelism or 1))
    try:
        return {t.key: (_rows_frame(ctx.spark, t, parallelism) if t.rows is not None
                        else _random_frame(ctx.spark, t, parallelism)) for t in tables}
    except _BadValue as e:  # a value valid at compile time but not now (cannot happen with a checked plan)
        raise RuntimeConfigError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# STREAMING: SeaTunnel's unbounded reader (runtime/streaming.py, docs/streaming.md)
# ---------------------------------------------------------------------------------------------

#: the schema of a split file (one JSON line per split)
_SPLIT_SCHEMA = "reader INT, split INT, start BIGINT, count BIGINT"


def _stream_splits(table: _Table, parallelism: int, created_ms: int) -> dict[str, tuple[str, int]]:
    """The split files of one table: each reader's splits of ``ceil(row.num / split.num)`` rows (the last one
    the rest), rows numbered as the batch reader numbers them; modification times order them by split."""
    rows = table.row_num
    per_split = math.ceil(rows / table.sizes["split.num"]) if rows > 0 else 0
    files = {}
    for reader in range(parallelism):
        for split in range(table.splits_per_reader):
            count = per_split if table.rows is not None else min(per_split, rows - split * per_split)
            record = {"reader": reader, "split": split, "start": reader * rows + split * per_split, "count": count}
            files[f"split-{split:06d}-{reader:04d}.json"] = (json.dumps(record) + "\n", created_ms + split * 1000)
    return files


def read_stream(ctx: Any, vertex: Any) -> dict:
    """SeaTunnel's streaming FakeSource: each reader reads its splits (``split.num`` of them over ``row.num``
    rows; with ``rows``, each split emits the whole list) one per ``split.read-interval`` ms, then idles: the
    stream stays open with no new data.

    The splits are written once, as small files under the pipeline's checkpoint, and read as a file
    stream, ``checkpoint.interval / split.read-interval`` splits per reader per micro-batch (at least
    one); the rows come from native expressions over each split's row numbers, with a salt derived from
    the pipeline, the source and the table, so a replayed micro-batch generates the same rows."""
    import hashlib
    import time as _time

    from pyspark.sql import functions as F

    from ..spi.errors import RuntimeConfigError
    from ..spi.hadoop import read_text, write_once

    tables, issues = read_tables(vertex.config, vertex.output)
    if issues:
        raise RuntimeConfigError("; ".join(f"option '{i.key}': {i.message}" for i in issues))
    parallelism = max(1, int(vertex.parallelism or 1))
    spark = ctx.spark
    out = {}
    for number, t in enumerate(tables):
        directory = f"{ctx.state_dir(vertex)}/table-{number}-{hashlib.sha1(t.key.encode()).hexdigest()[:8]}"
        shape = {"table": t.key, "row.num": t.row_num, "split.num": t.sizes["split.num"], "parallelism": parallelism,
                 "rows": len(t.rows) if t.rows is not None else None}
        created = write_once(spark, f"{directory}/splits", _stream_splits(t, parallelism, int(_time.time() * 1000)))
        if created:
            write_once(spark, f"{directory}/shape", {"shape.json": (json.dumps(shape), int(_time.time() * 1000))})
        else:
            known = read_text(spark, f"{directory}/shape/shape.json")
            if known is not None and json.loads(known) != shape:
                import logging

                logging.getLogger("seatunnel.runtime").warning(
                    "FakeSource %s: table %s: the stream keeps the splits of its first run (%s); the options now "
                    "say %s (a new checkpoint would use them)", vertex.ref, t.key, known, json.dumps(shape))
        per_batch = parallelism * _splits_per_batch(ctx, t.sizes["split.read-interval"])
        splits = (spark.readStream.format("json").schema(_SPLIT_SCHEMA).option("maxFilesPerTrigger", per_batch)
                  .load(f"{directory}/splits"))
        if parallelism > 1:
            splits = splits.repartition(parallelism)
        try:
            if t.rows is not None:
                out[t.key] = _rows_frame(spark, t, parallelism, base=splits)
            else:
                ids = splits.select(F.explode(F.sequence(F.col("start"), F.col("start") + F.col("count") - 1))
                                    .alias("id")).where(F.col("id").isNotNull())
                digest = hashlib.sha256(f"{ctx.pipeline_key}|{vertex.ref}|{t.key}".encode()).digest()
                out[t.key] = _random_frame(spark, t, parallelism, base=ids,
                                           salt=int.from_bytes(digest[:8], "big") >> 2)
        except _BadValue as e:
            raise RuntimeConfigError(str(e)) from None
    return out


class FakeSource(Connector, SchemaInference, BatchSource, StreamingSource, ChangeEmitter):
    name = "FakeSource"
    kinds = frozenset({SOURCE})
    identity = ("schema.table",)
    description = "Generates rows from a schema: random, ranged, templated or explicit."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return check(plugin, job)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return schema(plugin, job, list(inputs))

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return read(ctx, vertex)

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return read_stream(ctx, vertex)

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        return emits_changes(vertex, inputs_change)


CONNECTOR = FakeSource()


def _splits_per_batch(ctx: RunContext, read_interval_ms: int) -> int:
    """How many splits a reader emits per micro-batch: those it reads in ``checkpoint.interval``
    ms, one per ``read_interval_ms`` (at least one)."""
    interval = ctx.stream.interval_ms if ctx.stream is not None else 10_000
    return max(1, interval // max(1, int(read_interval_ms)))
