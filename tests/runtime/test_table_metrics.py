"""Rows read and written per table: in the metrics (``per_table_read`` beside ``per_table``), the job's
``tables``, the summary, the progress lines and the Airflow view (failed tables first). Unit level:
plain data in, text and dicts out."""

from __future__ import annotations

import time

from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.runtime.context import now
from airflow_provider_seatunnel.runtime.counting import Counter
from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics, table_counts
from airflow_provider_seatunnel.runtime.progress import rows_per_table, table_line
from airflow_provider_seatunnel.runtime.summary import job_metrics, render_summary
from airflow_provider_seatunnel.spi.errors import PipelineError
from airflow_provider_seatunnel.ui.view import run_view

_PLAN = compile_job("""
env { job.name = "tables" }
source { FakeSource { plugin_output = "t", tables_configs = [
  { schema = { table = "public.t1", fields { id = bigint } }, row.num = 3 },
  { schema = { table = "public.t10", fields { id = bigint } }, row.num = 4 },
  { schema = { table = "public.t2", fields { id = bigint } }, row.num = 5 }] } }
sink { Console { plugin_input = "t" } }
""", use_cache=False)
PIPELINE = _PLAN.pipelines[0]
READ = {"source[0] FakeSource": {"public.t1": 3, "public.t10": 4, "public.t2": 5}}
WRITTEN = {"sink[0] Console": {"public.t1": 3, "public.t10": 4, "public.t2": 4}}


def _finished() -> dict:
    return PipelineMetrics.finished(PIPELINE, "r1", 1, now(), time.monotonic(), {"source[0] FakeSource": 12},
                                    WRITTEN, READ).to_dict()


def _failed(message: str) -> dict:
    return PipelineMetrics.failed(PIPELINE, "r1", 1, now(), PipelineError(message, "sink[0] Console")).to_dict()


def test_finished_metrics_keep_their_keys_and_add_rows_read_per_table():
    d = _finished()
    assert d["per_table"] == WRITTEN and d["per_table_read"] == READ
    assert (d["read_count"], d["write_count"], d["per_source"]) == (12, 11, {"source[0] FakeSource": 12})
    assert PipelineMetrics.from_dict(d).per_table_read == READ
    rows = [(t.table, t.status, t.read, t.written) for t in table_counts(d)]
    assert rows == [("public.t1", "FINISHED", 3, 3), ("public.t10", "FINISHED", 4, 4), ("public.t2", "FINISHED", 5, 4)]


def test_two_sources_of_one_table_are_summed_and_a_table_only_written_is_listed():
    d = {"status": "FINISHED", "per_table_read": {"a": {"x": 2}, "b": {"x": 3}}, "per_table": {"s": {"x": 5, "y": 1}}}
    assert [(t.table, t.read, t.written) for t in table_counts(d)] == [("x", 5, 5), ("y", None, 1)]


def test_a_failed_pipeline_lists_its_plan_tables_the_named_one_first():
    d = _failed("cannot write public.t10: value too long")
    rows = table_counts(d, ["public.t1", "public.t10", "public.t2"])
    # public.t10 is named (public.t1 is only its prefix): FAILED; the others were rolled back with it
    assert [(t.table, t.status, t.read) for t in rows] == [
        ("public.t10", "FAILED", None), ("public.t1", "ABORTED", None), ("public.t2", "ABORTED", None)]
    unnamed = table_counts(_failed("the connection was lost"), ["public.t2", "public.t1"])
    assert [(t.table, t.status) for t in unnamed] == [("public.t1", "FAILED"), ("public.t2", "FAILED")]
    assert [t.status for t in table_counts({}, ["a"])] == ["NOT_RUN"]


