"""Reading a Jdbc block: option values with their defaults, enumerations, table placeholders,
and what differs from SeaTunnel (:data:`DEVIATIONS`). The readers of single values and the masking
of secrets are the SQL family's (:mod:`..sqlclient.options`)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ...spi.options import as_list
from ..sqlclient.options import DEFAULT_TIMEOUT_SEC, config_error, mask, opt, opt_bool, opt_int, opt_text

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
  dialect's unbounded string type, a bounded one in a key); create_index = false creates the table
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


def to_decimal(value: Any) -> Decimal | None:
    """A finite number from an option value (text or number); None for anything else."""
    if value is None or isinstance(value, bool):
        return None
    try:
        parsed = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return parsed if parsed.is_finite() else None


def opt_mode(config: Mapping[str, Any], key: str, default: str, allowed: tuple[str, ...]) -> str:
    """An enumerated option, upper-cased; RuntimeConfigError for a value not in ``allowed``."""
    value = str(opt(config, key, default)).strip().upper()
    if value not in allowed:
        raise config_error(f"unknown {key} {value!r}: use one of {', '.join(allowed)}")
    return value


def schema_save_mode(config: Mapping[str, Any]) -> str:
    return opt_mode(config, "schema_save_mode", DEFAULT_SCHEMA_SAVE_MODE, SCHEMA_SAVE_MODES)


def data_save_mode(config: Mapping[str, Any]) -> str:
    return opt_mode(config, "data_save_mode", DEFAULT_DATA_SAVE_MODE, DATA_SAVE_MODES)


def table_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None = None) -> dict:
    """The block's options for one upstream table: every top-level string has the table's
    placeholders expanded (``${table_name}``...), as the LocalFile sink expands them, and
    ``primary_keys = ["${field_names}"]`` means every field."""
    from ..files.placeholders import expand_table_placeholders

    out = {k: expand_table_placeholders(v, table_key, field_names) if isinstance(v, str) else v
           for k, v in config.items()}
    keys = as_list(out.get("primary_keys"))
    if len(keys) == 1 and str(keys[0]).strip() == "${field_names}" and field_names is not None:
        out["primary_keys"] = list(field_names)
    return out


__all__ = ["DATA_SAVE_MODES", "DEFAULT_BATCH_SIZE", "DEFAULT_DATA_SAVE_MODE", "DEFAULT_PARTITION_NUM",
           "DEFAULT_SCHEMA_SAVE_MODE", "DEFAULT_SPLIT_SIZE", "DEFAULT_TIMEOUT_SEC", "DEVIATIONS", "FIELD_IDE",
           "SCHEMA_SAVE_MODES", "config_error", "data_save_mode", "mask", "opt", "opt_bool", "opt_int", "opt_mode",
           "opt_text", "schema_save_mode", "table_config", "to_decimal"]
