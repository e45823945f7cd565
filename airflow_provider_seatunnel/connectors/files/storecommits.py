"""The S3File sink's commit (and that of the plugins on its code, :mod:`..objectstores`): a fence
object per target slot, changed only by compare-and-swap.

Under the sink's prefix ``P``, per (run, pipeline, sink, table) ``<slot>``:

* ``P/.seatunnel-commits/<slot>.json``, the **fence**: ``{"token": n, "commit": null | {"token": n,
  "moves": [[staged, final], ...], "drops": [...], "done": bool, ...}}``. Every change is a
  conditional ``PutObject`` (``If-Match`` the etag just read, ``If-None-Match: *`` to create it).
* ``P/.seatunnel-staging/<slot>/token-<n>/``: the staging of the attempt holding token ``n``.
* ``P/.seatunnel-commits/.pending/<slot hash>-<n>.json``: the final keys a commit of token ``n``
  is publishing, written before its commit record and deleted once it is done: the index readers
  consult (:func:`hidden_keys`) without reading every fence.

Rules:

* **Taking a token** (``prepare``): CAS ``token`` to ``token + 1``. A fence whose ``commit`` is
  ``done`` means the slot is committed (the attempt writes nothing); a commit not done was left
  by a killed committer: the attempt rolls it forward first and publishes nothing of its own.
* **Committing**: CAS ``{token: mine, commit: null}`` to ``{token: mine, commit: {..., done: false}}``:
  that write is the commit point. An attempt overtaken by a newer token fails the CAS (or finds
  the newer token on reading) and raises ``Superseded`` after dropping its staging. Then the
  drops (``DROP_DATA``: the prefix's earlier objects, listed in the record), the copies
  (``CopyObject`` staged -> final, idempotent), the CAS to ``done: true``, and the staging goes.
* **Rolling forward** repeats the drops and copies (both idempotent) and the CAS to ``done``.

Every record (fence, pending index, save-mode markers) is **sealed** (:mod:`...spi.journals`): an
HMAC under a key derived from the target (``bucket/prefix``) and a secret only the job holds, the
``[seatunnel] journal_key`` setting or else the sink's own secret credential (S3 secret key, server
password or private key), bound to the record's key relative to the prefix. A record read back is
unsealed before use, and every key it names (staging, finals, drops, pending index, fence) must lie
inside the prefix (staging keys inside its staging folder) before anything is copied or deleted:
otherwise :class:`...spi.journals.TamperedRecord` fails the run and nothing is acted on. Readers
hiding the finals of commits in progress skip (and log) a record that fails the same checks.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ... import settings
from ...spi.fencing import StagingMismatch
from ...spi.journals import TamperedRecord, derived_key, key_inside, seal, unseal
from ...spi.twophase import Outcome, Published, Staged
from .bucket import Conflict, Versioned
from .options import COMMITS_DIR, PENDING_DIR, STAGING_DIR, safe
from .s3options import S3Settings, log
from .store import Store

Hook = Callable[[], None]


def slot_keys(s: S3Settings, run_id: str, pipeline: str, sink_ref: str, table: str,
              save_mode_run: str) -> dict[str, str]:
    """The keys of one (run, pipeline, sink, table): fence, staging root, pending prefix, save-mode markers."""
    run, pipe = safe(run_id), safe(pipeline)
    sink, table_dir = safe(sink_ref.replace("[", "-").rstrip("]")), safe(table)
    slot = f"{run}/{pipe}/{sink}/{table_dir}"
    digest = hashlib.sha1(slot.encode()).hexdigest()[:24]
    savemode = s.key(COMMITS_DIR, safe(save_mode_run), "savemode", sink)
    return {"slot": slot, "root": s.prefix, "fence": s.key(COMMITS_DIR, slot + ".json"),
            "staging": s.key(STAGING_DIR, slot) + "/", "pending": s.key(COMMITS_DIR, PENDING_DIR, digest),
            "savemode": savemode + ".savemode", "dropped": savemode + ".dropped"}


def pending_key(keys: Mapping[str, str], token: int) -> str:
    return f"{keys['pending']}-{token}.json"


def staging_prefix(keys: Mapping[str, str], token: int) -> str:
    return f"{keys['staging']}token-{token}/"


# ---------------------------------------------------------------------------------------------
# Sealed records
# ---------------------------------------------------------------------------------------------

def journal_key(bucket: Any, root: str) -> bytes:
    """The key sealing the records of the target at ``root`` (a key prefix) of ``bucket``."""
    secret = settings.value(settings.JOURNAL_KEY) or getattr(bucket, "journal_secret", None)
    return derived_key(secret, bucket.uri(root), f"{bucket.traits.plugin} sink at {bucket.uri(root)}")


def _name(root: str, key: str) -> str:
    """A record's name in its seal: its key relative to the target's prefix."""
    return key[len(root) + 1:] if root and key.startswith(root + "/") else key


def read_record(bucket: Any, root: str, key: str) -> Versioned | None:
    """The unsealed record at ``key`` of the target at ``root``; None when absent; else
    :class:`TamperedRecord` unless its seal holds."""
    where = bucket.uri(key)
    try:
        got = bucket.read_json(key)
    except (ValueError, UnicodeDecodeError) as e:
        raise TamperedRecord(f"refusing the commit record {where}: it is not JSON ({e})") from e
    if got is None:
        return None
    return Versioned(unseal(got.value, journal_key(bucket, root), _name(root, key), where), got.etag)


def write_record(bucket: Any, root: str, key: str, value: dict[str, Any], etag: str | None) -> str:
    """Write ``value`` sealed to ``key`` (compare-and-swap as :meth:`.bucket.Bucket.write_json`)."""
    return bucket.write_json(key, seal(value, journal_key(bucket, root), _name(root, key)), etag)


def _inside(root: str, key: Any, where: str, folder: str = "") -> str:
    """``key`` if it lies inside the target at ``root`` (inside its ``folder`` when given)."""
    base = posixpath.join(root, folder) if root else folder
    if not isinstance(key, str):
        raise TamperedRecord(f"refusing the commit record {where}: it names an invalid key {key!r}")
    key_inside(base, key.rstrip("/"), where)
    return key


def _checked(bucket: Any, root: str, fence: str, commit: Mapping[str, Any]) -> None:
    """Every key the commit of ``fence`` names lies inside the target (staging in its staging folder)."""
    where = bucket.uri(fence)
    staging = _inside(root, commit.get("staging"), where, STAGING_DIR)
    _inside(root, commit.get("pending"), where, f"{COMMITS_DIR}/{PENDING_DIR}")
    moves = commit.get("moves")
    if not isinstance(moves, list) or not isinstance(commit.get("drops", []), list):
        raise TamperedRecord(f"refusing the commit record {where}: its moves or drops are not lists")
    for move in moves:
        if not isinstance(move, list) or len(move) != 2:
            raise TamperedRecord(f"refusing the commit record {where}: a move {move!r} is not [staged, final]")
        _inside(staging.rstrip("/"), move[0], where)
        _inside(root, move[1], where)
    for key in commit.get("drops", []):
        _inside(root, key, where)


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------

def take_token(bucket: Store, keys: Mapping[str, str]) -> tuple[str | None, int]:
    """("committed", 0) when the slot's commit is done; ("recovered", 0) after rolling forward a
    commit a killed attempt left; else (None, a new token, greater than any handed out before)."""
    root = keys["root"]
    while True:
        current = read_record(bucket, root, keys["fence"])
        if current is None:
            try:
                write_record(bucket, root, keys["fence"], {"token": 1, "commit": None}, None)
                return None, 1
            except Conflict:
                continue
        commit = current.value.get("commit")
        if commit:
            if commit.get("done"):
                return "committed", 0
            roll_forward(bucket, root, keys["fence"], current)
            return "recovered", 0
        token = int(current.value.get("token", 0)) + 1
        try:
            write_record(bucket, root, keys["fence"], {**current.value, "token": token}, current.etag)
        except Conflict:
            continue
        _discard_older(bucket, keys, token)
        return None, token


def newest_token(bucket: Store, keys: Mapping[str, str]) -> int:
    current = read_record(bucket, keys["root"], keys["fence"])
    return int(current.value.get("token", 0)) if current else 0


def _discard_older(bucket: Store, keys: Mapping[str, str], token: int) -> None:
    """Delete the staging and pending index of tokens older than ``token``: they can never commit."""
    stale = []
    for key, _ in bucket.objects(keys["staging"]):
        name = key[len(keys["staging"]):].split("/", 1)[0]
        number = name[len("token-"):] if name.startswith("token-") else ""
        if not number.isdigit() or int(number) < token:
            stale.append(key)
    for key, _ in bucket.objects(keys["pending"] + "-"):
        number = key[len(keys["pending"]) + 1:-len(".json")]
        if number.isdigit() and int(number) < token:
            stale.append(key)
    bucket.delete(stale)


# ---------------------------------------------------------------------------------------------
# Commit
# ---------------------------------------------------------------------------------------------

def _check_staged(bucket: Store, staged: Staged, keys: Mapping[str, str], ref: str) -> None:
    """The staging holds exactly the objects the write produced, with their sizes."""
    found = dict(bucket.objects(staging_prefix(keys, staged.token) + "data/"))
    for src, size in staged.parts:
        if found.get(src) != size:
            actual = found.get(src)
            raise StagingMismatch(f"the staged object {bucket.uri(src)} of table {staged.commit.table} is "
                                  + ("gone" if actual is None else f"{actual} bytes, staged as {size}")
                                  + ": nothing was committed", ref)


def planned_drops(bucket: Store, s: S3Settings, finals: set[str]) -> list[str]:
    """Every object under the prefix but the sink's bookkeeping and the commit's own final keys."""
    root = s.key("") if s.prefix else ""
    hidden = (root + STAGING_DIR + "/", root + COMMITS_DIR + "/")
    return sorted(k for k, _ in bucket.objects(root) if not k.startswith(hidden) and k not in finals)


def claim_drop(bucket: Store, keys: Mapping[str, str]) -> bool:
    """Whether this slot makes the drop the run's save modes left to the first commit (claimed
    once per run and sink: the slot that claimed it, or a retry of it, drops; others do not)."""
    marker = read_record(bucket, keys["root"], keys["savemode"])
    if marker is None or not marker.value.get("drop"):
        return False
    try:
        write_record(bucket, keys["root"], keys["dropped"], {"slot": keys["slot"], "at": datetime.now().isoformat()},
                     None)
        return True
    except Conflict:
        claimed = read_record(bucket, keys["root"], keys["dropped"])
        return claimed is not None and claimed.value.get("slot") == keys["slot"]


def commit_table(bucket: Store, s: S3Settings, staged: Staged, keys: Mapping[str, str], ref: str,
                 on_move: Hook, on_commit: Hook) -> tuple[Published, int]:
    """Record the commit in the fence (the commit point), then publish it; the outcome and the bytes
    committed. A token no longer the newest publishes nothing (SUPERSEDED)."""
    fence, root = keys["fence"], keys["root"]
    current = read_record(bucket, root, fence)
    mine = staged.token
    newest = int(current.value.get("token", 0)) if current else 0
    if current is None or newest != mine:
        return Published(Outcome.SUPERSEDED, newest=newest), 0
    commit = current.value.get("commit")
    if commit:  # this attempt's own commit, called again (a restore): finish it
        if int(commit.get("token", 0)) != mine:
            return Published(Outcome.SUPERSEDED, newest=newest), 0
        if commit.get("done"):
            return Published(Outcome.ALREADY, rows=-1), int(commit.get("bytes", 0))
        roll_forward(bucket, root, fence, current, on_move, on_commit)
        return Published(Outcome.PUBLISHED, rows=-1), int(commit.get("bytes", 0))
    _check_staged(bucket, staged, keys, ref)
    moves = [list(m) for m in staged.detail["moves"]]
    finals = [dst for _, dst in moves]
    drops = planned_drops(bucket, s, set(finals)) if claim_drop(bucket, keys) else []
    staging, pending = staging_prefix(keys, mine), pending_key(keys, mine)
    size = sum(n for _, n in staged.parts)
    record = {"token": mine, "moves": moves, "drops": drops, "done": False,
              "staging": staging, "pending": pending, "run_id": str(staged.commit.run_id),
              "table": staged.commit.table, "bytes": size, "at": datetime.now().isoformat()}
    write_record(bucket, root, pending, {"token": mine, "fence": fence, "finals": finals}, None)
    try:
        etag = write_record(bucket, root, fence, {"token": mine, "commit": record}, current.etag)
    except Conflict:
        return Published(Outcome.SUPERSEDED, newest=newest_token(bucket, keys)), 0
    roll_forward(bucket, root, fence, Versioned({"token": mine, "commit": record}, etag), on_move, on_commit)
    if drops:
        log.info("%s %s: dropped the %d earlier objects of %s (data_save_mode)", bucket.traits.plugin, ref,
                 len(drops), bucket.uri(s.prefix))
    return Published(Outcome.PUBLISHED, rows=-1), size


def _nothing() -> None:
    return None


def roll_forward(bucket: Store, root: str, fence: str, state: Versioned, on_move: Hook = _nothing,
                 on_commit: Hook = _nothing) -> None:
    """Finish the commit the fence records: drops, copies (each skipped when its staged object is
    gone and its final one is there), then ``done``, then the staging and pending index go. Every
    key it names is checked to lie inside the target first (:class:`TamperedRecord`: nothing done)."""
    if not isinstance(state.value.get("commit"), Mapping):
        raise TamperedRecord(f"refusing the commit record {bucket.uri(fence)}: its commit is not a record")
    commit = dict(state.value["commit"])
    _checked(bucket, root, fence, commit)
    finals = {dst for _, dst in commit["moves"]}
    bucket.delete(k for k in commit.get("drops", ()) if k not in finals)
    for src, dst in commit["moves"]:
        on_move()
        try:
            bucket.copy(src, dst)
        except Exception:
            if bucket.size(src) is not None or bucket.size(dst) is None:
                raise
    on_commit()
    try:
        write_record(bucket, root, fence, {**state.value, "commit": {**commit, "done": True}}, state.etag)
    except Conflict:  # another attempt rolled it forward meanwhile
        again = read_record(bucket, root, fence)
        if not (again and (again.value.get("commit") or {}).get("done")):
            raise
    bucket.delete_prefix(commit["staging"])
    bucket.delete([commit["pending"]])
    log.info("%s: committed %d objects of table %s (run %s) to %s", bucket.traits.plugin, len(commit["moves"]),
             commit.get("table"), commit.get("run_id"), bucket.uri())


def abort_table(bucket: Store, keys: Mapping[str, str], token: int, table: str) -> None:
    """Discard the staging of the attempt holding ``token``, unless its commit was recorded (the next
    attempt finishes it)."""
    current = read_record(bucket, keys["root"], keys["fence"])
    commit = (current.value.get("commit") if current else None) or {}
    if commit and int(commit.get("token", 0)) == int(token):
        log.info("%s: the commit of table %s was recorded; the next attempt finishes it", bucket.traits.plugin,
                 table)
        return
    bucket.delete_prefix(staging_prefix(keys, token))
    bucket.delete([pending_key(keys, token)])


# ---------------------------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------------------------

def hidden_keys(bucket: Store, prefix: str) -> set[str]:
    """The final keys of commits in progress or interrupted at the sink target holding ``prefix``
    (``prefix`` or an ancestor with a commit directory): readers skip them."""
    parts = prefix.split("/") if prefix else []
    out: set[str] = set()
    for depth in range(len(parts), -1, -1):
        root = "/".join(parts[:depth])
        pending = posixpath.join(root, COMMITS_DIR, PENDING_DIR) + "/" if root else f"{COMMITS_DIR}/{PENDING_DIR}/"
        for key, _ in bucket.objects(pending):
            try:
                out |= _pending_finals(bucket, root, key)
            except (TamperedRecord, TypeError, ValueError) as e:  # not acted on: the objects stay visible
                log.warning("%s: ignoring the pending commit record %s: %s", bucket.traits.plugin, bucket.uri(key), e)
    return out


def _pending_finals(bucket: Store, root: str, key: str) -> set[str]:
    """The finals a pending index names, when its commit is still about to happen or half done
    (both records sealed by the target at ``root``, and the fence inside its commit folder)."""
    index = read_record(bucket, root, key)
    if index is None:
        return set()
    fence = read_record(bucket, root, _inside(root, index.value.get("fence"), bucket.uri(key), COMMITS_DIR))
    token = int(index.value.get("token", 0))
    value = fence.value if fence else {}
    commit = value.get("commit") or {}
    live = ((not commit and int(value.get("token", 0)) == token)
            or (commit and int(commit.get("token", 0)) == token and not commit.get("done")))
    return set(index.value.get("finals", ())) if live else set()
