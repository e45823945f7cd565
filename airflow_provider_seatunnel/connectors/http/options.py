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

from ...spi.options import MISSING, OptionError, as_int, bool_option, lookup
from ...spi.schema import Schema, TypeError_, schema_from_options
from .jsonpath import JsonPath, PathError, UnsupportedPath, compile_path

METHODS = ("GET", "POST")
FORMATS = ("text", "json")
PAGE_TYPES = ("pagenumber", "cursor")
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


def opt(options: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = lookup(options, key)
    return default if value is MISSING or value is None else value


def _int(options: Mapping[str, Any], key: str, default: int, minimum: int) -> int:
    value = opt(options, key)
    if value is None:
        return default
    number = as_int(value)
    if number is None or number < minimum:
        raise OptionError(key, f"{key} must be an integer >= {minimum}, found {value!r}")
    return number


def _enum(options: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = opt(options, key)
    if value is None:
        return default
    text = str(value).strip().lower()
    if text not in [a.lower() for a in allowed]:
        raise OptionError(key, f"unknown {key} {value!r}", f"use one of {', '.join(allowed)}")
    return text


def text_of(value: Any) -> str:
    """A header or parameter value as text (numbers and booleans as written, nested values as JSON)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _text_map(options: Mapping[str, Any], key: str) -> dict[str, str]:
    """A map of text values; nested maps become dotted keys, as SeaTunnel's config flattens them."""
    value = opt(options, key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise OptionError(key, f"{key} must be a map, found {value!r}", f"write {key} = {{ name = \"value\" }}")
    out: dict[str, str] = {}

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


def _paging(options: Mapping[str, Any]) -> Paging | None:
    raw = opt(options, "pageing")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise OptionError("pageing", f"pageing must be a map, found {raw!r}",
                          "write pageing = { page_field = page, batch_size = 10 }")
    field_name = opt(raw, "page_field", DEFAULT_PAGE_FIELD)
    if isinstance(field_name, (Mapping, list)) or not str(field_name).strip():
        raise OptionError("pageing.page_field", f"pageing.page_field must be a name, found {field_name!r}")
    try:
        placeholder = bool_option(raw, "use_placeholder_replacement")
        return Paging(page_field=str(field_name), total_page_size=_int(raw, "total_page_size", 0, 0),
                      batch_size=_int(raw, "batch_size", DEFAULT_BATCH_SIZE, 1),
                      start_page_number=_int(raw, "start_page_number", DEFAULT_START_PAGE, 0),
                      use_placeholder_replacement=bool(placeholder),
                      page_type=_enum(raw, "page_type", ("PageNumber", "Cursor"), "pagenumber"))
    except OptionError as e:
        raise OptionError(f"pageing.{e.key}", e.message.replace(e.key, f"pageing.{e.key}", 1), e.hint) from None


def _format_and_schema(options: Mapping[str, Any]) -> tuple[str, Schema | None]:
    fmt = _enum(options, "format", FORMATS, "text")
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


def _body(options: Mapping[str, Any]) -> str | None:
    body = opt(options, "body")
    if body is None:
        return None
    if isinstance(body, (Mapping, list)):
        raise OptionError("body", "body must be a string (the request's JSON text)",
                          'write body = """{"id": 1}"""')
    return text_of(body)


def _url(options: Mapping[str, Any]) -> str:
    url = opt(options, "url")
    conn = opt(options, CONN_OPTION)
    if url is None:
        raise OptionError("url", "the option 'url' is required", 'set url = "https://host/path"')
    if isinstance(url, (Mapping, list)) or not str(url).strip():
        raise OptionError("url", f"url must be a non-empty string, found {url!r}")
    url = str(url).strip()
    if not is_absolute(url) and conn is None:
        raise OptionError("url", f"url {url!r} is not an http:// or https:// URL",
                          f"write the whole URL, or name a connection with {CONN_OPTION} whose host is the base")
    return url


def parse(options: Mapping[str, Any], lenient: bool = False) -> HttpOptions:
    """The block's options, checked (the connection's too when the hook added them). ``lenient``
    (compile time) keeps JSONPaths that use a filter or a function (:func:`_path`)."""
    url = _url(options)
    method = _enum(options, "method", METHODS, "get").upper()
    fmt, schema = _format_and_schema(options)
    raw_fields = opt(options, "json_field")
    json_field = None
    if raw_fields is not None:
        if not isinstance(raw_fields, Mapping) or not raw_fields:
            raise OptionError("json_field", "json_field must be a map of field = JSONPath",
                              'write json_field = { name = "$.data[*].name" }')
        json_field = {str(k): _path(f"json_field.{k}", v, lenient) for k, v in raw_fields.items()}
    content = opt(options, "content_field")
    conn = opt(options, CONN_OPTION)
    if conn is not None and (not isinstance(conn, str) or not conn.strip()):
        raise OptionError(CONN_OPTION, f"{CONN_OPTION} must name an Airflow connection, found {conn!r}")
    conn_headers = opt(options, CONN_HEADERS, {})
    return HttpOptions(
        url=url, method=method, headers=_text_map(options, "headers"), params=_text_map(options, "params"),
        body=_body(options), format=fmt, schema=schema, json_field=json_field,
        content_field=_path("content_field", content, lenient) if content is not None else None,
        paging=_paging(options), retry=_int(options, "retry", 0, 0),
        backoff_multiplier_ms=_int(options, "retry_backoff_multiplier_ms", DEFAULT_BACKOFF_MULTIPLIER_MS, 0),
        backoff_max_ms=_int(options, "retry_backoff_max_ms", DEFAULT_BACKOFF_MAX_MS, 0),
        poll_interval_ms=_int(options, "poll_interval_millis", 0, 0),
        connect_timeout_ms=_int(options, "connect_timeout_ms", DEFAULT_CONNECT_TIMEOUT_MS, 0),
        socket_timeout_ms=_int(options, "socket_timeout_ms", DEFAULT_SOCKET_TIMEOUT_MS, 0),
        multi_lines=bool(bool_option(options, "enable_multi_lines")),
        keep_params_as_form=bool_option(options, "keep_params_as_form"),
        keep_page_param=bool_option(options, "keep_page_param_as_http_param"),
        missed_null=bool(bool_option(options, "json_filed_missed_return_null")),
        conn_id=str(conn) if conn is not None else None,
        base_url=opt(options, CONN_BASE_URL), authorization=opt(options, CONN_AUTHORIZATION),
        conn_headers={str(k): text_of(v) for k, v in conn_headers.items()} if isinstance(conn_headers, Mapping)
        else {})
