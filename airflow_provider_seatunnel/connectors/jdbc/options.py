"""A Jdbc block's options, declared once (:data:`SPEC`: the SQL family's connection options, then the
source's and the sink's, SeaTunnel's names and defaults), table placeholders, and what differs from
SeaTunnel (:data:`DEVIATIONS`). The masking of secrets is the SQL family's (:mod:`..sqlclient.options`).
The runtime reads a block's typed options with :func:`source_options` / :func:`sink_options`."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import TableKeys
from ..sqlclient.options import CONNECTION, DEFAULT_TIMEOUT_SEC, config_error, mask

DEVIATIONS = """\
* Exactly-once is always on and needs no XA: rows are staged in a table and moved into the target in
  one transaction with a commit-log row (seatunnel_commits). is_exactly_once, xa_data_source_class_name,
  max_commit_attempts and transaction_timeout_sec are accepted and not needed; auto_commit, max_retries
  and use_copy_statement are accepted and ignored (Spark's writer batches the staging rows).
* The sink's query must be an INSERT ... VALUES (...) statement (any trailing clause, e.g. ON CONFLICT,
  is kept): it runs set-based as INSERT ... SELECT from the staging table. Other statements cannot run.
* With primary_keys, the last change per key over the whole input wins (SeaTunnel keeps the last change
  per key per batch and applies the batches in order: the final table is the same).
* primary_keys are not taken from the upstream table's primary key: set them.
* Save modes run once per run, sink and target table inside the pipeline (a database row keeps retries
  and clones from repeating them); Zeta runs them once per job before any pipeline.
* CREATE_SCHEMA_WHEN_NOT_EXIST creates missing PostgreSQL schemas and databases and MySQL databases;
  column types come from Spark's types through the dialect's types (no lengths: strings get the
  dialect's unbounded string type, a bounded one in a key, except that on PostgreSQL a source's
  varchar(n)/char(n) is kept, as SeaTunnel keeps it); create_index = false creates the table
  without its primary key.
* The source's dynamic splitter makes ceil(rows / split.size) even splits over the key's range;
  SeaTunnel's sampling and distribution-factor options are accepted and not needed.
* Source time columns are read through Spark as timestamps and converted to time (microseconds).
* Map, row, and (outside PostgreSQL) array values are stored as JSON text (jsonb/json in created tables).
* MySQL string split keys hash with CRC32 (SeaTunnel's MySQL dialect uses MD5, whose hex text MySQL reads
  as a number by its leading digits); SQLite, without a hash function, buckets by length and last character.
* SQLite (which SeaTunnel writes without a catalog) gets the save modes too; its dates, times and timestamps
  are written and read as ISO text.
* Dialects other than PostgreSQL, MySQL/MariaDB and SQLite (Oracle, SQL Server, DB2 and the others
  SeaTunnel has) write SeaTunnel's SQL for them, set-based from the staging table (MERGE ... USING (SELECT
  ... FROM staging)), but are untested: no such server runs here. Where SeaTunnel has no native upsert
  for a database (it queries each key), the rows of the staged keys are deleted, then inserted.
* use_kerberos is not supported; decimal_type_narrowing is accepted and ignored.
* A source without query/table_path/table_list and a sink without query or generate_sink_sql = true still
  plan (SeaTunnel rejects them), so that existing DAGs parse; validate and run fail on them.
