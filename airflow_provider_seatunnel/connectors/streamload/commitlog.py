"""The commit log of a Stream Load sink: the table :data:`LOG_TABLE` in the target database, over the
frontends' MySQL protocol. One row per commit key holds its newest attempt token, its state (``open``,
``claimed``, ``committed``; ``prepared``/``aborted`` for an attempt's recorded transactions; ``marker`` for a
run's save modes) and a JSON detail. Every change is one compare-and-set ``UPDATE ... WHERE token = t AND
state = s`` decided by its affected-row count. A commit found ``claimed`` (an attempt died while committing)
is rolled forward: each claimed transaction committed through the family's :class:`Decider`, then the row
set ``committed``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from ...spi.errors import DataError
from .endpoint import Endpoint
from .http import StreamLoadError

log = logging.getLogger("seatunnel.streamload")

LOG_TABLE = "seatunnel_commit_log"
TRIES = 20


class Decider(Protocol):
    """A family's decision on one prepared transaction, named as its writer recorded it (an id or a label):
    ``done``, ``already`` (decided so before) or ``aborted`` (committing one that was aborted, or is unknown)."""

    def decide(self, db: str, txn: Any, operation: str) -> str: ...


#: the family's client of an endpoint (and a retry count)
ClientOf = Callable[[Endpoint, int], Decider]


@contextlib.contextmanager
def connected(endpoint: Endpoint, database: str | None = None) -> Iterator[Any]:
    """A MySQL-protocol session to the frontend (autocommit: each statement is its own step)."""
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


def q(name: str) -> str:
    """A quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def family_of(conn: Any) -> str:
    """``doris``, ``starrocks`` (a Doris-family frontend, by its version comment) or ``mysql`` (anything else,
    such as the tests' MariaDB)."""
    _, rows = run(conn, "SELECT @@version_comment")
    comment = str(rows[0][0]).lower() if rows else ""
    if "starrocks" in comment:
        return "starrocks"
    return "doris" if any(w in comment for w in ("doris", "selectdb")) else "mysql"


def log_ddl(conn: Any, database: str) -> str:
    """The commit log's DDL in the frontend's dialect (a Unique or Primary Key table on the Doris family)."""
    name = f"{q(database)}.{LOG_TABLE}"
    columns = "commit_key VARCHAR(96) NOT NULL, token BIGINT NOT NULL, state VARCHAR(16) NOT NULL, detail STRING"
    family = family_of(conn)
    if family == "doris":
        return (f"CREATE TABLE IF NOT EXISTS {name} ({columns}) UNIQUE KEY(commit_key) DISTRIBUTED BY "
                "HASH(commit_key) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\", "
                "\"enable_unique_key_merge_on_write\" = \"true\")")
    if family == "starrocks":
        return (f"CREATE TABLE IF NOT EXISTS {name} ({columns}) PRIMARY KEY(commit_key) DISTRIBUTED BY "
                "HASH(commit_key) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\")")
    return f"CREATE TABLE IF NOT EXISTS {name} ({columns.replace('STRING', 'LONGTEXT')}, PRIMARY KEY (commit_key))"


class CommitLog:
    """Attempt tokens and commit records in :data:`LOG_TABLE` of one database; ``client_of`` decides the
    claimed transactions a roll-forward commits."""

    def __init__(self, endpoint: Endpoint, database: str, client_of: ClientOf):
        self.endpoint, self.database, self.client_of = endpoint, database, client_of
        self._ready = False

    def _table(self) -> str:
        return f"{q(self.database)}.{LOG_TABLE}"

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

    def take_token(self, commit: Any) -> tuple[int, bool]:
        with connected(self.endpoint) as conn:
            for _ in range(TRIES):
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
        raise StreamLoadError(f"cannot take an attempt token in {self.database}.{LOG_TABLE}: {TRIES} conflicts")

    def newest_token(self, commit: Any) -> int:
        with connected(self.endpoint) as conn:
            found = self.read(conn, commit.key)
        return found[0] if found is not None else 0


def roll_forward(log_: CommitLog, conn: Any, key: str, token: int, detail: Mapping[str, Any]) -> None:
    """Finish a claimed commit: commit each claimed transaction, then record the commit. A claim whose
    transactions were all aborted (the store's timeout) before any commit is reopened: the restore loads
    again; one that is half committed fails the run (rows would be lost)."""
    client = log_.client_of(log_.endpoint, 3)
    db = str(detail["database"])
    answers = [client.decide(db, txn, "commit") for txn in detail.get("txns", [])]
    if "aborted" in answers:
        if all(a == "aborted" for a in answers):
            log_.cas(conn, key, token, "claimed", token, "open", {})
            raise StreamLoadError(f"the prepared transactions of commit {key} were aborted by the store before "
                                  "the commit: the retry loads them again")
        raise DataError(f"commit {key}: {answers.count('aborted')} of {len(answers)} prepared transactions were "
                        f"aborted by the store before the commit; {db}.{detail.get('table')} misses their rows")
    if not log_.cas(conn, key, token, "claimed", token, "committed", detail):
        log.info("commit %s was finished by another attempt", key)


__all__ = ["LOG_TABLE", "CommitLog", "Decider", "connected", "family_of", "log_ddl", "q", "roll_forward", "run"]
