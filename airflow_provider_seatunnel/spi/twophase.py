"""The storage verbs of an exactly-once sink: what a sink implements so the engine runs its two phases.

The engine (:mod:`..runtime.twophase`) owns the protocol of :mod:`.fencing`; a sink only says how its
store stages, publishes and discards one table's rows, and where it keeps its commit log:

* :class:`CommitId` names one table's commit of one run: (run, pipeline, sink, table); its ``key``
  (a digest) is what the store's commit log is indexed by. The engine computes it, never the sink.
* :class:`CommitLog` is the per-store log of attempt tokens and commit records (a table in the
  database for Jdbc, keys in Redis, a journal directory for files): ``take_token`` allocates the
  next token atomically and says whether the commit is recorded; ``newest_token`` reads the counter.
* :class:`StorageVerbs` is the sink: ``stage`` writes one table's rows invisibly under the attempt's
  token and returns a :class:`Staged` (typed, JSON-serialisable, like PySpark's commit message);
  ``publish`` makes it visible atomically **and only if** the token is still the newest and the
  commit not recorded yet, recording the commit in the same step, and answers with a
  :class:`Published` outcome instead of raising; ``discard`` deletes one attempt's staging. A sink
  whose attempts stage where a newer attempt can find them defines ``discard_older(ctx, vertex,
  commit, token) -> int`` (the pieces it deleted) to delete the staging of every older token. The
  rows of a table this run committed already pass once through Spark's ``noop`` sink (the row
  counters count them) and are written nowhere; a sink may define ``pass_through(ctx, vertex, df)``
  to consume them otherwise.

The engine turns the outcomes into :class:`.fencing.Superseded` / :class:`.fencing.StagingMismatch`,
so every ported sink raises them the same way.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .contract import TwoPhaseSink

if TYPE_CHECKING:
    from .contract import RunContext, Vertex


def digest(*parts: Any, length: int = 32) -> str:
    """The sha256 of the parts joined by NUL, as ``length`` hex digits (at most 64): the one
    commit-key digest."""
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:length]


@dataclass(frozen=True)
class CommitId:
    """One table's commit of one run: the unit a token fences and a commit record records."""

    run_id: str
    pipeline: str
    sink: str
    table: str

    @property
    def key(self) -> str:
        return digest(self.run_id, self.pipeline, self.sink, self.table)

    @property
    def long_key(self) -> str:
        """The same digest whole (64 hex digits): the key of stores whose commit logs were keyed so
        before the engine owned the protocol (Jdbc's), so records written then are still found."""
        return digest(self.run_id, self.pipeline, self.sink, self.table, length=64)


@dataclass(frozen=True)
class Staged:
    """What one attempt staged for one table: the commit message ``publish`` and ``discard`` take.

    ``rows`` is what the attempt wrote (``publish`` checks the staging still holds it); ``parts``
    names the staging pieces with their rows; ``detail`` holds the store's own fields (JSON values).
    ``committed`` marks a table with nothing left to publish or discard: this run had committed it already
    (nothing was staged), or the sink wrote it at once (Kafka's ``NON``/``AT_LEAST_ONCE``). ``cached``: the
    rows a store that publishes from the driver's session keeps there (a cached DataFrame; never
    serialised, gone with the session: such a store's restore stages again)."""

    commit: CommitId
    token: int
    target: str
    rows: int = 0
    parts: tuple[tuple[str, int], ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)
    committed: bool = False
    cached: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"commit": [self.commit.run_id, self.commit.pipeline, self.commit.sink, self.commit.table],
                "token": self.token, "target": self.target, "rows": self.rows,
                "parts": [list(p) for p in self.parts], "detail": dict(self.detail), "committed": self.committed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Staged:
        return cls(CommitId(*data["commit"]), int(data["token"]), str(data["target"]), int(data["rows"]),
                   tuple((str(n), int(r)) for n, r in data["parts"]), dict(data["detail"]), bool(data["committed"]))


class Outcome(enum.Enum):
    PUBLISHED = "published"
    ALREADY = "already"  # the commit record existed: an earlier attempt of this run published it
    SUPERSEDED = "superseded"  # a newer token was taken: nothing was done
    MISMATCH = "mismatch"  # the staging does not hold what was staged: nothing was done


@dataclass(frozen=True)
class Published:
    """The answer of ``publish``: ``newest`` for SUPERSEDED; for MISMATCH ``where`` (the staging piece),
    ``found`` (its rows) and ``expected`` (what the attempt wrote there; -1: the staged table's rows)."""

    outcome: Outcome
    newest: int = 0
    found: int = 0
    where: str = ""
    expected: int = -1
    rows: int = 0


@dataclass(frozen=True)
class Prepared:
    """What the engine's first phase hands its second: one :class:`Staged` per input table."""

    tables: tuple[Staged, ...]

    def to_json(self) -> dict[str, Any]:
        return {"tables": [s.to_json() for s in self.tables]}


