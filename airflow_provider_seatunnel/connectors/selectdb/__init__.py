"""SelectDBCloud: tables of a SelectDB Cloud warehouse as a sink, over its internal stage and ``COPY INTO``
(HTTP) and the MySQL protocol (the commit log).

SeaTunnel's options (:mod:`.options`: ``load-url``, ``jdbc-url``, ``cluster-name``, ``username``/``password``,
``table.identifier``, ``sink.label-prefix``, ``sink.enable-delete``, ``selectdb.config``), or
``selectdb_conn_id`` naming an Airflow connection (host and port: the warehouse's HTTP address; login,
password; extra ``query_port``).

Exactly-once by the Stream Load family's two phases (:mod:`..streamload.sink`): each writer stages one file
named by the commit, the attempt and its partition; the commit claims the attempt's token in the commit-log
table and copies the claimed files. Tested against a protocol stand-in (tests/streamload_server.py), not a real
SelectDB Cloud. The user's docs: docs/selectdb.md; deviations from SeaTunnel: :data:`.options.DEVIATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, FromConnection, RunContext, Vertex
from ...spi.twophase import CommitId, Staged
from ..streamload.connector import StreamLoadSink
from .options import CONN_OPTION, DEVIATIONS, SPEC, parse

__all__ = ["CONNECTOR", "DEVIATIONS", "SelectDBCloud"]


class SelectDBCloud(StreamLoadSink, Connector, FromConnection):
    name = "SelectDBCloud"
    connection_option = CONN_OPTION
    conn_type = "selectdb"
    #: deletes: DELETE and UPDATE_BEFORE rows delete with sink.enable-delete, and fail the write without it
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True, deletes=True)
    option_spec = SPEC
    parse_options = staticmethod(parse)
    description = "Writes rows into SelectDB Cloud tables exactly once (staged files, COPY INTO at the commit)."
    #: the files' copies are steps after the claim: ``sink.move`` fires before the claim and after it
    moves_in_steps = True

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``load-url``, ``jdbc-url``, ``username`` and ``password`` from a connection."""
        host = conn.host or "localhost"
        query_port = (conn.extra or {}).get("query_port")
        port = int(query_port) if query_port not in (None, "") else 9030
        return {"load-url": f"{host}:{int(conn.port or 8080)}", "jdbc-url": f"{host}:{port}",
                "username": str(conn.login or ""), "password": str(conn.password or "")}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "load-url" not in options

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        return None  # a staged file that is never copied is never visible; the stage expires it

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        return 0  # an older attempt's files are never claimed, never copied


CONNECTOR = SelectDBCloud()
