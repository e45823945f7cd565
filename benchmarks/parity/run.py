"""Parity with SeaTunnel's own engine: run each config on Zeta and on the project, compare, classify, report.

    python benchmarks/parity/run.py [--only NAME ...] [--runs N] [--report benchmarks/results/parity.md]
                                    [--ci] [--no-setup]

Zeta comes from the shared zeta folder (env ``SEATUNNEL_ZETA_DIR``, else ``<repo>/../shared/zeta``, else
``/work/shared/zeta``); its ``setup.sh`` is run first (idempotent) with the Kafka connector and the JDBC
drivers. Jdbc and Kafka cases start the test servers of tests/. Exit 1 when any difference is unexplained or of
the ``fixed`` class (benchmarks/parity/known.py), 2 when Zeta cannot be found. docs/parity.md tells how to read
the report and how to add a config or a known difference.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the checkout's root on the path, then the package's name
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "benchmarks.parity"

from .cases import CASES, Case, by_name
from .compare import Difference
from .engines import REPO, setup_zeta, zeta_dir
from .harness import Classified, Result, reclassified, run_case
from .report import as_json, as_markdown, from_json, merged
from .targets import started


def run_all(cases: list[Case], runs: int, folder: Path, log=print,
            done: Callable[[list[Result], list[str]], None] = lambda r, n: None) -> tuple[list[Result], list[str]]:
    """Every case, grouped by target so each server starts once; a target whose server cannot start is
    skipped with the reason (a note of the report). A case the harness itself fails on is a result with an
    unexplained ``harness.error``. ``done`` gets the results so far after each case."""
    results: list[Result] = []
    notes: list[str] = []
    for kind in dict.fromkeys(c.target for c in cases):
        group = [c for c in cases if c.target == kind]
        with contextlib.ExitStack() as stack:
            target = None
            if kind is not None:
                try:
                    target = stack.enter_context(started(kind))
                except Exception as e:
                    notes.append(f"{kind} cases skipped: the test server did not start ({e})")
                    continue
            for case in group:
                log(f"{case.name} ...")
                try:
                    result = run_case(case, runs, folder, target, log=log)
                except Exception as e:
                    error = Classified(Difference("harness.error", "harness", f"{type(e).__name__}: {e}"), None,
                                       None, None)
                    result = Result(case.name, (0.0,), (0.0,), -1, -1, (error,))
                log(f"{case.name}: {result.verdict} (zeta {result.zeta_median:.1f} s, ours {result.ours_median:.1f} s)")
                results.append(result)
                done(results, notes)
    order = {c.name: i for i, c in enumerate(cases)}
    return sorted(results, key=lambda r: order[r.case]), notes


def _write(path: Path, results: list[Result], meta: dict) -> None:
    path.write_text(as_markdown(results, meta))
    path.with_suffix(".json").write_text(as_json(results, meta) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="case names (default: all)")
    ap.add_argument("--ci", action="store_true", help="the fast subset tests/parity runs")
    ap.add_argument("--runs", type=int, default=1, help="runs per engine, alternating (default 1)")
    ap.add_argument("--report", default=None, help="write the markdown report here (and a .json beside it)")
    ap.add_argument("--no-setup", action="store_true", help="do not run Zeta's setup.sh first")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="run nothing: write --report from these reports' .json (a case from the first that has it)")
    ap.add_argument("--note", action="append", default=[], help="a note for the report (repeatable)")
    args = ap.parse_args(argv)
    if args.merge:
        results, meta = merged([from_json(Path(p).read_text()) for p in args.merge], [c.name for c in CASES])
        meta["notes"] = meta["notes"] + args.note
        results = [reclassified(r) for r in results]
        _write(Path(args.report), results, meta)
        return 1 if any(r.failed for r in results) else 0
    folder = zeta_dir()
    if folder is None:
        print("no zeta folder: set SEATUNNEL_ZETA_DIR (the folder of run-zeta.sh)", file=sys.stderr)
        return 2
    notes: list[str] = list(args.note)
    if not args.no_setup:
        code, err = setup_zeta(folder)
        if code == 3:
            notes.append("setup.sh: " + "; ".join(line for line in err.splitlines() if "NOT SERVED" in line))
        elif code != 0:
            print(err, file=sys.stderr)
            return 2
    cases = [c for c in by_name(args.only) if c.ci or not args.ci]

    def write(results: list[Result], more: list[str]) -> None:
        if not args.report:
            return
        meta = {"runs": args.runs, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "notes": notes + more, "zeta_version": "2.3.8"}
        _write(Path(args.report) if Path(args.report).is_absolute() else REPO / args.report, results, meta)

    results, more = run_all(cases, args.runs, folder, done=write)
    write(results, more)
    notes += more
    for r in results:
        for d in r.diffs:
            print(f"{r.case}: {d.cls or 'UNEXPLAINED'} {d.diff.aspect} {d.diff.where}: {d.diff.detail}")
    for note in notes:
        print(f"note: {note}")
    failed = [r.case for r in results if r.failed]
    print(f"{len(results)} compared, {sum(1 for r in results if not r.diffs)} identical, "
          f"{len(failed)} failing: {', '.join(failed) or '-'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
