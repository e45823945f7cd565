"""The engine side of the two-phase protocol: one implementation of the rules of :mod:`..spi.fencing`.

A sink written as :class:`..spi.twophase.StorageVerbs` gets its two phases from :func:`driver`:

``prepare`` (per input table, so multi-table inputs are one loop here): compute the
:class:`CommitId`; take the attempt token from the sink's :class:`CommitLog`; a table this run
committed already only passes its rows through (the counters count them once) and is marked
``committed``; otherwise a :class:`TableSaveModes` sink applies its save modes, the staging of older
tokens is discarded, the rows are staged under the token (the restore trials' write faults wrap the
DataFrame first), and the token is read again: a newer attempt that took over meanwhile makes this
one discard its staging and raise ``Superseded``.

A :class:`StagesTogether` sink (BATCH, and a micro-batch of several tables) gets the same steps split
in two (:func:`_prepare_grouped`): every table claimed first (token, save modes, older staging), then
the tables of one ``stage_key`` staged by one write per group, each table's token read again after it.

``commit`` (per staged table): fire ``sink.move`` before the one step that publishes (a sink whose
publish takes several steps, ``moves_in_steps``, fires it before each itself), ``publish``,
and turn its outcome into the fencing errors: SUPERSEDED discards the staging and raises
:class:`Superseded`, MISMATCH discards and raises :class:`StagingMismatch`, ALREADY is logged (an
earlier attempt of this run published it) unless the commit log holds a newer token than the
attempt's: then a newer attempt took over, and this one is :class:`Superseded` too (whatever order
the store checks the record and the token in). A :class:`PublishesTogether` sink (one store transaction
over every table) gets one ``publish_all`` over the tables instead, each answer turned so too.
``abort`` discards every table's staging, best effort.

Sinks that still implement ``prepare``/``commit``/``abort`` themselves pass through :func:`driver`
unchanged, so the executor and the streaming loop handle both kinds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from ..spi import RunContext, Vertex
from ..spi.fencing import StagingMismatch, Superseded
from ..spi.together import StagesEveryRow, StagesShared, TableGroup
from ..spi.twophase import (
    CommitId,
    Outcome,
    Prepared,
    Published,
    PublishesTogether,
    Staged,
    StagesTogether,
    StorageVerbs,
    TableSaveModes,
    TakesTokens,
    is_two_phase,
)
from . import counting, tables, together

log = logging.getLogger("seatunnel.runtime")


def commit_id(ctx: RunContext, vertex: Vertex, table: str) -> CommitId:
    return CommitId(ctx.run_id, ctx.pipeline_key, vertex.ref, table)


def claim_table(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, table: str, df: Any,
                counted: Callable[[], Any] | None = None) -> Staged:
    """Phase one's start for one table: its commit id and attempt token; a table this run committed
    already only passes its rows through (``committed``; ``counted``: the DataFrame to pass, when not
    ``df``); otherwise the save modes, then the staging of older tokens discarded. The answer carries
    the token (nothing staged yet unless ``committed``)."""
    cid = commit_id(ctx, vertex, table)
    token, committed = sink.commit_log(ctx, vertex).take_token(cid)
    return claimed(sink, ctx, vertex, cid, (token, committed), df, counted)


def claimed(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, cid: CommitId, taken: tuple[int, bool], df: Any,
            counted: Callable[[], Any] | None = None) -> Staged:
    """:func:`claim_table` once the token was taken (``taken``: the token and whether the log has the
    commit's record)."""
    token, committed = taken
    table = cid.table
    if committed:
        log.info("%s: table %s of run %s is committed already; nothing to write", vertex.ref, table, ctx.run_id)
        getattr(sink, "pass_through", _count_only)(ctx, vertex, df if counted is None else counted())
        counting.settle(getattr(ctx, "spark", None))
        try:  # the attempt that committed may have died before it dropped its staging
            _discard_older(sink, ctx, vertex, cid, token)
        except Exception as e:  # bookkeeping only: the table is committed
            log.warning("%s: could not discard the staging of earlier attempts: %s", vertex.ref, e)
        return Staged(cid, token, table, committed=True)
    if isinstance(sink, TableSaveModes):
        sink.apply_save_modes(ctx, vertex, cid, token)
    _discard_older(sink, ctx, vertex, cid, token)
    return Staged(cid, token, table)


def _discard_older(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, cid: CommitId, token: int) -> None:
    """The staging of attempts older than ``token`` dropped, for sinks that keep it per attempt."""
    older = getattr(sink, "discard_older", None)
    dropped = older(ctx, vertex, cid, token) if older is not None else 0
    if dropped:
        log.info("%s: discarded %d staging piece(s) of earlier attempts", vertex.ref, dropped)


def prepare_table(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, table: str, df: Any,
                  tables: tuple[str, ...] = ()) -> Staged:
    """Phase one for one table (see the module's docstring); ``tables``: every input table of the
    sink (a sink with ``stages_among_tables`` is given them, see :class:`..spi.twophase.StorageVerbs`)."""
    claim = claim_table(sink, ctx, vertex, table, df)
    if claim.committed:
        return claim
    return stage_claimed(sink, ctx, vertex, claim, df, tables)


def stage_claimed(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, claim: Staged, df: Any,
                  tables: tuple[str, ...] = ()) -> Staged:
    """Phase one's write for one claimed table: staged under its token, then the token read again."""
    cid, token, table = claim.commit, claim.token, claim.commit.table
    staged: Staged | None = None
    try:
        rows = ctx.with_write_faults(vertex, df)
        staged = (sink.stage(ctx, vertex, cid, token, rows, tables=tables or (table,))  # type: ignore[call-arg]
                  if getattr(sink, "stages_among_tables", False) else sink.stage(ctx, vertex, cid, token, rows))
        counting.settle(getattr(ctx, "spark", None))  # its counts kept before later tables push them out
        _not_superseded(sink, ctx, vertex, staged)
    except BaseException:
        _discard_quietly(sink, ctx, vertex, staged or Staged(cid, token, table))
        raise
    _staged_note(vertex, staged)
    return staged


def _not_superseded(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    """Superseded when a newer attempt took the table's token while this one staged."""
    newest = sink.commit_log(ctx, vertex).newest_token(staged.commit)
    if newest > staged.token:
        raise Superseded(staged.target, staged.token, newest, vertex.ref)


def _none_superseded(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, staged: list[Staged]) -> None:
    """:func:`_not_superseded` of every table of one write: their tokens read at once where the commit
    log can (:class:`..spi.twophase.TakesTokens`)."""
    commit_log = sink.commit_log(ctx, vertex)
    if not isinstance(commit_log, TakesTokens) or len(staged) < 2:
        for one in staged:
            _not_superseded(sink, ctx, vertex, one)
        return
    for one, newest in zip(staged, commit_log.newest_tokens([s.commit for s in staged]), strict=True):
        if newest > one.token:
            raise Superseded(one.target, one.token, newest, vertex.ref)


def _staged_note(vertex: Vertex, staged: Staged) -> None:
    log.info("%s: staged %s for %s (attempt token %d)", vertex.ref,
             f"{staged.rows} rows" if staged.rows >= 0 else "the rows", staged.target, staged.token)


def _count_only(ctx: RunContext, vertex: Vertex, df: Any) -> None:
    """The rows of a table committed already: one pass through Spark's ``noop`` sink, where the row
    counters count them; written nowhere."""
    df.write.format("noop").mode("overwrite").save()


def prepare(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, data: Any) -> Prepared:
    """Phase one over every input table, several at once (:mod:`.tables`; a STREAMING micro-batch's
    tables too); what was staged is discarded when a table fails. The tables keep their input order."""
    names = tuple(data)
    done: list[Staged] = []
    try:
        workers = tables.concurrency(ctx, vertex, len(names), sink)
        if isinstance(sink, StagesTogether) and len(names) > 1:
            _prepare_grouped(sink, ctx, vertex, data, workers, done)
        else:
            work = [(table, partial(prepare_table, sink, ctx, vertex, table, df, names)) for table, df in data.items()]
            tables.each_table(ctx.spark if workers > 1 else None, work, workers, done.append, _failing(ctx, vertex))
    except BaseException:
        abort(sink, ctx, vertex, Prepared(tuple(done)))
        raise
    order = {table: i for i, table in enumerate(names)}
    return Prepared(tuple(sorted(done, key=lambda staged: order[staged.commit.table])))


#: at most this many tables share one write of a :class:`StagesTogether` sink
MAX_GROUP = 64


def _prepare_grouped(sink: StagesTogether, ctx: RunContext, vertex: Vertex, data: Any, workers: int,
                     done: list[Staged]) -> None:
    """Phase one of a sink that stages several tables with one write (BATCH): every table claimed
    (token, save modes, older staging; the first alone, the others ``workers`` at once), then the
    claimed tables of one ``stage_key`` staged in groups of at most :data:`MAX_GROUP` (as many groups
    as keep the pool busy), the groups ``workers`` at once. A table without a key stages alone."""
    spark = ctx.spark if workers > 1 else None
    fail = _failing(ctx, vertex)
    claims: list[Staged] = []
    shared = sink if isinstance(sink, StagesShared) else None
    paired = data if isinstance(data, together.Paired) and shared is not None else None
    def counted(t: str) -> Callable[[], Any] | None:
        return partial(paired.counted, t) if paired and paired.grouped(t) else None

    commit_log = sink.commit_log(ctx, vertex)
    if isinstance(commit_log, TakesTokens):  # every table's token at once, then the rest per table
        cids = [commit_id(ctx, vertex, t) for t in data]
        taken = commit_log.take_tokens(cids)
        claiming = [(cid.table, partial(claimed, sink, ctx, vertex, cid, one, data[cid.table], counted(cid.table)))
                    for cid, one in zip(cids, taken, strict=True)]
    else:
        claiming = [(t, partial(claim_table, sink, ctx, vertex, t, df, counted(t))) for t, df in data.items()]
    tables.each_table(spark, claiming, workers, claims.append, fail)
    work: list[tuple[str, Callable[[], list[Staged]]]] = []
    if paired is not None and shared is not None:
        work, claims, data = _from_groups(shared, ctx, vertex, paired, claims)
    by_key: dict[Any, list[Staged]] = {}
    alone: list[Staged] = []
    for claim in claims:
        if claim.committed:
            done.append(claim)
            continue
        key = sink.stage_key(ctx, vertex, claim.commit, data[claim.commit.table])
        (alone if key is None else by_key.setdefault(key, [])).append(claim)
    groups = [[claim] for claim in alone]
    for members in by_key.values():
        members.sort(key=lambda c: c.commit.table)
        size = max(1, min(MAX_GROUP, -(-len(members) // max(1, workers))))
        groups += [members[i:i + size] for i in range(0, len(members), size)]
    work += [(_group_label(group), partial(_stage_group, sink, ctx, vertex, group, data)) for group in groups]
    tables.each_table(spark, work, workers, done.extend, fail, first_alone=False)


def _from_groups(sink: StagesShared, ctx: RunContext, vertex: Vertex, data: together.Paired,
                 claims: list[Staged]) -> tuple[list[tuple[str, Callable[[], list[Staged]]]], list[Staged], dict]:
    """The claimed tables of the source's groups staged from their group's DataFrame: one write per
    group and ``stage_key``; the work, the claims left (committed ones, tables of no group, and those
    without a key: staged as any table, from their own DataFrames counted on their own), and the
    tables' DataFrames for them."""
    by_table = {c.commit.table: c for c in claims if not c.committed}
    taken: set[str] = set()
    frames = dict(data)
    work: list[tuple[str, Callable[[], list[Staged]]]] = []
    for group in data.groups:
        by_key: dict[Any, list[Staged]] = {}
        for table in group.tables:
            claim = by_table.get(table)
            if claim is None:
                continue
            key = sink.stage_key(ctx, vertex, claim.commit, data[table])
            if key is None:
                frames[table] = data.counted(table)
            else:
                by_key.setdefault(key, []).append(claim)
        for members in by_key.values():
            taken.update(c.commit.table for c in members)
            work.append((_group_label(members), partial(_stage_shared, sink, ctx, vertex, group, members, data)))
    return work, [c for c in claims if c.commit.table not in taken], frames


def _stage_shared(sink: StagesShared, ctx: RunContext, vertex: Vertex, group: TableGroup, members: list[Staged],
                  data: together.Paired) -> list[Staged]:
    """One write of ``members``' rows from their group's DataFrame, then each table's token read again;
    the write discarded when any of it fails or was superseded."""
    numbers = {c.commit.table: group.number(c.commit.table) for c in members}
    items = [(c.commit, c.token, data[c.commit.table]) for c in members]
    staged: list[Staged] = []
    try:
        # a sink staging every row it is given counts the tables: no aggregate per table for every row
        every = isinstance(sink, StagesEveryRow) and sink.stages_every_row(ctx, vertex, items, group,
                                                                            list(numbers.values()))
        frame = ctx.with_write_faults(vertex, together.group_frame(data, group, numbers, observed=not every))
        staged = sink.stage_shared(ctx, vertex, items, replace(group, frame=frame), list(numbers.values()))
        if len(staged) != len(members):
            raise ValueError(f"{vertex.ref}: stage_shared answered {len(staged)} times for {len(members)} tables")
        _none_superseded(sink, ctx, vertex, staged)
        if every:
            data.counts.record({one.commit.table: one.rows for one in staged})
    except BaseException:
        for one in staged or members:
            _discard_quietly(sink, ctx, vertex, one)
        raise
    log.info("%s: staged %d tables with one write (read together%s)", vertex.ref, len(staged),
             "; every row staged, counted in the staging" if every else "")
    for one in staged:
        _staged_note(vertex, one)
    return staged


def _group_label(group: list[Staged], shown: int = 8) -> str:
    """The tables of a group as an error names them (the first ``shown``)."""
    names = [c.commit.table for c in group]
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _stage_group(sink: StagesTogether, ctx: RunContext, vertex: Vertex, group: list[Staged],
                 data: Any) -> list[Staged]:
    """One group's write (a group of one: ``stage``), then each table's token read again; the write
    discarded when any of it fails or was superseded."""
    if len(group) == 1:
        return [stage_claimed(sink, ctx, vertex, group[0], data[group[0].commit.table])]
    staged: list[Staged] = []
    try:
        items = [(c.commit, c.token, ctx.with_write_faults(vertex, data[c.commit.table])) for c in group]
        staged = sink.stage_together(ctx, vertex, items)
        if len(staged) != len(group):
            raise ValueError(f"{vertex.ref}: stage_together answered {len(staged)} times for {len(group)} tables")
        counting.settle(getattr(ctx, "spark", None))  # the tables' counts kept before later writes push them out
        _none_superseded(sink, ctx, vertex, staged)
    except BaseException:
        for one in staged or group:
            _discard_quietly(sink, ctx, vertex, one)
        raise
    log.info("%s: staged %d tables with one write", vertex.ref, len(staged))
    for one in staged:
        _staged_note(vertex, one)
    return staged


def publish(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    """Phase two for one table: the fault point, the conditional publish, and what its outcome means."""
    if staged.committed:
        return
    if not getattr(sink, "moves_in_steps", False):
        ctx.fault_point("sink.move", vertex)  # before the one step that publishes the table
    _settle(sink, ctx, vertex, staged, sink.publish(ctx, vertex, staged))


def _settle(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, staged: Staged, answer: Published) -> None:
    """What a publish's answer for one table means: logged, or its staging discarded and the fencing error."""
    if answer.outcome is Outcome.PUBLISHED:
        rows = f"{answer.rows} rows" if answer.rows >= 0 else "the staged data"
        log.info("%s: committed %s into %s (attempt token %d)", vertex.ref, rows, staged.target, staged.token)
    elif answer.outcome is Outcome.ALREADY:
        newest = sink.commit_log(ctx, vertex).newest_token(staged.commit)
        if newest > staged.token:  # a newer attempt of the run took over: this one is superseded, not done
            _discard_quietly(sink, ctx, vertex, staged)
            raise Superseded(staged.target, staged.token, newest, vertex.ref)
        log.info("%s: %s was already committed by this run", vertex.ref, staged.target)
    else:
        _discard_quietly(sink, ctx, vertex, staged)
        if answer.outcome is Outcome.SUPERSEDED:
            raise Superseded(staged.target, staged.token, answer.newest, vertex.ref)
        expected = staged.rows if answer.expected < 0 else answer.expected
        raise StagingMismatch(f"the staging {answer.where} holds {answer.found} rows, but this attempt wrote "
                              f"{expected}: nothing was committed", vertex.ref)


def commit(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, prepared: Prepared) -> None:
    """Phase two over every staged table, each its own publish; several at once in BATCH (:mod:`.tables`)."""
    if isinstance(sink, PublishesTogether):
        publish_together(sink, ctx, vertex, prepared)
        return
    work = [(staged.commit.table, partial(publish, sink, ctx, vertex, staged)) for staged in prepared.tables]
    workers = tables.concurrency(ctx, vertex, len(work), sink)
    tables.each_table(ctx.spark if workers > 1 else None, work, workers, _ignore, _failing(ctx, vertex))


def _failing(ctx: RunContext, vertex: Vertex) -> tables.Fail | None:
    """The run context's own conversion of an error (what the executor reports), when it has one."""
    fail = getattr(ctx, "fail", None)
    return (lambda error: fail(vertex, error)) if fail is not None else None


def _ignore(_: object) -> None:
    """A publish answers nothing: its outcome is logged or raised."""


def publish_together(sink: PublishesTogether, ctx: RunContext, vertex: Vertex, prepared: Prepared) -> None:
    """Phase two of a sink whose store publishes every table in one step: the fault point, one
    ``publish_all`` over the tables not committed yet, then each table's answer as :func:`publish`'s."""
    pending = [staged for staged in prepared.tables if not staged.committed]
    if not pending:
        return
    if not getattr(sink, "moves_in_steps", False):
        ctx.fault_point("sink.move", vertex)  # before the one step that publishes every table
    answers = sink.publish_all(ctx, vertex, pending)
    if len(answers) != len(pending):
        raise ValueError(f"{vertex.ref}: publish_all answered {len(answers)} times for {len(pending)} tables")
    for staged, answer in zip(pending, answers, strict=True):
        _settle(sink, ctx, vertex, staged, answer)


def abort(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, prepared: Prepared) -> None:
    for staged in prepared.tables:
        if not staged.committed:
            _discard_quietly(sink, ctx, vertex, staged)


def _discard_quietly(sink: StorageVerbs, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
    try:
        sink.discard(ctx, vertex, staged)
    except Exception as e:  # a newer attempt discards it too
        log.warning("%s: could not discard the staging of attempt token %d: %s", vertex.ref, staged.token, e)


class _Driven:
    """A :class:`StorageVerbs` sink seen as a two-phase sink: the engine's phases over its verbs."""

    def __init__(self, sink: StorageVerbs) -> None:
        self.sink = sink

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Any) -> Prepared:
        return prepare(self.sink, ctx, vertex, data)

    def commit(self, ctx: RunContext, vertex: Vertex, info: Prepared) -> None:
        commit(self.sink, ctx, vertex, info)

    def abort(self, ctx: RunContext, vertex: Vertex, info: Prepared) -> None:
        abort(self.sink, ctx, vertex, info)


def driver(connector: Any) -> Any:
    """The object whose ``prepare``/``commit``/``abort`` run ``connector``'s two phases: the engine's
    for a :class:`StorageVerbs` sink, the connector itself otherwise."""
    return _Driven(connector) if isinstance(connector, StorageVerbs) else connector


__all__ = ["abort", "commit", "commit_id", "driver", "is_two_phase", "prepare", "prepare_table", "publish",
           "publish_together"]
