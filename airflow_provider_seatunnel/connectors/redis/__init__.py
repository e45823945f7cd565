"""Redis: keys of a Redis server as source and sink (the ``redis`` client, extra ``redis``).

SeaTunnel's options (:mod:`.options`: ``host``, ``port``, ``db_num``, ``user``, ``auth``,
``data_type`` key/string/hash/list/set/zset, ``keys``, ``key``, ``format``, ``schema``,
``hash_key_parse_mode``, ``batch_size``, ``expire``), or ``redis_conn_id`` naming an Airflow
connection of type ``redis`` that gives host, port, credentials and database.

* **Source** (:mod:`.runtime`, :mod:`.datasource`): the keys matching ``keys`` of the data
  type's Redis type, listed once and dealt over exactly ``vertex.parallelism`` partitions of a
  PySpark Python data source; each string, element or hash is a row: the one field ``content``
  without ``format``, else the ``schema`` fields parsed from JSON (:mod:`.values`).
* **Sink**, exactly-once by the engine's two-phase protocol over the storage verbs of
  :class:`.runtime.RedisSinkVerbs`: ``stage`` writes the rows into per-attempt lists under
  ``__seatunnel:redis:`` at the plan's parallelism (one write task per partition); ``publish``
  (:mod:`.commit`) is one Lua script that checks the token and the commit record, applies every
  row, sets ``expire`` and records the commit, atomically; ``discard`` deletes the staging.
  STREAMING micro-batches go through the same phases and ``retire`` drops
  the records of earlier micro-batches. SeaTunnel's Redis has no save modes: nor has this one.

Compile-time checks with located errors and the source's schema: :mod:`.checks`; deviations from
SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/redis.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    ConnectionInfo,
    Connector,
    Dataset,
    FromConnection,
    RetiresCommits,
    RunContext,
    SchemaInference,
    Vertex,
)
from . import checks
from .options import CONN_OPTION, DEVIATIONS, SPEC
from .runtime import RedisSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "Redis"]

log = logging.getLogger("seatunnel.redis")


class Redis(Connector, SchemaInference, BatchSource, RedisSinkVerbs, RetiresCommits, FromConnection):
    name = "Redis"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's Redis sink has no aggregated committer (no coordinator slot)
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC  # required, identity and secrets (auth) come from it
    description = "Reads keys matching a pattern, or writes keys, of a Redis server (string, hash, list, set, zset)."

    # compile time ------------------------------------------------------------------------------

    check = staticmethod(checks.check)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``host``, ``port``, ``db_num``, ``user`` and ``auth`` from a connection of type ``redis``
        (host, port, login, password, extra ``db``)."""
        out: dict[str, Any] = {"host": str(conn.host or "localhost"), "port": int(conn.port or 6379)}
        db = (conn.extra or {}).get("db")
        if db not in (None, ""):
            out["db_num"] = int(db)
        if conn.login:
            out["user"] = str(conn.login)
        if conn.password:
            out["auth"] = str(conn.password)
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "auth" not in options and "host" not in options

    schema = staticmethod(checks.schema)

    # source ------------------------------------------------------------------------------------

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)

    # sink --------------------------------------------------------------------------------------


CONNECTOR = Redis()
