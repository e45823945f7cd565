"""Restore-trial targets on MongoDB's wire protocol (:mod:`restore_faults`): two collections of a private
FerretDB server (``tests/ferretdb.py``, started once per benchmark run), written by two MongoDB sinks of one
pipeline:

* ``rf_plain``: plain inserts (each run's rows added once; a duplicate shows as a second document);
* ``rf_upsert``: ``upsert-enable = true, primary-key = ["id"]`` (each input row replaces the document of its id).

Before every trial the database is dropped (staging collections and commit log of earlier trials with it) and
both collections get rows of an earlier run (``(-1, "old", "g0")``, and for the upsert collection also a stale
version of input row 0, ``(0, "stale", "g9")``).

A reader sees what ``find`` returns. The sink applies a claimed commit document by document (FerretDB has no
multi-document transactions), so a driver killed in the middle of an apply leaves part of the rows visible
until the restore completes the claimed commit: such a trial shows ``PARTIAL`` after attempt 1, and the
restore must still land every row once. *Raw* counts the sink's staging collections.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
STALE: list[Row] = [(0, "stale", "g9")]
DB = "rf"


def _server(resources: Any) -> Any:
    if getattr(resources, "ferretdb", None) is None:
        from tests import ferretdb

        resources.ferretdb = ferretdb.start()
        resources.callback(resources.ferretdb.stop)
    return resources.ferretdb


def mongodb_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of MongoDB's restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)
    client = server.client()

    def seeder(name: str, old: list[Row]) -> Callable[[], None]:
        def seed() -> None:
            if name == "rf_plain":  # the first sink's seed: earlier trials' staging and commit log go too
                client.drop_database(DB)
            client[DB].drop_collection(name)
            client[DB][name].insert_many([{"id": i, "name": n, "grp": g} for i, n, g in old])
        return seed

    def reader(name: str) -> Callable[[], list[Row]]:
        return lambda: [(int(d["id"]), d["name"], d["grp"]) for d in client[DB][name].find({}, {"_id": 0})]

    def staging() -> int:
        return sum(1 for n in client[DB].list_collection_names() if n.startswith("__seatunnel_stage_"))

    conn = f'uri = "{server.uri}", database = "{DB}"'
    return [
        sink_cls("MongoDB plain", f'MongoDB {{ plugin_input = "rows", {conn}, collection = "rf_plain" }}',
                 seeder("rf_plain", OLD), reader("rf_plain"), staging, list(OLD)),
        sink_cls("MongoDB upsert", f'MongoDB {{ plugin_input = "rows", {conn}, collection = "rf_upsert", '
                                   'upsert-enable = true, primary-key = ["id"], buffer-flush.max-rows = 100 }',
                 seeder("rf_upsert", OLD + STALE), reader("rf_upsert"), None, OLD + STALE, upsert=True),
    ]


READING = ("The targets are two collections of a private FerretDB 1.24 server over SQLite (`tests/ferretdb.py`), "
           "read with `find`: `rf_plain` (plain inserts) and `rf_upsert` (`upsert-enable`, `primary-key = "
           "[\"id\"]`; it also holds a stale version of input row 0, which the input replaces). *Visible after "
           "attempt 1* is what a reader of each collection sees (`old`: only the earlier rows, `all`: everything, "
           "`PARTIAL`: part of a claimed commit, applied document by document without a multi-document "
           "transaction, which the restore completes); *staging collections* counts the sink's "
           "`__seatunnel_stage_*` collections after attempt 1 → after the restore.")
