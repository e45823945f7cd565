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
from ..spi.schema import Schema, TypeError_
from . import graph
from .streaming import check_job as check_streaming

JOB_MODES = ("BATCH", "STREAMING")
DEFAULT_MAX_PIPELINES = 256


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


def read_settings(job: JobConfig, problems: list[Problem]) -> JobSettings:
    """Job settings from ``env``, each checked; problems are appended."""

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
    return JobSettings(
        name=str(name),
        mode=mode,
        parallelism=positive_int("parallelism", 1) or 1,
        retry_times=positive_int("job.retry.times", 3, minimum=0) or 0,
        retry_interval_seconds=positive_int("job.retry.interval.seconds", 3, minimum=0) or 0,
        checkpoint_interval_ms=positive_int("checkpoint.interval", None),
        checkpoint_timeout_ms=positive_int("checkpoint.timeout", None),
        max_pipelines=positive_int("plan.max-pipelines", DEFAULT_MAX_PIPELINES) or DEFAULT_MAX_PIPELINES,
    )


def _wiring_value(job: JobConfig, plugin: PluginConfig, new: str, legacy: str,
                  problems: list[Problem], warnings: list[Problem]) -> tuple[Any, str | None]:
    """The value of ``new`` (or its legacy name) and the key it came from."""
    has_new, has_legacy = new in plugin.options, legacy in plugin.options
    if has_new and has_legacy:
        a, b = plugin.options[new], plugin.options[legacy]
        if as_list(a) != as_list(b):
            problems.append(job.problem(f"'{new}' = {a!r} and its legacy name '{legacy}' = {b!r} disagree",
                                        plugin, key=legacy, hint=f"keep only {new}"))
        else:
            warnings.append(job.problem(f"'{legacy}' repeats '{new}'", plugin, key=legacy,
                                        hint=f"remove the legacy {legacy}", severity="warning"))
    if has_new:
        return plugin.options[new], new
    if has_legacy:
        return plugin.options[legacy], legacy
    return None, None


