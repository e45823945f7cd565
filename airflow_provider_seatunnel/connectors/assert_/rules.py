"""Assert's rules, read from the options (pure Python: used at compile time and at run time).

``rules`` holds ``row_rules`` (MIN_ROW / MAX_ROW on the total row count, every row kind counted),
``field_rules`` (per field: a ``field_type`` and ``field_value`` rules NULL, NOT_NULL, MIN, MAX,
MIN_LENGTH, MAX_LENGTH and ``equals_to``), ``catalog_table_rule`` (columns, table identifier,
keys), ``table-names`` (the set of tables that carried rows) and ``tables_configs`` (the same rules
per ``table_path``; the top-level rules are then ignored). Rule types are matched exactly, as
SeaTunnel matches them. Reading collects every issue: errors fail the job, warnings say what
SeaTunnel would silently ignore.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi.options import MISSING, JobConfig, PluginConfig, Problem, lookup
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import DataType, Schema, TypeError_, parse_type
from .values import convert_expected, num_text, show

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
            parts.append(self.rule_type + (f" {num_text(self.rule_value)}" if self.rule_type in _NEEDS_VALUE else ""))
        if self.has_equals:
            parts.append(f"equals_to {show(self.equals_to)}")
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
        self.error(key, f"must be an object {{ ... }}, found {show(value)}")
        return None

    def objects(self, value: Any, key: str) -> list[tuple[str, Mapping[str, Any]]]:
        """The objects of a list option, each with its path; problems for anything else."""
        if not isinstance(value, list):
            self.error(key, f"must be a list of objects [{{ ... }}], found {show(value)}")
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
        self.error(f"{key}.{name}", "is required" if value is None else f"must be a string, found {show(value)}")
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
        self.error(key, f"unknown rule_type {show(value)}", hint)
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
        r.error(key, f"must be a type string or a row object, found {show(value)}")
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
            r.error(f"{where}.rule_value", f"{kind} needs a numeric rule_value, found {show(item.get('rule_value'))}")
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
                        f"{show(item.get('rule_value'))}")
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
    primary = (_read_primary_key(r, obj["primary_key_rule"], f"{key}.primary_key_rule")
               if "primary_key_rule" in obj else None)
    constraints = (_read_constraint_keys(r, obj["constraint_key_rule"], f"{key}.constraint_key_rule")
                   if "constraint_key_rule" in obj else None)
    columns = _read_column_rules(r, obj["column_rule"], f"{key}.column_rule") if "column_rule" in obj else None
    identifier = (_read_identifier(r, obj["table_identifier_rule"], f"{key}.table_identifier_rule")
                  if "table_identifier_rule" in obj else None)
    return CatalogRule(primary, constraints, columns, identifier)


def _read_primary_key(r: _Reader, value: Any, where: str) -> Mapping[str, Any] | None:
    pk = r.obj(value, where)
    if pk is None:
        return None
    name = r.string(pk, "primary_key_name", where)
    cols = pk.get("primary_key_columns")
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        r.error(f"{where}.primary_key_columns", "must be a list of column names")
        return None
    return {"name": name, "columns": tuple(cols)} if name is not None else None


def _read_constraint_keys(r: _Reader, value: Any, key: str) -> tuple[Mapping[str, Any], ...]:
    keys = []
    for where, item in r.objects(value, key):
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
    return tuple(keys)


def _read_column_rules(r: _Reader, value: Any, key: str) -> tuple[ColumnRule, ...]:
    out = []
    for where, item in r.objects(value, key):
        r.unknown_keys(item, _COLUMN_KEYS, where)
        name = r.string(item, "name", where)
        ctype = _read_type(r, item.get("type"), f"{where}.type")
        explicit = {k: item[k] for k in ("column_length", "nullable", "default_value", "comment") if k in item}
        if "nullable" in explicit and not isinstance(explicit["nullable"], bool):
            r.error(f"{where}.nullable", f"must be true or false, found {show(explicit['nullable'])}")
        if "column_length" in explicit and (isinstance(explicit["column_length"], bool)
                                            or not isinstance(explicit["column_length"], int)):
            r.error(f"{where}.column_length", f"must be an integer, found {show(explicit['column_length'])}")
        if name is not None and ctype is not None:
            out.append(ColumnRule(name, ctype, explicit))
    return tuple(out)


def _read_identifier(r: _Reader, value: Any, where: str) -> tuple[str, str] | None:
    ident = r.obj(value, where)
    if ident is None:
        return None
    catalog = r.string(ident, "catalog_name", where)
    table = r.string(ident, "table", where)
    if table is not None and len(table.split(".")) > 3:
        r.error(f"{where}.table", f"cannot split '{table}' into database, schema and table")
        return None
    return (catalog, table) if catalog is not None and table is not None else None


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
            r.error("rules.table-names", f"must be a list of table names, found {show(value)}")
    every: TableRules | None = None
    tables: dict[str, TableRules] = {}
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
# Compile time
# --------------------------------------------------------------------------------------


#: the one option; its value is read by :func:`read_rules`, which words every problem of the rules
SPEC = OptionSpec((
    Option("rules", "any", required=True, description="The rules: row_rules, field_rules, catalog_table_rule, "
           "table-names, or tables_configs (one entry of these per table_path)."),
))


def _problems(plugin: PluginConfig, job: JobConfig, issues: list[Issue], severity: str) -> list[Problem]:
    return [job.problem(i.message, plugin, key=i.key, hint=i.hint, severity=i.severity)
            for i in issues if (i.severity == "error") == (severity == "error")]


def rule_problems(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Errors in the rules (the warnings come from :func:`schema_problems`, kept as warnings)."""
    if not plugin.has("rules"):
        return []  # the required-option check reports it
    _, issues = read_rules(plugin.options)
    return _problems(plugin, job, issues, "error")


def _compatible(declared: DataType | None, actual: DataType | None) -> bool:
    """Whether a declared field_type can hold for a compile-time input type."""
    if declared is None or actual is None:
        return declared is actual
    if declared.name == "null":
        return True
    if declared.storage is not declared or actual.storage is not actual:  # a vector holds its values' type
        return _compatible(declared.storage, actual.storage) if declared.name != actual.name else True
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


def schema_problems(plugin: PluginConfig, job: JobConfig, inputs: list[Schema | None]) -> list[Problem]:
    """The rules' warnings, and a problem for each field rule naming a field the input does not have
    (or one whose type cannot hold), when every input has the same known schema."""
    rules, issues = read_rules(plugin.options)
    problems = _problems(plugin, job, issues, "warning")
    known = inputs[0] if inputs and all(s is not None and s == inputs[0] for s in inputs) else None
    if rules is None or rules.every_table is None or known is None:
        return problems
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
    return problems
