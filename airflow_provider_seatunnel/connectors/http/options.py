"""Http source options as SeaTunnel names them, read once for both phases (pure Python).

:func:`parse` turns a block's options into :class:`HttpOptions` or raises :class:`OptionError`
naming the key: the compile-time checks make it a located problem, the run (driver and Spark's
Python workers alike) a ``RuntimeConfigError``. Names, defaults and required options are
SeaTunnel's: ``url`` is required; ``format`` is ``text`` unless set; ``format = json`` needs
``schema`` and a ``schema`` needs ``format = json``; ``method`` is GET or POST.

``http_conn_id`` names an Airflow connection of type ``http``; when the task runs, the hook adds
the options :data:`CONN_BASE_URL`, :data:`CONN_AUTHORIZATION` and :data:`CONN_HEADERS` from it
(:meth:`..Http.connection_options`), which only this package sets.

What differs from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import Schema, TypeError_, schema_from_options
from .jsonpath import JsonPath, PathError, UnsupportedPath, compile_path

METHODS = ("GET", "POST")
FORMATS = ("text", "json")
PAGE_TYPES = ("PageNumber", "Cursor")
#: the one field of a source read without a schema (SeaTunnel's simple text table)
TEXT_FIELD = "content"
DEFAULT_PAGE_FIELD = "page"
DEFAULT_BATCH_SIZE = 100
DEFAULT_START_PAGE = 1
DEFAULT_BACKOFF_MULTIPLIER_MS = 100
DEFAULT_BACKOFF_MAX_MS = 10000
DEFAULT_CONNECT_TIMEOUT_MS = 12000
DEFAULT_SOCKET_TIMEOUT_MS = 60000
#: the block option naming an Airflow connection of type ``http``
CONN_OPTION = "http_conn_id"
#: options the hook fills from that connection (never written in a config)
CONN_BASE_URL = "http_conn_base_url"
CONN_AUTHORIZATION = "http_conn_authorization"
CONN_HEADERS = "http_conn_headers"
_BY_HOOK = f"Set by the hook from {CONN_OPTION} when the task runs; never written in a config."

#: the source's options (a sink block plans, unchecked, with a not-runnable warning: :class:`..Http`)
SPEC = OptionSpec((
    Option("url", required=True, allow_blank=False, identity=True,
           description=f"The URL requested: absolute, or relative to the base of {CONN_OPTION}'s connection."),
    Option("method", "enum", "GET", "GET or POST.", choices=METHODS, identity=True),
    Option(CONN_OPTION, identity=True, description="An Airflow connection of type http: its host is the base of "
           "a relative url, its login and password a basic Authorization header, its extra's values headers."),
    Option("headers", "map", description="The request's headers (credential headers are masked)."),
    Option("params", "map", description="The query parameters (a POST sends them as a form unless "
           "keep_params_as_form = false)."),
    Option("body", description="The request's body (JSON text), sent with POST."),
    Option("format", "enum", "text", "json: rows of the schema; text: each response is the one field content.",
           choices=FORMATS),
    Option("schema", "map", description="The rows' fields (format json).", required_if=(("format", ("json",)),)),
    Option("json_field", "map", description="field = JSONPath: each field's values (format json)."),
    Option("content_field", description="A JSONPath to the records in each response (format json)."),
    Option("json_filed_missed_return_null", "bool", False, "A json_field path that matches nothing gives null."),
    Option("pageing", "map", description="Paging: the page number goes in a parameter, from start_page_number."),
    Option("pageing.page_field", default=DEFAULT_PAGE_FIELD, allow_blank=False,
           description="The parameter holding the page number."),
    Option("pageing.total_page_size", "int", 0, "The pages read (0: until a page of fewer than batch_size "
           "records).", minimum=0),
    Option("pageing.batch_size", "int", DEFAULT_BATCH_SIZE, "Records per full page.", minimum=1),
    Option("pageing.start_page_number", "int", DEFAULT_START_PAGE, "The first page.", minimum=0),
    Option("pageing.use_placeholder_replacement", "bool", False, "The page number replaces ${page_field} in url, "
           "params and body."),
    Option("pageing.page_type", "enum", "PageNumber", "PageNumber; Cursor plans but cannot run here.",
           choices=PAGE_TYPES),
    Option("keep_page_param_as_http_param", "bool", description="With placeholders, still send the page number "
           "as a parameter."),
    Option("keep_params_as_form", "bool", description="A POST sends params as a form (unset: as SeaTunnel 2.3.9)."),
    Option("retry", "int", 0, "Attempts of a failed request in all (0: one).", minimum=0),
    Option("retry_backoff_multiplier_ms", "int", DEFAULT_BACKOFF_MULTIPLIER_MS, "Back-off step.", minimum=0),
    Option("retry_backoff_max_ms", "int", DEFAULT_BACKOFF_MAX_MS, "Longest back-off.", minimum=0),
    Option("poll_interval_millis", "int", 0, "STREAMING: the least time between two polls.", minimum=0),
    Option("connect_timeout_ms", "int", DEFAULT_CONNECT_TIMEOUT_MS, "Connect timeout.", minimum=0),
    Option("socket_timeout_ms", "int", DEFAULT_SOCKET_TIMEOUT_MS, "Read timeout.", minimum=0),
    Option("enable_multi_lines", "bool", False, "format text: each line of a response is a row."),
    Option(CONN_BASE_URL, description=_BY_HOOK),
    Option(CONN_AUTHORIZATION, secret=True, description=_BY_HOOK),
    Option(CONN_HEADERS, "map", secret=True, description=_BY_HOOK),
))

#: the sink's options: SeaTunnel 2.3.8's (url, headers, params, retries, timeouts) and the connection's
SINK_SPEC = OptionSpec((
    *(o for o in SPEC.options if o.key in ("url", CONN_OPTION, "headers", "retry", "retry_backoff_multiplier_ms",
                                            "retry_backoff_max_ms", "connect_timeout_ms", "socket_timeout_ms",
                                            CONN_BASE_URL, CONN_AUTHORIZATION, CONN_HEADERS)),
    Option("params", "map", description="Query parameters of every request (SeaTunnel 2.3.8 sends them as "
           "headers, replacing headers: a loss this sink does not repeat)."),
    Option("multi_table_sink_replica", "int", 1, "SeaTunnel's writers per table; parallelism comes from the plan "
           "here.", minimum=1),
))

SINK_DEVIATIONS = (
    "params go in each request's query string, beside headers; SeaTunnel 2.3.8 sends them as headers, "
    "replacing the headers option",
    "a row the endpoint refuses fails the job: after the retries for connection failures, timeouts, 5xx, 408 "
    "and 429 (transient), at once for other statuses outside 200-207 (deterministic); SeaTunnel logs the "
    "error and drops the row",
    "retry, its backoff and the timeouts apply; SeaTunnel 2.3.8's sink reads none of them (no retries)",
    "at least once, as SeaTunnel: a retried task or attempt posts its rows again (an endpoint cannot take "
    "part in a commit); make the endpoint idempotent",
)

DEVIATIONS = (
    "parallelism: with pageing.total_page_size the pages are known before reading and are dealt over the "
    "plan's parallelism, one Spark partition each; otherwise (no paging, or pages until a short one) one "
    "partition reads them in order and the others are empty. SeaTunnel reads with a single split",
    "retries: besides connection failures and timeouts (SeaTunnel's IOException), answers 5xx, 408 and 429 "
    "are retried too; retry is the number of attempts in all (SeaTunnel's stop-after-attempt)",
    "a response with an empty body ends the paging (SeaTunnel would request the next page for ever)",
    "content_field naming one array (a definite path such as $.data) reads that array's elements as the "
    "records; SeaTunnel wraps the match in a list and reads one row of nulls",
    "json_field values keep their JSON types (a nested object fills a row, map or array field); SeaTunnel "
    "turns each into text first",
    "a blank line of a multi-line response is skipped",
    "JSONPath filters and functions are not supported (the block plans, with a not-runnable warning)",
    "STREAMING: one poll per micro-batch, at most one per poll_interval_millis; under the default trigger "
    "(available_now) each run polls once. A replayed micro-batch requests again (at least once, as SeaTunnel)",
)


@dataclass(frozen=True)
class Paging:
    """``pageing``: the page number goes in ``page_field``; stop after ``total_page_size`` pages (when
    > 0), else after a page of fewer than ``batch_size`` records."""

    page_field: str = DEFAULT_PAGE_FIELD
    total_page_size: int = 0
    batch_size: int = DEFAULT_BATCH_SIZE
    start_page_number: int = DEFAULT_START_PAGE
    use_placeholder_replacement: bool = False
    page_type: str = "pagenumber"

    @property
    def pages(self) -> list[int] | None:
        """The page numbers when ``total_page_size`` fixes them (SeaTunnel reads page p and stops once
        p >= total_page_size), else None: pages until a short one."""
        if self.total_page_size <= 0:
            return None
        return list(range(self.start_page_number, max(self.start_page_number, self.total_page_size) + 1))


@dataclass(frozen=True)
class HttpOptions:
    """One block, checked. ``headers`` and ``params`` are text values in the block's order."""

    url: str
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None
    format: str = "text"
    schema: Schema | None = None
    json_field: Mapping[str, JsonPath] | None = None
    content_field: JsonPath | None = None
    paging: Paging | None = None
    retry: int = 0
    backoff_multiplier_ms: int = DEFAULT_BACKOFF_MULTIPLIER_MS
    backoff_max_ms: int = DEFAULT_BACKOFF_MAX_MS
    poll_interval_ms: int = 0
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    socket_timeout_ms: int = DEFAULT_SOCKET_TIMEOUT_MS
    multi_lines: bool = False
    keep_params_as_form: bool | None = None  # None: unset (SeaTunnel 2.3.9's form for POST)
    keep_page_param: bool | None = None  # None: unset (the page goes in params unless placeholders)
    missed_null: bool = False
    conn_id: str | None = None
    base_url: str | None = field(default=None, repr=False)
    authorization: str | None = field(default=None, repr=False)
    conn_headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        """The URL as messages show it: no query string, no user info."""
        return url_label(self.full_url())

    def full_url(self) -> str:
        """``url``, prefixed with the connection's base URL when it is relative."""
        if is_absolute(self.url) or not self.base_url:
            return self.url
        return self.base_url.rstrip("/") + "/" + self.url.lstrip("/")

    def output_schema(self) -> Schema:
        """The rows: the declared schema (format json), else the one field ``content string``."""
        from ...spi.schema import Field, parse_type

        if self.format == "json" and self.schema is not None:
            return self.schema
        return Schema((Field(TEXT_FIELD, parse_type("string")),))


