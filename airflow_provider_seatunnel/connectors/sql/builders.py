"""Building blocks of the Sql transform's function rewriters: sqlglot expression helpers and types.

A rewriter sees its call's arguments after they were rewritten themselves (the walk goes deepest
first), and a ``type_of(expression)`` that gives the Spark SQL type of a column or of a CAST where
known (``int``, ``bigint``, ``double``, ``decimal(10,2)``, ``string``, ``date``, ``timestamp_ntz``,
``time(6)``, ``binary``, ``array<int>``...). :func:`kind` adds literals, parentheses and signs and
folds a type to its family name (``decimal``, ``timestamp``, ``time``, ``array``...).

This module imports sqlglot: import it where a query is rewritten, not at DAG-parse time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

#: ``type_of(expression)``: the Spark SQL type of an expression (a column, a CAST) where known
TypeOf = Callable[[Any], str | None]
#: ``rewrite(name, arguments, type_of)``: the Spark expression of a SeaTunnel call, or None for Spark's own
Rewriter = Callable[[str, list[Any], TypeOf], Any]

#: the key of ``node.meta`` holding SeaTunnel's result type (a Spark SQL type) of a rewritten call
RESULT_TYPE = "seatunnel_type"
INTEGRAL = ("tinyint", "smallint", "int", "bigint")
NUMERIC = (*INTEGRAL, "float", "double", "decimal")
_FAMILIES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "timestamp_ntz": "timestamp",
             "struct": "row", "varchar": "string", "char": "string", "real": "float"}


class FunctionError(ValueError):
    """A SeaTunnel function used in a way that has no Spark translation (a bad unit, flag, arity)."""


def no_types(node: Any) -> str | None:
    """The ``type_of`` that knows no type."""
    return None


def column_types(types: Mapping[str, str]) -> TypeOf:
    """The ``type_of`` that knows the columns of ``types`` (by lower-case name): a column node's type."""
    def type_of(node: Any) -> str | None:
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            return types.get(node.name.lower())
        return None

    return type_of


def family(sql_type: str | None) -> str | None:
    """The family name of a Spark SQL type: ``decimal(10,2)`` -> ``decimal``, ``timestamp_ntz`` ->
    ``timestamp``, ``array<int>`` -> ``array``."""
    if not sql_type:
        return None
    name = re.split(r"[(<]", sql_type.strip().lower(), maxsplit=1)[0].strip()
    return _FAMILIES.get(name, name)


def full_type(node: Any, type_of: TypeOf) -> str | None:
    """The Spark SQL type of ``node`` where known: a literal's (a number with a point is a DOUBLE, as
    SeaTunnel reads it), a CAST's target, a rewritten call's, a column's, through parentheses and signs."""
    if node.meta.get(RESULT_TYPE):
        return str(node.meta[RESULT_TYPE])
    if isinstance(node, (exp.Paren, exp.Neg)):
        return full_type(node.this, type_of)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "string"
        if re.fullmatch(r"\d+", node.this):
            return "int" if int(node.this) < 2**31 else "bigint"
        return "double"
    if isinstance(node, exp.Boolean):
        return "boolean"
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.sql(dialect="spark").lower().replace(" ", "")
    return type_of(node)


def kind(node: Any, type_of: TypeOf) -> str | None:
    """The type family of ``node`` where known (``int``, ``double``, ``decimal``, ``string``, ``date``,
    ``timestamp``, ``time``, ``binary``, ``array``...)."""
    return family(full_type(node, type_of))


@lru_cache(maxsize=256)
def _parsed_template(text: str) -> Any:
    return sqlglot.parse_one(text, read="spark")


def template(text: str, **parts: Any) -> Any:
    """The expression ``text`` with its columns ``_name`` replaced by copies of ``parts[name]``."""
    tree = _parsed_template(text).copy()
    for column in list(tree.find_all(exp.Column)):
        if column.name.startswith("_") and column.name[1:] in parts and not column.table:
            column.replace(parts[column.name[1:]].copy())
    return tree


def call(name: str, *args: Any) -> Any:
    return exp.Anonymous(this=name, expressions=[a.copy() for a in args])


def text(value: str) -> Any:
    return exp.Literal.string(value)


def number(value: int) -> Any:
    return exp.Literal.number(value)


def cast(node: Any, to: str) -> Any:
    return exp.Cast(this=node.copy(), to=exp.DataType.build(to, dialect="spark"))


def fail(message: str) -> Any:
    """``raise_error(message)``: SeaTunnel's run-time error where it throws, native in Spark."""
    return call("raise_error", text(message))


def literal(node: Any) -> str | None:
    """The value of a string literal, None for any other expression."""
    return node.this if isinstance(node, exp.Literal) and node.is_string else None


def is_null(node: Any) -> bool:
    return isinstance(node, exp.Null)


def unit(node: Any, allowed: Sequence[str], function: str) -> str:
    """The unit a string literal names, upper-cased; FunctionError unless it is ``allowed``."""
    value = (literal(node) or "").strip().upper()
    if value not in allowed:
        raise FunctionError(f"{function}: unsupported unit {literal(node)!r}; use one of {', '.join(allowed)}")
    return value


def arity(name: str, args: list[Any], *allowed: int) -> None:
    """FunctionError unless ``len(args)`` is one of ``allowed``."""
    if len(args) not in allowed:
        counts = " or ".join(str(n) for n in allowed)
        raise FunctionError(f"{name} takes {counts} argument{'s' if allowed != (1,) else ''}, got {len(args)}")


def flagged(regex: Any, flags: Any) -> Any:
    """``regex`` with SeaTunnel's flag letters (i, c, n, m) as an inline Java flag group."""
    if flags is None or isinstance(flags, exp.Null):
        return regex
    letters = literal(flags)
    if letters is None:
        raise FunctionError("regular expression flags must be a string literal such as 'i'")
    ci = dotall = multiline = False
    for c in letters:
        if c not in "icnm":
            raise FunctionError(f"unknown regular expression flag {c!r}: use i, c, n or m")
        ci = True if c == "i" else False if c == "c" else ci
        dotall, multiline = dotall or c == "n", multiline or c == "m"
    prefix = "".join(f for f, on in (("i", ci), ("s", dotall), ("m", multiline), ("u", ci)) if on)
    if not prefix:
        return regex
    if literal(regex) is not None:
        return text(f"(?{prefix}){literal(regex)}")
    return call("concat", text(f"(?{prefix})"), regex)


def typed(spark_name: str, result: str | None = None) -> Rewriter:
    """A rewriter calling Spark's ``spark_name`` with the same arguments, cast to ``result`` (SeaTunnel's
    result type where Spark's differs)."""

    def rewrite(name: str, a: list[Any], type_of: TypeOf) -> Any:
        node = call(spark_name, *a)
        return cast(node, result) if result else node

    return rewrite
