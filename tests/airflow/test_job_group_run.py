"""SeaTunnelJobGroup under real Airflow (``dag.test()``) and real ``spark-submit``."""

from __future__ import annotations

import json
from pathlib import Path

ISOLATION = """
env { job.name = "isolation", job.retry.interval.seconds = 1 }
source {
  FakeSource { plugin_output = "web", row.num = 7, schema = { fields { id = bigint, name = string } } }
  FakeSource { plugin_output = "store", row.num = 5, schema = { fields { id = bigint, name = string } } }
}
sink {
  LocalFile { plugin_input = "web", path = "__OUT__/web", file_format_type = "json", data_save_mode = "DROP_DATA" }
  LocalFile { plugin_input = "store", path = "__OUT__/store", file_format_type = "json" }
  Assert { plugin_input = "store", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1000 }] } }
}
"""

GROUP_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r})
"""


def _rows(directory: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(directory.glob("*.json")) for line in f.read_text().splitlines() if line]


def test_failed_pipeline_leaves_the_other_committed_and_fails_the_summary(run_dag, tmp_path):
    out = tmp_path / "out"
    (out / "web").mkdir(parents=True)
    (out / "web" / "old.json").write_text('{"id": -1}\n')  # dropped once by prepare (DROP_DATA)
    conf = tmp_path / "isolation.conf"
    conf.write_text(ISOLATION.replace("__OUT__", str(out)))
    result = run_dag(GROUP_DAG.format(dag_id="st_isolation", config=str(conf)), "st_isolation")
    tis = result["tis"]
    web = next(t for t in tis if t.startswith("job.web"))
    store = next(t for t in tis if t.startswith("job.store"))
    assert tis["job.prepare"]["state"] == "success", result["log"][-6000:]
    assert tis[web]["state"] == "success", result["log"][-6000:]
    assert tis[store]["state"] == "failed" and tis[store]["try_number"] == 1  # an Assert: never retried
    assert tis["job.summary"]["state"] == "failed"
    assert result["state"] == "failed"
    # the web pipeline committed all its rows; the old file went once, before the pipelines
    assert len(_rows(out / "web")) == 7 and not (out / "web" / "old.json").exists()
    assert not list((out / "store").glob("*.json"))  # the failed pipeline committed nothing
    markers = list((out / "web" / ".seatunnel-commits").rglob("*.savemode"))
    assert len(markers) == 1 and json.loads(markers[0].read_text())["actions"] == [f"truncated {out / 'web'}"]
    log = result["log"]
    assert "Job Statistic Information" in log
    assert "1 of 2 pipelines did not finish" in log and store.split(".", 1)[1] in log
