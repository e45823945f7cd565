"""The parity harness's comparisons: one engine's outputs against the other's, as :class:`Difference` values.

Pure functions over what the engines left behind (exit codes, console logs, file bytes, table rows, topic
records); nothing here runs a job. Every function returns the differences it finds, an empty list when the
two sides agree. A difference names its ``aspect`` (the thing a reader would notice: ``exit``, ``console.rows``,
``file.bytes.final-newline``, ``file.schema.type`` ...), ``where`` (a file, table or topic) and a ``detail``
the known-differences table (:mod:`benchmarks.parity.known`) matches.

Rules:

* Files are paired by content, never by name: SeaTunnel names its files ``T_<job>_<subtask>_<n>.<ext>``, the
  project ``part-<subtask>-<run>.<ext>``; the directory parts of a file's path (partition folders) are compared.
* Bytes: the multiset of the data files' contents; where they differ, the byte features a reader notices are
  named (a newline after the last row, quoting, line separators), else ``file.bytes``.
* Rows: csv/text/json/parquet/orc parsed into rows of text values, compared as multisets; column names and
  (parquet/orc) logical types, timestamp unit and zone included, compared per column.
* Console: the ``SeaTunnelRow#kind=<KIND> : v1, v2`` lines of both engines as (table, kind, values) rows, as a
  multiset (the subtask and row index depend on scheduling).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

#: the data files' extensions, by format
EXTENSIONS = {"csv": ".csv", "text": ".txt", "json": ".json", "parquet": ".parquet", "orc": ".orc",
              "xml": ".xml", "excel": ".xlsx"}
#: how many rows a difference quotes
SAMPLE = 3


@dataclass(frozen=True)
class Difference:
    """One thing that differs: ``aspect`` (what), ``where`` (file, table, topic or ``job``), ``detail`` (how)."""

    aspect: str
    where: str
    detail: str


@dataclass(frozen=True)
class Table:
    """Parsed rows of one output: column names (``None`` where the format has none), logical types per column
    (empty where the format has none) and rows of text values."""

    columns: tuple[str, ...] | None
    types: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]


# -- exit codes and console lines -------------------------------------------------------------------------------

def compare_exit(zeta: int, ours: int) -> list[Difference]:
    """Both engines must end a job the same way: 0 (finished) or not 0 (failed)."""
    if (zeta == 0) == (ours == 0):
        return []
    return [Difference("exit", "job", f"zeta exit {zeta}, ours exit {ours}")]


_CONSOLE = re.compile(r"SeaTunnelRow#tableId=(?P<table>\S*) SeaTunnelRow#kind=(?P<kind>[A-Z_]+) : ?(?P<values>.*)$")


def console_rows(log: str) -> Counter[tuple[str, str, str]]:
    """The rows a Console sink printed in ``log`` (either engine's), as a multiset of (table, kind, values text).

    The table id is kept as printed but compared only by what both engines print (SeaTunnel's may carry a
    catalog prefix): :func:`compare_console` compares it separately."""
    rows: Counter[tuple[str, str, str]] = Counter()
    for line in log.splitlines():
        match = _CONSOLE.search(line)
        if match:
            rows[(match["table"], match["kind"], match["values"].rstrip())] += 1
    return rows


def compare_console(zeta_log: str, ours_log: str) -> list[Difference]:
    """The printed rows as multisets of (kind, values); the table ids printed, separately."""
    zeta, ours = console_rows(zeta_log), console_rows(ours_log)
    diffs = _multiset_diff("console.rows", "console", _drop_table(zeta), _drop_table(ours))
    zt, ot = sorted({t for t, _, _ in zeta}), sorted({t for t, _, _ in ours})
    if zt != ot and zeta and ours:
        diffs.append(Difference("console.table-id", "console", f"zeta {zt}, ours {ot}"))
    return diffs


def _drop_table(rows: Counter[tuple[str, str, str]]) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for (_, kind, values), n in rows.items():
        out[(kind, values)] += n
    return out


def _multiset_diff(aspect: str, where: str, zeta: Counter, ours: Counter) -> list[Difference]:
    if zeta == ours:
        return []
    only_z, only_o = zeta - ours, ours - zeta
    detail = (f"{sum(zeta.values())} rows vs {sum(ours.values())}; only zeta: {_sample(only_z)}; "
              f"only ours: {_sample(only_o)}")
    return [Difference(aspect, where, detail)]


def _sample(rows: Counter) -> str:
    items = sorted(rows.elements(), key=repr)
    more = f" (+{len(items) - SAMPLE} more)" if len(items) > SAMPLE else ""
    return "[" + "; ".join(repr(r) for r in items[:SAMPLE]) + "]" + more


# -- files ---------------------------------------------------------------------------------------------------

def data_files(files: Mapping[str, bytes], fmt: str) -> dict[str, bytes]:
    """The data files among ``files`` (relative path -> bytes): the format's extension, or (a sink may write
    names without one) any file outside hidden folders that is not a checksum."""
    ext = EXTENSIONS.get(fmt, "")
    chosen = {p: b for p, b in files.items() if ext and p.endswith(ext)}
    if chosen:
        return chosen
    return {p: b for p, b in files.items() if not _hidden(p) and not p.endswith(".crc")}


def _hidden(path: str) -> bool:
    return any(part.startswith((".", "_")) for part in PurePosixPath(path).parts)


def compare_folder(zeta: Iterable[str], ours: Iterable[str], data: Iterable[str]) -> list[Difference]:
    """What else the sinks left in the target folder besides data files, by kind (``*.crc`` files, a hidden
    folder such as ``.seatunnel-commits/``): one difference per kind only one side leaves."""
    data_set = set(data)
    kinds_z, kinds_o = _extra_kinds(zeta, data_set), _extra_kinds(ours, data_set)
    return ([Difference("folder.extra.zeta", "target", f"only zeta leaves {k}") for k in sorted(kinds_z - kinds_o)]
            + [Difference("folder.extra.ours", "target", f"only ours leaves {k}") for k in sorted(kinds_o - kinds_z)])


def _extra_kinds(paths: Iterable[str], data: set[str]) -> set[str]:
    kinds = set()
    for p in paths:
        if p in data:
            continue
        parts = PurePosixPath(p).parts
        hidden = next((part for part in parts if part.startswith(".") and part != parts[-1]), None)
        kinds.add(hidden + "/" if hidden else ("*" + PurePosixPath(p).suffix if p.endswith(".crc") else p))
    return kinds


def compare_partitions(zeta: Iterable[str], ours: Iterable[str]) -> list[Difference]:
    """The folders data files sit in (partition folders such as ``c_int=1``), as multisets of folder paths."""
    dz, do = Counter(str(PurePosixPath(p).parent) for p in zeta), Counter(str(PurePosixPath(p).parent) for p in ours)
    if set(dz) == set(do):
        return []
    return [Difference("file.folders", "target", f"zeta {sorted(dz)}, ours {sorted(do)}")]


def compare_partition_keys(zeta: Iterable[str], ours: Iterable[str]) -> list[Difference]:
    """Partition folders of random values: the keys (``c_string`` of ``c_string=xyz``) at each level and the number
    of folders."""
    def shape(paths: Iterable[str]) -> tuple[set[tuple[str, ...]], int]:
        parents = {PurePosixPath(p).parent for p in paths}
        return {tuple(part.split("=", 1)[0] for part in d.parts) for d in parents}, len(parents)

    kz, nz = shape(zeta)
    ko, no = shape(ours)
    if (kz, nz) == (ko, no):
        return []
    return [Difference("file.folders", "target", f"zeta {nz} folders {sorted(kz)}, ours {no} folders {sorted(ko)}")]


def compare_bytes(zeta: Sequence[bytes], ours: Sequence[bytes], fmt: str, rows_differ: bool = False
                  ) -> list[Difference]:
    """The data files' bytes as multisets. Text formats: each byte feature a reader notices that differs (a newline
    after the last row, CRLF, quoting) is a difference of its own; any other byte difference is ``file.bytes``
    (where the first difference is, with context) only where the parsed rows are the same (``rows_differ``
    false): otherwise the rows' differences say it. Binary formats: ``file.bytes.binary`` with the sizes."""
    if Counter(zeta) == Counter(ours):
        return []
    if len(zeta) != len(ours):
        return [Difference("file.bytes.files", "target", f"zeta wrote {len(zeta)} files, ours {len(ours)}")]
    if fmt in ("parquet", "orc", "excel"):
        zb, ob = sum(len(b) for b in zeta), sum(len(b) for b in ours)
        return [Difference("file.bytes.binary", "target", f"{fmt} files differ: {zb} bytes vs {ob}")]
    diffs = _text_features(list(zeta), list(ours), csv_quoting=fmt == "csv")
    unquote = _strip_quotes if fmt == "csv" else bytes
    rest_z = sorted(unquote(b.rstrip(b"\n")) for b in zeta)
    rest_o = sorted(unquote(b.rstrip(b"\n")) for b in ours)
    if rest_z != rest_o and not rows_differ:
        diffs.append(Difference("file.bytes", "target", first_difference(b"\n".join(rest_z), b"\n".join(rest_o))))
    return diffs


