"""One suite over every registered two-phase sink (:data:`tests.conformance.sinks.ADAPTERS`), driven
through the engine (``run_pipeline`` on a compiled plan, faults through ``SEATUNNEL_FAULTS``):

- a failure injected at a fault point (each of the sink's ``specs``: before its publish, and after the first
  of two sinks published), then a restore with the same run id, lands every row once, keeps the earlier
  data and leaves no staging; a target is never seen half written after the failure;
- a rerun of a committed run id writes nothing again (idempotent commit);
- a race: an older attempt of the run resumes after a newer one took its token and committed; only the
  newer one's rows land, the older is Superseded and leaves nothing;
- DROP_DATA is atomic: a failed run leaves the earlier data, its restore replaces it;
- the run's write_count equals the rows landed (counts), over a multi-table (two sink) input.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

import pytest

from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError
from tests.conformance.adapters import OLD, Adapter, Target
from tests.conformance.sinks import ADAPTERS

ROWS = 6
BEFORE_PUBLISH = ("sink.write", "sink.prepared", "sink.move")


def _param(name: str, *rest: str):
    adapter = ADAPTERS[name]
    marks = [getattr(pytest.mark, m) for m in adapter.markers]
    return pytest.param(name, *rest, marks=marks, id="-".join((name, *rest)))


def _cases(prop: str, specs: str = "") -> list:
    """(adapter[, spec]) params of property ``prop`` (with the adapter's fault specs named ``specs``); the
    sinks it fails are strict xfails (the bug named)."""
    cases = []
    for name, a in sorted(ADAPTERS.items()):
        for spec in getattr(a, specs) if specs else (None,):
            p = _param(name, *([spec] if spec else []))
            bug = a.fails.get(f"{prop}:{spec}", a.fails.get(prop))
            if bug:
                p = pytest.param(*p.values, marks=[*p.marks, pytest.mark.xfail(strict=True, reason=bug)], id=p.id)
            cases.append(p)
    return cases


@pytest.fixture
def adapter(request, monkeypatch) -> Adapter:
    a = ADAPTERS[request.param]
    if a.skip:
        pytest.skip(a.skip)
    for key, value in a.environ.items():
        monkeypatch.setenv(key, value)
    return a


@pytest.fixture
def target(request, adapter, tmp_path, plan_of):
    """Makes a fresh target of the adapter's store (its server started once for the session)."""
    env = request.getfixturevalue(adapter.server) if adapter.server else None
    session = request.getfixturevalue(adapter.session)

    def make() -> Target:
        return Target(f"st{uuid.uuid4().hex[:10]}", tmp_path, env, session, plan_of)

    return make


def _not_applicable(adapter: Adapter, prop: str) -> None:
    if prop in adapter.not_applicable:  # declared by the adapter, with its reason (reported as a skip)
        pytest.skip(f"not applicable to {adapter.name}: {adapter.not_applicable[prop]}")


def _input(root: Path, first: int = 0) -> list[dict]:
    """The source's one input file (replaced on each call): ``ROWS`` rows with ids from ``first``."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "name": f"n{i}"} for i in range(first, first + ROWS)]
    for old in root.glob("*.csv"):
        old.unlink()
    (root / f"part{first}.csv").write_text("".join(f"{r['id']},{r['name']}\n" for r in rows))
    return rows


def _plan(adapter: Adapter, inp: Path, targets: list[Target], extra: str = ""):
    sinks = "\n".join("  " + adapter.sink_block(t, "s", extra) for t in targets)
    return targets[0].plan_of(f"""
env {{ job.name = "conformance" }}
source {{ LocalFile {{ plugin_output = "s", path = "{inp}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
sink {{
{sinks}
}}
""", name="job.conf")


def _run(t: Target, plan, spec: str | None, attempt: int, on_event=None) -> dict:
    options = faults.from_environment({faults.ENV: spec} if spec else {})
    return run_pipeline(RunContext(t.spark, plan, plan.pipelines[0], "r1", attempt=attempt, options=options),
                        on_event=on_event)


def _no_staging(adapter: Adapter, t: Target) -> bool:
    return "staging" in adapter.not_applicable or not adapter.staging_left(t)


def _exactly_once(adapter: Adapter, t: Target, expected: list[dict]) -> None:
    got = adapter.landed(t)
    assert [i for i, n in Counter(r["id"] for r in got).items() if n > 1] == [], "duplicated rows"
    assert got == sorted([OLD, *expected], key=lambda r: r["id"])
    assert _no_staging(adapter, t), "staging left behind"


def _after_failure(spec: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What each of the two targets may show after the failed attempt: the earlier data only ("old") or
    every row ("all"), never a part. A sink that failed at its commit point may have published (the engine
    fires it after the publish of a sink without a commit point of its own), never partly."""
    point, _, count = spec.partition("+")
    if point == "pipeline.committed":
        return ("all",), ("all",)
    if point == "sink.commit":
        failed = int(count or 0)
        return tuple(("all",) if i < failed else ("old", "all") if i == failed else ("old",)  # type: ignore[return-value]
                     for i in range(2))
    return ("old",), ("old",)


@pytest.mark.parametrize(("adapter", "spec"), _cases("restore", "specs"), indirect=["adapter"])
def test_failure_at_a_fault_point_then_restore_is_exactly_once(adapter, target, tmp_path, spec):
    _not_applicable(adapter, spec.split("+")[0])
    expected = _input(tmp_path / "in")
    targets = [target(), target()]  # two sinks: the multi-table input of one pipeline
    for t in targets:
        adapter.seed(t)
    plan = _plan(adapter, tmp_path / "in", targets)
    with pytest.raises(faults.InjectedFault):
        _run(targets[0], plan, spec, attempt=1)
    for t, allowed in zip(targets, _after_failure(spec), strict=True):  # a raise aborts what was not committed
        state = "old" if adapter.landed(t) == [OLD] else "all"
        assert state in allowed, (spec, t.name, adapter.landed(t))
        if state == "all":
            _exactly_once(adapter, t, expected)
        assert adapter.rolls_forward or _no_staging(adapter, t), (spec, t.name)
    metrics = _run(targets[0], plan, spec, attempt=2)  # armed for attempt 1 only
    assert metrics["status"] == "FINISHED"
    assert metrics["write_count"] == len(targets) * len(expected)  # counts: metrics equal rows landed
    for t in targets:
        _exactly_once(adapter, t, expected)


@pytest.mark.parametrize("adapter", _cases("idempotent"), indirect=True)
def test_a_committed_run_id_rerun_writes_nothing_again(adapter, target, tmp_path):
    _not_applicable(adapter, "idempotent")
    expected = _input(tmp_path / "in")
    t = target()
    adapter.seed(t)
    plan = _plan(adapter, tmp_path / "in", [t])
    assert _run(t, plan, None, attempt=1)["status"] == "FINISHED"
    _exactly_once(adapter, t, expected)
    assert _run(t, plan, None, attempt=2)["write_count"] == len(expected)  # passed through, counted once
    _exactly_once(adapter, t, expected)


@pytest.mark.parametrize("adapter", _cases("race"), indirect=True)
def test_an_older_attempt_resuming_after_a_newer_one_committed_is_superseded(adapter, target, tmp_path):
    """The older attempt pauses once it has staged (the engine's 'prepared' event); a newer attempt of the
    same run, reading newer input, runs to its commit meanwhile; then the older one resumes its commit."""
    _not_applicable(adapter, "race")
    _input(tmp_path / "in")
    t = target()
    adapter.seed(t)
    plan = _plan(adapter, tmp_path / "in", [t])
    newer: list[dict] = []

    def newer_attempt_when_prepared(message: str) -> None:
        if message.endswith(f": prepared {ROWS} rows") and not newer:
            newer.extend(_input(tmp_path / "in", first=100))
            assert _run(t, plan, None, attempt=2)["write_count"] == ROWS

    error: PipelineError | None = None
    try:
        _run(t, plan, None, attempt=1, on_event=newer_attempt_when_prepared)
    except PipelineError as e:
        error = e
    assert newer, "the older attempt never reached its commit"
    _exactly_once(adapter, t, newer)  # the newer attempt's rows, once; nothing of the older one
    assert error is not None and error.kind == "superseded", f"the older attempt was not superseded: {error}"


@pytest.mark.parametrize(("adapter", "spec"), _cases("drop_data", "drop_specs"), indirect=["adapter"])
def test_drop_data_is_atomic(adapter, target, tmp_path, spec):
    _not_applicable(adapter, "drop_data")
    expected = _input(tmp_path / "in")
    t = target()
    adapter.seed(t)
    plan = _plan(adapter, tmp_path / "in", [t], 'data_save_mode = "DROP_DATA"')
    with pytest.raises(faults.InjectedFault):
        _run(t, plan, spec, attempt=1)
    assert adapter.landed(t) == [OLD], spec  # the old data stays
    assert adapter.rolls_forward or _no_staging(adapter, t), spec
    assert _run(t, plan, spec, attempt=2)["write_count"] == len(expected)
    assert adapter.landed(t) == expected and _no_staging(adapter, t), spec
