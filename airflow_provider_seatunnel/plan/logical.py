"""Stage 1: job config → :class:`LogicalDag` (wiring, checks, parallelism).

Wiring follows SeaTunnel's documented rules (README "Wiring"): ``plugin_output`` /
``plugin_input`` (legacy ``result_table_name`` / ``source_table_name``) name datasets;
an unnamed transform reads the nearest earlier producer, an unnamed sink the last one,
an unnamed Sql transform the tables its query names. Every problem is collected and
reported at once, each with file, line, plugin and key.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config.errors import ConfigError, Problem
from ..config.loader import JobConfig, PluginConfig
from ..config.options import as_int, as_list
from ..spi import (
    NOT_RUNNABLE,
    SINK,
    SOURCE,
    TRANSFORM,
    PerInput,
    PerInputSplit,
    ReadsTablesByName,
    SchemaInference,
    get_connector,
)
from ..spi.schema import Schema, TableKeys, TypeError_
from . import graph
from .rules import EngineFacts, engine_rules
from .streaming import check_job as check_streaming

JOB_MODES = ("BATCH", "STREAMING")
DEFAULT_MAX_PIPELINES = 256
#: the env option of how many tables a multi-table sink writes at once: checked here, read at run time
#: (``runtime/tables.py``), so the plan keeps it in ``env`` only
CONCURRENT_TABLES = "multi_table.concurrent_tables"


@dataclass(frozen=True)
class JobSettings:
    """The job-level settings read from ``env``."""

    name: str = "SeaTunnel_Job"
    mode: str = "BATCH"
    parallelism: int = 1
    retry_times: int = 3
    retry_interval_seconds: int = 3
    checkpoint_interval_ms: int | None = None
    checkpoint_timeout_ms: int | None = None
    max_pipelines: int = DEFAULT_MAX_PIPELINES
    progress_interval_s: int = 10  # seconds between live progress lines of a running pipeline (0: none)


@dataclass(frozen=True)
class LogicalVertex:
    """One plugin instance of the job (a source, a transform or a sink action)."""

    id: str  # the plugin's ref: "source[0]"
    kind: str
    plugin: str  # the connector's name ("Sql"), or the name as written if unknown
    parallelism: int
    upstream: tuple[str, ...] = ()  # vertex ids, in plugin_input order
    output: str | None = None  # the dataset name it registers
    inputs: tuple[str, ...] = ()  # dataset names it reads
    declared_parallelism: int | None = None
    line: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    per_input: PerInput | None = None  # a plugin with several inputs: whether it can run once per input
    notes: tuple[str, ...] = ()
    schema: Schema | None = None  # its output rows, where known at compile time
    action_name: str = ""  # SeaTunnel's action name (rules.py)
    rank: int = 0  # its place in SeaTunnel's action order
    tables: tuple[str, ...] | None = None  # table ids it produces (a sink: receives); None: unknown here
    catalog: Mapping[str, TableKeys] = field(default_factory=dict)  # table id -> keys (a sink: of its input)
    multi_table: Mapping[str, Any] | None = None  # a sink behind a multi-table input: its per-table sinks
    runtime_checks: tuple[Mapping[str, Any], ...] = ()  # checks left to the runtime, before the first write

    @property
    def label(self) -> str:
        return f"{self.id} {self.plugin}"


@dataclass(frozen=True)
class LogicalDag:
    """The engine-independent job graph: vertices in config order, edges in wiring order."""

    settings: JobSettings
    vertices: tuple[LogicalVertex, ...]
    edges: tuple[tuple[str, str], ...]
    file: str | None = None
    env: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()

    def vertex(self, vid: str) -> LogicalVertex:
        return self._index[vid]

    @property
    def _index(self) -> dict[str, LogicalVertex]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {v.id: v for v in self.vertices}
            object.__setattr__(self, "_index_cache", cached)
        return cached


# ---------------------------------------------------------------------------


def read_settings(job: JobConfig) -> tuple[JobSettings, list[Problem]]:
    """Job settings from ``env``, each checked, and the problems found."""
    problems: list[Problem] = []

    def positive_int(key: str, default: int | None, minimum: int = 1) -> int | None:
        raw = job.env_get(key)
        if raw is None:
            return default
        value = as_int(raw)
        if value is None or value < minimum:
            need = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            problems.append(job.problem(f"must be {need}, found {raw!r}", key=key,
                                        hint=f"set {key} = {default if default is not None else minimum}"))
            return default
        return value

    mode_raw = job.env_get("job.mode", "BATCH")
    mode = str(mode_raw).strip().upper()
    if mode not in JOB_MODES:
        close = difflib.get_close_matches(mode, JOB_MODES, n=1, cutoff=0.5)
        problems.append(job.problem(f"unknown job.mode {mode_raw!r}", key="job.mode",
                                    hint=(f"did you mean {close[0]}? " if close else "")
                                    + "job.mode is BATCH or STREAMING"))
        mode = "BATCH"
    name = job.env_get("job.name", "SeaTunnel_Job")
    settings = JobSettings(
        name=str(name),
        mode=mode,
        parallelism=positive_int("parallelism", 1) or 1,
        retry_times=positive_int("job.retry.times", 3, minimum=0) or 0,
        retry_interval_seconds=positive_int("job.retry.interval.seconds", 3, minimum=0) or 0,
        checkpoint_interval_ms=positive_int("checkpoint.interval", None),
        checkpoint_timeout_ms=positive_int("checkpoint.timeout", None),
        max_pipelines=positive_int("plan.max-pipelines", DEFAULT_MAX_PIPELINES) or DEFAULT_MAX_PIPELINES,
        progress_interval_s=positive_int("progress.interval", 10, minimum=0) or 0,
    )
    positive_int(CONCURRENT_TABLES, None)
    return settings, problems


def _split(found: list[Problem]) -> tuple[list[Problem], list[Problem]]:
    """``(errors, warnings)`` of ``found``, each in the order found: a problem is an error unless it says otherwise."""
    return [p for p in found if p.severity == "error"], [p for p in found if p.severity != "error"]


def build_logical_dag(job: JobConfig) -> LogicalDag:
    """Wire the plugins of ``job`` into a :class:`LogicalDag`; raise :class:`ConfigError`.

    Every problem is collected before raising, stage by stage: settings, streaming options,
    missing sections, each plugin's checks and declared wiring, the wiring itself, outputs
    nobody reads, a cycle (which stops here: nothing below has an order), parallelism, schemas.
    """
    settings, problems = read_settings(job)
    problems.extend(check_streaming(job, settings.mode))  # streaming.* options; sources that cannot stream
    problems.extend(_missing_sections(job))
    warnings: list[Problem] = list(job.warnings)

    declared, found = _declare(job)
    wiring, more = _wire(job, declared, _named_tables(job))
    errors, doubts = _split([*found, *more])
    problems += [*errors, *_unread_outputs(job, declared, wiring.upstream)]
    warnings += doubts

    by_ref = {p.ref: p for p in job.plugins}
    cycle = _cycle_problem(job, declared, by_ref, wiring.edges)
    if cycle is not None:
        raise ConfigError([*problems, cycle])  # without an order, nothing below can be computed
    order = graph.topological_order(list(by_ref), wiring.edges)
    par, found = _parallelism(job, settings, order, by_ref, wiring.upstream)
    problems += found
    schemas, found = _infer_schemas(job, order, by_ref, wiring.upstream)
    facts, more = engine_rules(job, order, by_ref, wiring.upstream, wiring.inputs_read, schemas)
    errors, doubts = _split([*found, *more])
    problems += errors
    warnings += doubts
    if problems:
        raise ConfigError(problems)
    vertices = _vertices(job, declared, wiring, par, schemas, facts)
    return LogicalDag(settings=settings, vertices=vertices, edges=tuple(wiring.edges), file=job.file,
                      env=job.env, warnings=tuple(warnings))


def _missing_sections(job: JobConfig) -> list[Problem]:
    """A job needs at least one source and one sink."""
    problems: list[Problem] = []
    if not job.sources:
        problems.append(Problem("the job has no source", file=job.file, plugin="source",
                                hint="add a source block, e.g. source { FakeSource { ... } }"))
    if not job.sinks:
        problems.append(Problem("the job has no sink", file=job.file, plugin="sink",
                                hint="add a sink block, e.g. sink { Console { } }"))
    return problems


@dataclass(frozen=True)
class _Declared:
    """What the plugins say of themselves, by plugin ref: their connector's name and the datasets they
    name as output and input."""

    canonical: dict[str, str]  # the connector's name, or the name as written if unknown
    outputs: dict[str, PluginConfig]  # an output name → the first plugin that declares it
    output_of: dict[str, str | None]
    inputs: dict[str, list[str] | None]  # None: it names no input
    input_key: dict[str, str | None]  # the option the inputs came from (plugin_input or its legacy name)


def _declare(job: JobConfig) -> tuple[_Declared, list[Problem]]:
    """Each plugin's connector checks and declared wiring, plugin by plugin in config order."""
    found: list[Problem] = []
    declared = _Declared({}, {}, {}, {}, {})
    for plugin in job.plugins:
        name, problems = _check_plugin(job, plugin)
        declared.canonical[plugin.ref] = name
        found += problems
        out, problems = _declared_output(job, plugin, declared.outputs)
        found += problems
        if out is not None and out not in declared.outputs:
            declared.outputs[out] = plugin
        declared.output_of[plugin.ref] = out
        names, key, problems = _declared_inputs(job, plugin)
        found += problems
        declared.inputs[plugin.ref] = names
        declared.input_key[plugin.ref] = key
    return declared, found


