"""InfluxDB options as SeaTunnel names them, read once for both phases.

:func:`parse` turns a block into :class:`InfluxOptions` or raises :class:`OptionError` naming the key.
Names, defaults and required options are SeaTunnel's: a source requires ``url``, ``sql``, ``database`` and
``schema``; a sink ``url`` and ``database``; ``username``/``password`` go together, and so do the four split
options ``split_column``, ``lower_bound``, ``upper_bound`` and ``partition_num`` (all or none).

The source's splits (:func:`split_ranges`, :func:`split_query`): ``partition_num`` 0 reads ``sql`` as one
split; otherwise the inclusive range [``lower_bound``, ``upper_bound``] of ``split_column`` is cut into
``partition_num`` contiguous, non-overlapping ranges (fewer when the range holds fewer values), each a query
with ``split_column >= a AND split_column < b`` joined to the query's own ``WHERE`` condition. What differs
from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec, ParsedOptions
from ...spi.schema import Schema, TypeError_, schema_from_options

#: the block option naming an Airflow connection (host or URL, port, schema http/https, login, password)
CONN_OPTION = "influxdb_conn_id"
SPLIT_OPTIONS = ("split_column", "lower_bound", "upper_bound", "partition_num")
DEFAULT_BATCH_SIZE = 1024
#: the source's column types SeaTunnel converts (its row converter refuses the others)
SOURCE_TYPES = ("boolean", "smallint", "int", "bigint", "float", "double", "string")
#: the sink's field types SeaTunnel serializes; key_time may be a string, timestamp or bigint
FIELD_TYPES = SOURCE_TYPES
TIME_TYPES = ("string", "timestamp", "bigint")
#: the sink's ``epoch``: SeaTunnel's time precisions (matched exactly; any other text is nanoseconds) -> ns
PRECISIONS = {"NS": 1, "U": 1_000, "MS": 1_000_000, "S": 1_000_000_000, "M": 60_000_000_000,
              "H": 3_600_000_000_000}
#: a measurement's default: the table's full name, as SeaTunnel's sink names it
DEFAULT_MEASUREMENT = "${table_full_name}"

SPEC = OptionSpec((
    Option("url", required=True, allow_blank=False, required_unless=(CONN_OPTION,), identity=True,
           description=f"The server's URL, e.g. http://influxdb-host:8086 (or from {CONN_OPTION})."),
    Option("database", required=True, allow_blank=False, identity=True, description="The database."),
    Option("username", description="The user (with password)."),
    Option("password", description="The user's password.", secret=True),
    Option(CONN_OPTION, identity=True, description="An Airflow connection: host (or URL), port, schema http or "
           "https, login, password."),
    Option("connect_timeout_ms", "long", 15000, "Milliseconds to wait for a connection.", minimum=1),
    Option("query_timeout_sec", "int", 3, "Seconds to wait for a query's next answer.", minimum=1,
           sections=(SOURCE,)),
    Option("sql", required=True, allow_blank=False, sections=(SOURCE,), identity=True,
           description="The InfluxQL query read (a SELECT)."),
    Option("schema", "map", required=True, sections=(SOURCE,), description="The rows' fields: each is the "
           "result column of that name (time included)."),
    Option("epoch", description="Source: the precision of the time column as the server returns it (n, u, ms, "
           "s, m, h; default n). Sink: the unit of a bigint or string key_time (NS, U, MS, S, M, H; default NS)."),
    Option("split_column", sections=(SOURCE,), description="An integer field the query is split on."),
    Option("lower_bound", "long", sections=(SOURCE,), description="The split range's lower bound (inclusive)."),
    Option("upper_bound", "long", sections=(SOURCE,), description="The split range's upper bound (inclusive)."),
    Option("partition_num", "int", 0, "The number of splits (0: one query, no split).", minimum=0,
           sections=(SOURCE,)),
    Option("measurement", sections=(SINK,), allow_blank=False, identity=True,
           description="The measurement written (may hold ${table_name}; default: the table's full name)."),
    Option("key_time", sections=(SINK,), description="The field holding each point's time (default: the time "
           "the attempt staged the rows)."),
    Option("key_tags", "list", sections=(SINK,), description="The fields written as tags (default: none)."),
    Option("batch_size", "int", DEFAULT_BATCH_SIZE, "Points per write request.", sections=(SINK,)),
    Option("max_retries", "int", 0, "Retries of a write request that failed transiently.", minimum=0,
           sections=(SINK,)),
    Option("retry_backoff_multiplier_ms", "int", 0, "Milliseconds times the retry number to wait before a retry.",
           minimum=0, sections=(SINK,)),
    Option("max_retry_backoff_ms", "int", 0, "The longest wait before a retry, in milliseconds.", minimum=0,
           sections=(SINK,)),
    Option("write_timeout", "int", 5, "Seconds to wait for a write request's answer.", minimum=1, sections=(SINK,)),
    Option("rp", sections=(SINK,), description="The retention policy written (default: the database's)."),
), bundled=(("username", "password"), SPLIT_OPTIONS))

DEVIATIONS = (
    "splits: [lower_bound, upper_bound] is cut into partition_num contiguous ranges that neither overlap nor "
    "leave values out, whatever the division leaves over; SeaTunnel's ranges overlap, and miss the top of the "
    "range, when (upper_bound - lower_bound + 1) is not a multiple of partition_num",
    "splits: the range condition joins the query's top-level WHERE (any case) and goes before GROUP BY, ORDER BY, "
    "LIMIT, OFFSET, SLIMIT, SOFFSET and tz(); SeaTunnel splits the text at the first lowercase 'where' and "
    "appends the condition after everything else, which breaks such queries",
    "source: the splits are dealt over the plan's parallelism, one Spark partition per reader; each query's "
    "answer is read in chunks (chunked=true), never whole in memory",
    "source: a declared field the result lacks fails the read naming it (SeaTunnel fails on its column index); "
    "GROUP BY tags are columns too; an empty result is no rows (SeaTunnel's schema probe fails on it)",
    "sink: exactly-once in effect: rows are staged per attempt in the database _seatunnel and written by the "
    "commit, which a restore finishes with the same points (InfluxDB overwrites a point of the same "
    "measurement, tag set and time); SeaTunnel writes each batch at once, at least once",
    "sink without key_time: each point's time is the time the attempt staged its rows, in nanoseconds, plus its "
    "row number times the parallelism plus its partition, so that no two rows overwrite each other; SeaTunnel "
    "writes the current milliseconds read in the precision's unit (January 1970 with the default ns), and "
    "rows of one millisecond with equal tags overwrite each other",
    "sink: a timestamp key_time is converted to the precision's unit (SeaTunnel writes its milliseconds as "
    "that unit); a null key_time fails the row as a data error (SeaTunnel fails on a null pointer)",
    "sink: a null field is left out of its point and a null tag is not written (SeaTunnel fails on a null "
    "pointer); a row whose fields are all null fails as a data error (InfluxDB needs one field)",
    "sink: a field whose type the measurement holds already with another type fails the commit before anything "
    "is written (InfluxDB would write the rest of the batch)",
)


@dataclass(frozen=True)
class Endpoint:
    """Where the server is and the credentials (never shown: :attr:`label` has neither)."""

    url: str
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    connect_timeout: float = 15.0

    @property
    def label(self) -> str:
        return self.url.rstrip("/")

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "username": self.username, "password": self.password,
                "connect_timeout": self.connect_timeout}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(str(d["url"]), d.get("username"), d.get("password"), float(d.get("connect_timeout") or 15.0))


@dataclass(frozen=True)
class Split:
    """The split column's range [low, high) of one query."""

    low: int
    high: int


