"""Graph primitives used by the planner: pure functions over nodes and edges.

Nodes are hashable ids kept in a given order; edges are ``(upstream, downstream)``
pairs. Every function is deterministic: results follow the node order given.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

N = TypeVar("N", bound=Hashable)


def adjacency(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> tuple[dict[N, list[N]], dict[N, list[N]]]:
    """``(downstream, upstream)`` lists per node, in edge order."""
    down: dict[N, list[N]] = {n: [] for n in nodes}
    up: dict[N, list[N]] = {n: [] for n in nodes}
    for a, b in edges:
        down[a].append(b)
        up[b].append(a)
    return down, up


def find_cycle(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> list[N] | None:
    """A cycle as a node path ``[a, b, ..., a]``, or None if the graph is acyclic."""
    down, _ = adjacency(nodes, edges)
    state: dict[N, int] = dict.fromkeys(nodes, 0)  # 0 new, 1 on stack, 2 done
    for start in nodes:
        if state[start]:
            continue
        stack: list[tuple[N, int]] = [(start, 0)]
        path: list[N] = [start]
        state[start] = 1
        while stack:
            node, i = stack[-1]
            if i < len(down[node]):
                stack[-1] = (node, i + 1)
                nxt = down[node][i]
                if state[nxt] == 1:
                    return [*path[path.index(nxt):], nxt]
                if state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    path.append(nxt)
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return None


def topological_order(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> list[N]:
    """Nodes upstream-first, ties broken by the given node order (Kahn). Assumes a DAG."""
    down, up = adjacency(nodes, edges)
    rank = {n: i for i, n in enumerate(nodes)}
    indegree = {n: len(up[n]) for n in nodes}
    import heapq

    ready = [(rank[n], n) for n in nodes if indegree[n] == 0]
    heapq.heapify(ready)
    out: list[N] = []
    while ready:
        _, n = heapq.heappop(ready)
        out.append(n)
        for m in down[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                heapq.heappush(ready, (rank[m], m))
    return out


def weakly_connected_components(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> list[list[N]]:
    """Components, each listing its nodes in the given order; ordered by first node."""
    parent: dict[N, N] = {n: n for n in nodes}

    def root(n: N) -> N:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[rb] = ra
    groups: dict[N, list[N]] = {}
    for n in nodes:
        groups.setdefault(root(n), []).append(n)
    return list(groups.values())


def count_paths(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> int:
    """Number of complete paths from a node without inputs to a node without outputs."""
    edges = list(edges)
    down, up = adjacency(nodes, edges)
    paths: dict[N, int] = {}
    for n in topological_order(nodes, edges):
        paths[n] = sum(paths[p] for p in up[n]) if up[n] else 1
    return sum(paths[n] for n in nodes if not down[n])


def enumerate_paths(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> list[list[N]]:
    """Every root-to-leaf path, depth first, roots and branches in the given order."""
    down, up = adjacency(nodes, edges)
    out: list[list[N]] = []
    for start in nodes:
        if up[start]:
            continue
        stack: list[list[N]] = [[start]]
        while stack:
            path = stack.pop()
            nxt = down[path[-1]]
            if not nxt:
                out.append(path)
            for m in reversed(nxt):
                stack.append([*path, m])
    return out