def _check_plugin(job: JobConfig, plugin: PluginConfig) -> tuple[str, list[Problem]]:
    """The plugin's canonical name, and what its connector finds wrong with it (an unknown plugin, or one
    this package cannot run, plans with a warning)."""
    kind = plugin.section
    connector = get_connector(plugin.name, kind)
    if connector is None:
        return plugin.name, [job.problem(f"unknown plugin '{plugin.name}': it plans, but this package cannot "
                                         "run it and validate fails", plugin, severity="warning",
                                         code=NOT_RUNNABLE,
                                         hint="check the spelling, or install the package that provides it")]
    if kind not in connector.capabilities.sections:
        return connector.name, [job.problem(f"'{connector.name}' is not a {kind} plugin", plugin,
                                            hint=f"{connector.name} can stand in: "
                                            + ", ".join(sorted(connector.capabilities.sections)))]
    found = list(connector.problems(plugin, job))
    if not connector.can_run(kind):
        found.append(job.problem(f"'{connector.name}' is a SeaTunnel {kind} this package cannot "
                                 "run yet: it plans, but validate fails", plugin,
                                 severity="warning", code=NOT_RUNNABLE))
    return connector.name, found


def _wiring_value(job: JobConfig, plugin: PluginConfig, new: str,
                  legacy: str) -> tuple[Any, str | None, list[Problem]]:
    """The value of ``new`` (or its legacy name), the key it came from, and the problem of having both."""
    has_new, has_legacy = new in plugin.options, legacy in plugin.options
    found: list[Problem] = []
    if has_new and has_legacy:
        a, b = plugin.options[new], plugin.options[legacy]
        if as_list(a) != as_list(b):
            found.append(job.problem(f"'{new}' = {a!r} and its legacy name '{legacy}' = {b!r} disagree",
                                     plugin, key=legacy, hint=f"keep only {new}"))
        else:
            found.append(job.problem(f"'{legacy}' repeats '{new}'", plugin, key=legacy,
                                     hint=f"remove the legacy {legacy}", severity="warning"))
    if has_new:
        return plugin.options[new], new, found
    if has_legacy:
        return plugin.options[legacy], legacy, found
    return None, None, found


