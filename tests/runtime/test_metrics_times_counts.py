"""The metrics' times (UTC ISO 8601 with an offset) and counts (never negative)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.runtime.context import now
from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics
from airflow_provider_seatunnel.runtime.summary import job_metrics, render_summary
from airflow_provider_seatunnel.spi.errors import AssertionFailed

_PLAN = compile_job("""
env { job.name = "counts", parallelism = 2 }
source {
  FakeSource { plugin_output = "web", row.num = 100, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = "store", row.num = 100, schema = { fields { id = bigint } } }
}
sink {
  LocalFile { plugin_input = "web", path = "/tmp/never-written", file_format_type = "json" }
  Console { plugin_input = "web" }
  Assert { plugin_input = "store", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1000 }] } }
}
""", use_cache=False)
BRANCHING = next(p for p in _PLAN.pipelines if len(p.sinks) == 2)  # web -> LocalFile + Console: one pipeline
STORE = next(p for p in _PLAN.pipelines if len(p.sinks) == 1)


def _utc(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    assert parsed.utcoffset() == timedelta(0), text  # an offset, and it is UTC's
    return parsed


def test_times_are_utc_iso_8601_with_an_offset():
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = now()
    assert "T" in stamp and stamp.endswith("+00:00")
    assert before <= _utc(stamp) <= datetime.now(UTC)
    finished = PipelineMetrics.finished(BRANCHING, "r1", 1, stamp, time.monotonic(), {"source[0] FakeSource": 1},
                                        {"sink[0] LocalFile": {"t": 1}})
    failed = PipelineMetrics.failed(STORE, "r1", 1, stamp, AssertionFailed("MIN_ROW"))
    for m in (finished, failed):
        d = m.to_dict()
        assert _utc(d["start"]) <= _utc(d["end"])


def test_a_pipeline_branching_to_two_sinks_never_counts_negative_failures():
    """The -200 of a failed job: one source read 200 rows (100 x parallelism 2) and both of its sinks
    wrote them all; read minus the sinks' sum was 200 - 400."""
    branching = PipelineMetrics.finished(
        BRANCHING, "r1", 1, now(), time.monotonic(), {"source[0] FakeSource": 200},
        {"sink[0] LocalFile": {"t": 200}, "sink[1] Console": {"t": 200}})
    assert (branching.read_count, branching.write_count) == (200, 400)
    assert branching.failed_count == 0
    failed = PipelineMetrics.failed(STORE, "r1", 1, now(), AssertionFailed("MIN_ROW"))
    job = job_metrics("job", [branching, failed], now(), now())
    assert job["status"] == "FAILED"
    assert job["failed_count"] == 0
    assert "Total Failed Count        :                   0" in render_summary(job)


def test_failed_count_is_what_a_sink_missed_of_what_was_read():
    one_sink = PipelineMetrics.finished(BRANCHING, "r1", 1, now(), time.monotonic(), {"source[0] FakeSource": 10},
                                        {"sink[0] LocalFile": {"t": 7}})
    assert (one_sink.failed_count, one_sink.filtered_count) == (3, 3)
    # two sinks, one behind a filter: the most any sink missed
    two = PipelineMetrics.finished(BRANCHING, "r1", 1, now(), time.monotonic(), {"source[0] FakeSource": 10},
                                   {"sink[0] LocalFile": {"t": 10}, "sink[1] Console": {"a": 2, "b": 2}})
    assert two.failed_count == 6 and two.filtered_count is None
    # a transform that makes rows (a join, an explode): more written than read is no failure
    more = PipelineMetrics.finished(BRANCHING, "r1", 1, now(), time.monotonic(), {"source[0] FakeSource": 10},
                                    {"sink[0] LocalFile": {"t": 25}})
    assert more.failed_count == 0 and more.filtered_count == 0
    job = job_metrics("job", [one_sink, two, more], now(), now())
    assert job["failed_count"] == 3 + 6 + 0


def test_summary_times_read_old_and_new_stamps():
    job = job_metrics("job", [], "2024-05-06T10:00:00+00:00", "2024-05-06T10:01:05+00:00")
    assert "Total Time(s)             :                  65" in render_summary(job)
    old = job_metrics("job", [], "2024-05-06 10:00:00", "2024-05-06 10:00:07")  # metrics written before
    assert "Total Time(s)             :                   7" in render_summary(old)
