"""The sinks the conformance suite runs over: one :class:`Adapter` per two-phase sink.

A sink joins the suite by adding one adapter to :data:`ADAPTERS`: how to prepare its target (a server fixture
and a seeded earlier row), the sink block that writes there, how to read back what landed (rows, sorted) and
whether staging is left behind. Properties that do not apply to a sink are named in ``not_applicable`` with
the reason, never skipped silently. The suite never calls a sink's own methods: it runs the engine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from airflow_provider_seatunnel.connectors import localfile as lf

Row = dict
OLD: Row = {"id": -1, "name": "old"}


@dataclass(frozen=True)
class Adapter:
    """How the suite drives and observes one sink through the engine."""

    name: str
    seed: Callable[[Path], None]  # a target already holding OLD (an earlier run's data)
    sink_block: Callable[[Path, str, str], str]  # HOCON sink block: target, plugin_input, extra options
    landed: Callable[[Path], list[Row]]  # rows a reader of the target sees, sorted by id
    staging_left: Callable[[Path], bool]  # True if staging or a pending journal survived
    not_applicable: dict[str, str] = field(default_factory=dict)  # property -> why it does not apply


def _lf_seed(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    (target / "old.json").write_text(json.dumps(OLD) + "\n")


def _lf_block(target: Path, plugin_input: str, extra: str = "") -> str:
    return (f'LocalFile {{ plugin_input = "{plugin_input}", path = "{target}", file_format_type = "json", '
            f"batch_size = 4{', ' + extra if extra else ''} }}")


def _lf_landed(target: Path) -> list[Row]:
    files = lf.list_input_files({"path": str(target)})
    rows = [json.loads(line) for f in files for line in Path(f).read_text().splitlines() if line]
    return sorted(rows, key=lambda r: r["id"])


def _lf_staging_left(target: Path) -> bool:
    return (target / lf.STAGING_DIR).exists() or (target / lf.COMMITS_DIR / lf.PENDING_DIR).exists()


LOCALFILE = Adapter("LocalFile", _lf_seed, _lf_block, _lf_landed, _lf_staging_left)

ADAPTERS: dict[str, Adapter] = {a.name.lower(): a for a in (LOCALFILE,)}
