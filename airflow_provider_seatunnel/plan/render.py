"""Plan renderings: the text tree (pipelines, their chains and vertices), JSON and Graphviz dot."""

from __future__ import annotations

import json
from collections.abc import Mapping

from .model import JobPlan, PipelinePlan, PlanVertex


def render_json(plan: JobPlan) -> str:
    return json.dumps(plan.to_dict(), indent=2, sort_keys=False, default=str)


def _pipeline_lines(p: PipelinePlan, restore: Mapping[str, tuple[int, float]] | None = None) -> list[str]:
    lines: list[str] = []
    by_id = {v.id: v for v in p.vertices}
    slots = p.slots
    lines.append(f"Pipeline {p.id}  {p.task_id}  ({p.name})")
    if p.split.get("reason"):
        lines.append(f"│   split: {p.split['reason']}")
    if p.shuffle:
        lines.append(f"│   shuffle: {p.shuffle['name']} × {p.shuffle['parallelism']} routes "
                     f"{len(p.shuffle['tables'])} tables to {len(p.shuffle['before'])} sinks, each at parallelism 1")
    for v in p.vertices:
        extra = f"  in {v.chain}" if v.chain and v.chain.count("->") else ""
        reads = f"  reads {', '.join(v.inputs)}" if v.inputs else ""
        out = f"  → {v.output}" if v.output else ""
        lines.append(f"├── {v.ref} {v.plugin}  parallelism={v.parallelism}{extra}{reads}{out}")
        lines.extend(_vertex_details(v))
        for note in v.notes:
            lines.append(f"│     note: {note}")
    for g in p.task_groups:
        members = " → ".join(f"{by_id[m].plugin}" for m in g.vertices)
        lines.append(f"├── TaskGroup {g.id} [{members}] × {g.parallelism}")
        for i in range(g.parallelism):
            branch = "└──" if i == g.parallelism - 1 else "├──"
            lines.append(f"│   {branch} PhysicalVertex {g.id}/{i} ({i + 1}/{g.parallelism})")
    lines.append(f"└── slots: {slots.get('with_fusion')} with fusion, {slots.get('without_fusion')} without, "
                 f"{slots.get('zeta')} as SeaTunnel's engine counts; restore: {_restore(p, restore)}")
    return lines


def _restore(p: PipelinePlan, restore: Mapping[str, tuple[int, float]] | None) -> str:
    """The restore policy: the plan's (``job.retry.*``, SeaTunnel's defaults); with ``restore`` (an
    Airflow task's log), the policy of the task that runs the pipeline, or, for the job's other
    pipelines, that they follow their own tasks' (known only to those tasks)."""
    if restore is None:
        return f"{p.retry.get('times')} retries, {p.retry.get('interval_seconds')}s apart"
    if p.task_id not in restore:
        return "as its own Airflow task's retries and retry_delay"
    times, seconds = restore[p.task_id]
    return f"{times} retries, {seconds:g}s apart (this Airflow task's retries and retry_delay)"


def _vertex_details(v: PlanVertex) -> list[str]:
    """The multi-table sink, the catalog keys carried and the checks left to the run, of a vertex."""
    out = []
    if v.multi_table:
        m = v.multi_table
        out.append(f"│     multi-table sink {m['action_name']}: {len(m['tables'])} tables "
                   f"({', '.join(m['tables'])}), {m['replicas']} writer replica(s) per table")
    for table, keys in v.catalog.items():
        pk = keys.get("primary_key")
        parts = [f"primary key {pk['name']}({', '.join(pk['columns'])})"] if pk else []
        parts += [f"{k['type']} {k['name']}({', '.join(c['column'] for c in k['columns'])})"
                  for k in keys.get("constraint_keys", ())]
        if parts:
            out.append(f"│     keys of {table}: {'; '.join(parts)}")
    for check in v.runtime_checks:
        if check.get("check") == "equal_row_types":
            out.append(f"│     run-time check: one row type on inputs {', '.join(check['datasets'])} before "
                       f"the first write ({check.get('reason', '')})")
    return out


def render_text(plan: JobPlan, restore: Mapping[str, tuple[int, float]] | None = None) -> str:
    """The text tree; ``restore`` (task id → retries, seconds apart) gives the restore policy an
    Airflow task really has where the plan's own would mislead (:func:`_restore`)."""
    n = len(plan.pipelines)
    out = [f"Job: {plan.name} ({plan.mode}, {n} pipeline{'s' if n != 1 else ''})"
           + (f"  {plan.file}" if plan.file else "")]
    for k, p in enumerate(plan.pipelines):
        last = k == n - 1
        for j, line in enumerate(_pipeline_lines(p, restore)):
            prefix = ("└── " if last else "├── ") if j == 0 else ("    " if last else "│   ")
            out.append(prefix + line)
    for w in plan.warnings:
        where = ":".join(str(w[k]) for k in ("file", "line") if w.get(k) is not None)
        who = f"{w['plugin']}: " if w.get("plugin") else ""
        out.append(f"warning: {where + ': ' if where else ''}{who}{w['message']}")
    return "\n".join(out)


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(plan: JobPlan) -> str:
    shapes = {"source": "invhouse", "transform": "box", "sink": "house"}
    out = ["digraph seatunnel_job {", "  rankdir=LR;", f"  label={_q(plan.name)};",
           "  node [fontname=Helvetica];"]
    for p in plan.pipelines:
        out.append(f"  subgraph cluster_{p.id} {{")
        out.append(f"    label={_q(f'Pipeline {p.id}: {p.task_id}')};")
        for v in p.vertices:
            label = f"{v.plugin}\\n{v.ref} p={v.parallelism}"
            out.append(f"    {_q(f'{p.id}:{v.id}')} [label={_q(label).replace(chr(92) * 2 + 'n', chr(92) + 'n')}, "
                       f"shape={shapes.get(v.kind, 'box')}];")
        for a, b in p.edges:
            out.append(f"    {_q(f'{p.id}:{a}')} -> {_q(f'{p.id}:{b}')};")
        out.append("  }")
    out.append("}")
    return "\n".join(out)


RENDERERS = {"text": render_text, "json": render_json, "dot": render_dot}