def _text_features(zeta: list[bytes], ours: list[bytes], csv_quoting: bool) -> list[Difference]:
    """The byte features of text files a reader notices, each a difference of its own."""
    diffs: list[Difference] = []
    ends_z = {b.endswith(b"\n") for b in zeta if b}
    ends_o = {b.endswith(b"\n") for b in ours if b}
    if ends_z != ends_o:
        diffs.append(Difference("file.bytes.final-newline", "target",
                                f"last row ends with a newline: zeta {sorted(ends_z)}, ours {sorted(ends_o)}"))
    crlf_z, crlf_o = any(b"\r\n" in b for b in zeta), any(b"\r\n" in b for b in ours)
    if crlf_z != crlf_o:
        diffs.append(Difference("file.bytes.line-separator", "target", f"CRLF: zeta {crlf_z}, ours {crlf_o}"))
    quoted_z, quoted_o = sum(b.count(b'"') for b in zeta), sum(b.count(b'"') for b in ours)
    stripped_z, stripped_o = (sum(_strip_quotes(b).count(b'"') for b in side) for side in (zeta, ours))
    if csv_quoting and quoted_z != quoted_o and (quoted_z - stripped_z or quoted_o - stripped_o):
        diffs.append(Difference("file.bytes.quoting", "target", f"double quotes: zeta {quoted_z}, ours {quoted_o}"))
    return diffs