@dataclass(frozen=True)
class InfluxOptions:
    """One block, checked: the endpoint (None at compile time when the connection gives it) and what it reads
    or writes."""

    section: str
    endpoint: Endpoint | None
    database: str
    sql: str = ""
    schema: Schema | None = None
    epoch: str = "n"
    query_timeout: float = 3.0
    split_column: str | None = None
    splits: tuple[Split, ...] = ()
    measurement: str = DEFAULT_MEASUREMENT
    key_time: str | None = None
    key_tags: tuple[str, ...] = ()
    batch_size: int = DEFAULT_BATCH_SIZE
    max_retries: int = 0
    backoff_ms: int = 0
    max_backoff_ms: int = 0
    write_timeout: float = 5.0
    rp: str | None = None

    @property
    def precision_ns(self) -> int:
        """Nanoseconds per unit of a bigint or string ``key_time`` (SeaTunnel's exact names, else ns)."""
        return PRECISIONS.get(self.epoch, 1)

    def queries(self) -> list[str]:
        """The source's queries, one per split."""
        if not self.splits:
            return [self.sql]
        assert self.split_column is not None
        return [split_query(self.sql, self.split_column, s) for s in self.splits]


def split_ranges(lower: int, upper: int, count: int) -> tuple[Split, ...]:
    """[lower, upper] cut into ``count`` contiguous ranges [a, b) of near-equal size (the first ones one
    larger), covering every value once; fewer ranges when the range holds fewer values."""
    values = upper - lower + 1
    count = max(1, min(count, values))
    size, extra = divmod(values, count)
    out, start = [], lower
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(Split(start, end))
        start = end
    return tuple(out)


