"""``query_params``: values for the ``?`` placeholders of a Jdbc source's ``query``, never spliced as SQL text.

A ``query`` with ``query_params = ["${interval_start}", 10]`` reads its ``?`` placeholders, in order, as
those values. Spark's JDBC reader runs a query as text (it cannot bind parameters), so each value
becomes a literal this module writes from the value's type, whatever the value holds:

* a string: a string literal, its quotes doubled (a MySQL-family server's backslashes doubled too,
  PostgreSQL's written as an ``E''`` literal, so neither server's escaping can end it early); a NUL
  character is refused;
* an integer, a finite decimal or float: the number; a boolean: ``TRUE``/``FALSE``; null: ``NULL``;
* anything else (a list, an object, NaN) is a config error, as is a count of values that differs from
  the count of placeholders.

Placeholders are read as JDBC reads them: a ``?`` outside string literals, quoted identifiers and
comments; ``??`` is a literal ``?`` (PostgreSQL's JSON operators). A query without ``query_params``
is used as written (SeaTunnel 2.3.8's Jdbc source has no such option: a config using it is ours).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from ..sqlclient.dialects import Dialect
from .options import config_error

#: the option, next to ``query`` (a source block's or a ``table_list`` item's)
OPTION = "query_params"


def placeholders(sql: str, backslash_escapes: bool = False, brackets: bool = False) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of the ``?`` placeholders of ``sql`` and of its ``??`` escapes
    (end - start == 2), outside quoted text and comments; ``backslash_escapes``: a backslash in
    quoted text escapes the next character (MySQL's default); ``brackets``: ``[...]`` quotes a name
    (SQL Server)."""
    quotes = "'\"`[" if brackets else "'\"`"
    spans: list[tuple[int, int]] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in quotes:
            i = _skip_quoted(sql, i, "]" if c == "[" else c, backslash_escapes)
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "?":
            width = 2 if sql.startswith("??", i) else 1
            spans.append((i, i + width))
            i += width
        else:
            i += 1
    return spans


def _skip_quoted(sql: str, start: int, close: str, backslash_escapes: bool) -> int:
    """The index after the quoted text opening at ``start`` (a doubled closing quote stays inside)."""
    i = start + 1
    while i < len(sql):
        if sql[i] == close:
            if sql.startswith(close * 2, i):
                i += 2
                continue
            return i + 1
        if backslash_escapes and sql[i] == "\\" and close in "'\"":
            i += 2
            continue
        i += 1
    return len(sql)


def literal(value: Any, dialect: Dialect) -> str:
    """``value`` as an SQL literal of ``dialect``, written from its type (see the module docstring)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (float, Decimal)):
        if (isinstance(value, float) and not math.isfinite(value)) or (isinstance(value, Decimal)
                                                                       and not value.is_finite()):
            raise config_error(f"{OPTION}: {value!r} is not a finite number")
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        if "\x00" in value:
            raise config_error(f"{OPTION}: a value holds a NUL character")
        text = value.replace("'", "''")
        if dialect.family == "mysql":
            return "'" + text.replace("\\", "\\\\") + "'"
        if dialect.family == "postgresql":
            return "E'" + text.replace("\\", "\\\\") + "'"
        return f"'{text}'"
    raise config_error(f"{OPTION}: each value must be a string, a number, a boolean or null, found {value!r}")


def bind_query(sql: str, params: Sequence[Any] | None, dialect: Dialect) -> str:
    """``sql`` with its placeholders replaced by ``params`` as literals (``??`` by ``?``); ``sql``
    as it is without ``params``."""
    if params is None:
        return sql
    if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
        raise config_error(f"{OPTION} must be a list of values, found {params!r}")
    spans = placeholders(sql, backslash_escapes=dialect.family == "mysql", brackets=dialect.quote == "[")
    holes = [s for s in spans if s[1] - s[0] == 1]
    if len(holes) != len(params):
        raise config_error(f"{OPTION} has {len(params)} value(s) for {len(holes)} '?' placeholder(s) in the query "
                           "(a literal '?' is written '??')")
    out, last, values = [], 0, iter(params)
    for start, end in spans:
        out.append(sql[last:start])
        out.append("?" if end - start == 2 else literal(next(values), dialect))
        last = end
    out.append(sql[last:])
    return "".join(out)
