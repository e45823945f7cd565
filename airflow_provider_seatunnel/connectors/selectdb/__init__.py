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
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.twophase import CommitId, Published, Staged
from ..streamload.endpoint import Endpoint
from .options import CONN_OPTION, DEVIATIONS, SPEC, SelectDBOptions, parse

__all__ = ["CONNECTOR", "DEVIATIONS", "SelectDBCloud"]


class SelectDBCloud(Connector, FromConnection):
    name = "SelectDBCloud"
    connection_option = CONN_OPTION
    conn_type = "selectdb"
    #: deletes: DELETE and UPDATE_BEFORE rows delete with sink.enable-delete, and fail the write without it
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True, deletes=True)
    option_spec = SPEC
    description = "Writes rows into SelectDB Cloud tables exactly once (staged files, COPY INTO at the commit)."
    #: the files' copies are steps after the claim: ``sink.move`` fires before the claim and after it
    moves_in_steps = True

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """SeaTunnel's rules beyond the spec (addresses as host:port, table.identifier as db.table, the file
        type), located at their keys."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            parse(plugin.options, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        conn = plugin.get(CONN_OPTION)
        if conn is not None and not str(conn).strip():
            return [job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION)]
        return []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``load-url``, ``jdbc-url``, ``username`` and ``password`` from a connection."""
        host = conn.host or "localhost"
        query_port = (conn.extra or {}).get("query_port")
        port = int(query_port) if query_port not in (None, "") else 9030
        return {"load-url": f"{host}:{int(conn.port or 8080)}", "jdbc-url": f"{host}:{port}",
                "username": str(conn.login or ""), "password": str(conn.password or "")}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "load-url" not in options

    def options_of(self, vertex: Vertex) -> SelectDBOptions:
        """The block's options, checked again (a hand-written plan skips the compiler)."""
        try:
            return parse(vertex.config)
        except OptionError as e:
            raise e.at_run_time() from None

    def _endpoint(self, vertex: Vertex) -> Endpoint:
        endpoint = self.options_of(vertex).endpoint
        assert endpoint is not None
        return endpoint

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> Any:
        from ..streamload.sink import TableLog
        from .sink import FAMILY

        return TableLog(FAMILY, self._endpoint(vertex), self.options_of(vertex))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        from ..streamload.sink import stage
        from .sink import FAMILY

        return stage(ctx, vertex, FAMILY, self.options_of(vertex), commit, token, df)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        from ..streamload.sink import publish
        from .sink import FAMILY

        return publish(ctx, vertex, FAMILY, self._endpoint(vertex), staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        return None  # a staged file that is never copied is never visible; the stage expires it

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        return 0  # an older attempt's files are never claimed, never copied


CONNECTOR = SelectDBCloud()
