"""A driver that runs out of memory (spark-submit's exit 52) fails its Airflow task once, with the fix in
the message: retrying it with the same memory would fail the same way (real Airflow, real spark-submit)."""

from __future__ import annotations

from tests.runtime.test_error_causes import OOM

DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelOperator(task_id="job", config={config!r})
"""


def test_out_of_memory_is_not_retried_and_says_what_to_raise(run_dag):
    config = OOM.replace('job.name = "oom"', 'job.name = "oom", job.retry.times = 3, job.retry.interval.seconds = 1')
    result = run_dag(DAG.format(dag_id="st_oom", config=config), "st_oom")
    ti = result["tis"]["job"]
    assert result["ops"]["job"]["retries"] == 3  # retryable in general...
    assert ti["state"] == "failed" and ti["try_number"] == 1, result["log"][-6000:]  # ...but not out of memory
    assert "AirflowFailException" in result["log"]
    assert "raise spark.driver.memory in env (now 512m)" in result["log"]
