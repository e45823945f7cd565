"""Http: the rows of an HTTP API's responses, as SeaTunnel's ``Http`` source reads them (``requests``).

SeaTunnel's options (:mod:`.options`: ``url``, ``method`` GET/POST, ``headers``, ``params``,
``body``, ``format`` text/json, ``schema``, ``json_field``, ``content_field``, ``pageing``,
``retry`` and its backoff, timeouts, ``poll_interval_millis``, ``enable_multi_lines``, the later
``keep_params_as_form``, ``keep_page_param_as_http_param``, ``pageing.use_placeholder_replacement``
and ``json_filed_missed_return_null``), or ``http_conn_id`` naming an Airflow connection of type
``http`` that gives the base of a relative ``url``, basic-auth credentials and extra headers.

* What each request sends and how failures are retried and classified: :mod:`.request`;
* a response as rows (JSONPath: :mod:`.jsonpath`), and when paging stops: :mod:`.records`;
* the Spark side (:mod:`.runtime`, :mod:`.datasource`): a PySpark Python data source in exactly
  ``vertex.parallelism`` partitions; pages that ``pageing.total_page_size`` fixes are dealt over
  them. A STREAMING job polls once per micro-batch (at most once per ``poll_interval_millis``).

The sink (:mod:`.sink`, options :data:`.options.SINK_SPEC`) POSTs every row as JSON, at least once.
Compile-time checks with located errors and the schema: :mod:`.checks`; deviations from SeaTunnel:
:data:`.options.DEVIATIONS` (the source's) and :data:`.options.SINK_DEVIATIONS`.
The user's docs: docs/http.md.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
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
    RunContext,
    SchemaInference,
    Sink,
    StreamingSource,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem, option
from ...spi.optionspec import OptionSpec
from ...spi.schema import Schema
from . import checks
from .options import (
    CONN_AUTHORIZATION,
    CONN_BASE_URL,
    CONN_HEADERS,
    CONN_OPTION,
    DEVIATIONS,
    SINK_DEVIATIONS,
    SINK_SPEC,
    SPEC,
    OptionError,
    parse_sink,
)

__all__ = ["CONNECTOR", "CONN_OPTION", "DEVIATIONS", "SINK_DEVIATIONS", "Http"]

#: header names whose values are credentials, hidden wherever options are shown (any depth, any case)
AUTH_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "apikey",
                          "api_key", "x-auth-token", "x-access-token"})
#: keys of an ``http`` connection's extra that Airflow's HttpHook reads as settings, not headers
HOOK_SETTINGS = frozenset({"proxies", "proxy", "stream", "verify", "cert", "max_redirects", "trust_env",
                           "allow_redirects", "timeout", "auth_type", "auth_kwargs", "check_response",
                           "extra_options", "adapter"})


class Http(Connector, SchemaInference, BatchSource, StreamingSource, Sink, FromConnection):
    name = "Http"
    connection_option = CONN_OPTION
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), inserts_only=True)
    option_spec = SPEC  # the source's: required (url), identity (url, method, http_conn_id) and secrets
    sink_option_spec: OptionSpec | None = SINK_SPEC  # a sink block's (the option docs list both)
    secrets = AUTH_HEADERS
    description = "Reads the responses of an HTTP API (JSON or text), page by page; POSTs rows as JSON."

    def problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """A source block's problems (:data:`.options.SPEC`, then :func:`.checks.check`); a sink block's
        (:data:`.options.SINK_SPEC`, then its url)."""
        if plugin.section != SINK:
            return super().problems(plugin, job)
        found = SINK_SPEC.problems(plugin, job)
        if SINK_SPEC.valid(plugin.options, SINK) is not None:
            try:
                parse_sink(plugin.options)
            except OptionError as e:
                found.append(job.problem(e.message, plugin, key=e.key, hint=e.hint))
        return found

    check = staticmethod(checks.check)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        if plugin.section == SINK:
            return None, []
        return checks.schema(plugin, job, inputs)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """From a connection of type ``http``: the base URL (``schema`` the scheme, default http;
        ``host``, which may hold the scheme itself; ``port``) for a relative ``url``; login and
        password as a basic ``Authorization`` header; the extra's scalar members as headers (but the
        settings Airflow's HttpHook reads there, :data:`HOOK_SETTINGS`), and the members of its
        ``headers`` object (the ``seatunnel_http`` form's field), which win."""
        out: dict[str, Any] = {}
        if conn.host:
            out[CONN_BASE_URL] = _base_url(str(conn.host), conn.schema, conn.port)
        if conn.login or conn.password:
            token = base64.b64encode(f"{conn.login or ''}:{conn.password or ''}".encode()).decode("ascii")
            out[CONN_AUTHORIZATION] = f"Basic {token}"
        extra = {str(k): v for k, v in (conn.extra or {}).items()
                 if isinstance(v, (str, int, float, bool)) and str(k).lower() not in HOOK_SETTINGS}
        given = (conn.extra or {}).get("headers")  # the form's headers object (a `seatunnel_http` connection)
        if isinstance(given, Mapping):
            extra.update({str(k): v for k, v in given.items() if isinstance(v, (str, int, float, bool))})
        if extra:
            out[CONN_HEADERS] = extra
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        headers = option(options, "headers")
        return not (isinstance(headers, Mapping) and any(str(k).lower() == "authorization" for k in headers))

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read

        return read(ctx, vertex)

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .runtime import read_stream

        return read_stream(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """POST every row (:mod:`.sink`): at least once, nothing left to commit."""
        from .sink import write

        write(ctx, vertex, data)
        return None


def _base_url(host: str, scheme: str | None, port: int | None) -> str:
    """``scheme://host[:port]`` (a host with its own scheme, path or port keeps them)."""
    from urllib.parse import urlsplit, urlunsplit

    base = host.rstrip("/") if "://" in host else f"{scheme or 'http'}://{host.rstrip('/')}"
    parts = urlsplit(base)
    if port and ":" not in parts.netloc.rsplit("@", 1)[-1]:
        parts = parts._replace(netloc=f"{parts.netloc}:{port}")
    return urlunsplit(parts)


CONNECTOR = Http()
