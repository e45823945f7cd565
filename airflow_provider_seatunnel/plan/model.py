"""The compiled plan: plain frozen data that round-trips through the JSON plan.

``JobPlan.to_dict()`` is the stable JSON contract of ``seatunnel-airflow plan --format
json`` (documented in docs/plan-json.md); ``JobPlan.from_dict`` reads it back (the plan
cache and the Spark runtime use it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..spi.registry import secret_options
from ..spi.secrets import SPARK_RULE, Redaction, redact, redact_env, redaction

PLAN_FORMAT_VERSION = 1


@dataclass(frozen=True)
class PlanVertex:
    """One plugin instance in a pipeline (clones of a split included)."""

    id: str
    ref: str  # "source[0]": section and 0-based position in the config
    kind: str
    plugin: str
    parallelism: int
    chain: str | None = None  # "TransformChain[Sql->Filter]" for transforms
    task_group: str = ""
    output: str | None = None
    inputs: tuple[str, ...] = ()  # dataset names it reads in this pipeline
    line: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    schema: Mapping[str, Any] | None = None  # output fields -> SeaTunnel type strings, where known
    action_name: str = ""  # SeaTunnel's action name: "Source[0]-FakeSource", "Transform[1]-Sql"
    chain_action_name: str | None = None  # SeaTunnel's name of its chain, unique: "TransformChain[Transform[0]-Sql]"
    tables: tuple[str, ...] | None = None  # table ids it produces (a sink: receives); None: unknown before run
    catalog: Mapping[str, Any] = field(default_factory=dict)  # table id -> {"primary_key", "constraint_keys"}
    multi_table: Mapping[str, Any] | None = None  # a sink behind a multi-table input: one sink per table
    runtime_checks: tuple[Mapping[str, Any], ...] = ()  # checks the runtime runs before the first write

    def to_dict(self, secrets: bool = False, rule: Redaction = SPARK_RULE) -> dict[str, Any]:
        return {
            "id": self.id, "ref": self.ref, "kind": self.kind, "plugin": self.plugin,
            "parallelism": self.parallelism, "chain": self.chain, "task_group": self.task_group,
            "output": self.output, "inputs": list(self.inputs), "line": self.line,
            "config": dict(self.config) if secrets else redact(self.config, secret_options(self.plugin), rule),
            "notes": list(self.notes),
            "schema": self.schema,
            "action_name": self.action_name, "chain_action_name": self.chain_action_name,
            "tables": list(self.tables) if self.tables is not None else None,
            "catalog": {t: dict(k) for t, k in self.catalog.items()},
            "multi_table": dict(self.multi_table) if self.multi_table is not None else None,
            "runtime_checks": [dict(c) for c in self.runtime_checks],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PlanVertex:
        return cls(id=d["id"], ref=d["ref"], kind=d["kind"], plugin=d["plugin"], parallelism=d["parallelism"],
                   chain=d.get("chain"), task_group=d.get("task_group", ""), output=d.get("output"),
                   inputs=tuple(d.get("inputs", ())), line=d.get("line"), config=d.get("config", {}),
                   notes=tuple(d.get("notes", ())), schema=d.get("schema"), action_name=d.get("action_name", ""),
                   chain_action_name=d.get("chain_action_name"),
                   tables=tuple(d["tables"]) if d.get("tables") is not None else None,
                   catalog=d.get("catalog") or {}, multi_table=d.get("multi_table"),
                   runtime_checks=tuple(d.get("runtime_checks") or ()))


@dataclass(frozen=True)
class TaskGroup:
    """Vertices fused to run in one slot per parallel instance: an edge fuses when its upstream has one
    downstream, its downstream one upstream, and both run at the same parallelism."""

    id: str
    vertices: tuple[str, ...]
    parallelism: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "vertices": list(self.vertices), "parallelism": self.parallelism}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TaskGroup:
        return cls(d["id"], tuple(d["vertices"]), d["parallelism"])


@dataclass(frozen=True)
class PipelinePlan:
    """A SubPlan: one independently restorable pipeline, one Airflow task, one Spark application."""

    id: int  # SeaTunnel's pipeline number, 1..N: display only, never identity
    task_id: str  # stable, from the pipeline's content
    name: str
    vertices: tuple[PlanVertex, ...]
    edges: tuple[tuple[str, str], ...]
    chains: tuple[Mapping[str, Any], ...]
    task_groups: tuple[TaskGroup, ...]
    slots: Mapping[str, Any]
    retry: Mapping[str, int]
    checkpoint: Mapping[str, Any]
    split: Mapping[str, Any] = field(default_factory=dict)
    shuffle: Mapping[str, Any] | None = None  # SeaTunnel's multi-table shuffle between the source and sinks

    @property
    def sources(self) -> list[PlanVertex]:
        return [v for v in self.vertices if v.kind == "source"]

    @property
    def sinks(self) -> list[PlanVertex]:
        return [v for v in self.vertices if v.kind == "sink"]

    def physical_vertices(self) -> list[dict[str, Any]]:
        """One per parallel instance of each task group (what needs a slot)."""
        return [{"task_group": g.id, "subtask": i, "of": g.parallelism}
                for g in self.task_groups for i in range(g.parallelism)]

    def to_dict(self, secrets: bool = False, rule: Redaction = SPARK_RULE) -> dict[str, Any]:
        return {
            "id": self.id, "task_id": self.task_id, "name": self.name,
            "vertices": [v.to_dict(secrets, rule) for v in self.vertices],
            "edges": [list(e) for e in self.edges],
            "chains": [dict(c) for c in self.chains],
            "task_groups": [g.to_dict() for g in self.task_groups],
            "physical_vertices": self.physical_vertices(),
            "slots": dict(self.slots), "retry": dict(self.retry), "checkpoint": dict(self.checkpoint),
            "split": dict(self.split),
            "shuffle": dict(self.shuffle) if self.shuffle is not None else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PipelinePlan:
        return cls(id=d["id"], task_id=d["task_id"], name=d.get("name", ""),
                   vertices=tuple(PlanVertex.from_dict(v) for v in d["vertices"]),
                   edges=tuple(tuple(e) for e in d["edges"]), chains=tuple(d.get("chains", ())),
                   task_groups=tuple(TaskGroup.from_dict(g) for g in d.get("task_groups", ())),
                   slots=d.get("slots", {}), retry=d.get("retry", {}), checkpoint=d.get("checkpoint", {}),
                   split=d.get("split", {}), shuffle=d.get("shuffle"))


@dataclass(frozen=True)
class JobPlan:
    """The whole compiled job: settings, pipelines and the warnings found."""

    name: str
    mode: str
    file: str | None
    pipelines: tuple[PipelinePlan, ...]
    env: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[Mapping[str, Any], ...] = ()
    compiler: str = ""

    def pipeline(self, ref: int | str) -> PipelinePlan:
        """A pipeline by number (``1``, ``"1"``) or by task id.

        A task id compiled with other variable values (a templated path renders per run)
        differs only in its hash: when no id matches exactly, a unique pipeline with the
        same readable part (``orders_to_localfile``) answers.
        """
        for p in self.pipelines:
            if str(p.id) == str(ref) or p.task_id == ref:
                return p
        slug = str(ref).rsplit("_", 1)[0]
        same = [p for p in self.pipelines if p.task_id.rsplit("_", 1)[0] == slug]
        if len(same) == 1 and "_" in str(ref):
            return same[0]
        known = ", ".join(f"{p.id} ({p.task_id})" for p in self.pipelines)
        raise KeyError(f"no pipeline {ref!r} in job {self.name!r}; pipelines: {known}")

    def to_dict(self, secrets: bool = False) -> dict[str, Any]:
        """The JSON plan; without ``secrets``, secret values redacted by the job's rule
        (:func:`..spi.secrets.redaction`: Spark's ``spark.redaction.regex`` and the declared names)."""
        rule = redaction(self.env)
        return {
            "version": PLAN_FORMAT_VERSION,
            "job": {"name": self.name, "mode": self.mode, "file": self.file,
                    "pipeline_count": len(self.pipelines),
                    "env": dict(self.env) if secrets else redact_env(self.env, rule),
                    "warnings": [dict(w) for w in self.warnings], "compiler": self.compiler},
            "pipelines": [p.to_dict(secrets, rule) for p in self.pipelines],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> JobPlan:
        job = d["job"]
        return cls(name=job["name"], mode=job["mode"], file=job.get("file"),
                   pipelines=tuple(PipelinePlan.from_dict(p) for p in d["pipelines"]),
                   env=job.get("env", {}), warnings=tuple(job.get("warnings", ())),
                   compiler=job.get("compiler", ""))
