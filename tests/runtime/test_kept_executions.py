"""The finished SQL executions kept for counters are bounded by the counters still alive: a stream of
many micro-batches keeps a bounded number however long it runs (pure Python: the status store is not
touched)."""

from __future__ import annotations

import gc

import pytest

from airflow_provider_seatunnel.runtime import pyspark_internals as internals


class _Owner:
    """Stands for a counter: anything a weak reference can follow."""


@pytest.fixture
def app(monkeypatch):
    monkeypatch.setattr(internals, "_finished", {})
    monkeypatch.setattr(internals, "_held", {})
    monkeypatch.setattr(internals, "_prune_at", {})
    monkeypatch.setattr(internals, "_released", internals.deque())
    return "app-1"


def _keep(app: str, first: int, last: int) -> None:
    for execution_id in range(first, last + 1):
        internals._finished[(app, execution_id)] = {7: execution_id}


def test_a_stream_of_micro_batches_keeps_only_what_the_living_counters_can_read(app):
    peak = 0
    for batch in range(3000):  # each micro-batch: a counter from its first execution on, three executions
        owner = _Owner()
        internals.hold(app, 3 * batch, owner)
        _keep(app, 3 * batch, 3 * batch + 2)
        peak = max(peak, internals.kept_executions(app))
        del owner  # the micro-batch's counts were read (freed at once: no cycle)
    assert peak <= 6  # the previous batch's (released at this one's start) and this one's
    internals.hold(app, 9000, _Owner())  # (collected at once: its end is applied by the next call)
    internals.hold(app, 9001, keep := _Owner())
    assert internals.kept_executions(app) == 0 and keep


def test_a_living_counter_keeps_every_execution_from_its_since_on_and_other_apps_are_untouched(app):
    early = _Owner()
    internals.hold(app, 10, early)
    _keep(app, 0, 2500)
    _keep("other", 0, 5)
    for n in range(5):  # later counters come and go: pruning runs once the kept executions doubled
        internals.hold(app, 2500 + n, _Owner())
    kept = {i for (a, i) in internals._finished if a == app}
    assert kept == set(range(10, 2501))  # nothing the early counter can read is gone; older ones are
    assert internals.kept_executions("other") == 6
    del early
    gc.collect()
    internals.hold("other", 6, _Owner())  # applies the early counter's end
    assert internals.kept_executions(app) == 0
