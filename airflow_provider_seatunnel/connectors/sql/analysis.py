"""A Sql transform's query at compile time (sqlglot, no Spark): parsing and classifying it.

The query is parsed with Spark's sqlglot dialect, extended to read SeaTunnel's forms (its functions
as plain calls, ``TRIM(s, chars)``, ``CAST(x AS BYTES)``), to report syntax errors, to list the
tables it reads (CTE names excluded), and to decide whether a multi-input Sql can be split per
input: a row-wise query or a UNION of one-input branches can; a join or an aggregation across
inputs cannot.

sqlglot is imported when a query is first parsed, not with this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

#: How deep a query's parentheses may nest as written, and its parsed tree (where a chain such as
#: ``a + b + c`` nests one level per operator): deeper, a located syntax error, never a RecursionError
#: from the parser or from what walks the tree.
MAX_PARENTHESES = 32
MAX_EXPRESSION_DEPTH = 128

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


@lru_cache(maxsize=1)
def dialect() -> Any:
    """Spark's sqlglot dialect, reading SeaTunnel's forms: its functions as plain calls (any
    arity, rewritten later), ``TRIM(s, chars)`` in SeaTunnel's order, ``CAST(x AS BYTES)``, a bare
    ``CURRENT_TIME`` as ``CURRENT_TIME()`` (as bare ``CURRENT_DATE`` and ``CURRENT_TIMESTAMP``), and string
    literals as SeaTunnel reads them (``''`` is a quote, a backslash is itself: ``'\\d'`` is the regex
    ``\\d``). Print the rewritten tree with Spark's own dialect, which escapes them for Spark."""
    from sqlglot import exp
    from sqlglot.dialects.spark import Spark
    from sqlglot.tokens import TokenType

    from .functions import SEATUNNEL_FUNCTIONS

    def call(name: str) -> Callable[[list], Any]:
        return lambda args: exp.Anonymous(this=name, expressions=args)

    spark: Any = Spark  # sqlglot types its dialect's inner classes as variables

    class SeaTunnelSpark(spark):
        class Tokenizer(spark.Tokenizer):
            KEYWORDS: ClassVar[dict] = {**spark.Tokenizer.KEYWORDS, "BYTES": TokenType.VARBINARY}
            STRING_ESCAPES: ClassVar[list] = ["'"]  # SeaTunnel's literals: a backslash is a backslash

        class Parser(spark.Parser):
            TRIM_PATTERN_FIRST = False
            NO_PAREN_FUNCTIONS: ClassVar[dict] = {**spark.Parser.NO_PAREN_FUNCTIONS,
                                                  TokenType.CURRENT_TIME: exp.CurrentTime}
            FUNCTIONS: ClassVar[dict] = {**spark.Parser.FUNCTIONS, **{name: call(name) for name in SEATUNNEL_FUNCTIONS}}

    return SeaTunnelSpark


