"""The Cassandra source's read and the sink's write, on the Spark driver.

``read``: the cql prepared once for its row type (:mod:`.types`); a plain ``SELECT`` of one table is split
into exactly ``vertex.parallelism`` ranges of the Murmur3 token space (``token(partition key) > ? AND ... <=
?``, one reader each); any other query is read whole by the first reader, the others empty.

``write``: **at least once, with idempotent replays**. Cassandra has no transaction spanning many rows or a
restore, so nothing can be staged and published atomically; but every ``INSERT`` upserts its primary key, so
writing a row again leaves the table as one write did. Per (run id, pipeline, sink, table), a digest ``id``,
the keyspace's table ``seatunnel_sink_commits`` holds:

* the **attempt token**, taken with a lightweight transaction (compare-and-set) before writing: every write
  task reads it serially before each group of ``batch_size`` rows and stops when a newer attempt took it, so
  an overlapping older attempt writes at most one more group per task (the same rows, upserted again);
* the **commit record**, set (``IF token = mine``) once every write task finished: a restore of a run whose
  record exists writes nothing; a superseded attempt records nothing.

A driver killed while writing, or before its record, leaves part of the rows visible until the restore
writes them all again: the table then holds each row once, as an exactly-once run would leave it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import re
from typing import Any

from ...spi import Dataset, RunContext, Vertex
from ...spi.errors import PipelineError, RuntimeConfigError
from ...spi.pysources import register_for_write, register_once
from ...spi.rows import ARRIVAL, data_only, last_per_key, with_kind
from ...spi.schema import Field, Schema, parse_type
from .client import quote, session_of
from .options import CassandraOptions, Endpoint, OptionError, parse
from .types import UnsupportedType, seatunnel_type

log = logging.getLogger("seatunnel.cassandra")

COMMITS = "seatunnel_sink_commits"
#: commit records expire after a week (a restore later than that writes the rows again: idempotent)
RECORD_TTL = 7 * 24 * 3600
MIN_TOKEN, MAX_TOKEN = -(2 ** 63), 2 ** 63 - 1
_SELECT = re.compile(r"^\s*select\s+(?P<cols>.+?)\s+from\s+(?P<table>[\w\".]+)(?:\s+where\s+(?P<where>.+?))?"
                     r"(?P<allow>\s+allow\s+filtering)?\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_UNSPLITTABLE = re.compile(r"\b(limit|group\s+by|order\s+by|distinct|json|token)\b|\(|\?", re.IGNORECASE)


def options_of(vertex: Vertex) -> CassandraOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        return parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None


def _endpoint(options: CassandraOptions) -> Endpoint:
    assert options.endpoint is not None  # parse() with need_endpoint
    return options.endpoint


def _name(text: str) -> str:
    return text[1:-1].replace('""', '"') if text.startswith('"') and text.endswith('"') else text.lower()


def split_table(name: str, keyspace: str) -> tuple[str, str]:
    """``ks.table`` or ``table`` (in ``keyspace``), as the names Cassandra keeps (unquoted: lower case)."""
    parts = re.findall(r'"(?:[^"]|"")*"|[^.]+', name)
    if len(parts) == 2:
        return _name(parts[0]), _name(parts[1])
    return keyspace, _name(name)


def token_ranges(readers: int) -> list[tuple[int, int]]:
    """The Murmur3 token space in ``readers`` contiguous ranges ``(lo, hi]`` (the first includes its lo)."""
    width = (MAX_TOKEN - MIN_TOKEN) // readers
    bounds = [MIN_TOKEN + i * width for i in range(readers)] + [MAX_TOKEN]
    return list(itertools.pairwise(bounds))


def split_queries(cql: str, partition_key: list[str] | None, readers: int) -> list[dict[str, Any]]:
    """One query per reader: token ranges of a plain SELECT whose partition key is known and not
    restricted by the query; else the whole cql for the first reader and nothing for the others."""
    m = _SELECT.match(cql)
    where = (m.group("where") or "") if m else ""
    plain = m is not None and partition_key and not _UNSPLITTABLE.search(m.group("cols") + " " + where) and \
        not any(re.search(rf"\b{re.escape(k)}\b", where, re.IGNORECASE) for k in partition_key)
    if not plain or readers == 1:
        return [{"cql": cql, "bounds": []}] + [{"cql": None, "bounds": []}] * (readers - 1)
    assert m is not None and partition_key is not None
    token = f"token({', '.join(quote(k) for k in partition_key)})"
    out = []
    for i, (lo, hi) in enumerate(token_ranges(readers)):
        cond = f"{token} {'>=' if i == 0 else '>'} ? AND {token} <= ?" + (f" AND {where}" if where else "")
        out.append({"cql": f"SELECT {m.group('cols')} FROM {m.group('table')} WHERE {cond}{m.group('allow') or ''}",
                    "bounds": [lo, hi]})
    return out


def _source_plan(options: CassandraOptions, readers: int) -> tuple[Schema, list[dict[str, Any]]]:
    """The rows' schema (the prepared cql's metadata) and the readers' queries."""
    endpoint = _endpoint(options)
    cql = str(options.cql)
    with session_of(endpoint, "cannot prepare the cql") as session:
        prepared = session.prepare(cql)
        fields = []
        for column in prepared.result_metadata or ():
            try:
                fields.append(Field(column[2], parse_type(seatunnel_type(column[3]))))
            except UnsupportedType as e:
                raise RuntimeConfigError(f"column {column[2]!r} of the cql: SeaTunnel's Cassandra connector does not "
                                         f"read type {e}") from None
        key = None
        m = _SELECT.match(cql)
        metadata = session.cluster.metadata
        if m is not None and str(metadata.partitioner or "").endswith("Murmur3Partitioner"):
            ks, table = split_table(m.group("table"), endpoint.keyspace)
            found = metadata.keyspaces.get(ks)
            meta = found.tables.get(table) if found is not None else None
            key = [c.name for c in meta.partition_key] if meta is not None else None
    return Schema(tuple(fields)), split_queries(cql, key, readers)