def is_absolute(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def url_label(url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else parts.path


def text_of(value: Any) -> str:
    """A header or parameter value as text (numbers and booleans as written, nested values as JSON)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _text_map(value: Mapping[str, Any] | None) -> dict[str, str]:
    """A map of text values; nested maps become dotted keys, as SeaTunnel's config flattens them."""
    out: dict[str, str] = {}
    if value is None:
        return out

    def walk(prefix: str, tree: Mapping[str, Any]) -> None:
        for k, v in tree.items():
            name = f"{prefix}{k}"
            if isinstance(v, Mapping):
                walk(name + ".", v)
            elif v is not None:
                out[name] = text_of(v)

    walk("", value)
    return out


def _path(key: str, text: Any, lenient: bool = False) -> JsonPath:
    """``text`` parsed; ``lenient``: a path using what cannot run here (a filter) is kept unparsed
    (compile time: the block plans, with a not-runnable warning)."""
    try:
        return compile_path(text)
    except UnsupportedPath:
        if lenient:
            return JsonPath(str(text), ())
        raise OptionError(key, f"{text!r} uses a JSONPath feature this package cannot evaluate") from None
    except PathError as e:
        raise OptionError(key, str(e), "write a JSONPath such as \"$.data[*].name\"") from None


def _paging(o: ParsedOptions) -> Paging | None:
    if o["pageing"] is None:
        return None
    return Paging(page_field=o["pageing.page_field"], total_page_size=o["pageing.total_page_size"],
                  batch_size=o["pageing.batch_size"], start_page_number=o["pageing.start_page_number"],
                  use_placeholder_replacement=o["pageing.use_placeholder_replacement"],
                  page_type=o["pageing.page_type"].lower())


def _format_and_schema(options: Mapping[str, Any], fmt: str) -> tuple[str, Schema | None]:
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if fmt == "json" and (schema is None or not schema.fields):
        raise OptionError("schema", "the option 'schema' is required when format = json",
                          "add schema = { fields { name = string, ... } }, or remove format to read each "
                          "response as the one text field 'content'")
    if fmt == "text" and schema is not None:
        raise OptionError("format", "Unsupported data format [text], http connector only support json format now: "
                                    "a schema needs format = json",
                          "set format = json, or remove schema to read each response as the one field 'content'")
    return fmt, schema


def _url(o: ParsedOptions) -> str:
    url = o["url"].strip()
    if not is_absolute(url) and o[CONN_OPTION] is None:
        raise OptionError("url", f"url {url!r} is not an http:// or https:// URL",
                          f"write the whole URL, or name a connection with {CONN_OPTION} whose host is the base")
    return url


def parse_sink(options: Mapping[str, Any]) -> HttpOptions:
    """A sink block's typed options (:data:`SINK_SPEC`): every row is POSTed as JSON to ``url``."""
    o = SINK_SPEC.parse(options, SINK, complete=True)
    conn = o[CONN_OPTION]
    if conn is not None and not conn.strip():
        raise OptionError(CONN_OPTION, f"{CONN_OPTION} must name an Airflow connection, found {conn!r}")
    return HttpOptions(
        url=_url(o), method="POST", headers=_text_map(o["headers"]), params=_text_map(o["params"]), retry=o["retry"],
        backoff_multiplier_ms=o["retry_backoff_multiplier_ms"], backoff_max_ms=o["retry_backoff_max_ms"],
        connect_timeout_ms=o["connect_timeout_ms"], socket_timeout_ms=o["socket_timeout_ms"],
        keep_params_as_form=False, conn_id=conn, base_url=o[CONN_BASE_URL], authorization=o[CONN_AUTHORIZATION],
        conn_headers={str(k): text_of(v) for k, v in (o[CONN_HEADERS] or {}).items()})


def parse(options: Mapping[str, Any], lenient: bool = False) -> HttpOptions:
    """The block's typed options (:data:`SPEC`, the connection's too when the hook added them), then the
    rules across options. ``lenient`` (compile time) keeps JSONPaths that use a filter or a function
    (:func:`_path`)."""
    o = SPEC.parse(options, SOURCE, complete=True)
    fmt, schema = _format_and_schema(options, o["format"])
    raw_fields = o["json_field"]
    json_field = None
    if raw_fields is not None:
        if not raw_fields:
            raise OptionError("json_field", "json_field must be a map of field = JSONPath",
                              'write json_field = { name = "$.data[*].name" }')
        json_field = {str(k): _path(f"json_field.{k}", v, lenient) for k, v in raw_fields.items()}
    content, conn = o["content_field"], o[CONN_OPTION]
    if conn is not None and not conn.strip():
        raise OptionError(CONN_OPTION, f"{CONN_OPTION} must name an Airflow connection, found {conn!r}")
    return HttpOptions(
        url=_url(o), method=o["method"], headers=_text_map(o["headers"]), params=_text_map(o["params"]),
        body=o["body"], format=fmt, schema=schema, json_field=json_field,
        content_field=_path("content_field", content, lenient) if content is not None else None,
        paging=_paging(o), retry=o["retry"], backoff_multiplier_ms=o["retry_backoff_multiplier_ms"],
        backoff_max_ms=o["retry_backoff_max_ms"], poll_interval_ms=o["poll_interval_millis"],
        connect_timeout_ms=o["connect_timeout_ms"], socket_timeout_ms=o["socket_timeout_ms"],
        multi_lines=o["enable_multi_lines"], keep_params_as_form=o["keep_params_as_form"],
        keep_page_param=o["keep_page_param_as_http_param"], missed_null=o["json_filed_missed_return_null"],
        conn_id=conn, base_url=o[CONN_BASE_URL], authorization=o[CONN_AUTHORIZATION],
        conn_headers={str(k): text_of(v) for k, v in (o[CONN_HEADERS] or {}).items()})
