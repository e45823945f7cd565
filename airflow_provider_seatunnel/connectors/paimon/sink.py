"""The Paimon sink's storage verbs (:class:`PaimonSinkVerbs`; the engine, ``runtime/twophase.py``, runs the
two phases): ``stage`` writes each table's rows as Paimon data files from Spark's executors, ``publish``
makes them ONE Paimon snapshot, committed on the driver under the target's commit lock.

**The write.** The rows go through ``mapInArrow`` at the plan's parallelism: each task hands its Arrow
batches to a pypaimon table write and returns the write's commit messages (pickled) as rows; nothing is
visible until the driver commits them. A keyed table (``paimon.table.primary-keys``) gets the last
change per key (UPDATE_BEFORE rows dropped, the rows grouped by key), written with their row kinds:
INSERT and UPDATE_AFTER rows replace the key's row, DELETE rows delete it (:func:`.compat.written_as`;
each data file records its DELETE rows, so that readers merge it and drop them).

**The identity.** Every commit carries a ``commit_user`` naming the scope (run, sink, target) and the
pipeline and upstream table, and the snapshot properties :data:`.tables.RUN_PROPERTY` (the run id) and
:data:`.tables.BATCH_PROPERTY` (the micro-batch in STREAMING, 0 in BATCH; also the commit identifier).
A commit whose user has a snapshot of that batch or a later one is committed already: nothing is
staged for it, ``publish`` skips it.

**Fencing** (:mod:`...spi.fencing`). The commit log (:class:`PaimonCommitLog`) hands out an attempt token
for (commit user, batch) under the target's commit lock; ``publish`` holds the lock from its check to its
snapshot, and commits only while its token is the newest (else the engine raises
:class:`~...spi.fencing.Superseded` and ``discard`` deletes its files). So of two
overlapping attempts of one run one commits, and the other finds that commit or is superseded; Paimon's
own snapshot creation (``snapshot-<n>`` created by a rename that fails when it exists) is the last guard.

**Save modes** apply once per scope, in its first commit (a snapshot whose user starts with the scope
marks it started). A missing table is created before the write (executors open it), as
``CREATE_SCHEMA_WHEN_NOT_EXIST`` (and ``IGNORE``) say, with the keys and ``paimon.table.write-props``;
``RECREATE_SCHEMA`` drops and creates it then (not atomic with the data: the run's commit follows);
``DROP_DATA`` makes the scope's first commit an overwrite (old rows and new in one snapshot).

Fault points: ``sink.move`` before the Paimon commit, ``sink.commit`` after it.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.options import run_time_options
from ...spi.rows import ROW_KIND, data_columns, data_only, quote
from ...spi.schema import table_keys
from ...spi.schemachange import changes_of
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from ..files.placeholders import expand_table_placeholders
from ..lakehouse import changes, resolve
from . import compat, evolve, hive
from .fences import Fence, fence_of, fence_root
from .options import SinkOptions, local_path, parse
from .tables import (
    BATCH_PROPERTY,
    RUN_PROPERTY,
    catalog_options,
    commits_of,
    get_table,
    has_rows,
    open_catalog,
    table_directory,
)

log = logging.getLogger("seatunnel.paimon")

DELETE, UPDATE_AFTER = 3, 2
MESSAGES_SCHEMA = "message binary"


def commit_user_of(ctx: RunContext, vertex: Vertex, target: str, table: str) -> tuple[str, str]:
    """(commit user, scope): the scope digests the run (a stream: all its micro-batches), the sink and
    the target; the user adds the pipeline and the upstream table."""
    scope = f"seatunnel-{digest(ctx.save_mode_run_id, vertex.ref, target, length=20)}-"
    return scope + digest(ctx.pipeline_key, table, length=12), scope


def options_of(vertex: Vertex) -> SinkOptions:
    return run_time_options(parse, vertex, SinkOptions)


def _arrow_schema(df: Any, keys: list[str]) -> Any:
    """The rows' Arrow schema, as Spark hands the rows to the writing tasks (timestamps in the session's time
    zone); primary-key fields NOT NULL (Paimon requires it)."""
    import pyarrow as pa

    schema = data_only(df).limit(0).toArrow().schema
    return pa.schema([f.with_nullable(False) if f.name in keys else f for f in schema])


def _create(catalog: Any, identifier: str, df: Any, opts: SinkOptions, parallelism: int) -> None:
    from pypaimon import Schema

    columns = data_columns(df)
    keys = resolve(opts.primary_keys, columns, opts.case_sensitive, "paimon.table.primary-keys")
    partitions = resolve(opts.partition_keys, columns, opts.case_sensitive, "paimon.table.partition-keys")
    properties = dict(opts.properties)
    if keys and "bucket" not in properties:  # fixed buckets: executors write them side by side safely
        properties["bucket"] = str(max(1, parallelism))
    catalog.create_database(identifier.split(".")[0], True)
    schema = Schema.from_pyarrow_schema(_arrow_schema(df, keys), partition_keys=partitions or None,
                                        primary_keys=keys or None, options=properties)
    catalog.create_table(identifier, schema, False)


def _prepare_target(ctx: RunContext, vertex: Vertex, opts: SinkOptions, entry: dict[str, Any], df: Any) -> Any:
    """The save modes that refuse, recreate or create the target; the table the rows go to."""
    catalog = open_catalog(entry["catalog"])
    table = get_table(catalog, entry["identifier"])
    if entry["scope_started"]:
        pass
    elif table is None and opts.schema_save_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST":
        raise RuntimeConfigError(f"schema_save_mode ERROR_WHEN_SCHEMA_NOT_EXIST: {entry['identifier']} does not exist")
    elif table is not None and opts.data_save_mode == "ERROR_WHEN_DATA_EXISTS" and has_rows(table):
        raise RuntimeConfigError(f"data_save_mode ERROR_WHEN_DATA_EXISTS: {entry['identifier']} holds rows")
    elif table is not None and opts.schema_save_mode == "RECREATE_SCHEMA":
        if entry["hive"]:
            hive.unregister(entry["hive"], *entry["identifier"].split("."))
        catalog.drop_table(entry["identifier"], False)
        table = None
    if table is None:
        _create(catalog, entry["identifier"], df, opts, int(vertex.parallelism))
        table = catalog.get_table(entry["identifier"])
    if entry["hive"]:  # the metastore's record, made (or made again) unless it is there
        database, name = entry["identifier"].split(".")
        directory = table_directory(entry["catalog"], database, name)
        hive.ensure_database(entry["hive"], database, directory.rsplit("/", 1)[0])
        hive.register(entry["hive"], database, name, directory, table)
    return table


def _rows(df: Any, opts: SinkOptions, table: Any, parallelism: int) -> Any:
    """The rows as the table takes them: its columns in its order (by name), the row kind kept for a keyed
    table (the last change per key), dropped otherwise."""
    columns = data_columns(df)
    names = [str(f.name) for f in table.table_schema.fields]
    picked = resolve(tuple(names), columns, opts.case_sensitive, "the table's columns")
    keyed = bool(table.primary_keys)
    if keyed:
        keys = resolve(tuple(table.primary_keys), columns, opts.case_sensitive, "the table's primary keys")
        df = changes(df, keys, parallelism)
    return df.select(*[df[quote(c)].alias(n) for c, n in zip(picked, names, strict=True)],
                     *([df[ROW_KIND]] if keyed else []))


def write_partition(catalog: Mapping[str, str], identifier: str, user: str, batch: int,
                    batches: Iterator[Any]) -> Iterator[Any]:
    """One task's rows (Arrow batches) written as Paimon data files; yields the write's commit messages,
    pickled (runs on an executor)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = open_catalog(catalog).get_table(identifier)
    write = compat.with_commit_user(table.new_stream_write_builder(), user).new_write()
    try:
        for part in batches:
            if ROW_KIND not in part.schema.names:
                write.write_arrow_batch(part)
                continue
            kinds = part.column(ROW_KIND)
            rows = part.drop_columns([ROW_KIND])
            for kind in (0, UPDATE_AFTER, DELETE):
                chosen = rows.filter(pc.equal(kinds, pa.scalar(kind, pa.int8())))
                if chosen.num_rows:
                    with compat.written_as(kind):
                        write.write_arrow_batch(chosen)
        messages = write.prepare_commit(batch)
    except BaseException:
        write.abort()
        raise
    finally:
        write.close()
    yield pa.RecordBatch.from_pylist([{"message": pickle.dumps(m)} for m in messages],
                                     schema=pa.schema([("message", pa.binary())]))


