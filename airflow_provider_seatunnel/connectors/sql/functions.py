"""SeaTunnel's SQL functions and types rewritten to native Spark SQL expressions (no UDFs).

Every function of SeaTunnel's SQL reference has a rewriter (:mod:`.string_functions`,
:mod:`.numeric_functions`, :mod:`.datetime_functions`, :mod:`.system_functions`, :mod:`.des`) that
gives it SeaTunnel's result type, null and error behaviour; where Spark's function of the same
name means the same, the rewriter returns None and Spark's runs. Each module's docstring states its
rules; docs/sql-functions.md has the whole table. A number literal with a point is a DOUBLE (as
SeaTunnel reads ``10.3``), TIMESTAMP and DATETIME are TIMESTAMP_NTZ, and CAST follows SeaTunnel
(:func:`.system_functions.rewrite_cast`).

Where Spark's meaning wins: operators keep Spark SQL semantics (ANSI null comparisons, standard
LIKE, BETWEEN and NOT allowed; SeaTunnel's ``!=`` is true when one side is null, and its integer
division truncates); ``TRIM(BOTH|LEADING|TRAILING chars FROM s)`` is Spark's; ``${name}`` inside a
query is Spark's variable substitution.

Each rewritten call carries SeaTunnel's result type (a Spark SQL type) in ``node.meta[RESULT_TYPE]``
where the rewrite does not end in a CAST, for the compiled schema (:mod:`.schema`). This module
imports sqlglot: import it where a query is rewritten, not at DAG-parse time.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from . import numeric_functions, system_functions
from .builders import RESULT_TYPE, FunctionError, Rewriter, TypeOf, call, full_type, literal, no_types
from .datetime_functions import DATETIME_REWRITERS, DATETIME_TYPES, extract, parsed_type
from .des import DES_REWRITERS, DES_TYPES
from .numeric_functions import NUMERIC_REWRITERS, NUMERIC_TYPES
from .string_functions import STRING_REWRITERS, STRING_TYPES, concat
from .system_functions import SYSTEM_REWRITERS, SYSTEM_TYPES, rewrite_cast

__all__ = ["RESULT_TYPE", "REWRITERS", "SEATUNNEL_FUNCTIONS", "FunctionError", "TypeOf", "no_types", "to_spark"]

#: SeaTunnel's functions by upper-case name: parsed as plain calls (:func:`.analysis.dialect`) and
#: rewritten by :func:`to_spark`
REWRITERS: dict[str, Rewriter] = {**STRING_REWRITERS, **NUMERIC_REWRITERS, **DATETIME_REWRITERS, **SYSTEM_REWRITERS,
                                  **DES_REWRITERS}
#: names sqlglot's Spark parser reads with parsers of their own (kept: they also read Spark's forms)
_PARSED = ("CHAR", "CHR", "POSITION", "SUBSTRING", "SUBSTR", "TRIM", "CEIL", "CEILING", "FLOOR", "EXTRACT")
SEATUNNEL_FUNCTIONS = tuple(name for name in REWRITERS if name not in _PARSED)
_FIXED_TYPES = {**STRING_TYPES, **NUMERIC_TYPES, **DATETIME_TYPES, **SYSTEM_TYPES, **DES_TYPES}
_FIRST_ARGUMENT = (*numeric_functions.FIRST_ARGUMENT_TYPE, *system_functions.FIRST_ARGUMENT_TYPE, "DATEADD",
                   "TIMESTAMPADD")
_PARSED_TIME = {"timestamp": "timestamp_ntz", "date": "date", "time": "time(6)"}


def _result_type(name: str, args: list[Any], type_of: TypeOf) -> str | None:
    if name in _FIXED_TYPES:
        return _FIXED_TYPES[name]
    if name in _FIRST_ARGUMENT and args:
        return full_type(args[0], type_of)
    if name in ("PARSEDATETIME", "TO_DATE") and len(args) == 2:
        return _PARSED_TIME[parsed_type(literal(args[1]), name)]
    return None


def _call(name: str, args: list[Any], type_of: TypeOf) -> Any:
    """The Spark form of the SeaTunnel call ``name(args)``, its result type in its meta."""
    new = REWRITERS[name](name, args, type_of)
    if new is None:
        new = call(name.lower(), *args)  # Spark's own function of that name
    if not isinstance(new, exp.Cast):
        found = _result_type(name, args, type_of)
        if found:
            new.meta[RESULT_TYPE] = found
    return new


def _typed_call(node: Any) -> tuple[str, list[Any]] | None:
    """The SeaTunnel name and arguments of a call sqlglot reads into a node of its own, if any."""
    if isinstance(node, exp.Chr):
        return "CHR", list(node.expressions)
    if isinstance(node, exp.StrPosition) and node.args.get("position") is None:
        return "POSITION", [node.args["substr"], node.this]
    if isinstance(node, exp.Substring):
        parts = [node.this, node.args.get("start"), node.args.get("length")]
        return "SUBSTRING", [p for p in parts if p is not None]
    if isinstance(node, (exp.Ceil, exp.Floor)) and node.args.get("to") is None:
        name = "CEIL" if isinstance(node, exp.Ceil) else "FLOOR"
        return name, [p for p in (node.this, node.args.get("decimals")) if p is not None]
    if isinstance(node, exp.Trim) and node.args.get("position") is None:
        return "TRIM", [p for p in (node.this, node.args.get("expression")) if p is not None]
    return None


def _double_literal(node: Any) -> Any:
    """A number literal with a point or an exponent as a DOUBLE (SeaTunnel's reading of ``10.3``)."""
    if node.is_string or re.fullmatch(r"\d+", node.this) or node.find_ancestor(exp.DataType, exp.Interval):
        return None
    if isinstance(node.parent, (exp.Limit, exp.Offset)):
        return None
    return exp.Cast(this=node.copy(), to=exp.DataType.build("double"))


def _rewrite(node: Any, type_of: TypeOf) -> Any:
    """The Spark form of one call, EXTRACT, CAST, literal or type; None to keep ``node`` as it is."""
    if isinstance(node, exp.Literal):
        return _double_literal(node)
    if isinstance(node, exp.DataType):
        if getattr(node.this, "name", None) in ("TIMESTAMP", "TIMESTAMPTZ", "DATETIME"):  # Spark's TIMESTAMP
            return exp.DataType.build("timestamp_ntz", dialect="spark")
        if node.this == exp.DataType.Type.TIME:  # sqlglot would print Spark's TIMESTAMP
            return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind="TIME")
        return None
    if isinstance(node, exp.Cast):
        new = rewrite_cast(node, type_of)
        if new is not None and not isinstance(new, exp.Cast):
            new.meta[RESULT_TYPE] = node.to.sql(dialect="spark").lower().replace(" ", "")
        return new
    if isinstance(node, exp.Extract):
        new = extract(node)
        (node if new is None else new).meta[RESULT_TYPE] = "bigint" if node.name.upper() == "EPOCH" else "int"
        return new
    if isinstance(node, exp.CurrentTimestamp):
        return _call("NOW", [], type_of)
    typed = _typed_call(node)
    if typed is not None:
        return _call(typed[0], typed[1], type_of)
    name = node.name.upper() if isinstance(node, exp.Anonymous) else ""
    return _call(name, list(node.expressions), type_of) if name in REWRITERS else None


