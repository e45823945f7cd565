"""Doris: tables of an Apache Doris cluster as a sink, over Stream Load (HTTP) and the MySQL protocol.

SeaTunnel's options (:mod:`.options`: ``fenodes``, ``query-port``, ``username``/``password``,
``table.identifier`` or ``database``/``table``, ``sink.label-prefix``, ``sink.enable-2pc``,
``sink.enable-delete``, ``doris.config``, the save modes, ``custom_sql``, ``save_mode_create_template``), or
``doris_conn_id`` naming an Airflow connection (host and port: a frontend's HTTP address; login, password;
extra ``query_port``).

The sink is exactly-once by the engine's two-phase protocol over the storage verbs (:mod:`.sink`): each
writer prepares one Stream Load transaction (``two_phase_commit``) under a label of the commit, the attempt
and its partition; the commit claims the attempt's token in the commit-log table (MySQL protocol) and
commits the transactions (``_stream_load_2pc``). Tested against a protocol stand-in (a Stream Load server in
front of MariaDB), not a real Doris. The Doris source is not runnable here. The user's docs: docs/doris.md;
deviations from SeaTunnel: :data:`.options.DEVIATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, FromConnection
from ..streamload.connector import StreamLoadSink
from .options import CONN_OPTION, DEVIATIONS, SPEC, parse

__all__ = ["CONNECTOR", "DEVIATIONS", "Doris"]


class Doris(StreamLoadSink, Connector, FromConnection):
    name = "Doris"
    connection_option = CONN_OPTION
    conn_type = "doris"
    #: deletes: DELETE and UPDATE_BEFORE rows are deletes with sink.enable-delete, and fail the write without it
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True, deletes=True)
    option_spec = SPEC
    parse_options = staticmethod(parse)
    description = "Writes rows into Doris tables exactly once (Stream Load transactions, two-phase commit)."
    #: the transactions' commits are steps after the claim: ``sink.move`` fires before the claim and after it
    moves_in_steps = True

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``fenodes``, ``query-port``, ``username`` and ``password`` from a connection."""
        out: dict[str, Any] = {"fenodes": f"{conn.host or 'localhost'}:{int(conn.port or 8030)}"}
        query_port = (conn.extra or {}).get("query_port")
        if query_port not in (None, ""):
            out["query-port"] = int(query_port)
        out["username"] = str(conn.login or "")
        out["password"] = str(conn.password or "")
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "fenodes" not in options


CONNECTOR = Doris()
