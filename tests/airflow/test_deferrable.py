"""``SeaTunnelOperator(deferrable=True)``: the task defers while a detached driver runs the pipeline, a trigger
watches it, the task resumes to report; a killed triggerer changes nothing (exactly-once holds); where it
cannot work, the DAG does not import, or the task fails before anything starts, saying why."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

JOB = """
env { job.name = "deferred_job" }
source { FakeSource { plugin_output = "gen", row.num = 9, schema = { fields { id = bigint, name = string } } } }
sink { LocalFile { plugin_input = "gen", path = "__OUT__", file_format_type = "json" } }
"""

DAG = """
import json
from datetime import datetime
from airflow.sdk import DAG, task
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    op = SeaTunnelOperator(task_id="job", config={config!r}, format="hocon", deferrable=True)

    @task
    def record(metrics):
        with open({xcom!r}, "w") as f:
            json.dump(metrics, f)

    record(op.output)
"""


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(out.rglob("*.json")) for line in f.read_text().splitlines() if line]


def test_a_deferred_pipeline_runs_detached_and_the_task_resumes_to_report(run_dag, tmp_path):
    """``dag.test()`` runs the trigger inline, as a triggerer does: the task defers, resumes and reports."""
    out = tmp_path / "out"
    source = DAG.format(dag_id="st_deferred", config=JOB.replace("__OUT__", str(out)), xcom=str(tmp_path / "m.json"))
    result = run_dag(source, "st_deferred")
    assert result["tis"]["job"]["state"] == "success", result["log"][-6000:]
    assert "the task defers until it reports" in result["log"]
    assert "the pipeline's driver log (tail)" in result["log"]
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["status"] == "FINISHED" and metrics["write_count"] == 9
    assert sorted(r["id"] for r in _rows(out)) == sorted({r["id"] for r in _rows(out)}) and len(_rows(out)) == 9
    # the work directory (the plan file with its secrets) is gone once the task resumed
    log_name = f"pipeline-{metrics['task_id']}.attempt-1.driver.log"
    assert not [d for d in Path(tempfile.gettempdir()).glob("seatunnel-airflow-*") if (d / log_name).exists()]


TRIGGERER = """
import asyncio, json, sys
from airflow_provider_seatunnel.operators.deferrable import PipelineDriverTrigger
trigger = PipelineDriverTrigger(**json.loads(sys.argv[1]))
async def first():
    async for event in trigger.run():
        return event.payload
