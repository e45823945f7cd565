"""What a DAG author sees of a job under real Airflow: compile warnings (an option's typo with its "did
you mean") in the prepare task's log, the pipeline task's log and the SeaTunnel view's data, or as the
DAG's import error with ``strict``; one id per pipeline where rendered variables change its hash; the
retry policy the task really has in the plan text; a missing Spark connection failing without a retry."""

from __future__ import annotations

import json
import textwrap

from .conftest import dags_folder
from .test_authoring import _parse_dagbag

# a typo (file_name_expresion) and a path that only the run's rendered variables complete (its hash changes)
CONFIG = """
env { job.name = "face" }
source { FakeSource { plugin_output = "rows", row.num = 3, schema = { fields { id = bigint } } } }
sink { LocalFile { plugin_input = "rows", path = "${out}", file_format_type = "json", file_name_expresion = "x" } }
"""

DAG = """
import json
from datetime import datetime, timedelta
from airflow.sdk import DAG, task
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG("st_face", schedule=None, start_date=datetime(2024, 1, 1),
         default_args={{"retries": 2, "retry_delay": timedelta(seconds=30)}}) as dag:
    group = SeaTunnelJobGroup(group_id="job", config="configs/st_face.conf",
                              variables={{"out": {out!r} + "/{{{{ ds }}}}"}})
    nowhere = SeaTunnelOperator(task_id="nowhere", config="configs/st_face.conf", spark_conn_id="spark_nowhere",
                                variables={{"out": {out!r} + "/nowhere"}})

    @task(trigger_rule="all_done")
    def record(ti=None):
        found = {{"view": ti.xcom_pull(task_ids="job.prepare", key="seatunnel_plan"),
                  "metrics": {{t: ti.xcom_pull(task_ids=t, key="seatunnel_metrics") for t in group.children}}}}
        with open({xcom!r}, "w") as f:
            json.dump(found, f)

    [group, nowhere] >> record()
"""


def test_warnings_one_id_retry_policy_and_a_missing_spark_connection(run_dag, airflow_env, tmp_path):
    from airflow_provider_seatunnel.plan.compiler import compile_job
    from airflow_provider_seatunnel.ui.view import run_view

    configs = dags_folder(airflow_env, "st_face") / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    (configs / "st_face.conf").write_text(CONFIG)
    out, xcom = tmp_path / "out", tmp_path / "found.json"
    result = run_dag(DAG.format(out=str(out), xcom=str(xcom)), "st_face")
    tis, log = result["tis"], result["log"]
    (task,) = [t for t in tis if t.startswith("job.rows_to_localfile_")]
    local = task.rsplit(".", 1)[1]
    assert tis[task]["state"] == "success", log[-6000:]
    # the missing connection: failed at once, never retried (retries=2 from default_args), the connection named
    assert tis["nowhere"]["state"] == "failed" and tis["nowhere"]["try_number"] == 1, log[-6000:]
    assert "the Spark connection 'spark_nowhere' is not defined" in log
    assert "HADOOP_CONF_DIR" not in log
    # the typo: in the logs of the prepare task and of the pipeline task, with its "did you mean"
    assert log.count("SeaTunnel compile warning:") >= 2
    assert "unknown option 'file_name_expresion' of LocalFile" in log and "did you mean 'file_name_expression'?" in log
    found = json.loads(xcom.read_text())
    view = found["view"]
    (warning,) = view["warnings"]
    assert warning["key"] == "file_name_expresion" and "did you mean 'file_name_expression'?" in warning["text"]
    # ... and in the SeaTunnel tab's data for the run
    (group,) = run_view("st_face", result["run_id"], [], {"job.prepare": view}, {})["groups"]
    assert group["warnings"] == view["warnings"]
    # one id: the run's compile (the rendered path) hashes differently, yet the log, plan view and metrics
    # all name the pipeline by its task's id
    compiled = compile_job(str(configs / "st_face.conf"), {"out": f"{out}/2024-05-06"}).pipelines[0].task_id
    assert compiled != local and compiled.rsplit("_", 1)[0] == local.rsplit("_", 1)[0]
    assert f"running pipeline 1 ({local})" in log and compiled not in log
    assert [(p["task_id"], p["airflow_task_id"]) for p in view["pipelines"]] == [(local, task)]
    assert found["metrics"][task]["task_id"] == local and found["metrics"][task]["status"] == "FINISHED"
    # the plan text shows the task's real policy (default_args), not SeaTunnel's 3 retries 3 s apart
    assert "restore: 2 retries, 30s apart (this Airflow task's retries and retry_delay)" in log
    assert "restore: 3 retries, 3s apart" not in log
    assert len(list((out / "2024-05-06").rglob("*.json"))) >= 1


TYPO = """
env { job.name = "typo" }
source { FakeSource { plugin_output = "rows", row.num = 3, schema = { fields { id = bigint } } } }
sink {
  Jdbc { plugin_input = "rows", url = "jdbc:postgresql://localhost/shop", driver = "org.postgresql.Driver",
         user = "u", password = "p", database = "shop", table = "public.t", generate_sink_sql = true,
         primary_key = ["id"] }
}
"""

TYPO_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG("{dag_id}", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config="configs/typo.conf"{strict})
"""


def test_an_option_typo_is_a_parse_warning_or_strictly_the_import_error(tmp_path):
    """``primary_key`` for ``primary_keys`` (an upsert silently turned into inserts): a warning with its
    "did you mean" where Airflow's DAG processor shows warnings, the DAG's import error with strict."""
    folder = tmp_path / "dags"
    (folder / "configs").mkdir(parents=True)
    (folder / "configs" / "typo.conf").write_text(TYPO)
    (folder / "st_typo.py").write_text(textwrap.dedent(TYPO_DAG.format(dag_id="st_typo", strict="")))
    (folder / "st_typo_strict.py").write_text(
        textwrap.dedent(TYPO_DAG.format(dag_id="st_typo_strict", strict=", strict=True")))
    _, result = _parse_dagbag(str(folder), tmp_path, tmp_path)
    assert result["dags"] == ["st_typo"], result["errors"]
    (warned,) = [v for k, v in result["warnings"].items() if k.endswith("st_typo.py")]
    (warning,) = warned
    assert "SeaTunnelPlanWarning" in warning and "did you mean 'primary_keys'?" in warning
    (error,) = [v for k, v in result["errors"].items() if k.endswith("st_typo_strict.py")]
    assert "ConfigError" in error and "primary_key" in error and "did you mean 'primary_keys'?" in error
