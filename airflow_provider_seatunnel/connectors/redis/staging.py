"""Where the sink keeps its bookkeeping and staging in the target database, and how a staged row
is encoded (pure Python: the Spark writers and the driver share it).

Every key lives under :data:`PREFIX` (a Redis source skips them): per commit key ``K`` (a digest
of run id, pipeline, sink and table) ``fence:K`` (the attempt-token counter), ``commit:K`` (the
commit record, a hash), ``stages:K`` (a set naming every staging list of ``K``),
``stage:K:<token>:<partition>:<task attempt>`` (one list per write task attempt) and
``manifest:K:<token>`` (the staging lists of the tasks Spark committed, with their row counts);
``log:<digest of pipeline, sink, table>`` (a sorted set of commit keys and run ids, for ``retire``).

A staged row is one list element, binary-safe and length-prefixed: ``<n>:<key>`` then the value
(string, list, set, zset), or, for a hash, ``<n>:<field><n>:<value>`` per field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...spi.twophase import digest

PREFIX = "__seatunnel:redis:"
#: staging and manifests expire after a week: what a killed run that is never restored leaves
STAGING_TTL = 7 * 24 * 3600


def fence_key(k: str) -> str:
    return f"{PREFIX}fence:{k}"


def commit_key(k: str) -> str:
    return f"{PREFIX}commit:{k}"


def stages_key(k: str) -> str:
    return f"{PREFIX}stages:{k}"


def stage_key(k: str, token: int, partition: int, attempt: str) -> str:
    return f"{PREFIX}stage:{k}:{int(token)}:{int(partition)}:{attempt}"


def manifest_key(k: str, token: int) -> str:
    return f"{PREFIX}manifest:{k}:{int(token)}"


def log_key(pipeline: str, sink: str, table: str) -> str:
    return f"{PREFIX}log:{digest(pipeline, sink, table)}"


def token_of_stage(key: str | bytes) -> int | None:
    """The attempt token a staging list's name holds."""
    text = key.decode() if isinstance(key, bytes) else key
    parts = text[len(PREFIX):].split(":")
    try:
        return int(parts[2]) if parts[0] == "stage" else None
    except (IndexError, ValueError):
        return None


def _piece(data: bytes) -> bytes:
    return str(len(data)).encode() + b":" + data


def encode(key: bytes, value: bytes) -> bytes:
    """A row of a string, list, set or zset target."""
    return _piece(key) + value


def encode_hash(key: bytes, fields: Sequence[tuple[bytes, bytes]]) -> bytes:
    """A row of a hash target: its fields."""
    return _piece(key) + b"".join(_piece(f) + _piece(v) for f, v in fields)


def decode(item: bytes, hash_fields: bool) -> tuple[bytes, Any]:
    """The key and the value (or the hash's fields) of a staged row (tests read staging with it)."""
    colon = item.index(b":")
    n = int(item[:colon])
    key, pos = item[colon + 1:colon + 1 + n], colon + 1 + n
    if not hash_fields:
        return key, item[pos:]
    fields = []
    while pos < len(item):
        parts = []
        for _ in range(2):
            colon = item.index(b":", pos)
            n = int(item[pos:colon])
            parts.append(item[colon + 1:colon + 1 + n])
            pos = colon + 1 + n
        fields.append((parts[0], parts[1]))
    return key, fields
