"""Column lineage of a Sql transform, read from its query at compile time (sqlglot, no Spark).

For each output field, the input columns its value comes from (sqlglot's lineage through CTEs,
subqueries, joins and UNION branches), with OpenLineage's subtype: IDENTITY when every step
passes the column unchanged, AGGREGATION when one aggregates it (a window function too),
TRANSFORMATION otherwise; ``masking`` when a hash function hides it. And the input columns that
decide which rows come out: WHERE/HAVING (FILTER), join conditions (JOIN), GROUP BY, ORDER BY
(SORT), window partitions and orderings (WINDOW).

The query's tables are the transform's inputs as :mod:`.apply` points them: a table named as an
input, ``this`` for the first input, and with one input any name. Columns of a table that is not
an input of this pipeline (the other branch of a UNION split per input) are left out. A ``*`` is
expanded where the inputs' fields are known, else its columns are unknown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...spi import ColumnFlow, ColumnOrigin
from ...spi.contract import DIRECT_SUBTYPES
from .analysis import SqlSyntaxError, analyze_query, dialect, parse

#: functions whose result hides their input (OpenLineage's ``masking``)
MASKING = frozenset({"md5", "sha", "sha1", "sha2", "hash", "xxhash64", "crc32", "mask"})


def column_lineage(query: str, inputs: Mapping[str, Sequence[str] | None]) -> ColumnFlow | None:
    """The :class:`...spi.ColumnFlow` of ``query`` over ``inputs`` (input name -> its fields, None
    where unknown); None when the query does not parse or sqlglot cannot follow it."""
    from sqlglot.errors import SqlglotError

    try:
        tree = parse(query)
        tables = _pointing(analyze_query(query).tables, list(inputs))
        schema = {t: {f: "STRING" for f in inputs[name] or ()} for t, name in tables.items() if inputs.get(name)}
        qualified = _qualify(tree, schema)
        fields: dict[str, tuple[ColumnOrigin, ...]] = {}
        for name in qualified.named_selects:
            if name and name != "*":
                fields[name] = tuple(dict.fromkeys(_origins(name, qualified, schema, tables)))
        rows = tuple(dict.fromkeys(_row_origins(qualified, schema, tables)))
    except (SqlSyntaxError, SqlglotError, KeyError, ValueError, RecursionError):
        return None
    return ColumnFlow(fields=fields, rows=rows)


def _pointing(tables: Sequence[str], inputs: list[str]) -> dict[str, str]:
    """The query's table names (lower case) -> the input each reads."""
    by_lower = {n.lower(): n for n in inputs}
    out: dict[str, str] = {}
    for table in tables:
        low = table.lower()
        name = by_lower.get(low) or (inputs[0] if low == "this" and inputs else None)
        if name is None and len(inputs) == 1:
            name = inputs[0]
        if name is not None:
            out[low] = name
    return out


def _qualify(tree: Any, schema: Mapping[str, Mapping[str, str]]) -> Any:
    from sqlglot.optimizer.qualify import qualify

    return qualify(tree.copy(), schema=dict(schema) or None, dialect=dialect(), validate_qualify_columns=False,
                   identify=False, quote_identifiers=False)


def _origins(column: str, tree: Any, schema: Mapping[str, Any], tables: Mapping[str, str]) -> Iterator[ColumnOrigin]:
    """The input columns the output ``column`` of ``tree`` is computed from."""
    from sqlglot.lineage import lineage

    root = lineage(column, tree, schema=dict(schema), dialect=dialect())
    for path in _paths(root, []):
        leaf = path[-1]
        table = _leaf_table(leaf)
        if table is None or table.lower() not in tables:
            continue
        subtype, masking = _subtype(path[:-1])
        yield ColumnOrigin(tables[table.lower()], leaf.name.rsplit(".", 1)[-1], subtype, masking)


def _paths(node: Any, above: list[Any]) -> Iterator[list[Any]]:
    here = [*above, node]
    if not node.downstream:
        yield here
    for child in node.downstream:
        yield from _paths(child, here)


def _leaf_table(leaf: Any) -> str | None:
    from sqlglot import exp

    return leaf.source.name if isinstance(leaf.source, exp.Table) and leaf.source.name else None


def _subtype(steps: Sequence[Any]) -> tuple[str, bool]:
    """The subtype of a chain of projections (the strongest of its steps) and whether one masks."""
    from sqlglot import exp

    subtype, masking = "IDENTITY", False
    for step in steps:
        if isinstance(step.source, exp.SetOperation):
            continue  # a UNION's own node repeats its first branch's projection
        expression = step.expression.unalias() if isinstance(step.expression, exp.Alias) else step.expression
        if isinstance(expression, (exp.Column, exp.Table)):
            continue
        kind = "AGGREGATION" if expression.find(exp.AggFunc) is not None else "TRANSFORMATION"
        subtype = max(subtype, kind, key=DIRECT_SUBTYPES.index)
        masking = masking or any(_function_name(f) in MASKING for f in expression.find_all(exp.Func))
    return subtype, masking


def _function_name(node: Any) -> str:
    from sqlglot import exp

    return str(node.this if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _row_origins(tree: Any, schema: Mapping[str, Any], tables: Mapping[str, str]) -> Iterator[ColumnOrigin]:
    """The input columns that decide which rows come out, from every SELECT of the query."""
    from sqlglot import exp
    from sqlglot.optimizer.scope import traverse_scope

    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        clauses = [("FILTER", select.args.get("where")), ("FILTER", select.args.get("having")),
                   ("GROUP_BY", select.args.get("group")), ("SORT", select.args.get("order"))]
        clauses += [("JOIN", j.args.get("on")) for j in select.args.get("joins") or []]
        clauses += [("WINDOW", w) for w in select.find_all(exp.Window)]
        for subtype, clause in clauses:
            if clause is None:
                continue
            for col in clause.find_all(exp.Column):
                if isinstance(clause, exp.Window) and col.parent is clause.this:
                    continue  # the windowed value itself: a direct origin, not which rows
                yield from _resolve(col, scope, schema, tables, subtype)


def _resolve(col: Any, scope: Any, schema: Mapping[str, Any], tables: Mapping[str, str],
             subtype: str) -> Iterator[ColumnOrigin]:
    """Where a column of a SELECT's clause comes from: an input's column, through derived tables."""
    from sqlglot import exp

    source = scope.sources.get(col.table)
    if not col.table and col.name in scope.expression.named_selects:  # an output column (ORDER BY alias)
        for origin in _origins(col.name, scope.expression, schema, tables):
            yield ColumnOrigin(origin.input, origin.field, subtype)
        return
    if isinstance(source, exp.Table):
        if source.name.lower() in tables:
            yield ColumnOrigin(tables[source.name.lower()], col.name, subtype)
        return
    if source is None or not hasattr(source, "expression"):
        return
    for origin in _origins(col.name, source.expression, schema, tables):
        yield ColumnOrigin(origin.input, origin.field, subtype)
