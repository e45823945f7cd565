"""The example third-party sink (tests/plugin_package: JsonLines, one file of storage verbs and an options
spec) through the conformance suite: the engine runs it, faults injected at each fault point, then restored.

The suite's own cases run here with JsonLines' adapter. Its publish is one atomic step per table that is
also its commit record, so what a fault after a table's publish finds differs from the suite's LocalFile
(which moves its files one by one under a journal that an abort rolls back): the second ``sink.move`` of a
two-sink pipeline comes after the first sink published, and at ``sink.commit`` the sink's data is in place
for good (the restore finds it committed and writes nothing again)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance import test_sinks as suite
from tests.conformance.adapters import OLD, Adapter

#: which targets a reader sees committed after the failed attempt, where they differ from the suite's
ATOMIC_PUBLISH = {"sink.move+1": (True, False), "sink.commit": (True, False), "sink.commit+1": (True, True)}


def _seed(target: Path) -> None:
    (target / "earlier").mkdir(parents=True, exist_ok=True)
    (target / "earlier" / "part-00000.json").write_text(json.dumps(OLD) + "\n")


def _block(target: Path, plugin_input: str, extra: str = "") -> str:
    return f'JsonLines {{ plugin_input = "{plugin_input}", path = "{target}"{", " + extra if extra else ""} }}'


def _landed(target: Path) -> list[dict]:
    rows = [json.loads(line) for f in target.glob("[!.]*/part-*.json") for line in f.read_text().splitlines() if line]
    return sorted(rows, key=lambda r: r["id"])


def _staging_left(target: Path) -> bool:
    return any((target / ".staging").glob("*"))


JSONLINES = Adapter("JsonLines", _seed, _block, _landed, _staging_left,
                    not_applicable={"drop_data": "JsonLines has no save modes"})


@pytest.mark.parametrize("spec", sorted(suite.SPECS))
def test_failure_at_a_fault_point_then_restore_is_exactly_once(spark, plan_of, tmp_path, monkeypatch, spec):
    for point, committed in ATOMIC_PUBLISH.items():
        monkeypatch.setitem(suite.SPECS, point, committed)
    suite.test_failure_at_a_fault_point_then_restore_is_exactly_once(spark, plan_of, tmp_path, JSONLINES, spec)


def test_a_committed_run_id_rerun_writes_nothing_again(spark, plan_of, tmp_path):
    suite.test_a_committed_run_id_rerun_writes_nothing_again(spark, plan_of, tmp_path, JSONLINES)
