"""The Redis sink's storage verbs on the driver: attempt tokens, the commit script, discard, retire.

Keys: :mod:`.staging`. The engine (``runtime/twophase.py``) runs the fencing rules of
``spi/fencing.py`` over these verbs, on one server:

* :func:`take_token` (one Lua script, atomic): ``INCR fence:K``, and whether ``commit:K`` exists;
* the staging of older tokens is deleted by the newer attempt (:func:`drop_older`);
* :data:`COMMIT_SCRIPT` publishes one table in one script, which Redis runs atomically (no other
  client's command runs in between, and a client killed after sending it does not stop it):
  it refuses unless ``fence:K`` still holds the attempt's token (``superseded``: nothing done),
  does nothing when ``commit:K`` exists (``committed``), checks each staging list holds the rows
  its task staged (``mismatch``) and every target key is absent or of the data type's Redis type
  (``wrongtype``), all before the first write; then applies the rows in staging order (SET,
  HSET, LPUSH, SADD, ZADD with score 1), sets ``expire`` on each key written, writes the commit
  record and deletes the staging. A reader sees the table's rows all at once or not at all.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

from ...spi import RunContext, Vertex
from ...spi.errors import DataError
from ...spi.twophase import Outcome, Published, Staged
from .client import connected
from .options import Endpoint
from .staging import (
    PREFIX,
    commit_key,
    fence_key,
    log_key,
    manifest_key,
    stages_key,
    token_of_stage,
)

log = logging.getLogger("seatunnel.redis")

TOKEN_SCRIPT = """
local token = redis.call('INCR', KEYS[1])
return {token, redis.call('EXISTS', KEYS[2])}
"""

COMMIT_SCRIPT = """
local function take(s, pos)
  local colon = string.find(s, ':', pos, true)
  local n = tonumber(string.sub(s, pos, colon - 1))
  return string.sub(s, colon + 1, colon + n), colon + n + 1
end
local token = ARGV[1]
local newest = redis.call('GET', KEYS[1])
if newest ~= token then return {'superseded', newest or '0'} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {'committed', redis.call('HGET', KEYS[2], 'token') or ''} end
local rtype, expire, n = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
for i = 1, n do
  local found = redis.call('LLEN', KEYS[5 + i])
  if found ~= tonumber(ARGV[4 + i]) then return {'mismatch', KEYS[5 + i], tostring(found), ARGV[4 + i]} end
end
local function each(fn)
  for i = 1, n do
    local total, start = tonumber(ARGV[4 + i]), 0
    while start < total do
      for _, item in ipairs(redis.call('LRANGE', KEYS[5 + i], start, start + 511)) do fn(item) end
      start = start + 512
    end
  end
