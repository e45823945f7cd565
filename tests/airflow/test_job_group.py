"""SeaTunnelJobGroup at parse time: tasks, edges, retries, lineage, determinism, parsing context, import errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from airflow_provider_seatunnel.plan import compile_job

TWO_PIPELINES = """
env { job.name = "two", job.retry.times = 2, job.retry.interval.seconds = 7 }
source {
  FakeSource { plugin_output = "web", row.num = 3, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = "store", row.num = 3, schema = { fields { id = bigint } } }
}
sink {
  LocalFile { plugin_input = "web", path = "/data/web/dt={{ ds }}", file_format_type = "json" }
  LocalFile { plugin_input = "store", path = "/data/store", file_format_type = "json" }
}
"""


def _group(conf: Path, **kwargs):
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

    with DAG("st_group", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        group = SeaTunnelJobGroup(group_id="orders", config=conf, **kwargs)
    return dag, group


def test_group_renders_prepare_pipelines_summary(tmp_path):
    from airflow.sdk import Asset, AssetAlias

    conf = tmp_path / "two.conf"
    conf.write_text(TWO_PIPELINES)
    plan = compile_job(conf)
    dag, group = _group(conf, operator_kwargs={"spark_conn_id": "spark_cluster"})
    pipelines = sorted(f"orders.{p.task_id}" for p in plan.pipelines)
    assert len(pipelines) == 2
    assert sorted(dag.task_ids) == sorted([*pipelines, "orders.prepare", "orders.summary"])
    assert all(t.task_group is group for t in dag.tasks)
    prepare, summary = dag.get_task("orders.prepare"), dag.get_task("orders.summary")
    assert sorted(prepare.downstream_task_ids) == pipelines
    assert sorted(summary.upstream_task_ids) == pipelines
    assert summary.trigger_rule == "all_done"
    assert summary.pipeline_task_ids == pipelines
    for task_id in pipelines:
        task = dag.get_task(task_id)
        assert task.upstream_task_ids == {"orders.prepare"} and task.downstream_task_ids == {"orders.summary"}
        assert task.retries == 2 and task.retry_delay.total_seconds() == 7  # the config's restore policy
        assert task.spark_conn_id == "spark_cluster" and task.run_key == "orders"
    web = dag.get_task(next(t for t in pipelines if "web" in t))
    store = dag.get_task(next(t for t in pipelines if "store" in t))
    # lineage: sinks are outlets (a templated path is an alias, resolved at run time); FakeSource has none
    web_id = web.task_id.split(".", 1)[1]
    assert web.outlets == [AssetAlias(f"seatunnel/{web_id}/sink[0]")] and web.inlets == []
    assert store.outlets == [Asset("file:///data/store")]


def test_standalone_operator_defaults_from_the_config(tmp_path):
    from airflow.sdk import DAG, Asset

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    conf = tmp_path / "one.conf"
    conf.write_text("""
        env { job.retry.times = 5 }
        source { LocalFile { path = "/in/orders", file_format_type = "json", schema = { fields { id = int } } } }
        sink { LocalFile { path = "/out/orders", file_format_type = "json" } }
    """)
    with DAG("st_one", schedule=None, start_date=datetime(2024, 1, 1)):
        op = SeaTunnelOperator(task_id="sync", config=str(conf))
        explicit = SeaTunnelOperator(task_id="sync2", config=str(conf), retries=0, outlets=[])
    assert op.retries == 5 and op.inlets == [Asset("file:///in/orders")] and op.outlets == [Asset("file:///out/orders")]
    # the config sets job.retry.times: it wins over the argument (docs/airflow.md, "Retries")
    assert explicit.retries == 5 and explicit.outlets == [] and explicit.inlets == [Asset("file:///in/orders")]


DAG_FILE = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG("st_parse", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="orders", config={conf!r}, variables={{"dt": "{{{{ ds }}}}"}})
"""

SERIALIZE = """
import json, sys
sys.path.insert(0, {folder!r})
from airflow.serialization.serialized_objects import DagSerialization
from st_parse_dag import dag
print(json.dumps(DagSerialization.to_dict(dag), sort_keys=True))
"""


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_rendering_is_deterministic_across_parses(tmp_path):
    """Two parses in two processes serialize to the same DAG: no new DAG version for an unchanged file."""
    conf = tmp_path / "two.conf"
    conf.write_text(TWO_PIPELINES)
    (tmp_path / "st_parse_dag.py").write_text(DAG_FILE.format(conf=str(conf)))
    first, second = (_python(SERIALIZE.format(folder=str(tmp_path))) for _ in range(2))
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.stdout == second.stdout
    assert " at 0x" not in first.stdout and "<function" not in first.stdout
    tasks = json.loads(first.stdout)["dag"]["tasks"]
    assert len(tasks) == 4


