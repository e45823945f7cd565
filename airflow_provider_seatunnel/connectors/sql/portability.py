"""What a Sql transform's query uses that SeaTunnel 2.3.8's Sql transform refuses (compile time, no Spark).

This Sql transform runs Spark SQL with SeaTunnel's functions added; SeaTunnel's own runs a smaller
language: one plain SELECT over its one input, row by row, with its own function table. A query
that uses more runs here but fails on SeaTunnel, so each use is a *not portable* problem
(:func:`~...spi.portability.not_portable`: a warning, an error under strict), located at the query's
line and saying what to write instead. The classes, each a table below:

* **functions** called by a name SeaTunnel 2.3.8 does not know (:data:`ZETA_FUNCTIONS`, its function
  table with every alias, its ``CURRENT_*`` keys and its two DES functions): Spark's functions
  (``DAYOFMONTH``, ``DATE_FORMAT``, aggregates) and those SeaTunnel added later (``UUID``,
  ``MULTI_IF``); :data:`SEATUNNEL_NAMES` gives SeaTunnel's name where it has one;
* **EXTRACT fields** beyond :data:`ZETA_EXTRACT_FIELDS` and **CAST types** beyond :data:`ZETA_CAST_TYPES`;
* **query shapes** (:data:`REFUSED_CLAUSES`): joins, GROUP BY, ORDER BY, LIMIT/OFFSET, set operations,
  a table alias, a schema-qualified table or a subquery in FROM, subqueries in expressions; and what
  SeaTunnel ignores, running the query differently: DISTINCT (it keeps the duplicates), WITH (it runs
  the outer SELECT over its input);
* **WHERE conditions** other than comparisons, IS [NOT] NULL, [NOT] IN (a list), [NOT] LIKE, function
  calls, AND, OR and parentheses (SeaTunnel's filter knows no others: BETWEEN, NOT, RLIKE, a bare
  boolean column);
* **conditions in the SELECT list** (a comparison, IS, IN, LIKE, BETWEEN, NOT, AND, OR as a value):
  SeaTunnel 2.3.8 evaluates conditions only in WHERE and in a CASE's WHEN ("Unsupported SQL
  Expression");
* **the literals TRUE and FALSE**, which SeaTunnel 2.3.8 reads as a column name ("can't find field
  [true]"), a SeaTunnel bug: they run here;
* **a BOOLEAN column compared with a string** (:func:`compared_with_text`, where the input schema is
  known): SeaTunnel finds them never equal, Spark reads the string as a boolean.

A query that does not parse is reported by the syntax check; nothing here runs on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...spi.portability import not_portable
from .analysis import SqlSyntaxError, arg, dialect, parse

if TYPE_CHECKING:
    from ...spi.options import JobConfig, PluginConfig, Problem
    from ...spi.schema import DataType

__all__ = ["REFUSED_CLAUSES", "SEATUNNEL_NAMES", "ZETA_CAST_TYPES", "ZETA_EXTRACT_FIELDS", "ZETA_FUNCTIONS",
           "Finding", "at_query_line", "compared_with_text", "findings", "located", "problems"]

#: the functions SeaTunnel 2.3.8's Sql transform calls by name (upper case): its function table with
#: every alias, the CURRENT_* keys it reads with or without parentheses, and its DES functions


def _names(text: str) -> frozenset[str]:
    """The names in ``text``, separated by white space."""
    return frozenset(text.split())


ZETA_FUNCTIONS = _names("""
ASCII BIT_LENGTH CHAR_LENGTH LENGTH OCTET_LENGTH CHAR CHR CONCAT CONCAT_WS HEXTORAW RAWTOHEX INSERT LOWER LCASE
UPPER UCASE LEFT RIGHT LOCATE INSTR POSITION LPAD RPAD LTRIM RTRIM TRIM REGEXP_REPLACE REGEXP_LIKE REGEXP_SUBSTR
REPEAT REPLACE SOUNDEX SPACE SUBSTRING SUBSTR TO_CHAR TRANSLATE
ABS ACOS ASIN ATAN COS COSH COT SIN SINH TAN TANH ATAN2 MOD CEIL CEILING EXP FLOOR LN LOG LOG10 RADIANS SQRT PI
POWER RAND RANDOM ROUND SIGN TRUNC TRUNCATE
CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP NOW DATEADD TIMESTAMPADD DATEDIFF DATE_TRUNC DAYNAME DAY_OF_MONTH
DAY_OF_WEEK DAY_OF_YEAR EXTRACT FORMATDATETIME HOUR MINUTE MONTH MONTHNAME PARSEDATETIME TO_DATE IS_DATE QUARTER
SECOND WEEK YEAR FROM_UNIXTIME
COALESCE IFNULL NULLIF CAST DES_ENCRYPT DES_DECRYPT
""")

#: the fields SeaTunnel 2.3.8's EXTRACT reads
ZETA_EXTRACT_FIELDS = _names("YEAR MONTH DAY HOUR MINUTE SECOND MILLISECOND DAYOFWEEK DAYOFYEAR")

#: the types SeaTunnel 2.3.8's CAST converts to (its CAST table also names BYTE, but its SQL parser refuses the
#: word there: "SQL parse failed")
ZETA_CAST_TYPES = _names("DECIMAL VARCHAR STRING INT INTEGER BIGINT LONG BYTES DOUBLE FLOAT TIMESTAMP DATETIME "
                         "DATE TIME")

#: SeaTunnel's name for a function it knows under another name (what the hint suggests)
SEATUNNEL_NAMES = {
    "DAYOFMONTH": "DAY_OF_MONTH", "DAY": "DAY_OF_MONTH", "DAYOFYEAR": "DAY_OF_YEAR",
    "DAYOFWEEK": "DAY_OF_WEEK (it counts from Monday = 1, Spark's DAYOFWEEK from Sunday = 1)",
    "WEEKOFYEAR": "WEEK", "DATE_FORMAT": "FORMATDATETIME", "NVL": "IFNULL", "POW": "POWER",
    "CHARACTER_LENGTH": "CHAR_LENGTH", "TO_TIMESTAMP": "PARSEDATETIME", "DATE_ADD": "DATEADD",
    "TIMESTAMPDIFF": "DATEDIFF", "IF": "CASE WHEN ... THEN ... ELSE ... END",
    "MULTI_IF": "CASE WHEN ... THEN ... ELSE ... END", "LOCALTIMESTAMP": "NOW()", "DATE_PART": "EXTRACT",
}

#: what SeaTunnel's Sql transform adds in releases after 2.3.8 that this one runs already
LATER = frozenset({"UUID", "MULTI_IF"})

#: the query clauses SeaTunnel 2.3.8's Sql transform refuses ("SQL validate failed"), by sqlglot's
#: argument name: the word that shows where, and what is refused
REFUSED_CLAUSES = {
    "joins": ("JOIN", "a JOIN"),
    "group": ("GROUP BY", "GROUP BY"),
    "order": ("ORDER BY", "ORDER BY"),
    "limit": ("LIMIT", "LIMIT"),
    "offset": ("OFFSET", "OFFSET"),
}

_OTHERWISE = "use SeaTunnel's functions (docs/sql-functions.md), or keep the job for this engine"
_ROW_BY_ROW = ("SeaTunnel's Sql transform maps each row of its one input on its own: do this in the source "
               "(e.g. its query) or a sink, or keep the job for this engine")


@dataclass(frozen=True)
class Finding:
    """One use of the query SeaTunnel 2.3.8 refuses: the word that shows where (as written), what is
    refused, what to write instead, and the place of the word in the query (1-based; None: not found);
    ``skip``: how many of the word's first places are not it (the outer query's SELECT for a subquery)."""

    word: str
    message: str
    hint: str
    line: int | None = None
    col: int | None = None
    skip: int = 0


def _function(name: str) -> Finding:
    if name in LATER:
        message = f"{name} is a function SeaTunnel's Sql transform added after 2.3.8"
    else:
        message = f"{name} is a Spark function SeaTunnel's Sql transform does not know (\"Unsupported function\")"
    equal = SEATUNNEL_NAMES.get(name)
    return Finding(name, message, f"use {equal}" if equal else _OTHERWISE)


def _functions(tree: Any, query: str) -> Iterator[Finding]:
    """Calls by a name SeaTunnel does not know (window and aggregate functions among them), EXTRACT fields it
    does not read, subqueries."""
    from sqlglot import exp

    for node in tree.find_all(exp.Func, exp.Subquery, exp.Exists):
        if isinstance(node, (exp.Subquery, exp.Exists)):
            if node is not getattr(arg(tree, "from"), "this", None) and not isinstance(node.parent, exp.CTE):
                yield Finding("SELECT", "SeaTunnel's Sql transform has no subqueries (a SELECT in an expression)",
                              _ROW_BY_ROW, skip=1)
        elif "start" in node.meta:  # called by name: the name as written
            name = query[node.meta["start"]:node.meta["end"] + 1].upper()
            if name not in ZETA_FUNCTIONS:
                yield _function(name)
        elif isinstance(node, exp.Extract):
            field = node.this.name.upper()
            if field not in ZETA_EXTRACT_FIELDS:
                yield Finding(field, f"EXTRACT({field} FROM ...): SeaTunnel 2.3.8's EXTRACT does not read {field}",
                              f"use one of {', '.join(sorted(ZETA_EXTRACT_FIELDS))}")
        elif type(node) in _spark_forms() and not isinstance(node.parent, exp.Case):  # a CASE's WHEN is an If
            yield _function(_spark_forms()[type(node)])


@lru_cache(maxsize=1)
def _spark_forms() -> dict[type, str]:
    """Spark's function forms sqlglot reads with parsers of their own (no name kept): the word written."""
    from sqlglot import exp

    # sqlglot releases differ in which of these forms they have (DecodeCase is recent): only those present
    forms = (("If", "IF"), ("RegexpLike", "RLIKE"), ("DecodeCase", "DECODE"))
    return {getattr(exp, name): word for name, word in forms if hasattr(exp, name)}


