"""Assert's checks of the data a sink receives (a BATCH run, or one micro-batch of a STREAMING run).

Type and catalog rules are decided from the DataFrame's schema before any data is read. Then
each table is checked in ONE aggregate pass: the row count and, for every field rule, how many
rows break each of its parts (the first broken part of a row counts, as SeaTunnel stops at a
row's first failure) with the first offending value. Nothing is collected but that one
aggregate row. All broken rules are reported at once. In a micro-batch, row counts and the set
of tables are left to the end of the stream (:mod:`.streaming`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.rows import data_columns, quote
from ...spi.schema import DataType, table_keys
from .expressions import display, spark_type_name, type_matches, type_ok, value_fails
from .rules import CatalogRule, FieldRule, Rules, TableRules, ValueRule
from .values import convert_expected, num_text, show

log = logging.getLogger("seatunnel.assert")

#: (table, or None for the whole input; what broke)
Failure = tuple[str | None, str]


def _columns_text(columns: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{n} {t}" for n, t in columns) + "]"


def _catalog_failures(ctx: RunContext, vertex: Vertex, table: str, df: Any, rule: CatalogRule) -> list[str]:
    """Broken ``catalog_table_rule`` parts, decided from the DataFrame's schema and the plan."""
    out = _key_failures(vertex, table, rule, df)
    if rule.columns is not None:
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
                    why.append(f"{c.name} has {attr} {show(f.metadata.get(attr, default))}, not "
                               f"{show(c.explicit[attr])}")
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


def _key_failures(vertex: Vertex, table: str, rule: CatalogRule, df: Any) -> list[str]:
    """Broken ``primary_key_rule`` / ``constraint_key_rule`` parts: the key must exist; its name equal and its
    columns the same (in any order); the constraint keys the same collection (in any order)."""
    keys = table_keys(vertex, table, df)
    out = []
    pk, want = keys.primary_key, rule.primary_key
    if want is not None and pk is None:
        out.append("catalog_table_rule primary_key_rule: primaryKey is null (the input table declares no primary key)")
    elif want is not None and pk is not None:
        if want.get("name") is not None and want["name"] != pk[0]:
            out.append(f"catalog_table_rule primary_key_rule: primaryKey: {pk[0]} is not equal to {want['name']}")
        elif want.get("columns") and sorted(want["columns"]) != sorted(pk[1]):
            out.append(f"catalog_table_rule primary_key_rule: primaryKey columns: [{', '.join(pk[1])}] is not "
                       f"equal to [{', '.join(want['columns'])}]")
    if rule.constraint_keys is not None:
        if not keys.constraint_keys:
            out.append("catalog_table_rule constraint_key_rule: constraintKeys is null (the input table declares "
                       "no constraint keys)")
        else:
            actual = sorted(_key_text(k.name, k.type, k.columns) for k in keys.constraint_keys)
            wanted = sorted(_key_text(k.get("name"), k.get("type"), k.get("columns", ())) for k in rule.constraint_keys)
            if rule.constraint_keys and actual != wanted:
                out.append(f"catalog_table_rule constraint_key_rule: constraintKeys: [{', '.join(actual)}] is not "
                           f"equal to [{', '.join(wanted)}]")
    return out


def _key_text(name: Any, ctype: Any, columns: Any) -> str:
    cols = ", ".join(f"{c} {(s or 'ASC').upper()}" for c, s in columns)
    return f"{name} {ctype}({cols})"