def _declared_output(job: JobConfig, plugin: PluginConfig,
                     outputs: dict[str, PluginConfig]) -> tuple[str | None, list[Problem]]:
    """The dataset name the plugin registers (a sink registers none), checked against ``outputs``, the
    names declared before it: every output name is unique."""
    out, out_key, found = _wiring_value(job, plugin, "plugin_output", "result_table_name")
    if out is not None and plugin.section == SINK:
        found.append(job.problem("a sink's output name is ignored", plugin, key=out_key,
                                 severity="warning", hint=f"remove {out_key}"))
        return None, found
    if out is not None and (not isinstance(out, str) or not out.strip()):
        found.append(job.problem("the output name must be a non-empty string", plugin, key=out_key))
        return None, found
    if out is not None:
        out = out.strip()
        if out in outputs:
            first = outputs[out]
            found.append(job.problem(f"the output name '{out}' is already used by {first.label} "
                                     f"(line {first.line_of(out_key)})", plugin, key=out_key,
                                     hint="give every source and transform its own output name"))
    return out, found


def _declared_inputs(job: JobConfig, plugin: PluginConfig) -> tuple[list[str] | None, str | None, list[Problem]]:
    """The dataset names the plugin reads (None: it names none; a source reads none), and the key they came
    from."""
    ins, in_key, found = _wiring_value(job, plugin, "plugin_input", "source_table_name")
    if ins is not None and plugin.section == SOURCE:
        found.append(job.problem("a source's input is ignored", plugin, key=in_key, severity="warning",
                                 hint=f"remove {in_key}"))
        return None, in_key, found
    names = [str(x).strip() for x in as_list(ins)] if ins is not None else None
    if names is not None and not names:
        found.append(job.problem("the input list is empty", plugin, key=in_key,
                                 hint="name the dataset(s) this plugin reads, or remove the option"))
        names = None
    return names, in_key, found