@lru_cache(maxsize=4096)
def parse(query: str) -> Any:
    """The query's sqlglot tree (cached: copy it before changing it). Raises :class:`SqlSyntaxError`
    for SQL that does not parse as one query."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    _check_parentheses(query)
    try:
        statements = [s for s in sqlglot.parse(query, read=dialect()) if s is not None]
    except RecursionError:
        raise SqlSyntaxError("the query nests too deep to read: simplify it") from None
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
    if tree_depth(tree) > MAX_EXPRESSION_DEPTH:
        raise SqlSyntaxError(f"the query's expressions nest deeper than {MAX_EXPRESSION_DEPTH} levels (a long chain "
                             "such as a + b + c + ... nests one level per operator): simplify it, or split it into "
                             "several Sql transforms")
    return tree


def _check_parentheses(query: str) -> None:
    """A syntax error where parentheses (outside quotes) open more than :data:`MAX_PARENTHESES` deep."""
    depth, quote, line, col = 0, "", 1, 0
    for c in query:
        col += 1
        if c == "\n":
            line, col = line + 1, 0
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"`":
            quote = c
        elif c == "(":
            depth += 1
            if depth > MAX_PARENTHESES:
                raise SqlSyntaxError(f"parentheses nest deeper than {MAX_PARENTHESES} levels", line, col)
        elif c == ")":
            depth -= 1


def tree_depth(node: Any) -> int:
    """How deep a sqlglot tree nests (walked without recursion)."""
    from sqlglot import exp

    deepest, stack = 0, [(node, 1)]
    while stack:
        n, depth = stack.pop()
        deepest = max(deepest, depth)
        for value in n.args.values():
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, exp.Expression):
                    stack.append((child, depth + 1))
    return deepest


def arg(node: Any, name: str) -> Any:
    """``node.args[name]`` across sqlglot versions (newer ones spell ``from_``, ``with_``, ``except_``)."""
    return node.args.get(name + "_", node.args.get(name))


def arg_key(cls: Any, name: str) -> str:
    """The key ``cls`` stores the argument ``name`` under (``except_`` or ``except``)."""
    return name + "_" if name + "_" in cls.arg_types else name


def ctes(node: Any) -> list[Any]:
    """The CTEs of the WITH clause of ``node`` (none without one)."""
    with_ = arg(node, "with")
    return list(with_.expressions) if with_ is not None else []


def select_sources(select: Any) -> list[Any]:
    """What a SELECT reads: its FROM and each JOIN's table or subquery, in order."""
    from_ = arg(select, "from")
    return ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]


def analyze_query(query: str, inputs: Sequence[str] = ()) -> SqlAnalysis:
    """Parse ``query`` and classify it against ``inputs`` (the transform's input names).

    Raises :class:`SqlSyntaxError` for SQL that does not parse as one statement.
    Results are cached by query text and inputs, so asking again is cheap.
    """
    return _analyze(query, tuple(inputs))


def _tables(tree: Any) -> tuple[str, ...]:
    """The tables ``tree`` reads, in order of appearance, CTE names excluded."""
    from sqlglot import exp

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables: list[str] = []
    for table in tree.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name not in tables:
            tables.append(name)
    return tuple(tables)


def _row_wise_problem(select: Any, known: set[str]) -> str:
    """Why ``select`` does not read one input row by row (empty when it does); ``known`` are the
    lower-cased input names."""
    from sqlglot import exp

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
    if len({t.name.lower() for t in select.find_all(exp.Table) if t.name.lower() in known}) > 1:
        return "a query reading several inputs"
    return ""


def _union(tree: Any, tables: tuple[str, ...], known: set[str]) -> SqlAnalysis:
    """A set operation: a UNION [ALL] whose branches each read one input row by row, or combining."""
    from sqlglot import exp

    if not isinstance(tree, exp.Union):
        return SqlAnalysis(tables, COMBINING, f"{tree.key.upper()} compares rows across inputs")
    leaves: list[Any] = []
    distinct = False
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Union):
            if node.args.get("limit"):
                return SqlAnalysis(tables, COMBINING, "a LIMIT over the union of inputs")
            distinct = distinct or bool(node.args.get("distinct"))
            stack.extend([node.right, node.left])
        elif isinstance(node, exp.SetOperation):
            return SqlAnalysis(tables, COMBINING, f"{node.key.upper()} compares rows across inputs")
        else:
            leaves.append(node.this if isinstance(node, exp.Subquery) else node)
    for leaf in leaves:
        problem = _row_wise_problem(leaf, known)
        if problem:
            return SqlAnalysis(tables, COMBINING, f"{problem} inside the UNION")
    return SqlAnalysis(tables, UNION, union_distinct=distinct)


@lru_cache(maxsize=4096)
def _analyze(query: str, inputs: tuple[str, ...]) -> SqlAnalysis:
    from sqlglot import exp

    tree = parse(query)
    tables = _tables(tree)
    if len(inputs) < 2:
        return SqlAnalysis(tables, ROW_WISE)
    known = {i.lower() for i in inputs} | {"this"}
    if isinstance(tree, exp.SetOperation):
        return _union(tree, tables, known)
    problem = _row_wise_problem(tree, known)
    if problem:
        return SqlAnalysis(tables, COMBINING, f"{problem} across its inputs")
    return SqlAnalysis(tables, ROW_WISE)