def test_the_job_lists_every_table_failed_first_and_the_summary_shows_them():
    failed = {**_failed("cannot write public.t2"), "pipeline": 2, "task_id": "other",
              "per_table_read": {"source[0] FakeSource": {"public.t2": 1}}}
    job = job_metrics("tables", [_finished(), failed], now(), now())
    assert [(t["table"], t["status"], t["pipeline"]) for t in job["tables"]] == [
        ("public.t2", "FAILED", 2), ("public.t1", "FINISHED", 1), ("public.t10", "FINISHED", 1),
        ("public.t2", "FINISHED", 1)]
    text = render_summary(job)
    assert "Pipeline 1 Tables (read / written)" in text
    assert "public.t2                 :               5 / 4" in text
    assert "Pipeline 2 Tables" not in text  # one table: the pipeline's own table says it all
    single = job_metrics("one", [PipelineMetrics.finished(PIPELINE, "r", 1, now(), time.monotonic(), {"s": 1},
                                                          {"k": {"only": 1}}, {"s": {"only": 1}})], now(), now())
    assert "Tables" not in render_summary(single) and len(single["tables"]) == 1


def test_counters_know_their_table_and_live_rows_sum_per_table():
    assert Counter(None, None, -1, name="read:source_0:db.s.t:x").table == "db.s.t:x"
    assert Counter(None, None, -1, name="progress-test").table == "progress-test"
    assert rows_per_table([("t1", 2), ("t1", 3), ("t2", None), ("t2", 4)]) == {"t1": 5, "t2": None}


def test_the_progress_line_per_table_puts_the_tables_that_moved_first_and_stays_short():
    tables = {f"t{i:03d}": (10, 10 if i < 3 else None) for i in range(30)}
    line = table_line(tables, {}, limit=5)
    assert line.startswith("progress per table: 3 of 30 tables have rows written; t000 read 10 wrote 10, ")
    assert line.endswith("t004 read 10 wrote n/a, and 25 more")
    moved = table_line({**tables, "t029": (2_000, 1_500)}, tables, limit=2)
    assert "; t029 read 2,000 wrote 1,500, t000 read 10 wrote 10, and 28 more" in moved


def _plan_view(tables: list[str]) -> dict:
    return {"job": "tables", "mode": "BATCH", "pipelines": [
        {"id": 1, "airflow_task_id": "g.p1", "task_id": "p1", "vertices": [
            {"kind": "source", "tables": tables}, {"kind": "sink", "tables": tables}]},
        {"id": 2, "airflow_task_id": "g.p2", "task_id": "p2", "vertices": [
            {"kind": "source", "tables": ["x.a", "x.b"]}, {"kind": "sink", "tables": None}]}]}


def test_the_view_lists_a_groups_tables_failed_first_with_their_counts():
    names = [f"public.t{i}" for i in range(200)]
    metrics = {"status": "FINISHED", "pipeline": 1, "task_id": "p1",
               "per_table_read": {"s": {t: i for i, t in enumerate(names)}}, "per_table": {"k": {t: i for i, t in
                                                                                            enumerate(names)}}}
    tis = [{"task_id": "g.prepare", "operator": "SeaTunnelPrepareOperator", "state": "success"},
           {"task_id": "g.p1", "state": "success"}, {"task_id": "g.p2", "state": "failed"}]
    view = run_view("dag", "run", tis, {"g.prepare": _plan_view(names)}, {"g.p1": metrics})
    tables = view["groups"][0]["tables"]
    assert len(tables) == 202
    # the failed pipeline reported nothing: its plan's (source) tables, failed, first
    assert [(t["table"], t["status"], t["task_id"], t["read"]) for t in tables[:2]] == [
        ("x.a", "FAILED", "g.p2", None), ("x.b", "FAILED", "g.p2", None)]
    assert tables[2]["status"] == "FINISHED" and {t["table"]: t["written"] for t in tables[2:]}["public.t199"] == 199
    running = run_view("dag", "run", [{**tis[1], "state": "running"}], {"g.prepare": _plan_view(names[:2])}, {})
    assert {t["status"] for t in running["groups"][0]["tables"]} == {"RUNNING", "NOT_RUN"}
    done = run_view("dag", "run", [{**tis[1], "state": "success"}], {"g.prepare": _plan_view(names[:2])}, {})
    assert [t["status"] for t in done["groups"][0]["tables"] if t["task_id"] == "g.p1"] == ["FINISHED"] * 2