_NODES = (exp.Anonymous, exp.Extract, exp.DataType, exp.Cast, exp.Literal, exp.Chr, exp.StrPosition, exp.Substring,
          exp.Ceil, exp.Floor, exp.Trim, exp.CurrentTimestamp)


def to_spark(tree: Any, type_of: TypeOf = no_types) -> Any:
    """Rewrite SeaTunnel's SQL functions and types in ``tree`` (in place) to native Spark SQL.

    ``type_of(expression)`` gives the Spark SQL type of a column where known, to choose between
    forms (a date or a timestamp, strings or arrays) and to keep SeaTunnel's result types.
    Raises :class:`FunctionError`.
    """
    nodes = list(tree.find_all(*_NODES))
    for node in reversed(nodes):  # deepest first: arguments are rewritten before their callers
        new = _rewrite(node, type_of)
        if new is not None:
            node.replace(new)
    for pipe in [p for p in tree.find_all(exp.DPipe) if not isinstance(p.parent, exp.DPipe)]:
        leaves, stack = [], [pipe]
        while stack:
            node = stack.pop()
            if isinstance(node, exp.DPipe):
                stack += [node.expression, node.this]
            else:
                leaves.append(node)
        new = concat(leaves, type_of)
        new.meta[RESULT_TYPE] = "string"
        pipe.replace(new)
    return tree
