"""SeaTunnelHook outside an operator: the whole job through spark-submit, secrets masked in logs."""

from __future__ import annotations

import json

import pytest

JOB = """
env { job.name = "hooked" }
source {
  FakeSource { plugin_output = "web", row.num = 4, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = "store", row.num = 3, schema = { fields { id = bigint } } }
}
sink {
  LocalFile { plugin_input = "web", path = "__OUT__/web", file_format_type = "json" }
  Assert { plugin_input = "store", rules { row_rules = [{ rule_type = MAX_ROW, rule_value = 1 }] } }
}
"""


def test_submit_job_runs_every_pipeline_and_reports_the_failed_one(tmp_path, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook, SeaTunnelPipelineFailed

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    hook = SeaTunnelHook(JOB.replace("__OUT__", str(tmp_path)), format="hocon")
    try:
        with pytest.raises(SeaTunnelPipelineFailed) as info:
            hook.submit_job(run_id="hook-run")
    finally:
        hook.cleanup()
    job = info.value.metrics
    assert [p["status"] for p in sorted(job["pipelines"], key=lambda p: p["pipeline"])] == ["FINISHED", "FAILED"]
    assert info.value.deterministic  # an Assert: retrying cannot fix it
    assert "MAX_ROW" in job["error"]["message"]
    rows = [line for f in (tmp_path / "web").glob("*.json") for line in f.read_text().splitlines() if line]
    assert len(rows) == 4  # the other pipeline committed


def test_secret_options_are_masked_in_task_logs(tmp_path):
    from airflow.sdk.log import redact

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    job = """
    source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = bigint } } } }
    sink {
      Jdbc {
        plugin_input = "t", url = "jdbc:postgresql://127.0.0.1:5432/db", driver = "org.postgresql.Driver"
        user = "loader", password = "hunter2-not-in-logs", generate_sink_sql = true, database = "db", table = "t"
      }
    }
    """
    hook = SeaTunnelHook(job, format="hocon")
    hook.mask_secrets()
    assert "hunter2-not-in-logs" not in redact("connecting with hunter2-not-in-logs")