def entry_of(ctx: RunContext, vertex: Vertex, opts: SinkOptions, upstream: str,
             columns: list[str] | None) -> dict[str, Any]:
    """Where one upstream table goes: the table's identifier, commit user and scope, the batch, the
    directory of its commit lock and tokens, the catalog (and the metastore of a Hive catalog)."""
    name = expand_table_placeholders(opts.table.table, upstream, columns)
    database = expand_table_placeholders(opts.table.database, upstream, columns)
    target = f"{opts.table.root().rstrip('/')}/{database}.db/{name}"
    user, scope = commit_user_of(ctx, vertex, target, upstream)
    catalog = catalog_options(opts.table, database, name)
    return {"identifier": f"{database}.{name}", "user": user, "scope": scope, "batch": int(ctx.batch_id or 0),
            "root": fence_root(local_path(catalog["warehouse"]), database, name), "catalog": catalog,
            "hive": opts.table.catalog_uri if opts.table.catalog_type == "hive" else None}


def fence(entry: Mapping[str, Any]) -> Fence:
    """The target's commit lock and tokens (:mod:`.fences`)."""
    return fence_of(entry["root"], entry["catalog"])


def token_key(entry: Mapping[str, Any]) -> str:
    return f"{entry['user']}-{entry['batch']}"


