"""The sink's bookkeeping in the server's database :data:`DATABASE`: tables whose names and comments are its
state, since ClickHouse has no transaction and no conditional write but refuses to create a table that
exists (``TABLE_ALREADY_EXISTS``), atomically. Per commit key ``k``:

* ``tok_k_<n>``: attempt token n was taken (the newest token is the largest n; taking one is creating the
  next table, so two attempts never hold the same token);
* ``stg_k_<n>_<p>``: the rows attempt n's writer of partition p staged (``CREATE TABLE ... AS`` the target:
  the same columns, engine, partition key and sorting key, so its parts can MOVE into the target);
  ``del_k_<n>_<p>``: with primary_key, the keys that writer's rows replace or delete;
* ``man_k_<n>``: attempt n's manifest (its comment: the parts Spark's commit reported, with their rows);
* ``claim_k``: the attempt whose publish started (its comment: the token and the target); one attempt can
  create it; ``deleted_k``: the keyed deletes of the claim ran; ``done_k``: the commit record.

Creating the database takes the CREATE DATABASE grant the first time (or an admin creates it).
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import client
from .client import literal, quote
from .options import Endpoint

DATABASE = "_seatunnel"
#: ClickHouse's code for a table that exists already
EXISTS = 57
_READY: set[str] = set()


def name(kind: str, key: str, *parts: int) -> str:
    return "_".join([kind, key, *(str(int(p)) for p in parts)])


def full(table: str) -> str:
    return f"{quote(DATABASE)}.{quote(table)}"


def ensure(endpoint: Endpoint) -> None:
    """The bookkeeping database (created once per process and server)."""
    if endpoint.label in _READY:
        return
    client.execute(endpoint, f"CREATE DATABASE IF NOT EXISTS {quote(DATABASE)}",
                   doing="cannot create the bookkeeping database")
    _READY.add(endpoint.label)


def create(endpoint: Endpoint, table: str, comment: dict[str, Any] | None = None) -> bool:
    """Create the marker table ``table``; False when it exists (another attempt created it)."""
    text = f" COMMENT {literal(json.dumps(comment))}" if comment is not None else ""
    try:
        client.execute(endpoint, f"CREATE TABLE {full(table)} (x UInt8) ENGINE = MergeTree ORDER BY tuple(){text}",
                       doing="cannot write the commit log")
    except client.PipelineError as e:
        if f"Code: {EXISTS}." in str(e) or "already exists" in str(e):
            return False
        raise
    return True


def tables(endpoint: Endpoint, key: str) -> dict[str, dict[str, Any]]:
    """The bookkeeping tables of a commit key: name -> its comment (JSON, or {})."""
    found = client.rows(endpoint, f"SELECT name, comment FROM system.tables WHERE database = {literal(DATABASE)} "
                                  f"AND position(name, {literal(key)}) > 0",
                        doing="cannot read the commit log")
    out = {}
    for table, comment in found:
        try:
            out[str(table)] = json.loads(comment) if comment else {}
        except ValueError:
            out[str(table)] = {}
    return out


def tokens(found: dict[str, Any], key: str) -> list[int]:
    pattern = re.compile(rf"tok_{key}_(\d+)")
    return sorted(int(m.group(1)) for t in found if (m := pattern.fullmatch(t)))


def staged_of(found: dict[str, Any], key: str, token: int) -> list[str]:
    """The staging tables (rows and keys) of attempt ``token``."""
    pattern = re.compile(rf"(stg|del)_{key}_{int(token)}_(\d+|all)")
    return sorted(t for t in found if pattern.fullmatch(t))


def staged_tokens(found: dict[str, Any], key: str) -> list[int]:
    pattern = re.compile(rf"(?:stg|del|man)_{key}_(\d+)(?:_\d+|_all)?")
    return sorted({int(m.group(1)) for t in found if (m := pattern.fullmatch(t))})


def drop(endpoint: Endpoint, table: str) -> None:
    client.execute(endpoint, f"DROP TABLE IF EXISTS {full(table)} SYNC", doing="cannot delete the staging")


def drop_attempt(endpoint: Endpoint, found: dict[str, Any], key: str, token: int) -> None:
    """Delete an attempt's staging and manifest."""
    for table in [*staged_of(found, key, token), name("man", key, token)]:
        drop(endpoint, table)


def count(endpoint: Endpoint, table: str) -> int:
    answer = client.execute(endpoint, f"SELECT count() FROM {full(table)}", fmt="TabSeparated",
                            doing="cannot count the staged rows")
    return int(answer.strip() or 0)


def partitions(endpoint: Endpoint, table: str) -> list[str]:
    """The partition ids of a staging table's active parts."""
    found = client.rows(endpoint, "SELECT DISTINCT partition_id FROM system.parts WHERE database = "
                                  f"{literal(DATABASE)} AND table = {literal(table)} AND active",
                        doing="cannot list the staged parts")
    return sorted(str(r[0]) for r in found)


def gather(endpoint: Endpoint, kind: str, key: str, token: int, parts: list[tuple[int, int]]) -> tuple[str, int] | None:
    """The writers' staging tables of one kind (``stg``/``del``) as ONE table (``<kind>_k_<n>_all``), so that the
    publish moves one table's partitions: (its name, its rows); None when no writer staged any. One writer's
    table is taken as it is; several are copied into a new one (server-side) and dropped."""
    tables = [(name(kind, key, token, p), rows) for p, rows in parts if rows]
    if len(tables) <= 1:
        return tables[0] if tables else None
    whole = f"{kind}_{key}_{int(token)}_all"
    drop(endpoint, whole)
    client.execute(endpoint, f"CREATE TABLE {full(whole)} AS {full(tables[0][0])}", doing="cannot gather the staging")
    for table, _ in tables:
        client.execute(endpoint, f"INSERT INTO {full(whole)} SELECT * FROM {full(table)}",
                       doing="cannot gather the staging")
    for table, _ in tables:
        drop(endpoint, table)
    return whole, sum(r for _, r in tables)


def write_manifest(endpoint: Endpoint, key: str, token: int, parts: list[list[int]]) -> None:
    drop(endpoint, name("man", key, token))
    create(endpoint, name("man", key, token), {"parts": parts})


__all__ = ["DATABASE", "EXISTS", "count", "create", "drop", "drop_attempt", "ensure", "full", "gather", "name",
           "partitions", "staged_of", "staged_tokens", "tables", "tokens", "write_manifest"]
