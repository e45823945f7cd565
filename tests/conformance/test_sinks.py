"""One suite over every registered two-phase sink (:data:`tests.conformance.sinks.ADAPTERS`), driven
through the engine (``run_pipeline`` on a compiled plan, faults through ``SEATUNNEL_FAULTS``):

- a failure injected at a fault point (each of the sink's ``specs``: ``sink.move+1`` fails the second of two
  sinks before its publish, the first one published or part way), then a restore with the same run id,
  lands every row once, keeps the earlier data and leaves no staging; a target is never seen half written
  after the failure; then a rerun of the committed run id writes nothing again (idempotent commit);
- a race: an older attempt of the run resumes after a newer one took its token and committed; only the
  newer one's rows land, the older is Superseded and leaves nothing;
- DROP_DATA is atomic: a failed run leaves the earlier data, its restore replaces it;
- the run's write_count equals the rows landed (counts), over a multi-table (two sink) input.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError
from tests.conformance.adapters import OLD, Adapter, Target
from tests.conformance.sinks import ADAPTERS

ROWS = 6
#: what the engine's fault says of where it fired, for the specs whose count means something to say
FAULT_WORDS = {"sink.write+3": "a write task failed after 3 rows", "sink.move+1": "after 1 earlier occurrence(s)",
               "sink.write+100000": "on the driver after the write (no task reached row 100000)"}
#: when the older attempt of the race resumes: the newer one has staged (it commits after), or committed
RACES = ("staged", "committed")


def _param(name: str, *rest: str):
    adapter = ADAPTERS[name]
    marks = [getattr(pytest.mark, m) for m in ("spark", *adapter.markers)]  # every sink runs on Spark
    return pytest.param(name, *rest, marks=marks, id="-".join((name, *rest)))


def _cases(prop: str, specs: str = "") -> list:
    """(adapter[, spec]) params of property ``prop`` (with the adapter's fault specs named ``specs``); the
    sinks it fails are strict xfails (the bug named)."""
    cases = []
    for name, a in sorted(ADAPTERS.items()):
        for spec in (RACES if specs == "races" else getattr(a, specs)) if specs else (None,):
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
    if point == "sink.move" and count:  # the first sink may have published (one step) or be part way (hidden)
        return ("old", "all"), ("old",)
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
    with pytest.raises(faults.InjectedFault) as info:
        _run(targets[0], plan, spec, attempt=1)
    error, point = info.value, spec.split("+")[0]  # a transient fault, located in the pipeline and the sink
    assert error.deterministic is False and error.to_dict()["kind"] == "fault" and point in str(error), str(error)
    assert error.pipeline == plan.pipelines[0].task_id
    assert FAULT_WORDS.get(spec, "") in str(error), str(error)
    if point.startswith("sink."):
        assert str(error.plugin).startswith("sink[") and plan.pipelines[0].sinks[0].plugin in str(error.plugin)
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
    # idempotent commit: a rerun of the committed run id writes nothing again, and counts its rows once
    assert _run(targets[0], plan, None, attempt=3)["write_count"] == len(targets) * len(expected)
    for t in targets:
        _exactly_once(adapter, t, expected)


def _prepared(message: str) -> bool:
    return message.endswith(f": prepared {ROWS} rows")  # the engine's event: a sink staged its rows


class _Attempt(threading.Thread):
    """An attempt run in a thread (as an old worker still running beside its retry); ``error`` after."""

    def __init__(self, session, fn) -> None:
        super().__init__(daemon=True)
        self.session, self.fn, self.error = session, fn, None
        self.start()

    def run(self) -> None:
        try:  # the session is active in the thread, as in the driver's (a JVM thread of its own through py4j)
            SparkSession._get_j_spark_session_class(self.session._jvm).setActiveSession(self.session._jsparkSession)
            self.fn()
        except BaseException as e:  # the outcome the test asserts
            self.error = e


@pytest.mark.parametrize(("adapter", "when"), _cases("race", "races"), indirect=["adapter"])
def test_an_older_attempt_resuming_after_a_newer_one_took_its_token_is_superseded(adapter, target, tmp_path, when):
    """The older attempt pauses once it has staged (the engine's 'prepared' event); a newer attempt of the
    same run, reading newer input, takes the token and stages (``when`` = staged: the older one resumes its
    commit now, then the newer commits) or runs to its commit (``when`` = committed: the older resumes after).
    Either way only the newer attempt's rows land, once, and the older is Superseded."""
    _not_applicable(adapter, "race")
    _input(tmp_path / "in")
    t = target()
    adapter.seed(t)
    plan = _plan(adapter, tmp_path / "in", [t])
    newer: list[dict] = []
    staged, resume = threading.Event(), threading.Event()

    def older_events(message: str) -> None:
        if _prepared(message):
            staged.set()
            assert resume.wait(180), "the newer attempt never let the older one resume"

    def newer_events(message: str) -> None:
        if _prepared(message) and when == "staged":
            resume.set()
            older.join(180)  # the older attempt's commit runs to its end while the newer one is staged

    older = _Attempt(t.spark, lambda: _run(t, plan, None, attempt=1, on_event=older_events))
    assert staged.wait(180), f"the older attempt never staged: {older.error}"
    newer.extend(_input(tmp_path / "in", first=100))
    try:
        assert _run(t, plan, None, attempt=2, on_event=newer_events)["write_count"] == ROWS
    finally:
        resume.set()
        older.join(180)
    assert not older.is_alive(), "the older attempt never finished"
    _exactly_once(adapter, t, newer)  # the newer attempt's rows, once; nothing of the older one
    error = older.error
    assert isinstance(error, PipelineError) and error.kind == "superseded", \
        f"the older attempt was not superseded: {error!r}"


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
