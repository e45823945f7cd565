"""Validate every job config in a SeaTunnel source tree and count what happens.

    python scripts/corpus.py /path/to/seatunnel [--json out.json] [--show CATEGORY]

A job config is a ``.conf``/``.json``/``.sql`` file under ``src/test/resources``, ``config``,
``examples`` or ``docs`` that names ``source`` and ``sink``. Each is compiled as ``validate``
does (no Spark) and falls in one category: ``valid``; ``not-runnable`` (it plans, but names a
plugin or an option this package cannot run: the plugins are counted); ``config-error`` (a
problem in the config as this package reads it); ``crash`` (any other exception: a bug).
Variables the e2e tests pass with ``-i`` are not known here: an unresolved one counts as a
config error.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import traceback
from pathlib import Path

from airflow_provider_seatunnel.plan.compiler import validate_job

_SECTION = r'(?m)(^\s*{0}\s*[{{=:\[]|"{0}"\s*:)'
_SOURCE, _SINK = re.compile(_SECTION.format("source")), re.compile(_SECTION.format("sink"))
_PLACES = ("src/test/resources", "/config/", "/examples/", "seatunnel-examples", "/docs/")


def job_configs(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in (".conf", ".json", ".sql", ".hocon") or not path.is_file():
            continue
        rel = "/" + str(path.relative_to(root))
        if not any(place in rel for place in _PLACES):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _is_job(path, text):
            found.append(path)
    return found


def _is_job(path: Path, text: str) -> bool:
    """A job config: both sections (HOCON/JSON), or SeaTunnel's SQL job format (not DDL scripts)."""
    if path.suffix.lower() == ".sql":
        return "'connector'" in text.lower() and "insert into" in text.lower()
    return bool(_SOURCE.search(text) and _SINK.search(text))


def classify(path: Path) -> tuple[str, list[str]]:
    try:
        errors, _warnings, _plan = validate_job(str(path), environ={})
    except Exception:
        return "crash", [traceback.format_exc(limit=3)]
    if not errors:
        return "valid", []
    if all(e.code == "not-runnable" for e in errors):
        return "not-runnable", [_plugin_of(e.message, e.plugin) for e in errors]
    return "config-error", [e.format() for e in errors if e.code != "not-runnable"]


def _plugin_of(message: str, plugin: str | None) -> str:
    m = re.search(r"'([A-Za-z0-9_-]+)' (?:is|cannot)", message)
    if "cannot run" in message or "not supported" in message:
        return (plugin or "").split(" ")[-1] or (m.group(1) if m else message[:40])
    return (plugin or "").split(" ")[-1] + ": " + message[:60]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--show", choices=["valid", "not-runnable", "config-error", "crash"])
    args = ap.parse_args(argv)
    results = {str(p.relative_to(args.root)): classify(p) for p in job_configs(args.root)}
    counts = collections.Counter(kind for kind, _ in results.values())
    total = len(results)
    print(f"{total} job configs")
    for kind in ("valid", "not-runnable", "config-error", "crash"):
        print(f"  {kind:13} {counts[kind]:4}  {100 * counts[kind] / max(total, 1):5.1f} %")
    blockers = collections.Counter(b for kind, why in results.values() if kind == "not-runnable" for b in set(why))
    print("most common reasons a config cannot run here:")
    for name, n in blockers.most_common(20):
        print(f"  {n:4}  {name}")
    if args.show:
        for path, (kind, why) in results.items():
            if kind == args.show:
                print(f"\n{path}\n  " + "\n  ".join(why))
    if args.json:
        args.json.write_text(json.dumps({"counts": counts, "results": results}, indent=1))
    return 1 if counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