_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\(|\)|\bwhere\b|\bgroup\s+by\b|\border\s+by\b|"
                    r"\blimit\b|\boffset\b|\bslimit\b|\bsoffset\b|\btz\s*\(", re.IGNORECASE)


def _clauses(sql: str) -> tuple[int | None, int]:
    """The position of the query's top-level WHERE (None: none) and where its trailing clauses start."""
    depth, where, tail = 0, None, len(sql)
    for m in _TOKEN.finditer(sql):
        word = m.group(0).lower()
        if word.startswith(("'", '"')):
            continue
        if word == ")":
            depth -= 1
        elif word.endswith("(") and not word.startswith("tz"):
            depth += 1
        elif depth == 0 and word == "where":
            if where is not None:
                raise OptionError("sql", "sql should not contain more than one where",
                                  "split a query with one top-level WHERE")
            where = m.start()
        elif depth == 0 and tail == len(sql):
            tail = m.start()
            if word.startswith("tz"):
                depth += 1
    return where, tail


def split_query(sql: str, column: str, split: Split) -> str:
    """``sql`` restricted to ``column`` in [low, high): the range joins the top-level WHERE condition (both
    in parentheses), before the trailing clauses."""
    where, tail = _clauses(sql)
    cond = f'("{column}" >= {split.low} AND "{column}" < {split.high})'
    head = sql[:where] if where is not None else sql[:tail]
    own = sql[where + len("where"):tail].strip() if where is not None else ""
    joined = f"{cond} AND ({own})" if own else cond
    rest = sql[tail:].strip()
    return f"{head.rstrip()} WHERE {joined}" + (f" {rest}" if rest else "")


def endpoint_of(o: ParsedOptions) -> Endpoint | None:
    """``url``, ``username``, ``password``; None when ``url`` is unset (the connection gives it)."""
    if o["url"] is None:
        return None
    url = str(o["url"]).strip()
    if not re.match(r"^https?://[^/\s]+", url):
        raise OptionError("url", f"url must be http://host:port or https://host:port, found {url!r}",
                          'url = "http://influxdb-host:8086"')
    return Endpoint(url, o["username"] or None, o["password"] or None, o["connect_timeout_ms"] / 1000.0)


def _source(options: Mapping[str, Any], o: ParsedOptions, common: dict[str, Any]) -> InfluxOptions:
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if schema is None or not schema.fields:
        raise OptionError("schema", "the option 'schema' needs fields", "schema = { fields { name = string } }")
    for f in schema.fields:
        if f.type.name.lower() not in SOURCE_TYPES:
            raise OptionError("schema", f"field '{f.name}': type {f.type.name} is not one the InfluxDB source "
                                        f"converts ({', '.join(SOURCE_TYPES)})", "declare it as one of those")
    splits: tuple[Split, ...] = ()
    if o["partition_num"]:
        low, high = o["lower_bound"], o["upper_bound"]
        if high < low:
            raise OptionError("upper_bound", f"upper_bound ({high}) is below lower_bound ({low})")
        if not str(o["split_column"]).strip():
            raise OptionError("split_column", "split_column must name an integer field")
        splits = split_ranges(low, high, o["partition_num"])
        _clauses(o["sql"])  # one top-level WHERE at most
    return InfluxOptions(SOURCE, sql=o["sql"], schema=schema, epoch=str(o["epoch"] or "n"),
                         query_timeout=float(o["query_timeout_sec"]), split_column=o["split_column"],
                         splits=splits, **common)


def parse(options: Mapping[str, Any], section: str, need_endpoint: bool = True) -> InfluxOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_endpoint``
    false: a block naming the connection may leave ``url`` to it (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    endpoint = endpoint_of(o)
    if endpoint is None and (need_endpoint or o[CONN_OPTION] is None):
        raise OptionError("url", "the option 'url' is required",
                          f'set url = "http://influxdb-host:8086" (or {CONN_OPTION} = "<an Airflow connection>")')
    common: dict[str, Any] = {"endpoint": endpoint, "database": o["database"]}
    if section == SOURCE:
        return _source(options, o, common)
    tags = tuple(str(t) for t in (o["key_tags"] or ()))
    if o["key_time"] is not None and o["key_time"] in tags:
        raise OptionError("key_tags", f"the field '{o['key_time']}' is key_time and a tag")
    return InfluxOptions(SINK, measurement=o["measurement"] or DEFAULT_MEASUREMENT, key_time=o["key_time"] or None,
                         key_tags=tags, batch_size=o["batch_size"] if o["batch_size"] > 0 else 5000,
                         max_retries=o["max_retries"], backoff_ms=o["retry_backoff_multiplier_ms"],
                         max_backoff_ms=o["max_retry_backoff_ms"], write_timeout=float(o["write_timeout"]),
                         rp=o["rp"] or None, epoch=str(o["epoch"] or "NS"), **common)