@lru_cache(maxsize=1)
def _conditions() -> tuple[type, ...]:
    """The WHERE conditions SeaTunnel's filter evaluates (NOT only around IS, IN, LIKE: see :func:`_where`)."""
    from sqlglot import exp

    return exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Is, exp.In, exp.Like, exp.Func, exp.Boolean


def _shape(tree: Any) -> Iterator[Finding]:
    """The clauses SeaTunnel refuses: anything but one plain SELECT over one table named as it is."""
    from sqlglot import exp

    if not isinstance(tree, exp.Select):
        word = tree.key.upper()
        yield Finding(word, f"SeaTunnel's Sql transform runs one plain SELECT, not a {word}", _ROW_BY_ROW)
        return
    for name, (word, what) in REFUSED_CLAUSES.items():
        if arg(tree, name):
            yield Finding(word, f"SeaTunnel's Sql transform refuses {what}", _ROW_BY_ROW)
    if arg(tree, "with"):
        yield Finding("WITH", "SeaTunnel's Sql transform ignores a WITH clause: it runs the outer SELECT over its "
                      "input, without what the WITH query does", "write one SELECT over the input, without WITH")
    if tree.args.get("distinct"):
        yield Finding("DISTINCT", "SeaTunnel's Sql transform ignores DISTINCT and keeps every row (here duplicates go)",
                      "deduplicate in the sink (e.g. its primary keys) to get the same rows on both engines")
    source = getattr(arg(tree, "from"), "this", None)
    if isinstance(source, exp.Table):
        if source.args.get("db"):
            yield Finding(source.args["db"].name, "SeaTunnel's Sql transform refuses a table name with a schema",
                          f"write FROM {source.name}")
        if source.alias:
            yield Finding(source.alias, f"SeaTunnel's Sql transform refuses a table alias ({source.alias})",
                          "name the columns without the alias")
    elif source is not None:
        yield Finding("FROM", "SeaTunnel's Sql transform reads one table FROM its input, not a subquery or a table "
                      "function", _ROW_BY_ROW)


