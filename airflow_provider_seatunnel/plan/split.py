"""Stages 2 and 3: transform chains, then the split into pipelines (SubPlans).

Chaining follows SeaTunnel's ExecutionPlanGenerator: walking from each source, a chain
starts at every transform not yet chained and grows while its last member has exactly
one downstream vertex, a transform with exactly one upstream vertex. The split follows
its PipelineGenerator: disconnected parts are separate pipelines; a part with a vertex
of several inputs becomes one linear pipeline per source→sink path (vertices cloned,
each taking its predecessor's parallelism); any other part stays one pipeline. Ours: a
Sql transform that joins or aggregates across its inputs keeps its part whole.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from ..config.errors import ConfigError, Problem
from ..spi import SINK, SOURCE, TRANSFORM
from . import graph
from .logical import LogicalDag
from .rules import shuffle_of


@dataclass(frozen=True)
class Chain:
    """Consecutive single-input transforms fused into one action (``TransformChain[A->B]``)."""

    members: tuple[str, ...]  # logical vertex ids, upstream first
    parallelism: int

    @property
    def id(self) -> str:
        return self.members[0]


@dataclass(frozen=True)
class PipelineParts:
    """One pipeline before physical planning: which vertices, wired how, at what parallelism."""

    vertices: tuple[str, ...]  # logical vertex ids, upstream first
    edges: tuple[tuple[str, str], ...]
    parallelism: dict[str, int]
    chains: tuple[Chain, ...]
    split: bool = False  # True when cut out of a multi-input part, one path of it
    reason: str = ""  # why the part was (or was not) split
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    shuffle: Mapping[str, Any] | None = None  # SeaTunnel's multi-table shuffle between source and sinks


def chain_name(chain: Chain, dag: LogicalDag) -> str:
    """The readable name, ``TransformChain[Sql->Filter]`` (two chains may share it)."""
    return "TransformChain[" + "->".join(dag.vertex(m).plugin for m in chain.members) + "]"


def chain_action_name(chain: Chain, dag: LogicalDag) -> str:
    """SeaTunnel's name, its members' action names: ``TransformChain[Transform[0]-Sql->Transform[1]-Filter]``,
    unique in a job (``k`` in ``Transform[k]`` is the parser's take)."""
    return "TransformChain[" + "->".join(dag.vertex(m).action_name or m for m in chain.members) + "]"


def build_chains(dag: LogicalDag) -> tuple[Chain, ...]:
    """Every transform lands in exactly one chain, in walk order from the sources."""
    ids = [v.id for v in dag.vertices]
    down, up = graph.adjacency(ids, dag.edges)
    chained: set[str] = set()
    chains: list[Chain] = []
    seen: set[str] = set()
    queue = deque(v.id for v in dag.vertices if v.kind == SOURCE)
    while queue:
        vid = queue.popleft()
        if vid in seen:
            continue
        seen.add(vid)
        if dag.vertex(vid).kind == TRANSFORM and vid not in chained:
            members = [vid]
            chained.add(vid)
            cur = vid
            while len(down[cur]) == 1:
                nxt = down[cur][0]
                if dag.vertex(nxt).kind != TRANSFORM or len(up[nxt]) != 1 or nxt in chained:
                    break
                members.append(nxt)
                chained.add(nxt)
                cur = nxt
            chains.append(Chain(tuple(members), dag.vertex(vid).parallelism))
        queue.extend(down[vid])
    return tuple(chains)


def split_pipelines(dag: LogicalDag, chains: tuple[Chain, ...]) -> tuple[list[PipelineParts], list[Problem]]:
    """The job's pipelines, in SeaTunnel's order, and the warnings found on the way."""
    warnings: list[Problem] = []
    chain_of = {m: c for c in chains for m in c.members}
    # the chained graph: sources, chains (by head id) and sinks
    # in SeaTunnel's action order (transforms as its parser takes them), which orders branches and pipelines
    nodes: list[str] = []
    for v in sorted(dag.vertices, key=lambda v: v.rank):
        if v.kind != TRANSFORM or chain_of[v.id].id == v.id:
            nodes.append(v.id)

    def node_of(vid: str) -> str:
        return chain_of[vid].id if vid in chain_of else vid

    chained_edges = [(node_of(a), node_of(b)) for a, b in dag.edges if node_of(a) != node_of(b)]
    chained_edges = sorted(dict.fromkeys(chained_edges), key=lambda e: (dag.vertex(e[0]).rank, dag.vertex(e[1]).rank))
    # topological order, ties by config order: components and paths follow source order
    ordered = graph.topological_order(nodes, chained_edges)
    components = graph.weakly_connected_components(ordered, chained_edges)
    _, up = graph.adjacency(ordered, chained_edges)

    component_of = {n: i for i, comp in enumerate(components) for n in comp}
    edges_of: list[list[tuple[str, str]]] = [[] for _ in components]
    for e in chained_edges:
        edges_of[component_of[e[0]]].append(e)
    plans: list[tuple[list[str], list[tuple[str, str]], bool, str]] = []
    total = 0
    any_split = False
    for comp, comp_edges in zip(components, edges_of, strict=True):
        multi = [n for n in comp if len(up[n]) >= 2]
        blocker = _split_blocker(dag, comp, chain_of)
        if multi and blocker is None:
            count = graph.count_paths(comp, comp_edges)
            reason = (f"{_label(dag, multi[0], chain_of)} has {len(up[multi[0]])} inputs: one pipeline per "
                      "source-to-sink path")
            plans.append((comp, comp_edges, True, reason))
            total += count
            any_split = True
        else:
            reason = ""
            if multi and blocker is not None:
                reason = (f"not split: {blocker[0]} cannot run per input ({blocker[1]}), "
                          "so this part stays one pipeline")
            plans.append((comp, comp_edges, False, reason))
            total += 1
    limit = dag.settings.max_pipelines
    if total > limit:
        hint = ("multi-input vertices split a part into one pipeline per source-to-sink path; merge inputs "
                "earlier, or raise plan.max-pipelines in env") if any_split else (
                "each disconnected part of the job is a pipeline; split the job into several configs, or "
                "raise plan.max-pipelines in env")
        raise ConfigError(Problem(
            f"this job would split into {total} pipelines, more than the limit of {limit}",
            file=dag.file, plugin="env", key="plan.max-pipelines", hint=hint))
    edges_from: dict[str, list[tuple[str, str]]] = {}
    for e in dag.edges:
        edges_from.setdefault(e[0], []).append(e)

    out: list[PipelineParts] = []
    for comp, comp_edges, split, reason in plans:
        if not split:
            out.append(_whole(dag, comp, edges_from, chain_of, reason))
            continue
        for path in graph.enumerate_paths(comp, comp_edges):
            out.append(_path_pipeline(dag, path, chain_of, reason, warnings))
    out = _with_shuffle(dag, out)
    for v in dag.vertices:
        if v.per_input is not None and v.per_input.warning:
            warnings.append(Problem(v.per_input.warning, file=dag.file, line=v.line, plugin=v.label,
                                    key=v.per_input.warning_key, hint=v.per_input.hint, severity="warning"))
    return out, warnings


def _split_blocker(dag: LogicalDag, comp: list[str], chain_of: dict[str, Chain]) -> tuple[str, str] | None:
    """The first transform of the part that cannot run once per input, as ``(label, why)``: it keeps its
    part one pipeline."""
    for n in comp:
        for m in chain_of[n].members if n in chain_of else ():
            per_input = dag.vertex(m).per_input
            if per_input is not None and per_input.blocker:
                return dag.vertex(m).label, per_input.blocker
    return None


def _label(dag: LogicalDag, node: str, chain_of: dict[str, Chain]) -> str:
    if node in chain_of and len(chain_of[node].members) > 1:
        return chain_name(chain_of[node], dag)
    return dag.vertex(node).label


def _expand(nodes: list[str], chain_of: dict[str, Chain]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        out.extend(chain_of[n].members if n in chain_of else [n])
    return out


def _whole(dag: LogicalDag, comp: list[str], edges_from: dict[str, list[tuple[str, str]]],
           chain_of: dict[str, Chain], reason: str) -> PipelineParts:
    vertices = _expand(comp, chain_of)
    edges = tuple(e for vid in vertices for e in edges_from.get(vid, ()))
    chains = tuple(dict.fromkeys(chain_of[n] for n in comp if n in chain_of))
    parallelism = {}
    for vid in vertices:
        c = chain_of.get(vid)
        parallelism[vid] = c.parallelism if c else dag.vertex(vid).parallelism
    notes = _override_notes(dag, vertices, parallelism, chain_of)
    return PipelineParts(tuple(vertices), edges, parallelism, chains, split=False, reason=reason, notes=notes)


def _path_pipeline(dag: LogicalDag, path: list[str], chain_of: dict[str, Chain], reason: str,
                   warnings: list[Problem]) -> PipelineParts:
    vertices = _expand(path, chain_of)
    parallelism: dict[str, int] = {}
    prev: int | None = None
    for vid in vertices:
        parallelism[vid] = dag.vertex(vid).parallelism if prev is None else prev
        prev = parallelism[vid]
    edges = tuple(pairwise(vertices))
    chains = tuple(Chain(chain_of[n].members, parallelism[chain_of[n].members[0]]) for n in path if n in chain_of)
    notes = _override_notes(dag, vertices, parallelism, chain_of)
    return PipelineParts(tuple(vertices), edges, parallelism, chains, split=True, reason=reason, notes=notes)


def _override_notes(dag: LogicalDag, vertices: list[str], parallelism: dict[str, int],
                    chain_of: dict[str, Chain]) -> dict[str, tuple[str, ...]]:
    notes: dict[str, tuple[str, ...]] = {}
    for vid in vertices:
        v = dag.vertex(vid)
        extra = list(v.notes)
        if v.declared_parallelism is not None and v.declared_parallelism != parallelism[vid]:
            where = f" in {chain_name(chain_of[vid], dag)}" if vid in chain_of and len(
                chain_of[vid].members) > 1 else ""
            extra.append(f"{v.plugin} asked for parallelism {v.declared_parallelism}; runs at "
                         f"{parallelism[vid]}{where}")
        if v.kind == SINK:
            extra = [n for n in extra if not n.startswith("runs at its own parallelism")
                     or parallelism[vid] == v.declared_parallelism]
        if extra:
            notes[vid] = tuple(extra)
    return notes


def _with_shuffle(dag: LogicalDag, pipelines: list[PipelineParts]) -> list[PipelineParts]:
    """SeaTunnel's multi-table shuffle (:func:`.rules.shuffle_of`) in the pipeline of its source: the
    shuffle runs at the source's parallelism, and every sink behind it at 1."""
    found = shuffle_of(list(dag.vertices), list(dag.edges))
    if found is None:
        return pipelines
    source, sinks = found
    out = []
    for parts in pipelines:
        if source not in parts.vertices:
            out.append(parts)
            continue
        parallelism = dict(parts.parallelism)
        notes = dict(parts.notes)
        for vid in sinks:
            if parallelism.get(vid, 1) != 1:
                notes[vid] = (*notes.get(vid, ()), f"runs at parallelism 1 behind SeaTunnel's multi-table "
                              f"shuffle (was {parallelism[vid]})")
            parallelism[vid] = 1
        src = dag.vertex(source)
        shuffle = {"name": f"Shuffle [{src.action_name}]", "after": source, "before": list(sinks),
                   "parallelism": parallelism[source], "tables": list(src.tables or ())}
        out.append(replace(parts, parallelism=parallelism, notes=notes, shuffle=shuffle))
    return out
