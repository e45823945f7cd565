"""Placeholders in LocalFile options: table placeholders (``${table_name}``, ``${database_name}``...)
expanded per table in every top-level string option (and a one-item list of ``${primary_key}``,
``${unique_key}`` or ``${field_names}``: the columns); the file name's ``${transactionId}``, ``${uuid}``
and ``${now}`` (rendered with the Java pattern ``filename_time_format``); a partition directory's
``${k0}``/``${v0}``; and the asset a path stands for."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ...spi import UNRENDERED, Unnamed
from ...spi.options import lookup, option
from ...spi.schema import TableKeys, table_keys
from .options import written

#: the directory name of a partition whose value is null (Hive's)
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

TABLE_PLACEHOLDER = re.compile(r"\$\{(database_name|schema_name|table_name|schema_full_name|table_full_name|"
                               r"field_names|primary_key|unique_key)(?::([^}]*))?\}")
#: the placeholders that stand for columns: unknown (no field names, no keys given), or a table
#: without such a key, they stay as written, as SeaTunnel leaves them
_COLUMN_PLACEHOLDERS = ("field_names", "primary_key", "unique_key")


def table_parts(table_key: str) -> tuple[str | None, str | None, str]:
    """(database, schema, table) of a table id: ``t``, ``db.t`` or ``db.schema.t``."""
    parts = str(table_key).split(".")
    if len(parts) == 1:
        return None, None, parts[0]
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], ".".join(parts[1:-1]), parts[-1]


def key_columns(keys: TableKeys | None) -> dict[str, str | None]:
    """``${primary_key}`` and ``${unique_key}`` of a table's keys: the primary key's columns and the
    first UNIQUE_KEY's, comma-separated (None: no such key, or ``keys`` unknown)."""
    if keys is None:
        return {"primary_key": None, "unique_key": None}
    unique = next((k for k in keys.constraint_keys if k.type == "UNIQUE_KEY" and k.columns), None)
    return {"primary_key": ",".join(keys.primary_key[1]) if keys.primary_key and keys.primary_key[1] else None,
            "unique_key": ",".join(c for c, _ in unique.columns) if unique is not None else None}


def expand_table_placeholders(text: str, table_key: str, field_names: list[str] | None = None,
                              keys: TableKeys | None = None) -> str:
    """``text`` with the table placeholders of ``table_key`` replaced (``${table_name:default}`` too;
    ``keys``: the table's catalog keys, for ``${primary_key}`` and ``${unique_key}``)."""
    database, schema, table = table_parts(table_key)
    known = [p for p in (database, schema) if p]
    values: dict[str, str | None] = {
        "database_name": database, "schema_name": schema, "table_name": table,
        "schema_full_name": ".".join(known) if known else None,
        "table_full_name": ".".join([*known, table]),
        "field_names": ",".join(field_names) if field_names is not None else None,
        **key_columns(keys),
    }

    def sub(m: re.Match) -> str:
        value = values[m.group(1)]
        if m.group(1) in _COLUMN_PLACEHOLDERS and value is None:
            return m.group(0)
        if value:
            return value
        return m.group(2).strip() if m.group(2) is not None else ""

    return TABLE_PLACEHOLDER.sub(sub, text)


def table_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None = None,
                 keys: TableKeys | None = None) -> dict:
    """The sink's options for one table: top-level strings with table placeholders expanded, and a
    list of one item that is exactly ``${primary_key}``, ``${unique_key}`` or ``${field_names}``
    replaced by those columns (``primary_keys = ["${primary_key}"]``) where they are known."""
    out: dict[str, Any] = {}
    for k, v in config.items():
        if isinstance(v, str):
            v = expand_table_placeholders(v, table_key, field_names, keys)
        elif isinstance(v, list) and len(v) == 1 and isinstance(v[0], str):
            whole = TABLE_PLACEHOLDER.fullmatch(v[0].strip())
            if whole is not None and whole.group(1) in _COLUMN_PLACEHOLDERS and whole.group(2) is None:
                expanded = expand_table_placeholders(v[0].strip(), table_key, field_names, keys)
                v = expanded.split(",") if expanded != v[0].strip() else v
        out[k] = v
    return out


