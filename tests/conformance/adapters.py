"""The sinks the conformance suite runs over: one :class:`Adapter` per two-phase sink.

A sink joins the suite by adding one adapter to :data:`ADAPTERS`: the server fixture it needs (and the
markers that fixture implies), how to seed a target with an earlier run's row (:data:`OLD`), the sink block
that writes there, how to read back what landed (rows, sorted by id: as a reader of the store sees them,
never through the sink) and whether staging is left behind. A property that does not apply to a sink is
named in ``not_applicable`` with the reason, never skipped silently; a property a sink fails is named in
``fails`` with the bug (a strict xfail). The suite never calls a sink's own methods: it runs the engine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Row = dict
OLD: Row = {"id": -1, "name": "old"}
#: the bookkeeping a file store's staging and pending commit records live in (a reader never lists them)
STAGING_MARKS = (".seatunnel-staging", "/.pending/")
#: the fault spec of a sink whose commit is the engine's (one publish per table): the second of two sinks
#: fails before its publish, after the first one published (one run: before and after a publish)
ENGINE_SPECS = ("sink.move+1",)
#: those of a sink publishing in steps (a fault point per file): the second spec fails after every publish
STEPS_SPECS = ("sink.move+1", "pipeline.committed")


@dataclass(frozen=True)
class Target:
    """One place a sink writes to in one test: ``name`` is unique (a folder, bucket, table, key, topic)."""

    name: str
    root: Path  # a private directory of the test
    env: Any  # the server the adapter's fixture gave (None for a local store)
    spark: Any  # the session the engine runs on
    plan_of: Callable[..., Any]


@dataclass(frozen=True)
class Adapter:
    """How the suite drives and observes one sink through the engine."""

    name: str
    seed: Callable[[Target], None]  # a target already holding OLD (an earlier run's data)
    sink_block: Callable[[Target, str, str], str]  # HOCON sink block: target, plugin_input, extra options
    landed: Callable[[Target], list[Row]]  # rows a reader of the target sees, sorted by id
    staging_left: Callable[[Target], bool]  # True if staging or a pending commit record survived
    server: str | None = None  # the fixture giving Target.env
    session: str = "spark"  # the fixture giving the session the engine runs on
    markers: tuple[str, ...] = ()  # what the server needs (tests/markers.py)
    specs: tuple[str, ...] = ENGINE_SPECS  # the fault specs of the restore property
    drop_specs: tuple[str, ...] = ("sink.move",)  # those of the DROP_DATA property (failures before the publish)
    rolls_forward: bool = False  # a commit interrupted after its commit point keeps its staging for the restore
    environ: Mapping[str, str] = field(default_factory=dict)  # environment the sink needs
    not_applicable: Mapping[str, str] = field(default_factory=dict)  # property -> why it does not apply
    fails: Mapping[str, str] = field(default_factory=dict)  # property[:spec] -> the bug it shows (strict xfail)
    skip: str = ""  # why the sink cannot run in this environment at all


def not_superseded(where: str) -> dict[str, str]:
    """The race property's strict xfail of a sink without attempt tokens (a store that fences itself):
    its publish finds the run committed (``where``) and the engine, with no newer token to compare, cannot
    tell the older attempt from a repeated commit of the newest."""
    return {"race:committed": f"an older attempt resuming after a newer attempt of the run committed is not Superseded: "
                    f"{where} answers ALREADY ('committed by this run') and the store keeps no attempt tokens "
                    "the engine could compare, so the older attempt finishes FINISHED and its metrics count rows "
                    "it never landed (readers see the newer attempt's rows once)"}


def first_wins(where: str) -> dict[str, str]:
    """The race property's strict xfail (the older attempt resuming once the newer one staged) of a sink
    without attempt tokens, where the first attempt to commit wins (``where``: how it fences)."""
    return {"race:staged": f"the newest attempt does not win: {where}, without attempt tokens, so an older attempt "
                           "resuming after a newer one staged commits its own rows and the newer one then finds the "
                           "run committed (ALREADY); the rows land once, but the older attempt's, and it is not "
                           "Superseded"}


def by_id(rows: list[Row]) -> list[Row]:
    return sorted(({"id": int(r["id"]), "name": r["name"]} for r in rows), key=lambda r: r["id"])


def json_lines(text: str) -> list[Row]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def read_source(t: Target, block: str) -> list[Row]:
    """The rows a source block of the store reads (the store's reader: journals and bookkeeping as it
    handles them), through the registry's connector."""
    from airflow_provider_seatunnel.runtime.executor import RunContext
    from airflow_provider_seatunnel.spi.registry import get_connector

    plan = t.plan_of(f"source {{ {block} }}\nsink {{ Console {{ }} }}", name=f"read-{t.name}.conf")
    p = plan.pipelines[0]
    connector = get_connector(p.sources[0].plugin)
    tables = connector.read(RunContext(t.spark, plan, p, "reader"), p.sources[0])
    return by_id([r.asDict() for df in tables.values() for r in df.select("id", "name").collect()])


def staging_on_disk(root: Path) -> bool:
    """A file under a staging or pending-record directory (empty directories are no staging: an object
    store has none, and a file store's sink may leave them)."""
    return root.exists() and any(m in str(p) for p in root.rglob("*") if p.is_file() for m in STAGING_MARKS)


def json_options(plugin_input: str, extra: str) -> str:
    return f'plugin_input = "{plugin_input}", file_format_type = "json", batch_size = 4' + (f", {extra}" if extra
                                                                                           else "")


SCHEMA = "schema = { fields { id = int, name = string } }"