def first_difference(zeta: bytes, ours: bytes, context: int = 30) -> str:
    """Where two byte strings first differ, with ``context`` bytes either side."""
    i = next((n for n, (a, b) in enumerate(zip(zeta, ours, strict=False)) if a != b), min(len(zeta), len(ours)))
    lo = max(0, i - context)
    return f"at byte {i}: zeta {zeta[lo:i + context]!r}, ours {ours[lo:i + context]!r}"


def _strip_quotes(data: bytes) -> bytes:
    """A csv text without RFC 4180 quoting (quotes around fields gone, doubled quotes single)."""
    return re.sub(rb'"((?:[^"]|"")*)"', lambda m: m.group(1).replace(b'""', b'"'), data)


# -- parsed rows ------------------------------------------------------------------------------------------------

def parse(data: bytes, fmt: str, delimiter: str | None = None, header: bool = False) -> Table:
    """One data file's rows: csv/text split by the delimiter (csv: ``,``, text: ``\\x01``; the csv quoting rules
    of Python's csv module for csv), json one object per line, parquet/orc through pyarrow."""
    if fmt in ("csv", "text"):
        return _parse_delimited(data, fmt, delimiter, header)
    if fmt == "json":
        return _parse_json(data)
    if fmt in ("parquet", "orc"):
        return _parse_arrow(data, fmt)
    if fmt == "xml":
        return _parse_xml(data)
    if fmt == "excel":
        return _parse_excel(data, header)
    raise ValueError(f"no parser for format {fmt!r}")