def _did_you_mean(name: str, candidates: list[str]) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def _named_tables(job: JobConfig) -> dict[str, tuple[str, ...]]:
    """The transforms that name the datasets they read in their options (a query's tables), by ref: the
    implicit wiring of a transform that names no input."""
    named_tables: dict[str, tuple[str, ...]] = {}
    for plugin in job.transforms:
        connector = get_connector(plugin.name)
        if isinstance(connector, ReadsTablesByName):
            tables = connector.input_tables(plugin)
            if tables:
                named_tables[plugin.ref] = tables
    return named_tables


@dataclass(frozen=True)
class _Wiring:
    """Who reads whom, by plugin ref."""

    upstream: dict[str, list[str]]  # producer refs, in input order
    inputs_read: dict[str, list[str]]  # the dataset name each of those producers is read by
    notes: dict[str, list[str]]
    edges: list[tuple[str, str]]  # (producer, consumer), consumers in config order


def _wire(job: JobConfig, declared: _Declared,
          named_tables: dict[str, tuple[str, ...]]) -> tuple[_Wiring, list[Problem]]:
    """Each transform's and sink's producers: the datasets it names, else the implicit ones. A producer
    named twice is read once."""
    found: list[Problem] = []
    upstream: dict[str, list[str]] = {p.ref: [] for p in job.plugins}
    inputs_read: dict[str, list[str]] = {p.ref: [] for p in job.plugins}
    notes: dict[str, list[str]] = {p.ref: [] for p in job.plugins}
    unnamed_by_plugin: dict[str, list[PluginConfig]] = {}
    for p in [*job.sources, *job.transforms]:
        if declared.output_of[p.ref] is None:
            unnamed_by_plugin.setdefault(p.name.lower(), []).append(p)
    simple = len(job.sources) == 1 and len(job.sinks) == 1 and len(job.transforms) <= 1
    for plugin in [*job.transforms, *job.sinks]:
        names = declared.inputs[plugin.ref]
        if names is not None:
            pairs, problems = _named_producers(job, plugin, names, declared, unnamed_by_plugin, simple)
            found += problems
            if simple and not pairs:
                pairs = [(p, declared.output_of[p.ref] or p.ref)
                         for p in _implicit_producers(job, plugin, declared.outputs, named_tables)]
                if pairs:
                    notes[plugin.ref].append(f"{declared.input_key[plugin.ref]} names nothing; reads "
                                             f"{pairs[0][0].label} (SeaTunnel's simple-graph rule)")
        else:
            implicit = _implicit_producers(job, plugin, declared.outputs, named_tables)
            pairs = [(producer, declared.output_of[producer.ref] or producer.ref) for producer in implicit]
            if plugin.section == TRANSFORM and plugin.ref in named_tables and len(implicit) > 1:
                notes[plugin.ref].append("inputs taken from the tables its options name")
        for producer, name in pairs:
            if producer.ref not in upstream[plugin.ref]:
                upstream[plugin.ref].append(producer.ref)
                inputs_read[plugin.ref].append(name)
    edges = [(u, p.ref) for p in job.plugins for u in upstream[p.ref]]
    return _Wiring(upstream, inputs_read, notes, edges), found


