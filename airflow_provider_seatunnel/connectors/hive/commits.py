"""The Hive sink's commit: a claimed journal, file moves, one metastore operation per new partition,
the journal renamed to the slot's marker; settling what earlier attempts left; abort.

* **The claim.** An attempt whose token is still the slot's newest (else
  :class:`~...spi.fencing.Superseded`) and whose staged files are all there with their sizes (else
  :class:`~...spi.fencing.StagingMismatch`) plans every step — the moves (staged file → the
  partition's directory, named ``<run tag>-<slot>-<token>-<name>``), the partitions to add (with
  their location), and with ``overwrite`` the entries of the written partitions (of the table,
  when it has no partitions) that are not this run's files, set aside into the slot's trash — and
  writes that plan as the slot's ``journal.json`` with :meth:`.store.Store.create_new`. Only one
  attempt ever creates it: that is the commit point. An attempt that finds a journal already
  there finishes it instead, and its own staging is dropped, never published.
* **Rolling forward** is idempotent, so the claimer, a restore and an overlapping attempt may all do
  it: set aside the drops still in place, move the staged files still in staging
  (``sink.move`` fault point before each), ``ALTER TABLE ... ADD IF NOT EXISTS PARTITION ... LOCATION``
  for each new partition, then (``sink.commit`` fault point) rename the journal to
  ``committed.json``: the slot is done. The trash and the slot's staging go last.
* **Rolling back**: a journal whose staged files are lost (neither staged nor published) is undone:
  its published files removed, its drops put back. ``abort`` of an attempt whose own claimed commit
  did not finish does the same, and with ``abort_drop_partition_metadata`` drops the partitions the
  commit added.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...spi import SINK, RunContext, Vertex
from ...spi.fencing import StagingMismatch
from ...spi.twophase import Outcome, Published, Staged
from .options import SPEC, log, partition_clause, partition_values, sql_string
from .records import check_journal, read, seal
from .slots import Slot, newest_token
from .store import Store, hidden, join
from .tables import describe, partition_location, partitions


def _slot(staged: Staged) -> Slot:
    d = staged.detail
    return Slot(d["commits"], d["staging"], d["digest"], d["location"])


def _entry(staged: Staged) -> dict[str, Any]:
    """What planning a commit takes from one table's commit message."""
    return {"target": staged.detail["name"], "table": staged.commit.table, "token": staged.token,
            "tag": staged.detail["tag"], "files": [list(p) for p in staged.parts]}


def read_journal(spark: Any, store: Store, slot: Slot) -> dict[str, Any] | None:
    """The slot's claimed journal, once its seal and every table and path it names are checked
    (:mod:`.records`; :class:`~...spi.journals.TamperedRecord` otherwise, nothing acted on)."""
    record = read(store, slot.location, slot.journal)
    if record is not None:
        check_journal(spark, slot, record, slot.journal)
    return record


def is_committed(store: Store, slot: Slot) -> bool:
    """Whether the slot's marker is there; one the table did not seal (as the journal it was renamed
    from) is refused."""
    return store.exists(slot.marker) and read(store, slot.location, slot.marker, slot.journal) is not None


def _alter(spark: Any, record: Mapping[str, Any], statement: str) -> None:
    spark.sql(f"ALTER TABLE {record['qualified']} {statement}")


# ---------------------------------------------------------------------------------------------
# Planning and claiming
# ---------------------------------------------------------------------------------------------

def _plan(spark: Any, store: Store, entry: Mapping[str, Any], slot: Slot, overwrite: bool) -> dict[str, Any]:
    info = describe(spark, *entry["target"].split(".", 1))
    staging, token, tag = slot.staging_dir(entry["token"]), entry["token"], entry["tag"]
    existing = partitions(spark, info)
    directories: dict[str, str] = {}  # partition directory ("" without partitions) -> where its files go
    adds: list[list[str]] = []
    for rel, _ in entry["files"]:
        directory = posixpath.dirname(rel) if info.partition_columns else ""
        if directory in directories:
            continue
        if directory and directory in existing:
            directories[directory] = partition_location(spark, info, directory)
        else:
            directories[directory] = join(info.location, directory)
            if directory:
                adds.append([directory, directories[directory]])
    if not info.partition_columns:
        directories.setdefault("", info.location)  # an overwrite of an unpartitioned table empties it
    moves = [[join(staging, rel), join(directories[posixpath.dirname(rel) if info.partition_columns else ""],
                                       f"{tag}-{slot.digest[:8]}-{token}-{posixpath.basename(rel)}")]
             for rel, _ in entry["files"]]
    drops: list[list[str]] = []
    if overwrite:
        for i, folder in enumerate(sorted(set(directories.values()))):
            for name in store.children(folder):
                if not hidden(name) and not name.startswith(tag + "-"):
                    drops.append([join(folder, name), join(slot.trash, f"{token}-{i}", name)])
    return {"run_tag": tag, "target": info.name, "qualified": info.qualified, "token": token, "moves": moves,
            "adds": adds, "drops": drops, "staging_table": slot.staging_table(info.database, token),
            "database": info.database, "at": datetime.now().isoformat()}


def _check_staged(store: Store, vertex: Vertex, entry: Mapping[str, Any], slot: Slot) -> None:
    for rel, size in entry["files"]:
        actual = store.size(join(slot.staging_dir(entry["token"]), rel))
        if actual != size:
            raise StagingMismatch(f"the staged file {rel} of table {entry['target']} is "
                                  + ("gone" if actual is None else f"{actual} bytes, staged as {size}")
                                  + ": nothing was committed", vertex.ref)