def _parse_delimited(data: bytes, fmt: str, delimiter: str | None, header: bool) -> Table:
    text = data.decode("utf-8")
    sep = delimiter if delimiter is not None else ("," if fmt == "csv" else "\x01")
    lines = text.splitlines()
    if fmt == "csv" and len(sep) == 1:
        rows = [tuple(r) for r in csv.reader(io.StringIO(text), delimiter=sep)]
    else:
        rows = [tuple(line.split(sep)) for line in lines]
    columns = tuple(rows.pop(0)) if header and rows else None
    return Table(columns, (), tuple(rows))


def _parse_xml(data: bytes) -> Table:
    """Rows: the elements that hold elements, deepest level (``<RECORDS><RECORD><c>v</c>...``); values their
    children's text (or attributes, where a row has no children)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(data)
    rows, columns = [], None
    for el in root.iter():
        children = list(el)
        if children and not any(list(c) for c in children):
            columns = columns or tuple(c.tag for c in children)
            rows.append(tuple(c.text for c in children))
        elif not children and el is not root and el.attrib and not el.text:
            columns = columns or tuple(el.attrib)
            rows.append(tuple(el.attrib.values()))
    return Table(columns, (), tuple(rows))


def _parse_excel(data: bytes, header: bool) -> Table:
    import openpyxl

    # not read_only: that mode trusts the sheet's recorded dimension, which some writers leave at A1
    sheet = openpyxl.load_workbook(io.BytesIO(data)).worksheets[0]
    rows = [tuple(_text(v) for v in r) for r in sheet.iter_rows(values_only=True)]
    columns = tuple(str(c) for c in rows.pop(0)) if header and rows else None
    return Table(columns, (), tuple(rows))


def _parse_json(data: bytes) -> Table:
    rows, columns = [], None
    for line in data.decode("utf-8").splitlines():
        if not line.strip():
            continue
        obj = json.loads(line, object_pairs_hook=list)
        keys = tuple(k for k, _ in obj)
        columns = columns or keys
        rows.append(tuple(_text(_plain_json(v)) for _, v in obj))
    return Table(columns, (), tuple(rows))


def _plain_json(value: Any) -> Any:
    if isinstance(value, list) and value and all(isinstance(i, list) and len(i) == 2 and isinstance(i[0], str)
                                                 for i in value):
        return {k: _plain_json(v) for k, v in value}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return value


def _parse_arrow(data: bytes, fmt: str) -> Table:
    import pyarrow as pa

    if fmt == "parquet":
        import pyarrow.parquet as pq
        table = pq.read_table(pa.BufferReader(data))
    else:
        import pyarrow.orc as orc
        table = orc.ORCFile(pa.BufferReader(data)).read()
    columns = tuple(table.column_names)
    types = tuple(str(f.type) for f in table.schema)
    rows = tuple(tuple(_text(v) for v in row.values()) for row in table.to_pylist())
    return Table(columns, types, rows)


def _text(value: Any) -> str | None:
    """A value as comparable text: timestamps with a zone in UTC without it (the zone is compared as a type),
    floats by ``repr``, containers as JSON."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, (date, Decimal)):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, default=_text, sort_keys=isinstance(value, dict))
    return str(value)


