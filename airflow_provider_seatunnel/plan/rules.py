"""SeaTunnel's engine rules beyond the wiring: action order and names, tables and their catalog keys,
multi-table sources and sinks, equal row types, the multi-table shuffle (docs/planning.md).

* **Order.** SeaTunnel numbers its actions sources first (file order), then transforms in the order
  its parser takes them from a queue (a transform none of whose inputs exists yet goes to the back,
  and each take counts), then sinks (file order). Edges, branches and so pipeline numbers follow it.
* **Names.** ``Source[i]-<plugin>``, ``Transform[k]-<plugin>`` (k counts the queue's takes),
  ``Sink[i]-<plugin>-<table>`` (``-MultiTableSink`` behind a multi-table source): unique in a pipeline.
* **Tables and keys.** A source's tables come from its connector (:class:`~..spi.SourceTables`); a
  transform and a sink get their first input's. A table's primary and constraint keys pass a
  transform that keeps their columns (by name, in its known output schema), and reach the sinks
  (a sink: the keys of every input's tables, the first input's first).
* **Multi-table.** A sink reading one multi-table input is one sink per table behind one multi-table
  sink, at its input's parallelism, with ``multi_table_sink_replica`` writers per table; a sink that
  mixes a multi-table input with other inputs is an error (as in SeaTunnel). A transform on a
  multi-table source runs per table here (as in SeaTunnel 2.3.9+); the plan warns that the pinned
  SeaTunnel refuses the job (an error under strict, as every portability problem: :mod:`..spi.portability`).
* **Equal row types.** A transform that unions its inputs (every multi-input one but a combining Sql)
  and a multi-input sink need one row type (field names, types and order) on every input: an error
  when the schemas are known here, else a check the runtime runs before the first write
  (``runtime_checks``).
* **Shuffle.** A job whose only source produces several tables and feeds several vertices, all sinks,
  gets SeaTunnel's shuffle between them: the sinks run at parallelism 1.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config.errors import Problem
from ..config.loader import JobConfig, PluginConfig
from ..config.options import as_int
from ..spi import SINK, SOURCE, TRANSFORM, PerInputSplit, SourceTables, get_connector, portability
from ..spi.schema import Schema, TableKeys

#: the code of a plan warning for a job this package runs but the pinned SeaTunnel refuses
SEATUNNEL_REFUSES = "seatunnel-refuses"
EQUAL_ROW_TYPES = "equal_row_types"


@dataclass(frozen=True)
class EngineFacts:
    """What the engine rules decide, by plugin ref."""

    rank: dict[str, int]  # SeaTunnel's action order
    action_names: dict[str, str]
    tables: dict[str, tuple[str, ...] | None]  # table ids produced (sink: received); None: unknown here
    catalog: dict[str, dict[str, TableKeys]]  # table id -> keys, of the output (sink: of its input)
    multi_table: dict[str, dict[str, Any]] = field(default_factory=dict)  # sink ref -> its multi-table sink
    runtime_checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def seatunnel_order(job: JobConfig, upstream: Mapping[str, list[str]]) -> tuple[dict[str, int], dict[str, int]]:
    """``(rank, takes)``: each plugin's place in SeaTunnel's action order, and each transform's queue
    take (the ``k`` of ``Transform[k]``). A transform is taken once any of its producers is registered,
    or when it is the last one queued."""
    rank: dict[str, int] = {}
    takes: dict[str, int] = {}
    for s in job.sources:
        rank[s.ref] = len(rank)
    registered = {s.ref for s in job.sources}
    queue = deque(job.transforms)
    take = 0
    while queue and take <= (len(job.transforms) + 1) ** 2:
        t = queue.popleft()
        k, take = take, take + 1
        ups = upstream.get(t.ref, [])
        if ups and not any(u in registered for u in ups) and queue:
            queue.append(t)
            continue
        rank[t.ref], takes[t.ref] = len(rank), k
        registered.add(t.ref)
    for t in queue:  # not reached on an acyclic job
        rank[t.ref], takes[t.ref] = len(rank), take
    for s in job.sinks:
        rank[s.ref] = len(rank)
    return rank, takes


def _source_tables(plugin: PluginConfig) -> dict[str, TableKeys] | None:
    connector = get_connector(plugin.name)
    if isinstance(connector, SourceTables) and SOURCE in connector.capabilities.sections:
        found = connector.tables(plugin)
        return dict(found) if found else None
    return None


def _tables_and_keys(job: JobConfig, order: list[str], by_ref: Mapping[str, PluginConfig],
                     upstream: Mapping[str, list[str]], schemas: Mapping[str, Schema | None],
                     ) -> tuple[dict[str, tuple[str, ...] | None], dict[str, dict[str, TableKeys]]]:
    """Each plugin's tables and their keys, in topological ``order``."""
    tables: dict[str, tuple[str, ...] | None] = {}
    catalog: dict[str, dict[str, TableKeys]] = {}
    for ref in order:
        plugin = by_ref[ref]
        if plugin.section == SOURCE:
            found = _source_tables(plugin)
            tables[ref] = tuple(found) if found else None
            catalog[ref] = {t: k for t, k in (found or {}).items() if not k.empty}
            continue
        first = upstream[ref][0] if upstream[ref] else None
        tables[ref] = tables.get(first) if first else None
        keys = catalog.get(first, {}) if first else {}
        if plugin.section == TRANSFORM:
            out = schemas.get(ref)
            keys = {t: kept for t, k in keys.items()
                    if out is not None and not (kept := k.kept_by(out.names)).empty}
        else:  # a sink: every input's tables (a clone of a split sink gets one input's)
            keys = {}
            for u in reversed(upstream[ref]):
                keys.update(catalog.get(u, {}))
        catalog[ref] = keys
    return tables, catalog