def _named_producers(job: JobConfig, plugin: PluginConfig, names: list[str], declared: _Declared,
                     unnamed_by_plugin: dict[str, list[PluginConfig]], simple: bool = False,
                     ) -> tuple[list[tuple[PluginConfig, str]], list[Problem]]:
    """The producers of the datasets a plugin names, each with the name: an output name, else the plugin
    name of the one producer of that plugin that has no output name (with a warning). In a ``simple``
    graph (one source, one sink, at most one transform) a name that names nothing is only a warning:
    the caller wires the plugin to the previous one, as SeaTunnel does."""
    found: list[Problem] = []
    pairs: list[tuple[PluginConfig, str]] = []
    for name in names:
        producer = declared.outputs.get(name)
        if producer is None:
            by_name = unnamed_by_plugin.get(name.lower(), [])
            if len(by_name) == 1:
                producer = by_name[0]
                found.append(job.problem(f"'{name}' names no output; it matched {producer.label}, "
                                         "which has no plugin_output, by its plugin name", plugin,
                                         key=declared.input_key[plugin.ref], severity="warning",
                                         hint=f'set plugin_output = "{name}" in {producer.label}'))
        if producer is None:
            outputs = declared.outputs
            guess = _did_you_mean(name, list(outputs))
            hint = f"did you mean '{guess}'?" if guess else (
                "known outputs: " + ", ".join(sorted(outputs)) if outputs else
                "no source or transform sets plugin_output")
            if simple:
                found.append(job.problem(
                    f"'{name}' names no source or transform output; in a job of one source, one sink and at "
                    "most one transform the plugin reads the previous plugin instead (as SeaTunnel does)",
                    plugin, key=declared.input_key[plugin.ref], hint=hint, severity="warning"))
                continue
            found.append(job.problem(f"'{name}' names no source or transform output", plugin,
                                     key=declared.input_key[plugin.ref], hint=hint))
            continue
        pairs.append((producer, name))
    return pairs, found


def _unread_outputs(job: JobConfig, declared: _Declared, upstream: dict[str, list[str]]) -> list[Problem]:
    """Every source and transform is read by some plugin."""
    read = {ref for producers in upstream.values() for ref in producers}
    problems: list[Problem] = []
    for p in [*job.sources, *job.transforms]:
        if p.ref not in read:
            out = declared.output_of[p.ref]
            what = f"the output '{out}' of this plugin" if out else "this plugin's output"
            problems.append(job.problem(f"{what} is read by nobody", p,
                                        key="plugin_output" if out else None,
                                        hint="name it in a plugin_input, or remove the plugin"))
    return problems


def _cycle_problem(job: JobConfig, declared: _Declared, by_ref: dict[str, PluginConfig],
                   edges: list[tuple[str, str]]) -> Problem | None:
    """The problem of a cycle in the wiring, if there is one: a plugin may not read its own output."""
    cycle = graph.find_cycle(list(by_ref), edges)
    if not cycle:
        return None
    path = " -> ".join(f"{by_ref[r].label} ({declared.output_of[r] or '-'})" for r in cycle)
    return job.problem(f"the plugins form a cycle: {path}", by_ref[cycle[0]],
                       key=declared.input_key[cycle[0]], hint="a plugin may not read its own output, "
                       "directly or through others")


@dataclass(frozen=True)
class _Parallelism:
    """Each plugin's parallelism, the one its block declares, and the notes on the choice, by ref."""

    actual: dict[str, int]
    declared: dict[str, int | None]
    notes: dict[str, list[str]]