PARSE_ONE = """
import sys
sys.path.insert(0, {folder!r})
from st_parse_dag import dag
print(sorted(dag.task_ids))
"""


def test_parsing_context_builds_only_the_task_being_run(tmp_path):
    conf = tmp_path / "two.conf"
    conf.write_text(TWO_PIPELINES)
    (tmp_path / "st_parse_dag.py").write_text(DAG_FILE.format(conf=str(conf)))
    pipeline = sorted(p.task_id for p in compile_job(conf, {"dt": "{{ ds }}"}).pipelines)[0]
    code = PARSE_ONE.format(folder=str(tmp_path))
    ctx = {"_AIRFLOW_PARSING_CONTEXT_DAG_ID": "st_parse"}
    one = _python(code, {**ctx, "_AIRFLOW_PARSING_CONTEXT_TASK_ID": f"orders.{pipeline}"})
    assert one.stdout.strip() == str([f"orders.{pipeline}"]), one.stderr[-3000:]
    summary = _python(code, {**ctx, "_AIRFLOW_PARSING_CONTEXT_TASK_ID": "orders.summary"})
    assert summary.stdout.strip() == "['orders.summary']", summary.stderr[-3000:]
    # a task outside the group: nothing is compiled — even a broken config does not matter then
    conf.write_text("source { FakeSource { row.num = oops } }")
    other = _python(code, {**ctx, "_AIRFLOW_PARSING_CONTEXT_TASK_ID": "some_other_task"})
    assert other.stdout.strip() == "[]", other.stderr[-3000:]


IMPORT_ERRORS = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={folder!r})
print(json.dumps({{"errors": bag.import_errors, "dags": sorted(bag.dag_ids)}}))
"""


def test_config_error_is_the_dags_import_error(tmp_path):
    folder = tmp_path / "dags"
    folder.mkdir()
    conf = tmp_path / "broken.conf"
    conf.write_text(textwrap.dedent("""
        env { job.name = "broken" }
        source {
          FakeSource { plugin_output = "gen", row.num = 3, schema = { fields { id = bigint } } }
        }
        sink {
          LocalFile { plugin_input = "nowhere", path = "/tmp/x", file_format_type = "csv" }
          Console { plugin_input = "gen" }
        }
    """))
    (folder / "st_broken.py").write_text(DAG_FILE.format(conf=str(conf)))
    proc = _python(IMPORT_ERRORS.format(folder=str(folder)),
                   {"AIRFLOW__CORE__LOAD_EXAMPLES": "False", "AIRFLOW_HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["dags"] == []
    (path, error), = result["errors"].items()
    assert path.endswith("st_broken.py")
    assert "ConfigError" in error and "broken.conf:7: sink[0] LocalFile" in error
    assert "LocalFile" in error and "nowhere" in error
    # the stack shown is the DAG file's line and the group's, not the compiler's internals
    assert "plan/compiler.py" not in error and "plan/logical.py" not in error


@pytest.mark.parametrize("master, extra, expected", [
    ("spark://127.0.0.1:7077", {}, "http://127.0.0.1:8080/app/?appId=app-1"),
    ("yarn", {"yarn_resourcemanager_webapp_address": "http://rm:8088/"}, "http://rm:8088/cluster/app/app-1"),
    ("local[*]", {}, None),  # the driver's UI died with the task: no dead link
    ("spark://127.0.0.1:7077", {"deploy-mode": "client"}, "http://127.0.0.1:8080/app/?appId=app-1"),
    ("local[*]", {"history_server_url": "http://history:18080/"}, "http://history:18080/history/app-1/jobs/"),
    ("spark://m:7077", {"history_server_url": "http://h:18080"}, "http://h:18080/history/app-1/jobs/"),
])
def test_spark_ui_link(master, extra, expected):
    from airflow_provider_seatunnel.operators.seatunnel import spark_ui_url

    assert spark_ui_url({"application_id": "app-1", "ui_url": "http://driver:4040"}, master, extra) == expected
    # a Spark Connect server's UI outlives the session
    connect = {"application_id": "app-1", "ui_url": "http://server:4040", "spark_connect": "sc://server:15002"}
    assert spark_ui_url(connect, "spark_connect://server:15002", {}) == "http://server:4040"