def read(ctx: RunContext, vertex: Vertex) -> Dataset:
    """The cql's rows in ``vertex.parallelism`` partitions."""
    from .datasource import NAME, SPEC_OPTION, CassandraDataSource

    options = options_of(vertex)
    readers = max(1, int(vertex.parallelism))
    schema, queries = _source_plan(options, readers)
    spec = {"endpoint": _endpoint(options).to_json(), "partitions": queries}
    register_once(ctx.spark, CassandraDataSource)
    df = ctx.spark.read.format(NAME).schema(schema.to_spark()).option(SPEC_OPTION, json.dumps(spec)).load()
    split = sum(1 for q in queries if q["bounds"])
    log.info("Cassandra %s: reading %s with %d reader(s)%s", vertex.ref, _endpoint(options).label, readers,
             f" over {split} token ranges" if split else " (one query)")
    return {"default": with_kind(df)}


# ------------------------------------------------------------------------------------------------
# the sink
# ------------------------------------------------------------------------------------------------

def commit_id(ctx: RunContext, vertex: Vertex, table: str) -> str:
    """The digest naming one table's commit of this run, pipeline and sink."""
    text = json.dumps([ctx.run_id, ctx.pipeline_key, vertex.ref, table])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _commits_table(session: Any, keyspace: str) -> str:
    name = f"{quote(keyspace)}.{COMMITS}"
    session.execute(f"CREATE TABLE IF NOT EXISTS {name} (id text PRIMARY KEY, attempt int, committed boolean, "
                    f"run_id text, at timestamp) WITH default_time_to_live = {RECORD_TTL}")
    return name