class CommitLog(Protocol):
    """A store's log of attempt tokens and commit records (see the module's docstring)."""

    def take_token(self, commit: CommitId) -> tuple[int, bool]: ...

    def newest_token(self, commit: CommitId) -> int: ...


@runtime_checkable
class TakesTokens(Protocol):
    """A :class:`CommitLog` that also answers for many commits at once (a few statements for all of
    them): each answer as ``take_token``/``newest_token`` gives it for that commit, in order. Each
    commit keeps its own token: a newer attempt of one table supersedes that table alone."""

    def take_tokens(self, commits: Sequence[CommitId]) -> list[tuple[int, bool]]: ...

    def newest_tokens(self, commits: Sequence[CommitId]) -> list[int]: ...


@dataclass(frozen=True)
class StoreFenced:
    """The commit log of a store that fences attempts itself: its commit carries the commit's identity
    and the store refuses a second commit of it atomically (Delta's ``txnAppId``/``txnVersion``, a
    table property an Iceberg or Paimon commit checks). No token is handed out (every attempt holds
    0, none is ever superseded by one); ``committed`` answers whether the store has the commit."""

    committed: Any  # Callable[[CommitId], bool]

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        return 0, bool(self.committed(commit))

    def newest_token(self, commit: CommitId) -> int:
        return 0


@runtime_checkable
class StorageVerbs(Protocol):
    """An exactly-once sink written as storage verbs; the engine gives it ``prepare``/``commit``/``abort``.

    The engine fires the ``sink.move`` fault point once before ``publish``; a sink whose publish
    moves its pieces one by one (a claimed journal rolled forward) sets a class attribute
    ``moves_in_steps = True`` and fires it before each piece itself. ``Published.rows`` is -1
    when the store does not count rows (files moved). A sink whose staging depends on the other input
    tables (file names that carry the table only when there are several) sets ``stages_among_tables =
    True``: the engine then calls ``stage`` with a keyword ``tables``, every input table's name."""

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> CommitLog: ...

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged: ...

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published: ...

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None: ...


@runtime_checkable
class PublishesTogether(StorageVerbs, Protocol):
    """A :class:`StorageVerbs` sink whose store publishes every table of one commit in ONE atomic step
    (a Kafka transaction over all its topics, with its commit record). The engine's commit calls
    ``publish_all`` once with the staged tables not committed yet (in order) instead of ``publish`` per
    table, and turns each answer (one per table, in the same order) into its outcome as for ``publish``.
    ``sink.move`` fires once before it; a ``moves_in_steps`` sink fires it itself, per table."""

    def publish_all(self, ctx: RunContext, vertex: Vertex, staged: Sequence[Staged]) -> list[Published]: ...


@runtime_checkable
class StagesTogether(StorageVerbs, Protocol):
    """A :class:`StorageVerbs` sink that can stage several tables with ONE write (one Spark job for many
    small tables, where one job per table costs more than its rows). ``stage_key`` says which tables may
    share a write: tables with equal keys (None: the table stages alone, through ``stage``);
    ``stage_together`` stages such tables, each under its own commit and token, and answers one
    :class:`Staged` per table in the order given. The engine keeps every rule of the protocol per
    table (tokens, save modes, the older attempts' staging, the check that no newer attempt took over,
    the publish); ``discard`` of any table of a shared write may discard the whole write (the engine
    discards the others of it too, or has published them already)."""

    def stage_key(self, ctx: RunContext, vertex: Vertex, commit: CommitId, df: Any) -> Any: ...

    def stage_together(self, ctx: RunContext, vertex: Vertex,
                       items: Sequence[tuple[CommitId, int, Any]]) -> list[Staged]: ...


def is_two_phase(connector: Any) -> bool:
    """Whether ``connector`` (a connector or its class) publishes in a second phase: its own
    ``commit``/``abort`` (:class:`.contract.TwoPhaseSink`), or the engine's over its :class:`StorageVerbs`.
    The one rule: the engine's commit and abort, and the connector's ``exactly_once`` capability, both ask it."""
    if isinstance(connector, type):
        return issubclass(connector, (TwoPhaseSink, StorageVerbs))
    return isinstance(connector, (TwoPhaseSink, StorageVerbs))


@runtime_checkable
class TableSaveModes(Protocol):
    """A :class:`StorageVerbs` sink with per-table schema/data save modes (those that need the table's data or
    run in the pipeline; the job-level ``SaveModes.save_mode`` runs before any pipeline): the engine
    calls ``apply_save_modes`` for each table after taking the attempt's token (never for a table this
    run committed already) and before staging. The sink makes it once per run, sink and target (its own
    marker in its store, keyed by ``ctx.save_mode_run_id``); a data mode that deletes rows (DROP_DATA)
    is only prepared here and applied by ``publish`` in the same atomic step as the new rows."""

    def apply_save_modes(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> None: ...


__all__ = ["CommitId", "CommitLog", "Outcome", "Prepared", "Published", "PublishesTogether", "Staged",
           "StagesTogether", "StorageVerbs", "StoreFenced", "TableSaveModes", "TakesTokens", "digest", "is_two_phase"]
