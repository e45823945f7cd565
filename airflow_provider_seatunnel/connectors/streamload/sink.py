"""The Stream Load family's storage verbs, on the Spark driver: the target, the save modes, staging, the
fenced commit, over a member's transaction protocol (:class:`Family`).

* **stage**: ONE Spark job at the parallelism the rows arrive at: each partition spools its rows to a local
  file and loads them in one prepared (invisible) transaction under the label
  ``<label prefix>_<commit key>_<token>_<partition>``; a retried task reuses its label (the member's writer
  aborts the open transaction of the failed try first). When a writer fails, the driver aborts every
  writer's transaction by its label. The transactions are recorded (state ``prepared``) so a newer attempt
  can abort them. Changes the engine shuffled to reach more writers are regrouped first, since the
  transactions commit one after another: each key's in one writer in arrival order (the catalog's primary
  key), or all in one writer when the sink cannot know the key (:func:`in_change_order`).
* **publish**: ``ALREADY`` when the log says committed, ``SUPERSEDED`` when a newer token was taken;
  otherwise the **claim**, one compare-and-set of ``state=claimed`` with the transactions under the
  attempt's token, is the commit point; then every transaction is committed (one committed already counts
  as done) and the row set ``committed``.
* **discard** aborts the attempt's prepared transactions (unless its claim won: the restore commits them);
  **discard_older** aborts those an older attempt recorded.
* **Save modes**, once per run and target (a marker row in the log), before the first load: the schema modes
  create (``save_mode_create_template``) or drop the table, DROP_DATA truncates, ERROR_WHEN_DATA_EXISTS fails
  the run, CUSTOM_PROCESSING runs ``custom_sql``.

A reader may see a commit's transactions become visible one by one (one per writer): neither store has a
publish of several transactions at once. The guarantee is exactly-once in what the table finally holds.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ...spi import RunContext, Vertex
from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from ..files.placeholders import expand_table_placeholders
from .commitlog import TRIES, ClientOf, CommitLog, connected, q, roll_forward, run
from .endpoint import Endpoint
from .http import StreamLoadError

log = logging.getLogger("seatunnel.streamload")

_LABEL_BAD = re.compile(r"[^-_A-Za-z0-9:]")


class SinkOptions(Protocol):
    """What the shared verbs read of a member's options."""

    @property
    def endpoint(self) -> Endpoint | None: ...
    @property
    def database(self) -> str: ...
    @property
    def table(self) -> str: ...
    @property
    def label_prefix(self) -> str: ...
    @property
    def schema_save_mode(self) -> str: ...
    @property
    def data_save_mode(self) -> str: ...
    @property
    def custom_sql(self) -> str: ...
    @property
    def create_template(self) -> str: ...

    def writer_spec(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Family:
    """A member's protocol: its name, its transaction client, its writer (one partition's rows to one
    prepared transaction: yields ``(partition, transaction, rows)``, the transaction as decisions name it)
    and its column types (a Spark type to the store's DDL type)."""

    name: str
    client_of: ClientOf
    load_partition: Callable[[Mapping[str, Any], int, Iterator[Any]], Iterator[tuple[int, Any, int]]]
    type_of: Callable[[Any], str]


def target_of(options: SinkOptions, table_key: str, columns: list[str] | None = None) -> tuple[str, str]:
    """The database and table a table lands in: the options with the table placeholders expanded, else the
    upstream table's own names."""
    parts = table_key.split(".")
    database = expand_table_placeholders(options.database, table_key, columns) if options.database else (
        parts[0] if len(parts) > 1 else "")
    table = expand_table_placeholders(options.table, table_key, columns) if options.table else parts[-1]
    if not database or not table or (table == "default" and not options.table):
        raise RuntimeConfigError("the sink names no target table: set the database and the table")
    return database, table


def label_of(prefix: str, commit: CommitId, token: int) -> str:
    """The labels' stem of one attempt (each writer appends its partition): unique per commit and token."""
    head = _LABEL_BAD.sub("_", prefix)[:64]  # labels: at most 128 of [-_A-Za-z0-9:]
    return f"{head}_{commit.key[:24]}_{token}" if head else f"{commit.key[:24]}_{token}"


def create_statement(template: str, database: str, table: str, fields: list[tuple[str, str]],
                     keys: list[str]) -> str:
    """``save_mode_create_template`` with its placeholders filled: the first ``${rowtype_primary_key}``
    (the column list's) gives the key columns' definitions, later ones their names; ``${rowtype_fields}`` the
    other columns; ``${rowtype_unique_key}`` the key names."""
    defs = {n: f"{q(n)} {t}" for n, t in fields}
    key_defs = ",".join(defs[k] for k in keys if k in defs)
    names = ",".join(q(k) for k in keys)
    first = "${rowtype_primary_key}"
    text = template
    at = text.find(first)
    if at >= 0:
        end = at + len(first)
        cut = end + (2 if text[end:end + 2] == ",\n" and not key_defs else 0)
        text = text[:at] + key_defs + text[cut:]
    values = {"database": database, "table": table, "table_name": table, "rowtype_primary_key": names,
              "rowtype_unique_key": names, "comment": "",
              "rowtype_fields": ",\n".join(d for n, d in defs.items() if n not in keys)}
    return re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def table_exists(conn: Any, database: str, table: str) -> bool:
    _, rows = run(conn, "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                  (database, table))
    return bool(rows)


def apply_save_modes(ctx: RunContext, vertex: Vertex, family: Family, options: SinkOptions, database: str,
                     table: str, df: Any) -> None:
    """The save modes of one target, once per run (a marker row in the log), before its first load."""
    endpoint = options.endpoint
    assert endpoint is not None
    marker = "savemode-" + digest(ctx.save_mode_run_id, ctx.pipeline_key, vertex.ref, database, table)
    commits = CommitLog(endpoint, database, family.client_of)
    with connected(endpoint) as conn:
        if commits.read(conn, marker) is not None:
            return
        fields = [(f.name, family.type_of(f.dataType)) for f in df.schema.fields]
        create = create_statement(options.create_template, database, table, fields, [])
        exists = table_exists(conn, database, table)
        schema, data = options.schema_save_mode, options.data_save_mode
        if schema == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
            raise RuntimeConfigError(f"the table {database}.{table} does not exist (schema_save_mode = "
                                     "ERROR_WHEN_SCHEMA_NOT_EXIST)")
        if schema == "RECREATE_SCHEMA" and exists:
            run(conn, f"DROP TABLE {q(database)}.{q(table)}")
            exists = False
        if not exists and schema in ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST"):
            run(conn, create)
            exists = True
        if exists and data == "DROP_DATA":
            run(conn, f"TRUNCATE TABLE {q(database)}.{q(table)}")
        elif exists and data == "ERROR_WHEN_DATA_EXISTS":
            _, rows = run(conn, f"SELECT 1 FROM {q(database)}.{q(table)} LIMIT 1")
            if rows:
                raise DataError(f"the table {database}.{table} holds rows (data_save_mode = ERROR_WHEN_DATA_EXISTS)")
        elif data == "CUSTOM_PROCESSING":
            run(conn, options.custom_sql)
        commits.create(conn, marker, "marker", {"target": f"{database}.{table}"})


def in_change_order(vertex: Vertex, table: str, df: Any) -> Any:
    """Rows the engine numbered before shuffling them (a change stream reaching more writers) grouped so that
    a key's changes apply in their order: by the table's catalog primary key, each key's in one writer in
    arrival order; without one, all rows in one writer in arrival order. Else ``df`` as it is."""
    from ...spi.rows import ARRIVAL, keys_in_arrival_order
    from ...spi.schema import table_keys

    if ARRIVAL not in df.columns:
        return df
    key = table_keys(vertex, table, df).primary_key
    if key and all(c in df.columns for c in key[1]):
        return keys_in_arrival_order(df, key[1], int(vertex.parallelism))
    return df.repartition(1).sortWithinPartitions(ARRIVAL)


def stage(ctx: RunContext, vertex: Vertex, family: Family, options: SinkOptions, commit: CommitId, token: int,
          df: Any) -> Staged:
    """ONE Spark job: each partition's rows in one prepared transaction (module docstring)."""
    from ...spi.rows import ROW_KIND, data_columns

    endpoint = options.endpoint
    assert endpoint is not None
    columns = data_columns(df)
    database, table = target_of(options, commit.table, columns)
    df = in_change_order(vertex, commit.table, df)
    data = df.select(*columns)
    apply_save_modes(ctx, vertex, family, options, database, table, data)
    kind_index = len(columns) if ROW_KIND in df.columns else None
    rows = df.select(*columns, ROW_KIND) if kind_index is not None else data
    spec = {**options.writer_spec(), "endpoint": endpoint.to_json(), "database": database, "table": table,
            "label": label_of(options.label_prefix, commit, token), "columns": columns, "kind_index": kind_index}
    source = rows.rdd
    load = family.load_partition
    try:
        loaded = source.mapPartitionsWithIndex(lambda i, it: load(spec, i, it)).collect()
    except Exception:  # the writers that finished prepared their transactions: abort them by their labels
        abort_all(family, endpoint, database, [f"{spec['label']}_{p}" for p in range(source.getNumPartitions())])
        raise
    txns = sorted(loaded)
    total = sum(r for _, _, r in txns)
    with connected(endpoint) as conn:  # recorded so that a newer attempt can abort them
        CommitLog(endpoint, database, family.client_of).create(
            conn, f"{commit.key[:40]}-{token}", "prepared", {"database": database, "txns": [t for _, t, _ in txns]})
    log.info("%s %s: prepared %d row(s) for %s.%s in %d transaction(s)", family.name, vertex.ref, total, database,
             table, len(txns))
    return Staged(commit, token, f"{family.name} {database}.{table}", total,
                  tuple((f"txn {t}", r) for _, t, r in txns),
                  {"database": database, "table": table, "txns": [t for _, t, _ in txns]})


def publish(ctx: RunContext, vertex: Vertex, family: Family, endpoint: Endpoint, staged: Staged) -> Published:
    """The fenced claim, then the transactions' commits (module docstring)."""
    d = staged.detail
    commits = CommitLog(endpoint, str(d["database"]), family.client_of)
    key = staged.commit.key
    ctx.fault_point("sink.move", vertex)
    with connected(endpoint) as conn:
        for _ in range(TRIES):
            found = commits.read(conn, key)
            if found is None:
                return Published(Outcome.SUPERSEDED, newest=0)
            token, state, detail = found
            if state == "committed":
                return Published(Outcome.ALREADY)
            if state == "claimed":
                roll_forward(commits, conn, key, token, detail)
                return Published(Outcome.ALREADY)
            if token != staged.token:
                return Published(Outcome.SUPERSEDED, newest=token)
            claim = {"database": d["database"], "table": d["table"], "txns": list(d["txns"]), "rows": staged.rows,
                     "run_id": ctx.run_id, "sink": vertex.ref, "attempt": ctx.attempt}
            if not commits.cas(conn, key, token, state, token, "claimed", claim):
                continue
            ctx.fault_point("sink.move", vertex)
            roll_forward(commits, conn, key, token, claim)
            return Published(Outcome.PUBLISHED, rows=staged.rows)
    raise StreamLoadError(f"cannot claim the commit {key}: {TRIES} conflicting writes")


def abort_all(family: Family, endpoint: Endpoint, database: str, txns: list[Any]) -> int:
    """Abort prepared transactions (as the writers named them, or by their labels); the ones aborted now."""
    client = family.client_of(endpoint, 1)
    done = 0
    for txn in txns:
        with contextlib.suppress(PipelineError, OSError):
            done += client.decide(database, txn, "abort") == "done"
    return done


def discard(family: Family, endpoint: Endpoint, staged: Staged) -> None:
    """Abort the attempt's prepared transactions, unless its claim won (the restore commits them)."""
    d = staged.detail
    if not d.get("txns"):
        return
    commits = CommitLog(endpoint, str(d["database"]), family.client_of)
    with connected(endpoint) as conn:
        found = commits.read(conn, staged.commit.key)
    if found is not None and found[1] in ("claimed", "committed") and list(found[2].get("txns", [])) == list(
            d["txns"]):
        log.info("commit %s is claimed: its transactions stay for the restore", staged.commit.key)
        return
    abort_all(family, endpoint, str(d["database"]), list(d["txns"]))


def discard_older(family: Family, endpoint: Endpoint, database: str, commit: CommitId, token: int) -> int:
    """Abort the prepared transactions older tokens recorded (they can never commit)."""
    commits = CommitLog(endpoint, database, family.client_of)
    aborted = 0
    with connected(endpoint) as conn:
        for older in range(max(1, token - 50), token):
            found = commits.read(conn, f"{commit.key[:40]}-{older}")
            if found is not None and found[1] == "prepared":
                aborted += abort_all(family, endpoint, database, list(found[2].get("txns", [])))
                commits.cas(conn, f"{commit.key[:40]}-{older}", found[0], "prepared", found[0], "aborted", found[2])
    return aborted


class TableLog:
    """The engine's commit-log view: the log of the database each commit's table lands in."""

    def __init__(self, family: Family, endpoint: Endpoint, options: SinkOptions):
        self.family, self.endpoint, self.options = family, endpoint, options

    def _of(self, commit: CommitId) -> CommitLog:
        database, _ = target_of(self.options, commit.table)
        return CommitLog(self.endpoint, database, self.family.client_of)

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        return self._of(commit).take_token(commit)

    def newest_token(self, commit: CommitId) -> int:
        return self._of(commit).newest_token(commit)


__all__ = ["Family", "SinkOptions", "TableLog", "abort_all", "apply_save_modes", "create_statement", "discard",
           "discard_older", "label_of", "publish", "stage", "table_exists", "target_of"]
