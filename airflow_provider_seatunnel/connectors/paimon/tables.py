"""Paimon tables through pypaimon on the driver: the catalog, a table's snapshots.

* :func:`catalog_options`: what pypaimon's file-system catalog is created from (also shipped to the
  executors, which open the table themselves): the warehouse as a URI (an HDFS one qualified by
  ``fs.defaultFS``: every attempt names one directory alike) and an HDFS warehouse's client settings
  (:mod:`.hadoop`). With ``catalog_type = hive`` the warehouse is the one holding the directory the
  metastore records for the table (:mod:`.hive`).
* :func:`commits_of`: what a table's snapshots say of a commit user: the highest SeaTunnel batch it
  committed (the snapshot property :data:`BATCH_PROPERTY`), and whether any snapshot's user starts
  with a scope (save modes apply once per scope).
* The **commit lock** and the **attempt tokens**: :mod:`.fences`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError
from . import hadoop, hive
from .options import Table, local_path

#: the snapshot properties a commit carries: the run, and the batch (the micro-batch in STREAMING)
RUN_PROPERTY, BATCH_PROPERTY = "seatunnel.run-id", "seatunnel.batch"


def catalog_options(table: Table, database: str | None = None, name: str | None = None) -> dict[str, str]:
    """The catalog options of ``database.name`` (see the module docstring; without them: the warehouse's)."""
    io = hadoop.file_io_options(table)
    warehouse = hadoop.qualified(table.uri(), io)
    if table.catalog_type == "hive" and database is not None and name is not None and table.catalog_uri:
        recorded = hive.location(table.catalog_uri, database, name)
        if recorded is not None:
            warehouse = warehouse_of(recorded, database, name)
    return {**io, "warehouse": warehouse}


def warehouse_of(directory: str, database: str, name: str) -> str:
    """The warehouse holding the table directory ``directory`` (``<warehouse>/<database>.db/<name>``)."""
    path = local_path(directory).rstrip("/")
    parent = posixpath.dirname(path)
    if posixpath.basename(path) != name or posixpath.basename(parent) != f"{database}.db":
        raise RuntimeConfigError(f"the Hive metastore records {database}.{name} at {directory}, not in a Paimon "
                                 f"warehouse's layout (<warehouse>/{database}.db/{name})")
    root = posixpath.dirname(parent)
    return "file://" + root if root.startswith("/") else root


def table_directory(catalog: Mapping[str, str], database: str, name: str) -> str:
    return f"{catalog['warehouse'].rstrip('/')}/{database}.db/{name}"


def open_catalog(options: Mapping[str, str]) -> Any:
    try:
        from pypaimon import CatalogFactory
    except ImportError as e:
        raise RuntimeConfigError("the Paimon connector needs pypaimon: pip install "
                                 "'airflow-provider-seatunnel[paimon]'") from e
    return CatalogFactory.create(dict(options))


def get_table(catalog: Any, identifier: str) -> Any | None:
    """The table, or None when it does not exist."""
    from pypaimon.catalog.catalog_exception import TableNotExistException

    try:
        return catalog.get_table(identifier)
    except TableNotExistException:
        return None


@dataclass(frozen=True)
class Commits:
    """What a table's snapshots record of one commit user and its scope."""

    committed: int | None  # the highest batch the user committed (None: none)
    scope_started: bool  # some snapshot's user starts with the scope
    snapshots: int  # how many snapshots the table has


def commits_of(table: Any, user: str, scope: str) -> Commits:
    committed: int | None = None
    started, count = False, 0
    for snapshot in table.snapshot_manager().list_snapshots():
        count += 1
        who = str(snapshot.commit_user or "")
        started = started or who.startswith(scope)
        if who == user:
            batch = int((snapshot.properties or {}).get(BATCH_PROPERTY, snapshot.commit_identifier))
            committed = batch if committed is None else max(committed, batch)
    return Commits(committed, started, count)


def has_rows(table: Any) -> bool:
    builder = table.new_read_builder().with_limit(1)
    splits = builder.new_scan().plan().splits()
    return bool(splits) and builder.new_read().to_arrow(splits).num_rows > 0
