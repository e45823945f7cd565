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

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, FromConnection, RunContext, Vertex
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.twophase import CommitId, Published, Staged
from .options import CONN_OPTION, DEVIATIONS, SPEC, DorisOptions, Endpoint, parse

__all__ = ["CONNECTOR", "DEVIATIONS", "Doris"]


class Doris(Connector, FromConnection):
    name = "Doris"
    connection_option = CONN_OPTION
    conn_type = "doris"
    #: deletes: DELETE and UPDATE_BEFORE rows are deletes with sink.enable-delete, and fail the write without it
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True, deletes=True)
    option_spec = SPEC
    description = "Writes rows into Doris tables exactly once (Stream Load transactions, two-phase commit)."
    #: the transactions' commits are steps after the claim: ``sink.move`` fires before the claim and after it
    moves_in_steps = True

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """SeaTunnel's rules beyond the spec (fenodes as host:port, table.identifier as db.table, the load
        format), located at their keys; options that change nothing here are warnings."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            parse(plugin.options, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        problems: list[Problem] = []
        conn = plugin.get(CONN_OPTION)
        if conn is not None and not str(conn).strip():
            problems.append(job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION))
        return problems

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

    # sink: the storage verbs -------------------------------------------------------------------

    def options_of(self, vertex: Vertex) -> DorisOptions:
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
        from ..streamload.sink import discard
        from .sink import FAMILY

        discard(FAMILY, self._endpoint(vertex), staged)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        from ..streamload.sink import discard_older, target_of
        from .sink import FAMILY

        database, _ = target_of(self.options_of(vertex), commit.table)
        return discard_older(FAMILY, self._endpoint(vertex), database, commit, token)


CONNECTOR = Doris()
