"""StarRocks: tables of a StarRocks cluster as a sink, over Stream Load's transaction interface (HTTP) and the
MySQL protocol.

SeaTunnel's options (:mod:`.options`: ``nodeUrls``, ``base-url``, ``username``/``password``, ``database``,
``table``, ``labelPrefix``, ``enable_upsert_delete``, ``starrocks.config``, the retries, the save modes,
``custom_sql``, ``save_mode_create_template``), or ``starrocks_conn_id`` naming an Airflow connection (host
and port: a frontend's HTTP address; login, password; extra ``query_port``).

The sink is exactly-once by the engine's two-phase protocol over the storage verbs, shared with Doris
(:mod:`..streamload.sink`): each writer begins, loads and prepares one transaction under a label of the
commit, the attempt and its partition; the commit claims the attempt's token in the commit-log table (MySQL
protocol) and commits the transactions by label. Tested against a protocol stand-in (a Stream Load server in
front of MariaDB), not a real StarRocks. The StarRocks source is not runnable here. The user's docs:
docs/starrocks.md; deviations from SeaTunnel: :data:`.options.DEVIATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, FromConnection
from ..streamload.connector import StreamLoadSink
from .options import CONN_OPTION, DEVIATIONS, SPEC, parse

__all__ = ["CONNECTOR", "DEVIATIONS", "StarRocks"]


class StarRocks(StreamLoadSink, Connector, FromConnection):
    name = "StarRocks"
    connection_option = CONN_OPTION
    conn_type = "starrocks"
    #: deletes: DELETE and UPDATE_BEFORE rows delete with enable_upsert_delete, and fail the write without it.
    #: The source (StarRocks's scan over Thrift) is SeaTunnel's plugin known to run elsewhere: it plans only.
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True, deletes=True)
    option_spec = SPEC
    parse_options = staticmethod(parse)
    description = "Writes rows into StarRocks tables exactly once (Stream Load transactions, two-phase commit)."
    #: the transactions' commits are steps after the claim: ``sink.move`` fires before the claim and after it
    moves_in_steps = True

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``nodeUrls``, ``base-url``, ``username`` and ``password`` from a connection."""
        host = conn.host or "localhost"
        query_port = (conn.extra or {}).get("query_port")
        port = int(query_port) if query_port not in (None, "") else 9030
        return {"nodeUrls": [f"{host}:{int(conn.port or 8030)}"], "base-url": f"jdbc:mysql://{host}:{port}/",
                "username": str(conn.login or ""), "password": str(conn.password or "")}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "nodeUrls" not in options


CONNECTOR = StarRocks()