# ---------------------------------------------------------------------------------------------
# Rolling forward and back
# ---------------------------------------------------------------------------------------------

def roll_forward(spark: Any, store: Store, slot: Slot, record: Mapping[str, Any],
                 ctx: RunContext | None = None, vertex: Vertex | None = None) -> bool:
    """Finish the journal's steps (each idempotent) and record the commit; False when its staged
    files are lost (the journal is then rolled back)."""
    for entry, trashed in record["drops"]:
        if store.exists(entry):
            store.rename(entry, trashed)
    for src, dst in record["moves"]:
        if ctx is not None:
            ctx.fault_point("sink.move", vertex)
        if not store.rename(src, dst) and not store.exists(dst):
            log.warning("Hive: the staged file %s of the interrupted commit of %s is lost; undoing that commit, "
                        "the data is written again", src, record["target"])
            roll_back(spark, store, slot, record, drop_partitions=False)
            return False
    for directory, location in record["adds"]:
        _alter(spark, record, f"ADD IF NOT EXISTS {partition_clause(partition_values(directory))} "
                              f"LOCATION {sql_string(location)}")
    if ctx is not None:
        ctx.fault_point("sink.commit", vertex)
    if not store.rename(slot.journal, slot.marker) and not store.exists(slot.marker):
        raise StagingMismatch(f"the commit journal {slot.journal} vanished before it was recorded")
    spark.catalog.refreshTable(record["target"])
    cleanup(spark, store, slot, record["database"])
    return True


def roll_back(spark: Any, store: Store, slot: Slot, record: Mapping[str, Any], drop_partitions: bool) -> None:
    """Undo an unrecorded commit: its published files back to staging, its drops back in place."""
    for src, dst in record["moves"]:
        if store.exists(dst):
            store.rename(dst, src)
    for entry, trashed in record["drops"]:
        if store.exists(trashed) and not store.exists(entry):
            store.rename(trashed, entry)
    if drop_partitions:
        for directory, _ in record["adds"]:
            _alter(spark, record, f"DROP IF EXISTS {partition_clause(partition_values(directory))}")
    store.delete(slot.journal)


def cleanup(spark: Any, store: Store, slot: Slot, database: str) -> None:
    """After the slot's commit: every attempt's staging table and directory, and the trash."""
    for token in range(1, newest_token(store, slot) + 1):
        spark.sql(f"DROP TABLE IF EXISTS {slot.staging_table(database, token)}")
    store.delete(slot.staging)
    store.delete(slot.trash)


def settle(spark: Any, store: Store, slot: Slot, label: str) -> str | None:
    """Before staging: "committed" when the slot is done, "recovered" after finishing a claimed
    commit whose attempt is gone (or overlaps this one), else None."""
    if is_committed(store, slot):
        return "committed"
    record = read_journal(spark, store, slot)
    if record is None:
        return None
    if roll_forward(spark, store, slot, record):
        log.info("Hive %s: finished the interrupted commit of %s (token %s)", label, record["target"],
                 record["token"])
        return "recovered"
    return None


# ---------------------------------------------------------------------------------------------
# Commit and abort
# ---------------------------------------------------------------------------------------------

def publish_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """Claim the commit (unless the slot is done, or another attempt claimed it: then finish that one)
    and roll it forward (see the module docstring)."""
    spark, store, slot, entry = ctx.spark, Store(ctx.spark), _slot(staged), _entry(staged)
    if is_committed(store, slot):
        return Published(Outcome.ALREADY)
    record = read_journal(spark, store, slot)
    if record is None:
        newest = newest_token(store, slot)
        if newest != staged.token:
            return Published(Outcome.SUPERSEDED, newest=newest)
        _check_staged(store, vertex, entry, slot)
        planned = _plan(spark, store, entry, slot, SPEC.run_time(vertex.config, SINK)["overwrite"])
        claimed = store.create_new(slot.journal, seal(slot.location, slot.journal, planned))
        record = planned if claimed else read_journal(spark, store, slot)
    if record is None:  # claimed and finished by another attempt meanwhile
        return Published(Outcome.ALREADY)
    if not roll_forward(spark, store, slot, record, ctx, vertex):
        raise StagingMismatch(f"the staged files of the claimed commit of {entry['target']} are lost: nothing "
                              "is committed, a retry writes the data again", vertex.ref)
    if record["token"] != staged.token:
        log.info("Hive %s: finished the commit of token %s to %s; this attempt's staging is dropped", vertex.ref,
                 record["token"], entry["target"])
        return Published(Outcome.ALREADY)
    log.info("Hive %s: committed %d files (%d new partitions%s) of table %s to %s", vertex.ref,
             len(record["moves"]), len(record["adds"]),
             f", {len(record['drops'])} entries replaced" if record["drops"] else "", entry["table"],
             entry["target"])
    return Published(Outcome.PUBLISHED, rows=-1)


def discard_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    """Undo this attempt's own unrecorded commit (with ``abort_drop_partition_metadata``, the
    partitions it added too) and drop its staging. What a killed discard leaves, the next attempt
    settles."""
    store, slot = Store(ctx.spark), _slot(staged)
    record = read_journal(ctx.spark, store, slot)
    if record is not None and record.get("token") == staged.token and not store.exists(slot.marker):
        drop_added = SPEC.run_time(vertex.config, SINK)["abort_drop_partition_metadata"]
        roll_back(ctx.spark, store, slot, record, drop_added)
    database = staged.detail["name"].split(".", 1)[0]
    ctx.spark.sql(f"DROP TABLE IF EXISTS {slot.staging_table(database, staged.token)}")
    store.delete(slot.staging_dir(staged.token))
