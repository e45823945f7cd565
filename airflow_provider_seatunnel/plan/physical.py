"""Stage 4: pipelines → physical plan (task groups, slots, restore policy, stable task ids).

Task groups follow the fusion model of the engine: an edge fuses when its upstream
has one downstream, its downstream one upstream, and both run at the same parallelism;
one physical vertex (one slot) per parallel instance of each group. The slot figures
name their formulas; ``zeta`` is how SeaTunnel's engine counts (one group per source
subtask, plus one coordinator per source and per committing sink).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any

from .. import __version__
from ..config.errors import ConfigError, Problem
from ..spi import SINK, SOURCE, TRANSFORM, get_connector
from ..spi.registry import secret_options
from ..spi.secrets import SECRET_OPTIONS, is_secret, public_identity
from . import graph
from .logical import LogicalDag
from .model import JobPlan, PipelinePlan, PlanVertex, TaskGroup
from .split import PipelineParts, chain_action_name, chain_name

_SLUG = re.compile(r"[^a-z0-9]+")
MAX_SLUG = 80


def _slug(text: str) -> str:
    return _SLUG.sub("_", text.lower()).strip("_") or "x"


def _identity(dag: LogicalDag, vid: str, full: bool) -> dict:
    v = dag.vertex(vid)
    connector = get_connector(v.plugin)
    if full or connector is None or not connector.identity:
        secrets = secret_options(v.plugin)
        options = {k: val for k, val in v.options.items() if not is_secret(k, secrets) and k not in ("parallelism",)}
    else:
        options = {k: v.options.get(k) for k in connector.identity if k in v.options}
    # Identifiers come from the masked identity (URL credentials masked), never from raw values.
    return {"kind": v.kind, "plugin": v.plugin.lower(), "output": v.output, "inputs": sorted(v.inputs),
            "options": public_identity(options, SECRET_OPTIONS | secret_options(v.plugin))}


def _task_id(dag: LogicalDag, parts: PipelineParts, level: int = 0) -> str:
    """The pipeline's stable id. Level 0 hashes its sources' and sinks' identities; only
    pipelines that collide go further: 1 adds the wiring of their transforms, 2 every
    option, 3 (twins identical in everything) the plugins' positions."""
    ends = [vid for vid in parts.vertices if dag.vertex(vid).kind in (SOURCE, SINK)]
    content: list[Any] = [_identity(dag, vid, False) for vid in ends]
    if level >= 1:
        content.append([(dag.vertex(v).plugin.lower(), dag.vertex(v).output, sorted(dag.vertex(v).inputs))
                        for v in parts.vertices if dag.vertex(v).kind == TRANSFORM])
    if level >= 2:
        content.append([_identity(dag, vid, True) for vid in parts.vertices])
    if level >= 3:
        content.append(list(parts.vertices))
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:8]
    sources = [dag.vertex(v) for v in parts.vertices if dag.vertex(v).kind == SOURCE]
    sinks = [dag.vertex(v) for v in parts.vertices if dag.vertex(v).kind == SINK]
    src = "_".join(_slug(s.output or s.plugin) for s in sources)
    dst = "_".join(_slug(s.plugin) for s in sinks)
    slug = f"{src}_to_{dst}"
    if len(slug) > MAX_SLUG:
        slug = slug[:MAX_SLUG].rstrip("_")
    return f"{slug}_{digest}"


def _task_groups(parts: PipelineParts) -> tuple[TaskGroup, ...]:
    down, up = graph.adjacency(list(parts.vertices), parts.edges)
    fused = [(a, b) for a, b in parts.edges
             if len(down[a]) == 1 and len(up[b]) == 1 and parts.parallelism[a] == parts.parallelism[b]]
    groups = graph.weakly_connected_components(list(parts.vertices), fused)
    return tuple(TaskGroup(f"tg{i}", tuple(g), parts.parallelism[g[0]]) for i, g in enumerate(groups, 1))


