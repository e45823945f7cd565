"""A Hive table as the metastore describes it, read through the Spark session's catalog."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .options import (
    CATALOG_KEY,
    INPUT_FORMATS,
    config_error,
    partition_clause,
    partition_values,
    quote_ident,
)


@dataclass(frozen=True)
class TableInfo:
    """``database.table``: its location (a Hadoop URI), format (text, parquet, orc), columns."""

    database: str
    table: str
    location: str
    format: str
    data_columns: tuple[str, ...]
    partition_columns: tuple[str, ...]

    @property
    def qualified(self) -> str:
        return f"{quote_ident(self.database)}.{quote_ident(self.table)}"

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"


def require_hive(spark: Any) -> None:
    """The session has Hive support (the runtime builds it so for a plan with a Hive block)."""
    if spark.conf.get(CATALOG_KEY, "in-memory") != "hive":
        raise config_error(f"the Spark session has no Hive support ({CATALOG_KEY} is not hive): run the job "
                           "through this package's runtime, which builds the session from the plan")


def _not_found(e: Exception) -> bool:
    text = str(e)
    return "TABLE_OR_VIEW_NOT_FOUND" in text or "SCHEMA_NOT_FOUND" in text or "NoSuchTable" in text


def describe(spark: Any, database: str, table: str) -> TableInfo:
    """The table's metadata; a RuntimeConfigError when it does not exist or is not a Hive table of
    a format SeaTunnel reads and writes (text, parquet, orc)."""
    qualified = f"{quote_ident(database)}.{quote_ident(table)}"
    try:
        rows = spark.sql(f"DESCRIBE FORMATTED {qualified}").collect()
        columns = spark.catalog.listColumns(f"{database}.{table}")
    except Exception as e:
        if _not_found(e):
            raise config_error(f"the Hive table {database}.{table} does not exist in the metastore (the Hive "
                               "connector reads and writes existing tables: create it in Hive first)") from None
        raise
    facts = {str(r[0]).strip(): str(r[1]).strip() for r in rows if r[0] is not None and r[1] is not None}
    provider = facts.get("Provider", "hive").lower()
    input_format = facts.get("InputFormat", "")
    fmt = INPUT_FORMATS.get(input_format)
    if provider != "hive" or fmt is None:
        raise config_error(f"{database}.{table} is a {provider} table with InputFormat {input_format or 'none'}: "
                           "the Hive connector reads and writes Hive text, parquet and orc tables")
    return TableInfo(database, table, facts.get("Location", ""), fmt,
                     tuple(c.name for c in columns if not c.isPartition),
                     tuple(c.name for c in columns if c.isPartition))


def partitions(spark: Any, info: TableInfo) -> set[str]:
    """The table's partitions as their directory names (``k=v/k2=v2``, escaped as Hive does)."""
    if not info.partition_columns:
        return set()
    return {str(r[0]) for r in spark.sql(f"SHOW PARTITIONS {info.qualified}").collect()}


def partition_location(spark: Any, info: TableInfo, directory: str) -> str:
    """The location the metastore gives an existing partition (it may lie outside the table's)."""
    clause = partition_clause(partition_values(directory))
    rows = spark.sql(f"DESCRIBE FORMATTED {info.qualified} {clause}").collect()
    for r in rows:
        if r[0] is not None and str(r[0]).strip() == "Location":
            return str(r[1]).strip()
    return info.location.rstrip("/") + "/" + directory
