"""Sql transform: a Spark SQL query over the transform's input(s).

At compile time the query is parsed with sqlglot (Spark dialect) to report syntax
errors, to list the tables it reads, and to decide whether a multi-input Sql can be
split per input (a row-wise query or a UNION of one-input branches can; a join or an
aggregation across inputs cannot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .base import TRANSFORM, Connector

if TYPE_CHECKING:
    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig

#: How a Sql transform treats its inputs.
ROW_WISE = "row-wise"  # one table read, row by row: SeaTunnel's own Sql semantics
UNION = "union"  # a UNION [ALL] of branches that each read one input row by row
COMBINING = "combining"  # joins or aggregates across rows/inputs: cannot be split per input


@dataclass(frozen=True)
class SqlAnalysis:
    tables: tuple[str, ...]  # tables the query reads, in order, CTE names excluded
    mode: str
    reason: str = ""
    union_distinct: bool = False


class SqlSyntaxError(ValueError):
    def __init__(self, message: str, line: int | None = None, col: int | None = None):
        super().__init__(message)
        self.line, self.col = line, col


@lru_cache(maxsize=4096)
def _parse(query: str) -> Any:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    try:
        statements = [s for s in sqlglot.parse(query, read="spark") if s is not None]
    except ParseError as e:
        info = e.errors[0] if e.errors else {}
        message = info.get("description") or str(e).splitlines()[0]
        if info.get("highlight"):
            message += f" near '{info['highlight']}'"
        raise SqlSyntaxError(message, info.get("line"), info.get("col")) from None
    except TokenError as e:
        raise SqlSyntaxError(str(e)) from None
    if len(statements) != 1:
        raise SqlSyntaxError(f"expected one SELECT statement, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise SqlSyntaxError(f"only a query (SELECT) is allowed, found {tree.key.upper()}")
    return tree


def analyze_query(query: str, inputs: Sequence[str] = ()) -> SqlAnalysis:
    """Parse ``query`` and classify it against ``inputs`` (the transform's input names).

    Raises :class:`SqlSyntaxError` for SQL that does not parse as one statement.
    Results are cached by query text and inputs, so asking again is cheap.
    """
    return _analyze(query, tuple(inputs))


@lru_cache(maxsize=4096)
def _analyze(query: str, inputs: tuple[str, ...]) -> SqlAnalysis:
    from sqlglot import exp

    tree = _parse(query)

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables: list[str] = []
    for table in tree.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name not in tables:
            tables.append(name)
    known = {i.lower() for i in inputs} | {"this"}

    def inputs_read(node: exp.Expression) -> set[str]:
        return {t.name.lower() for t in node.find_all(exp.Table) if t.name.lower() in known}

    def row_wise_problem(select: exp.Expression) -> str:
        if not isinstance(select, exp.Select):
            return "a nested set operation"
        if select.args.get("joins"):
            return "a JOIN"
        if select.args.get("group") or select.find(exp.AggFunc):
            return "an aggregation"
        if select.find(exp.Window):
            return "a window function"
        if select.args.get("distinct"):
            return "SELECT DISTINCT"
        if select.args.get("limit"):
            return "a LIMIT"
        if len(inputs_read(select)) > 1:
            return "a query reading several inputs"
        return ""

    if len(inputs) < 2:
        return SqlAnalysis(tuple(tables), ROW_WISE)

    if isinstance(tree, exp.SetOperation):
        if not isinstance(tree, exp.Union):
            return SqlAnalysis(tuple(tables), COMBINING, f"{tree.key.upper()} compares rows across inputs")
        leaves: list[exp.Expression] = []
        distinct = False
        stack: list[exp.Expression] = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, exp.Union):
                if node.args.get("limit"):
                    return SqlAnalysis(tuple(tables), COMBINING, "a LIMIT over the union of inputs")
                distinct = distinct or bool(node.args.get("distinct"))
                stack.extend([node.right, node.left])
            elif isinstance(node, exp.SetOperation):
                return SqlAnalysis(tuple(tables), COMBINING, f"{node.key.upper()} compares rows across inputs")
            else:
                leaves.append(node.this if isinstance(node, exp.Subquery) else node)
        for leaf in leaves:
            problem = row_wise_problem(leaf)
            if problem:
                return SqlAnalysis(tuple(tables), COMBINING, f"{problem} inside the UNION")
        return SqlAnalysis(tuple(tables), UNION, union_distinct=distinct)

    problem = row_wise_problem(tree)
    if problem:
        return SqlAnalysis(tuple(tables), COMBINING, f"{problem} across its inputs")
    return SqlAnalysis(tuple(tables), ROW_WISE)


def _check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    query = plugin.get("query")
    if query is None:
        return []  # reported as a missing required option
    if not isinstance(query, str) or not query.strip():
        return [job.problem("the query must be a non-empty SQL string", plugin, key="query")]
    try:
        analyze_query(query)
    except SqlSyntaxError as e:
        p = job.problem(f"SQL syntax error: {e}", plugin, key="query",
                        hint="the query is Spark SQL; fix it and run validate again")
        if e.line is not None and p.line is not None:
            from dataclasses import replace

            p = replace(p, line=p.line + e.line - 1, col=e.col)
        return [p]
    return []


CONNECTOR = Connector(
    name="Sql",
    kinds=frozenset({TRANSFORM}),
    required=("query",),
    check=_check,
    description="Runs a Spark SQL query over its input(s).",
)
