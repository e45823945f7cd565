"""Restore-trial targets on Apache Paimon (:mod:`restore_faults`): two tables in one warehouse, written by two
Paimon sinks of one pipeline; the warehouse is a local directory in the trial's work directory (``Paimon``), or
a directory of a private HDFS (``Paimon on HDFS``: tests/hdfs_server.py, started once, the sinks reaching it
through ``paimon.hadoop.conf``'s ``fs.defaultFS``, their commit lock the HDFS one of
airflow_provider_seatunnel/connectors/paimon/fences.py):

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

import contextlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
STALE: list[Row] = [(0, "stale", "g9")]
#: sink.move occurrences in one run: one per sink (each sink's commit is one Paimon snapshot)
MOVES = 2
TABLES = {"paimon_append": (OLD, None), "paimon_upsert": (OLD + STALE, "id")}


@dataclass
class Warehouse:
    """Where the trial's tables are: a local directory, or a directory of an HDFS (``hdfs``: its server)."""

    path: str
    hdfs: Any = None

    @property
    def uri(self) -> str:
        return f"{self.hdfs.uri}{self.path}" if self.hdfs is not None else f"file://{self.path}"

    def remove(self, sub: str) -> None:
        if self.hdfs is None:
            shutil.rmtree(f"{self.path}/{sub}", ignore_errors=True)
            return
        with contextlib.suppress(FileNotFoundError):
            self.hdfs.client().delete(f"{self.path}/{sub}", True)

    def data_files(self, sub: str) -> int:
        if self.hdfs is None:
            root = Path(self.path) / sub
            return sum(1 for p in root.rglob("data-*") if p.is_file()) if root.exists() else 0
        try:
            found = list(self.hdfs.client().list_status(f"{self.path}/{sub}", True))
        except FileNotFoundError:
            return 0
        return sum(1 for s in found if not s.isdir and s.path.rsplit("/", 1)[-1].startswith("data-"))


def _catalog(warehouse: Path | Warehouse) -> Any:
    from pypaimon import CatalogFactory

    uri = warehouse.uri if isinstance(warehouse, Warehouse) else f"file://{warehouse}"
    return CatalogFactory.create({"warehouse": uri})


def _seed(warehouse: Warehouse, name: str) -> None:
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


def _hdfs(resources: Any) -> Any:
    if getattr(resources, "hdfs", None) is None:
        from tests import hdfs_server

        resources.hdfs = hdfs_server.start()
        resources.callback(resources.hdfs.stop)
    return resources.hdfs


def paimon_sinks(work: Path, rows: int, resources: Any, sink_cls: Any, hdfs: bool = False) -> list[Any]:
    """The two sinks of Paimon's restore trials (``sink_cls``: :class:`restore_faults.Sink`), on a local
    warehouse or (``hdfs``) on the private HDFS."""
    warehouse = Warehouse(f"/{work.name}/paimon_wh", _hdfs(resources)) if hdfs else Warehouse(str(work / "paimon_wh"))
    hadoop = f', paimon.hadoop.conf = {{ fs.defaultFS = "{warehouse.hdfs.uri}" }}' if hdfs else ""
    location = f"hdfs://{warehouse.path}" if hdfs else warehouse.path

    def seeder(name: str) -> Callable[[], None]:
        def seed() -> None:
            warehouse.remove(f"db.db/{name}")
            warehouse.remove(f".seatunnel-paimon/db.db/{name}")
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
            return warehouse.data_files(f"db.db/{name}")
        return count

    def block(name: str, extra: str = "") -> str:
        return (f'Paimon {{ plugin_input = "rows", warehouse = "{location}", database = "db", '
                f'table = "{name}"{hadoop}{extra} }}')

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
HDFS_READING = READING.replace("in one local warehouse", "in one warehouse on a private HDFS (Hadoop 2.10.2's "
                               "NameNode and DataNode, `tests/hdfs_server.py`; `hdfs:///` with `fs.defaultFS`), "
                               "written through pypaimon 2.1.0 with hdfs-native 0.14.7 and the HDFS commit lock") \
    .replace(", written through pypaimon 2.1.0:", ":")
