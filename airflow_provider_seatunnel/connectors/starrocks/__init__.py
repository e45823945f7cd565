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

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, FromConnection, RunContext, Vertex
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.twophase import CommitId, Published, Staged
from ..streamload.endpoint import Endpoint
from .options import CONN_OPTION, DEVIATIONS, SPEC, StarRocksOptions, parse

__all__ = ["CONNECTOR", "DEVIATIONS", "StarRocks"]


class StarRocks(Connector, FromConnection):
    name = "StarRocks"
    connection_option = CONN_OPTION
    conn_type = "starrocks"
    #: deletes: DELETE and UPDATE_BEFORE rows delete with enable_upsert_delete, and fail the write without it.
    #: The source (StarRocks's scan over Thrift) is SeaTunnel's plugin known to run elsewhere: it plans only.
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True, deletes=True)
    option_spec = SPEC
    description = "Writes rows into StarRocks tables exactly once (Stream Load transactions, two-phase commit)."
    #: the transactions' commits are steps after the claim: ``sink.move`` fires before the claim and after it
    moves_in_steps = True

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """SeaTunnel's rules beyond the spec (nodeUrls as host:port, base-url as a MySQL JDBC URL, the load
        format), located at their keys."""
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
        """``nodeUrls``, ``base-url``, ``username`` and ``password`` from a connection."""
        host = conn.host or "localhost"
        query_port = (conn.extra or {}).get("query_port")
        port = int(query_port) if query_port not in (None, "") else 9030
        return {"nodeUrls": [f"{host}:{int(conn.port or 8030)}"], "base-url": f"jdbc:mysql://{host}:{port}/",
                "username": str(conn.login or ""), "password": str(conn.password or "")}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "nodeUrls" not in options

    # sink: the storage verbs -------------------------------------------------------------------

    def options_of(self, vertex: Vertex) -> StarRocksOptions:
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


CONNECTOR = StarRocks()
