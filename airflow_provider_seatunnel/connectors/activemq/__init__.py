"""ActiveMQ (Classic): a queue of an ActiveMQ broker as a sink, as SeaTunnel's ``ActiveMQ`` (a sink only).

SeaTunnel's options (:mod:`.options`: ``uri``, ``queue_name``, ``username``, ``password``, ``client_id``, the JMS
connection-factory settings), or ``activemq_conn_id`` naming an Airflow connection (host, port, login,
password). Each row is one JSON text message, as SeaTunnel's JSON serialisation writes it.

The client is STOMP (:mod:`.stomp`, the standard library only): the broker's port must take STOMP (an ``auto``
transport takes OpenWire, SeaTunnel's protocol, and STOMP on one port). Exactly once through the engine's two
phases over :class:`.sink.ActiveMQSinkVerbs`: write tasks stage in broker transactions, the commit moves the
staged messages and writes the run's commit record in one broker transaction under a fence (a client id the
broker grants one connection at a time).

Deviations from SeaTunnel: :data:`.options.DEVIATIONS`. The user's docs: docs/activemq.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, FromConnection, Lineage, Unnamed
from ...spi.options import JobConfig, PluginConfig, Problem
from .options import CONN_OPTION, DEVIATIONS, SPEC, OptionError, parse, written_endpoint
from .sink import ActiveMQSinkVerbs

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "ActiveMQ"]


class ActiveMQ(Connector, ActiveMQSinkVerbs, FromConnection, Lineage):
    name = "ActiveMQ"
    connection_option = CONN_OPTION
    #: no committer: SeaTunnel's ActiveMQ sink has no aggregated committer (no coordinator slot)
    capabilities = Capabilities(sections=frozenset({SINK}), inserts_only=True)
    option_spec = SPEC  # required, identity and secrets (uri, password) come from it
    description = "Sends rows as JSON text messages to an ActiveMQ queue (staged, committed in one transaction)."

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """What the spec cannot say: username and password together, a URI this package reaches."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        try:
            parse(plugin.options, plugin.section, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        conn = plugin.get(CONN_OPTION)
        if conn is not None and not str(conn).strip():
            return [job.problem(f"{CONN_OPTION} must name an Airflow connection", plugin, key=CONN_OPTION)]
        return []

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """``uri``, ``username`` and ``password`` from a connection (any type): host, port (default 61616),
        login, password."""
        out: dict[str, Any] = {"uri": f"tcp://{conn.host or 'localhost'}:{int(conn.port or 61616)}"}
        out.update(conn.credentials())  # both or neither: the options bundle them
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "uri" not in options

    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        """``activemq://host:port/<queue>`` (never the credentials)."""
        queue = options.get("queue_name")
        if not queue:
            return []
        where = written_endpoint(options)
        if where is None:
            return [Unnamed(f"queue {queue!r} of connection {options.get(CONN_OPTION)!r}")]
        from urllib.parse import quote

        return [f"{where}/{quote(str(queue), safe='')}"]


CONNECTOR = ActiveMQ()
