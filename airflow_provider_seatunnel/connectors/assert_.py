"""Assert sink: checks row counts, field values and the table's catalog against rules.

Options (SeaTunnel's ``Assert``): ``rules`` (required) holding ``row_rules`` (MIN_ROW /
MAX_ROW on the total row count, every row kind counted), ``field_rules`` (per field: a
``field_type`` and ``field_value`` rules NULL, NOT_NULL, MIN, MAX, MIN_LENGTH, MAX_LENGTH
and ``equals_to``), ``catalog_table_rule`` (columns, table identifier, keys),
``table-names`` (the set of tables that carried rows) and ``tables_configs`` (the same
rules per ``table_path``). Without ``tables_configs`` the rules hold for every input table.

At run time each table is checked in ONE aggregate pass: the row count and, for every
field rule, how many rows break each of its parts (the first broken part of a row counts,
as SeaTunnel stops at a row's first failure) with the first offending value. Nothing is
collected but that one aggregate row. Type and catalog rules are decided from the
DataFrame's schema before any data is read. All broken rules are reported at once.
``equals_to`` compares natively, after converting the expected value to the field's type:
arrays element by element, maps by size and each expected key's value (in any order, nested
maps included), rows field by field, decimals with their scale.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any

from ..spi import SINK, Connector, Dataset, RunContext, SchemaInference, Sink, StreamFinish, Vertex
from ..spi.options import MISSING, JobConfig, PluginConfig, Problem, lookup
from ..spi.schema import DataType, Schema, TypeError_, parse_type

log = logging.getLogger("seatunnel.assert")

FIELD_RULE_TYPES = ("NULL", "NOT_NULL", "MIN", "MAX", "MIN_LENGTH", "MAX_LENGTH")
ROW_RULE_TYPES = ("MIN_ROW", "MAX_ROW")
RULE_TYPES = FIELD_RULE_TYPES + ROW_RULE_TYPES
_NEEDS_VALUE = ("MIN", "MAX", "MIN_LENGTH", "MAX_LENGTH", "MIN_ROW", "MAX_ROW")
EMPTY_RULES = "Assert rule config is empty, please add rule config."

_RULES_KEYS = ("row_rules", "field_rules", "catalog_table_rule", "table-names", "tables_configs")
_TABLE_KEYS = ("table_path", "row_rules", "field_rules", "catalog_table_rule")
_FIELD_KEYS = ("field_name", "field_type", "field_value")
_VALUE_KEYS = ("rule_type", "rule_value", "equals_to")
_CATALOG_KEYS = ("primary_key_rule", "constraint_key_rule", "column_rule", "table_identifier_rule")
_COLUMN_KEYS = ("name", "type", "column_length", "nullable", "default_value", "comment")
_CONSTRAINT_TYPES = ("INDEX_KEY", "UNIQUE_KEY", "FOREIGN_KEY", "VECTOR_INDEX_KEY")
_SORT_TYPES = ("ASC", "DESC")
_INT_RANGES = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}


# --------------------------------------------------------------------------------------
# The rules, read from the options (pure Python: used at compile time and at run time)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    """Something wrong (``error``) or doubtful (``warning``) in the rules, at config path ``key``."""

    key: str
    message: str
    hint: str | None = None
    severity: str = "error"


@dataclass(frozen=True)
class ValueRule:
    """One ``field_value`` entry: a rule type, its value and/or an ``equals_to``."""

    rule_type: str | None
    rule_value: float | None
    equals_to: Any = None
    has_equals: bool = False

    def describe(self) -> str:
        parts = []
        if self.rule_type:
            parts.append(self.rule_type + (f" {_num(self.rule_value)}" if self.rule_type in _NEEDS_VALUE else ""))
        if self.has_equals:
            parts.append(f"equals_to {_show(self.equals_to)}")
        return " and ".join(parts) or "(none)"


@dataclass(frozen=True)
class FieldRule:
    name: str
    type: DataType
    values: tuple[ValueRule, ...]


@dataclass(frozen=True)
class RowRule:
    rule_type: str
    rule_value: float

    def broken_by(self, count: int) -> bool:
        return count > self.rule_value if self.rule_type == "MAX_ROW" else count < self.rule_value


@dataclass(frozen=True)
class ColumnRule:
    """A ``column_rule`` entry; ``explicit`` holds the optional attributes written in the config."""

    name: str
    type: DataType
    explicit: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CatalogRule:
    primary_key: Mapping[str, Any] | None = None
    constraint_keys: tuple[Mapping[str, Any], ...] | None = None
    columns: tuple[ColumnRule, ...] | None = None
    identifier: tuple[str, str] | None = None  # (catalog_name, table)


@dataclass(frozen=True)
class TableRules:
    row_rules: tuple[RowRule, ...] = ()
    field_rules: tuple[FieldRule, ...] = ()
    catalog: CatalogRule | None = None

    @property
    def empty(self) -> bool:
        return not self.row_rules and not self.field_rules and self.catalog is None


@dataclass(frozen=True)
class Rules:
    """``every_table``: rules for each input table (no ``tables_configs``); ``tables``: by table path."""

    every_table: TableRules | None
    tables: Mapping[str, TableRules]
    table_names: tuple[str, ...] | None

    def for_table(self, table: str) -> TableRules | None:
        return self.every_table if self.every_table is not None else self.tables.get(table)


class _Reader:
    """Collects issues while reading the rules."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def error(self, key: str, message: str, hint: str | None = None) -> None:
        self.issues.append(Issue(key, message, hint))

    def warn(self, key: str, message: str, hint: str | None = None) -> None:
        self.issues.append(Issue(key, message, hint, "warning"))

    def unknown_keys(self, obj: Mapping[str, Any], known: tuple[str, ...], key: str) -> None:
        for name in obj:
            if name not in known:
                close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
                self.warn(f"{key}.{name}", f"unknown key '{name}' is ignored (SeaTunnel ignores it too)",
                          f"did you mean '{close[0]}'?" if close else "known keys: " + ", ".join(known))

    def obj(self, value: Any, key: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.error(key, f"must be an object {{ ... }}, found {_show(value)}")
        return None

    def objects(self, value: Any, key: str) -> list[tuple[str, Mapping[str, Any]]]:
        """The objects of a list option, each with its path; problems for anything else."""
        if not isinstance(value, list):
            self.error(key, f"must be a list of objects [{{ ... }}], found {_show(value)}")
            return []
        out = []
        for i, item in enumerate(value):
            where = f"{key}[{i}]"
            if self.obj(item, where) is not None:
                out.append((where, item))
        return out

    def string(self, obj: Mapping[str, Any], name: str, key: str) -> str | None:
        value = obj.get(name)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
        self.error(f"{key}.{name}", "is required" if value is None else f"must be a string, found {_show(value)}")
        return None

    def rule_type(self, value: Any, key: str) -> str | None:
        if isinstance(value, str) and value in RULE_TYPES:
            return value
        text = str(value).strip()
        if text.upper() in RULE_TYPES:
            hint = f"rule types are matched exactly, as SeaTunnel does: write {text.upper()}"
        else:
            close = difflib.get_close_matches(text.upper(), RULE_TYPES, n=1, cutoff=0.5)
            hint = (f"did you mean {close[0]}? " if close else "") + "rule types: " + ", ".join(RULE_TYPES)
        self.error(key, f"unknown rule_type {_show(value)}", hint)
        return None


def _number(value: Any) -> float | None:
    """A rule value as SeaTunnel reads it (``getDouble``: a number or a numeric string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _read_type(r: _Reader, value: Any, key: str) -> DataType | None:
    if value is None:
        r.error(key, "is required (SeaTunnel fails with a null pointer without it)",
                'write the field\'s type, e.g. field_type = int (a null type is written "null")')
        return None
    if not isinstance(value, (str, Mapping)):
        r.error(key, f"must be a type string or a row object, found {_show(value)}")
        return None
    try:
        return parse_type(value)
    except TypeError_ as e:
        r.error(key, str(e))
        return None


def _read_row_rules(r: _Reader, value: Any, key: str) -> tuple[RowRule, ...]:
    out = []
    for where, item in r.objects(value, key):
        r.unknown_keys(item, ("rule_type", "rule_value"), where)
        if "rule_type" not in item:
            r.warn(where, "a row rule without rule_type checks nothing")
            continue
        kind = r.rule_type(item["rule_type"], f"{where}.rule_type")
        if kind is None:
            continue
        if kind not in ROW_RULE_TYPES:
            r.warn(f"{where}.rule_type", f"{kind} is a field rule: in row_rules it is ignored (as in SeaTunnel)",
                   "row_rules take MIN_ROW or MAX_ROW")
            continue
        number = _number(item.get("rule_value"))
        if number is None:
            r.error(f"{where}.rule_value", f"{kind} needs a numeric rule_value, found {_show(item.get('rule_value'))}")
            continue
        out.append(RowRule(kind, number))
    return tuple(out)


def _read_value_rules(r: _Reader, value: Any, key: str, ftype: DataType | None) -> tuple[ValueRule, ...]:
    if value is None:
        r.error(key, "is required (SeaTunnel fails with a null pointer without it)",
                "list the value rules, e.g. field_value = [{ rule_type = NOT_NULL }]")
        return ()
    out = []
    for where, item in r.objects(value, key):
        r.unknown_keys(item, _VALUE_KEYS, where)
        kind = None
        if item.get("rule_type") is not None:
            kind = r.rule_type(item["rule_type"], f"{where}.rule_type")
            if kind is None:
                continue
            if kind in ROW_RULE_TYPES:
                r.error(f"{where}.rule_type", f"{kind} is a row rule: as a field rule every row fails it",
                        "move it to row_rules")
                continue
        number = None
        if kind in _NEEDS_VALUE:
            number = _number(item.get("rule_value"))
            if number is None:
                r.error(f"{where}.rule_value", f"{kind} needs a numeric rule_value, found "
                        f"{_show(item.get('rule_value'))}")
                continue
        expected = item.get("equals_to")
        has_equals = expected is not None  # a null equals_to is absent for SeaTunnel too
        # a Jinja template (``{{ ds }}``) is rendered per Airflow task: checked then, not at parse time
        templated = isinstance(expected, str) and "{{" in expected
        if has_equals and ftype is not None and not templated:
            try:
                convert_expected(expected, ftype)
            except ValueError as e:
                r.error(f"{where}.equals_to", f"cannot be read as {ftype}: {e}")
                continue
        if kind is None and not has_equals:
            r.warn(where, "a field_value entry without rule_type or equals_to checks nothing")
            continue
        out.append(ValueRule(kind, number, expected, has_equals))
    return tuple(out)


def _read_field_rules(r: _Reader, value: Any, key: str) -> tuple[FieldRule, ...]:
    out = []
    for where, item in r.objects(value, key):
        r.unknown_keys(item, _FIELD_KEYS, where)
        name = r.string(item, "field_name", where)
        ftype = _read_type(r, item.get("field_type"), f"{where}.field_type")
        values = _read_value_rules(r, item.get("field_value"), f"{where}.field_value", ftype)
        if name is not None and ftype is not None:
            out.append(FieldRule(name, ftype, values))
    return tuple(out)


def _read_catalog_rule(r: _Reader, value: Any, key: str) -> CatalogRule | None:
    obj = r.obj(value, key)
    if obj is None:
        return None
    r.unknown_keys(obj, _CATALOG_KEYS, key)
    primary = constraints = columns = identifier = None
    for name in ("primary_key_rule", "constraint_key_rule"):
        if name in obj:
            r.warn(f"{key}.{name}", "fails at run time: this runtime carries no primary or constraint key metadata "
                   "for its tables", "assert the columns with column_rule instead")
    if "primary_key_rule" in obj:
        where = f"{key}.primary_key_rule"
        pk = r.obj(obj["primary_key_rule"], where)
        if pk is not None:
            name = r.string(pk, "primary_key_name", where)
            cols = pk.get("primary_key_columns")
            if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
                r.error(f"{where}.primary_key_columns", "must be a list of column names")
            elif name is not None:
                primary = {"name": name, "columns": tuple(cols)}
    if "constraint_key_rule" in obj:
        keys = []
        for where, item in r.objects(obj["constraint_key_rule"], f"{key}.constraint_key_rule"):
            name = r.string(item, "constraint_key_name", where)
            ctype = r.string(item, "constraint_key_type", where)
            if ctype is not None and ctype not in _CONSTRAINT_TYPES:
                r.error(f"{where}.constraint_key_type", f"unknown constraint type '{ctype}'",
                        "one of " + ", ".join(_CONSTRAINT_TYPES))
            cols = []
            for cwhere, col in r.objects(item.get("constraint_key_columns"), f"{where}.constraint_key_columns"):
                cname = r.string(col, "constraint_key_column_name", cwhere)
                sort = r.string(col, "constraint_key_sort_type", cwhere)
                if sort is not None and sort not in _SORT_TYPES:
                    r.error(f"{cwhere}.constraint_key_sort_type", f"unknown sort type '{sort}'", "ASC or DESC")
                cols.append((cname, sort))
            keys.append({"name": name, "type": ctype, "columns": tuple(cols)})
        constraints = tuple(keys)
    if "column_rule" in obj:
        out = []
        for where, item in r.objects(obj["column_rule"], f"{key}.column_rule"):
            r.unknown_keys(item, _COLUMN_KEYS, where)
            name = r.string(item, "name", where)
            ctype = _read_type(r, item.get("type"), f"{where}.type")
            explicit = {k: item[k] for k in ("column_length", "nullable", "default_value", "comment") if k in item}
            if "nullable" in explicit and not isinstance(explicit["nullable"], bool):
                r.error(f"{where}.nullable", f"must be true or false, found {_show(explicit['nullable'])}")
            if "column_length" in explicit and (isinstance(explicit["column_length"], bool)
                                                or not isinstance(explicit["column_length"], int)):
                r.error(f"{where}.column_length", f"must be an integer, found {_show(explicit['column_length'])}")
            if name is not None and ctype is not None:
                out.append(ColumnRule(name, ctype, explicit))
        columns = tuple(out)
    if "table_identifier_rule" in obj:
        where = f"{key}.table_identifier_rule"
        ident = r.obj(obj["table_identifier_rule"], where)
        if ident is not None:
            catalog = r.string(ident, "catalog_name", where)
            table = r.string(ident, "table", where)
            if table is not None and len(table.split(".")) > 3:
                r.error(f"{where}.table", f"cannot split '{table}' into database, schema and table")
            elif catalog is not None and table is not None:
                identifier = (catalog, table)
    return CatalogRule(primary, constraints, columns, identifier)


def _read_table_rules(r: _Reader, obj: Mapping[str, Any], key: str) -> TableRules:
    row = _read_row_rules(r, obj["row_rules"], f"{key}.row_rules") if "row_rules" in obj else ()
    fields = _read_field_rules(r, obj["field_rules"], f"{key}.field_rules") if "field_rules" in obj else ()
    catalog = (_read_catalog_rule(r, obj["catalog_table_rule"], f"{key}.catalog_table_rule")
               if "catalog_table_rule" in obj else None)
    return TableRules(row, fields, catalog)


def read_rules(options: Mapping[str, Any]) -> tuple[Rules | None, list[Issue]]:
    """The Assert rules of a plugin's options, and the issues found reading them."""
    r = _Reader()
    raw = lookup(options, "rules")
    if raw is MISSING:
        r.error("rules", "the option 'rules' is required")
        return None, r.issues
    obj = r.obj(raw, "rules")
    if obj is None:
        return None, r.issues
    r.unknown_keys(obj, _RULES_KEYS, "rules")
    names = None
    if "table-names" in obj:
        value = obj["table-names"]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            names = tuple(value)
        else:
            r.error("rules.table-names", f"must be a list of table names, found {_show(value)}")
    every, tables = None, {}
    if "tables_configs" in obj:
        for key in ("row_rules", "field_rules", "catalog_table_rule"):
            if key in obj:
                r.warn(f"rules.{key}", "is ignored when tables_configs is set (as in SeaTunnel)",
                       "put the rules in the tables_configs entry of their table_path")
        for where, item in r.objects(obj["tables_configs"], "rules.tables_configs"):
            r.unknown_keys(item, _TABLE_KEYS, where)
            path = r.string(item, "table_path", where)
            rules = _read_table_rules(r, item, where)
            if path is not None:
                if path in tables:
                    r.warn(f"{where}.table_path", f"table_path '{path}' is listed twice: the last entry wins")
                tables[path] = rules
    else:
        every = _read_table_rules(r, obj, "rules")
    if (every is None or every.empty) and all(t.empty for t in tables.values()) and not names:
        r.error("rules", EMPTY_RULES, "add row_rules, field_rules, catalog_table_rule or table-names")
    return Rules(every, tables, names), r.issues


# --------------------------------------------------------------------------------------
# equals_to: the expected value converted to the field's type, as SeaTunnel's JSON
# converter does
# --------------------------------------------------------------------------------------


def _java_double(x: float) -> str:
    """``Double.toString(x)`` (the text Jackson gives a JSON double)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    t = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    exp = len(digits) - 1 + t.exponent  # the power of ten of the first digit
    if 1e-3 <= abs(x) < 1e7:
        if t.exponent >= 0:
            return f"{sign}{digits}{'0' * t.exponent}.0"
        point = len(digits) + t.exponent
        whole = digits[:point] if point > 0 else "0"
        frac = ("0" * max(0, -point)) + digits[max(point, 0):]
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def _json_text(value: Any) -> str:
    """Jackson's ``asText()`` of the JSON node a config value becomes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, (list, dict)):
        return ""
    return str(value)


_DATE = [re.compile(p) for p in (r"(\d{4})-(\d{2})-(\d{2})", r"(\d{4})年(\d{2})月(\d{2})日", r"(\d{4})/(\d{2})/(\d{2})",
                                 r"(\d{4})\.(\d{2})\.(\d{2})", r"(\d{4})(\d{2})(\d{2})")]
_TIMESTAMP = [re.compile(p) for p in (
    r"(\d{4})-(\d{2})-(\d{2})[\sT](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?",
    r"(\d{4})/(\d{2})/(\d{2})\s(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?",
    r"(\d{4})\.(\d{2})\.(\d{2})\s(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?",
    r"(\d{4})年(\d{2})月(\d{2})日\s(\d{2})时(\d{2})分(\d{2})秒()",
    r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})()")]
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{0,9}))?")


