"""How a csv sink quotes its fields: ``csv_string_quote_mode`` (ALL, MINIMAL, NONE; default MINIMAL).

A field is quoted RFC-style (``"`` around it, each ``"`` in it doubled). The modes:

* ``NONE``: no field is quoted, SeaTunnel 2.3.8's bytes. A field holding the delimiter, a CR or LF,
  the row delimiter, or starting with ``"`` then cannot be read back (by this project's csv reader
  or SeaTunnel's): the user asked for those bytes.
* ``MINIMAL``: only the fields a csv reader would misread unquoted (:func:`needs_quotes`); every other
  field is written raw, as SeaTunnel 2.3.8 writes it. A ``"`` inside a field (not first) reads back
  raw and is left so.
* ``ALL``: every string field is quoted (an empty string as ``""``; null stays an empty field), and any
  other field that needs it, as in MINIMAL.

The header's names are quoted as MINIMAL quotes fields (raw under NONE).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["QUOTE_MODES", "csv_field", "csv_header", "needs_quotes"]

QUOTE_MODES = ("ALL", "MINIMAL", "NONE")
_QUOTE = '"'


def _triggers(delimiter: str, row_delimiter: str) -> tuple[str, ...]:
    """What a field may not hold unquoted: the delimiter, CR, LF and the row delimiter."""
    return tuple(dict.fromkeys(t for t in (delimiter, "\n", "\r", row_delimiter) if t))


def needs_quotes(text: str, delimiter: str, row_delimiter: str) -> bool:
    """Whether ``text`` unquoted would be misread: it holds a trigger (:func:`_triggers`) or starts with ``"``."""
    return text.startswith(_QUOTE) or any(t in text for t in _triggers(delimiter, row_delimiter))


def _quoted(column: Any) -> Any:
    from pyspark.sql import functions as F

    return F.concat(F.lit(_QUOTE), F.replace(column, F.lit(_QUOTE), F.lit(_QUOTE * 2)), F.lit(_QUOTE))


def csv_field(column: Any, is_string: bool, opts: Mapping[str, Any]) -> Any:
    """A field's text (null stays null) as the csv file holds it under ``opts["quote_mode"]``
    (the rule of :func:`needs_quotes`, as a column expression)."""
    from pyspark.sql import functions as F

    mode = opts["quote_mode"]
    if mode == "NONE":
        return column
    if mode == "ALL" and is_string:
        return _quoted(column)
    misread = column.startswith(F.lit(_QUOTE))
    for trigger in _triggers(opts["delimiter"], opts["row_delimiter"]):
        misread = misread | column.contains(F.lit(trigger))
    return F.when(misread, _quoted(column)).otherwise(column)


def csv_header(names: list[str], opts: Mapping[str, Any]) -> list[str]:
    """The header's names as the csv file holds them."""
    if opts["quote_mode"] == "NONE":
        return list(names)
    return [_QUOTE + n.replace(_QUOTE, _QUOTE * 2) + _QUOTE if needs_quotes(n, opts["delimiter"], opts["row_delimiter"])
            else n for n in names]