"""

SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")
FIELD_IDE = ("ORIGINAL", "UPPERCASE", "LOWERCASE")

DEFAULT_SCHEMA_SAVE_MODE = "CREATE_SCHEMA_WHEN_NOT_EXIST"
DEFAULT_DATA_SAVE_MODE = "APPEND_DATA"
DEFAULT_PARTITION_NUM = 10
DEFAULT_SPLIT_SIZE = 8096
DEFAULT_BATCH_SIZE = 1000
#: the block option naming an Airflow connection (url, user, password, driver)
CONN_OPTION = "jdbc_conn_id"
#: the days the sink's bookkeeping rows are kept by default (``bookkeeping_retention_days``)
DEFAULT_RETENTION_DAYS = 30
_ACCEPTED = "Accepted and not needed here."
_IGNORED = "Accepted and ignored."
_SPLIT = "The dynamic splitter makes even splits over the key's range: " + _ACCEPTED.lower()


def _source() -> tuple[Option, ...]:
    src = (SOURCE,)
    return (
        Option("table_path", identity=True, sections=src, description="The table read: [database.][schema.]table."),
        Option("table_list", "any", sections=src, description="Several tables: a list of blocks, each with its "
               "table_path or query and partition options."),
        Option("where_condition", sections=src, description="A WHERE clause applied to every table read."),
        Option("query_params", "list", sections=src, description="The values of the query's ? placeholders, in "
               "order: each written as a literal of its type (strings escaped), never as SQL text."),
        Option("partition_column", sections=src, description="The column the reads are split on."),
        Option("partition_num", "int", minimum=1, sections=src, description="The number of splits."),
        Option("partition_lower_bound", "any", sections=src, description="The split column's lowest value (a "
               "number)."),
        Option("partition_upper_bound", "any", sections=src, description="The split column's highest value (a "
               "number)."),
        Option("fetch_size", "int", 0, "Rows per round trip (0: the driver's default).", minimum=0, sections=src),
        Option("split.size", "int", DEFAULT_SPLIT_SIZE, "Rows per split of the dynamic splitter.", minimum=1,
               sections=src),
        *(Option(key, kind, default, _SPLIT, sections=src) for key, kind, default in (
            ("split.even-distribution.factor.upper-bound", "double", 100.0),
            ("split.even-distribution.factor.lower-bound", "double", 0.05),
            ("split.sample-sharding.threshold", "int", 1000), ("split.inverse-sampling.rate", "int", 1000),
            ("split.string_split_mode", "string", "sample"), ("split.string_split_mode_collate", "string", None))),
        Option("skip_analyze", "bool", False, _ACCEPTED, sections=src),
        Option("use_select_count", "bool", False, _ACCEPTED, sections=src),
        Option("handle_blob_as_string", "bool", False, _ACCEPTED, sections=src),
        Option("int_type_narrowing", "bool", True, _ACCEPTED, sections=src),
        Option("decimal_type_narrowing", "bool", True, _IGNORED, sections=src),
    )


def _sink() -> tuple[Option, ...]:
    snk = (SINK,)
    return (
        Option("database", identity=True, sections=snk, description="The target's database (generate_sink_sql)."),
        Option("table", identity=True, sections=snk, description="The target table, [schema.]table; may hold the "
               "upstream table's placeholders."),
        Option("schema", sections=snk, description="The target's schema, whatever table names."),
        Option("generate_sink_sql", "bool", False, "Write the statements from database, table and primary_keys.",
               sections=snk),
        Option("primary_keys", "list", sections=snk, description="The key columns: with them, the last change "
               "per key wins (upsert and delete)."),
        Option("enable_upsert", "bool", True, "Upsert by primary_keys.", sections=snk),
        Option("support_upsert_by_insert_only", "bool", False, "Insert only, even with primary_keys.", sections=snk),
        Option("is_primary_key_updated", "bool", True, _IGNORED, sections=snk),
        Option("support_upsert_by_query_primary_key_exist", "bool", False, _IGNORED, sections=snk),
        Option("create_index", "bool", True, "A created table gets its primary key.", sections=snk),
        Option("batch_size", "int", DEFAULT_BATCH_SIZE, "Rows per batch written.", minimum=1, sections=snk),
        Option("bookkeeping_retention_days", "int", DEFAULT_RETENTION_DAYS, "Days the commit log, fence, "
               "save-mode and schema-change rows next to the target are kept (0: forever); older ones are deleted "
               "at commit.", minimum=0, sections=snk),
        Option("is_exactly_once", "bool", False, "Exactly-once is always on here (no XA): " + _ACCEPTED.lower(),
               sections=snk),
        Option("xa_data_source_class_name", sections=snk, description=_ACCEPTED),
        Option("max_commit_attempts", "int", 3, _ACCEPTED, minimum=1, sections=snk),
        Option("transaction_timeout_sec", "int", -1, _ACCEPTED, sections=snk),
        Option("auto_commit", "bool", True, _IGNORED, sections=snk),
        Option("max_retries", "int", 0, _IGNORED, minimum=0, sections=snk),
        Option("use_copy_statement", "bool", False, _IGNORED, sections=snk),
        Option("schema_save_mode", "enum", DEFAULT_SCHEMA_SAVE_MODE, "What is done with a missing target table.",
               choices=SCHEMA_SAVE_MODES, sections=snk),
        Option("data_save_mode", "enum", DEFAULT_DATA_SAVE_MODE, "What is done with the target's rows first.",
               choices=DATA_SAVE_MODES, sections=snk),
        Option("save_mode_create_template", sections=snk, description="Accepted and not used: a created table's "
               "columns come from the input's types through the dialect."),
        Option("custom_sql", sections=snk, description="The statement run with data_save_mode = CUSTOM_PROCESSING "
               "(required then)."),
    )


SPEC = OptionSpec((
    *CONNECTION,
    Option(CONN_OPTION, identity=True, description="An Airflow connection: url, user, password and driver."),
    Option("field_ide", "enum", "ORIGINAL", "The case of generated identifiers.", choices=FIELD_IDE),
    *_source(),
    *_sink(),
    Option("query", identity=True, description="Source: the SELECT read; sink: an INSERT ... VALUES (?, ...) "
           "statement (or generate_sink_sql)."),
))


def source_options(config: Mapping[str, Any]) -> ParsedOptions:
    """A source block's (or ``table_list`` item's) typed options; ``RuntimeConfigError`` for a wrong one."""
    return SPEC.run_time(config, SOURCE)


def sink_options(config: Mapping[str, Any]) -> ParsedOptions:
    """A sink block's typed options; ``RuntimeConfigError`` for a wrong one."""
    return SPEC.run_time(config, SINK)


def text(value: Any) -> str | None:
    """A text value stripped; None when unset or blank."""
    return None if value is None else str(value).strip() or None


def to_decimal(value: Any) -> Decimal | None:
    """A finite number from an option value (text or number); None for anything else."""
    if value is None or isinstance(value, bool):
        return None
    try:
        parsed = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return parsed if parsed.is_finite() else None


def table_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None = None,
                 keys: TableKeys | None = None) -> dict:
    """The block's options for one upstream table: every top-level string has the table's
    placeholders expanded (``${table_name}``...), as the LocalFile sink expands them, and
    ``primary_keys = ["${primary_key}"]`` (``${unique_key}``, ``${field_names}``) means the table's
    key columns (``keys``: its catalog keys), or every field."""
    from ..files.placeholders import table_config as expanded

    return expanded(config, table_key, field_names, keys)


__all__ = ["CONN_OPTION", "DATA_SAVE_MODES", "DEFAULT_BATCH_SIZE", "DEFAULT_DATA_SAVE_MODE", "DEFAULT_PARTITION_NUM",
           "DEFAULT_RETENTION_DAYS", "DEFAULT_SCHEMA_SAVE_MODE", "DEFAULT_SPLIT_SIZE", "DEFAULT_TIMEOUT_SEC",
           "DEVIATIONS", "FIELD_IDE",
           "SCHEMA_SAVE_MODES", "SPEC", "config_error", "mask", "sink_options", "source_options", "table_config",
           "text", "to_decimal"]
