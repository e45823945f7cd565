"""The Hive sink's storage verbs (:class:`HiveSinkVerbs`); the engine (``runtime/twophase.py``) runs the
two phases over them: its commit log settles what earlier attempts left and hands out tokens, ``stage``
writes the rows, ``publish`` (:mod:`.commits`) claims and rolls the commit forward.

Per (run, pipeline, sink, upstream table) — a **slot** — under the target table's location ``L``:

* ``L/.seatunnel-commits/<run>/<pipeline>/<sink>/<table>/``: the slot's bookkeeping: ``token-<n>``
  files (the attempt tokens, each created once by :meth:`.store.Store.create_new`), ``journal.json``
  (the commit an attempt claimed) and ``committed.json`` (the journal renamed: the slot is done),
  ``trash/`` (what an ``overwrite`` set aside until the commit is recorded);
* ``L/.seatunnel-staging/<run>/<pipeline>/<sink>/<table>/token-<n>/``: the rows an attempt wrote,
  through a staging table ``<database>.st_staging_<slot hash>_<n>`` created ``LIKE`` the target at
  that location, so that Spark writes them exactly as it writes the table (its format, SerDe,
  delimiters, table properties, partition directories). Hive and Spark readers skip the dot
  directories.

Taking a token first settles the slot (:func:`.commits.settle`): a slot committed writes nothing (the
rows pass once through Spark's ``noop`` sink, so they are counted); a claimed commit whose attempt
is gone is finished (the table counts as committed). Otherwise it takes the next token, and ``stage``
runs one Spark write (``INSERT INTO`` the staging table) over the rows, at the parallelism they
arrive at.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...spi import SINK, RunContext, Vertex
from ...spi.fencing import Superseded
from ...spi.rows import data_only, quote
from ...spi.twophase import CommitId, Staged
from ..files.placeholders import expand_table_placeholders
from .commits import discard_table, publish_table, settle
from .options import SPEC, config_error, quote_ident, split_table, sql_string
from .slots import Slot, allocate, newest_token, run_tag, slot_of
from .store import Store, check_scheme
from .tables import TableInfo, describe, require_hive


def target_of(config: Mapping[str, Any], table: str) -> tuple[str, str]:
    name = SPEC.run_time(config, SINK)["table_name"]
    if "${" in name:
        name = expand_table_placeholders(name, table)
    try:
        return split_table(name)
    except ValueError as e:
        raise config_error(str(e)) from None


def _selected(df: Any, info: TableInfo) -> Any:
    """The rows as the table's columns (data then partition columns), matched by name in any case."""
    by_lower = {c.lower(): c for c in data_only(df).columns}
    wanted = [*info.data_columns, *info.partition_columns]
    missing = [c for c in wanted if c.lower() not in by_lower]
    if missing:
        raise config_error(f"the rows have no column {', '.join(missing)} of the Hive table {info.name} "
                           f"(the rows have: {', '.join(by_lower.values())})")
    return df.select(*[quote(by_lower[c.lower()]) for c in wanted])


def _stage(ctx: RunContext, vertex: Vertex, df: Any, info: TableInfo, slot: Slot, token: int) -> None:
    """One Spark write: the rows into the staging table (created LIKE the target at the staging directory)."""
    spark = ctx.spark
    staging_table = slot.staging_table(info.database, token)
    spark.sql(f"DROP TABLE IF EXISTS {staging_table}")
    spark.sql(f"CREATE TABLE {staging_table} LIKE {info.qualified} LOCATION {sql_string(slot.staging_dir(token))}")
    spark.conf.set("hive.exec.dynamic.partition", "true")
    spark.conf.set("hive.exec.dynamic.partition.mode", "nonstrict")
    view = f"st_hive_{slot.digest}_{token}"
    _selected(df, info).createOrReplaceTempView(view)
    try:
        spark.sql(f"INSERT INTO {staging_table} SELECT * FROM {quote_ident(view)}")
    finally:
        spark.catalog.dropTempView(view)


def _target(ctx: RunContext, vertex: Vertex, commit: CommitId) -> tuple[TableInfo, Store, Slot]:
    """The table ``commit`` writes, the store of its location and its slot there."""
    require_hive(ctx.spark)
    info = describe(ctx.spark, *target_of(vertex.config, commit.table))
    check_scheme(info.location)
    return info, Store(ctx.spark), slot_of(info.location, commit.run_id, commit.pipeline, commit.sink, commit.table)


class HiveCommitLog:
    """The token files and commit records of each table's slot (see the module's docstring)."""

    def __init__(self, ctx: RunContext, vertex: Vertex) -> None:
        self.ctx, self.vertex = ctx, vertex

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        """Settle the slot first: committed (or a claimed commit finished now) hands out no token."""
        _, store, slot = _target(self.ctx, self.vertex, commit)
        if settle(self.ctx.spark, store, slot, self.vertex.ref):
            return newest_token(store, slot), True
        return allocate(store, slot, int(self.ctx.attempt)), False

    def newest_token(self, commit: CommitId) -> int:
        _, store, slot = _target(self.ctx, self.vertex, commit)
        return newest_token(store, slot)


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """The rows into the attempt's staging table; the staged files (with their sizes) are the parts."""
    info, store, slot = _target(ctx, vertex, commit)
    try:
        _stage(ctx, vertex, df, info, slot, token)
        files = store.files(slot.staging_dir(token))
    except BaseException:
        ctx.spark.sql(f"DROP TABLE IF EXISTS {slot.staging_table(info.database, token)}")
        store.delete(slot.staging_dir(token))
        newest = newest_token(store, slot)
        if newest > token:
            raise Superseded(f"table {info.name}", token, newest, vertex.ref) from None
        raise
    detail = {"name": info.name, "location": info.location, "commits": slot.commits, "staging": slot.staging,
              "digest": slot.digest, "partitioned": bool(info.partition_columns), "tag": run_tag(commit.run_id),
              "staged_at": datetime.now().isoformat()}
    return Staged(commit, token, f"table {info.name}", 0, tuple((str(r), int(n)) for r, n in files), detail)


class HiveSinkVerbs:
    """The Hive sink as storage verbs; its publish moves file by file, firing ``sink.move`` itself."""

    moves_in_steps = True
    stage = staticmethod(stage_table)
    publish = staticmethod(publish_table)
    discard = staticmethod(discard_table)

    commit_log = staticmethod(HiveCommitLog)
