"""Adapters of third-party sinks: the example package's JsonLines (tests/plugin_package, one file of storage
verbs and an options spec, installed by the Makefile as a third-party package is: by its entry point).

Its publish renames an attempt's staging directory to the commit's directory in one atomic step that is
also its commit record, so the suite's restore, race and count properties hold for it as written."""

from __future__ import annotations

import json

from tests.conformance.adapters import OLD, Adapter, Row, Target, by_id


def _seed(t: Target) -> None:
    (t.root / t.name / "earlier").mkdir(parents=True, exist_ok=True)
    (t.root / t.name / "earlier" / "part-00000.json").write_text(json.dumps(OLD) + "\n")


def _block(t: Target, plugin_input: str, extra: str) -> str:
    return f'JsonLines {{ plugin_input = "{plugin_input}", path = "{t.root / t.name}"{", " + extra if extra else ""} }}'


def _landed(t: Target) -> list[Row]:
    """What a reader that skips dot-directories (the package's documented layout) sees."""
    files = (t.root / t.name).glob("[!.]*/part-*.json")
    return by_id([json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()])


def _staging_left(t: Target) -> bool:
    return any((t.root / t.name / ".staging").glob("*"))


JSONLINES = Adapter("JsonLines", _seed, _block, _landed, _staging_left,
                    specs=("sink.write+3", "sink.move+1", "pipeline.committed"),
                    not_applicable={"drop_data": "JsonLines has no save modes"})

ADAPTERS = (JSONLINES,)
