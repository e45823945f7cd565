"""SeaTunnelOperator under real Airflow (``dag.test()``) and real ``spark-submit``."""

from __future__ import annotations

import json
from pathlib import Path

JOB = """
env { job.name = "airflow_job", job.retry.times = 2, job.retry.interval.seconds = 1 }
source {
  FakeSource {
    plugin_output = "gen"
    row.num = 12
    schema = { fields { id = bigint, name = string } }
    string.template = ["a", "b"]
  }
}
transform { Sql { plugin_input = "gen", plugin_output = "t", query = "select id, upper(name) as name from gen" } }
sink {
  LocalFile { plugin_input = "t", path = "${out}/dt=${dt}", file_format_type = "json" }
  Assert {
    plugin_input = "t"
    rules { row_rules = [{ rule_type = MIN_ROW, rule_value = __MIN__ }] }
  }
}
"""

DAG = """
import json
from datetime import datetime
from airflow.sdk import DAG, task
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1), template_searchpath=[{confdir!r}]) as dag:
    op = SeaTunnelOperator(task_id="job", config={config!r}, variables={{"dt": "{{{{ ds }}}}", "out": {out!r}}})

    @task
    def record(metrics):
        with open({xcom!r}, "w") as f:
            json.dump(metrics, f)

    record(op.output)
"""


def _dag(tmp_path: Path, config: str, dag_id: str) -> str:
    return DAG.format(dag_id=dag_id, confdir=str(tmp_path), config=config, out=str(tmp_path / "out"),
                      xcom=str(tmp_path / "xcom.json"))


def test_templated_file_config_runs_and_returns_metrics(run_dag, tmp_path):
    (tmp_path / "job.conf").write_text(JOB.replace("__MIN__", "1"))
    result = run_dag(_dag(tmp_path, "job.conf", "st_op_ok"), "st_op_ok")
    assert result["tis"]["job"]["state"] == "success", result["log"][-6000:]
    assert result["tis"]["record"]["state"] == "success", result["log"][-6000:]
    # retries / retry_delay: the config's restore policy, where it sets one
    assert result["ops"]["job"] == {"retries": 2, "retry_delay": 1.0}
    metrics = json.loads((tmp_path / "xcom.json").read_text())
    assert metrics["status"] == "FINISHED"
    assert metrics["read_count"] == 12 and metrics["write_count"] == 24  # LocalFile + Assert
    # {{ ds }} reached the job through variables: the date partition is the run's
    files = list((tmp_path / "out" / "dt=2024-05-06").rglob("*.json"))
    rows = [json.loads(line) for f in files for line in f.read_text().splitlines() if line]
    assert len(rows) == 12 and {r["name"] for r in rows} == {"A", "B"}
    assert "Job Statistic Information" in result["log"]
    assert "TransformChain" in result["log"] or "airflow_job" in result["log"]


def test_failed_assert_fails_without_retry(run_dag, tmp_path):
    job = JOB.replace("__MIN__", "1000")
    result = run_dag(_dag(tmp_path, job, "st_op_assert"), "st_op_assert")  # inline text config
    ti = result["tis"]["job"]
    assert result["ops"]["job"]["retries"] == 2  # retryable in general...
    assert ti["state"] == "failed" and ti["try_number"] == 1, result["log"][-6000:]  # ...but not an Assert
    assert "AirflowFailException" in result["log"]
    assert "MIN_ROW" in result["log"] or "1000" in result["log"]
    assert result["tis"]["record"]["state"] == "upstream_failed"
    assert not list((tmp_path / "out").rglob("*.json"))  # nothing committed
