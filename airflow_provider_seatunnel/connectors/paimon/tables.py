"""Paimon tables through pypaimon on the driver: the catalog, a table's snapshots, and the commit lock.

* :func:`catalog_options`: what pypaimon's file-system catalog is created from (also shipped to the
  executors, which open the table themselves).
* :func:`commits_of`: what a table's snapshots say of a commit user: the highest SeaTunnel batch it
  committed (the snapshot property :data:`BATCH_PROPERTY`), and whether any snapshot's user starts
  with a scope (save modes apply once per scope).
* The **commit lock** and the **attempt tokens** are the LocalFile sink's (an exclusive ``flock``,
  a token file per key), kept beside the warehouse's databases in :data:`FENCE_DIR` (the catalog
  lists only ``*.db`` directories), never inside a table's directory, where Paimon's orphan-file
  cleaning could remove them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError
from .options import Table

#: the snapshot properties a commit carries: the run, and the batch (the micro-batch in STREAMING)
RUN_PROPERTY, BATCH_PROPERTY = "seatunnel.run-id", "seatunnel.batch"
FENCE_DIR = ".seatunnel-paimon"


def catalog_options(table: Table) -> dict[str, str]:
    if table.catalog_type != "filesystem":
        raise RuntimeConfigError(f"catalog_type {table.catalog_type} is not supported: pypaimon has no Hive "
                                 "catalog (docs/paimon.md)")
    return {"warehouse": "file://" + table.root().rstrip("/")}


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


def fence_root(table: Table, database: str, name: str) -> str:
    """The directory of one target's commit lock and token files."""
    return os.path.join(table.root(), FENCE_DIR, f"{database}.db", name)


def marker(root: str, user: str, batch: int) -> str:
    """The key the attempt tokens of (commit user, batch) are kept under (``<key>.fence``)."""
    return os.path.join(root, ".seatunnel-commits", f"{user}-{batch}.committed")
