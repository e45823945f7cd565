"""The engine's two-phase protocol (runtime/twophase.py) over a store kept in a dict: the fencing rules
of spi/fencing.py hold for any sink written as storage verbs. No Spark: a table's rows are a list."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from airflow_provider_seatunnel.runtime import twophase
from airflow_provider_seatunnel.spi.fencing import StagingMismatch, Superseded
from airflow_provider_seatunnel.spi.twophase import (
    CommitId,
    Outcome,
    Prepared,
    Published,
    PublishesTogether,
    Staged,
    StorageVerbs,
)


class Store:
    """A target with a commit log: tokens and commit records per commit key, staging per (key, token)."""

    def __init__(self) -> None:
        self.tokens: dict[str, int] = {}
        self.records: dict[str, int] = {}
        self.staging: dict[tuple[str, int], list[Any]] = {}
        self.published: dict[str, list[Any]] = {}

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        self.tokens[commit.key] = self.tokens.get(commit.key, 0) + 1
        return self.tokens[commit.key], commit.key in self.records

    def newest_token(self, commit: CommitId) -> int:
        return self.tokens.get(commit.key, 0)


@dataclass
class DictSink:
    store: Store
    passed: list[Any] = field(default_factory=list)
    on_stage: Any = None

    def commit_log(self, ctx: Any, vertex: Any) -> Store:
        return self.store

    def stage(self, ctx: Any, vertex: Any, commit: CommitId, token: int, df: Any) -> Staged:
        rows = list(df)
        self.store.staging[(commit.key, token)] = rows
        if self.on_stage:
            self.on_stage(commit)
        return Staged(commit, token, f"dict {commit.table}", len(rows), ((f"{commit.key}:{token}", len(rows)),))

    def publish(self, ctx: Any, vertex: Any, staged: Staged) -> Published:
        key = staged.commit.key
        if self.store.tokens[key] != staged.token:
            return Published(Outcome.SUPERSEDED, newest=self.store.tokens[key])
        if key in self.store.records:
            return Published(Outcome.ALREADY)
        rows = self.store.staging.get((key, staged.token), [])
        if len(rows) != staged.rows:
            return Published(Outcome.MISMATCH, found=len(rows), where=f"{key}:{staged.token}")
        self.store.published.setdefault(staged.commit.table, []).extend(rows)
        self.store.records[key] = staged.token
        del self.store.staging[(key, staged.token)]
        return Published(Outcome.PUBLISHED, rows=len(rows))

    def discard(self, ctx: Any, vertex: Any, staged: Staged) -> None:
        self.store.staging.pop((staged.commit.key, staged.token), None)

    def discard_older(self, ctx: Any, vertex: Any, commit: CommitId, token: int) -> int:
        older = [k for k in self.store.staging if k[0] == commit.key and k[1] < token]
        for k in older:
            del self.store.staging[k]
        return len(older)

    def pass_through(self, ctx: Any, vertex: Any, df: Any) -> None:
        self.passed.extend(df)


@dataclass
class Ctx:
    run_id: str = "run-1"
    pipeline_key: str = "p0"
    fail_at: str | None = None
    reached: list[str] = field(default_factory=list)

    def fault_point(self, point: str, vertex: Any = None) -> None:
        self.reached.append(point)
        if point == self.fail_at:
            raise RuntimeError(f"injected fault at {point}")

    def with_write_faults(self, vertex: Any, df: Any) -> Any:
        return df


@dataclass
class V:
    ref: str = "Sink[0]"


DATA = {"a": [1, 2, 3], "b": [4]}


def run(sink: DictSink, ctx: Ctx) -> Any:
    d = twophase.driver(sink)
    info = d.prepare(ctx, V(), DATA)
    try:
        d.commit(ctx, V(), info)
    except BaseException:
        d.abort(ctx, V(), info)
        raise
    return info


def test_publishes_every_table_once_and_a_rerun_of_the_run_writes_nothing():
    store = Store()
    sink = DictSink(store)
    assert isinstance(sink, StorageVerbs)
    run(sink, Ctx())
    assert store.published == DATA and store.staging == {}
    info = run(sink, Ctx())
    assert store.published == DATA  # idempotent per run id
    assert [s.committed for s in info.tables] == [True, True] and sink.passed == [1, 2, 3, 4]
    run(sink, Ctx(run_id="run-2"))
    assert store.published == {"a": [1, 2, 3, 1, 2, 3], "b": [4, 4]}


def test_a_restore_of_a_committed_table_drops_the_staging_its_committing_attempt_left():
    """The attempt that committed died before it dropped its staging: the restore finds the table
    committed, writes nothing, and drops what earlier attempts left."""
    store = Store()
    sink = DictSink(store)
    run(sink, Ctx())
    key = next(iter(store.records))
    store.staging[(key, store.tokens[key])] = [9]  # left by the attempt that committed
    info = run(sink, Ctx())
    assert info.tables[0].committed and store.staging == {} and store.published == DATA


def test_an_overtaken_attempt_raises_superseded_commits_nothing_and_its_staging_goes():
    store = Store()
    old, new = twophase.driver(DictSink(store)), twophase.driver(DictSink(store))
    old_info = old.prepare(Ctx(), V(), DATA)
    new_info = new.prepare(Ctx(), V(), DATA)  # a retry while the first attempt still runs
    assert all(k[1] == 2 for k in store.staging)  # the newer attempt discarded the older staging
    with pytest.raises(Superseded) as e:
        old.commit(Ctx(), V(), old_info)
    assert (e.value.mine, e.value.newest) == (1, 2) and store.published == {}
    new.commit(Ctx(), V(), new_info)
    assert store.published == DATA


def test_a_newer_token_taken_while_staging_fails_prepare_and_discards_the_staging():
    store = Store()
    sink = DictSink(store, on_stage=lambda commit: store.take_token(commit))
    with pytest.raises(Superseded):
        twophase.driver(sink).prepare(Ctx(), V(), DATA)
    assert store.staging == {} and store.published == {}


def test_staging_that_lost_rows_is_refused_and_discarded():
    store = Store()
    d = twophase.driver(DictSink(store))
    info = d.prepare(Ctx(), V(), DATA)
    store.staging[(info.tables[0].commit.key, 1)].pop()
    with pytest.raises(StagingMismatch, match="holds 2 rows, but this attempt wrote 3"):
        d.commit(Ctx(), V(), info)
    assert store.published == {} and (info.tables[0].commit.key, 1) not in store.staging


def test_a_kill_before_the_publish_leaves_nothing_visible_and_the_restore_publishes_once():
    store = Store()
    ctx = Ctx(fail_at="sink.move")
    with pytest.raises(RuntimeError, match=r"sink\.move"):
        run(DictSink(store), ctx)
    assert store.published == {} and store.staging == {} and ctx.reached == ["sink.move"]
    run(DictSink(store), Ctx())
    assert store.published == DATA


def test_a_failure_in_a_later_table_discards_the_earlier_tables_staging():
    store = Store()

    def boom(commit: CommitId) -> None:
        if commit.table == "b":
            raise OSError("disk full")

    with pytest.raises(OSError):
        twophase.driver(DictSink(store, on_stage=boom)).prepare(Ctx(), V(), DATA)
    assert store.staging == {}


def test_staged_is_a_serialisable_commit_message_and_the_commit_id_depends_on_every_part():
    s = Staged(CommitId("r", "p", "s", "t"), 3, "x", 5, (("part-0", 5),), {"type": "hash"})
    assert Staged.from_json(s.to_json()) == s
    keys = {CommitId(*parts).key for parts in [("r", "p", "s", "t"), ("r2", "p", "s", "t"), ("r", "p2", "s", "t"),
                                               ("r", "p", "s2", "t"), ("r", "p", "s", "t2")]}
    assert len(keys) == 5


def test_a_sink_with_its_own_prepare_and_commit_is_driven_as_it_is():
    class Own:
        def prepare(self, ctx: Any, vertex: Any, data: Any) -> Any: ...

    own = Own()
    assert twophase.driver(own) is own


@dataclass
class SavingSink(DictSink):
    saved: list[tuple[str, int]] = field(default_factory=list)

    def apply_save_modes(self, ctx: Any, vertex: Any, commit: CommitId, token: int) -> None:
        assert (commit.key, token) not in self.store.staging  # before the table is staged
        self.saved.append((commit.table, token))


def test_save_modes_run_per_table_before_staging_and_never_for_a_committed_table():
    sink = SavingSink(Store())
    run(sink, Ctx())
    assert sink.saved == [("a", 1), ("b", 1)]
    run(sink, Ctx())  # the run committed both tables: nothing to prepare
    assert sink.saved == [("a", 1), ("b", 1)]


@dataclass
class TogetherSink(DictSink):
    """A store that publishes every table of a run in one transaction with one record of the run (Kafka's
    shape): a run recorded already publishes nothing; a table whose staging lost rows fails the whole step."""

    calls: list[list[str]] = field(default_factory=list)
    moves_in_steps: bool = False

    def publish_all(self, ctx: Any, vertex: Any, staged: Any) -> list[Published]:
        self.calls.append([s.commit.table for s in staged])
        run = (ctx.run_id, ctx.pipeline_key, vertex.ref)
        if run in self.store.records:
            return [Published(Outcome.ALREADY) for _ in staged]
        found = [self.store.staging.get((s.commit.key, s.token), []) for s in staged]
        lost = [(s, len(rows)) for rows, s in zip(found, staged, strict=True) if len(rows) != s.rows]
        if lost:  # the one step is refused: every table's answer names the first staging that lost rows
            (bad, rows), *_ = lost
            return [Published(Outcome.MISMATCH, found=rows, where=bad.commit.table, expected=bad.rows) for _ in staged]
        for rows, s in zip(found, staged, strict=True):
            if self.moves_in_steps:
                ctx.fault_point("sink.move", vertex)
            self.store.published.setdefault(s.commit.table, []).extend(rows)
        self.store.records[run] = 1  # type: ignore[index]
        return [Published(Outcome.PUBLISHED, rows=len(rows)) for rows in found]


def test_a_sink_publishing_together_gets_one_call_over_every_table_and_a_rerun_publishes_nothing():
    store = Store()
    sink = TogetherSink(store)
    assert isinstance(sink, PublishesTogether) and not isinstance(DictSink(store), PublishesTogether)
    ctx = Ctx()
    run(sink, ctx)
    assert store.published == DATA and sink.calls == [["a", "b"]] and ctx.reached == ["sink.move"]
    d = twophase.driver(sink)
    info = d.prepare(Ctx(), V(), DATA)
    d.commit(Ctx(), V(), info)
    d.commit(Ctx(), V(), info)  # a commit repeated after a crash
    assert store.published == DATA and sink.calls[1:] == [["a", "b"], ["a", "b"]]
    run(sink, Ctx(run_id="run-2"))
    assert store.published == {"a": [1, 2, 3, 1, 2, 3], "b": [4, 4]}


def test_publishing_together_skips_committed_tables_and_turns_each_answer_into_its_outcome():
    store = Store()
    sink = TogetherSink(store)
    d = twophase.driver(sink)
    a, b = d.prepare(Ctx(), V(), DATA).tables
    ctx = Ctx()
    d.commit(ctx, V(), Prepared((dataclasses.replace(a, committed=True),)))
    assert sink.calls == [] and ctx.reached == []  # nothing left to publish: no call, no fault point
    store.staging[(b.commit.key, b.token)].pop()
    with pytest.raises(StagingMismatch, match="staging b holds 0 rows, but this attempt wrote 1"):
        d.commit(Ctx(), V(), Prepared((a, b)))
    assert store.published == {} and (a.commit.key, a.token) not in store.staging  # refused: staging discarded

    class Short(TogetherSink):
        def publish_all(self, ctx: Any, vertex: Any, staged: Any) -> list[Published]:
            return []

    with pytest.raises(ValueError, match="answered 0 times for 2 tables"):
        twophase.commit(Short(store), Ctx(), V(), Prepared((a, b)))


def test_a_sink_publishing_together_in_steps_fires_the_fault_point_itself_and_the_restore_publishes_once():
    store = Store()
    ctx = Ctx(fail_at="sink.move")
    with pytest.raises(RuntimeError, match=r"sink\.move"):
        run(TogetherSink(store, moves_in_steps=True), ctx)
    assert store.published == {} and store.staging == {} and ctx.reached == ["sink.move"]
    ok = Ctx()
    run(TogetherSink(store, moves_in_steps=True), ok)
    assert store.published == DATA and ok.reached == ["sink.move", "sink.move"]  # once per table, by the sink


@dataclass
class AmongSink(DictSink):
    """A sink whose staging names the table only when the input has several (file names)."""

    stages_among_tables = True
    names: list[str] = field(default_factory=list)

    def stage(self, ctx: Any, vertex: Any, commit: CommitId, token: int, df: Any,
              tables: tuple[str, ...] = ()) -> Staged:
        self.names.append(f"T_{commit.table}" if len(tables) > 1 else "T")
        return super().stage(ctx, vertex, commit, token, df)


def test_a_sink_staging_among_tables_is_given_every_input_table_and_others_are_not():
    among = AmongSink(Store())
    run(among, Ctx())
    assert among.names == ["T_a", "T_b"] and among.store.published == DATA
    one = AmongSink(Store())
    twophase.driver(one).prepare(Ctx(), V(), {"a": [1]})
    assert one.names == ["T"]
    plain = DictSink(Store())  # no keyword: its stage takes none
    run(plain, Ctx())
    assert plain.store.published == DATA


def test_an_older_attempt_committing_after_a_newer_one_of_the_run_committed_is_superseded():
    """A store answering ALREADY from its commit record before it compares tokens: the engine still tells
    the older attempt it was superseded (never a success), discards its staging and lands nothing twice."""

    class RecordFirst(DictSink):
        def publish(self, ctx: Any, vertex: Any, staged: Staged) -> Published:
            if staged.commit.key in self.store.records:
                return Published(Outcome.ALREADY)
            return super().publish(ctx, vertex, staged)

    store = Store()
    older, newer = twophase.driver(RecordFirst(store)), twophase.driver(RecordFirst(store))
    old_info = older.prepare(Ctx(), V(), DATA)
    run(RecordFirst(store), Ctx())  # the newer attempt takes the tokens and commits
    with pytest.raises(Superseded):
        older.commit(Ctx(), V(), old_info)
    assert store.published == DATA and store.staging == {}
    again = newer.prepare(Ctx(), V(), DATA)  # the newest attempt repeating its commit is not superseded
    assert all(s.committed for s in again.tables)
    newer.commit(Ctx(), V(), again)
    assert store.published == DATA


@dataclass
class GroupSink(DictSink):
    """Stages the tables of one key (the first letter of their name; ``x…``: alone) with one write: one
    shared staging entry named after the group's first table, each table's rows tagged by their table."""

    writes: list[list[str]] = field(default_factory=list)

    def stage_key(self, ctx: Any, vertex: Any, commit: CommitId, df: Any) -> Any:
        return None if commit.table.startswith("x") else commit.table[0]

    def stage_together(self, ctx: Any, vertex: Any, items: Any) -> list[Staged]:
        first, token = items[0][0], items[0][1]
        shared = [(commit.table, row) for commit, _, rows in items for row in rows]
        self.store.staging[(first.key, token)] = shared
        self.writes.append([commit.table for commit, _, _ in items])
        if self.on_stage:
            for commit, _, _ in items:
                self.on_stage(commit)
        return [Staged(commit, t, f"dict {commit.table}", len(rows), detail={"shared": [first.key, token]})
                for commit, t, rows in items]

    def publish(self, ctx: Any, vertex: Any, staged: Staged) -> Published:
        key = staged.commit.key
        if "shared" not in staged.detail:
            return super().publish(ctx, vertex, staged)
        if self.store.tokens[key] != staged.token:
            return Published(Outcome.SUPERSEDED, newest=self.store.tokens[key])
        if key in self.store.records:
            return Published(Outcome.ALREADY)
        shared = self.store.staging.get(tuple(staged.detail["shared"]), [])
        rows = [row for table, row in shared if table == staged.commit.table]
        if len(rows) != staged.rows:
            return Published(Outcome.MISMATCH, found=len(rows), where="shared")
        self.store.published.setdefault(staged.commit.table, []).extend(rows)
        self.store.records[key] = staged.token
        return Published(Outcome.PUBLISHED, rows=len(rows))

    def discard(self, ctx: Any, vertex: Any, staged: Staged) -> None:
        if "shared" in staged.detail:  # the whole shared write goes
            self.store.staging.pop(tuple(staged.detail["shared"]), None)
        super().discard(ctx, vertex, staged)


GROUPED = {"a1": [1, 2], "a2": [3], "b1": [4], "a3": [], "b2": [5, 6], "x1": [7]}


def test_a_sink_staging_together_writes_the_tables_of_one_key_at_once_each_committed_on_its_own():
    store = Store()
    sink = GroupSink(store)
    d = twophase.driver(sink)
    info = d.prepare(Ctx(), V(), GROUPED)
    assert [s.commit.table for s in info.tables] == list(GROUPED)  # input order kept
    assert sorted(sink.writes) == [["a1", "a2", "a3"], ["b1", "b2"]]  # x1 staged alone, through stage
    assert (info.tables[-1].commit.key, 1) in store.staging
    d.commit(Ctx(), V(), info)
    assert store.published == GROUPED and len(store.records) == 6
    again = twophase.driver(GroupSink(store))
    info = again.prepare(Ctx(), V(), GROUPED)  # a rerun of the run: every table committed, none written
    assert all(s.committed for s in info.tables) and again.sink.writes == []


def test_a_table_of_a_shared_write_overtaken_while_staging_fails_prepare_and_the_write_is_discarded():
    store = Store()
    sink = GroupSink(store, on_stage=lambda commit: commit.table == "b2" and store.take_token(commit))
    with pytest.raises(Superseded):
        twophase.driver(sink).prepare(Ctx(), V(), GROUPED)
    assert store.staging == {} and store.published == {}


def test_an_older_attempt_of_a_shared_write_is_superseded_per_table_and_lands_nothing_twice():
    store = Store()
    old, new = twophase.driver(GroupSink(store)), twophase.driver(GroupSink(store))
    old_info = old.prepare(Ctx(), V(), GROUPED)
    new_info = new.prepare(Ctx(), V(), GROUPED)  # a retry while the first attempt still runs
    with pytest.raises(Superseded):
        old.commit(Ctx(), V(), old_info)
    assert store.published == {}
    new.commit(Ctx(), V(), new_info)
    assert store.published == GROUPED
