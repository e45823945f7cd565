"""A pipeline task's metrics for Airflow's Stats and its progress XCom (operators/observability.py), as
plain data; tests/airflow/test_job_group_run.py receives them from a real task on a StatsD socket."""

from __future__ import annotations

import json
from pathlib import Path

from airflow_provider_seatunnel.operators.observability import (
    INCR,
    PROGRESS_XCOM_KEY,
    TIMING,
    ProgressRelay,
    name_part,
    stat_points,
)
from airflow_provider_seatunnel.runtime.progress import progress_file_of, read_progress, snapshot

FINISHED = {"pipeline": 2, "task_id": "web_1a2b", "name": "FakeSource -> Jdbc", "status": "FINISHED",
            "seconds": 3.25, "read_count": 10, "write_count": 17, "failed_count": 3,
            "per_source": {"source[0] FakeSource": 10}, "per_sink": {"sink[0] Jdbc": 7, "sink[1] LocalFile": 10}}


def _by_name(points) -> dict[str, tuple[str, float, dict]]:
    return {p.name: (p.kind, p.value, dict(p.tags)) for p in points}


def test_a_pipeline_sends_counts_duration_and_status_per_pipeline_sink_and_source():
    points = _by_name(stat_points("sales", "job.web_1a2b", FINISHED, job="nightly copy"))
    base = "seatunnel.sales.job__web_1a2b"  # a dot of an id becomes "__", as in Airflow's own names
    assert points[f"{base}.rows_read"][:2] == (INCR, 10) and points[f"{base}.rows_written"][:2] == (INCR, 17)
    assert points[f"{base}.rows_failed"][:2] == (INCR, 3) and points[f"{base}.finished"][:2] == (INCR, 1)
    assert points[f"{base}.duration"][:2] == (TIMING, 3.25) and f"{base}.failed" not in points
    assert points[f"{base}.sink_0_Jdbc.rows_written"][:2] == (INCR, 7)
    assert points[f"{base}.sink_1_LocalFile.rows_written"][:2] == (INCR, 10)
    assert points[f"{base}.source_0_FakeSource.rows_read"][:2] == (INCR, 10)
    # the same figures under names without variables, tagged (a tag value holds only what a name can)
    kind, value, tags = points["seatunnel.rows_written"]
    assert (kind, value) == (INCR, 17)
    assert tags == {"dag_id": "sales", "task_id": "job.web_1a2b", "job": "nightly_copy", "pipeline": "2"}
    sinks = [p for p in stat_points("sales", "job.web_1a2b", FINISHED) if p.name == "seatunnel.sink.rows_written"]
    assert sorted((p.tags["sink"], p.value) for p in sinks) == [("sink_0_Jdbc", 7), ("sink_1_LocalFile", 10)]


def test_without_legacy_names_only_the_tagged_names_go_out():
    names = {p.name for p in stat_points("d", "t", FINISHED, legacy=False)}
    assert names == {"seatunnel.rows_read", "seatunnel.rows_written", "seatunnel.rows_failed", "seatunnel.finished",
                     "seatunnel.duration", "seatunnel.sink.rows_written", "seatunnel.source.rows_read"}


def test_a_failed_pipeline_counts_a_failure_and_no_duration_it_does_not_know():
    failed = {"pipeline": 1, "task_id": "t", "status": "FAILED", "error": {"message": "boom"}}
    points = _by_name(stat_points("d", "t", failed))
    assert points["seatunnel.d.t.failed"][:2] == (INCR, 1) and points["seatunnel.d.t.rows_written"][1] == 0
    assert "seatunnel.d.t.finished" not in points and "seatunnel.d.t.duration" not in points
    assert name_part("grp.sub.task") == "grp__sub__task" and name_part("a b/c") == "a_b_c"


def test_the_relay_pushes_each_new_report_of_the_progress_file_and_the_last_one_at_stop(tmp_path):
    pushed: list[tuple[str, dict]] = []
    path = progress_file_of(tmp_path / "pipeline-x.attempt-1.metrics.json")
    relay = ProgressRelay(lambda key, value: pushed.append((key, value)), path, interval=3600).start()
    relay.poll()
    assert pushed == []  # nothing written yet
    first = snapshot(2, {"source[0] FakeSource": [("db.t", 5)]}, {})
    Path(path).write_text(json.dumps(first))
    relay.poll()
    relay.poll()  # the same report: not pushed again
    assert pushed == [(PROGRESS_XCOM_KEY, first)]
    second = snapshot(4, {"source[0] FakeSource": [("db.t", 9)]}, {"sink[0] Jdbc": [("db.t", 9)]})
    Path(path).write_text(json.dumps(second))
    relay.stop()  # the driver's last report is pushed when the task stops looking
    assert pushed[-1] == (PROGRESS_XCOM_KEY, second) and relay.pushed == 2
    assert second["read_count"] == second["write_count"] == 9 and second["per_table"] == {"sink[0] Jdbc": {"db.t": 9}}
    assert read_progress(tmp_path / "missing") is None


def test_a_push_that_fails_never_fails_the_task():
    def push(key, value):
        raise RuntimeError("the API server is away")

    relay = ProgressRelay(push)
    relay.publish({"status": "RUNNING", "read_count": 1})
    assert relay.pushed == 0
