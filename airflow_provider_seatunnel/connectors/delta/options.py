"""Delta options, read once for both phases (named as SeaTunnel's lakehouse connectors, Paimon and
Iceberg, name theirs: SeaTunnel has no Delta connector).

:func:`source_options` and :func:`sink_options` turn a block into :class:`SourceOptions` /
:class:`SinkOptions` or raise :class:`OptionError` naming the key (the compile-time check makes it a
located problem, the run a ``RuntimeConfigError``).

The table, one of:

* ``path``: the table's directory (a local path or any URI Spark's Hadoop reaches: ``s3a://``, ``hdfs://``);
* ``warehouse`` + ``database`` + ``table``: the table ``<warehouse>/<database>.db/<table>``, Paimon's
  file-system layout. A sink's ``path``, ``database`` and ``table`` may hold the upstream table's
  placeholders (``${database_name}``, ``${table_name}``...), expanded per table.

Both: ``case_sensitive`` (false): whether ``read_columns`` and the sink's keys match the table's
columns in case.

Source: ``read_columns`` (a projection, in its order); time travel ``use_version`` (a table version)
or ``use_timestamp`` (epoch milliseconds, or a timestamp text such as ``2024-05-06 10:00:00``, UTC)
in BATCH, as Iceberg's source names ``use_snapshot_id``/``use_snapshot_timestamp``. STREAMING:
``start_version`` (a version, or ``latest``) or ``start_timestamp`` where a new stream starts (by
default the table as it is, then every commit after it), ``skip_change_commits`` (false: a commit
that rewrites rows, an update, delete or MERGE, fails the stream, as Delta's streaming source does;
true: such commits are skipped), ``change_data_feed`` (false; true: the table's change data feed,
with row kinds, for tables written with ``delta.enableChangeDataFeed``).

Sink: ``primary_keys`` (upserts: a row replaces the table's row of its key, DELETE rows delete it),
``partition_keys`` (the partition columns of a table the sink creates), ``schema_save_mode``
(``CREATE_SCHEMA_WHEN_NOT_EXIST``), ``data_save_mode`` (``APPEND_DATA``),
``delta.table.write-props`` (table properties of a table the sink creates, ``delta.*`` keys).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...spi.options import (
    OptionError,
    as_int,
    bool_option,
    choice_option,
    names_option,
    text_option,
)
from ...spi.options import option as opt

__all__ = ["OptionError", "SinkOptions", "SourceOptions", "Table", "parse", "sink_options", "source_options"]

NAME = "Delta"
SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")
WRITE_PROPS = "delta.table.write-props"
#: a table property Delta takes from a DataFrame writer's options when the write creates the table
PROPERTY_PREFIX = "delta."
#: the placeholders a sink's table options may hold (the upstream table's names)
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$")


@dataclass(frozen=True)
class Table:
    """Where the table is: ``path``, or ``warehouse`` + ``database`` + ``table`` (as written; a sink's
    may hold placeholders)."""

    path: str | None = None
    warehouse: str | None = None
    database: str | None = None
    table: str | None = None

    def location(self) -> str:
        """The table's directory: ``path``, or ``<warehouse>/<database>.db/<table>``."""
        if self.path is not None:
            return self.path
        return f"{str(self.warehouse).rstrip('/')}/{self.database}.db/{self.table}"


@dataclass(frozen=True)
class SourceOptions:
    table: Table
    case_sensitive: bool = False
    read_columns: tuple[str, ...] = ()
    version: int | None = None  # use_version
    timestamp: str | None = None  # use_timestamp, as Delta's timestampAsOf reads it
    start_version: str | None = None  # a number or "latest"
    start_timestamp: str | None = None
    skip_change_commits: bool = False
    change_data_feed: bool = False


@dataclass(frozen=True)
class SinkOptions:
    table: Table
    case_sensitive: bool = False
    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    schema_save_mode: str = "CREATE_SCHEMA_WHEN_NOT_EXIST"
    data_save_mode: str = "APPEND_DATA"
    properties: Mapping[str, str] = field(default_factory=dict)










def _location(text: str, key: str, placeholders: bool) -> str:
    if not placeholders and PLACEHOLDER.search(text):
        raise OptionError(key, f"{key} '{text}' holds a placeholder: only a sink's table options are expanded "
                               "per upstream table")
    bare = PLACEHOLDER.sub("x", text)
    if "{{" in bare or "{%" in bare:  # an Airflow template: checked once the task renders it
        return text
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", bare) and not bare.startswith("/"):
        raise OptionError(key, f"{key} '{text}' must be an absolute path or a URI",
                          f'{key} = "/data/delta/orders" (or "s3a://bucket/orders")')
    return text


