"""Delta options, declared once (:data:`SPEC`) and read once for both phases (named as SeaTunnel's
lakehouse connectors, Paimon and Iceberg, name theirs: SeaTunnel has no Delta connector).

:func:`source_options` and :func:`sink_options` turn a block, typed by :data:`SPEC`, into
:class:`SourceOptions` / :class:`SinkOptions` or raise :class:`OptionError` naming the key for a rule
the declaration cannot state (the compile-time check makes it a located problem, the run a
``RuntimeConfigError``).

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

from ...spi import SINK, SOURCE
from ...spi.options import OptionError, as_int
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ..lakehouse.options import (
    PLACEHOLDER,
    SinkKeys,
    column_names,
    common_options,
    exclusive,
    placeholder_free,
    settings_map,
)

__all__ = ["SPEC", "OptionError", "SinkOptions", "SourceOptions", "Table", "parse", "sink_options", "source_options"]

NAME = "Delta"
WRITE_PROPS = "delta.table.write-props"
#: a table property Delta takes from a DataFrame writer's options when the write creates the table
PROPERTY_PREFIX = "delta."
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$")

SPEC = OptionSpec((
    Option("path", identity=True, allow_blank=False, description="The table's directory (a local path or a URI "
           "Spark's Hadoop reaches); or warehouse, database and table."),
    Option("warehouse", identity=True, allow_blank=False, description="The warehouse the table is "
           "<warehouse>/<database>.db/<table> in (without path)."),
    Option("database", identity=True, allow_blank=False, description="The table's database (with warehouse)."),
    Option("table", identity=True, allow_blank=False, description="The table's name (with warehouse)."),
    *common_options("read_columns and the sink's keys"),
    Option("read_columns", "list", description="The columns read, in their order.", sections=(SOURCE,)),
    Option("use_version", "long", description="BATCH time travel: the table version read.", sections=(SOURCE,)),
    Option("use_timestamp", "any", description="BATCH time travel: the table as of epoch milliseconds or a "
           "timestamp text (UTC).", sections=(SOURCE,)),
    Option("start_version", description="STREAMING: the version (or latest) a new stream starts at.",
           sections=(SOURCE,)),
    Option("start_timestamp", "any", description="STREAMING: the time a new stream starts at.", sections=(SOURCE,)),
    Option("skip_change_commits", "bool", False, "STREAMING: skip commits that rewrite rows (otherwise they fail "
           "the stream).", sections=(SOURCE,)),
    Option("change_data_feed", "bool", False, "STREAMING: read the table's change data feed, with row kinds.",
           sections=(SOURCE,)),
    Option("primary_keys", "list", description="Upserts: a row replaces the table's row of its key, DELETE rows "
           "delete it.", sections=(SINK,)),
    Option("partition_keys", "list", description="The partition columns of a table the sink creates.",
           sections=(SINK,)),
    Option(WRITE_PROPS, "map", description="Table properties (delta.* keys) of a table the sink creates.",
           sections=(SINK,)),
))


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
class SinkOptions(SinkKeys):
    table: Table
    properties: Mapping[str, str] = field(default_factory=dict)


def _location(text: str, key: str, placeholders: bool) -> str:
    if not placeholders:
        placeholder_free(key, text)
    bare = PLACEHOLDER.sub("x", text)
    if "{{" in bare or "{%" in bare:  # an Airflow template: checked once the task renders it
        return text
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", bare) and not bare.startswith("/"):
        raise OptionError(key, f"{key} '{text}' must be an absolute path or a URI",
                          f'{key} = "/data/delta/orders" (or "s3a://bucket/orders")')
    return text


def _text(o: ParsedOptions, key: str) -> str | None:
    value = o[key]
    return None if value is None else value.strip()


def table_of(o: ParsedOptions, placeholders: bool = False) -> Table:
    """``path``, or ``warehouse`` + ``database`` + ``table``: exactly one of the two forms."""
    path, warehouse, database, name = (_text(o, k) for k in ("path", "warehouse", "database", "table"))
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


def _version(o: ParsedOptions, key: str, latest: bool = False) -> str | None:
    value = o[key]
    if value is None:
        return None
    if latest and str(value).strip().lower() == "latest":
        return "latest"
    number = as_int(value)
    if number is None or number < 0:
        raise OptionError(key, f"{key} must be a table version (an integer >= 0)"
                               + (" or latest" if latest else "") + f", found {value!r}")
    return str(number)


def timestamp_text(o: ParsedOptions, key: str) -> str | None:
    """A timestamp option as Delta reads ``timestampAsOf``/``startingTimestamp``: epoch milliseconds
    become UTC text; a text must be ``YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]`` (read in UTC, the pipelines'
    session time zone)."""
    value = o[key]
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


def source_options(options: Mapping[str, Any]) -> SourceOptions:
    """A source block, checked."""
    o = SPEC.parse(options, SOURCE)
    table = table_of(o)
    columns = column_names(o, "read_columns")
    exclusive(o, "use_version", "use_timestamp")
    exclusive(o, "start_version", "start_timestamp")
    version = _version(o, "use_version")
    return SourceOptions(table, o["case_sensitive"], columns, int(version) if version is not None else None,
                         timestamp_text(o, "use_timestamp"), _version(o, "start_version", latest=True),
                         timestamp_text(o, "start_timestamp"), o["skip_change_commits"], o["change_data_feed"])


def _properties(o: ParsedOptions) -> dict[str, str]:
    hint = f'{WRITE_PROPS} = {{ "delta.enableChangeDataFeed" = "true" }}'
    message = f"{WRITE_PROPS}: '{{name}}' is not a Delta table property (delta.* = a value)"
    given = o[WRITE_PROPS] or {}
    outside = next((key for key in given if not str(key).startswith(PROPERTY_PREFIX)), None)
    if outside is not None:
        raise OptionError(WRITE_PROPS, message.format(name=outside), hint)
    return settings_map(given, WRITE_PROPS, message, hint)


def sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """A sink block, checked."""
    o = SPEC.parse(options, SINK)
    table = table_of(o, placeholders=True)
    keys, partitions = column_names(o, "primary_keys"), column_names(o, "partition_keys")
    return SinkOptions(table, _properties(o), case_sensitive=o["case_sensitive"], primary_keys=keys,
                       partition_keys=partitions, schema_save_mode=o["schema_save_mode"],
                       data_save_mode=o["data_save_mode"])


def parse(options: Mapping[str, Any], section: str) -> SourceOptions | SinkOptions:
    return sink_options(options) if section == SINK else source_options(options)
