"""The Doris sink's storage verbs, on the Spark driver: the commit log, staging, the fenced commit.

* **Commit log**: the table :data:`LOG_TABLE` in the target database, over the frontends' MySQL protocol
  (``query-port``): one row per commit key with its newest attempt token, its state (``open``, ``claimed``,
  ``committed``) and the claimed transactions. Every change is one compare-and-set ``UPDATE ... WHERE
  token = t`` whose affected-row count says whether it won: ``take_token`` raises the token so; a commit
  found ``claimed`` (an attempt died while committing) is rolled forward first, and then counts as
  committed.
* **stage**: ONE Spark job at the parallelism the rows arrive at: each partition spools its rows
  (``doris.config``'s format) to a local file and sends them in one Stream Load with
  ``two_phase_commit: true`` under the label ``<sink.label-prefix>_<commit key>_<token>_<partition>``; the
  transaction is prepared, invisible. A retried task reuses its label: the open transaction of the failed
  try is aborted first. The driver collects each partition's transaction id and rows.
* **publish**: ``ALREADY`` when the log says committed, ``SUPERSEDED`` when a newer token was taken;
  otherwise the **claim**, one compare-and-set of ``state=claimed`` with the transaction ids under the
  attempt's token, is the commit point; then every transaction is committed (``_stream_load_2pc``,
  ``txn_operation: commit``; one committed already counts as done) and the row set ``committed``.
* **discard** aborts the attempt's prepared transactions (unless its claim won: the restore commits
  them); ``discard_older`` aborts those an older attempt recorded.
* **Save modes**, once per run and target (a marker row in the log), before the first load, as SeaTunnel
  does them: the schema modes create (``save_mode_create_template``) or drop the table, DROP_DATA truncates,
  ERROR_WHEN_DATA_EXISTS fails the run, CUSTOM_PROCESSING runs ``custom_sql``.

A reader may see a commit's transactions become visible one by one (one per writer): Doris has no
multi-transaction publish. The guarantee is exactly-once in what the table finally holds.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from ...spi.twophase import CommitId, Outcome, Published, Staged, digest
from ..files.placeholders import expand_table_placeholders
from .options import DorisOptions, Endpoint
from .streamload import Client, StreamLoadError

log = logging.getLogger("seatunnel.doris")

LOG_TABLE = "seatunnel_commit_log"
_TRIES = 20
_LABEL_BAD = re.compile(r"[^-_A-Za-z0-9:]")


@contextlib.contextmanager
def connected(endpoint: Endpoint, database: str | None = None) -> Iterator[Any]:
    """A MySQL-protocol session to the first frontend (autocommit: each statement is its own step)."""
    import pymysql

    conn = pymysql.connect(host=endpoint.mysql_host, port=endpoint.query_port, user=endpoint.username,
                           password=endpoint.password, database=database, autocommit=True, connect_timeout=30,
                           read_timeout=600, write_timeout=600, charset="utf8mb4")
    try:
        yield conn
    finally:
        conn.close()


def run(conn: Any, sql: str, args: tuple[Any, ...] = ()) -> tuple[int, list[tuple[Any, ...]]]:
    """One statement: the affected rows and the rows it returned."""
    with conn.cursor() as cursor:
        count = cursor.execute(sql, args or None)
        return int(count), list(cursor.fetchall() or ())


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def is_doris(conn: Any) -> bool:
    """Whether the MySQL endpoint is a Doris-family frontend (its version comment names it)."""
    _, rows = run(conn, "SELECT @@version_comment")
    return bool(rows) and any(w in str(rows[0][0]).lower() for w in ("doris", "selectdb", "starrocks"))


def log_ddl(conn: Any, database: str) -> str:
    name = f"{_q(database)}.{LOG_TABLE}"
    columns = "commit_key VARCHAR(96) NOT NULL, token BIGINT NOT NULL, state VARCHAR(16) NOT NULL, detail STRING"
    if is_doris(conn):
        return (f"CREATE TABLE IF NOT EXISTS {name} ({columns}) UNIQUE KEY(commit_key) DISTRIBUTED BY "
                "HASH(commit_key) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\", "
                "\"enable_unique_key_merge_on_write\" = \"true\")")
    return f"CREATE TABLE IF NOT EXISTS {name} ({columns.replace('STRING', 'LONGTEXT')}, PRIMARY KEY (commit_key))"


class CommitLog:
    """Attempt tokens and commit records in :data:`LOG_TABLE` of one database."""

    def __init__(self, endpoint: Endpoint, database: str):
        self.endpoint, self.database = endpoint, database
        self._ready = False

    def _table(self) -> str:
        return f"{_q(self.database)}.{LOG_TABLE}"

    def read(self, conn: Any, key: str) -> tuple[int, str, dict[str, Any]] | None:
        if not self._ready:
            run(conn, log_ddl(conn, self.database))
            self._ready = True
        _, rows = run(conn, f"SELECT token, state, detail FROM {self._table()} WHERE commit_key = %s", (key,))
        if not rows:
            return None
        token, state, detail = rows[0]
        return int(token), str(state), json.loads(detail or "{}")

    def cas(self, conn: Any, key: str, token: int, state: str, new_token: int, new_state: str,
            detail: Mapping[str, Any]) -> bool:
        """Set the row only if it still holds ``token`` and ``state``; whether it did."""
        count, _ = run(conn, f"UPDATE {self._table()} SET token = %s, state = %s, detail = %s "
                             "WHERE commit_key = %s AND token = %s AND state = %s",
                       (new_token, new_state, json.dumps(dict(detail)), key, token, state))
        return count == 1

    def create(self, conn: Any, key: str, state: str = "open", detail: Mapping[str, Any] | None = None) -> bool:
        import pymysql

        try:
            run(conn, f"INSERT INTO {self._table()} (commit_key, token, state, detail) VALUES (%s, 1, %s, %s)",
                (key, state, json.dumps(dict(detail or {}))))
        except pymysql.err.IntegrityError:
            return False
        return self.read(conn, key) is not None

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        with connected(self.endpoint) as conn:
            for _ in range(_TRIES):
                found = self.read(conn, commit.key)
                if found is None:
                    if self.create(conn, commit.key):
                        found = self.read(conn, commit.key)
                        if found is not None and found[0] == 1:
                            return 1, False
                    continue
                token, state, detail = found
                if state == "claimed":
                    roll_forward(self, conn, commit.key, token, detail)
                    continue
                if self.cas(conn, commit.key, token, state, token + 1, state, detail):
                    return token + 1, state == "committed"
        raise StreamLoadError(f"cannot take an attempt token in {self.database}.{LOG_TABLE}: {_TRIES} conflicts")

    def newest_token(self, commit: CommitId) -> int:
        with connected(self.endpoint) as conn:
            found = self.read(conn, commit.key)
        return found[0] if found is not None else 0


def client_of(endpoint: Endpoint, retries: int = 3) -> Client:
    return Client(endpoint.fenodes, endpoint.username, endpoint.password, retries)


def roll_forward(log_: CommitLog, conn: Any, key: str, token: int, detail: Mapping[str, Any]) -> None:
    """Finish a claimed commit: commit each claimed transaction, then record the commit. A claim whose
    transactions were all aborted (the store's timeout) before any commit is reopened: the restore loads
    again; one that is half committed fails the run (rows would be lost)."""
    client = client_of(log_.endpoint)
    db = str(detail["database"])
    answers = [client.decide(db, int(txn), "commit") for txn in detail.get("txns", [])]
    if "aborted" in answers:
        if all(a == "aborted" for a in answers):
            log_.cas(conn, key, token, "claimed", token, "open", {})
            raise StreamLoadError(f"the prepared transactions of commit {key} were aborted by the store before "
                                  "the commit: the retry loads them again")
        raise DataError(f"commit {key}: {answers.count('aborted')} of {len(answers)} prepared transactions were "
                        f"aborted by the store before the commit; {db}.{detail.get('table')} misses their rows")
    if not log_.cas(conn, key, token, "claimed", token, "committed", detail):
        log.info("commit %s was finished by another attempt", key)


def target_of(options: DorisOptions, table_key: str, columns: list[str] | None = None) -> tuple[str, str]:
    """The database and table a table lands in: the options with the table placeholders expanded, else the
    upstream table's own names."""
    parts = table_key.split(".")
    database = expand_table_placeholders(options.database, table_key, columns) if options.database else (
        parts[0] if len(parts) > 1 else "")
    table = expand_table_placeholders(options.table, table_key, columns) if options.table else parts[-1]
    if not database or not table or (table == "default" and not options.table):
        raise RuntimeConfigError("the sink names no target table: set table.identifier, or database and table")
    return database, table


def label_of(prefix: str, commit: CommitId, token: int) -> str:
    """The labels' stem of one attempt (each writer appends its partition): unique per commit and token."""
    head = _LABEL_BAD.sub("_", prefix)[:64]  # Doris's labels: at most 128 of [-_A-Za-z0-9:]
    return f"{head}_{commit.key[:24]}_{token}" if head else f"{commit.key[:24]}_{token}"


def doris_type(spark_type: Any) -> str:
    """A Spark column type as Doris's (SeaTunnel's type converter: STRING for text, DATETIMEV2 for timestamps)."""
    name = spark_type.typeName()
    simple = {"boolean": "BOOLEAN", "byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT",
              "float": "FLOAT", "double": "DOUBLE", "string": "STRING", "date": "DATEV2", "binary": "STRING",
              "timestamp": "DATETIMEV2(6)", "timestamp_ntz": "DATETIMEV2(6)"}
    if name == "decimal":
        return f"DECIMALV3({spark_type.precision},{spark_type.scale})"
    if name == "array":
        return f"ARRAY<{doris_type(spark_type.elementType)}>"
    return simple.get(name, "STRING" if name not in ("map", "struct") else "JSON")


def create_statement(template: str, database: str, table: str, fields: list[tuple[str, str]],
                     keys: list[str]) -> str:
    """``save_mode_create_template`` with its placeholders filled: the first ``${rowtype_primary_key}``
    (the column list's) gives the key columns' definitions, later ones their names; ``${rowtype_fields}`` the
    other columns; ``${rowtype_unique_key}`` the key names."""
    defs = {n: f"{_q(n)} {t}" for n, t in fields}
    key_defs = ",".join(defs[k] for k in keys if k in defs)
    names = ",".join(_q(k) for k in keys)
    first = "${rowtype_primary_key}"
    text = template
    at = text.find(first)
    if at >= 0:
        end = at + len(first)
        tail = text[end:end + 2] if key_defs else ""
        cut = end + (2 if text[end:end + 2] == ",\n" and not key_defs else 0)
        text = text[:at] + key_defs + tail[:0] + text[cut:]
    values = {"database": database, "table": table, "table_name": table, "rowtype_primary_key": names,
              "rowtype_unique_key": names, "comment": "",
              "rowtype_fields": ",\n".join(d for n, d in defs.items() if n not in keys)}
    return re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def table_exists(conn: Any, database: str, table: str) -> bool:
    _, rows = run(conn, "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                  (database, table))
    return bool(rows)


def apply_save_modes(ctx: RunContext, vertex: Vertex, options: DorisOptions, endpoint: Endpoint, database: str,
                     table: str, df: Any) -> None:
    """The save modes of one target, once per run (a marker row in the log), before its first load."""
    marker = "savemode-" + digest(ctx.save_mode_run_id, ctx.pipeline_key, vertex.ref, database, table)
    commits = CommitLog(endpoint, database)
    with connected(endpoint) as conn:
        if commits.read(conn, marker) is not None:
            return
        fields = [(f.name, doris_type(f.dataType)) for f in df.schema.fields]
        create = create_statement(options.create_template, database, table, fields, [])
        exists = table_exists(conn, database, table)
        schema, data = options.schema_save_mode, options.data_save_mode
        if schema == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
            raise RuntimeConfigError(f"the table {database}.{table} does not exist (schema_save_mode = "
                                     "ERROR_WHEN_SCHEMA_NOT_EXIST)")
        if schema == "RECREATE_SCHEMA" and exists:
            run(conn, f"DROP TABLE {_q(database)}.{_q(table)}")
            exists = False
        if not exists and schema in ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST"):
            run(conn, create)
            exists = True
        if exists and data == "DROP_DATA":
            run(conn, f"TRUNCATE TABLE {_q(database)}.{_q(table)}")
        elif exists and data == "ERROR_WHEN_DATA_EXISTS":
            _, rows = run(conn, f"SELECT 1 FROM {_q(database)}.{_q(table)} LIMIT 1")
            if rows:
                raise DataError(f"the table {database}.{table} holds rows (data_save_mode = ERROR_WHEN_DATA_EXISTS)")
        elif data == "CUSTOM_PROCESSING":
            run(conn, options.custom_sql)
        commits.create(conn, marker, "marker", {"target": f"{database}.{table}"})


def stage(ctx: RunContext, vertex: Vertex, options: DorisOptions, commit: CommitId, token: int, df: Any) -> Staged:
    """ONE Spark job: each partition's rows in one prepared Stream Load transaction (module docstring)."""
    from ...spi.rows import ROW_KIND, data_columns
    from .writer import load_partition

    assert options.endpoint is not None
    columns = data_columns(df)
    database, table = target_of(options, commit.table, columns)
    data = df.select(*columns)
    apply_save_modes(ctx, vertex, options, options.endpoint, database, table, data)
    kind_index = len(columns) if ROW_KIND in df.columns else None
    rows = df.select(*columns, ROW_KIND) if kind_index is not None else data
    spec = {"endpoint": options.endpoint.to_json(), "database": database, "table": table,
            "label": label_of(options.label_prefix, commit, token), "headers": dict(options.headers),
            "format": options.format, "column_separator": options.column_separator,
            "line_delimiter": options.line_delimiter, "enable_delete": options.enable_delete,
            "max_retries": options.max_retries, "columns": columns, "kind_index": kind_index}
    source = rows.rdd
    try:
        loaded = source.mapPartitionsWithIndex(lambda i, it: load_partition(spec, i, it)).collect()
    except Exception:  # the writers that finished prepared their transactions: abort them by their labels
        labels = [f"{spec['label']}_{p}" for p in range(source.getNumPartitions())]
        _abort_all(options.endpoint, database, labels)
        raise
    txns = sorted(loaded)
    total = sum(r for _, _, r in txns)
    with connected(options.endpoint) as conn:  # recorded so that a newer attempt can abort them
        CommitLog(options.endpoint, database).create(conn, f"{commit.key[:40]}-{token}", "prepared",
                                                     {"database": database, "txns": [t for _, t, _ in txns]})
    log.info("Doris %s: prepared %d row(s) for %s.%s in %d transaction(s)", vertex.ref, total, database, table,
             len(txns))
    return Staged(commit, token, f"Doris {database}.{table}", total,
                  tuple((f"txn {t}", r) for _, t, r in txns),
                  {"database": database, "table": table, "txns": [t for _, t, _ in txns]})


def publish(ctx: RunContext, vertex: Vertex, endpoint: Endpoint, staged: Staged) -> Published:
    """The fenced claim, then the transactions' commits (module docstring)."""
    d = staged.detail
    commits = CommitLog(endpoint, str(d["database"]))
    key = staged.commit.key
    ctx.fault_point("sink.move", vertex)
    with connected(endpoint) as conn:
        for _ in range(_TRIES):
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
    raise StreamLoadError(f"cannot claim the commit {key}: {_TRIES} conflicting writes")


def _abort_all(endpoint: Endpoint, database: str, txns: list[int] | list[str]) -> int:
    """Abort prepared transactions (ids, or labels); the ones aborted now."""
    client = client_of(endpoint, retries=1)
    done = 0
    for txn in txns:
        with contextlib.suppress(PipelineError, OSError):
            done += client.decide(database, txn, "abort") == "done"
    return done


def discard(endpoint: Endpoint, staged: Staged) -> None:
    """Abort the attempt's prepared transactions, unless its claim won (the restore commits them)."""
    d = staged.detail
    if not d.get("txns"):
        return
    commits = CommitLog(endpoint, str(d["database"]))
    with connected(endpoint) as conn:
        found = commits.read(conn, staged.commit.key)
    if found is not None and found[1] in ("claimed", "committed") and list(found[2].get("txns", [])) == list(
            d["txns"]):
        log.info("commit %s is claimed: its transactions stay for the restore", staged.commit.key)
        return
    _abort_all(endpoint, str(d["database"]), [int(t) for t in d["txns"]])


def discard_older(endpoint: Endpoint, database: str, commit: CommitId, token: int) -> int:
    """Abort the prepared transactions older tokens recorded (they can never commit)."""
    commits = CommitLog(endpoint, database)
    aborted = 0
    with connected(endpoint) as conn:
        for older in range(max(1, token - 50), token):
            found = commits.read(conn, f"{commit.key[:40]}-{older}")
            if found is not None and found[1] == "prepared":
                aborted += _abort_all(endpoint, database, [int(t) for t in found[2].get("txns", [])])
                commits.cas(conn, f"{commit.key[:40]}-{older}", found[0], "prepared", found[0], "aborted", found[2])
    return aborted
