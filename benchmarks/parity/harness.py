"""One case on both engines: runs alternating (run ``i`` starts with Zeta when ``i`` is even, with the project when
odd), each in a fresh target; the first run of each engine is compared, every difference classified by
:mod:`benchmarks.parity.known`.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import compare as cmp
from . import paimon_tables
from .cases import Case, FileOut
from .compare import Difference, Table
from .engines import EngineRun, run_project, run_zeta
from .known import classify, failing
from .targets import Target


@dataclass(frozen=True)
class Output:
    """What one engine's run left: its run, its target folder, and (Jdbc/Kafka) the table or topic read back."""

    run: EngineRun
    out: Path
    table: Table | None = None
    records: tuple[tuple[bytes | None, bytes | None], ...] | None = None


@dataclass(frozen=True)
class Classified:
    diff: Difference
    cls: str | None  # None: unexplained
    known: str | None
    anchor: str | None


@dataclass(frozen=True)
class Result:
    case: str
    zeta_s: tuple[float, ...]
    ours_s: tuple[float, ...]
    zeta_exit: int
    ours_exit: int
    diffs: tuple[Classified, ...] = field(default=())

    @property
    def verdict(self) -> str:
        """``identical``; else ``unexplained`` or ``fixed-seen`` when a difference fails the run; else the classes
        seen (``deviation``, ``seatunnel-bug``)."""
        if not self.diffs:
            return "identical"
        if any(d.cls is None for d in self.diffs):
            return "unexplained"
        if any(d.cls == "fixed" for d in self.diffs):
            return "fixed-seen"
        return "+".join(sorted({d.cls for d in self.diffs if d.cls}))

    @property
    def failed(self) -> bool:
        return any(failing(d.cls) for d in self.diffs)

    @property
    def zeta_median(self) -> float:
        return statistics.median(self.zeta_s)

    @property
    def ours_median(self) -> float:
        return statistics.median(self.ours_s)


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by its path relative to ``root`` (POSIX separators)."""
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def compare_files(sub: str, spec: FileOut, zeta: Mapping[str, bytes], ours: Mapping[str, bytes], random: bool
                  ) -> list[Difference]:
    """One file sink's target: the folder's extra entries, the partition folders, the bytes (fixed rows only),
    and the parsed rows (random rows: by count, columns and types)."""
    dz, do = cmp.data_files(zeta, spec.fmt), cmp.data_files(ours, spec.fmt)
    diffs = cmp.compare_folder(zeta, ours, [*dz, *do])
    diffs += cmp.compare_partitions(dz, do) if not random else cmp.compare_partition_keys(dz, do)
    tz = [cmp.parse(b, spec.fmt, spec.delimiter, spec.header) for b in dz.values()]
    to = [cmp.parse(b, spec.fmt, spec.delimiter, spec.header) for b in do.values()]
    if random:
        tz, to = [_shape(t) for t in tz], [_shape(t) for t in to]
    table_diffs = cmp.compare_tables(tz, to)
    if not random:
        diffs += cmp.compare_bytes(list(dz.values()), list(do.values()), spec.fmt, rows_differ=bool(table_diffs))
    return [Difference(d.aspect, sub, d.detail) for d in diffs + table_diffs]


def _shape(table: Table) -> Table:
    """A table of random values reduced to what both engines must agree on: columns, types and one empty row per
    row (the count)."""
    return Table(table.columns, table.types, tuple(() for _ in table.rows))


def compare_case(case: Case, zeta: Output, ours: Output) -> list[Difference]:
    """Every difference between the engines' outputs of ``case``. When either job failed, only the exit codes
    (a failed job's partial outputs are not compared)."""
    diffs = cmp.compare_exit(zeta.run.exit_code, ours.run.exit_code)
    if diffs:
        failed = zeta.run if zeta.run.exit_code != 0 else ours.run
        diffs = [Difference(d.aspect, d.where, f"{d.detail}; {failed.engine}: {failure_line(failed.log)}")
                 for d in diffs]
    if zeta.run.exit_code != 0 or ours.run.exit_code != 0:
        return diffs
    if case.random and case.console:
        diffs += _console_counts(zeta.run.log, ours.run.log)
    elif case.console:
        diffs += cmp.compare_console(zeta.run.log, ours.run.log)
    for sub, spec in case.files.items():
        diffs += compare_files(sub, spec, files_under(zeta.out / sub), files_under(ours.out / sub), case.random)
    if zeta.table is not None and ours.table is not None:
        diffs += cmp.compare_tables([zeta.table], [ours.table], where="table")
    if zeta.records is not None and ours.records is not None:
        diffs += cmp.compare_records(zeta.records, ours.records, where="topic")
    return diffs


def failure_line(log: str) -> str:
    """The line of a failed job's log that says why: the last ``error:`` line (the project), else the first
    ``Caused by`` / ``Exception`` line (Zeta), shortened."""
    lines = log.splitlines()
    found = next((ln for ln in reversed(lines) if ln.startswith("error:")), None)
    found = found or next((ln for ln in lines if "Caused by:" in ln or "Exception:" in ln), "no error line")
    return found.strip()[:300]


def _console_counts(zeta_log: str, ours_log: str) -> list[Difference]:
    def count(log: str) -> Counter[str]:
        return Counter(kind for (_, kind, _), n in cmp.console_rows(log).items() for _ in range(n))

    z, o = count(zeta_log), count(ours_log)
    return [] if z == o else [Difference("console.count", "console", f"zeta {dict(z)}, ours {dict(o)}")]


Runner = Callable[[str, Path, dict[str, str]], EngineRun]


def run_case(case: Case, runs: int, zeta_dir: Path, target: Target | None = None, work: Path | None = None,
             log: Callable[[str], None] = print) -> Result:
    """Run ``case`` ``runs`` times on each engine, alternating, and compare the first run of each (a case with
    ``repeat``: each run is the job run that many times on the same target, its last exit code, its total time)."""
    root = Path(tempfile.mkdtemp(prefix=f"parity-{case.name}-", dir=work))
    engines: dict[str, Callable[[Path, dict[str, str]], EngineRun]] = {
        "zeta": lambda conf, v: run_zeta(zeta_dir, conf, v, case.env),
        "ours": lambda conf, v: run_project(conf, v, case.env)}
    times: dict[str, list[float]] = {"zeta": [], "ours": []}
    first: dict[str, Output] = {}
    try:
        for i in range(runs):
            for engine in (("zeta", "ours") if i % 2 == 0 else ("ours", "zeta")):
                out = root / f"{engine}-{i}"
                out.mkdir()
                variables = {**case.variables, "out": str(out)}
                if target is not None:
                    variables.update(target.variables(f"{engine}{i}"))
                runs_here = [engines[engine](case.path, variables) for _ in range(case.repeat)]  # same target
                run = replace(runs_here[-1], wall_s=sum(r.wall_s for r in runs_here))
                times[engine].append(run.wall_s)
                log(f"  {case.name}: {engine} run {i + 1}: exit {run.exit_code}, {run.wall_s:.1f} s")
                if i == 0:
                    first[engine] = _output(run, out, target, variables)
        diffs = compare_case(case, first["zeta"], first["ours"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return Result(case.name, tuple(times["zeta"]), tuple(times["ours"]), first["zeta"].run.exit_code,
                  first["ours"].run.exit_code, classified(case.name, diffs))


def classified(case: str, diffs: list[Difference]) -> tuple[Classified, ...]:
    """Each difference with the known entry that explains it (none: unexplained)."""
    out = []
    for d in diffs:
        k = classify(case, d)
        out.append(Classified(d, k.cls if k else None, k.id if k else None, k.anchor if k else None))
    return tuple(out)


def reclassified(result: Result) -> Result:
    """``result`` classified again by the table as it is now (a report merged after the table changed)."""
    return replace(result, diffs=classified(result.case, [d.diff for d in result.diffs]))


def _output(run: EngineRun, out: Path, target: Target | None, variables: dict[str, str]) -> Output:
    if target is None or run.exit_code != 0:
        return Output(run, out)
    if target.kind == "kafka":
        return Output(run, out, records=tuple(target.read_records(variables["topic"])))
    if target.kind == "elasticsearch":
        return Output(run, out, records=tuple(target.read_documents(variables["index"])))
    if target.kind == "rabbitmq":
        return Output(run, out, records=tuple(target.read_messages(variables)))
    if target.kind == "influxdb":
        return Output(run, out, records=tuple(target.read_points(variables)))
    if target.kind == "cassandra":
        return Output(run, out, records=tuple(target.read_cassandra(variables["keyspace"])))
    if target.kind == "paimon":
        return Output(run, out, records=tuple(paimon_tables.read_records(Path(variables["warehouse"]))))
    return Output(run, out, table=target.read_table(variables["table"]))
