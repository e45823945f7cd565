"""Restore-trial targets on Apache Cassandra (:mod:`restore_faults`): two tables keyed by ``id`` in the keyspace
``rf`` of a private Cassandra 5.0 node (``tests/cassandra_server.py``, started once per benchmark run), written by
two Cassandra sinks of one pipeline:

* ``rf_async``: the defaults (``async_write = true``: concurrent single-row INSERTs, every one awaited);
* ``rf_batch``: ``async_write = false``, ``batch_type = "LOGGED"``, ``batch_size = 100``; it also holds a stale
  row with id 0, which the input replaces.

Before every trial the keyspace is dropped and made again (the sink's ``seatunnel_sink_commits`` goes with it) and
both tables get a row of an earlier run (``(-1, "old", "g0")``). A reader sees ``SELECT *``. The sink is **at least
once with idempotent replays** (docs/cassandra.md): a run killed while writing, or before its commit record, leaves
part of the rows visible (``PARTIAL`` after attempt 1 by design) and the restore writes them all again, so the
table ends with each row once; a run whose record exists writes nothing. *Commit records* counts the rows of
``seatunnel_sink_commits`` (one per sink and table a run recorded or began).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
KS = "rf"
TABLES = ("rf_async", "rf_batch")
READING = (
    "The targets are two tables keyed by `id` of a private Apache Cassandra 5.0 node (`tests/cassandra_server.py`, "
    "embedded from Maven Central's `cassandra-all`), read with `SELECT *`: `rf_async` (concurrent single-row "
    "INSERTs) and `rf_batch` (LOGGED batches of 100; it also holds a stale row with id 0 that the input replaces). "
    "The Cassandra sink is at least once with idempotent replays (docs/cassandra.md): every INSERT upserts its "
    "primary key, so a restore that writes a killed run's rows again leaves each row once; *visible after attempt "
    "1* may be `PARTIAL` (no staging: a row is visible once written). *Commit records* counts the rows of the "
    "sink's `seatunnel_sink_commits` after attempt 1 → after the restore.")
#: the sink fires sink.write (its write tasks) and sink.commit (before its record); the engine sink.prepared and
#: pipeline.committed; it has no sink.move (nothing moves at a commit)
POINTS = ("sink.write", "sink.prepared", "sink.commit", "pipeline.committed")


def _server(resources: Any) -> Any:
    if getattr(resources, "cassandra", None) is None:
        from tests import cassandra_server

        resources.cassandra = cassandra_server.start()
        resources.callback(resources.cassandra.stop)
    return resources.cassandra


def cassandra_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of Cassandra's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seeder(table: str) -> Callable[[], None]:
        def seed() -> None:
            if table == TABLES[0]:  # the first sink's seed: the keyspace, with the commit records of earlier trials
                server.keyspace(KS)
            server.execute(f"CREATE TABLE {KS}.{table} (id bigint PRIMARY KEY, name text, grp text)",
                           f"INSERT INTO {KS}.{table} (id, name, grp) VALUES (-1, 'old', 'g0')")
            if table == TABLES[1]:
                server.execute(f"INSERT INTO {KS}.{table} (id, name, grp) VALUES (0, 'stale', 'g9')")
        return seed

    def reader(table: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(i), n, g) for i, n, g in server.execute(f"SELECT id, name, grp FROM {KS}.{table}")[0]]
        return read

    def records() -> int:
        try:
            return len(server.execute(f"SELECT id FROM {KS}.seatunnel_sink_commits")[0])
        except Exception:
            return 0

    conn = server.options(KS)
    stale = [(0, "stale", "g9")]
    return [
        sink_cls("Cassandra rf_async", f'Cassandra {{ plugin_input = "rows", {conn}, table = "{TABLES[0]}" }}',
                 seeder(TABLES[0]), reader(TABLES[0]), records, list(OLD), True),
        sink_cls("Cassandra rf_batch", f'Cassandra {{ plugin_input = "rows", {conn}, table = "{TABLES[1]}", '
                                       'async_write = false, batch_type = "LOGGED", batch_size = 100 }',
                 seeder(TABLES[1]), reader(TABLES[1]), None, list(OLD) + stale, True),
    ]