def _did_you_mean(name: str, candidates: list[str]) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def build_logical_dag(job: JobConfig) -> LogicalDag:
    """Wire the plugins of ``job`` into a :class:`LogicalDag`; raise :class:`ConfigError`."""
    problems: list[Problem] = []
    warnings: list[Problem] = list(job.warnings)
    settings = read_settings(job, problems)
    problems.extend(check_streaming(job, settings.mode))  # streaming.* options; sources that cannot stream

    if not job.sources:
        problems.append(Problem("the job has no source", file=job.file, plugin="source",
                                hint="add a source block, e.g. source { FakeSource { ... } }"))
    if not job.sinks:
        problems.append(Problem("the job has no sink", file=job.file, plugin="sink",
                                hint="add a sink block, e.g. sink { Console { } }"))

    plugins = job.plugins
    outputs: dict[str, PluginConfig] = {}
    output_of: dict[str, str | None] = {}
    declared_inputs: dict[str, list[str] | None] = {}
    input_key: dict[str, str | None] = {}
    canonical: dict[str, str] = {}

    for plugin in plugins:
        connector = get_connector(plugin.name)
        kind = plugin.section
        if connector is None:
            warnings.append(job.problem(f"unknown plugin '{plugin.name}': it plans, but this package cannot "
                                        "run it and validate fails", plugin, severity="warning",
                                        code=NOT_RUNNABLE,
                                        hint="check the spelling, or install the package that provides it"))
            canonical[plugin.ref] = plugin.name
        else:
            canonical[plugin.ref] = connector.name
            if kind not in connector.kinds:
                problems.append(job.problem(f"'{connector.name}' is not a {kind} plugin", plugin,
                                            hint=f"{connector.name} can stand in: "
                                            + ", ".join(sorted(connector.kinds))))
            else:
                found = connector.problems(plugin, job)
                problems.extend(p for p in found if p.severity == "error")
                warnings.extend(p for p in found if p.severity != "error")
                if not connector.can_run(kind):
                    warnings.append(job.problem(f"'{connector.name}' is a SeaTunnel {kind} this package cannot "
                                                "run yet: it plans, but validate fails", plugin,
                                                severity="warning", code=NOT_RUNNABLE))

        out, out_key = _wiring_value(job, plugin, "plugin_output", "result_table_name", problems, warnings)
        if out is not None and kind == SINK:
            warnings.append(job.problem("a sink's output name is ignored", plugin, key=out_key,
                                        severity="warning", hint=f"remove {out_key}"))
            out = None
        if out is not None and (not isinstance(out, str) or not out.strip()):
            problems.append(job.problem("the output name must be a non-empty string", plugin, key=out_key))
            out = None
        if out is not None:
            out = out.strip()
            if out in outputs:
                first = outputs[out]
                problems.append(job.problem(f"the output name '{out}' is already used by {first.label} "
                                            f"(line {first.line_of(out_key)})", plugin, key=out_key,
                                            hint="give every source and transform its own output name"))
            else:
                outputs[out] = plugin
        output_of[plugin.ref] = out

        ins, in_key = _wiring_value(job, plugin, "plugin_input", "source_table_name", problems, warnings)
        input_key[plugin.ref] = in_key
        if ins is not None and kind == SOURCE:
            warnings.append(job.problem("a source's input is ignored", plugin, key=in_key, severity="warning",
                                        hint=f"remove {in_key}"))
            ins = None
        names = [str(x).strip() for x in as_list(ins)] if ins is not None else None
        if names is not None and not names:
            problems.append(job.problem("the input list is empty", plugin, key=in_key,
                                        hint="name the dataset(s) this plugin reads, or remove the option"))
            names = None
        declared_inputs[plugin.ref] = names

    # transforms that name the datasets they read in their options (a query's tables): implicit wiring
    named_tables: dict[str, tuple[str, ...]] = {}
    for plugin in job.transforms:
        connector = get_connector(plugin.name)
        if isinstance(connector, ReadsTablesByName):
            tables = connector.input_tables(plugin)
            if tables:
                named_tables[plugin.ref] = tables

    producers = [*job.sources, *job.transforms]
    unnamed_by_plugin: dict[str, list[PluginConfig]] = {}
    for p in producers:
        if output_of[p.ref] is None:
            unnamed_by_plugin.setdefault(p.name.lower(), []).append(p)

    upstream: dict[str, list[str]] = {p.ref: [] for p in plugins}
    inputs_read: dict[str, list[str]] = {p.ref: [] for p in plugins}
    read_by: dict[str, list[str]] = {p.ref: [] for p in producers}
    notes: dict[str, list[str]] = {p.ref: [] for p in plugins}

    def connect(consumer: PluginConfig, producer: PluginConfig, name: str) -> None:
        if producer.ref not in upstream[consumer.ref]:
            upstream[consumer.ref].append(producer.ref)
            inputs_read[consumer.ref].append(name)
            read_by[producer.ref].append(consumer.ref)

    for plugin in [*job.transforms, *job.sinks]:
        names = declared_inputs[plugin.ref]
        if names is not None:
            for name in names:
                producer = outputs.get(name)
                if producer is None:
                    by_name = unnamed_by_plugin.get(name.lower(), [])
                    if len(by_name) == 1:
                        producer = by_name[0]
                        warnings.append(job.problem(f"'{name}' names no output; it matched {producer.label}, "
                                                    "which has no plugin_output, by its plugin name", plugin,
                                                    key=input_key[plugin.ref], severity="warning",
                                                    hint=f'set plugin_output = "{name}" in {producer.label}'))
                if producer is None:
                    guess = _did_you_mean(name, list(outputs))
                    hint = f"did you mean '{guess}'?" if guess else (
                        "known outputs: " + ", ".join(sorted(outputs)) if outputs else
                        "no source or transform sets plugin_output")
                    problems.append(job.problem(f"'{name}' names no source or transform output", plugin,
                                                key=input_key[plugin.ref], hint=hint))
                    continue
                connect(plugin, producer, name)
            continue
        implicit = _implicit_producers(job, plugin, outputs, named_tables)
        for producer in implicit:
            connect(plugin, producer, output_of[producer.ref] or producer.ref)
        if implicit and plugin.section == TRANSFORM and plugin.ref in named_tables and len(implicit) > 1:
            notes[plugin.ref].append("inputs taken from the tables its options name")

    for p in producers:
        if not read_by[p.ref]:
            out = output_of[p.ref]
            what = f"the output '{out}' of this plugin" if out else "this plugin's output"
            problems.append(job.problem(f"{what} is read by nobody", p,
                                        key="plugin_output" if out else None,
                                        hint="name it in a plugin_input, or remove the plugin"))

    vertex_ids = [p.ref for p in plugins]
    edges = [(u, p.ref) for p in plugins for u in upstream[p.ref]]
    cycle = graph.find_cycle(vertex_ids, edges)
    if cycle:
        by_ref = {p.ref: p for p in plugins}
        path = " -> ".join(f"{by_ref[r].label} ({output_of[r] or '-'})" for r in cycle)
        problems.append(job.problem(f"the plugins form a cycle: {path}", by_ref[cycle[0]],
                                    key=input_key[cycle[0]], hint="a plugin may not read its own output, "
                                    "directly or through others"))
    if cycle:
        raise ConfigError(problems)  # without an order, nothing below can be computed

    parallelism: dict[str, int] = {}
    declared: dict[str, int | None] = {}
    by_ref = {p.ref: p for p in plugins}
    for ref in graph.topological_order(vertex_ids, edges):
        plugin = by_ref[ref]
        raw = plugin.get("parallelism")
        own = None
        if raw is not None:
            own = as_int(raw)
            if own is None or own < 1:
                problems.append(job.problem(f"parallelism must be a positive integer, found {raw!r}", plugin,
                                            key="parallelism", hint="set parallelism = 1 or more"))
                own = None
        declared[ref] = own
        first_input = parallelism[upstream[ref][0]] if upstream[ref] else None
        if plugin.section == SOURCE:
            parallelism[ref] = own or settings.parallelism
        else:
            parallelism[ref] = own or first_input or settings.parallelism
        if plugin.section == SINK and own is not None and first_input is not None and own != first_input:
            notes[ref].append(f"runs at its own parallelism {own}; SeaTunnel's engine would use its "
                              f"input's ({first_input})")
    schemas, schema_problems = _infer_schemas(job, graph.topological_order(vertex_ids, edges), by_ref, upstream)
    problems.extend(p for p in schema_problems if p.severity == "error")
    warnings.extend(p for p in schema_problems if p.severity != "error")
    if problems:
        raise ConfigError(problems)

    vertices = []
    for plugin in plugins:
        connector = get_connector(plugin.name)
        per_input = None
        if isinstance(connector, PerInputSplit) and len(upstream[plugin.ref]) >= 2:
            per_input = connector.per_input(plugin, tuple(inputs_read[plugin.ref]))
        vertices.append(LogicalVertex(
            id=plugin.ref, kind=plugin.section, plugin=canonical[plugin.ref],
            parallelism=parallelism[plugin.ref], upstream=tuple(upstream[plugin.ref]),
            output=output_of[plugin.ref], inputs=tuple(inputs_read[plugin.ref]),
            declared_parallelism=declared[plugin.ref], line=plugin.line, options=plugin.options, per_input=per_input,
            notes=tuple(notes[plugin.ref]), schema=schemas.get(plugin.ref)))
    return LogicalDag(settings=settings, vertices=tuple(vertices), edges=tuple(edges), file=job.file,
                      env=job.env, warnings=tuple(warnings))


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
        if not isinstance(connector, SchemaInference) or plugin.section not in connector.kinds:
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


def _implicit_producers(job: JobConfig, plugin: PluginConfig, outputs: dict[str, PluginConfig],
                        named_tables: dict[str, tuple[str, ...]]) -> list[PluginConfig]:
    """Producers of a plugin that names no input (README "Wiring": the previous plugin)."""
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