def _parallelism(job: JobConfig, settings: JobSettings, order: list[str], by_ref: dict[str, PluginConfig],
                 upstream: dict[str, list[str]]) -> tuple[_Parallelism, list[Problem]]:
    """A plugin runs at the parallelism it declares; else a source at the job's, a transform or sink at
    its first input's. ``order`` is topological: inputs come first."""
    problems: list[Problem] = []
    par = _Parallelism({}, {}, {})
    for ref in order:
        plugin = by_ref[ref]
        raw = plugin.get("parallelism")
        own = None
        if raw is not None:
            own = as_int(raw)
            if own is None or own < 1:
                problems.append(job.problem(f"parallelism must be a positive integer, found {raw!r}", plugin,
                                            key="parallelism", hint="set parallelism = 1 or more"))
                own = None
        par.declared[ref] = own
        first_input = par.actual[upstream[ref][0]] if upstream[ref] else None
        if plugin.section == SOURCE:
            par.actual[ref] = own or settings.parallelism
        else:
            par.actual[ref] = own or first_input or settings.parallelism
        if plugin.section == SINK and own is not None and first_input is not None and own != first_input:
            par.notes[ref] = [f"runs at its own parallelism {own}; SeaTunnel's engine would use its "
                              f"input's ({first_input})"]
    return par, problems


def _infer_schemas(job: JobConfig, order: list[str], by_ref: dict[str, PluginConfig],
                   upstream: dict[str, list[str]]) -> tuple[dict[str, Schema | None], list[Problem]]:
    """Each plugin's output schema where known, in topological order, with the problems found
    (a field that does not exist, a bad type string): checked before any Spark starts."""
    schemas: dict[str, Schema | None] = {}
    problems: list[Problem] = []
    for ref in order:
        plugin = by_ref[ref]
        connector = get_connector(plugin.name)
        schemas[ref] = None
        if not isinstance(connector, SchemaInference) or plugin.section not in connector.capabilities.sections:
            continue
        inputs = [schemas.get(u) for u in upstream[ref]]
        try:
            schema, found = connector.schema(plugin, job, inputs)
        except TypeError_ as e:
            schema, found = None, [job.problem(str(e), plugin, key="schema",
                                               hint="see the type strings in the README")]
        schemas[ref] = schema
        problems.extend(found)
    return schemas, problems


def _vertices(job: JobConfig, declared: _Declared, wiring: _Wiring, par: _Parallelism,
              schemas: dict[str, Schema | None], facts: EngineFacts) -> tuple[LogicalVertex, ...]:
    """One vertex per plugin, in config order; a plugin with several inputs says whether it can run once
    per input."""
    vertices = []
    for plugin in job.plugins:
        ref = plugin.ref
        connector = get_connector(plugin.name)
        per_input = None
        if isinstance(connector, PerInputSplit) and len(wiring.upstream[ref]) >= 2:
            per_input = connector.per_input(plugin, tuple(wiring.inputs_read[ref]))
        vertices.append(LogicalVertex(
            id=ref, kind=plugin.section, plugin=declared.canonical[ref],
            parallelism=par.actual[ref], upstream=tuple(wiring.upstream[ref]),
            output=declared.output_of[ref], inputs=tuple(wiring.inputs_read[ref]),
            declared_parallelism=par.declared[ref], line=plugin.line, options=plugin.options, per_input=per_input,
            notes=(*wiring.notes[ref], *par.notes.get(ref, ())), schema=schemas.get(ref),
            action_name=facts.action_names.get(ref, ""), rank=facts.rank.get(ref, 0), tables=facts.tables.get(ref),
            catalog=facts.catalog.get(ref, {}), multi_table=facts.multi_table.get(ref),
            runtime_checks=tuple(facts.runtime_checks.get(ref, ()))))
    return tuple(vertices)


def _implicit_producers(job: JobConfig, plugin: PluginConfig, outputs: dict[str, PluginConfig],
                        named_tables: dict[str, tuple[str, ...]]) -> list[PluginConfig]:
    """Producers of a plugin that names no input: the tables its options name, when each is some other
    plugin's output; else a transform reads the transform before it (the first transform, the last source),
    and a sink the last transform (with no transform, the last source)."""
    tables = named_tables.get(plugin.ref)
    if tables and all(t in outputs for t in tables) and plugin not in [outputs[t] for t in tables]:
        return [outputs[t] for t in tables]
    if plugin.section == TRANSFORM:
        if plugin.index > 0:
            return [job.transforms[plugin.index - 1]]
        return [job.sources[-1]] if job.sources else []
    if job.transforms:
        return [job.transforms[-1]]
    return [job.sources[-1]] if job.sources else []