def sink_table_config(vertex: Any, table_key: str, field_names: list[str] | None = None) -> dict:
    """A file sink's options for one table (:func:`table_config`) with the keys the plan carries to the
    sink: the same keys at the write, the commit and a restore, so a path naming ``${primary_key}``
    is one directory throughout (keys a source reads only at run time are not known here)."""
    return table_config(vertex.config, table_key, field_names, table_keys(vertex, table_key))


#: what is left of a template or a placeholder in a path: Jinja's ``{{ }}``/``{% %}``, ``${...}``
#: what a path cannot hold as it is in its file URI (the rest stays as written, as Airflow's file assets do)
_URI_ESCAPES = {"%": "%25", "#": "%23", "?": "%3F"}


def assets(options: Mapping[str, Any]) -> list[str | Unnamed]:
    """The file URI of the data ``path`` (or each ``tables_configs`` item's) names:
    ``file:///abs/path``, normalized (``%``, ``#`` and ``?`` percent-encoded). A path that still holds
    a template or placeholder (``{{ ds }}``, ``${table_name}``) is named once the task renders it
    (or per table, :func:`table_assets`): an :class:`Unnamed`, never the path cut before it. A
    relative path names nothing (the directory Spark's driver runs in decides)."""
    items = lookup(options, "tables_configs")
    blocks = [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) and items else [options]
    out: list[str | Unnamed] = []
    for block in blocks:
        path = option(block, "path")
        if path is None or not str(path).strip():
            continue
        found = _file_uri(str(path).strip())
        if found not in out:
            out.append(found)
    return out


def store_assets(options: Mapping[str, Any], place_key: str,
                 uri: Callable[[Any, Any], str | None]) -> list[str | Unnamed]:
    """The one asset of a file store's block: ``uri(place, path)`` of its ``place_key`` option (the file
    system, server or bucket, as written) and its ``path``; nothing while either is unset (or ``uri`` names
    none), an :class:`Unnamed` while they hold a template or placeholder."""
    place, path = written(options, place_key), written(options, "path")
    if place is None or path is None:
        return []
    text = f"{place}{path}"
    if UNRENDERED.search(text):
        return [Unnamed(f"path {text!r}")]
    named = uri(place, path)
    return [] if named is None else [named]


def table_assets(options: Mapping[str, Any], table: str) -> list[str | Unnamed]:
    """What the sink writes for the upstream table ``table``: its options with the table's
    placeholders expanded."""
    return assets(table_config(options, table))


def _file_uri(text: str) -> str | Unnamed:
    if text.startswith("file://"):
        text = text[len("file://"):]
    elif text.startswith("file:"):
        text = "/" + text[len("file:"):].lstrip("/")
    if UNRENDERED.search(text):
        return Unnamed(f"path {text!r}", at_run_time=True)
    text = os.path.expanduser(text)
    if not os.path.isabs(text):
        return Unnamed(f"relative path {text!r} (give an absolute path)", at_run_time=False)
    path = os.path.normpath(text).replace("//", "/")
    return "file://" + "".join(_URI_ESCAPES.get(c, c) for c in path)


# ---------------------------------------------------------------------------------------------
# File and partition directory names
# ---------------------------------------------------------------------------------------------

def file_base_name(opts: Mapping[str, Any], transaction: str, now: datetime, unique: str) -> str:
    """``file_name_expression`` with ``${transactionId}``, ``${uuid}`` and ``${now}`` replaced."""
    values = {"transactionId": transaction, "uuid": unique,
              "now": format_java_datetime(opts["filename_time_format"], now)}
    return re.sub(r"\$\{(transactionId|uuid|now)\}", lambda m: values[m.group(1)], opts["file_name_expression"])


