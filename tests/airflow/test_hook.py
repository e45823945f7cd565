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


SPARK_JOB = """
env { job.name = "built", spark.ui.enabled = false, spark.hadoop.fs.s3a.access.key = "AKIA-not-on-cmdline" }
source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = bigint } } } }
sink { LocalFile { plugin_input = "t", path = "/tmp/built-out", file_format_type = "json" } }
"""


@pytest.mark.parametrize("conn, master, deploy_mode", [
    ({"conn_type": "spark", "host": "local[1]"}, "local[1]", None),
    ({"conn_type": "spark", "host": "spark://m", "port": 7077, "extra": {"deploy-mode": "client"}},
     "spark://m:7077", "client"),
    ({"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}, "yarn", "cluster"),
    # this provider's own Spark type (its connection form: connection_forms.py) reads the same way
    ({"conn_type": "seatunnel_spark", "host": "local[1]"}, "local[1]", None),
    ({"conn_type": "seatunnel_spark", "host": "spark://m", "port": 7077,
      "extra": {"deploy-mode": "client", "history_server_url": "http://h:18080"}}, "spark://m:7077", "client"),
])
def test_the_operator_hands_the_provider_the_seatunnel_hooks_spark_hook(monkeypatch, conn, master, deploy_mode):
    """The master and deploy mode come from the connection (public API); the Spark provider's hook
    factory returns the SparkSubmitHook the SeaTunnel hook built, whose command holds no secret."""
    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator
    from airflow_provider_seatunnel.runtime.launcher import APP_FILE

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_T", json.dumps(conn))
    op = SeaTunnelOperator(task_id="built", config=SPARK_JOB, format="hocon", spark_conn_id="spark_t")
    hook = op.hook
    try:
        assert hook.spark_connection()[:2] == (master, deploy_mode)
        assert hook.driver_on_cluster() is (deploy_mode == "cluster")
        op.on_kill()  # nothing submitted yet: nothing to do, and no hook built for it
        assert hook.spark_hook is None
        spark_hook = hook.spark_submit_hook(run_id="r", attempt=2)
        assert op._get_hook() is spark_hook is hook.spark_hook
        cmd = spark_hook._build_spark_submit_command(op.application)
        assert op.application == str(APP_FILE) and cmd[cmd.index(str(APP_FILE)) + 1:][:2] == ["--plan", (
            "plan.json" if deploy_mode == "cluster" else str(hook.plan_path))]
        assert cmd[cmd.index("--master") + 1] == master and "--properties-file" in cmd
        assert "AKIA-not-on-cmdline" not in " ".join(cmd)
    finally:
        hook.cleanup()


def test_a_missing_spark_connection_fails_without_retry_naming_it(monkeypatch):
    """Without the connection, the Spark provider would submit to ``--master yarn`` and fail (retried) on
    HADOOP_CONF_DIR; the hook refuses before anything starts, naming the connection and how to create it."""
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.delenv("AIRFLOW_CONN_SPARK_ABSENT", raising=False)
    hook = SeaTunnelHook(SPARK_JOB, format="hocon", spark_conn_id="spark_absent")
    try:
        with pytest.raises(AirflowFailException, match="the Spark connection 'spark_absent' is not defined") as e:
            hook.spark_submit_hook(run_id="r")
        assert "AIRFLOW_CONN_SPARK_ABSENT=" in str(e.value) and "local[*]" in str(e.value)
        assert hook.spark_hook is None  # nothing submitted
    finally:
        hook.cleanup()