class PaimonCommitLog:
    """The tokens of each (commit user, batch) under the target's commit lock; the commit records are
    the table's snapshots (their user and batch property)."""

    def __init__(self, ctx: RunContext, vertex: Vertex) -> None:
        self.ctx, self.vertex, self.opts = ctx, vertex, options_of(vertex)

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        entry = entry_of(self.ctx, self.vertex, self.opts, commit.table, None)
        fenced = fence(entry)
        with fenced.lock(self.vertex.ref):
            table = get_table(open_catalog(entry["catalog"]), entry["identifier"])
            found = commits_of(table, entry["user"], entry["scope"]) if table is not None else None
            if found is not None and found.committed is not None and found.committed >= entry["batch"]:
                return fenced.newest(token_key(entry)), True
            return fenced.allocate(token_key(entry), int(self.ctx.attempt)), False

    def newest_token(self, commit: CommitId) -> int:
        entry = entry_of(self.ctx, self.vertex, self.opts, commit.table, None)
        return fence(entry).newest(token_key(entry))


def stage_table(ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
    """The save modes that refuse, recreate or create the target, the schema changes the rows carry, then
    the rows written as data files by the executors; their commit messages are the staging (kept in the
    driver: ``cached``)."""
    # the table is created here with its keys (${primary_key}: this table's); the commit needs none
    opts = options_of(vertex).for_table(commit.table, data_columns(df), table_keys(vertex, commit.table, df))
    entry = entry_of(ctx, vertex, opts, commit.table, data_columns(df))
    existing = get_table(open_catalog(entry["catalog"]), entry["identifier"])
    entry["scope_started"] = bool(existing is not None and commits_of(existing, entry["user"],
                                                                        entry["scope"]).scope_started)
    table = _prepare_target(ctx, vertex, opts, entry, df)
    catalog = open_catalog(entry["catalog"])  # a CDC source's schema changes, applied once (:mod:`.evolve`)
    if existing is not None and evolve.follow(catalog, entry["identifier"], table, changes_of(df.schema),
                                              ctx.label(vertex)):
        table = catalog.get_table(entry["identifier"])
        if entry["hive"]:
            database, name = entry["identifier"].split(".")
            hive.update_columns(entry["hive"], database, name, table)
    rows = _rows(df, opts, table, int(vertex.parallelism))
    if table.bucket_mode().name == "HASH_DYNAMIC":  # one writer owns the bucket index
        rows = rows.coalesce(1)
    args = (entry["catalog"], entry["identifier"], entry["user"], entry["batch"])
    found_rows = rows.mapInArrow(lambda it: write_partition(*args, it), MESSAGES_SCHEMA).collect()
    messages = [pickle.loads(r["message"]) for r in found_rows]
    log.info("Paimon %s: table %s written for %s (%d commit messages, attempt token %d); committed by the sink's "
             "commit", vertex.ref, commit.table, entry["identifier"], len(messages), token)
    return Staged(commit, token, f"table {entry['identifier']}", -1, (), entry, cached=messages)


def _discard(table: Any, user: str, messages: list[Any]) -> None:
    """Delete the data files of messages that will never be committed."""
    with contextlib.suppress(Exception):
        commit = compat.with_commit_user(table.new_stream_write_builder(), user).new_commit()
        commit.abort(messages)
        commit.close()


def publish_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """One Paimon snapshot of the staged messages, under the commit lock, while the token is the newest."""
    entry, messages = staged.detail, staged.cached
    user, batch, identifier = entry["user"], entry["batch"], entry["identifier"]
    fenced = fence(entry)
    with fenced.lock(vertex.ref) as still_held:
        table = open_catalog(entry["catalog"]).get_table(identifier)
        found = commits_of(table, user, entry["scope"])
        if found.committed is not None and found.committed >= batch:
            return Published(Outcome.ALREADY)
        newest = fenced.newest(token_key(entry))
        if newest > staged.token:
            return Published(Outcome.SUPERSEDED, newest=newest)
        still_held()
        overwrite = not found.scope_started and options_of(vertex).data_save_mode == "DROP_DATA"
        builder = table.new_batch_write_builder().overwrite() if overwrite else table.new_stream_write_builder()
        commit = compat.with_commit_user(builder, user).new_commit()
        properties = {RUN_PROPERTY: ctx.run_id, BATCH_PROPERTY: str(batch)}
        try:
            if overwrite:
                commit.commit(messages, snapshot_properties=properties)
            else:
                commit.commit(messages, batch, snapshot_properties=properties)
        finally:
            commit.close()
        ctx.fault_point("sink.commit", vertex)
    log.info("Paimon %s: committed table %s to %s (%s, user %s, batch %d)", vertex.ref, staged.commit.table,
             identifier, "overwrite" if overwrite else "append", user, batch)
    return Published(Outcome.PUBLISHED, rows=-1)


def discard_table(ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    """Delete the data files of a staged table whose commit did not land (checked under the lock: a commit
    that failed after its snapshot was created keeps its files)."""
    entry = staged.detail
    if not staged.cached:
        return
    with contextlib.suppress(Exception), fence(entry).lock(vertex.ref):
        table = open_catalog(entry["catalog"]).get_table(entry["identifier"])
        found = commits_of(table, entry["user"], entry["scope"])
        if found.committed is None or found.committed < entry["batch"]:
            _discard(table, entry["user"], staged.cached)


class PaimonSinkVerbs:
    """The Paimon sink as storage verbs (see the module's docstring)."""

    stage = staticmethod(stage_table)
    publish = staticmethod(publish_table)
    discard = staticmethod(discard_table)

    commit_log = staticmethod(PaimonCommitLog)
