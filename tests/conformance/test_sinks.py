"""One suite over every registered two-phase sink (:data:`tests.conformance.adapters.ADAPTERS`), driven
through the engine (``run_pipeline`` on a compiled plan, faults through ``SEATUNNEL_FAULTS``):

- a failure injected at each batch fault point, then a restore with the same run id, lands every row once
  and leaves the earlier data and no staging;
- a rerun of a committed run id writes nothing again (idempotent commit);
- DROP_DATA is atomic: a failed run leaves the earlier data, its restore replaces it;
- the run's write_count equals the rows landed (counts), over a multi-table (two sink) input.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from tests.conformance.adapters import ADAPTERS, OLD, Adapter

ROWS = 6
# spec (point+N: after N earlier occurrences), which targets a reader sees committed after the failed attempt
SPECS = {
    "sink.write+3": (False, False),
    "sink.prepared": (False, False),
    "sink.move+1": (False, False),
    "sink.commit": (False, False),
    "sink.commit+1": (True, False),  # the first sink committed, the second did not
    "pipeline.committed": (True, True),
}


def _input(root: Path) -> list[dict]:
    root.mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "name": f"n{i}"} for i in range(ROWS)]
    (root / "part.csv").write_text("".join(f"{r['id']},{r['name']}\n" for r in rows))
    return rows


def _plan(plan_of, adapter: Adapter, inp: Path, targets: list[Path], name: str, extra: str = ""):
    sinks = "\n".join("  " + adapter.sink_block(t, "s", extra) for t in targets)
    return plan_of(f"""
env {{ job.name = "conformance" }}
source {{ LocalFile {{ plugin_output = "s", path = "{inp}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
sink {{
{sinks}
}}
""", name=name)


def _run(spark, plan, spec: str | None, attempt: int) -> dict:
    options = faults.from_environment({faults.ENV: spec} if spec else {})
    return run_pipeline(RunContext(spark, plan, plan.pipelines[0], "r1", attempt=attempt, options=options))


def _exactly_once(adapter: Adapter, target: Path, expected: list[dict]) -> None:
    got = adapter.landed(target)
    assert [i for i, n in Counter(r["id"] for r in got).items() if n > 1] == [], "duplicated rows"
    assert got == sorted([OLD, *expected], key=lambda r: r["id"])
    assert not adapter.staging_left(target), "staging left behind"


@pytest.fixture(params=sorted(ADAPTERS))
def adapter(request) -> Adapter:
    return ADAPTERS[request.param]


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_failure_at_a_fault_point_then_restore_is_exactly_once(spark, plan_of, tmp_path, adapter, spec):
    point = spec.split("+")[0]
    if point in adapter.not_applicable:
        pytest.skip(adapter.not_applicable[point])
    expected = _input(tmp_path / "in")
    targets = [tmp_path / "a", tmp_path / "b"]  # two sinks: the multi-table input of one pipeline
    for t in targets:
        adapter.seed(t)
    plan = _plan(plan_of, adapter, tmp_path / "in", targets, "job.conf")
    with pytest.raises(faults.InjectedFault):
        _run(spark, plan, spec, attempt=1)
    for t, committed in zip(targets, SPECS[spec], strict=True):  # a raise aborts what was not committed
        if committed:
            _exactly_once(adapter, t, expected)
        else:
            assert adapter.landed(t) == [OLD] and not adapter.staging_left(t), (spec, t)
    metrics = _run(spark, plan, spec, attempt=2)  # armed for attempt 1 only
    assert metrics["status"] == "FINISHED"
    assert metrics["write_count"] == len(targets) * len(expected)  # counts: metrics equal rows landed
    for t in targets:
        _exactly_once(adapter, t, expected)


def test_a_committed_run_id_rerun_writes_nothing_again(spark, plan_of, tmp_path, adapter):
    if "idempotent" in adapter.not_applicable:
        pytest.skip(adapter.not_applicable["idempotent"])
    expected = _input(tmp_path / "in")
    target = tmp_path / "a"
    adapter.seed(target)
    plan = _plan(plan_of, adapter, tmp_path / "in", [target], "job.conf")
    assert _run(spark, plan, None, attempt=1)["status"] == "FINISHED"
    _exactly_once(adapter, target, expected)
    assert _run(spark, plan, None, attempt=2)["status"] == "FINISHED"
    _exactly_once(adapter, target, expected)


@pytest.mark.parametrize("spec", ["sink.write+3", "sink.commit"])
def test_drop_data_is_atomic(spark, plan_of, tmp_path, adapter, spec):
    if "drop_data" in adapter.not_applicable:
        pytest.skip(adapter.not_applicable["drop_data"])
    expected = _input(tmp_path / "in")
    target = tmp_path / "a"
    adapter.seed(target)
    plan = _plan(plan_of, adapter, tmp_path / "in", [target], "job.conf", 'data_save_mode = "DROP_DATA"')
    with pytest.raises(faults.InjectedFault):
        _run(spark, plan, spec, attempt=1)
    assert adapter.landed(target) == [OLD] and not adapter.staging_left(target), spec  # the old data stays
    assert _run(spark, plan, spec, attempt=2)["write_count"] == len(expected)
    assert adapter.landed(target) == expected and not adapter.staging_left(target), spec