def table_of(options: Mapping[str, Any], placeholders: bool = False) -> Table:
    """``path``, or ``warehouse`` + ``database`` + ``table``: exactly one of the two forms."""
    path, warehouse = text_option(options, "path"), text_option(options, "warehouse")
    database, name = text_option(options, "database"), text_option(options, "table")
    if path is not None and (warehouse or database or name):
        extra = next(k for k, v in (("warehouse", warehouse), ("database", database), ("table", name)) if v)
        raise OptionError(extra, f"set either path or warehouse, database and table, not both ({extra} is set)",
                          "keep one form")
    if path is not None:
        return Table(path=_location(path, "path", placeholders))
    if warehouse is None:
        raise OptionError("path", "the table is not named: set path, or warehouse, database and table",
                          'path = "/data/delta/orders"')
    for key, value in (("database", database), ("table", name)):
        if value is None:
            raise OptionError(key, f"warehouse needs {key} too (the table is <warehouse>/<database>.db/<table>)",
                              f'{key} = "..."')
        if "/" in value.strip("/") or value in (".", ".."):
            raise OptionError(key, f"{key} '{value}' must be a name, not a path")
    return Table(warehouse=_location(warehouse, "warehouse", placeholders), database=database, table=name)


def _version(options: Mapping[str, Any], key: str, latest: bool = False) -> str | None:
    value = opt(options, key)
    if value is None:
        return None
    if latest and str(value).strip().lower() == "latest":
        return "latest"
    number = as_int(value)
    if number is None or number < 0:
        raise OptionError(key, f"{key} must be a table version (an integer >= 0)"
                               + (" or latest" if latest else "") + f", found {value!r}")
    return str(number)


def timestamp_text(options: Mapping[str, Any], key: str) -> str | None:
    """A timestamp option as Delta reads ``timestampAsOf``/``startingTimestamp``: epoch milliseconds
    become UTC text; a text must be ``YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]`` (read in UTC, the pipelines'
    session time zone)."""
    value = opt(options, key)
    if value is None:
        return None
    millis = as_int(value)
    if millis is not None:
        if millis < 0:
            raise OptionError(key, f"{key} must be epoch milliseconds >= 0, found {value!r}")
        moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    text = str(value).strip()
    if not _TIMESTAMP.match(text):
        raise OptionError(key, f"{key} must be epoch milliseconds or a timestamp such as 2024-05-06 10:00:00, "
                               f"found {value!r}")
    return text


def _exclusive(options: Mapping[str, Any], *keys: str) -> None:
    given = [k for k in keys if opt(options, k) is not None]
    if len(given) > 1:
        raise OptionError(given[-1], f"{' and '.join(given)} exclude each other", "keep one of them")


def source_options(options: Mapping[str, Any]) -> SourceOptions:
    """A source block, checked."""
    table = table_of(options)
    columns = names_option(options, "read_columns")
    _exclusive(options, "use_version", "use_timestamp")
    _exclusive(options, "start_version", "start_timestamp")
    version = _version(options, "use_version")
    return SourceOptions(table, bool_option(options, "case_sensitive", False), columns,
                         int(version) if version is not None else None, timestamp_text(options, "use_timestamp"),
                         _version(options, "start_version", latest=True), timestamp_text(options, "start_timestamp"),
                         bool_option(options, "skip_change_commits", False),
                         bool_option(options, "change_data_feed", False))


def _properties(options: Mapping[str, Any]) -> dict[str, str]:
    value = opt(options, WRITE_PROPS)
    if value is None:
        return {}
    hint = f'{WRITE_PROPS} = {{ "delta.enableChangeDataFeed" = "true" }}'
    if not isinstance(value, Mapping):
        raise OptionError(WRITE_PROPS, f"{WRITE_PROPS} must be a map of table properties", hint)
    out: dict[str, str] = {}
    for key, item in value.items():
        if not str(key).startswith(PROPERTY_PREFIX) or isinstance(item, (Mapping, list)):
            raise OptionError(WRITE_PROPS, f"{WRITE_PROPS}: '{key}' is not a Delta table property (delta.* = a "
                                           "value)", hint)
        out[str(key)] = ("true" if item else "false") if isinstance(item, bool) else str(item)
    return out


def sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """A sink block, checked."""
    table = table_of(options, placeholders=True)
    keys, partitions = names_option(options, "primary_keys"), names_option(options, "partition_keys")
    data_mode = choice_option(options, "data_save_mode", DATA_SAVE_MODES, "APPEND_DATA")
    return SinkOptions(table, bool_option(options, "case_sensitive", False), keys, partitions,
                       choice_option(options, "schema_save_mode", SCHEMA_SAVE_MODES, "CREATE_SCHEMA_WHEN_NOT_EXIST"),
                       data_mode, _properties(options))


def parse(options: Mapping[str, Any], section: str) -> SourceOptions | SinkOptions:
    return sink_options(options) if section == "sink" else source_options(options)
