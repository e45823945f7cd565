"""A group run end to end under real Airflow (``dag.test()``) and real ``spark-submit``: a relative
config path, the DAG's retry settings, a pipeline that cannot run here, UTC times and counts."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .conftest import dags_folder

CONFIG = """
env { job.name = "authoring", parallelism = 2 }
source {
  FakeSource { plugin_output = "web", row.num = 100, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = "store", row.num = 3, schema = { fields { id = bigint } } }
}
sink {
  LocalFile { plugin_input = "web", path = "__OUT__", file_format_type = "json" }
  Assert { plugin_input = "web", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }] } }
  Kudu { plugin_input = "store", kudu_masters = "localhost:7051", table_name = "orders" }
}
"""

DAG = """
import json
from datetime import datetime, timedelta
from airflow.sdk import DAG, task
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG("st_authoring_run", schedule=None, start_date=datetime(2024, 1, 1),
         default_args={{"retries": 1, "retry_delay": timedelta(seconds=1)}}) as dag:
    group = SeaTunnelJobGroup(group_id="job", config="configs/st_authoring_run.conf")

    @task(trigger_rule="all_done")
    def record(ti=None):
        metrics = {{t: ti.xcom_pull(task_ids=t, key="seatunnel_metrics") for t in group.children}}
        with open({xcom!r}, "w") as f:
            json.dump(metrics, f)

    group >> record()
"""


def _utc(stamp: str) -> datetime:
    parsed = datetime.fromisoformat(stamp)
    assert parsed.utcoffset() == timedelta(0), stamp
    return parsed


def test_group_run_relative_config_retries_fail_fast_and_metrics(run_dag, airflow_env, tmp_path):
    """Problems 3, 4, 5 and 8 in one run: the config path is relative to the DAG file (the run's working
    directory is elsewhere); the DAG's default_args give the retries; the Kudu pipeline fails
    before Spark starts and is not retried; the branching pipeline (200 rows read, written to two
    sinks) and the failed job count no negative failures; times are UTC with an offset."""
    configs = dags_folder(airflow_env, "st_authoring_run") / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    (configs / "st_authoring_run.conf").write_text(CONFIG.replace("__OUT__", str(tmp_path / "out")))
    xcom = tmp_path / "metrics.json"
    result = run_dag(DAG.format(xcom=str(xcom)), "st_authoring_run")
    tis, log = result["tis"], result["log"]
    web = next(t for t in tis if t.startswith("job.web"))
    store = next(t for t in tis if t.startswith("job.store"))
    assert tis[web]["state"] == "success", log[-6000:]
    assert tis[store]["state"] == "failed" and tis[store]["try_number"] == 1, log[-6000:]  # never retried
    assert tis["job.summary"]["state"] == "failed" and tis["record"]["state"] == "success", log[-6000:]
    # the DAG's default_args, not SeaTunnel's 3 retries 3 s apart (the config sets no job.retry.*)
    assert result["ops"][web] == result["ops"][store] == {"retries": 1, "retry_delay": 1.0}
    metrics = json.loads(xcom.read_text())
    refused = metrics[store]
    assert refused["status"] == "FAILED" and refused["application_id"] is None  # no Spark application
    assert refused["error"]["deterministic"] and "Kudu" in refused["error"]["message"]
    assert "nothing was submitted" in log
    ran = metrics[web]
    assert (ran["read_count"], ran["write_count"], ran["failed_count"]) == (200, 400, 0)
    assert _utc(ran["start"]) <= _utc(ran["end"])
    job = metrics["job.summary"]
    assert job["status"] == "FAILED" and job["failed_count"] == 0
    assert (job["read_count"], job["write_count"]) == (200, 400)
    assert _utc(job["start"]) <= _utc(job["end"])
    assert len([line for f in (tmp_path / "out").rglob("*.json") for line in f.read_text().splitlines()]) == 200