def _upstream_sources(ctx: RunContext, vertex: Vertex) -> set[str]:
    """The plugin names of the sources feeding ``vertex`` (a table's catalog is its source plugin)."""
    pipeline = getattr(ctx, "pipeline", None)
    if pipeline is None:
        return set()
    by_id = {v.id: v for v in pipeline.vertices}
    seen: set[str] = set()
    found: set[str] = set()
    todo = [vertex.id]
    while todo:
        vid = todo.pop()
        for a, b in getattr(pipeline, "edges", ()):
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

    columns = set(data_columns(df))
    types = {f.name: f.dataType for f in df.schema.fields}
    projected = [F.monotonically_increasing_id().alias("__st_pos")]
    aggregates = [F.count(F.lit(1)).alias("__st_rows")]
    parts: list[list[_Part]] = []
    for k, rule in enumerate(rules.field_rules if rules else ()):
        if rule.name not in columns:
            continue
        col, actual = F.col(quote(rule.name)), types[rule.name]
        checks = [(_Part(rule, f"field_type {rule.type}"), ~F.coalesce(type_ok(col, rule.type, actual), F.lit(False)))]
        checks += [(_Part(rule, _describe(v, rule.type, actual)), value_fails(col, v, rule.type, actual))
                   for v in rule.values]
        first = F.lit(None).cast("int")
        for j, (_, fails) in reversed(list(enumerate(checks))):
            first = F.when(fails, F.lit(j)).otherwise(first)
        projected += [first.alias(f"__st_f{k}"), display(col, actual).alias(f"__st_v{k}")]
        for j in range(len(checks)):
            hit = F.col(f"__st_f{k}") == j
            aggregates += [F.count_if(hit).alias(f"__st_n{k}_{j}"),
                           F.min_by(F.col(f"__st_v{k}"), F.when(hit, F.col("__st_pos"))).alias(f"__st_e{k}_{j}")]
        parts.append([p for p, _ in checks])
    row = df.select(*projected).agg(*aggregates).collect()[0]
    count = int(row["__st_rows"])
    failures = []
    k_of = [k for k, rule in enumerate(rules.field_rules if rules else ()) if rule.name in columns]
    for k, rule_parts in zip(k_of, parts, strict=True):
        for j, part in enumerate(rule_parts):
            broken = int(row[f"__st_n{k}_{j}"] or 0)
            if broken:
                example = str(row[f"__st_e{k}_{j}"])
                example = example if len(example) <= 120 else example[:117] + "..."
                failures.append(f"field '{part.rule.name}' ({part.rule.type}) rule {part.text} — offending value "
                                f"{example} ({broken} of {count} rows)")
    return count, failures


def message(failures: list[Failure]) -> str:
    """The text of an :class:`AssertionFailed`: every broken rule, by table."""
    if len(failures) == 1:
        table, text = failures[0]
        return f"Assert rule failed on table {table}: {text}" if table is not None else f"Assert rule failed: {text}"
    parts: list[str] = []
    last: object = object()
    for table, text in failures:
        parts.append(f"on table {table}: {text}" if table != last and table is not None else text)
        last = table
    return f"{len(failures)} Assert rules failed: " + "; ".join(parts)



def missing_fields(rules: Rules, data: Mapping[str, Any]) -> list[str]:
    """The field rules naming a field their table does not have (a config error, not a broken rule)."""
    missing = []
    for table, df in data.items():
        names = data_columns(df)
        for rule in (rules.for_table(table) or TableRules()).field_rules:
            if rule.name not in names:
                missing.append(f"field '{rule.name}' does not exist in table {table} (its fields: "
                               f"{', '.join(names)})")
    return missing


def schema_failures(ctx: RunContext, vertex: Vertex, rules: Rules, data: Mapping[str, Any],
                    streaming: bool) -> list[Failure]:
    """The rules decided from the schemas alone: field types and ``catalog_table_rule``."""
    failures: list[Failure] = []
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
    return failures


def data_failures(rules: Rules, data: Mapping[str, Any], streaming: bool) -> tuple[dict[str, int], list[Failure]]:
    """One aggregate pass per table: the rows of each table, and the field rules (and, in BATCH, the row
    rules and ``table-names``) they break."""
    counts: dict[str, int] = {}
    failures: list[Failure] = []
    for table, df in data.items():
        table_rules = rules.for_table(table)
        counts[table], found = _scan(df, table_rules)
        failures += [(table, text) for text in found]
        for row_rule in table_rules.row_rules if table_rules and not streaming else ():
            if row_rule.broken_by(counts[table]):
                failures.append((table, f"row count {counts[table]} fails rule {row_rule.rule_type} "
                                        f"{num_text(row_rule.rule_value)}"))
    for path, table_rules in rules.tables.items():
        if path in data or streaming:
            continue
        if table_rules.field_rules:
            log.warning("Assert: table %s of tables_configs is not among the input tables (%s): its field rules "
                        "check no rows", path, ", ".join(data))
        for row_rule in table_rules.row_rules:
            if row_rule.broken_by(0):
                failures.append((path, f"row count 0 fails rule {row_rule.rule_type} "
                                       f"{num_text(row_rule.rule_value)} (no such input table)"))
    if not streaming:
        failures += table_names_failures(rules, counts)
    return counts, failures


def table_names_failures(rules: Rules, counts: Mapping[str, int]) -> list[Failure]:
    """``table-names`` against the tables that carried rows (``counts``: table -> rows)."""
    seen = sorted(t for t, n in counts.items() if n)
    if not rules.table_names or set(seen) == set(rules.table_names):
        return []
    return [(None, f"table-names [{', '.join(rules.table_names)}] is not equal to the tables that carried rows "
                   f"[{', '.join(seen)}]")]
