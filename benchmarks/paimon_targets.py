"""Restore-trial targets on Apache Paimon (:mod:`restore_faults`): two tables in one local warehouse in the
trial's work directory, written by two Paimon sinks of one pipeline:

* ``db.paimon_append``: an append table (each run's rows added once);
* ``db.paimon_upsert``: ``paimon.table.primary-keys = "id"`` (each input row replaces the row of its id).

Before every trial the warehouse is deleted with what it holds and both tables are written again with rows
of an earlier run (``(-1, "old", "g0")``, and for the upsert table also a stale version of input row 0,
``(0, "stale", "g9")``, which the input replaces), by pypaimon in this process.

A reader sees what a Paimon reader sees: each table's newest snapshot (pypaimon, no Spark). *Raw* counts the
data files under a table's directory: files of a commit that never landed (a task killed before the commit,
an attempt superseded by another) stay there, referenced by no snapshot, until orphan-file cleaning.

The sink's commit is one Paimon snapshot per sink, preceded by one ``sink.move`` (:data:`MOVES`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
STALE: list[Row] = [(0, "stale", "g9")]
#: sink.move occurrences in one run: one per sink (each sink's commit is one Paimon snapshot)
MOVES = 2
TABLES = {"paimon_append": (OLD, None), "paimon_upsert": (OLD + STALE, "id")}


def _catalog(warehouse: Path) -> Any:
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": f"file://{warehouse}"})


def _seed(warehouse: Path, name: str) -> None:
    import pyarrow as pa
    from pypaimon import Schema

    rows, key = TABLES[name]
    schema = pa.schema([pa.field("id", pa.int64(), nullable=key is None), ("name", pa.string()), ("grp", pa.string())])
    catalog = _catalog(warehouse)
    catalog.create_database("db", True)
    catalog.drop_table(f"db.{name}", True)
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        schema, primary_keys=[key] if key else None, options={"bucket": "2"} if key else {}), False)
    table = catalog.get_table(f"db.{name}")
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.Table.from_pylist([dict(zip(("id", "name", "grp"), r, strict=True)) for r in rows],
                                           schema=schema))
    commit = builder.new_commit()
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


def read_rows(warehouse: Path, table: str, columns: tuple[str, ...]) -> list[tuple]:
    """A Paimon table's rows at its newest snapshot (none while the table does not exist)."""
    database, name = table.split(".")
    if not any((warehouse / f"{database}.db" / name / "snapshot").glob("snapshot-*")):
        return []
    builder = _catalog(warehouse).get_table(table).new_read_builder()
    found = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return [tuple(r[c] for c in columns) for r in found]


def paimon_sinks(work: Path, rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Paimon's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    warehouse = work / "paimon_wh"

    def seeder(name: str) -> Callable[[], None]:
        def seed() -> None:
            shutil.rmtree(warehouse / "db.db" / name, ignore_errors=True)
            shutil.rmtree(warehouse / ".seatunnel-paimon" / "db.db" / name, ignore_errors=True)
            _seed(warehouse, name)
        return seed

    def reader(name: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            builder = _catalog(warehouse).get_table(f"db.{name}").new_read_builder()
            found = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
            return [(int(r["id"]), r["name"], r["grp"]) for r in found]
        return read

    def raw(name: str) -> Callable[[], int]:
        def count() -> int:
            root = warehouse / "db.db" / name
            return sum(1 for p in root.rglob("data-*") if p.is_file()) if root.exists() else 0
        return count

    def block(name: str, extra: str = "") -> str:
        return (f'Paimon {{ plugin_input = "rows", warehouse = "{warehouse}", database = "db", '
                f'table = "{name}"{extra} }}')

    return [sink_cls("Paimon append", block("paimon_append"), seeder("paimon_append"), reader("paimon_append"),
                     raw("paimon_append"), list(OLD)),
            sink_cls("Paimon upsert", block("paimon_upsert"), seeder("paimon_upsert"), reader("paimon_upsert"),
                     raw("paimon_upsert"), OLD + STALE, upsert=True)]


READING = ("The targets are two Paimon tables in one local warehouse, written through pypaimon 2.1.0: "
           "`paimon_append` (an append table) and `paimon_upsert` (primary key `id`, 2 fixed buckets; it also holds "
           "a stale version of input row 0, which the input replaces). *Visible after attempt 1* is what a Paimon "
           "reader sees in each table's newest snapshot (`old`: only the earlier rows, `all`: everything, `PARTIAL` "
           "would be a half-committed table); *raw files* counts the data files under each table's directory after "
           "attempt 1 → after the restore (files no snapshot references stay until orphan-file cleaning, unread).")
