"""Restore-trial targets on Elasticsearch (:mod:`restore_faults`): two indices of a private OpenSearch 2.19 node
(``tests/opensearch_server.py``, started once per benchmark run), written by two Elasticsearch sinks of one
pipeline:

* ``rf_es_plain``: without primary keys (each row a document; ids the sink derives from the commit, so a
  duplicate would show as a second document with the same values);
* ``rf_es_keyed``: ``primary_keys = ["id"]`` (the row's id is the document's ``_id``); it also holds a stale
  document with id 0 that the input replaces.

Before every trial both indices are deleted, with the sink's commit log and staging indices, and each given one
document of an earlier run, ``(-1, "old", "g0")``. A reader sees what a search of the index returns after a
refresh. *Raw* counts the sink's hidden staging indices (``seatunnel_staging_*``) left.

The sink's publish fires ``sink.move`` twice per table: before its claim and after it, before the copy
(:data:`MOVES`: two sinks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]
MOVES = 4
READING = (
    "The targets are two indices of a private OpenSearch 2.19 node (`tests/opensearch_server.py`), read with a "
    "search after a refresh: `rf_es_plain` (no primary keys) and `rf_es_keyed` (`primary_keys = [\"id\"]`; it also "
    "holds a stale document with id 0 that the input replaces). *Visible after attempt 1* is what a search of each "
    "index returns (`old`: only the earlier documents, `all`: everything, `PARTIAL`: a copy in progress or killed "
    "after the claim, which the restore finishes); *staging indices* counts the sink's hidden "
    "`seatunnel_staging_*` indices after attempt 1 → after the restore.")


def _server(resources: Any) -> Any:
    if getattr(resources, "opensearch", None) is None:
        from tests import opensearch_server

        resources.opensearch = opensearch_server.start()
        resources.callback(resources.opensearch.stop)
    return resources.opensearch


def elasticsearch_sinks(rows: int, resources: Any, sink_cls: Callable[..., Any]) -> list[Any]:
    """The two sinks of the trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _server(resources)

    def seeder(index: str, keyed: bool) -> Callable[[], None]:
        def seed() -> None:
            if not keyed:  # the first sink's seed: the commit log and staging of earlier trials go too
                for name in server.indices("seatunnel_*"):
                    server.delete(name)
            server.delete(index)
            docs = [{"id": -1, "name": "old", "grp": "g0"}]
            if keyed:
                docs.append({"id": 0, "name": "stale", "grp": "g9"})
            server.index_docs(index, docs, ids=[str(d["id"]) for d in docs] if keyed else None)
        return seed

    def reader(index: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(d["id"]), str(d["name"]), str(d["grp"])) for d in server.docs(index).values()]
        return read

    def staging() -> int:
        return len(server.indices("seatunnel_staging_*"))

    hosts = f'hosts = ["{server.url}"]'
    return [
        sink_cls("Elasticsearch plain", f'Elasticsearch {{ plugin_input = "rows", {hosts}, index = "rf_es_plain", '
                                        'max_batch_size = 200 }', seeder("rf_es_plain", False), reader("rf_es_plain"),
                 staging, list(OLD)),
        sink_cls("Elasticsearch keyed", f'Elasticsearch {{ plugin_input = "rows", {hosts}, index = "rf_es_keyed", '
                                        'primary_keys = ["id"], max_batch_size = 200 }',
                 seeder("rf_es_keyed", True), reader("rf_es_keyed"), None, [*OLD, (0, "stale", "g9")], True),
    ]