def _where(tree: Any) -> Iterator[Finding]:
    """WHERE conditions SeaTunnel's filter does not know, and the literals TRUE and FALSE anywhere."""
    from sqlglot import exp

    for node in tree.find_all(exp.Boolean):
        word = "true" if node.this else "false"
        yield Finding(word, f"SeaTunnel 2.3.8 reads the literal {word} as a column name and fails (\"can't find "
                      f"field [{word}]\", a SeaTunnel bug: it runs here)",
                      f"SeaTunnel 2.3.8 has no boolean literal (there `flag = '{word}'` compares with a string and "
                      "keeps no row): keep the job for this engine")
    where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    stack = [where.this] if where is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, (exp.And, exp.Or)):
            stack += [node.expression, node.this]
        elif isinstance(node, exp.Paren) or (isinstance(node, exp.Not) and isinstance(node.this, (exp.Is, exp.In,
                                                                                                      exp.Like))):
            stack.append(node.this)
        elif isinstance(node, exp.In) and node.args.get("query") is None:
            continue
        elif not isinstance(node, _conditions()):
            text = node.sql(dialect="spark")
            word = text.split()[0] if not isinstance(node, (exp.Not, exp.Between)) else node.key.upper()
            yield Finding(word, f"SeaTunnel's Sql transform cannot filter on `{text[:60]}`: its WHERE knows "
                          "comparisons, IS [NOT] NULL, [NOT] IN, [NOT] LIKE, functions, AND, OR",
                          _where_hint(node))