end
local seen, nkeys, bad = {}, 0, nil
each(function(item)
  local key = take(item, 1)
  if bad == nil and not seen[key] then
    seen[key] = true
    nkeys = nkeys + 1
    local t = redis.call('TYPE', key)['ok']
    if t ~= 'none' and t ~= rtype then bad = {'wrongtype', key, t} end
  end
end)
if bad then return bad end
local rows = 0
each(function(item)
  local key, pos = take(item, 1)
  rows = rows + 1
  if rtype == 'hash' then
    local args = {}
    while pos <= #item do
      local f, v
      f, pos = take(item, pos)
      v, pos = take(item, pos)
      args[#args + 1] = f
      args[#args + 1] = v
    end
    if #args > 0 then redis.call('HSET', key, unpack(args)) end
  else
    local value = string.sub(item, pos)
    if rtype == 'string' then redis.call('SET', key, value)
    elseif rtype == 'list' then redis.call('LPUSH', key, value)
    elseif rtype == 'set' then redis.call('SADD', key, value)
    else redis.call('ZADD', key, 1, value) end
  end
end)
if expire > 0 then for key in pairs(seen) do redis.call('EXPIRE', key, expire) end end
local record = {'token', token, 'rows', tostring(rows), 'keys', tostring(nkeys)}
for i = 7 + n, #ARGV, 2 do record[#record + 1] = ARGV[i]; record[#record + 1] = ARGV[i + 1] end
redis.call('HSET', KEYS[2], unpack(record))
redis.call('ZADD', KEYS[3], ARGV[6 + n], ARGV[5 + n])
for i = 1, n do redis.call('DEL', KEYS[5 + i]); redis.call('SREM', KEYS[5], KEYS[5 + i]) end
redis.call('DEL', KEYS[4])
return {'ok', tostring(rows), tostring(nkeys)}
"""

#: how many older tokens' manifests an attempt deletes (their staging lists: all, from ``stages:K``)
_OLDER = 16


def take_token(client: Any, k: str) -> tuple[int, bool]:
    """The next attempt token of ``k`` and whether ``k`` is committed (one atomic script)."""
    token, committed = client.eval(TOKEN_SCRIPT, 2, fence_key(k), commit_key(k))
    return int(token), bool(committed)


def newest_token(client: Any, k: str) -> int:
    return int(client.get(fence_key(k)) or 0)


def drop_older(client: Any, k: str, token: int) -> int:
    """Delete the staging of tokens below ``token`` (attempts that can never commit); how many lists."""
    stale = [m for m in client.smembers(stages_key(k)) if (token_of_stage(m) or 0) < token]
    if stale:
        client.delete(*stale)
        client.srem(stages_key(k), *stale)
    older = [manifest_key(k, t) for t in range(max(1, token - _OLDER), token)]
    if older:
        client.delete(*older)
    return len(stale)


def discard(client: Any, k: str, token: int) -> None:
    """Delete every staging list of ``token`` (finished or not) and its manifest."""
    mine = [m for m in client.smembers(stages_key(k)) if token_of_stage(m) == token]
    if mine:
        client.delete(*mine)
        client.srem(stages_key(k), *mine)
    client.delete(manifest_key(k, token))


def read_manifest(client: Any, k: str, token: int) -> list[tuple[str, int, int]]:
    """The staging lists of the write tasks Spark committed: (list, rows, partition), by partition."""
    parts = [json.loads(m) for m in client.lrange(manifest_key(k, token), 0, -1)]
    return sorted(((str(key), int(rows), int(partition)) for key, rows, partition in parts), key=lambda p: p[2])


def _record_fields(ctx: RunContext, vertex: Vertex, table: str) -> list[str]:
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    return ["run_id", ctx.run_id, "pipeline", ctx.pipeline_key, "sink", vertex.ref, "table", table,
            "attempt", str(ctx.attempt), "committed_at", now]


def publish(client: Any, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
    """Publish one staged table with :data:`COMMIT_SCRIPT`; its answer as the engine's outcome."""
    import time

    k, token, parts, d = staged.commit.key, staged.token, staged.parts, staged.detail
    keys = [fence_key(k), commit_key(k), log_key(ctx.pipeline_key, vertex.ref, staged.commit.table),
            manifest_key(k, token), stages_key(k), *[p[0] for p in parts]]
    args = [str(token), d["redis_type"], str(int(d["expire"])), str(len(parts)), *[str(p[1]) for p in parts],
            f"{k}|{ctx.run_id}", repr(time.time()), *_record_fields(ctx, vertex, staged.commit.table)]
    answer = [a.decode() if isinstance(a, bytes) else str(a) for a in client.eval(COMMIT_SCRIPT, len(keys),
                                                                                    *keys, *args)]
    if answer[0] == "ok":
        return Published(Outcome.PUBLISHED, rows=int(answer[1]))
    if answer[0] == "committed":
        return Published(Outcome.ALREADY)
    if answer[0] == "superseded":
        return Published(Outcome.SUPERSEDED, newest=int(answer[1] or 0))
    if answer[0] == "mismatch":
        return Published(Outcome.MISMATCH, where=f"list {answer[1]}", found=int(answer[2]), expected=int(answer[3]))
    if answer[0] == "wrongtype":
        raise DataError(f"the key {answer[1]!r} of {staged.target} holds a {answer[2]}, not a {d['redis_type']} "
                        f"(data_type {d['data_type']}): nothing was committed", vertex.ref)
    raise RuntimeError(f"unexpected answer of the commit script: {answer}")


def retire_table(ctx: RunContext, vertex: Vertex, endpoint: Endpoint, table: str, stream: str) -> int:
    """STREAMING: delete the commit records and fences of the stream's micro-batches before this one."""
    key = log_key(ctx.pipeline_key, vertex.ref, table)
    dropped = 0
    with connected(endpoint, "cannot retire commit records") as client:
        for member in client.zrange(key, 0, -1):
            k, _, run_id = member.decode().partition("|")
            if run_id.startswith(f"{stream}:batch-") and run_id != ctx.run_id:
                client.delete(commit_key(k), fence_key(k))
                client.zrem(key, member)
                dropped += 1
    return dropped


__all__ = ["COMMIT_SCRIPT", "PREFIX", "discard", "drop_older", "newest_token", "publish", "read_manifest",
           "retire_table", "take_token"]
