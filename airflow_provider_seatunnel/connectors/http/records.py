"""A response body as rows, and the size of a page (pure Python: runs in Spark's Python workers).

The body is read whole, or line by line with ``enable_multi_lines`` (blank lines skipped); each
piece is a *chunk*:

* ``format = text`` (no schema): each chunk is one row, its one field ``content``;
* ``format = json``: the chunk is parsed; ``content_field`` selects the records (a JSONPath:
  every match is a record, and a definite path naming one array gives that array's elements);
  else ``json_field`` builds one record per position from its paths' matches (field → the
  path's n-th match; paths with different numbers of matches fail, as SeaTunnel's HTTP-01, unless
  ``json_filed_missed_return_null`` fills the shorter ones with nulls); else the chunk itself is
  the records (an array: each element, an object: itself). Each record is converted by the schema
  as SeaTunnel's JSON format does (a field takes the member of its name, absent: null; numbers
  written as strings are parsed; see :mod:`..redis.values`); a null record is skipped.

The size that decides whether paging goes on (SeaTunnel's rule) is the number of elements of what
was extracted: the records of ``content_field``/``json_field``, else the parsed chunk's elements
(an array's items, an object's members; a text chunk that is not JSON counts 0). With several
chunks the last one decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.errors import DataError
from ..redis.values import ValueFormatError, row_of
from .jsonpath import evaluate
from .options import HttpOptions


@dataclass(frozen=True)
class Page:
    rows: list[tuple[Any, ...]]
    size: int


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


def _parse(chunk: str, where: str) -> Any:
    try:
        return json.loads(chunk)
    except ValueError as e:
        raise DataError(f"the response of {where} is not JSON ({e}): {_short(chunk)}") from None


def _json_size(value: Any) -> int:
    return len(value) if isinstance(value, (list, Mapping)) else 0


def _by_fields(o: HttpOptions, document: Any, where: str) -> list[Any]:
    assert o.json_field is not None
    names = list(o.json_field)
    columns = [evaluate(path, document) for path in o.json_field.values()]
    longest = max(len(c) for c in columns)
    if not o.missed_null:
        first = columns[0]
        for name, column in zip(names[1:], columns[1:], strict=True):
            if len(column) != len(first):
                raise DataError(f"HTTP-01 the field data is inconsistent in the response of {where}: "
                                f"[{o.json_field[names[0]].text}]({len(first)}) and "
                                f"[{o.json_field[name].text}]({len(column)}) the number of parsing records "
                                "is inconsistent (set json_filed_missed_return_null = true to fill with nulls)")
    return [{name: (column[i] if i < len(column) else None) for name, column in zip(names, columns, strict=True)}
            for i in range(longest)]


def extract(o: HttpOptions, document: Any, where: str = "") -> tuple[list[Any], int]:
    """The records of one parsed chunk (``content_field``, ``json_field``, else the chunk) and the
    page size they count for."""
    if o.content_field is not None:
        matches = evaluate(o.content_field, document)
        if o.content_field.definite and len(matches) == 1 and isinstance(matches[0], list):
            matches = list(matches[0])
        return matches, len(matches)
    if o.json_field is not None:
        items = _by_fields(o, document, where)
        return items, len(items)
    return (document if isinstance(document, list) else [document]), _json_size(document)


def _json_page(o: HttpOptions, chunk: str, where: str) -> Page:
    assert o.schema is not None
    items, size = extract(o, _parse(chunk, where), where)
    rows = []
    for item in items:
        if item is None:
            continue
        if not isinstance(item, Mapping):
            raise DataError(f"a record of the response of {where} is not a JSON object: "
                            f"{_short(json.dumps(item, ensure_ascii=False))}")
        try:
            rows.append(row_of(item, o.schema))
        except ValueFormatError as e:
            raise DataError(f"a record of the response of {where}: {e}") from None
    return Page(rows, size)


def _text_page(chunk: str) -> Page:
    try:
        size = _json_size(json.loads(chunk))
    except ValueError:
        size = 0
    return Page([(chunk,)], size)


def chunks(o: HttpOptions, body: str) -> Iterator[str]:
    if not o.multi_lines:
        yield body
        return
    for line in body.splitlines():
        if line.strip():
            yield line


def page_of(o: HttpOptions, body: str, where: str) -> Page:
    """The rows of a response body and its size (0 for an empty body: paging stops)."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    if not body:
        return Page(rows, 0)
    for chunk in chunks(o, body):
        page = _json_page(o, chunk, where) if o.format == "json" else _text_page(chunk)
        rows.extend(page.rows)
        size = page.size
    return Page(rows, size)
