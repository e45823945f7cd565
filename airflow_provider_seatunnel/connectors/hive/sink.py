"""The Hive sink's ``prepare``: settle what earlier attempts left, take an attempt token, stage the rows.

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

``prepare`` first settles the slot (:func:`.commits.settle`): a slot committed writes nothing (the
rows pass once through Spark's ``noop`` sink, so they are counted); a claimed commit whose attempt
is gone is finished. Otherwise it takes the next token and runs one Spark write (``INSERT INTO`` the
staging table) over the rows, at the parallelism they arrive at.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.fencing import Superseded
from ...spi.rows import data_only, quote
from ..files.placeholders import expand_table_placeholders
from .commits import abort, settle
from .options import config_error, log, opt, quote_ident, split_table, sql_string
from .slots import Slot, allocate, newest_token, run_tag, slot_of
from .store import Store, check_scheme
from .tables import TableInfo, describe, require_hive


def target_of(config: Mapping[str, Any], table: str) -> tuple[str, str]:
    name = str(opt(config, "table_name", ""))
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
    ctx.with_write_faults(vertex, _selected(df, info)).createOrReplaceTempView(view)
    try:
        spark.sql(f"INSERT INTO {staging_table} SELECT * FROM {quote_ident(view)}")
    finally:
        spark.catalog.dropTempView(view)


def _prepare_table(ctx: RunContext, vertex: Vertex, table: str, df: Any) -> dict[str, Any]:
    spark = ctx.spark
    database, name = target_of(vertex.config, table)
    info = describe(spark, database, name)
    check_scheme(info.location)
    store = Store(spark)
    slot = slot_of(info.location, str(ctx.run_id), str(ctx.pipeline_key), vertex.ref, table)
    entry: dict[str, Any] = {"table": table, "target": info.name, "location": info.location,
                             "commits": slot.commits, "staging": slot.staging, "digest": slot.digest}
    status = settle(spark, store, slot, vertex.ref)
    if status:
        log.info("Hive %s: table %s of run %s already committed to %s; nothing to write", vertex.ref, table,
                 ctx.run_id, info.name)
        df.write.format("noop").mode("overwrite").save()  # the one pass that counts the rows
        return {**entry, "status": status}
    token = allocate(store, slot, int(ctx.attempt))
    try:
        _stage(ctx, vertex, df, info, slot, token)
        files = store.files(slot.staging_dir(token))
    except BaseException:
        spark.sql(f"DROP TABLE IF EXISTS {slot.staging_table(info.database, token)}")
        store.delete(slot.staging_dir(token))
        newest = newest_token(store, slot)
        if newest > token:
            raise Superseded(f"table {info.name}", token, newest, vertex.ref) from None
        raise
    return {**entry, "status": "staged", "token": token, "files": files, "partitioned": bool(info.partition_columns),
            "tag": run_tag(str(ctx.run_id)), "staged_at": datetime.now().isoformat()}


def prepare(ctx: RunContext, vertex: Vertex, data: Mapping[str, Any]) -> dict[str, Any]:
    """Stage each table of ``data`` in its slot; what ``commit`` publishes."""
    require_hive(ctx.spark)
    entries: list[dict[str, Any]] = []
    try:
        for table, df in data.items():
            entries.append(_prepare_table(ctx, vertex, table, df))
    except BaseException:
        abort(ctx, vertex, {"tables": entries})
        raise
    return {"tables": entries}