#: the word a condition is written with (a comparison's operator; else its keyword)
_OPERATORS = {"EQ": "=", "NEQ": "<>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "NullSafeEQ": "<=>"}


def _projections(tree: Any, query: str) -> Iterator[Finding]:
    """A condition used as a value in the SELECT list (outside a CASE's WHEN), outermost only; not inside
    a call SeaTunnel refuses already (``IF(id = 1, ...)``: the call is the finding)."""
    from sqlglot import exp

    stack = list(reversed(tree.expressions)) if isinstance(tree, exp.Select) else []
    while stack:
        node = stack.pop()
        if isinstance(node, exp.If) and isinstance(node.parent, exp.Case):
            stack.extend(n for n in (node.args.get("true"),) if n is not None)  # the WHEN is SeaTunnel's filter
        elif isinstance(node, (exp.Predicate, exp.Connector, exp.Not)) and not isinstance(node, exp.Exists):
            name = type(node).__name__
            word = _OPERATORS.get(name) or node.key.upper()
            if word == "<>" and "<>" not in query:
                word = "!="
            text = node.sql(dialect="spark")
            yield Finding(word, f"SeaTunnel 2.3.8's Sql transform evaluates conditions only in WHERE and in CASE WHEN, "
                          f"not `{text[:60]}` as a value (\"Unsupported SQL Expression\")",
                          f"write CASE WHEN {text[:40]} THEN 1 ELSE 0 END, or keep the job for this engine")
        elif not isinstance(node, (exp.Subquery, exp.Select)) and not _refused_call(node, query):
            stack.extend(reversed(list(node.iter_expressions())))


def _refused_call(node: Any, query: str) -> bool:
    """Whether ``node`` is a call :func:`_functions` reports (a name or form SeaTunnel does not know)."""
    from sqlglot import exp

    if not isinstance(node, exp.Func):
        return False
    if "start" in node.meta:
        return query[node.meta["start"]:node.meta["end"] + 1].upper() not in ZETA_FUNCTIONS
    return type(node) in _spark_forms()


def _where_hint(node: Any) -> str:
    from sqlglot import exp

    if isinstance(node, exp.Between):
        return "write x >= low AND x <= high"
    if isinstance(node, exp.Not):
        return "write the opposite comparison (e.g. <> for NOT =)"
    return "write it as a comparison"


def _casts(tokens: list[Any]) -> Iterator[Finding]:
    """CAST (and ``::``) to a type SeaTunnel's CAST does not convert to, the type as written."""
    from sqlglot.tokens import TokenType

    for i, token in enumerate(tokens):
        target = None
        if token.token_type == TokenType.DCOLON and i + 1 < len(tokens):
            target = tokens[i + 1]
        elif token.text.upper() in ("CAST", "TRY_CAST") and i + 1 < len(tokens) and \
                tokens[i + 1].token_type == TokenType.L_PAREN:
            target = _cast_target(tokens, i + 1)
        if target is not None and target.text.upper() not in ZETA_CAST_TYPES:
            word = target.text.upper()
            yield Finding(target.text, f"SeaTunnel 2.3.8's CAST does not convert to {word} (\"Unsupported CAST AS "
                          "type\")", f"cast to one of {', '.join(sorted(ZETA_CAST_TYPES))}")


def _cast_target(tokens: list[Any], open_at: int) -> Any:
    """The type token of ``CAST(x AS type)`` whose parenthesis opens at ``open_at``: after its last AS at depth 1."""
    from sqlglot.tokens import TokenType

    depth, found = 0, None
    for i in range(open_at, len(tokens)):
        kind = tokens[i].token_type
        depth += (kind == TokenType.L_PAREN) - (kind == TokenType.R_PAREN)
        if depth == 0:
            return found
        if depth == 1 and kind == TokenType.ALIAS and i + 1 < len(tokens):
            found = tokens[i + 1]
    return found


def _located(found: Finding, tokens: list[Any], used: set[int]) -> Finding:
    """``found`` with the line and column of the first token spelling its word that no finding took yet
    (after its ``skip`` first places)."""
    places = [i for i, token in enumerate(tokens) if " ".join(token.text.upper().split()) == found.word.upper()]
    for i in places[found.skip:]:
        if i not in used:
            used.add(i)
            token = tokens[i]
            return Finding(found.word, found.message, found.hint, token.line, max(token.col - len(token.text) + 1, 1))
    return found


def located(query: str, found: list[Finding]) -> tuple[Finding, ...]:
    """``found`` with each word's place in ``query``, in the order of the query."""
    tokens = dialect()().tokenize(query)
    used: set[int] = set()
    return tuple(sorted((_located(f, tokens, used) for f in found), key=lambda f: (f.line or 0, f.col or 0)))


def at_query_line(problem: Problem, line: int | None, col: int | None) -> Problem:
    """``problem`` (located at the query's key) moved to ``line`` and ``col`` of the query, where known."""
    if line is None or problem.line is None:
        return problem
    return replace(problem, line=problem.line + line - 1, col=col)


def problems(plugin: PluginConfig, job: JobConfig, found: tuple[Finding, ...]) -> list[Problem]:
    """A not-portable problem per finding, at its line and column of the query."""
    return [at_query_line(not_portable(job, plugin, f.message, key="query", hint=f.hint), f.line, f.col)
            for f in found]


def compared_with_text(tree: Any, type_of: Callable[[Any], DataType | None]) -> list[Finding]:
    """A BOOLEAN column compared (``=``, ``<>``) with a string literal: SeaTunnel 2.3.8 finds them never equal
    (``flag = 'true'`` keeps no row there), where Spark reads the string as a boolean. ``type_of``: a
    column's input type where known."""
    from sqlglot import exp

    found = []
    for node in tree.find_all(exp.EQ, exp.NEQ):
        for column, literal in ((node.this, node.expression), (node.expression, node.this)):
            if (isinstance(column, exp.Column) and isinstance(literal, exp.Literal) and literal.is_string
                    and getattr(type_of(column), "name", None) == "boolean"):
                found.append(Finding(column.name, f"SeaTunnel 2.3.8 compares the BOOLEAN {column.name} with the string "
                                     f"'{literal.this}' as never equal (`= '{literal.this}'` keeps no row there); here "
                                     "the string is read as a boolean", "keep the job for this engine: SeaTunnel "
                                     "2.3.8 has no boolean literal either"))
    return found


@lru_cache(maxsize=1024)
def findings(query: str) -> tuple[Finding, ...]:
    """Every use in ``query`` SeaTunnel 2.3.8's Sql transform refuses, in the order of the query; none for a
    query that does not parse (the syntax check reports it)."""
    try:
        tree = parse(query)
    except SqlSyntaxError:
        return ()
    found = [*_shape(tree), *_functions(tree, query), *_projections(tree, query), *_where(tree)]
    lowered = query.lower()
    if not found and "cast" not in lowered and "::" not in lowered:
        return ()  # the common case, without tokenizing (DAG-parse time)
    return located(query, [*found, *_casts(dialect()().tokenize(query))])
