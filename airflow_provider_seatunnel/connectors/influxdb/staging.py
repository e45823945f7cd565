"""The sink's bookkeeping in the server's database ``_seatunnel``: staging, manifests and the commit log.

* retention policy ``staging`` (7 days: staging a run never restored expires): measurement ``stage``, one
  point per staged row (tags ``commit``, ``token``, ``part``; string field ``line``, the row's point; time
  the attempt's base time plus the row's number in its partition, so a retried write task overwrites its
  own points), and ``manifest``, one point per attempt (fields ``rows``, ``parts``: what Spark's commit
  reported);
* retention policy ``autogen`` (for ever): measurement ``commits``, one point per commit and ``kind``
  (``token``: the newest attempt token; ``claim``: the attempt whose publish started; ``done``: the commit
  record), fields ``token`` and ``rows``, at time 0 so that a rewrite replaces it.

Creating the database and its retention policy takes an admin the first time (or an admin creates them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import client
from .client import ident, literal
from .options import Endpoint

DATABASE = "_seatunnel"
STAGING_RP = "staging"
STAGING_DAYS = 7
STAGE, MANIFEST, COMMITS = "stage", "manifest", "commits"
_READY: set[tuple[str, str | None]] = set()


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def staging_lines(commit_key: str, token: int, part: int, first: int, lines: Sequence[str], base_ns: int) -> list[str]:
    """The staging points of ``lines``, rows ``first``.. of partition ``part``."""
    head = f"{STAGE},commit={commit_key},token={int(token)},part={int(part)} line="
    return [f"{head}{_string(line)} {base_ns + first + i}" for i, line in enumerate(lines)]


def ensure(endpoint: Endpoint) -> None:
    """The bookkeeping database and its staging retention policy (created once per process)."""
    key = (endpoint.label, endpoint.username)
    if key in _READY:
        return
    found = client.execute(endpoint, "SHOW DATABASES", doing="cannot list the databases")
    names = {row[0] for s in found for row in s.get("values") or ()}
    if DATABASE not in names:
        client.ensure_database(endpoint, DATABASE)
    policies = client.execute(endpoint, f"SHOW RETENTION POLICIES ON {ident(DATABASE)}",
                              doing="cannot list the retention policies")
    if STAGING_RP not in {row[0] for s in policies for row in s.get("values") or ()}:
        client.execute(endpoint, f"CREATE RETENTION POLICY {ident(STAGING_RP)} ON {ident(DATABASE)} DURATION "
                                 f"{STAGING_DAYS}d REPLICATION 1 SHARD DURATION 1d",
                       doing="cannot create the staging retention policy")
    _READY.add(key)


def _where(commit_key: str, token: int | None = None) -> str:
    out = f'"commit" = {literal(commit_key)}'
    return out + (f' AND "token" = {literal(str(int(token)))}' if token is not None else "")


def _rows(endpoint: Endpoint, q: str, doing: str) -> list[dict[str, Any]]:
    return list(client.query(endpoint, DATABASE, q, timeout=60.0, doing=doing))


def write_manifest(endpoint: Endpoint, commit_key: str, token: int, parts: list[list[int]], base_ns: int) -> None:
    rows = sum(p[1] for p in parts)
    line = (f"{MANIFEST},commit={commit_key},token={int(token)} rows={rows}i,parts={_string(json.dumps(parts))} "
            f"{base_ns}")
    client.write(endpoint, DATABASE, [line], STAGING_RP, 30.0, doing="cannot record the staged rows")


def read_manifest(endpoint: Endpoint, commit_key: str, token: int) -> list[list[int]] | None:
    """The parts (partition, rows) an attempt's Spark commit reported; None when it left none."""
    q = f"SELECT \"parts\" FROM {ident(STAGING_RP)}.{ident(MANIFEST)} WHERE {_where(commit_key, token)}"
    for series in _rows(endpoint, q, "cannot read the staging manifest"):
        for values in series.get("values") or ():
            return [list(map(int, p)) for p in json.loads(values[1])]
    return None


def count_staged(endpoint: Endpoint, commit_key: str, token: int) -> int:
    q = f"SELECT count(\"line\") FROM {ident(STAGING_RP)}.{ident(STAGE)} WHERE {_where(commit_key, token)}"
    for series in _rows(endpoint, q, "cannot count the staged rows"):
        for values in series.get("values") or ():
            return int(values[1] or 0)
    return 0


def staged_lines(endpoint: Endpoint, commit_key: str, token: int) -> Any:
    """The staged lines of an attempt, streamed chunk by chunk."""
    q = f"SELECT \"line\" FROM {ident(STAGING_RP)}.{ident(STAGE)} WHERE {_where(commit_key, token)}"
    for series in client.query(endpoint, DATABASE, q, timeout=300.0, doing="cannot read the staged rows"):
        for values in series.get("values") or ():
            yield str(values[1])


def drop_staging(endpoint: Endpoint, commit_key: str, token: int) -> None:
    for measurement in (STAGE, MANIFEST):
        client.execute(endpoint, f"DROP SERIES FROM {ident(measurement)} WHERE {_where(commit_key, token)}",
                       DATABASE, doing="cannot delete the staging")


def staged_tokens(endpoint: Endpoint, commit_key: str) -> list[int]:
    q = f"SHOW TAG VALUES FROM {ident(MANIFEST)} WITH KEY = \"token\" WHERE {_where(commit_key)}"
    q2 = f"SHOW TAG VALUES FROM {ident(STAGE)} WITH KEY = \"token\" WHERE {_where(commit_key)}"
    out: set[int] = set()
    for statement in (q, q2):
        for series in _rows(endpoint, statement, "cannot list the staging"):
            out.update(int(v[1]) for v in series.get("values") or ())
    return sorted(out)


def read_log(endpoint: Endpoint, commit_key: str) -> dict[str, tuple[int, int]]:
    """The commit's log: kind -> (token, rows)."""
    q = f"SELECT \"token\", \"rows\" FROM {ident(COMMITS)} WHERE {_where(commit_key)} GROUP BY \"kind\""
    out: dict[str, tuple[int, int]] = {}
    for series in _rows(endpoint, q, "cannot read the commit log"):
        kind = (series.get("tags") or {}).get("kind", "")
        for values in series.get("values") or ():
            out[kind] = (int(values[1] or 0), int(values[2] or 0))
    return out


def write_log(endpoint: Endpoint, commit_key: str, kind: str, token: int, rows: int = 0) -> None:
    line = f"{COMMITS},commit={commit_key},kind={kind} token={int(token)}i,rows={int(rows)}i 0"
    client.write(endpoint, DATABASE, [line], None, 30.0, doing="cannot write the commit log")


def drop_log(endpoint: Endpoint, commit_key: str, kind: str) -> None:
    """Delete one kind of the commit's log (a claim that can never be finished)."""
    client.execute(endpoint, f'DROP SERIES FROM {ident(COMMITS)} WHERE {_where(commit_key)} AND "kind" = '
                             f"{literal(kind)}", DATABASE, doing="cannot update the commit log")


def field_types(endpoint: Endpoint, database: str, measurement: str) -> dict[str, str]:
    """The measurement's field keys and their InfluxDB types (empty when it does not exist)."""
    q = f"SHOW FIELD KEYS FROM {ident(measurement)}"
    return {str(v[0]): str(v[1]) for s in client.query(endpoint, database, q, doing="cannot read the field types")
            for v in s.get("values") or ()}
