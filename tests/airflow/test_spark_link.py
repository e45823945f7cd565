"""The Spark UI link under real Airflow: the History Server's page where the Spark connection names one,
no dead driver-UI link otherwise, and nothing logged at error level for a task that has none."""

from __future__ import annotations

import json

JOB = """
env { job.name = "linked", job.retry.times = 0 }
source { FakeSource { plugin_output = "gen", row.num = 3, schema = { fields { id = bigint } } } }
sink { Assert { plugin_input = "gen", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = __MIN__ }] } } }
"""

DAG = """
import json
from datetime import datetime
from airflow.sdk import DAG, task
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG("st_spark_link", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    ok = SeaTunnelOperator(task_id="ok", config={ok!r}, spark_conn_id="spark_history")
    broken = SeaTunnelOperator(task_id="broken", config={broken!r})

    @task(trigger_rule="all_done")
    def links(ti=None):
        with open({out!r}, "w") as f:
            json.dump({{t: ti.xcom_pull(task_ids=t, key="_link_SparkApplicationLink") for t in ("ok", "broken")}}
                      | {{"metrics": ti.xcom_pull(task_ids="ok")}}, f)

    [ok, broken] >> links()
"""


def test_the_history_server_is_linked_and_a_dead_driver_ui_is_not(run_dag, tmp_path):
    (tmp_path / "ok.conf").write_text(JOB.replace("__MIN__", "1"))
    (tmp_path / "broken.conf").write_text(JOB.replace("__MIN__", "10"))
    out = tmp_path / "links.json"
    history = {"conn_type": "spark", "host": "local[1]", "extra": {"history_server_url": "http://history:18080"}}
    result = run_dag(DAG.format(ok=str(tmp_path / "ok.conf"), broken=str(tmp_path / "broken.conf"), out=str(out)),
                     "st_spark_link", env={"AIRFLOW_CONN_SPARK_HISTORY": json.dumps(history)})
    assert result["tis"]["ok"]["state"] == "success", result["log"][-6000:]
    assert result["tis"]["broken"]["state"] == "failed", result["log"][-6000:]
    links = json.loads(out.read_text())
    app_id = links["metrics"]["application_id"]
    assert app_id.startswith("local-")
    assert links["ok"] == f"http://history:18080/history/{app_id}/jobs/" == links["metrics"]["ui_url"]
    assert not links["broken"]  # local[1] without a History Server: the driver's UI is gone, no link
    assert "XCom not found" not in result["log"], result["log"][-6000:]