def partition_dir(expression: str | None, names: list[str], values: list[str | None]) -> str:
    """The directory of one partition: ``k=v/`` per field, or ``partition_dir_expression`` with
    ``${k0}``, ``${v0}``... replaced. A null value is Hive's default partition."""
    # ':' in a path segment breaks Hadoop paths (Spark could not read the files): escaped as Hive does
    rendered = [HIVE_NULL if v is None else v.replace(":", "%3A") for v in values]
    if not expression:
        return "".join(f"{k}={v}/" for k, v in zip(names, rendered, strict=True))
    mapping = {f"k{i}": k for i, k in enumerate(names)} | {f"v{i}": v for i, v in enumerate(rendered)}
    return re.sub(r"\$\{(k\d+|v\d+)\}", lambda m: mapping.get(m.group(1), m.group(0)), str(expression))


def unescape_partition(text: str) -> str | None:
    """A Spark partition directory value back to the written string (None for null)."""
    if text == HIVE_NULL:
        return None
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


# ---------------------------------------------------------------------------------------------
# Java date-time patterns (filename_time_format)
# ---------------------------------------------------------------------------------------------

_JAVA_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)
_JAVA_LETTERS = set("yuMLdDHkKhmsSaEn")


def java_pattern_problem(pattern: str) -> str | None:
    """Why a Java DateTimeFormatter pattern cannot be rendered here, or None."""
    for m in _JAVA_TOKEN.finditer(pattern):
        token = m.group(0)
        if token[0].isalpha() and token[0] not in _JAVA_LETTERS:
            return f"unsupported pattern letter {token[0]!r} in {pattern!r}"
        if token.startswith("'") and (len(token) < 2 or not token.endswith("'")):
            return f"unterminated quote in {pattern!r}"
    return None


def _zero_padded(letter: str, moment: datetime) -> int | None:
    """The number a letter renders zero-padded to the token's length, None for other letters."""
    numbers = {"d": moment.day, "D": moment.timetuple().tm_yday, "H": moment.hour, "k": moment.hour or 24,
               "K": moment.hour % 12, "h": moment.hour % 12 or 12, "m": moment.minute, "s": moment.second,
               "n": moment.microsecond * 1000}
    return numbers.get(letter)


def _java_token(token: str, moment: datetime, pattern: str) -> str:
    """One token of a Java pattern rendered (a letter run, a quoted literal or another character)."""
    letter, n = token[0], len(token)
    if token.startswith("'"):
        return token[1:-1].replace("''", "'") if n > 1 else "'"
    if not letter.isalpha():
        return token
    padded = _zero_padded(letter, moment)
    if padded is not None:
        return str(padded).zfill(n)
    if letter in "yu":
        return moment.strftime("%y") if n == 2 else str(moment.year).zfill(n)
    if letter in "ML":
        return moment.strftime("%B") if n >= 4 else moment.strftime("%b") if n == 3 else str(moment.month).zfill(n)
    if letter == "S":
        return f"{moment.microsecond:06d}000"[:n].ljust(n, "0")
    if letter == "a":
        return moment.strftime("%p")
    if letter == "E":
        return moment.strftime("%A") if n >= 4 else moment.strftime("%a")
    raise ValueError(f"unsupported pattern letter {letter!r} in {pattern!r}")


def format_java_datetime(pattern: str, moment: datetime) -> str:
    """``moment`` rendered with a Java DateTimeFormatter pattern (``yyyy.MM.dd`` → ``2024.01.31``).

    Letters are translated to their Python ``strftime`` meaning (y→%Y, MM→%m, dd→%d, HH→%H,
    mm→%M, ss→%S, ...); fractions (S), unpadded numbers and quoted literals are rendered directly.
    """
    return "".join(_java_token(m.group(0), moment, pattern) for m in _JAVA_TOKEN.finditer(pattern))