def compare_tables(zeta: Sequence[Table], ours: Sequence[Table], where: str = "target") -> list[Difference]:
    """Parsed files of each side: rows as multisets, the column names, the logical types per column."""
    diffs: list[Difference] = []
    zrows = Counter(r for t in zeta for r in t.rows)
    orows = Counter(r for t in ours for r in t.rows)
    if sum(zrows.values()) != sum(orows.values()):
        diffs.append(Difference("rows.count", where, f"zeta {sum(zrows.values())} rows, ours {sum(orows.values())}"))
    zc, oc = _first(t.columns for t in zeta), _first(t.columns for t in ours)
    if any(zrows) or any(orows):  # rows of values (a table reduced to its row count has empty rows)
        diffs += _row_diffs(zrows, orows, zc or oc, where)
    if zc is not None and oc is not None and zc != oc:
        aspect = "columns.order" if sorted(zc) == sorted(oc) else "columns.names"
        diffs.append(Difference(aspect, where, f"zeta {list(zc)}, ours {list(oc)}"))
    diffs += compare_types(zc or oc or (), _first(t.types for t in zeta) or (), _first(t.types for t in ours) or (),
                           where)
    return diffs


def _row_diffs(zeta: Counter, ours: Counter, columns: Sequence[str] | None, where: str) -> list[Difference]:
    """Rows that differ: per column (``rows.values`` naming the column: each cause a difference of its own) when
    both sides have as many rows of one width, else (or when only the rows' combinations differ) as whole rows."""
    if zeta == ours:
        return []
    widths = {len(r) for r in zeta} | {len(r) for r in ours}
    if sum(zeta.values()) == sum(ours.values()) and len(widths) == 1:
        width = widths.pop()
        names = list(columns) if columns and len(columns) == width else [str(i) for i in range(width)]
        diffs = []
        for i, name in enumerate(names):
            zc = Counter(v for r in zeta.elements() for v in (r[i],))
            oc = Counter(v for r in ours.elements() for v in (r[i],))
            if zc != oc:
                diffs.append(Difference("rows.values", where, f"column {name}: only zeta: {_sample(zc - oc)}; "
                                                              f"only ours: {_sample(oc - zc)}"))
        if diffs:
            return diffs
    return _multiset_diff("rows.values", where, zeta, ours)


def _first(values: Iterable[Any]) -> Any:
    return next((v for v in values if v), None)


def compare_types(columns: Sequence[str], zeta: Sequence[str], ours: Sequence[str], where: str) -> list[Difference]:
    """Logical types per column (parquet/orc schema, Jdbc column types); one difference per kind of change
    (``timestamp[ms, tz=UTC]`` vs ``timestamp[us]`` is ``types.timestamp``), naming the columns."""
    if not zeta or not ours or list(zeta) == list(ours):
        return []
    by_change: dict[tuple[str, str], list[str]] = {}
    names = list(columns) or [str(i) for i in range(max(len(zeta), len(ours)))]
    for i, name in enumerate(names):
        a = zeta[i] if i < len(zeta) else "-"
        b = ours[i] if i < len(ours) else "-"
        if a != b:
            by_change.setdefault((a, b), []).append(name)
    diffs = []
    for (a, b), cols in sorted(by_change.items()):
        family = "timestamp" if a.startswith("timestamp") and b.startswith("timestamp") else "type"
        diffs.append(Difference(f"types.{family}", where, f"zeta {a}, ours {b} ({', '.join(cols)})"))
    return diffs


Record = tuple[bytes | None, bytes | None]


def compare_records(zeta: Iterable[Record], ours: Iterable[Record], where: str) -> list[Difference]:
    """Kafka records as (key, value) multisets; where only the values' JSON key order or spacing differs, that is
    ``records.json-text``."""
    z, o = Counter(zeta), Counter(ours)
    if z == o:
        return []
    if Counter(_json_norm(r) for r in z.elements()) == Counter(_json_norm(r) for r in o.elements()):
        return [Difference("records.json-text", where, "same records as JSON values, different text")]
    return _multiset_diff("records.values", where, z, o)


def _json_norm(record: Record) -> tuple[str | None, ...]:
    out = []
    for part in record:
        try:
            out.append(None if part is None else json.dumps(json.loads(part), sort_keys=True))
        except ValueError:
            out.append(None if part is None else part.decode("utf-8", "replace"))
    return tuple(out)
