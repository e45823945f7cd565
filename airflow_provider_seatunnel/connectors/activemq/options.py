"""ActiveMQ sink options as SeaTunnel names them, read once for both phases.

SeaTunnel's option rule requires ``uri`` and ``queue_name``, ``username`` and ``password`` together, and accepts
the JMS connection-factory settings (``client_id``, ``check_for_duplicate``, ``copy_message_on_send``,
``disable_timeStamps_by_default``, ``use_compression``, ``always_session_async``, ``always_sync_send``,
``close_timeout``, ``dispatch_async``, ``nested_map_and_list_enabled``,
``warn_about_unstarted_connection_timeout``), and ``host``/``port``, which its sink never reads (the address is
the URI's). ``activemq_conn_id`` names an Airflow connection instead of ``uri`` and the credentials.
:func:`parse` turns a block into :class:`ActiveMQOptions` or raises :class:`OptionError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from ...spi import SINK
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec

CONN_OPTION = "activemq_conn_id"
DEFAULT_PORT = 61616
#: schemes of a single broker's TCP port that this package reaches over STOMP: ``auto`` (OpenWire and STOMP on one
#: port), ``stomp`` and ``tcp``/``nio`` (OpenWire's, which must then be an ``auto`` port: see docs/activemq.md)
SCHEMES = ("tcp", "nio", "auto", "auto+nio", "stomp", "stomp+nio")
#: commit records and staged messages expire after this long (the restore window)
RECORD_TTL_MS = 7 * 24 * 3600 * 1000

_ACCEPTED = "Accepted as SeaTunnel's JMS client setting; no effect on the STOMP client used here."
SPEC = OptionSpec((
    Option("uri", required=True, required_unless=(CONN_OPTION,), allow_blank=False, identity=True,
           description="The broker's address, tcp://host:port (an ActiveMQ port with the auto transport, or a "
                       "stomp:// port); credentials in it (tcp://user:password@host:port) are read too.",
           secret=True),
    Option("queue_name", required=True, allow_blank=False, identity=True,
           description="The queue the rows are sent to, one JSON text message each."),
    Option("username", description="The broker user (set with password)."),
    Option("password", description="The broker user's password (set with username).", secret=True),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection: host, port (default 61616), login, password."),
    Option("host", description="Accepted; SeaTunnel's sink ignores it (the address is uri's), as does this one."),
    Option("port", "int", description="Accepted; SeaTunnel's sink ignores it (the address is uri's), as does "
                                      "this one.", minimum=1, maximum=65535),
    Option("virtual_host", description="Accepted and ignored (ActiveMQ has no virtual hosts)."),
    Option("client_id", description="A client id for the sink's commit connection (a second connection with the "
                                    "same id is refused by the broker); default: one derived from the run."),
    Option("check_for_duplicate", "bool", description=_ACCEPTED),
    Option("copy_message_on_send", "bool", description=_ACCEPTED),
    Option("disable_timeStamps_by_default", "bool", description="Accepted; messages carry the broker's timestamp "
                                                                "either way (STOMP sets none)."),
    Option("use_compression", "bool", description=_ACCEPTED),
    Option("always_session_async", "bool", description=_ACCEPTED),
    Option("always_sync_send", "bool", description=_ACCEPTED + " Every send here is confirmed by its commit."),
    Option("close_timeout", "int", description=_ACCEPTED, minimum=0),
    Option("dispatch_async", "bool", description=_ACCEPTED),
    Option("nested_map_and_list_enabled", "bool", description=_ACCEPTED),
    Option("warn_about_unstarted_connection_timeout", "int", description=_ACCEPTED, minimum=0),
    Option("consumer_expiry_check_enabled", "bool", description=_ACCEPTED),
), bundled=(("username", "password"),))

DEVIATIONS = (
    "the client speaks STOMP, not OpenWire: uri's tcp:// port must be an ActiveMQ transport that takes STOMP "
    "(auto://, the default tcp port of ActiveMQ 5.13+ distributions is OpenWire only: add an auto or stomp "
    "connector); SeaTunnel's JMS client speaks OpenWire",
    "exactly once: each write task sends its rows to a staging queue in one broker transaction; the commit "
    "moves them into queue_name and writes the run's commit record in ONE broker transaction, holding the "
    "run's fence (a connection whose client id the broker refuses to a second one); SeaTunnel sends each row "
    "at once (at least once, a failed run leaves part of its rows)",
    "the JMS connection-factory settings are accepted and have no effect (client_id names the commit "
    "connection); host, port and virtual_host are ignored, as SeaTunnel's sink ignores them",
    "failover:, ssl:// and vm:// URIs are refused (one plain TCP broker address)",
)


@dataclass(frozen=True)
class Endpoint:
    """Where the broker is and the credentials (never shown: :attr:`label` has none)."""

    host: str
    port: int
    user: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"activemq://{self.host}:{self.port}"

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "user": self.user, "password": self.password}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(str(d["host"]), int(d["port"]), d.get("user"), d.get("password"))


@dataclass(frozen=True)
class ActiveMQOptions:
    """One sink block, checked: the endpoint (None at compile time when a connection gives it) and the queue."""

    endpoint: Endpoint | None
    queue: str
    client_id: str | None = None


def _from_uri(uri: str) -> tuple[str, int, str | None, str | None]:
    parts = urlsplit(uri.strip())
    if parts.scheme.lower() not in SCHEMES or not parts.hostname:
        raise OptionError("uri", f"uri must name one broker as tcp://host:port (not {parts.scheme or uri!r}): "
                                 "failover:, ssl:// and vm:// are not supported by this package",
                          'set uri = "tcp://127.0.0.1:61616"')
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise OptionError("uri", "uri has an invalid port", 'set uri = "tcp://127.0.0.1:61616"') from None
    return (parts.hostname, port, unquote(parts.username) if parts.username else None,
            unquote(parts.password) if parts.password else None)


def parse(options: Mapping[str, Any], section: str = SINK, need_endpoint: bool = True) -> ActiveMQOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint`` false:
    a block naming ``activemq_conn_id`` may leave the address to the connection (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    endpoint = None
    if o["uri"]:
        host, port, user, password = _from_uri(str(o["uri"]))
        endpoint = Endpoint(host, port, o["username"] or user, o["password"] or password)
    elif need_endpoint or o[CONN_OPTION] is None:
        raise OptionError("uri", "the option 'uri' is required",
                          f'set uri = "tcp://127.0.0.1:61616" (or {CONN_OPTION} = "<an Airflow connection>")')
    return ActiveMQOptions(endpoint, str(o["queue_name"]), str(o["client_id"]) if o["client_id"] else None)


def written_endpoint(options: Mapping[str, Any]) -> str | None:
    """``activemq://host:port`` as the block writes it (lineage: never the credentials); None when a connection
    gives it or the URI is not one this package reaches."""
    uri = options.get("uri")
    if not uri:
        return None
    try:
        host, port, _, _ = _from_uri(str(uri))
    except OptionError:
        return None
    return f"activemq://{host}:{port}"