def _slots(dag: LogicalDag, parts: PipelineParts, groups: tuple[TaskGroup, ...]) -> dict:
    without = sum(parts.parallelism.values())
    with_fusion = sum(g.parallelism for g in groups)
    sources = [v for v in parts.vertices if dag.vertex(v).kind == SOURCE]
    committers = [v for v in parts.vertices if dag.vertex(v).kind == SINK and _commits(dag, v)]
    zeta = len(sources) + len(committers) + sum(parts.parallelism[s] for s in sources)
    return {
        "with_fusion": with_fusion,
        "without_fusion": without,
        "zeta": zeta,
        "formula": {
            "with_fusion": "sum of task-group parallelism (one slot per parallel instance of a fused group)",
            "without_fusion": "sum of every vertex's parallelism (one slot per parallel instance of each vertex)",
            "zeta": "sources + committing sinks + sum of source parallelism (SeaTunnel engine)",
        },
    }


def _commits(dag: LogicalDag, vid: str) -> bool:
    """Whether a sink has SeaTunnel's aggregated committer (a coordinator slot): as its connector says
    for its options (``Connector.has_committer``: its declared ``committer``; Jdbc only with ``is_exactly_once``)."""
    v = dag.vertex(vid)
    c = get_connector(v.plugin)
    return c is not None and bool(c.has_committer(v.options))


def build_physical_plan(dag: LogicalDag, pipelines: list[PipelineParts], warnings: list[Problem]) -> JobPlan:
    """Assemble the :class:`JobPlan`; raise :class:`ConfigError` on a task-id collision."""
    s = dag.settings
    ids = [_task_id(dag, parts) for parts in pipelines]
    levels = [0] * len(ids)
    for level in (1, 2, 3):
        dupes = {t for t, n in Counter(ids).items() if n > 1}
        if not dupes:
            break
        for i, parts in enumerate(pipelines):
            if ids[i] in dupes:
                ids[i], levels[i] = _task_id(dag, parts, level), level
    if len(set(ids)) != len(ids):
        raise ConfigError(Problem("two pipelines compile to one task id", file=dag.file,
                                  hint="give the plugins distinct plugin_output names"))
    out = []
    for no, (parts, task_id) in enumerate(zip(pipelines, ids, strict=True), 1):
        groups = _task_groups(parts)
        group_of = {vid: g.id for g in groups for vid in g.vertices}
        chain_of = {m: c for c in parts.chains for m in c.members}
        verts = []
        for vid in parts.vertices:
            v = dag.vertex(vid)
            live_inputs = [name for up, name in zip(v.upstream, v.inputs, strict=False) if up in parts.vertices]
            verts.append(PlanVertex(
                id=vid, ref=vid, kind=v.kind, plugin=v.plugin, parallelism=parts.parallelism[vid],
                chain=chain_name(chain_of[vid], dag) if vid in chain_of else None, task_group=group_of[vid],
                output=v.output, inputs=tuple(live_inputs), line=v.line,
                config=v.options,
                notes=parts.notes.get(vid, ()), schema=v.schema.to_json() if v.schema else None,
                action_name=v.action_name, tables=v.tables,
                chain_action_name=chain_action_name(chain_of[vid], dag) if vid in chain_of else None,
                catalog={t: k.to_json() for t, k in v.catalog.items()}, multi_table=v.multi_table,
                runtime_checks=v.runtime_checks))
        sources = [dag.vertex(x).plugin for x in parts.vertices if dag.vertex(x).kind == SOURCE]
        sinks = [dag.vertex(x).plugin for x in parts.vertices if dag.vertex(x).kind == SINK]
        out.append(PipelinePlan(
            id=no, task_id=task_id, name=f"{' + '.join(sources)} -> {' + '.join(sinks)}",
            vertices=tuple(verts), edges=tuple(parts.edges),
            chains=tuple({"name": chain_name(c, dag), "vertices": list(c.members), "parallelism": c.parallelism}
                         for c in parts.chains),
            task_groups=groups, slots=_slots(dag, parts, groups),
            retry={"times": s.retry_times, "interval_seconds": s.retry_interval_seconds},
            checkpoint={"interval_ms": s.checkpoint_interval_ms, "timeout_ms": s.checkpoint_timeout_ms},
            split={"split": parts.split, "reason": parts.reason}, shuffle=parts.shuffle))
    return JobPlan(name=s.name, mode=s.mode, file=dag.file, pipelines=tuple(out), env=dict(dag.env),
                   warnings=tuple(w.to_dict() for w in warnings),
                   compiler=f"airflow-provider-seatunnel {__version__}")

