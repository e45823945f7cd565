"""Paimon targets of the parity harness: a fresh local warehouse per engine run, its tables read back from their
files, and the source cases' input tables written with pypaimon.

SeaTunnel 2.3.8 writes Paimon 0.7 tables and the project writes pypaimon 2.1 tables; neither library reads the
other's metadata (pypaimon 2.1 fails on Paimon 0.7's manifests, Paimon 0.7 on pypaimon's snapshots), so a table
is read here from what both share: its ``schema/schema-<n>`` JSON (columns, types, primary keys) and its data
files (ORC or Parquet, each row with ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` on a primary-key table). The
reader assumes a table of one snapshot (what one batch run writes): every data file under ``bucket-*`` is live,
and a primary-key table's rows are merged as Paimon's deduplicate engine merges them (the row of the highest
sequence number per key; a key whose last row is ``-U`` or ``-D`` is gone).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .compare import Table

#: the tables a Paimon sink case writes (database ``parity``)
TABLES = ("appended", "keyed")
#: the rows of the source cases' input tables: (id, name, score), an append table and a primary-key table
SOURCE_ROWS = ((1, "ann", 1.5), (2, None, 2.25), (3, "b, c", -0.5))


def read_table(warehouse: Path, table: str, database: str = "parity") -> Table:
    """The rows of ``database.table`` (text values, NULL as None) and its columns' types (``PK`` marks a primary
    key column); a table of more than one snapshot is refused."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    root = warehouse / f"{database}.db" / table
    snapshots = sorted((root / "snapshot").glob("snapshot-*"))
    if len(snapshots) != 1:
        raise ValueError(f"{root}: {len(snapshots)} snapshots; the harness reads tables of one snapshot")
    schema = json.loads(max((root / "schema").glob("schema-*"), key=lambda p: int(p.name.split("-")[1])).read_text())
    names = [f["name"] for f in schema["fields"]]
    keys = list(schema.get("primaryKeys") or [])
    types = tuple(f["type"] + (" PK" if f["name"] in keys else "") for f in schema["fields"])
    rows: list[dict[str, Any]] = []
    for path in sorted(root.glob("bucket-*/data-*")):
        data = orc.read_table(path) if path.suffix == ".orc" else pq.read_table(path)
        rows.extend(data.to_pylist())
    if keys:
        rows = _merged(rows, keys)
    return Table(tuple(names), types, tuple(tuple(_text(r[n]) for n in names) for r in rows))


def _merged(rows: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    last: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: r["_SEQUENCE_NUMBER"]):
        last[tuple(row[k] for k in keys)] = row
    return [r for r in last.values() if r["_VALUE_KIND"] not in (1, 3)]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def prepare_source(warehouse: Path) -> None:
    """Write :data:`SOURCE_ROWS` with pypaimon into ``parity.appended`` and ``parity.keyed`` (primary key id)."""
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string()), ("score", pa.float64())])
    data = pa.Table.from_pylist([dict(zip(("id", "name", "score"), r, strict=True)) for r in SOURCE_ROWS], schema)
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("parity", True)
    for table, keys in (("appended", []), ("keyed", ["id"])):
        options = {"bucket": "1"} if keys else {}
        catalog.create_table(f"parity.{table}", Schema.from_pyarrow_schema(schema, primary_keys=keys,
                                                                           options=options), False)
        builder = catalog.get_table(f"parity.{table}").new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        try:
            write.write_arrow(data)
            commit.commit(write.prepare_commit())
        finally:
            write.close()
            commit.close()


def read_records(warehouse: Path) -> list[tuple[bytes | None, bytes | None]]:
    """The sink case's tables as records: ``(b"<table>", row JSON)`` per row and ``(b"types:<table>", JSON of the
    columns' types)`` per table; a table the run did not create is left out."""
    out: list[tuple[bytes | None, bytes | None]] = []
    for name in TABLES:
        if not (warehouse / "parity.db" / name).is_dir():
            continue
        table = read_table(warehouse, name)
        columns = table.columns or ()
        out.extend((name.encode(), json.dumps(dict(zip(columns, row, strict=True))).encode()) for row in table.rows)
        out.append((f"types:{name}".encode(), json.dumps(dict(zip(columns, table.types, strict=True))).encode()))
    return out


class Warehouses:
    """The "server" of Paimon cases: a temp folder of warehouses, removed at :meth:`stop`."""

    def __init__(self) -> None:
        import tempfile

        self.root = Path(tempfile.mkdtemp(prefix="parity-paimon-"))

    def fresh(self, name: str, source: bool = False) -> Path:
        path = self.root / name
        path.mkdir()
        if source:
            prepare_source(path)
        return path

    def stop(self) -> None:
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)


def start() -> Warehouses:
    return Warehouses()