def _micros(fraction: str | None) -> int:
    return int((fraction or "").ljust(6, "0")[:6])


def convert_expected(value: Any, t: DataType) -> Any:
    """``value`` (an ``equals_to``) as a value of type ``t``; ValueError when SeaTunnel could not read it.

    Maps become dicts, rows lists of field values (positional), decimals ``Decimal`` with
    the scale SeaTunnel's BigDecimal would have (``1.50`` has scale 2; a HOCON double has
    the scale of its ``Double.toString`` text).
    """
    if value is None or t.name == "null":
        return None
    text = _json_text(value).strip()
    if t.name == "boolean":
        return value if isinstance(value, bool) else text.lower() == "true"
    if t.name in _INT_RANGES:
        if isinstance(value, float) and t.name in ("int", "bigint") and -_INT_RANGES[t.name] <= value \
                < _INT_RANGES[t.name]:
            return int(value)  # Jackson's asInt()/asLong() truncates a double
        if not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(f"{_show(value)} is not an integer")
        if not -_INT_RANGES[t.name] <= int(text) < _INT_RANGES[t.name]:
            raise ValueError(f"{_show(value)} is out of the {t.name} range")
        return int(text)
    if t.name in ("float", "double"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{_show(value)} is not a number") from None
    if t.name == "decimal":
        try:
            number = Decimal(str(value) if isinstance(value, int) and not isinstance(value, bool) else text)
        except InvalidOperation:
            raise ValueError(f"{_show(value)} is not a decimal number") from None
        if not number.is_finite() or isinstance(value, bool):
            raise ValueError(f"{_show(value)} is not a decimal number")
        return number
    if t.name == "string":
        if isinstance(value, (list, dict)):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return _json_text(value)
    if t.name == "bytes":
        if not isinstance(value, str):
            raise ValueError("bytes are written as a base64 string")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{_show(value)} is not base64") from None
    if t.name == "date":
        for pattern in _DATE:
            m = pattern.fullmatch(text)
            if m:
                return date(int(m[1]), int(m[2]), int(m[3]))
        raise ValueError(f"{_show(value)} is not a date (write yyyy-MM-dd)")
    if t.name == "timestamp":
        for pattern in _TIMESTAMP:
            m = pattern.fullmatch(text)
            if m:
                return datetime(*(int(m[i]) for i in range(1, 7)), _micros(m[7]))
        raise ValueError(f"{_show(value)} is not a timestamp (write yyyy-MM-dd HH:mm:ss[.SSS])")
    if t.name == "time":
        m = _TIME.fullmatch(text)
        if not m:
            raise ValueError(f"{_show(value)} is not a time (write HH:mm:ss[.SSS])")
        return time(int(m[1]), int(m[2]), int(m[3]), _micros(m[4]))
    if t.name == "array":
        if not isinstance(value, list):
            raise ValueError(f"an array is written as a list, found {_show(value)}")
        return [convert_expected(v, t.element) for v in value]
    if t.name == "map":
        if not isinstance(value, Mapping):
            raise ValueError(f"a map is written as an object {{ key = value }}, found {_show(value)}")
        return {convert_expected(str(k), t.key): convert_expected(v, t.element) for k, v in value.items()}
    if t.name == "row":
        if isinstance(value, list):
            if len(value) < len(t.fields):
                raise ValueError(f"the row has {len(t.fields)} fields, the list gives {len(value)}")
            return [convert_expected(v, f.type) for v, f in zip(value, t.fields, strict=False)]
        if isinstance(value, Mapping):
            missing = [f.name for f in t.fields if f.name not in value]
            if missing:
                raise ValueError("missing row field(s) " + ", ".join(missing))
            return [convert_expected(value[f.name], f.type) for f in t.fields]
        raise ValueError(f"a row is written as a list or an object, found {_show(value)}")
    raise ValueError(f"equals_to is not supported for {t}")


# --------------------------------------------------------------------------------------
# Compile time
# --------------------------------------------------------------------------------------


def _problems(plugin: Any, job: Any, issues: list[Issue], severity: str) -> list[Any]:
    return [job.problem(i.message, plugin, key=i.key, hint=i.hint, severity=i.severity)
            for i in issues if (i.severity == "error") == (severity == "error")]


def check(plugin: Any, job: Any) -> list[Any]:
    """Errors in the rules (the warnings come from :func:`schema`, which the compiler keeps as warnings)."""
    if not plugin.has("rules"):
        return []  # the required-option check reports it
    _, issues = read_rules(plugin.options)
    return _problems(plugin, job, issues, "error")


def _compatible(declared: DataType, actual: DataType) -> bool:
    """Whether a declared field_type can hold for a compile-time input type."""
    if declared.name == "null":
        return True
    if declared.name != actual.name:
        return False
    if declared.name == "decimal":
        return declared.scale == actual.scale
    if declared.name == "array":
        return _compatible(declared.element, actual.element)
    if declared.name == "map":
        return _compatible(declared.key, actual.key) and _compatible(declared.element, actual.element)
    if declared.name == "row":
        return (len(declared.fields) == len(actual.fields)
                and all(d.name == a.name and _compatible(d.type, a.type)
                        for d, a in zip(declared.fields, actual.fields, strict=True)))
    return True


def schema(plugin: Any, job: Any, inputs: list[Schema | None]) -> tuple[None, list[Any]]:
    """No output; the rules' warnings, and a problem for each field rule naming an unknown field."""
    rules, issues = read_rules(plugin.options)
    problems = _problems(plugin, job, issues, "warning")
    known = inputs[0] if inputs and all(s is not None and s == inputs[0] for s in inputs) else None
    if rules is None or rules.every_table is None or known is None:
        return None, problems
    for i, rule in enumerate(rules.every_table.field_rules):
        key = f"rules.field_rules[{i}].field_name"
        found = next((f for f in known.fields if f.name == rule.name), None)
        if found is None:
            close = difflib.get_close_matches(rule.name, known.names, n=1, cutoff=0.6)
            problems.append(job.problem(f"field '{rule.name}' does not exist in the input (its fields: "
                                        + ", ".join(known.names) + ")", plugin, key=key,
                                        hint=f"did you mean '{close[0]}'?" if close else None))
        elif not _compatible(rule.type, found.type):
            problems.append(job.problem(f"field '{rule.name}' is {found.type} in the input but field_type is "
                                        f"{rule.type}: the rule fails at run time", plugin,
                                        key=f"rules.field_rules[{i}].field_type", severity="warning"))
    return None, problems


# --------------------------------------------------------------------------------------
# Run time
# --------------------------------------------------------------------------------------


def _num(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else repr(value)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


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
        return isinstance(actual, T.ArrayType) and type_matches(declared.element, actual.elementType, strict)
    if name == "map":
        return (isinstance(actual, T.MapType) and type_matches(declared.key, actual.keyType, strict)
                and type_matches(declared.element, actual.valueType, strict))
    if name == "row":
        return (isinstance(actual, T.StructType) and len(actual.fields) == len(declared.fields)
                and all(d.name == a.name and type_matches(d.type, a.dataType, strict)
                        for d, a in zip(declared.fields, actual.fields, strict=True)))
    return type(actual) is type(declared.to_spark())


def _type_ok(col: Any, declared: DataType, actual: Any) -> Any:
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
        ok = ok & F.forall(col, lambda x: _type_ok(x, declared.element, actual.elementType))
    elif declared.name == "map":
        ok = (ok & F.forall(F.map_keys(col), lambda x: _type_ok(x, declared.key, actual.keyType))
              & F.forall(F.map_values(col), lambda x: _type_ok(x, declared.element, actual.valueType)))
    elif declared.name == "row":
        for d, a in zip(declared.fields, actual.fields, strict=True):
            ok = ok & _type_ok(col.getField(a.name), d.type, a.dataType)
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
            out = out & _equals(F.try_element_at(col, F.lit(i + 1)), item, declared.element, actual.elementType)
        return out
    if name == "map":
        out = F.size(col) == len(expected)
        for key, item in expected.items():
            k = _literal(key, declared.key, actual.keyType)
            out = out & F.array_contains(F.map_keys(col), k) & _equals(F.try_element_at(col, k), item,
                                                                       declared.element, actual.valueType)
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


def _display(col: Any, actual: Any) -> Any:
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


def _value_fails(col: Any, rule: ValueRule, declared: DataType, actual: Any) -> Any:
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


def _quoted(name: str) -> Any:
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _columns_text(columns: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{n} {t}" for n, t in columns) + "]"


def _catalog_failures(ctx: Any, vertex: Any, table: str, df: Any, rule: CatalogRule) -> list[str]:
    """Broken ``catalog_table_rule`` parts, decided from the DataFrame's schema and the plan."""
    out = []
    if rule.primary_key is not None:
        out.append("catalog_table_rule primary_key_rule: primaryKey is null (the input table declares no "
                   "primary key: this runtime carries no key metadata)")
    if rule.constraint_keys is not None:
        out.append("catalog_table_rule constraint_key_rule: constraintKeys is null (the input table declares "
                   "no constraint keys: this runtime carries no key metadata)")
    if rule.columns is not None:
        from ..spi.rows import data_columns

        names = data_columns(df)
        fields = {f.name: f for f in df.schema.fields if f.name in names}
        actual = [(f.name, spark_type_name(f.dataType)) for f in fields.values()]
        wanted = [(c.name, str(c.type)) for c in rule.columns]
        why = []
        missing = [c.name for c in rule.columns if c.name not in fields]
        extra = [n for n in names if n not in {c.name for c in rule.columns}]
        if missing:
            why.append("missing " + ", ".join(missing))
        if extra:
            why.append("not in the rule " + ", ".join(extra))
        for c in rule.columns:
            f = fields.get(c.name)
            if f is None:
                continue
            if not type_matches(c.type, f.dataType, strict=True):
                why.append(f"{c.name} is {spark_type_name(f.dataType)}, not {c.type}")
            if "nullable" in c.explicit and c.explicit["nullable"] != f.nullable:
                why.append(f"{c.name} is {'' if f.nullable else 'not '}nullable")
            defaults = {"comment": None, "column_length": 0, "default_value": None}
            for attr, default in defaults.items():
                if attr in c.explicit and c.explicit[attr] != f.metadata.get(attr, default):
                    why.append(f"{c.name} has {attr} {_show(f.metadata.get(attr, default))}, not "
                               f"{_show(c.explicit[attr])}")
        if why:
            out.append(f"catalog_table_rule column_rule: columns {_columns_text(actual)} are not equal to "
                       f"{_columns_text(wanted)} ({'; '.join(why)})")
    if rule.identifier is not None:
        catalog, path = rule.identifier
        sources = _upstream_sources(ctx, vertex)
        if path != table or (sources and catalog not in sources):
            shown = "/".join(sorted(sources)) if sources else "?"
            out.append(f"catalog_table_rule table_identifier_rule: tableIdentifier {shown}.{table} is not "
                       f"equal to {catalog}.{path}")
    return out


def _upstream_sources(ctx: Any, vertex: Any) -> set[str]:
    """The plugin names of the sources feeding ``vertex`` (a table's catalog is its source plugin)."""
    pipeline = getattr(ctx, "pipeline", None)
    if pipeline is None:
        return set()
    by_id = {v.id: v for v in pipeline.vertices}
    seen, todo, found = set(), [vertex.id], set()
    while todo:
        vid = todo.pop()
        for a, b in pipeline.edges:
            if b == vid and a not in seen:
                seen.add(a)
                todo.append(a)
                if by_id[a].kind == "source":
                    found.add(by_id[a].plugin)
    return found


@dataclass
class _Part:
    """One checked part of a field rule: its type check or one of its field_value entries."""

    rule: FieldRule
    text: str


def _describe(rule: ValueRule, declared: DataType, actual: Any) -> str:
    """A field_value entry for a message; says so when a decimal equals_to cannot match for its scale."""
    text = rule.describe()
    if rule.has_equals and declared.name == "decimal":
        scale = -convert_expected(rule.equals_to, declared).as_tuple().exponent
        if scale != actual.scale:
            text += (f" (scale {scale}, the column's is {actual.scale}: SeaTunnel's decimals are equal only "
                     "with equal scales)")
    return text


def _scan(df: Any, rules: TableRules | None) -> tuple[int, list[str]]:
    """One aggregate pass over ``df``: the row count and the broken field-rule parts."""
    from pyspark.sql import functions as F

    from ..spi.rows import data_columns

    columns = set(data_columns(df))
    types = {f.name: f.dataType for f in df.schema.fields}
    projected = [F.monotonically_increasing_id().alias("__st_pos")]
    aggregates = [F.count(F.lit(1)).alias("__st_rows")]
    parts: list[list[_Part]] = []
    for k, rule in enumerate(rules.field_rules if rules else ()):
        if rule.name not in columns:
            continue
        col, actual = _quoted(rule.name), types[rule.name]
        checks = [(_Part(rule, f"field_type {rule.type}"), ~F.coalesce(_type_ok(col, rule.type, actual), F.lit(False)))]
        checks += [(_Part(rule, _describe(v, rule.type, actual)), _value_fails(col, v, rule.type, actual))
                   for v in rule.values]
        first = F.lit(None).cast("int")
        for j, (_, fails) in reversed(list(enumerate(checks))):
            first = F.when(fails, F.lit(j)).otherwise(first)
        projected += [first.alias(f"__st_f{k}"), _display(col, actual).alias(f"__st_v{k}")]
        for j in range(len(checks)):
            hit = F.col(f"__st_f{k}") == j
            aggregates += [F.count_if(hit).alias(f"__st_n{k}_{j}"),
                           F.min_by(F.col(f"__st_v{k}"), F.when(hit, F.col("__st_pos"))).alias(f"__st_e{k}_{j}")]
        parts.append([p for p, _ in checks])
    row = df.select(*projected).agg(*aggregates).collect()[0]
    count = int(row["__st_rows"])
    failures = []
    k_of = [k for k, rule in enumerate(rules.field_rules if rules else ()) if rule.name in columns]
    for k, checks in zip(k_of, parts, strict=True):
        for j, part in enumerate(checks):
            broken = int(row[f"__st_n{k}_{j}"] or 0)
            if broken:
                example = str(row[f"__st_e{k}_{j}"])
                example = example if len(example) <= 120 else example[:117] + "..."
                failures.append(f"field '{part.rule.name}' ({part.rule.type}) rule {part.text} — offending value "
                                f"{example} ({broken} of {count} rows)")
    return count, failures


def _message(failures: list[tuple[str | None, str]]) -> str:
    if len(failures) == 1:
        table, text = failures[0]
        return f"Assert rule failed on table {table}: {text}" if table is not None else f"Assert rule failed: {text}"
    parts, last = [], object()
    for table, text in failures:
        parts.append(f"on table {table}: {text}" if table != last and table is not None else text)
        last = table
    return f"{len(failures)} Assert rules failed: " + "; ".join(parts)


def prepare(ctx: Any, vertex: Any, data: dict) -> None:
    """Check every rule; raise :class:`AssertionFailed` naming each broken one (nothing to commit)."""
    from ..spi.errors import AssertionFailed, RuntimeConfigError
    from ..spi.rows import data_columns

    rules, issues = read_rules(vertex.config)
    errors = [f"{i.key}: {i.message}" for i in issues if i.severity == "error"]
    if errors or rules is None:
        raise RuntimeConfigError("; ".join(errors) or "no rules")
    missing = []
    for table, df in data.items():
        names = data_columns(df)
        for rule in (rules.for_table(table) or TableRules()).field_rules:
            if rule.name not in names:
                missing.append(f"field '{rule.name}' does not exist in table {table} (its fields: "
                               f"{', '.join(names)})")
    if missing:
        raise RuntimeConfigError("; ".join(missing))

    # A STREAMING micro-batch holds part of one table: row counts and the set of tables are checked
    # over the whole run by finish_stream.
    streaming = getattr(ctx, "batch_id", None) is not None
    # Catalog level, from the schema alone: field types and catalog_table_rule.
    failures: list[tuple[str | None, str]] = []
    for table, df in data.items():
        table_rules = rules.for_table(table) or TableRules()
        types = {f.name: f.dataType for f in df.schema.fields}
        for rule in table_rules.field_rules:
            if not type_matches(rule.type, types[rule.name]):
                failures.append((table, f"field '{rule.name}' rule field_type {rule.type} — the column is "
                                        f"{spark_type_name(types[rule.name])}"))
        if table_rules.catalog is not None:
            failures += [(table, text) for text in _catalog_failures(ctx, vertex, table, df, table_rules.catalog)]
    for path, table_rules in rules.tables.items():
        if path not in data and table_rules.catalog is not None and not streaming:
            failures.append((path, "catalog_table_rule: the input has no such table (its tables: "
                                   + ", ".join(data) + ")"))
    if failures:
        raise AssertionFailed(_message(failures))

    # Data level: one aggregate pass per table.
    counts: dict[str, int] = {}
    for table, df in data.items():
        table_rules = rules.for_table(table)
        counts[table], found = _scan(df, table_rules)
        failures += [(table, text) for text in found]
        for rule in table_rules.row_rules if table_rules and not streaming else ():
            if rule.broken_by(counts[table]):
                failures.append((table, f"row count {counts[table]} fails rule {rule.rule_type} "
                                        f"{_num(rule.rule_value)}"))
    for path, table_rules in rules.tables.items():
        if path in data or streaming:
            continue
        if table_rules.field_rules:
            log.warning("Assert: table %s of tables_configs is not among the input tables (%s): its field rules "
                        "check no rows", path, ", ".join(data))
        for rule in table_rules.row_rules:
            if rule.broken_by(0):
                failures.append((path, f"row count 0 fails rule {rule.rule_type} {_num(rule.rule_value)} "
                                       "(no such input table)"))
    if not streaming:
        failures += _table_names_failures(rules, counts)
    if failures:
        raise AssertionFailed(_message(failures))
    for table, n in counts.items():
        log.info("Assert: every rule held on table %s (%d rows)", table, n)
    return None


def _table_names_failures(rules: Any, counts: Mapping[str, int]) -> list[tuple[str | None, str]]:
    """``table-names`` against the tables that carried rows (``counts``: table -> rows)."""
    seen = sorted(t for t, n in counts.items() if n)
    if not rules.table_names or set(seen) == set(rules.table_names):
        return []
    return [(None, f"table-names [{', '.join(rules.table_names)}] is not equal to the tables that carried rows "
                   f"[{', '.join(seen)}]")]


def finish_stream(ctx: Any, vertex: Any, written: Mapping[str, int]) -> None:
    """STREAMING, at the end of a run: ``row_rules``, ``table-names`` and the tables of ``tables_configs``
    against the rows the run's micro-batches carried (``written``: table -> rows); the field and
    catalog rules were checked on every micro-batch."""
    from ..spi.errors import AssertionFailed

    rules, _ = read_rules(vertex.config)
    if rules is None:
        return
    failures: list[tuple[str | None, str]] = []
    for table, count in written.items():
        for rule in (rules.for_table(table) or TableRules()).row_rules:
            if rule.broken_by(count):
                failures.append((table, f"row count {count} over the run's micro-batches fails rule "
                                        f"{rule.rule_type} {_num(rule.rule_value)}"))
    for path, table_rules in rules.tables.items():
        if path in written:
            continue
        if table_rules.catalog is not None:
            failures.append((path, "catalog_table_rule: the input has no such table (its tables: "
                                   + ", ".join(written) + ")"))
        failures += [(path, f"row count 0 fails rule {rule.rule_type} {_num(rule.rule_value)} (no such input table)")
                     for rule in table_rules.row_rules if rule.broken_by(0)]
    failures += _table_names_failures(rules, written)
    if failures:
        raise AssertionFailed(_message(failures))
    for table, count in written.items():
        log.info("Assert: the run's rules held on table %s (%d rows over its micro-batches)", table, count)


class Assert(Connector, SchemaInference, Sink, StreamFinish):
    name = "Assert"
    kinds = frozenset({SINK})
    required = ("rules",)
    description = "Fails the pipeline when a row or field rule does not hold."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return check(plugin, job)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return schema(plugin, job, list(inputs))

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        return prepare(ctx, vertex, data)

    def finish_stream(self, ctx: RunContext, vertex: Vertex, written: Mapping[str, int]) -> None:
        return finish_stream(ctx, vertex, written)


CONNECTOR = Assert()