def take_token(session: Any, table: str, key: str) -> int | None:
    """A new attempt token for ``key`` (compare-and-set), or None when the commit is recorded."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    read_token = SimpleStatement(f"SELECT attempt, committed FROM {table} WHERE id = %s",
                                 consistency_level=ConsistencyLevel.SERIAL)
    for _ in range(100):
        row = session.execute(read_token, [key]).one()
        if row is not None and row[1]:
            return None
        if row is None:
            done = session.execute(f"INSERT INTO {table} (id, attempt, committed) VALUES (%s, 1, false) IF NOT EXISTS",
                                   [key])
            mine = 1
        else:
            mine = int(row[0] or 0) + 1
            done = session.execute(f"UPDATE {table} SET attempt = %s WHERE id = %s "
                                   "IF attempt = %s AND committed = false", [mine, key, row[0]])
        if done.was_applied:
            return mine
    raise PipelineError(f"could not take an attempt token in {table}: too many concurrent attempts")


def record(session: Any, table: str, key: str, token: int, run_id: str) -> bool:
    """Record the commit if ``token`` is still the newest; whether it was."""
    done = session.execute(f"UPDATE {table} SET committed = true, run_id = %s, at = toTimestamp(now()) WHERE id = %s "
                           "IF attempt = %s", [run_id, key, token])
    return bool(done.was_applied)


def _fields(session: Any, options: CassandraOptions, names: list[str]) -> tuple[str, list[str], list[str]]:
    """The target (``ks.table`` quoted), the columns written (``fields``, else every column of the table: each
    must be an input field and a column; the primary key must be written) and the primary key's columns."""
    endpoint = _endpoint(options)
    ks, table = split_table(str(options.table), endpoint.keyspace)
    found = session.cluster.metadata.keyspaces.get(ks)
    meta = found.tables.get(table) if found is not None else None
    if meta is None:
        raise RuntimeConfigError(f"the table {ks}.{table} does not exist at {endpoint.label} (create it first: "
                                 "the Cassandra sink has no save modes, as SeaTunnel's)")
    columns = list(meta.columns)
    fields = list(options.fields) if options.fields else columns
    for f in fields:
        if f not in meta.columns:
            raise RuntimeConfigError(f"field {f!r} is not a column of {ks}.{table} (its columns: {', '.join(columns)})")
        if f not in names:
            raise RuntimeConfigError(f"field {f!r} of {ks}.{table} is not a field of the input rows "
                                     f"({', '.join(names)}): set fields to the columns the rows hold")
    missing = [c.name for c in meta.primary_key if c.name not in fields]
    if missing:
        raise RuntimeConfigError(f"the primary key column(s) {', '.join(missing)} of {ks}.{table} are not written")
    counters = [f for f in fields if meta.columns[f].cql_type == "counter"]
    if counters:
        raise RuntimeConfigError(f"{ks}.{table} is a counter table: INSERT cannot write counters ({counters[0]})")
    return f"{quote(ks)}.{quote(table)}", fields, [c.name for c in meta.primary_key]


def write(ctx: RunContext, vertex: Vertex, data: Dataset) -> None:
    """Write every table's rows once per run id (fenced, recorded): at least once, idempotent."""
    from .datasource import NAME, SPEC_OPTION, CassandraDataSource

    options = options_of(vertex)
    endpoint = _endpoint(options)
    for table, df in data.items():
        rows = data_only(df)
        key = commit_id(ctx, vertex, table)
        with session_of(endpoint, f"cannot write into {options.table}") as session:
            target, fields, keys = _fields(session, options, list(rows.columns))
            if ARRIVAL in df.columns:  # changes dealt over the writers: each key's last (an INSERT writes it whole)
                rows = data_only(last_per_key(df, keys))
            commits = _commits_table(session, endpoint.keyspace)
            token = take_token(session, commits, key)
            if token is None:
                log.info("Cassandra %s: table %s of run %s was written already: nothing written", vertex.ref, table,
                         ctx.run_id)
                df.write.format("noop").mode("overwrite").save()
                continue
            spec = {"endpoint": endpoint.to_json(), "table": target, "fields": fields,
                    "batch_size": options.batch_size, "batch_type": options.batch_type,
                    "async_write": options.async_write, "commits": commits, "commit_id": key, "token": token}
            faulted = ctx.with_write_faults(vertex, rows)
            register_for_write(ctx.spark, faulted, CassandraDataSource)
            faulted.select(*fields).write.format(NAME).mode("append").option(SPEC_OPTION, json.dumps(spec)).save()
            ctx.fault_point("sink.commit", vertex)
            if not record(session, commits, key, token, ctx.run_id):
                raise PipelineError(f"attempt token {token} for {endpoint.label} table {target} was superseded by "
                                    "another attempt of the same run id: this attempt recorded no commit")
        log.info("Cassandra %s: table %s written into %s (%s)", vertex.ref, table, target, endpoint.label)


__all__ = ["COMMITS", "commit_id", "read", "record", "split_queries", "split_table", "take_token", "token_ranges",
           "write"]