print("EVENT " + json.dumps(asyncio.run(first())), flush=True)
"""


class _TI:
    try_number = 1

    def __init__(self) -> None:
        self.pushed: dict = {}

    def xcom_push(self, key, value):
        self.pushed[key] = value


def test_a_killed_triggerer_leaves_the_pipeline_running_and_the_next_one_resumes_it_once(monkeypatch, tmp_path):
    """The task defers with its driver running; the triggerer watching it is SIGKILLed; the driver goes on
    alone; a second triggerer process picks the trigger up (as Airflow hands a dead triggerer's triggers to
    another) and fires once the driver reported; the task resumes and reports every row exactly once."""
    from airflow.sdk.exceptions import TaskDeferred

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    out = tmp_path / "out"
    op = SeaTunnelOperator(task_id="deferred", config=JOB.replace("__OUT__", str(out)), format="hocon",
                           deferrable=True)
    ti = _TI()
    context = {"run_id": "manual__deferred", "ti": ti}
    with pytest.raises(TaskDeferred) as deferred:
        op.execute(context)
    trigger = deferred.value.trigger
    _, kwargs = trigger.serialize()
    driver = psutil.Process(kwargs["pid"])
    assert driver.is_running() and os.getsid(driver.pid) != os.getsid(0)  # detached: a session of its own
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    first = subprocess.Popen([sys.executable, "-c", TRIGGERER, json.dumps({**kwargs, "poll_seconds": 0.2})],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert first.stdout is not None
    for line in first.stdout:  # the trigger logs once it watches the driver
        if "watching the pipeline driver" in line:
            break
    assert not (out.exists() and _rows(out)), "the driver finished before the triggerer was killed"
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert driver.is_running() and driver.status() != psutil.STATUS_ZOMBIE  # the pipeline goes on alone
    second = subprocess.run([sys.executable, "-c", TRIGGERER, json.dumps({**kwargs, "poll_seconds": 0.5})],
                            env=env, capture_output=True, text=True, timeout=600)
    event = json.loads(second.stdout.split("EVENT ", 1)[1])
    assert event["status"] == "reported", second.stdout[-3000:] + second.stderr[-3000:]
    metrics = op.execute_complete(context, event, **deferred.value.kwargs)
    assert metrics["status"] == "FINISHED" and metrics["write_count"] == 9
    assert ti.pushed["seatunnel_metrics"]["write_count"] == 9
    assert sorted(r["id"] for r in _rows(out)) == sorted({r["id"] for r in _rows(out)}) and len(_rows(out)) == 9
    assert not Path(kwargs["work_dir"]).exists()  # the plan file with its secrets is removed on resume
    # a resume naming a directory that is not a work directory of ours reads and removes nothing
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    with pytest.raises(AirflowFailException, match="work directory"):
        op.execute_complete(context, {**event, "work_dir": str(tmp_path)})
    assert tmp_path.exists()
    # resumed on a machine without the work directory: a retryable failure (the retry's commit is not redone)
    with pytest.raises(AirflowException, match="not on this machine") as gone:
        op.execute_complete(context, {**event, "work_dir": kwargs["work_dir"]})
    assert not isinstance(gone.value, AirflowFailException)


def test_where_deferring_cannot_work_the_dag_does_not_import_or_the_task_fails_before_submitting(monkeypatch):
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    job = JOB.replace("__OUT__", "/tmp/never-written")
    with pytest.raises(ValueError, match="deploy_mode='cluster'") as cluster:  # why, and what would do instead
        SeaTunnelOperator(task_id="c", config=job, format="hocon", deferrable=True, deploy_mode="cluster")
    for words in ("refuses Python applications in cluster mode", "YARN and Kubernetes", "durable=True"):
        assert words in str(cluster.value)
    stream = job.replace('job.name = "deferred_job"', 'job.name = "s", job.mode = "STREAMING"')
    with pytest.raises(ValueError, match="for BATCH jobs"):
        SeaTunnelOperator(task_id="s", config=stream, format="hocon", deferrable=True)
    # a Spark connection in cluster deploy mode: refused at run time, before anything is submitted, not retried
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_D", json.dumps({"conn_type": "spark", "host": "yarn",
                                                           "extra": {"deploy-mode": "cluster"}}))
    op = SeaTunnelOperator(task_id="d", config=job, format="hocon", deferrable=True, spark_conn_id="spark_d")
    with pytest.raises(AirflowFailException, match="deploy-mode is cluster: deferrable=True needs"):
        op.execute({"run_id": "r", "ti": _TI()})
    assert op.hook.spark_hook is None  # nothing was submitted


def test_the_trigger_fires_exited_for_a_driver_gone_without_metrics_and_elsewhere_on_another_host(tmp_path):
    from airflow_provider_seatunnel.operators.deferrable import PipelineDriverTrigger, failure_of

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(gone.pid).create_time() if psutil.pid_exists(gone.pid) else 0.0
    gone.wait()
    kwargs = {"work_dir": str(tmp_path), "metrics_file": str(tmp_path / "none.json"), "log_file": "x.log",
              "pid": gone.pid, "started": started, "host": __import__("socket").gethostname()}

    async def first(trigger):
        async for event in trigger.run():
            return event.payload

    event = asyncio.run(first(PipelineDriverTrigger(**kwargs)))
    assert event["status"] == "exited" and "exited without reporting" in failure_of(event)
    event = asyncio.run(first(PipelineDriverTrigger(**{**kwargs, "host": "another-host"})))
    assert event["status"] == "elsewhere" and "another-host" in failure_of(event)


def test_a_job_group_defers_each_pipeline_task_and_a_streaming_job_group_does_not_import(tmp_path):
    from datetime import datetime

    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

    conf = tmp_path / "job.conf"
    conf.write_text(JOB.replace("__OUT__", str(tmp_path / "out")))
    with DAG("st_deferred_group", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        SeaTunnelJobGroup(group_id="g", config=conf, operator_kwargs={"deferrable": True})
    pipelines = [t for t in dag.tasks if t.task_id not in ("g.prepare", "g.summary")]
    assert pipelines and all(t.deferrable for t in pipelines)
    conf.write_text(JOB.replace("__OUT__", str(tmp_path / "out")).replace(
        'job.name = "deferred_job"', 'job.name = "s", job.mode = "STREAMING"'))
    with pytest.raises(ValueError, match="for BATCH jobs"), DAG("st_deferred_stream", schedule=None,
                                                                 start_date=datetime(2024, 1, 1)):
        SeaTunnelJobGroup(group_id="g", config=conf, operator_kwargs={"deferrable": True})