def _action_names(job: JobConfig, takes: Mapping[str, int], tables: Mapping[str, tuple[str, ...] | None],
                  multi: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    names: dict[str, str] = {}
    for i, s in enumerate(job.sources):
        names[s.ref] = f"Source[{i}]-{s.name}"
    for t in job.transforms:
        names[t.ref] = f"Transform[{takes.get(t.ref, t.index)}]-{t.name}"
    for i, s in enumerate(job.sinks):
        if s.ref in multi:
            names[s.ref] = multi[s.ref]["action_name"]
            continue
        received = tables.get(s.ref)
        names[s.ref] = f"Sink[{i}]-{s.name}" + (f"-{received[0]}" if received else "")
    return names


def _multi_table(job: JobConfig, by_ref: Mapping[str, PluginConfig], upstream: Mapping[str, list[str]],
                 tables: Mapping[str, tuple[str, ...] | None]) -> tuple[dict[str, dict[str, Any]], list[Problem]]:
    """The multi-table sinks, and the multi-table rules' problems: a transform on a multi-table source
    (a warning: it runs here), a sink mixing a multi-table input with others (an error)."""
    found: list[Problem] = []
    multi: dict[str, dict[str, Any]] = {}

    def is_multi(ref: str) -> bool:
        return len(tables.get(ref) or ()) > 1

    for plugin in job.transforms:
        sources = [u for u in upstream[plugin.ref] if by_ref[u].section == SOURCE and is_multi(u)]
        if sources:
            source = by_ref[sources[0]]
            found.append(job.problem(
                f"reads the multi-table source {source.label} ({len(tables[source.ref] or ())} tables): it runs "
                "once per table here, but SeaTunnel before 2.3.9 refuses a transform on a multi-table source",
                plugin, key="plugin_input", severity=portability.severity(), code=SEATUNNEL_REFUSES,
                hint="to run on SeaTunnel before 2.3.9 too, read the tables with one source each"))
    for index, plugin in enumerate(job.sinks):
        ups = upstream[plugin.ref]
        multis = [u for u in ups if is_multi(u)]
        if multis and len(ups) > 1:
            names = ", ".join(f"{by_ref[u].label} ({len(tables[u] or ())} tables)" for u in multis)
            found.append(job.problem(
                f"writes a multi-table input ({names}) together with other inputs: SeaTunnel refuses it, and "
                "tables of different sources could land in one target", plugin, key="plugin_input",
                hint="give the multi-table source a sink of its own"))
        elif multis:
            received = tables[multis[0]] or ()
            replicas = as_int(plugin.get("multi_table_sink_replica", 1)) or 1
            multi[plugin.ref] = {
                "tables": list(received), "replicas": replicas,
                "action_name": f"Sink[{index}]-{plugin.name}-MultiTableSink",
                "table_sinks": [f"Sink[{index}]-{plugin.name}-{t}" for t in received]}
    return multi, found


def _unions(plugin: PluginConfig, inputs_read: list[str]) -> bool:
    """Whether a plugin with several inputs unions them (every multi-input transform or sink but a
    transform that combines rows across its inputs, a join)."""
    connector = get_connector(plugin.name)
    if plugin.section == TRANSFORM and isinstance(connector, PerInputSplit):
        return connector.per_input(plugin, tuple(inputs_read)).blocker is None
    return True


def _row_types(job: JobConfig, by_ref: Mapping[str, PluginConfig], upstream: Mapping[str, list[str]],
               inputs_read: Mapping[str, list[str]], schemas: Mapping[str, Schema | None],
               tables: Mapping[str, tuple[str, ...] | None]) -> tuple[dict[str, list[dict[str, Any]]], list[Problem]]:
    """Equal row types on every input of a union: errors where the schemas are known, else a check the
    runtime runs before the first write."""
    found: list[Problem] = []
    checks: dict[str, list[dict[str, Any]]] = {}
    for plugin in [*job.transforms, *job.sinks]:
        ups = upstream[plugin.ref]
        if len(ups) < 2 or not _unions(plugin, inputs_read[plugin.ref]):
            continue
        if any(len(tables.get(u) or ()) > 1 for u in ups):
            continue  # a multi-table input mixed with others: an error of its own
        known = [(u, schemas.get(u)) for u in ups]
        if all(s is not None for _, s in known):
            first_ref, first = known[0]
            for ref, schema in known[1:]:
                if schema != first:
                    found.append(_row_type_problem(job, plugin, by_ref, first_ref, first, ref, schema))
                    break
            continue
        unknown = [by_ref[u].label for u, s in known if s is None]
        checks[plugin.ref] = [{"check": EQUAL_ROW_TYPES, "inputs": list(ups),
                               "datasets": list(inputs_read[plugin.ref]),
                               "reason": "row types unknown before run time: " + ", ".join(unknown)}]
    return checks, found


def _row_type_problem(job: JobConfig, plugin: PluginConfig, by_ref: Mapping[str, PluginConfig], first_ref: str,
                      first: Schema | None, ref: str, schema: Schema | None) -> Problem:
    def text(s: Schema | None) -> str:
        return "{" + ", ".join(f"{f.name} = {f.type}" for f in (s.fields if s else ())) + "}"

    what = "transform" if plugin.section == TRANSFORM else "sink"
    return job.problem(
        f"its inputs have different row types: {by_ref[first_ref].label} gives {text(first)}, "
        f"{by_ref[ref].label} gives {text(schema)}; a {what} reads every input as one row type",
        plugin, key="plugin_input",
        hint="make the inputs' fields the same (names, types and order), e.g. with a Sql or FieldMapper "
        "transform on each input, or give each input its own " + what)


def engine_rules(job: JobConfig, order: list[str], by_ref: Mapping[str, PluginConfig],
                 upstream: Mapping[str, list[str]], inputs_read: Mapping[str, list[str]],
                 schemas: Mapping[str, Schema | None]) -> tuple[EngineFacts, list[Problem]]:
    """Apply the rules to a wired job (``order``: topological); the facts and the problems found."""
    rank, takes = seatunnel_order(job, upstream)
    tables, catalog = _tables_and_keys(job, order, by_ref, upstream, schemas)
    multi, found = _multi_table(job, by_ref, upstream, tables)
    checks, more = _row_types(job, by_ref, upstream, inputs_read, schemas, tables)
    names = _action_names(job, takes, tables, multi)
    return EngineFacts(rank, names, tables, catalog, multi, checks), [*found, *more]


def shuffle_of(vertices: list[Any], edges: list[tuple[str, str]]) -> tuple[str, list[str]] | None:
    """SeaTunnel's multi-table shuffle, as ``(source, sinks)``: when the job's only source produces
    several tables and feeds several vertices, all of them sinks. ``vertices`` are logical vertices."""
    sources = [v for v in vertices if v.kind == SOURCE]
    if len(sources) != 1 or len(sources[0].tables or ()) < 2:
        return None
    kind = {v.id: v.kind for v in vertices}
    down = [b for a, b in edges if a == sources[0].id]
    if len(down) < 2 or any(kind[b] != SINK for b in down):
        return None
    return sources[0].id, down
